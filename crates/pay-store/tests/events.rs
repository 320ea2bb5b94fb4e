//! The event outbox on `DieselStore`, against SQLite and PostgreSQL alike: the reactions of the
//! domain's contexts survive a crash between the deciding write and the reacting one, and a
//! replay changes nothing (`pay_domain::testing::conformance::reactions`, the cases the
//! in-memory store runs). The PostgreSQL tests skip without `PAY_TEST_POSTGRES_URL`.

#[macro_use]
mod common;
use common::*;

/// Each reaction case on a fresh, migrated database of each backend.
macro_rules! reactions {
    ($($case:ident),* $(,)?) => {$(
        mod $case {
            #[test]
            fn sqlite() {
                let db = pay_store::testing::TestDb::sqlite();
                let store = super::open(&db.url);
                pay_domain::testing::conformance::reactions::$case(std::sync::Arc::new(store));
            }

            #[test]
            fn postgres() {
                let Some(db) = pay_store::testing::TestDb::postgres() else { return };
                let store = super::open(&db.url);
                pay_domain::testing::conformance::reactions::$case(std::sync::Arc::new(store));
            }
        }
    )*};
}

reactions!(
    a_crash_before_the_cycle_payment_loses_nothing,
    a_crash_before_the_incoming_activity_loses_nothing,
    a_crash_before_the_session_end_loses_nothing,
    a_crash_before_the_billing_clock_work_loses_nothing,
);

conformance!(
    events:
    events_land_with_their_write_and_are_claimed_once_due,
    a_consumption_is_recorded_once_and_pruned_with_its_event,
);
