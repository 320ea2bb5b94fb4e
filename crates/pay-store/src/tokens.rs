//! The process's copy of DPoP-bound access tokens, each with the OAuth revocation generation it
//! was read under, and that generation's triggers.
//!
//! `oauth_generation` holds one counter; a trigger on `oauth_access_tokens`, `oauth_families`
//! and `oauth_grants` moves it on at every update or delete, inside the transaction that makes
//! the change (a revocation, a disconnect, a key rotation, a family's loss, a re-approval, a
//! prune). A copy read under generation `n` is what the database holds for as long as the
//! counter still reads `n`; so a DPoP request reads the counter in the round trip that records
//! its proof's `jti` (which it needs anyway), and serves the copy only when they match, else it
//! reads the token again. A revocation committed on any instance is seen by the next request
//! on every instance, and the token's three-table read leaves the hot path.

use std::collections::HashMap;
use std::sync::Mutex;

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::result::QueryResult;
use diesel::sql_types::{BigInt, Untyped};
use diesel::{PgConnection, SqliteConnection};
use pay_domain::oauth::{Held, StoredToken};

use crate::conn::{AnyConnection, MultiBackend};

/// Entries kept before the map is emptied (a bound, not an eviction policy: the working set is
/// the live tokens of the installations this instance serves, one per hour each).
const MAX_ENTRIES: usize = 10_000;

/// Digest of the token -> (the generation it was read under, the token with family and grant).
#[derive(Debug, Default)]
pub(crate) struct TokenCache {
    entries: Mutex<HashMap<String, (i64, Held<StoredToken>)>>,
}

impl TokenCache {
    pub(crate) fn get(&self, digest: &str) -> Option<(i64, Held<StoredToken>)> {
        self.lock().get(digest).cloned()
    }

    /// Keeps `held`, read under `generation` (read before it or in the same snapshot).
    pub(crate) fn put(&self, digest: &str, generation: i64, held: &Held<StoredToken>) {
        let mut entries = self.lock();
        if entries.len() >= MAX_ENTRIES {
            entries.clear();
        }
        entries.insert(digest.to_owned(), (generation, held.clone()));
    }

    pub(crate) fn forget(&self, digest: &str) {
        self.lock().remove(digest);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (i64, Held<StoredToken>)>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The tables whose rows a cached token is made of.
const TABLES: [&str; 3] = ["oauth_access_tokens", "oauth_families", "oauth_grants"];

/// Installs the generation's triggers on SQLite where missing (after the migrations;
/// idempotent). SQLite has row triggers only: one bump per changed row.
pub(crate) fn install_sqlite_triggers(c: &mut SqliteConnection) -> QueryResult<()> {
    let mut sql = String::new();
    for table in TABLES {
        for event in ["UPDATE", "DELETE"] {
            sql.push_str(&format!(
                "CREATE TRIGGER IF NOT EXISTS {table}_{ev}_generation AFTER {event} ON {table} \
                 BEGIN UPDATE oauth_generation SET n = n + 1 WHERE id = 1; END;",
                ev = event.to_ascii_lowercase(),
            ));
        }
    }
    c.batch_execute(&sql)
}

/// Installs the generation's triggers on PostgreSQL where missing, in one transaction (the
/// caller holds the migration lock): one bump per statement.
pub(crate) fn install_postgres_triggers(c: &mut PgConnection) -> QueryResult<()> {
    #[derive(QueryableByName)]
    struct Count {
        #[diesel(sql_type = BigInt)]
        n: i64,
    }
    let present = diesel::sql_query(
        "SELECT count(*) AS n FROM pg_trigger WHERE tgname = 'oauth_generation_bump' \
         AND NOT tgisinternal",
    )
    .get_result::<Count>(c)?;
    if present.n == TABLES.len() as i64 {
        return Ok(());
    }
    let mut sql = String::from(
        "BEGIN; \
         CREATE OR REPLACE FUNCTION oauth_generation_bump() RETURNS trigger LANGUAGE plpgsql \
         AS $$ BEGIN UPDATE oauth_generation SET n = n + 1 WHERE id = 1; RETURN NULL; END $$;",
    );
    for table in TABLES {
        sql.push_str(&format!(
            "DROP TRIGGER IF EXISTS oauth_generation_bump ON {table}; \
             CREATE TRIGGER oauth_generation_bump AFTER UPDATE OR DELETE ON {table} \
             FOR EACH STATEMENT EXECUTE FUNCTION oauth_generation_bump();"
        ));
    }
    sql.push_str("COMMIT;");
    c.batch_execute(&sql)
}

/// `SELECT n FROM oauth_generation`, prepared once per connection.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReadGeneration;

#[derive(QueryableByName)]
struct GenerationRow {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

impl QueryFragment<MultiBackend> for ReadGeneration {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, MultiBackend>) -> QueryResult<()> {
        out.push_sql("SELECT n FROM oauth_generation WHERE id = 1");
        Ok(())
    }
}

impl QueryId for ReadGeneration {
    type QueryId = ReadGeneration;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl Query for ReadGeneration {
    type SqlType = Untyped;
}

impl<Conn> RunQueryDsl<Conn> for ReadGeneration {}

/// The generation now.
pub(crate) fn read_generation(conn: &mut AnyConnection) -> QueryResult<i64> {
    ReadGeneration
        .get_result::<GenerationRow>(conn)
        .map(|r| r.n)
}
