//! `BookkeepingStore` and the contact roles and wallets of `ContactStore` on `DieselStore`,
//! run against SQLite and PostgreSQL alike: each case below becomes a `sqlite` and a
//! `postgres` test (the latter skips without `PAY_TEST_POSTGRES_URL`).

#[macro_use]
mod common;
use common::*;

conformance!(
    bookkeeping:
    an_activity_is_recorded_once_per_key,
    activities_filter_and_order,
    export_pages_run_in_order_within_the_period,
    one_expense_per_activity_and_versions_by_compare_and_set,
    contact_roles_merge_and_wallets_are_known_once,
    a_completed_session_reads_back_with_its_link,
);

conformance!(
    evidence:
    evidence_rows_round_trip_within_their_company,
    expense_writes_link_and_unlink_evidence,
    orphans_are_claimed_by_compare_and_set,
);
