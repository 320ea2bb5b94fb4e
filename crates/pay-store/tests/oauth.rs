//! `OAuthStore` and `DpopReplayStore` on `DieselStore`: the conformance cases on SQLite and
//! PostgreSQL (the latter skips without `PAY_TEST_POSTGRES_URL`).

#[macro_use]
mod common;
use common::*;

conformance!(
    oauth:
    approved_scopes_of_a_grant_in_force_only,
    applications_round_trip_by_client_id,
    one_grant_per_company_and_application,
    concurrent_approvals_leave_one_grant,
    code_claim_is_one_time_under_concurrency,
    tokens_insert_together_and_read_back,
    refresh_rotation_has_exactly_one_winner,
    family_revocation_covers_every_token_of_the_family,
    jti_is_recorded_once_even_concurrently,
    jti_is_recorded_with_the_token_lookup,
    prune_cuts_by_expiry,
);

mod recovery {
    use super::*;

    conformance!(
        oauth_recovery:
        a_token_request_key_is_claimed_once,
        an_answer_is_written_with_its_tokens,
        answers_are_erased_when_their_tokens_end,
        a_revoked_grant_ends_its_tokens_and_answers,
        a_company_reset_ends_every_grant_family_and_answer,
    );
}

both_backends!(
    every_instance_on_one_database_shares_the_replay_record,
    every_instance_sees_a_revocation_at_once,
    concurrent_proofs_pass_once_over_both_instances,
    records_in_flight_pass_once_over_both_instances,
);

/// Records started without waiting, over two stores on one database (SQLite: through the
/// replay writer, awaited; PostgreSQL: no such path, nothing recorded by the calls).
fn records_in_flight_pass_once_over_both_instances(first: &DieselStore, url: &str) {
    let second = open(url);
    pay_domain::testing::conformance::oauth_instances::records_in_flight_pass_once_over_both_instances(
        first, &second,
    );
}

/// Concurrent proofs over two stores on one database, on the hot path (each store keeps a copy
/// of the token, so the records go through the replay writer's batches).
fn concurrent_proofs_pass_once_over_both_instances(first: &DieselStore, url: &str) {
    let second = open(url);
    pay_domain::testing::conformance::oauth_instances::concurrent_proofs_pass_once_over_both_instances(
        first, &second,
    );
}

/// A revocation through one store is seen by the other's next lookup (its copy retired by the
/// revocation generation).
fn every_instance_sees_a_revocation_at_once(first: &DieselStore, url: &str) {
    let second = open(url);
    pay_domain::testing::conformance::oauth_instances::every_instance_sees_a_revocation_at_once(
        first, &second,
    );
}

use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::oauth::ports::DpopReplayStore;
use pay_store::DieselStore;

/// A `jti` digest: 64 hex characters, new each call.
fn fresh() -> String {
    let half = || uuid::Uuid::new_v4().simple().to_string();
    half() + &half()
}

fn until() -> Timestamp {
    Timestamp::from_unix_millis(4_102_444_800_000).unwrap()
}

/// Two stores opened on one database (two instances of the service): a `jti` recorded
/// through either is a replay through the other, and of 8 concurrent records of one pair,
/// spread over both, exactly one passes. On SQLite the replay table lives in its own file
/// beside the database, which both must open.
fn every_instance_on_one_database_shares_the_replay_record(first: &DieselStore, url: &str) {
    let second = open(url);
    let htu = "https://pay.example/api/partner/v1/pay/payment-links/x";
    let j = fresh();
    assert!(first.record_jti(htu, &j, until()).unwrap());
    assert!(!second.record_jti(htu, &j, until()).unwrap());
    let k = fresh();
    assert!(second.record_jti(htu, &k, until()).unwrap());
    assert!(!first.record_jti(htu, &k, until()).unwrap());

    let burst = fresh();
    let barrier = std::sync::Barrier::new(8);
    let passed = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|i| {
                let store = if i % 2 == 0 { first } else { &second };
                let (barrier, burst) = (&barrier, &burst);
                s.spawn(move || {
                    barrier.wait();
                    store.record_jti(htu, burst, until()).unwrap()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap())
            .filter(|p| *p)
            .count()
    });
    assert_eq!(passed, 1);
}
