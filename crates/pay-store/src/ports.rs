//! The port traits on `DieselStore`. Each hot-path method is one statement (one round trip);
//! rows are decoded after the connection is back in the pool.

use diesel::result::QueryResult;
use pay_domain::{Fault, PortResult};

use crate::conn::AnyConnection;
use crate::DieselStore;

#[macro_use]
pub(crate) mod outbox;

mod anonymous;
mod bookkeeping;
mod chains;
mod checkout;
mod circuits;
mod clock;
mod collected;
mod customers;
mod dpop;
mod event_log;
mod events;
mod evidence;
mod gateway;
mod grant_webhooks;
mod health;
mod installations;
pub(crate) mod links;
mod mail;
pub(crate) mod oauth;
mod oauth_grants;
mod oauth_recovery;
mod onboarding;
mod ratelimit;
mod settings;
mod subscriptions;
mod tenancy;
mod webhooks;

/// Says what failed; diesel's messages carry no bound values, so no secret reaches the log. A
/// database out of service for a while (`out_of_service`) is an unavailable fault (503).
fn db_error(what: &'static str) -> impl FnOnce(diesel::result::Error) -> Fault {
    move |e| {
        if out_of_service(&e) {
            Fault::unavailable(format!("database ({what})"), e)
        } else {
            Fault::caused(format!("database ({what})"), e)
        }
    }
}

/// Whether `e` says the database cannot work now but may later, whatever the request: its
/// disk is full (SQLite's SQLITE_FULL, PostgreSQL's class 53 insufficient resources), the
/// connection is lost or the server is shutting down or starting (PostgreSQL's class 57P,
/// operator intervention).
pub(crate) fn out_of_service(e: &diesel::result::Error) -> bool {
    use diesel::result::{DatabaseErrorKind, Error};
    match e {
        Error::DatabaseError(
            DatabaseErrorKind::ClosedConnection | DatabaseErrorKind::UnableToSendCommand,
            _,
        ) => true,
        Error::DatabaseError(_, info) => {
            let m = info.message();
            m.contains("database or disk is full")
                || m.contains("No space left on device")
                || m.contains("could not extend file")
                || m.contains("terminating connection due to administrator command")
                || m.contains("the database system is shutting down")
                || m.contains("the database system is starting up")
                || m.contains("the database system is in recovery mode")
                || m.contains("server closed the connection unexpectedly")
        }
        _ => false,
    }
}

impl DieselStore {
    /// Runs one unit of work on a pooled connection.
    fn run<T>(
        &self,
        what: &'static str,
        f: impl FnOnce(&mut AnyConnection) -> QueryResult<T>,
    ) -> PortResult<T> {
        let mut pooled = self.conn()?;
        f(&mut pooled.conn).map_err(|e| {
            pooled.note_error(&e);
            db_error(what)(e)
        })
    }

    /// Runs one unit of work that writes: on SQLite, on the single writer connection.
    fn write<T>(
        &self,
        what: &'static str,
        f: impl FnOnce(&mut AnyConnection) -> QueryResult<T>,
    ) -> PortResult<T> {
        match &self.writer {
            Some(writer) => {
                // A panic while holding the lock poisons it; the connection is still good once
                // a transaction the write left open is rolled back (a pooled connection is
                // dropped by the pool instead).
                let mut conn = writer.lock().unwrap_or_else(|p| p.into_inner());
                match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&mut conn.conn))) {
                    Ok(ran) => ran.map_err(db_error(what)),
                    Err(panicked) => {
                        crate::conn::roll_back_open(&mut conn.conn);
                        drop(conn);
                        std::panic::resume_unwind(panicked)
                    }
                }
            }
            None => self.run(what, f),
        }
    }
}

#[cfg(test)]
mod tests {
    /// A SQLite database whose disk is full (here: its page limit reached, the same
    /// SQLITE_FULL a full file system gives) is an unavailable fault (503), a broken statement
    /// is not.
    #[test]
    fn a_full_sqlite_database_is_unavailable() {
        use diesel::{Connection, RunQueryDsl};
        let mut c = diesel::SqliteConnection::establish(":memory:").unwrap();
        diesel::sql_query("PRAGMA max_page_count = 8")
            .execute(&mut c)
            .unwrap();
        diesel::sql_query("CREATE TABLE t (v TEXT)")
            .execute(&mut c)
            .unwrap();
        let full = (0..1000)
            .find_map(|_| {
                diesel::sql_query("INSERT INTO t VALUES (printf('%.*c', 2000, 'x'))")
                    .execute(&mut c)
                    .err()
            })
            .expect("the page limit is reached");
        assert!(super::out_of_service(&full), "{full}");
        let fault = super::db_error("insert")(full);
        assert!(fault.is_unavailable(), "{}", fault.chain());
        let broken = diesel::sql_query("INSERT INTO nowhere VALUES (1)")
            .execute(&mut c)
            .unwrap_err();
        assert!(!super::out_of_service(&broken));
        assert!(!super::db_error("insert")(broken).is_unavailable());
    }

    /// The detail route's reads on PostgreSQL: each statement is prepared once per connection
    /// and reused (diesel's statement cache), so repeating them adds no prepared statement.
    /// A one-connection pool makes every read, and the count, run on the same session.
    #[test]
    fn postgres_prepares_the_detail_reads_once_per_connection() {
        use crate::{DieselStore, StoreConfig};
        use diesel::sql_types::BigInt;
        use diesel::RunQueryDsl;
        use pay_domain::checkout::CheckoutStore;
        use pay_domain::kernel::ids::{CompanyId, LinkUid, PaymentLinkId};
        use pay_domain::links::ports::PaymentLinkStore;

        #[derive(diesel::QueryableByName)]
        struct Count {
            #[diesel(sql_type = BigInt)]
            n: i64,
        }
        let Some(db) = crate::testing::TestDb::postgres() else {
            return;
        };
        let store = DieselStore::connect(&StoreConfig {
            url: db.url.clone(),
            max_connections: 1,
        })
        .unwrap();
        store.migrate().unwrap();
        let company = CompanyId::parse("0192f0c4-1a2b-7c3d-8e4f-0123456789ab").unwrap();
        let link = PaymentLinkId::parse("0192f0c4-1a2b-7c3d-8e4f-0123456789ac").unwrap();
        let uid = LinkUid::parse("Xk3pQ9rT2mVw8LzA4bN7cD").unwrap();
        let detail = |store: &DieselStore| {
            assert!(store.link(company, &uid).unwrap().is_none());
            assert!(store.latest_session(link).unwrap().is_none());
            assert!(store.timeline(link).unwrap().is_empty());
        };
        let prepared = |store: &DieselStore| {
            store
                .run("count prepared statements", |conn| {
                    diesel::sql_query("SELECT count(*) AS n FROM pg_prepared_statements")
                        .get_result::<Count>(conn)
                })
                .unwrap()
                .n
        };
        let before = prepared(&store);
        detail(&store);
        let once = prepared(&store);
        assert!(
            once >= before + 3,
            "the three reads were not prepared: {before} -> {once}"
        );
        for _ in 0..20 {
            detail(&store);
        }
        assert_eq!(prepared(&store), once, "a repeated read was prepared again");
    }

    /// Through the store's own `write`: a write that panics inside its transaction on the
    /// SQLite writer leaves none open, so the next write commits and the pool's readers see it.
    #[test]
    fn a_panicked_write_does_not_swallow_the_next_one() {
        use crate::conn::write_transaction;
        use crate::{DieselStore, StoreConfig};
        use diesel::connection::SimpleConnection;
        use diesel::sql_types::BigInt;
        use diesel::RunQueryDsl;

        #[derive(diesel::QueryableByName)]
        struct Count {
            #[diesel(sql_type = BigInt)]
            n: i64,
        }
        let db = crate::testing::TestDb::sqlite();
        let store = DieselStore::connect(&StoreConfig {
            url: db.url.clone(),
            max_connections: 2,
        })
        .unwrap();
        store
            .write("create", |c| {
                c.batch_execute("CREATE TABLE t (n BIGINT NOT NULL)")
            })
            .unwrap();
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            store.write("panics", |c| {
                write_transaction(c, |c| -> diesel::QueryResult<()> {
                    c.batch_execute("INSERT INTO t VALUES (1)")?;
                    panic!("a write that panics")
                })
            })
        }));
        assert!(panicked.is_err());
        store
            .write("after", |c| {
                write_transaction(c, |c| c.batch_execute("INSERT INTO t VALUES (2)"))
            })
            .unwrap();
        let seen = store
            .run("count", |c| {
                diesel::sql_query("SELECT count(*) AS n FROM t WHERE n = 2").get_result::<Count>(c)
            })
            .unwrap();
        assert_eq!(seen.n, 1);
        let lost = store
            .run("count", |c| {
                diesel::sql_query("SELECT count(*) AS n FROM t WHERE n = 1").get_result::<Count>(c)
            })
            .unwrap();
        assert_eq!(lost.n, 0);
    }

    /// On PostgreSQL the `jti` insert turns `synchronous_commit` off for its own transaction
    /// only: the next statement on the same connection (one connection in the pool) runs with
    /// it on again, so no other write is ever committed asynchronously.
    #[test]
    fn postgres_jti_insert_leaves_the_connection_committing_synchronously() {
        use crate::{DieselStore, StoreConfig};
        use diesel::sql_types::Text;
        use diesel::RunQueryDsl;
        use pay_domain::kernel::timestamp::Timestamp;
        use pay_domain::oauth::ports::DpopReplayStore;

        #[derive(diesel::QueryableByName)]
        struct Setting {
            #[diesel(sql_type = Text)]
            synchronous_commit: String,
        }
        #[derive(diesel::QueryableByName)]
        struct Count {
            #[diesel(sql_type = diesel::sql_types::BigInt)]
            n: i64,
        }
        let Some(db) = crate::testing::TestDb::postgres() else {
            return;
        };
        let store = DieselStore::connect(&StoreConfig {
            url: db.url.clone(),
            max_connections: 1,
        })
        .unwrap();
        store.migrate().unwrap();
        let until = Timestamp::from_unix_millis(4_102_444_800_000).unwrap();
        let setting = |store: &DieselStore| {
            store
                .run("show synchronous_commit", |conn| {
                    diesel::sql_query("SHOW synchronous_commit").get_result::<Setting>(conn)
                })
                .unwrap()
                .synchronous_commit
        };
        assert_eq!(setting(&store), "on");
        assert!(store.record_jti("h", &"a".repeat(64), until).unwrap());
        assert_eq!(setting(&store), "on");
        assert!(!store.record_jti("h", &"a".repeat(64), until).unwrap());
        assert_eq!(setting(&store), "on");
        // Prepared once for the connection (a named statement, reused), not parsed per call.
        assert!(store.record_jti("h", &"b".repeat(64), until).unwrap());
        let prepared = store
            .run("count prepared statements", |conn| {
                diesel::sql_query(
                    "SELECT count(*) AS n FROM pg_prepared_statements \
                     WHERE statement LIKE '%INSERT INTO dpop_jtis%'",
                )
                .get_result::<Count>(conn)
            })
            .unwrap()
            .n;
        assert_eq!(prepared, 1);
    }
}
