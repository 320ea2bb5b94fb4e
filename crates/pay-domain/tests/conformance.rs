//! The port conformance suites (`pay_domain::testing::conformance`) on the in-memory store:
//! the same cases `pay-store` runs on SQLite and PostgreSQL.

use pay_domain::testing::conformance;
use pay_domain::testing::MemStore;

macro_rules! on_memory {
    ($suite:ident: $($case:ident),* $(,)?) => {
        mod $suite {
            $(
                #[test]
                fn $case() {
                    super::conformance::$suite::$case(&super::MemStore::default());
                }
            )*
        }
    };
}

on_memory!(checkout: session_and_timeline_round_trip, update_is_compare_and_set, duplicate_processor_event_writes_nothing, concurrent_duplicate_events_apply_once, webhook_events_take_consecutive_numbers, latest_session_newest_first, latest_session_in_picks_the_newest_of_those_statuses, unfinished_sessions_oldest_first, company_sessions_in_status_newest_change_first, company_collected_adds_up_by_day_and_asset, company_collected_follows_every_session_change);
on_memory!(links: payment_links, link_status_compare_and_set, links_by_status_and_search);
on_memory!(mail: prune_forgets_finished_mails_before_the_cut, insert_and_read_back_exactly, claim_due_oldest_first_with_lease, record_is_compare_and_set, link_mails_are_company_scoped_newest_first, pending_mails_after_a_cursor);
on_memory!(oauth: approved_scopes_of_a_grant_in_force_only, applications_round_trip_by_client_id, one_grant_per_company_and_application, concurrent_approvals_leave_one_grant, code_claim_is_one_time_under_concurrency, tokens_insert_together_and_read_back, refresh_rotation_has_exactly_one_winner, family_revocation_covers_every_token_of_the_family, jti_is_recorded_once_even_concurrently, jti_is_recorded_with_the_token_lookup, prune_cuts_by_expiry);
on_memory!(oauth_recovery: a_token_request_key_is_claimed_once, an_answer_is_written_with_its_tokens, answers_are_erased_when_their_tokens_end, a_revoked_grant_ends_its_tokens_and_answers, a_company_reset_ends_every_grant_family_and_answer);
on_memory!(ratelimit: rate_hits_count_per_bucket_and_window, a_forgotten_hit_no_longer_counts, concurrent_hits_never_pass_the_limit);
on_memory!(webhooks: callbacks_save_read_replace, enqueue_numbers_events_per_link, enqueue_rolls_back_with_its_deliveries, enqueue_concurrently_gets_distinct_numbers, insert_deliveries_is_all_or_nothing, outbox_gauges_count_live_deliveries, the_event_log_records_each_event_with_its_deliveries, the_event_log_pages_and_filters, the_event_log_is_pruned_by_age, claim_due_oldest_first_with_lease, record_attempt_moves_state_once, retarget_moves_live_deliveries_only, record_attempts_in_one_batch, claims_keep_each_endpoint_within_its_share, a_failing_endpoint_is_paused_then_probed);
on_memory!(subscriptions: upsert_is_keyed_by_email_per_company, claim_leases_each_due_subscription_once, a_company_claim_and_its_next_run_stay_in_the_company, a_cycle_is_created_once, subscriptions_round_trip_and_moves_are_compare_and_set, a_cycle_is_paid_once_per_event);
on_memory!(grant_webhooks: grant_subscriptions_save_by_version, keyed_write_commits_its_answer_with_it, a_key_is_claimed_once_and_dead_claims_are_taken_over, a_link_is_tagged_with_the_active_grant_subscription);
on_memory!(bookkeeping: an_activity_is_recorded_once_per_key, activities_filter_and_order, export_pages_run_in_order_within_the_period, one_expense_per_activity_and_versions_by_compare_and_set, contact_roles_merge_and_wallets_are_known_once, a_completed_session_reads_back_with_its_link);
on_memory!(evidence: evidence_rows_round_trip_within_their_company, expense_writes_link_and_unlink_evidence, orphans_are_claimed_by_compare_and_set);
on_memory!(events: events_land_with_their_write_and_are_claimed_once_due, a_consumption_is_recorded_once_and_pruned_with_its_event);
on_memory!(installations: a_platform_template_is_written_once, an_installation_is_written_once_with_its_application, a_key_swap_at_consent_is_atomic, a_company_lists_its_grants);
on_memory!(tenancy: a_payment_link_domain_belongs_to_one_company, a_reset_ends_the_sign_ins_of_the_company_members);
on_memory!(keyed: a_keyed_link_commits_with_its_answer, a_keyed_mail_commits_with_its_answer, a_keyed_subscription_commits_with_its_answer, a_keyed_upsert_commits_with_its_answer, a_keyed_expense_save_commits_with_its_answer);
on_memory!(onboarding: drafts_are_unique_per_partner_and_key, a_draft_is_claimed_once);

#[test]
fn the_memory_file_store_keeps_the_file_store_contract() {
    conformance::files::file_store_keeps_its_contract(
        &pay_domain::testing::MemFiles::default(),
        "mem",
    );
}

/// The reactions through the event outbox, on the in-memory store: a crash between the deciding
/// write and the reacting one loses nothing; a replay changes nothing.
mod reactions {
    use std::sync::Arc;

    use super::conformance::reactions;
    use super::MemStore;

    #[test]
    fn a_crash_before_the_cycle_payment_loses_nothing() {
        reactions::a_crash_before_the_cycle_payment_loses_nothing(Arc::new(MemStore::default()));
    }

    #[test]
    fn a_crash_before_the_incoming_activity_loses_nothing() {
        reactions::a_crash_before_the_incoming_activity_loses_nothing(
            Arc::new(MemStore::default()),
        );
    }

    #[test]
    fn a_crash_before_the_session_end_loses_nothing() {
        reactions::a_crash_before_the_session_end_loses_nothing(Arc::new(MemStore::default()));
    }

    #[test]
    fn a_crash_before_the_billing_clock_work_loses_nothing() {
        reactions::a_crash_before_the_billing_clock_work_loses_nothing(Arc::new(
            MemStore::default(),
        ));
    }
}

/// One in-memory store is every instance at once: the case still checks what each lookup reads
/// after each revocation.
#[test]
fn oauth_instances_every_instance_sees_a_revocation_at_once() {
    let store = MemStore::default();
    conformance::oauth_instances::every_instance_sees_a_revocation_at_once(&store, &store);
}

#[test]
fn oauth_instances_records_in_flight_pass_once_over_both_instances() {
    let store = MemStore::default();
    conformance::oauth_instances::records_in_flight_pass_once_over_both_instances(&store, &store);
}

#[test]
fn oauth_instances_concurrent_proofs_pass_once_over_both_instances() {
    let store = MemStore::default();
    conformance::oauth_instances::concurrent_proofs_pass_once_over_both_instances(&store, &store);
}
