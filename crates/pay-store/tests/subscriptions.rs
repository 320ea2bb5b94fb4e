//! `ContactStore` and `SubscriptionStore` on `DieselStore`, run against SQLite and PostgreSQL
//! alike: each case below becomes a `sqlite` and a `postgres` test (the latter skips without
//! `PAY_TEST_POSTGRES_URL`).

#[macro_use]
mod common;
use common::*;

conformance!(
    subscriptions:
    upsert_is_keyed_by_email_per_company,
    claim_leases_each_due_subscription_once,
    a_company_claim_and_its_next_run_stay_in_the_company,
    a_cycle_is_created_once,
    subscriptions_round_trip_and_moves_are_compare_and_set,
    a_cycle_is_paid_once_per_event,
);
