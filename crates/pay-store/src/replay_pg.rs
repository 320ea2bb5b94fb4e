//! The replay writer's batch on PostgreSQL (`replay`): every waiting record in ONE statement,
//! prepared once for the writer's connection, committed without waiting for its WAL flush as a
//! single record was (docs/security.md, "DPoP proofs"), with the revocation generation read in
//! the same snapshot.

use std::collections::HashSet;

use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::result::QueryResult;
use diesel::sql_types::{Array, BigInt, Text, Untyped};
use diesel::PgConnection;

/// Records `rows` (`htu`, `jti_digest`, `keep_until`) in one statement: for each, in order,
/// true when new, false for a replay (recorded before, by any instance, or earlier in `rows`:
/// only the first of equal pairs is sent, the others are replays); and the generation.
pub(crate) fn record_batch(
    conn: &mut PgConnection,
    rows: &[(&str, &str, i64)],
) -> QueryResult<(Vec<bool>, i64)> {
    let mut seen = HashSet::with_capacity(rows.len());
    let first: Vec<bool> = rows.iter().map(|(h, j, _)| seen.insert((*h, *j))).collect();
    let sent = rows.iter().zip(&first).filter(|(_, f)| **f).map(|(r, _)| r);
    let batch = RecordBatch {
        htus: sent.clone().map(|r| r.0).collect(),
        jti_digests: sent.clone().map(|r| r.1).collect(),
        keep_untils: sent.map(|r| r.2).collect(),
    };
    let out = batch.get_result::<Recorded>(conn)?;
    let inserted: HashSet<(&str, &str)> = out
        .htus
        .iter()
        .zip(&out.jti_digests)
        .map(|(h, j)| (h.as_str(), j.as_str()))
        .collect();
    let new = rows
        .iter()
        .zip(first)
        .map(|((h, j, _), first)| first && inserted.contains(&(*h, *j)))
        .collect();
    Ok((new, out.generation))
}

/// The statement: the rows as three arrays, inserted with `ON CONFLICT DO NOTHING` (the unique
/// index decides at once for every instance); the pairs it inserted and the generation come
/// back in one row.
struct RecordBatch<'a> {
    htus: Vec<&'a str>,
    jti_digests: Vec<&'a str>,
    keep_untils: Vec<i64>,
}

#[derive(QueryableByName)]
struct Recorded {
    #[diesel(sql_type = Array<Text>)]
    htus: Vec<String>,
    #[diesel(sql_type = Array<Text>)]
    jti_digests: Vec<String>,
    #[diesel(sql_type = BigInt)]
    generation: i64,
}

impl QueryFragment<Pg> for RecordBatch<'_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql("WITH ");
        out.push_sql(crate::ports::dpop::ASYNC_COMMIT);
        out.push_sql(
            ", j AS (INSERT INTO dpop_jtis (htu, jti_digest, keep_until) \
             SELECT r.htu, r.jti_digest, r.keep_until FROM c, unnest(",
        );
        out.push_bind_param::<Array<Text>, _>(&self.htus)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<Text>, _>(&self.jti_digests)?;
        out.push_sql(", ");
        out.push_bind_param::<Array<BigInt>, _>(&self.keep_untils)?;
        out.push_sql(
            ") AS r (htu, jti_digest, keep_until) ON CONFLICT DO NOTHING \
             RETURNING htu, jti_digest) \
             SELECT ARRAY(SELECT htu FROM j) AS htus, \
             ARRAY(SELECT jti_digest FROM j) AS jti_digests, ",
        );
        out.push_sql(crate::ports::dpop::GENERATION);
        Ok(())
    }
}

// Prepared once per connection: the text never changes (the arrays are its parameters).
impl QueryId for RecordBatch<'_> {
    type QueryId = RecordBatch<'static>;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl Query for RecordBatch<'_> {
    type SqlType = Untyped;
}

impl RunQueryDsl<PgConnection> for RecordBatch<'_> {}

#[cfg(test)]
mod tests {
    use super::*;
    use diesel::sql_types::Text;

    #[derive(QueryableByName)]
    struct Count {
        #[diesel(sql_type = BigInt)]
        n: i64,
    }

    #[derive(QueryableByName)]
    struct Setting {
        #[diesel(sql_type = Text)]
        synchronous_commit: String,
    }

    /// A batch decides in order: the second of two equal pairs is a replay, a pair of an
    /// earlier batch too; the generation comes back with it; the statement is prepared once
    /// for the connection and leaves it committing synchronously.
    #[test]
    fn a_batch_refuses_replays_inside_it_and_across_batches() {
        let Some(db) = crate::testing::TestDb::postgres() else {
            return;
        };
        let store = crate::DieselStore::connect(&crate::StoreConfig {
            url: db.url.clone(),
            max_connections: 1,
        })
        .unwrap();
        store.migrate().unwrap();
        let mut conn = PgConnection::establish(&db.url).unwrap();
        let generation = crate::tokens::read_generation(
            &mut crate::conn::AnyConnection::Postgresql(PgConnection::establish(&db.url).unwrap()),
        )
        .unwrap();
        let first = record_batch(
            &mut conn,
            &[("h", "a", 1), ("h", "b", 1), ("h", "a", 1), ("g", "a", 1)],
        )
        .unwrap();
        let second =
            record_batch(&mut conn, &[("h", "b", 1), ("h", "c", 1), ("h", "c", 1)]).unwrap();
        let all_replays = record_batch(&mut conn, &[("h", "a", 1)]).unwrap();
        assert_eq!(first, (vec![true, true, false, true], generation));
        assert_eq!(second, (vec![false, true, false], generation));
        assert_eq!(all_replays, (vec![false], generation));
        let prepared = diesel::sql_query(
            "SELECT count(*) AS n FROM pg_prepared_statements WHERE statement LIKE '%unnest(%'",
        )
        .get_result::<Count>(&mut conn)
        .unwrap();
        assert_eq!(prepared.n, 1, "prepared once for the connection");
        let setting = diesel::sql_query("SHOW synchronous_commit")
            .get_result::<Setting>(&mut conn)
            .unwrap();
        assert_eq!(setting.synchronous_commit, "on");
        drop(store);
    }
}
