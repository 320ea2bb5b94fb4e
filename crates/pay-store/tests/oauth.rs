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
    );
}
