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
mod customers;
mod dpop;
mod event_log;
mod events;
mod evidence;
mod gateway;
mod grant_webhooks;
mod health;
mod installations;
mod links;
mod mail;
pub(crate) mod oauth;
mod oauth_recovery;
mod onboarding;
mod ratelimit;
mod settings;
mod subscriptions;
mod tenancy;
mod webhooks;

/// Says what failed; diesel's messages carry no bound values, so no secret reaches the log.
fn db_error(what: &'static str) -> impl FnOnce(diesel::result::Error) -> Fault {
    move |e| Fault::caused(format!("database ({what})"), e)
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
