//! Rate limits: one atomic `hit` per request. The count and the decision are one statement
//! (`INSERT ... SELECT ... WHERE (count) < limit`); on PostgreSQL a transaction-scoped advisory
//! lock on the bucket comes first, so two hits of one bucket never count the same snapshot
//! (a burst cannot pass together); on SQLite the single writer does the same.

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};
use pay_domain::kernel::ratelimit::RateLimitStore;
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::PortResult;

use crate::conn::{write_transaction, AnyConnection};
use crate::schema::rate_hits;
use crate::DieselStore;

/// The one statement, written per backend for the placeholders only.
fn counted_insert(numbered: fn(usize) -> String) -> String {
    let p = numbered;
    format!(
        "INSERT INTO rate_hits (id, bucket, at) SELECT {}, {}, {} \
         WHERE (SELECT COUNT(*) FROM rate_hits WHERE bucket = {} AND at >= {}) < {}",
        p(1),
        p(2),
        p(3),
        p(2),
        p(4),
        p(5)
    )
}

impl RateLimitStore for DieselStore {
    fn hit(
        &self,
        bucket: &str,
        at: Timestamp,
        window: time::Duration,
        limit: u64,
    ) -> PortResult<bool> {
        // Random, not time-ordered: hits of one bucket in the same millisecond must not collide.
        let id = uuid::Uuid::new_v4().hyphenated().to_string();
        let at = at.unix_millis();
        let since = at.saturating_sub(i64::try_from(window.whole_milliseconds()).unwrap_or(0));
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let counted = self.write("rate hit", |conn| {
            write_transaction(conn, |conn| {
                let query = |sql: String| {
                    diesel::sql_query(sql)
                        .bind::<Text, _>(id.clone())
                        .bind::<Text, _>(bucket)
                        .bind::<BigInt, _>(at)
                        .bind::<BigInt, _>(since)
                        .bind::<BigInt, _>(limit)
                };
                match conn {
                    AnyConnection::Postgresql(pg) => {
                        diesel::sql_query("SELECT pg_advisory_xact_lock(hashtext($1))")
                            .bind::<Text, _>(bucket)
                            .execute(pg)?;
                        query(counted_insert(|i| format!("${i}"))).execute(pg)
                    }
                    AnyConnection::Sqlite(sqlite) => {
                        query(counted_insert(|i| format!("?{i}"))).execute(sqlite)
                    }
                }
            })
        })?;
        Ok(counted == 1)
    }

    fn forget_hit(&self, bucket: &str, at: Timestamp) -> PortResult<()> {
        let at = at.unix_millis();
        self.write("forget rate hit", |conn| {
            write_transaction(conn, |conn| {
                let one: Option<String> = rate_hits::table
                    .filter(rate_hits::bucket.eq(bucket))
                    .filter(rate_hits::at.eq(at))
                    .select(rate_hits::id)
                    .first(conn)
                    .optional()?;
                match one {
                    Some(id) => diesel::delete(rate_hits::table.filter(rate_hits::id.eq(id)))
                        .execute(conn)
                        .map(|_| ()),
                    None => Ok(()),
                }
            })
        })
    }

    fn clear_hits(&self, bucket: &str) -> PortResult<()> {
        self.write("clear rate hits", |conn| {
            diesel::delete(rate_hits::table.filter(rate_hits::bucket.eq(bucket))).execute(conn)
        })?;
        Ok(())
    }
}
