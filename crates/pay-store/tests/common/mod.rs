//! Fixtures shared by the store's test binaries.
#![allow(dead_code, unused_macros, unused_imports)]

use diesel::connection::SimpleConnection;
use diesel::Connection;
use pay_store::{DieselStore, StoreConfig};

/// Each case runs on a fresh, migrated database of each backend.
macro_rules! both_backends {
    ($($case:ident),* $(,)?) => {$(
        mod $case {
            #[test]
            fn sqlite() {
                let db = pay_store::testing::TestDb::sqlite();
                let store = super::open(&db.url);
                assert_eq!(store.backend(), pay_store::Backend::Sqlite);
                super::$case(&store, &db.url);
            }

            #[test]
            fn postgres() {
                let Some(db) = pay_store::testing::TestDb::postgres() else { return };
                let store = super::open(&db.url);
                assert_eq!(store.backend(), pay_store::Backend::Postgres);
                super::$case(&store, &db.url);
            }
        }
    )*};
}

/// Each named case of a conformance suite (`pay_domain::testing::conformance::$suite`) on a
/// fresh, migrated database of each backend: the same cases the in-memory store runs.
macro_rules! conformance {
    ($suite:ident: $($case:ident),* $(,)?) => {$(
        mod $case {
            #[test]
            fn sqlite() {
                let db = pay_store::testing::TestDb::sqlite();
                let store = super::open(&db.url);
                assert_eq!(store.backend(), pay_store::Backend::Sqlite);
                pay_domain::testing::conformance::$suite::$case(&store);
            }

            #[test]
            fn postgres() {
                let Some(db) = pay_store::testing::TestDb::postgres() else { return };
                let store = super::open(&db.url);
                assert_eq!(store.backend(), pay_store::Backend::Postgres);
                pay_domain::testing::conformance::$suite::$case(&store);
            }
        }
    )*};
}

pub use pay_domain::testing::conformance::fixtures::*;

/// A migrated store over `url`.
pub fn open(url: &str) -> DieselStore {
    let store = DieselStore::connect(&StoreConfig {
        url: url.into(),
        max_connections: 4,
    })
    .unwrap();
    store.migrate().unwrap();
    store
}

/// A raw connection beside the store, to plant what the ports cannot write.
pub fn raw_sql(url: &str, sql: &str) {
    if let Some(path) = url.strip_prefix("sqlite://") {
        diesel::SqliteConnection::establish(path)
            .unwrap()
            .batch_execute(sql)
            .unwrap();
    } else {
        diesel::PgConnection::establish(url)
            .unwrap()
            .batch_execute(sql)
            .unwrap();
    }
}
