//! Fixtures shared by the store's test binaries.
#![allow(dead_code)]

use diesel::connection::SimpleConnection;
use diesel::Connection;
use pay_domain::assets::AssetCatalogue;
use pay_domain::settings::PaySettings;
use pay_domain::timestamp::Timestamp;
use pay_domain::DomainError;
use pay_store::{DieselStore, StoreConfig};
use uuid::Uuid;

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

pub const T0: i64 = 1_795_327_640_123;

pub fn ts(ms: i64) -> Timestamp {
    Timestamp::from_unix_millis(ms).unwrap()
}

/// Alphanumeric randomness for the prefixed ids (hex is a subset).
pub fn random_alnum(len: usize) -> String {
    let mut s = String::new();
    while s.len() < len {
        s.push_str(&Uuid::new_v4().simple().to_string());
    }
    s.truncate(len);
    s
}

/// A new company's settings.
pub fn settings() -> PaySettings {
    PaySettings::new_company_default(&AssetCatalogue::builtin())
}

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

pub fn is_internal<T: std::fmt::Debug>(r: Result<T, DomainError>) -> bool {
    matches!(r, Err(DomainError::Internal(_)))
}
