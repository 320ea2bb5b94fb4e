//! Throw-away databases for tests (feature `testing`): a fresh SQLite file or a fresh
//! PostgreSQL database per test, removed again on drop.

use std::fmt;
use std::path::PathBuf;

use diesel::{Connection, PgConnection, RunQueryDsl};

const POSTGRES_URL_ENV: &str = "PAY_TEST_POSTGRES_URL";
const REQUIRE_ALL_ENV: &str = "PAY_REQUIRE_ALL_TESTS";

/// Whether tests that need an outside service must run rather than skip
/// (`PAY_REQUIRE_ALL_TESTS=1`, set in CI so that a missing server cannot pass silently).
pub fn require_all_tests() -> bool {
    std::env::var(REQUIRE_ALL_ENV).is_ok_and(|v| v == "1")
}

/// A database that exists for as long as this value: pass `url` to `StoreConfig`.
pub struct TestDb {
    /// Store URL of the database (`sqlite://…` or `postgres://…`).
    pub url: String,
    guard: Guard,
}

enum Guard {
    Sqlite(PathBuf),
    Postgres { admin_url: String, database: String },
}

// The PostgreSQL URL may hold a password.
impl fmt::Debug for TestDb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.guard {
            Guard::Sqlite(path) => f.debug_struct("TestDb").field("sqlite", path).finish(),
            Guard::Postgres { database, .. } => f
                .debug_struct("TestDb")
                .field("postgres", database)
                .finish(),
        }
    }
}

fn random_hex() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

impl TestDb {
    /// A new, empty SQLite file under the system temp directory (not migrated).
    pub fn sqlite() -> TestDb {
        let path = std::env::temp_dir().join(format!("pay_test_{}.sqlite", random_hex()));
        TestDb {
            url: format!("sqlite://{}", path.display()),
            guard: Guard::Sqlite(path),
        }
    }

    /// A new, empty PostgreSQL database on the server of `PAY_TEST_POSTGRES_URL` (not
    /// migrated). Without that variable: `None` and a SKIP line on stderr, or a panic when
    /// `PAY_REQUIRE_ALL_TESTS=1`.
    pub fn postgres() -> Option<TestDb> {
        let Ok(admin_url) = std::env::var(POSTGRES_URL_ENV) else {
            if require_all_tests() {
                panic!(
                    "{REQUIRE_ALL_ENV}=1 but {POSTGRES_URL_ENV} is not set: PostgreSQL tests \
                     cannot run (e.g. {POSTGRES_URL_ENV}=postgres://postgres@127.0.0.1:5432/test)"
                );
            }
            eprintln!("SKIP: PostgreSQL test (set {POSTGRES_URL_ENV} to run it)");
            return None;
        };
        let database = format!("pay_test_{}", random_hex());
        let mut admin = PgConnection::establish(&admin_url)
            .unwrap_or_else(|e| panic!("cannot connect to {POSTGRES_URL_ENV}: {e}"));
        diesel::sql_query(format!("CREATE DATABASE {database}"))
            .execute(&mut admin)
            .unwrap_or_else(|e| panic!("cannot create test database {database}: {e}"));
        Some(TestDb {
            url: with_database(&admin_url, &database),
            guard: Guard::Postgres {
                admin_url,
                database,
            },
        })
    }
}

/// `admin_url` with its path (the database name) replaced, keeping any `?query`.
fn with_database(admin_url: &str, database: &str) -> String {
    let (scheme, rest) = admin_url
        .split_once("://")
        .unwrap_or(("postgres", admin_url));
    let (before_query, query) = match rest.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (rest, None),
    };
    let authority = before_query
        .split_once('/')
        .map_or(before_query, |(a, _)| a);
    match query {
        Some(q) => format!("{scheme}://{authority}/{database}?{q}"),
        None => format!("{scheme}://{authority}/{database}"),
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        match &self.guard {
            Guard::Sqlite(path) => {
                // WAL mode leaves two companion files next to the database; the DPoP replay
                // table has its own file, with its own.
                for suffix in [
                    "",
                    "-wal",
                    "-shm",
                    "-journal",
                    "-jti",
                    "-dpop",
                    "-dpop-wal",
                    "-dpop-shm",
                ] {
                    let mut p = path.clone().into_os_string();
                    p.push(suffix);
                    let _ = std::fs::remove_file(p);
                }
            }
            Guard::Postgres {
                admin_url,
                database,
            } => {
                // FORCE: a pool still open elsewhere in the test must not keep the database.
                let dropped = PgConnection::establish(admin_url)
                    .map_err(|e| e.to_string())
                    .and_then(|mut admin| {
                        diesel::sql_query(format!(
                            "DROP DATABASE IF EXISTS {database} WITH (FORCE)"
                        ))
                        .execute(&mut admin)
                        .map_err(|e| e.to_string())
                    });
                if let Err(e) = dropped {
                    eprintln!("could not drop test database {database}: {e}");
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::with_database;

    #[test]
    fn replaces_the_database_of_a_url() {
        assert_eq!(
            with_database("postgres://postgres@127.0.0.1:5432/test", "x"),
            "postgres://postgres@127.0.0.1:5432/x"
        );
        assert_eq!(
            with_database("postgresql://u:p@h/db?sslmode=disable", "x"),
            "postgresql://u:p@h/x?sslmode=disable"
        );
        assert_eq!(
            with_database("postgres://h:5432", "x"),
            "postgres://h:5432/x"
        );
    }
}
