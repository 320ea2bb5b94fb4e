//! The host's store passes the conformance suites of the ports it implements: the links and
//! checkout suites (the two contexts it embeds), and those of the webhook outbox, grant
//! subscriptions, idempotency keys, tenancy and rate limits it implements for them. Each case
//! runs on a fresh, empty store, the way `pay-store` runs them on SQLite and PostgreSQL.

macro_rules! conformance {
    ($suite:ident: $($case:ident),* $(,)?) => {
        mod $suite {$(
            #[test]
            fn $case() {
                let store = pay_embed_example::HostStore::default();
                pay_domain::testing::conformance::$suite::$case(&store);
            }
        )*}
    };
}

conformance!(
    links:
    payment_links,
    link_status_compare_and_set,
    links_by_status_and_search,
);

conformance!(
    checkout:
    session_and_timeline_round_trip,
    update_is_compare_and_set,
    duplicate_processor_event_writes_nothing,
    concurrent_duplicate_events_apply_once,
    webhook_events_take_consecutive_numbers,
    latest_session_in_picks_the_newest_of_those_statuses,
    latest_session_newest_first,
    unfinished_sessions_oldest_first,    company_sessions_in_status_newest_change_first,
    company_collected_adds_up_by_day_and_asset,
    company_collected_follows_every_session_change,
);

conformance!(
    webhooks:
    callbacks_save_read_replace,
    enqueue_numbers_events_per_link,
    enqueue_rolls_back_with_its_deliveries,
    enqueue_concurrently_gets_distinct_numbers,
    insert_deliveries_is_all_or_nothing,
    the_event_log_records_each_event_with_its_deliveries,
    the_event_log_pages_and_filters,
    the_event_log_is_pruned_by_age,
    claim_due_oldest_first_with_lease,
    record_attempt_moves_state_once,
    retarget_moves_live_deliveries_only,
    record_attempts_in_one_batch,
    claims_keep_each_endpoint_within_its_share,
    a_failing_endpoint_is_paused_then_probed,
);

conformance!(
    grant_webhooks:
    grant_subscriptions_save_by_version,
    keyed_write_commits_its_answer_with_it,
    a_key_is_claimed_once_and_dead_claims_are_taken_over,
    a_link_is_tagged_with_the_active_grant_subscription,
);

conformance!(keyed: a_keyed_link_commits_with_its_answer);

conformance!(
    ratelimit:
    rate_hits_count_per_bucket_and_window,
    a_forgotten_hit_no_longer_counts,
    concurrent_hits_never_pass_the_limit,
);

conformance!(tenancy: a_payment_link_domain_belongs_to_one_company);

conformance!(
    events:
    events_land_with_their_write_and_are_claimed_once_due,
    a_consumption_is_recorded_once_and_pruned_with_its_event,
);
