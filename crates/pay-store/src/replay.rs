//! SQLite's DPoP replay file with group commit: every request records its proof's `jti`, and a
//! commit per record (WAL frames, shared-memory locks) cost about as much as the proof's
//! signature check. Concurrent records are therefore committed together: each caller queues
//! its record and takes the connection; whoever holds it commits every queued record in one
//! transaction and hands each caller its own outcome, so a caller that finds its record
//! already committed returns at once. Each record is still its own insert on the primary key,
//! so a replay inside one batch is refused exactly as across batches. After each commit the
//! holder reads the OAuth revocation generation (`tokens`) on its own connection to the
//! database, once for the whole batch: each caller learns the generation as it stood after its
//! record, which is what lets a DPoP request serve a token from the process's copy.

use std::sync::{Arc, Mutex, MutexGuard};

use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError, QueryResult};
use pay_domain::Fault;

use crate::conn::{write_transaction, AnyConnection};
use crate::schema::dpop_jtis;
use crate::tokens::read_generation;

/// One queued record and, once its batch committed, its outcome.
struct Pending {
    htu: String,
    jti_digest: String,
    keep_until: i64,
    /// `Ok((true, generation))` new, `Ok((false, generation))` a replay; `Err` when its batch
    /// failed.
    outcome: Mutex<Option<Result<(bool, i64), String>>>,
}

/// The replay file's connection, and one to the database for the generation.
pub(crate) struct Conns {
    pub(crate) jtis: AnyConnection,
    pub(crate) db: AnyConnection,
}

/// The replay table's own connection and the records waiting for the next commit.
pub(crate) struct ReplayFile {
    conn: Mutex<Conns>,
    queue: Mutex<Vec<Arc<Pending>>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl ReplayFile {
    pub(crate) fn new(conns: Conns) -> ReplayFile {
        ReplayFile {
            conn: Mutex::new(conns),
            queue: Mutex::new(Vec::new()),
        }
    }

    /// Records `(htu, jti_digest)`: true when new, false for a replay; with the OAuth
    /// revocation generation read after the record committed.
    pub(crate) fn record(
        &self,
        htu: &str,
        jti_digest: &str,
        keep_until: i64,
    ) -> Result<(bool, i64), Fault> {
        let mine = Arc::new(Pending {
            htu: htu.to_owned(),
            jti_digest: jti_digest.to_owned(),
            keep_until,
            outcome: Mutex::new(None),
        });
        lock(&self.queue).push(Arc::clone(&mine));
        let mut conn = lock(&self.conn);
        // Committed by the holder before us, with its batch.
        if let Some(outcome) = lock(&mine.outcome).take() {
            return outcome.map_err(Fault::new);
        }
        // Ours is still queued: commit every queued record (ours among them).
        let batch = std::mem::take(&mut *lock(&self.queue));
        let rows: Vec<(&str, &str, i64)> = batch
            .iter()
            .map(|p| (p.htu.as_str(), p.jti_digest.as_str(), p.keep_until))
            .collect();
        let conns = &mut *conn;
        let outcomes = record_batch(&mut conns.jtis, &rows)
            .and_then(|all| Ok((all, read_generation(&mut conns.db)?)))
            .map_err(|e| e.to_string());
        for (i, p) in batch.iter().enumerate() {
            let outcome = match &outcomes {
                Ok((all, generation)) => Ok((all[i], *generation)),
                Err(e) => Err(format!("database (record dpop jti): {e}")),
            };
            *lock(&p.outcome) = Some(outcome);
        }
        drop(conn);
        let outcome = lock(&mine.outcome).take();
        outcome
            .unwrap_or_else(|| Err("dpop jti record lost".into()))
            .map_err(Fault::new)
    }

    /// Deletes the records kept until before `before` (unix ms); how many went.
    pub(crate) fn prune(&self, before: i64) -> Result<usize, Fault> {
        diesel::delete(dpop_jtis::table.filter(dpop_jtis::keep_until.lt(before)))
            .execute(&mut lock(&self.conn).jtis)
            .map_err(|e| Fault::caused("database (prune dpop jtis)", e))
    }
}

/// Inserts every record in one transaction, in order: true for each new pair, false for a pair
/// already recorded (before, or earlier in the same batch).
pub(crate) fn record_batch(
    conn: &mut AnyConnection,
    rows: &[(&str, &str, i64)],
) -> QueryResult<Vec<bool>> {
    write_transaction(conn, |conn| {
        rows.iter()
            .map(|(htu, jti_digest, keep_until)| {
                match diesel::insert_into(dpop_jtis::table)
                    .values((
                        dpop_jtis::htu.eq(htu),
                        dpop_jtis::jti_digest.eq(jti_digest),
                        dpop_jtis::keep_until.eq(keep_until),
                    ))
                    .execute(conn)
                {
                    Ok(_) => Ok(true),
                    Err(DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, _)) => {
                        Ok(false)
                    }
                    Err(e) => Err(e),
                }
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use diesel::connection::SimpleConnection;

    fn replay_file() -> (ReplayFile, String) {
        let path = std::env::temp_dir()
            .join(format!("pay_test_replay_{}", uuid::Uuid::new_v4().simple()))
            .display()
            .to_string();
        let mut conns = crate::conn::open_replay_file(&path).unwrap();
        conns
            .db
            .batch_execute(
                "CREATE TABLE oauth_generation (id BIGINT NOT NULL PRIMARY KEY, n BIGINT NOT NULL); \
                 INSERT INTO oauth_generation VALUES (1, 7);",
            )
            .unwrap();
        (ReplayFile::new(conns), path)
    }

    fn remove(path: &str) {
        for suffix in ["", "-wal", "-shm", "-dpop", "-dpop-wal", "-dpop-shm"] {
            let _ = std::fs::remove_file(format!("{path}{suffix}"));
        }
    }

    /// A replay inside one batch is refused like one across batches: only the first of two
    /// equal pairs is new, and a pair of an earlier batch is a replay.
    #[test]
    fn a_replay_inside_one_batch_is_refused() {
        let (file, path) = replay_file();
        let mut conn = lock(&file.conn);
        let first = record_batch(
            &mut conn.jtis,
            &[("h", "a", 1), ("h", "b", 1), ("h", "a", 1), ("g", "a", 1)],
        )
        .unwrap();
        let second = record_batch(&mut conn.jtis, &[("h", "b", 1), ("h", "c", 1)]).unwrap();
        drop(conn);
        remove(&path);
        assert_eq!(first, [true, true, false, true]);
        assert_eq!(second, [false, true]);
    }

    /// 64 threads recording 16 pairs four times each, all at once: each pair passes exactly
    /// once, however the records were grouped into commits.
    #[test]
    fn concurrent_records_pass_once_each() {
        let (file, path) = replay_file();
        let barrier = std::sync::Barrier::new(64);
        let passed: Vec<String> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..64)
                .map(|i| {
                    let (file, barrier) = (&file, &barrier);
                    s.spawn(move || {
                        let jti = format!("{:02}", i % 16);
                        barrier.wait();
                        let (new, generation) = file.record("h", &jti, 1).unwrap();
                        assert_eq!(generation, 7);
                        new.then_some(jti)
                    })
                })
                .collect();
            handles
                .into_iter()
                .filter_map(|h| h.join().unwrap())
                .collect()
        });
        remove(&path);
        let mut passed = passed;
        passed.sort();
        let expected: Vec<String> = (0..16).map(|i| format!("{i:02}")).collect();
        assert_eq!(passed, expected);
    }
}
