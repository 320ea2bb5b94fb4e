//! `DpopReplayStore` on `DieselStore`. SQLite keeps the replay table in its own file
//! (`replay`, shared by every process on the host); PostgreSQL records a `jti` in one statement, committed without
//! waiting for its WAL flush (docs/security.md, "DPoP proofs"). A DPoP-bound token is served
//! from the process's copy while the OAuth revocation generation read with the record is the
//! one it was read under (`tokens`): the hot path is the record alone.

use diesel::prelude::*;
use diesel::result::QueryResult;
use pay_domain::kernel::secret::SecretDigest;
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::oauth::ports::{DpopReplayStore, HeldRecord, JtiRecord, PendingJti};
use pay_domain::oauth::{Held, StoredToken};
use pay_domain::PortResult;

use super::oauth::held;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::sql_types::{BigInt, Text, Untyped};

use crate::conn::{AnyConnection, MultiBackend};
use crate::rows::oauth::HeldAccessRow;
use crate::schema::dpop_jtis;
use crate::tokens::read_generation;
use crate::DieselStore;

/// Turns `synchronous_commit` off for the statement's own transaction (an autocommit
/// statement is one): `FROM c` makes the `set_config` run before the insert, and `true`
/// (local) ends it with the transaction, so nothing else on the connection changes.
const ASYNC_COMMIT: &str = "c AS (SELECT set_config('synchronous_commit', 'off', true))";

impl DpopReplayStore for DieselStore {
    fn access_token_recording_jti(
        &self,
        digest: &SecretDigest,
        proof: &JtiRecord<'_>,
    ) -> PortResult<(Option<Held<StoredToken>>, Option<bool>)> {
        // The process's copy, when it is bound to the proof's key: the record's round trip
        // also reads the generation, and the copy stands when nothing changed since it was read.
        if let Some((generation, held)) = self.tokens.get(&digest.0) {
            if held.item.jkt.as_deref() == Some(proof.jkt) {
                let (recorded, now) = self.record_jti_reading_generation(proof)?;
                if now == generation {
                    return Ok((Some(held), Some(recorded)));
                }
                // A token, family or grant changed somewhere: read the token again. The record
                // stands (the copy was this key's binding when read; a revoked token is still
                // refused by the caller).
                let (held, generation) = self.access_token_with_generation(digest)?;
                self.keep_token(digest, generation, held.as_ref());
                let bound = is_bound(held.as_ref(), proof);
                return Ok((held, bound.then_some(recorded)));
            }
        }
        if self.jtis.is_some() {
            // SQLite: the lookup on a reader of the database, the record on the replay file
            // (both local; no round trip to save).
            let (held, generation) = self.access_token_with_generation(digest)?;
            self.keep_token(digest, generation, held.as_ref());
            let recorded = if is_bound(held.as_ref(), proof) {
                Some(self.record_jti(proof.htu, proof.jti_digest, proof.keep_until)?)
            } else {
                None
            };
            return Ok((held, recorded));
        }
        let row = self.run("oauth access token and dpop jti", |conn| {
            lookup_recording_jti(conn, digest, proof)
        })?;
        let (rows, recorded, generation) = match row {
            Some(row) => {
                let (rows, recorded, generation) = row.split();
                (Some(rows), recorded, generation)
            }
            None => (None, false, 0),
        };
        let held: Option<Held<StoredToken>> = held(rows)?;
        self.keep_token(digest, generation, held.as_ref());
        let bound = is_bound(held.as_ref(), proof);
        Ok((held, bound.then_some(recorded)))
    }

    /// SQLite, a token copy bound to the proof's key: the record is made in the replay table
    /// now, on the caller's thread (a read and a write of the page cache under the table's
    /// lock, then the generation read from the database: no commit to wait for), and the
    /// returned future is ready. The copy stands when the generation read after the record is
    /// the one it was read under; else it is dropped, and the next request reads the token
    /// again. PostgreSQL: `None` (one statement on the pool, `access_token_recording_jti`).
    fn start_recording_jti(
        &self,
        digest: &SecretDigest,
        proof: &JtiRecord<'_>,
    ) -> Option<PendingJti> {
        let jtis = self.jtis.as_ref()?;
        let (generation, held) = self.tokens.get(&digest.0)?;
        if held.item.jkt.as_deref() != Some(proof.jkt) {
            return None;
        }
        let outcome = jtis
            .record(proof.htu, proof.jti_digest, proof.keep_until.unix_millis())
            .map(|(recorded, now)| {
                if now == generation {
                    HeldRecord::Current(Box::new(held), recorded)
                } else {
                    self.tokens.forget(&digest.0);
                    HeldRecord::Stale(recorded)
                }
            });
        Some(Box::pin(std::future::ready(outcome)))
    }

    fn record_jti(&self, htu: &str, jti_digest: &str, keep_until: Timestamp) -> PortResult<bool> {
        let keep_until = keep_until.unix_millis();
        match &self.jtis {
            Some(jtis) => jtis.record_only(htu, jti_digest, keep_until),
            None => self.run("record dpop jti", |conn| {
                record_jti_async_commit(conn, htu, jti_digest, keep_until)
            }),
        }
    }

    fn prune_jtis(&self, before: Timestamp) -> PortResult<u64> {
        let n = match &self.jtis {
            Some(jtis) => jtis.prune(before.unix_millis())?,
            None => self.write("prune dpop jtis", |conn| {
                diesel::delete(
                    dpop_jtis::table.filter(dpop_jtis::keep_until.lt(before.unix_millis())),
                )
                .execute(conn)
            })?,
        };
        Ok(n as u64)
    }
}

fn is_bound(held: Option<&Held<StoredToken>>, proof: &JtiRecord<'_>) -> bool {
    held.is_some_and(|h| h.item.jkt.as_deref() == Some(proof.jkt))
}

impl DieselStore {
    /// Keeps a DPoP-bound token read under `generation`; drops the copy of one that is gone.
    fn keep_token(&self, digest: &SecretDigest, generation: i64, held: Option<&Held<StoredToken>>) {
        match held {
            Some(h) if h.item.jkt.is_some() => self.tokens.put(&digest.0, generation, h),
            _ => self.tokens.forget(&digest.0),
        }
    }

    /// The token with its family and grant, and the generation read before it (so the copy is
    /// never older than the generation it is kept under).
    fn access_token_with_generation(
        &self,
        digest: &SecretDigest,
    ) -> PortResult<(Option<Held<StoredToken>>, i64)> {
        let (generation, row) = self.run("oauth access token", |conn| {
            let generation = read_generation(conn)?;
            Ok((generation, super::oauth::access_token_row(conn, digest)?))
        })?;
        Ok((held(row)?, generation))
    }

    /// Records the proof's `jti` and reads the generation after it (PostgreSQL: one prepared
    /// statement, committed asynchronously; SQLite: the replay table, then the generation on
    /// the replay store's own connection to the database).
    fn record_jti_reading_generation(&self, proof: &JtiRecord<'_>) -> PortResult<(bool, i64)> {
        let keep_until = proof.keep_until.unix_millis();
        match &self.jtis {
            Some(jtis) => jtis.record(proof.htu, proof.jti_digest, keep_until),
            None => self.run("record dpop jti", |conn| {
                let row = RecordJtiGeneration {
                    htu: proof.htu,
                    jti_digest: proof.jti_digest,
                    keep_until,
                }
                .get_result::<RecordedRow>(conn)?;
                Ok((row.recorded, row.generation))
            }),
        }
    }
}

/// The insert on PostgreSQL: one statement whose own transaction commits without waiting for
/// its WAL flush ([`ASYNC_COMMIT`]). The unique index decides at once for every instance; what
/// the asynchronous commit allows after a database crash is in docs/security.md ("DPoP
/// proofs"). True when new, false for a replay.
fn record_jti_async_commit(
    conn: &mut AnyConnection,
    htu: &str,
    jti_digest: &str,
    keep_until: i64,
) -> QueryResult<bool> {
    let inserted = RecordJti {
        htu,
        jti_digest,
        keep_until,
    }
    .execute(conn)?;
    Ok(inserted == 1)
}

/// PostgreSQL's token lookup that records the proof's `jti` in the same statement (one round
/// trip), only for a token bound to the proof's key, committed asynchronously (see
/// [`ASYNC_COMMIT`]). Every instance sees the record at once: the unique index decides.
fn lookup_recording_jti(
    conn: &mut AnyConnection,
    digest: &SecretDigest,
    proof: &JtiRecord<'_>,
) -> QueryResult<Option<HeldAccessRow>> {
    LookupRecordingJti {
        digest: &digest.0,
        proof: *proof,
        keep_until: proof.keep_until.unix_millis(),
    }
    .get_result(conn)
    .optional()
}

/// [`record_jti_async_commit`]'s statement, prepared once per connection (diesel caches a
/// statement by its type; `sql_query` would be parsed and planned on every request).
#[derive(Clone, Copy)]
struct RecordJti<'a> {
    htu: &'a str,
    jti_digest: &'a str,
    keep_until: i64,
}

/// [`DieselStore::record_jti_reading_generation`]'s statement on PostgreSQL, prepared once per
/// connection: the insert of [`RecordJti`], and the generation in the same snapshot.
#[derive(Clone, Copy)]
struct RecordJtiGeneration<'a> {
    htu: &'a str,
    jti_digest: &'a str,
    keep_until: i64,
}

#[derive(QueryableByName)]
struct RecordedRow {
    #[diesel(sql_type = diesel::sql_types::Bool)]
    recorded: bool,
    #[diesel(sql_type = BigInt)]
    generation: i64,
}

/// [`lookup_recording_jti`]'s statement, prepared once per connection.
#[derive(Clone, Copy)]
struct LookupRecordingJti<'a> {
    digest: &'a str,
    proof: JtiRecord<'a>,
    keep_until: i64,
}

impl QueryFragment<MultiBackend> for RecordJti<'_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, MultiBackend>) -> QueryResult<()> {
        out.push_sql("WITH ");
        out.push_sql(ASYNC_COMMIT);
        out.push_sql(" INSERT INTO dpop_jtis (htu, jti_digest, keep_until) SELECT ");
        out.push_bind_param::<Text, _>(&self.htu)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, _>(&self.jti_digest)?;
        out.push_sql(", ");
        out.push_bind_param::<BigInt, _>(&self.keep_until)?;
        out.push_sql(" FROM c ON CONFLICT DO NOTHING");
        Ok(())
    }
}

impl QueryFragment<MultiBackend> for RecordJtiGeneration<'_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, MultiBackend>) -> QueryResult<()> {
        out.push_sql("WITH ");
        out.push_sql(ASYNC_COMMIT);
        out.push_sql(", j AS (INSERT INTO dpop_jtis (htu, jti_digest, keep_until) SELECT ");
        out.push_bind_param::<Text, _>(&self.htu)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, _>(&self.jti_digest)?;
        out.push_sql(", ");
        out.push_bind_param::<BigInt, _>(&self.keep_until)?;
        out.push_sql(
            " FROM c ON CONFLICT DO NOTHING RETURNING 1) \
             SELECT EXISTS (SELECT 1 FROM j) AS recorded, ",
        );
        out.push_sql(GENERATION);
        Ok(())
    }
}

/// The generation, as a column of the statement's snapshot.
const GENERATION: &str = "(SELECT n FROM oauth_generation WHERE id = 1) AS generation";

/// The token with its family and grant as `HeldAccessRow` names them.
const HELD_COLUMNS: &str = "a.digest AS t_digest, a.family_id AS t_family_id, \
     a.grant_id AS t_grant_id, a.application_id AS t_application_id, a.scopes AS t_scopes, \
     a.jkt AS t_jkt, a.created_at AS t_created_at, a.expires_at AS t_expires_at, \
     a.revoked_at AS t_revoked_at, f.id AS f_id, f.grant_id AS f_grant_id, \
     f.created_at AS f_created_at, f.revoked_at AS f_revoked_at, g.id AS g_id, \
     g.company_id AS g_company_id, g.application_id AS g_application_id, \
     g.user_id AS g_user_id, g.scopes AS g_scopes, g.bound_jkt AS g_bound_jkt, \
     g.created_at AS g_created_at, g.updated_at AS g_updated_at, g.revoked_at AS g_revoked_at";

impl QueryFragment<MultiBackend> for LookupRecordingJti<'_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, MultiBackend>) -> QueryResult<()> {
        out.push_sql("WITH ");
        out.push_sql(ASYNC_COMMIT);
        out.push_sql(", t AS (SELECT ");
        out.push_sql(HELD_COLUMNS);
        out.push_sql(
            " FROM oauth_access_tokens a \
             JOIN oauth_families f ON f.id = a.family_id \
             JOIN oauth_grants g ON g.id = f.grant_id WHERE a.digest = ",
        );
        out.push_bind_param::<Text, _>(&self.digest)?;
        out.push_sql("), j AS (INSERT INTO dpop_jtis (htu, jti_digest, keep_until) SELECT ");
        out.push_bind_param::<Text, _>(&self.proof.htu)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, _>(&self.proof.jti_digest)?;
        out.push_sql(", ");
        out.push_bind_param::<BigInt, _>(&self.keep_until)?;
        out.push_sql(" FROM c, t WHERE t.t_jkt = ");
        out.push_bind_param::<Text, _>(&self.proof.jkt)?;
        out.push_sql(
            " ON CONFLICT DO NOTHING RETURNING 1) \
             SELECT t.*, EXISTS (SELECT 1 FROM j) AS recorded, ",
        );
        out.push_sql(GENERATION);
        out.push_sql(" FROM t");
        Ok(())
    }
}

macro_rules! cached_statement {
    ($($t:ident),*) => {$(
        impl QueryId for $t<'_> {
            type QueryId = $t<'static>;
            const HAS_STATIC_QUERY_ID: bool = true;
        }

        impl Query for $t<'_> {
            type SqlType = Untyped;
        }

        impl<Conn> RunQueryDsl<Conn> for $t<'_> {}
    )*};
}

cached_statement!(RecordJti, RecordJtiGeneration, LookupRecordingJti);
