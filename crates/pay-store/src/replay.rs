//! SQLite's DPoP replay store: every DPoP request records its proof's `jti` in the replay
//! table ([`table`], a hash table in a file beside the database, `pay.db-jti`), shared by every
//! instance on the host: a record is one read and at most one write of the page cache under an
//! exclusive lock on the file, decided at once on the caller's thread, with no commit to wait
//! for and no thread to hand over to. A record is one 16-byte key ([`replay_key`]: `htu` and
//! the `jti` digest, hashed together) and its expiry. Of any number of concurrent records of
//! one pair, in any processes, exactly one is new.
//!
//! After each record the OAuth revocation generation (`tokens`) is read from the database on a
//! connection of the replay store's own: each caller learns the generation as it stood after
//! its record, which is what lets a DPoP request serve a token from the process's copy.
//! (PostgreSQL records on the pool, one statement per request; bench/README.md, DPoP.)
//!
//! Earlier builds kept the records in a SQLite file (`pay.db-dpop`, table `dpop_replays`, or
//! `dpop_jtis` before that): an instance opening the store moves that file's records into the
//! table and removes the file, so a proof recorded before an upgrade is a replay after it.

pub(crate) mod table;

use std::path::Path;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use diesel::prelude::*;
use pay_domain::Fault;

use sha2::{Digest, Sha256};

use crate::conn::AnyConnection;
use crate::tokens::read_generation;

diesel::table! {
    /// The older replay file's table (`conn::open_replay_file`): one row per recorded proof,
    /// read once to move its records into the table.
    dpop_replays (key) {
        key -> Binary,
        keep_until -> BigInt,
    }
}

/// A record's key in the replay table: the first 128 bits of SHA-256 over the `htu`'s length
/// (4 bytes, big-endian), the `htu` and the hex `jti` digest, so two records share a key only
/// when both are equal (the length keeps the two fields apart). 128 bits: a chance collision
/// among the window's records is out of reach, and a chosen one would need another client's
/// `jti` before it is made (docs/security.md, "DPoP proofs").
pub(crate) type ReplayKey = [u8; 16];

pub(crate) fn replay_key(htu: &str, jti_digest: &str) -> ReplayKey {
    let len = u32::try_from(htu.len()).unwrap_or(u32::MAX);
    let mut hash = Sha256::new();
    hash.update(len.to_be_bytes());
    hash.update(htu.as_bytes());
    hash.update(jti_digest.as_bytes());
    let digest = hash.finalize();
    let mut key = [0; 16];
    key.copy_from_slice(&digest[..16]);
    key
}

/// The replay table's file beside the database at `path`.
pub(crate) fn table_file(path: &str) -> String {
    format!("{path}-jti")
}

fn now_millis() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

fn fault(what: &str, e: impl std::fmt::Display) -> Fault {
    Fault::new(format!("database ({what}): {e}"))
}

/// The replay table and the connection that reads the generation after each record.
pub(crate) struct ReplayFile {
    table: table::ReplayTable,
    db: Mutex<AnyConnection>,
}

impl ReplayFile {
    /// Opens (or creates) the replay table beside the database at `path`, takes over the
    /// records of an older build's replay file, and connects to the database (`db`).
    pub(crate) fn open(path: &str, db: AnyConnection) -> Result<ReplayFile, String> {
        Self::open_sized(path, db, table::BUCKETS)
    }

    pub(crate) fn open_sized(
        path: &str,
        db: AnyConnection,
        buckets: u32,
    ) -> Result<ReplayFile, String> {
        let table = table::ReplayTable::open(Path::new(&table_file(path)), buckets)
            .map_err(|e| format!("cannot open the dpop replay table: {e}"))?;
        adopt_replay_file(path, &table)?;
        Ok(ReplayFile {
            table,
            db: Mutex::new(db),
        })
    }

    /// Records `(htu, jti_digest)` kept until `keep_until` (unix ms): true when new, false
    /// for a replay.
    pub(crate) fn record_only(
        &self,
        htu: &str,
        jti_digest: &str,
        keep_until: i64,
    ) -> Result<bool, Fault> {
        self.table
            .record(&replay_key(htu, jti_digest), keep_until, now_millis())
            .map_err(|e| fault("record dpop jti", e))
    }

    /// `record_only`, with the OAuth revocation generation read after the record.
    pub(crate) fn record(
        &self,
        htu: &str,
        jti_digest: &str,
        keep_until: i64,
    ) -> Result<(bool, i64), Fault> {
        let new = self.record_only(htu, jti_digest, keep_until)?;
        let mut db = self.db.lock().unwrap_or_else(|p| p.into_inner());
        let generation =
            read_generation(&mut db).map_err(|e| fault("read the oauth generation", e))?;
        Ok((new, generation))
    }

    /// Deletes the records kept until before `before` (unix ms); how many went.
    pub(crate) fn prune(&self, before: i64) -> Result<usize, Fault> {
        self.table
            .prune(before)
            .map_err(|e| fault("prune dpop jtis", e))
    }
}

/// An older build's replay file (`pay.db-dpop`): its records move into `table`, then the file
/// goes. Idempotent: two instances doing it at once record the same keys, the second as
/// replays.
fn adopt_replay_file(path: &str, table: &table::ReplayTable) -> Result<(), String> {
    let old = crate::conn::replay_file(path);
    if !Path::new(&old).exists() {
        return Ok(());
    }
    let rows: Vec<(Vec<u8>, i64)> = crate::conn::open_old_replay_file(path)
        .and_then(|mut c| {
            dpop_replays::table
                .select((dpop_replays::key, dpop_replays::keep_until))
                .load(&mut c)
                .map_err(diesel::r2d2::Error::QueryError)
        })
        .map_err(|e| format!("cannot read the older dpop replay file {old}: {e}"))?;
    let now = now_millis();
    for (key, keep_until) in rows {
        if let Ok(key) = ReplayKey::try_from(&key[..]) {
            table
                .record(&key, keep_until, now)
                .map_err(|e| format!("cannot move the dpop records of {old}: {e}"))?;
        }
    }
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{old}{suffix}"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use diesel::connection::SimpleConnection;

    fn temp_path() -> String {
        std::env::temp_dir()
            .join(format!("pay_test_replay_{}", uuid::Uuid::new_v4().simple()))
            .display()
            .to_string()
    }

    /// A database with the generation at 7, and the replay store beside it (a small table).
    fn replay_file() -> (ReplayFile, String) {
        let path = temp_path();
        let mut db = crate::conn::open_generation_conn(&path).unwrap();
        db.batch_execute(
            "CREATE TABLE oauth_generation (id BIGINT NOT NULL PRIMARY KEY, n BIGINT NOT NULL); \
             INSERT INTO oauth_generation VALUES (1, 7);",
        )
        .unwrap();
        (ReplayFile::open_sized(&path, db, 4).unwrap(), path)
    }

    fn remove(path: &str) {
        for suffix in [
            "",
            "-wal",
            "-shm",
            "-jti",
            "-dpop",
            "-dpop-wal",
            "-dpop-shm",
        ] {
            let _ = std::fs::remove_file(format!("{path}{suffix}"));
        }
    }

    /// The key hashes the two fields apart: moving a character from the `htu` to the `jti`
    /// digest gives another key, and each field's every byte counts.
    #[test]
    fn the_key_keeps_htu_and_jti_apart() {
        assert_ne!(replay_key("ab", "c"), replay_key("a", "bc"));
        assert_ne!(replay_key("h", "a"), replay_key("h", "b"));
        assert_ne!(replay_key("g", "a"), replay_key("h", "a"));
        assert_eq!(replay_key("h", "a"), replay_key("h", "a"));
    }

    /// Each record is answered with the generation read after it, and a pair is a replay for
    /// another store opened on the same database (another instance) at once.
    #[test]
    fn a_record_reads_the_generation_and_binds_every_instance() {
        let (file, path) = replay_file();
        let db = crate::conn::open_generation_conn(&path).unwrap();
        let other = ReplayFile::open_sized(&path, db, 4).unwrap();
        let mut seen = Vec::new();
        for i in 0..20 {
            let jti = format!("{i:02}");
            seen.push((
                file.record("h", &jti, 1).unwrap(),
                other.record("h", &jti, 1).unwrap(),
            ));
        }
        let moved = {
            let mut db = file.db.lock().unwrap();
            db.batch_execute("UPDATE oauth_generation SET n = 8")
                .unwrap();
            other.record("h", "after", 1).unwrap()
        };
        drop((file, other));
        remove(&path);
        assert!(
            seen.iter().all(|s| *s == ((true, 7), (false, 7))),
            "{seen:?}"
        );
        assert_eq!(
            moved,
            (true, 8),
            "the generation as it stands after the record"
        );
    }

    /// 64 threads recording 16 pairs four times each, all at once: each pair passes exactly
    /// once.
    #[test]
    fn concurrent_records_pass_once_each() {
        let (file, path) = replay_file();
        let barrier = std::sync::Barrier::new(64);
        let mut passed: Vec<String> = std::thread::scope(|s| {
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
        drop(file);
        remove(&path);
        passed.sort();
        let expected: Vec<String> = (0..16).map(|i| format!("{i:02}")).collect();
        assert_eq!(passed, expected);
    }

    /// An older build's replay file, in either of its layouts (`dpop_jtis` text columns, or
    /// `dpop_replays` keys), is taken over when the store opens: its records are replays after,
    /// a new pair is new, and the file is gone.
    #[test]
    fn records_of_an_older_replay_file_stay_replays() {
        for layout in [
            "CREATE TABLE dpop_jtis (htu TEXT NOT NULL, jti_digest TEXT NOT NULL, \
             keep_until BIGINT NOT NULL, PRIMARY KEY (htu, jti_digest)) WITHOUT ROWID; \
             INSERT INTO dpop_jtis VALUES ('h', 'old', 9000), ('g', 'other', 9000);",
            "CREATE TABLE dpop_replays (key BLOB NOT NULL PRIMARY KEY, \
             keep_until BIGINT NOT NULL) WITHOUT ROWID;",
        ] {
            let path = temp_path();
            {
                let mut old =
                    diesel::SqliteConnection::establish(&crate::conn::replay_file(&path)).unwrap();
                old.batch_execute(layout).unwrap();
                if layout.contains("dpop_replays") {
                    for (htu, jti) in [("h", "old"), ("g", "other")] {
                        diesel::insert_into(dpop_replays::table)
                            .values((
                                dpop_replays::key.eq(&replay_key(htu, jti)[..]),
                                dpop_replays::keep_until.eq(9000),
                            ))
                            .execute(&mut old)
                            .unwrap();
                    }
                }
            }
            let db = crate::conn::open_generation_conn(&path).unwrap();
            let file = ReplayFile::open_sized(&path, db, 4).unwrap();
            let seen = [
                file.record_only("h", "old", 9000).unwrap(),
                file.record_only("g", "other", 9000).unwrap(),
                file.record_only("h", "new", 9000).unwrap(),
            ];
            let gone = !Path::new(&crate::conn::replay_file(&path)).exists();
            drop(file);
            remove(&path);
            assert_eq!(seen, [false, false, true], "{layout}");
            assert!(gone, "the older file is removed");
        }
    }

    /// A prune drops the records kept until before the cut: a pruned pair records as new
    /// again, a kept one is still a replay.
    #[test]
    fn prune_drops_ended_records() {
        let (file, path) = replay_file();
        assert!(file.record_only("h", "old", 1_000).unwrap());
        assert!(file.record_only("h", "live", 9_000).unwrap());
        let pruned = file.prune(5_000).unwrap();
        let old_again = file.record_only("h", "old", 1_000).unwrap();
        let live_again = file.record_only("h", "live", 9_000).unwrap();
        drop(file);
        remove(&path);
        assert_eq!(pruned, 1);
        assert!(old_again, "a pruned pair is new again");
        assert!(!live_again, "a kept pair is still a replay");
    }
}
