//! SQLite's DPoP replay file, written by one thread in batches. Every DPoP request records its
//! proof's `jti` in the replay file (`conn::open_replay_file`), shared by every instance on the
//! host. One writer thread per process, fed by a channel, does every write: a caller sends its
//! record with a one-shot answer channel and waits; the writer takes every record waiting,
//! inserts them in one transaction, and only after the commit answers each caller: new or a
//! replay. A record is one 16-byte key ([`replay_key`]: `htu` and the `jti` digest, hashed
//! together) and its expiry, so a row is 24 bytes and an insert touches few pages. Each record
//! is its own insert on the primary key, in the order received, so a replay
//! inside one batch is refused exactly as across batches (the second of two equal pairs is the
//! replay), and of any number of concurrent records of one pair exactly one is new. After each
//! commit the writer reads the OAuth revocation generation (`tokens`) on its own connection to
//! the database, once for the whole batch: each caller learns the generation as it stood after
//! its record, which is what lets a DPoP request serve a token from the process's copy.
//! (PostgreSQL records on the pool, one statement per request: batching it the same way was
//! measured no cheaper; bench/README.md, DPoP.)
//!
//! A caller either blocks on its answer (`record`) or awaits it (`start_record`: an async
//! request waits without holding a thread, so a batch can hold every request in flight, not
//! only as many as there are blocking threads).

mod answer;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::Arc;

use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError, QueryResult};
use pay_domain::Fault;

use sha2::{Digest, Sha256};

use crate::conn::{roll_back_open, write_transaction, AnyConnection};
use crate::tokens::read_generation;

diesel::table! {
    /// The replay file's table (`conn::open_replay_file`): one row per recorded proof.
    dpop_replays (key) {
        key -> Binary,
        keep_until -> BigInt,
    }
}

/// A record's key in the replay file: the first 128 bits of SHA-256 over the `htu`'s length
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

/// Records inserted in one transaction at most (a batch's WAL frames stay few).
const MAX_BATCH: usize = 512;

/// `Ok((true, generation))` new, `Ok((false, generation))` a replay; `Err` when its batch
/// failed.
type Outcome = Result<(bool, i64), String>;

/// Where a record's outcome goes: a blocked thread, or a task awaiting it.
enum Answer {
    Block(mpsc::SyncSender<Outcome>),
    Wake(answer::Sender<Outcome>),
}

impl Answer {
    fn send(&self, outcome: Outcome) {
        match self {
            // A caller that stopped waiting needs no answer.
            Answer::Block(s) => drop(s.send(outcome)),
            Answer::Wake(s) => s.send(outcome),
        }
    }
}

/// A record's outcome, awaited (`ReplayFile::start_record`).
pub(crate) struct PendingRecord(answer::Receiver<Outcome>);

impl PendingRecord {
    /// `(new, generation)` once the record's batch committed.
    pub(crate) async fn outcome(self) -> Result<(bool, i64), Fault> {
        self.0
            .await
            .ok_or_else(|| Fault::new("dpop jti record lost (replay writer failed)"))?
            .map_err(|e| Fault::new(format!("database (record dpop jti): {e}")))
    }
}

/// What the writer is asked to do.
enum Job {
    Record {
        key: ReplayKey,
        keep_until: i64,
        answer: Answer,
    },
    Prune {
        before: i64,
        answer: mpsc::SyncSender<Result<usize, String>>,
    },
}

/// The replay file's connection, and one to the database for the generation.
pub(crate) struct Conns {
    pub(crate) jtis: AnyConnection,
    pub(crate) db: AnyConnection,
}

/// The channel to the writer thread (which ends when this is dropped).
pub(crate) struct ReplayFile {
    jobs: mpsc::Sender<Job>,
    /// Batches written (one transaction each), for the tests.
    batches: Arc<AtomicU64>,
}

impl ReplayFile {
    /// Starts the writer thread on `conns`.
    pub(crate) fn new(conns: Conns) -> std::io::Result<ReplayFile> {
        let (jobs, queue) = mpsc::channel();
        let file = ReplayFile {
            jobs,
            batches: Arc::new(AtomicU64::new(0)),
        };
        file.start(conns, queue)?;
        Ok(file)
    }

    fn start(&self, conns: Conns, queue: mpsc::Receiver<Job>) -> std::io::Result<()> {
        let batches = Arc::clone(&self.batches);
        std::thread::Builder::new()
            .name("pay-dpop-replay".into())
            .spawn(move || write_loop(conns, &queue, &batches))
            .map(drop)
    }

    /// Records `(htu, jti_digest)`: true when new, false for a replay; with the OAuth
    /// revocation generation read after the record committed. Answered only after the commit.
    pub(crate) fn record(
        &self,
        htu: &str,
        jti_digest: &str,
        keep_until: i64,
    ) -> Result<(bool, i64), Fault> {
        let (answer, outcome) = mpsc::sync_channel(1);
        self.send(Job::Record {
            key: replay_key(htu, jti_digest),
            keep_until,
            answer: Answer::Block(answer),
        })?;
        outcome
            .recv()
            .map_err(|_| Fault::new("dpop jti record lost (replay writer failed)"))?
            .map_err(|e| Fault::new(format!("database (record dpop jti): {e}")))
    }

    /// Hands `(htu, jti_digest)` to the writer now (records are decided in the order handed
    /// over) without waiting: the answer of `record`, awaited.
    pub(crate) fn start_record(
        &self,
        htu: &str,
        jti_digest: &str,
        keep_until: i64,
    ) -> Result<PendingRecord, Fault> {
        let (answer, outcome) = answer::channel();
        self.send(Job::Record {
            key: replay_key(htu, jti_digest),
            keep_until,
            answer: Answer::Wake(answer),
        })?;
        Ok(PendingRecord(outcome))
    }

    /// Deletes the records kept until before `before` (unix ms); how many went.
    pub(crate) fn prune(&self, before: i64) -> Result<usize, Fault> {
        let (answer, outcome) = mpsc::sync_channel(1);
        self.send(Job::Prune { before, answer })?;
        outcome
            .recv()
            .map_err(|_| Fault::new("dpop jti prune lost (replay writer failed)"))?
            .map_err(|e| Fault::new(format!("database (prune dpop jtis): {e}")))
    }

    fn send(&self, job: Job) -> Result<(), Fault> {
        self.jobs
            .send(job)
            .map_err(|_| Fault::new("the dpop replay writer has stopped"))
    }
}

/// The writer: waits for a job, takes every job queued behind it (up to [`MAX_BATCH`]
/// records), commits the records in one transaction, answers them, then runs the prunes.
/// Ends when every sender is gone. A panic inside a batch rolls back what was open and drops
/// that batch's answers (its callers get an error), and the writer goes on.
fn write_loop(mut conns: Conns, queue: &mpsc::Receiver<Job>, batches: &AtomicU64) {
    while let Ok(first) = queue.recv() {
        let mut records = Vec::new();
        let mut prunes = Vec::new();
        let mut next = Some(first);
        while let Some(job) = next {
            match job {
                Job::Record {
                    key,
                    keep_until,
                    answer,
                } => records.push(((key, keep_until), answer)),
                Job::Prune { before, answer } => prunes.push((before, answer)),
            }
            next = if records.len() < MAX_BATCH {
                queue.try_recv().ok()
            } else {
                None
            };
        }
        let done = catch_unwind(AssertUnwindSafe(|| {
            if !records.is_empty() {
                commit_and_answer(&mut conns, &records, batches);
            }
            for (before, answer) in &prunes {
                let _ = answer.send(prune(&mut conns.jtis, *before).map_err(|e| e.to_string()));
            }
        }));
        if done.is_err() {
            roll_back_open(&mut conns.jtis);
        }
    }
}

type Record = ((ReplayKey, i64), Answer);

fn commit_and_answer(conns: &mut Conns, records: &[Record], batches: &AtomicU64) {
    let rows: Vec<(ReplayKey, i64)> = records.iter().map(|(row, _)| *row).collect();
    let outcomes = record_batch(&mut conns.jtis, &rows)
        .and_then(|all| Ok((all, read_generation(&mut conns.db)?)))
        .map_err(|e| e.to_string());
    batches.fetch_add(1, Ordering::Relaxed);
    for (i, (_, answer)) in records.iter().enumerate() {
        let outcome = match &outcomes {
            Ok((all, generation)) => Ok((all[i], *generation)),
            Err(e) => Err(e.clone()),
        };
        answer.send(outcome);
    }
}

fn prune(conn: &mut AnyConnection, before: i64) -> QueryResult<usize> {
    diesel::delete(dpop_replays::table.filter(dpop_replays::keep_until.lt(before))).execute(conn)
}

/// Inserts every record in one transaction, in order: true for each new key, false for a key
/// already recorded (before, or earlier in the same batch).
pub(crate) fn record_batch(
    conn: &mut AnyConnection,
    rows: &[(ReplayKey, i64)],
) -> QueryResult<Vec<bool>> {
    write_transaction(conn, |conn| {
        rows.iter()
            .map(|(key, keep_until)| {
                match diesel::insert_into(dpop_replays::table)
                    .values((
                        dpop_replays::key.eq(&key[..]),
                        dpop_replays::keep_until.eq(keep_until),
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

    fn conns() -> (Conns, String) {
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
        (conns, path)
    }

    fn replay_file() -> (ReplayFile, String) {
        let (conns, path) = conns();
        (ReplayFile::new(conns).unwrap(), path)
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
        let (mut conns, path) = conns();
        let k = |htu, jti| (replay_key(htu, jti), 1);
        let first = record_batch(
            &mut conns.jtis,
            &[k("h", "a"), k("h", "b"), k("h", "a"), k("g", "a")],
        )
        .unwrap();
        let second = record_batch(&mut conns.jtis, &[k("h", "b"), k("h", "c")]).unwrap();
        drop(conns);
        remove(&path);
        assert_eq!(first, [true, true, false, true]);
        assert_eq!(second, [false, true]);
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

    /// Records queued before the writer starts are written as ONE batch, answered in order
    /// (the second of two equal pairs is the replay); a pair of that batch sent again later is
    /// a replay in the next batch.
    #[test]
    fn the_writer_batches_what_is_queued_and_refuses_replays_in_and_across_batches() {
        let (conns, path) = conns();
        let (jobs, queue) = mpsc::channel();
        let file = ReplayFile {
            jobs,
            batches: Arc::new(AtomicU64::new(0)),
        };
        let answers: Vec<_> = ["a", "b", "a", "c", "b"]
            .iter()
            .map(|jti| {
                let (answer, outcome) = mpsc::sync_channel(1);
                file.send(Job::Record {
                    key: replay_key("h", jti),
                    keep_until: 1,
                    answer: Answer::Block(answer),
                })
                .unwrap();
                outcome
            })
            .collect();
        file.start(conns, queue).unwrap();
        let first: Vec<(bool, i64)> = answers.iter().map(|o| o.recv().unwrap().unwrap()).collect();
        let batches = file.batches.load(Ordering::Relaxed);
        let again = file.record("h", "c", 1).unwrap();
        let fresh = file.record("h", "d", 1).unwrap();
        let total = file.batches.load(Ordering::Relaxed);
        drop(file);
        remove(&path);
        assert_eq!(
            first,
            [(true, 7), (true, 7), (false, 7), (true, 7), (false, 7)]
        );
        assert_eq!(batches, 1, "the queued records were one transaction");
        assert_eq!(again, (false, 7), "a pair of an earlier batch is a replay");
        assert_eq!(fresh, (true, 7));
        assert_eq!(total, 3);
    }

    /// "New" is answered only once the record is committed: another connection to the replay
    /// file (another instance) sees it as soon as the caller has its answer.
    #[test]
    fn a_record_is_answered_after_its_commit() {
        let (file, path) = replay_file();
        let mut other = crate::conn::open_replay_file(&path).unwrap();
        for i in 0..20 {
            let jti = format!("{i:02}");
            assert!(file.record("h", &jti, 1).unwrap().0);
            let seen = record_batch(&mut other.jtis, &[(replay_key("h", &jti), 1)]).unwrap();
            assert_eq!(seen, [false], "record {i} visible to another connection");
        }
        drop(file);
        remove(&path);
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
        drop(file);
        remove(&path);
        let mut passed = passed;
        passed.sort();
        let expected: Vec<String> = (0..16).map(|i| format!("{i:02}")).collect();
        assert_eq!(passed, expected);
    }

    /// 32 threads sending the same proof at once: exactly one is accepted.
    #[test]
    fn one_of_many_concurrent_equal_records_is_new() {
        let (file, path) = replay_file();
        let barrier = std::sync::Barrier::new(32);
        let new = std::thread::scope(|s| {
            let handles: Vec<_> = (0..32)
                .map(|_| {
                    let (file, barrier) = (&file, &barrier);
                    s.spawn(move || {
                        barrier.wait();
                        file.record("h", "same", 1).unwrap().0
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap())
                .filter(|new| *new)
                .count()
        });
        drop(file);
        remove(&path);
        assert_eq!(new, 1);
    }

    /// Polls `f` to its end on this thread (the writer's answer unparks it).
    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        struct Unpark(std::thread::Thread);
        impl std::task::Wake for Unpark {
            fn wake(self: Arc<Self>) {
                self.0.unpark();
            }
        }
        let waker = std::task::Waker::from(Arc::new(Unpark(std::thread::current())));
        let mut cx = std::task::Context::from_waker(&waker);
        let mut f = std::pin::pin!(f);
        loop {
            if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) {
                return v;
            }
            std::thread::park();
        }
    }

    /// Awaited records hold no thread while they wait, so one batch takes every record in
    /// flight: 64 records (16 pairs four times each) handed over from ONE thread, before the
    /// writer starts, are one commit, and each pair passes exactly once, the first handed
    /// over; with the writer running, a pair handed over again while its first record is still
    /// in flight is a replay, and so is one handed over after the commit.
    #[test]
    fn awaited_records_batch_every_record_in_flight_and_pass_once() {
        let (conns, path) = conns();
        let (jobs, queue) = mpsc::channel();
        let file = ReplayFile {
            jobs,
            batches: Arc::new(AtomicU64::new(0)),
        };
        let pending: Vec<(usize, PendingRecord)> = (0..64)
            .map(|i| {
                (
                    i,
                    file.start_record("h", &format!("{:02}", i % 16), 1)
                        .unwrap(),
                )
            })
            .collect();
        file.start(conns, queue).unwrap();
        let mut passed = Vec::new();
        for (i, p) in pending {
            let (new, generation) = block_on(p.outcome()).unwrap();
            assert_eq!(generation, 7);
            if new {
                passed.push(i);
            }
        }
        let batches = file.batches.load(Ordering::Relaxed);
        let first = file.start_record("h", "in-flight", 1).unwrap();
        let again = file.start_record("h", "in-flight", 1).unwrap();
        let (first, again) = (block_on(first.outcome()), block_on(again.outcome()));
        let after = block_on(file.start_record("h", "in-flight", 1).unwrap().outcome());
        drop(file);
        remove(&path);
        assert_eq!(
            passed,
            (0..16).collect::<Vec<_>>(),
            "the first of each pair"
        );
        assert_eq!(batches, 1, "64 records in flight, one commit");
        assert_eq!(first.unwrap(), (true, 7));
        assert_eq!(
            again.unwrap(),
            (false, 7),
            "a replay while the first is in flight"
        );
        assert_eq!(after.unwrap(), (false, 7));
    }

    /// A replay file of the older layout (`dpop_jtis`, text columns) is taken over when it is
    /// opened: its records are replays after, and the old table is gone.
    #[test]
    fn records_of_the_text_layout_stay_replays() {
        let path = std::env::temp_dir()
            .join(format!("pay_test_replay_{}", uuid::Uuid::new_v4().simple()))
            .display()
            .to_string();
        {
            let mut old =
                diesel::SqliteConnection::establish(&crate::conn::replay_file(&path)).unwrap();
            old.batch_execute(
                "CREATE TABLE dpop_jtis (htu TEXT NOT NULL, jti_digest TEXT NOT NULL, \
                 keep_until BIGINT NOT NULL, PRIMARY KEY (htu, jti_digest)) WITHOUT ROWID; \
                 INSERT INTO dpop_jtis VALUES ('h', 'old', 9000), ('g', 'other', 9000);",
            )
            .unwrap();
        }
        let mut conns = crate::conn::open_replay_file(&path).unwrap();
        let seen = record_batch(
            &mut conns.jtis,
            &[
                (replay_key("h", "old"), 9000),
                (replay_key("g", "other"), 9000),
                (replay_key("h", "new"), 9000),
            ],
        )
        .unwrap();
        #[derive(QueryableByName)]
        struct Count {
            #[diesel(sql_type = diesel::sql_types::BigInt)]
            n: i64,
        }
        let left =
            diesel::sql_query("SELECT count(*) AS n FROM sqlite_master WHERE name = 'dpop_jtis'")
                .get_result::<Count>(&mut conns.jtis)
                .unwrap();
        drop(conns);
        // Opened again: nothing left to take over, the records stay.
        let mut again = crate::conn::open_replay_file(&path).unwrap();
        let still = record_batch(&mut again.jtis, &[(replay_key("h", "old"), 9000)]).unwrap();
        drop(again);
        remove(&path);
        assert_eq!(seen, [false, false, true]);
        assert_eq!(left.n, 0, "the old table is dropped");
        assert_eq!(still, [false]);
    }

    /// A prune goes through the writer: the records kept until before the cut go, and a pruned
    /// pair records as new again.
    #[test]
    fn prune_through_the_writer() {
        let (file, path) = replay_file();
        assert!(file.record("h", "old", 1_000).unwrap().0);
        assert!(file.record("h", "live", 9_000).unwrap().0);
        let pruned = file.prune(5_000).unwrap();
        let old_again = file.record("h", "old", 1_000).unwrap().0;
        let live_again = file.record("h", "live", 9_000).unwrap().0;
        drop(file);
        remove(&path);
        assert_eq!(pruned, 1);
        assert!(old_again, "a pruned pair is new again");
        assert!(!live_again, "a kept pair is still a replay");
    }
}
