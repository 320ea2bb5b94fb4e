//! The replay table of a SQLite deployment: a fixed-size hash table of DPoP records in a file
//! beside the database (`pay.db-jti`), read and written with positioned I/O while the process
//! holds an exclusive lock on the whole file (`flock`). Every process on the host that opens the
//! database opens this file too, so a record made by one is a replay for all; the lock makes each
//! record one atomic step across processes (and a process-local mutex across the threads of one
//! process, since `flock` is held per open file, not per thread).
//!
//! A record's key ([`super::ReplayKey`], 16 bytes of SHA-256) picks its bucket with its first
//! four bytes; the slot keeps the next ten (so 80 bits of the key are compared, beyond the
//! bucket's) and the expiry in unix milliseconds (six bytes). A bucket is 64 slots of 16 bytes (1 KiB, one read); a record is a read of its bucket and, when
//! new, a write of its slot, all in the page cache, so there is no commit to wait for and no
//! thread to hand over to. The file is written back by the kernel like any file: a process
//! crash loses nothing, a power loss can lose the records of the last seconds
//! (docs/security.md, "DPoP proofs").

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use super::ReplayKey;

/// The file's first bytes: format and geometry, checked by every process that opens it.
const MAGIC: [u8; 8] = *b"PAYJTI02";
/// The header's room (one page), before the first bucket.
const HEADER: u64 = 4096;
/// A slot: 10 bytes of the key, then the expiry (unix ms, 48 bits little-endian; 0: free).
const SLOT: usize = 16;
/// Slots per bucket.
const SLOTS: usize = 64;
const BUCKET: usize = SLOT * SLOTS;
/// Buckets of the deployed table: 4 Mi records in 64 MiB, about 1,300 records per second of
/// the 5-minute window at one eighth of the slots, so a bucket is never near full.
pub(crate) const BUCKETS: u32 = 1 << 16;
/// Buckets pruned under one hold of the lock (64 KiB).
const PRUNE_BUCKETS: u32 = 64;

/// The open table.
#[derive(Debug)]
pub(crate) struct ReplayTable {
    file: Mutex<File>,
    buckets: u32,
}

/// The file, locked against every other process and thread; unlocked when dropped.
struct Locked<'a>(MutexGuard<'a, File>);

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}

fn header(buckets: u32) -> [u8; 16] {
    let mut h = [0; 16];
    h[..8].copy_from_slice(&MAGIC);
    h[8..12].copy_from_slice(&buckets.to_le_bytes());
    h[12..].copy_from_slice(&(SLOTS as u32).to_le_bytes());
    h
}

/// The key's bytes a slot keeps (after the four that chose the bucket).
const KEPT_KEY: usize = 10;
/// The largest expiry a slot holds (48 bits of milliseconds: the year 10889).
const MAX_KEPT: i64 = (1 << 48) - 1;

/// A slot's expiry: `keep_until` (unix ms), at least 1 (0 marks a free slot).
fn kept_ms(keep_until: i64) -> [u8; 6] {
    let ms = keep_until.clamp(1, MAX_KEPT).to_le_bytes();
    let mut b = [0; 6];
    b.copy_from_slice(&ms[..6]);
    b
}

fn kept_of(slot: &[u8]) -> i64 {
    let mut b = [0; 8];
    b[..6].copy_from_slice(&slot[KEPT_KEY..SLOT]);
    i64::from_le_bytes(b)
}

/// Whether a slot's record is kept until before `before` (unix ms).
fn ended(kept: i64, before: i64) -> bool {
    kept != 0 && kept < before
}

impl ReplayTable {
    /// Opens the table at `path`, creating it (sparse, all slots free) when it is new. A file
    /// of another format or geometry is refused.
    pub(crate) fn open(path: &Path, buckets: u32) -> io::Result<ReplayTable> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)?;
        let table = ReplayTable {
            file: Mutex::new(file),
            buckets: buckets.max(1),
        };
        let want = header(table.buckets);
        let f = table.lock()?;
        let mut head = [0; 16];
        if f.0.metadata()?.len() >= HEADER {
            f.0.read_exact_at(&mut head, 0)?;
        }
        if head == [0; 16] {
            // New (or its creator stopped before the header): size it, then mark it ready.
            f.0.set_len(HEADER + u64::from(table.buckets) * BUCKET as u64)?;
            f.0.write_all_at(&want, 0)?;
        } else if head != want {
            return Err(io::Error::other(format!(
                "{}: a DPoP replay table of another format or size",
                path.display()
            )));
        }
        drop(f);
        Ok(table)
    }

    fn lock(&self) -> io::Result<Locked<'_>> {
        let file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        file.lock()?;
        Ok(Locked(file))
    }

    /// Where `key` lives: its bucket's offset, and the part of the key its slot keeps.
    fn place(&self, key: &ReplayKey) -> (u64, [u8; KEPT_KEY]) {
        let mut first = [0; 4];
        first.copy_from_slice(&key[..4]);
        let bucket = u32::from_be_bytes(first) % self.buckets;
        let mut rest = [0; KEPT_KEY];
        rest.copy_from_slice(&key[4..4 + KEPT_KEY]);
        (HEADER + u64::from(bucket) * BUCKET as u64, rest)
    }

    /// Records `key`, kept until `keep_until` (unix ms): true when new, false when it is
    /// recorded already (a replay). One atomic step for every process and thread: of any
    /// number of concurrent records of one key exactly one is new. A record stays until
    /// pruned; only a full bucket reuses the slot of its oldest record, and only when that one
    /// ended before `now` (unix ms), as a prune at `now` would have dropped it. A full bucket
    /// without such a record is an error (nothing is recorded, the proof is refused).
    pub(crate) fn record(&self, key: &ReplayKey, keep_until: i64, now: i64) -> io::Result<bool> {
        let (offset, rest) = self.place(key);
        let mut bucket = [0; BUCKET];
        let f = self.lock()?;
        f.0.read_exact_at(&mut bucket, offset)?;
        let mut free = None;
        let mut oldest: Option<(usize, i64)> = None;
        for (i, slot) in bucket.chunks_exact(SLOT).enumerate() {
            let kept = kept_of(slot);
            if kept == 0 {
                free = free.or(Some(i));
            } else if slot[..KEPT_KEY] == rest {
                return Ok(false);
            } else if oldest.is_none_or(|(_, k)| kept < k) {
                oldest = Some((i, kept));
            }
        }
        let at = match (free, oldest) {
            (Some(i), _) => i,
            (None, Some((i, kept))) if ended(kept, now) => i,
            _ => return Err(io::Error::other("the DPoP replay table's bucket is full")),
        };
        let mut slot = [0; SLOT];
        slot[..KEPT_KEY].copy_from_slice(&rest);
        slot[KEPT_KEY..].copy_from_slice(&kept_ms(keep_until));
        f.0.write_all_at(&slot, offset + (at * SLOT) as u64)?;
        Ok(true)
    }

    /// Frees the slots of records kept until before `before` (unix ms), a few buckets per hold
    /// of the lock; how many went.
    pub(crate) fn prune(&self, before: i64) -> io::Result<usize> {
        let mut pruned = 0;
        let mut chunk = vec![0; BUCKET * PRUNE_BUCKETS as usize];
        let mut b = 0;
        while b < self.buckets {
            let n = PRUNE_BUCKETS.min(self.buckets - b);
            let buf = &mut chunk[..n as usize * BUCKET];
            let offset = HEADER + u64::from(b) * BUCKET as u64;
            let f = self.lock()?;
            f.0.read_exact_at(buf, offset)?;
            let mut changed = false;
            for slot in buf.chunks_exact_mut(SLOT) {
                if ended(kept_of(slot), before) {
                    slot.fill(0);
                    pruned += 1;
                    changed = true;
                }
            }
            if changed {
                f.0.write_all_at(buf, offset)?;
            }
            drop(f);
            b += n;
        }
        Ok(pruned)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::replay_key;

    fn temp() -> std::path::PathBuf {
        std::env::temp_dir().join(format!("pay_test_jti_{}", uuid::Uuid::new_v4().simple()))
    }

    /// A small table, so that buckets fill.
    fn small(path: &Path) -> ReplayTable {
        ReplayTable::open(path, 4).unwrap()
    }

    #[test]
    fn a_key_is_new_once_then_a_replay_until_pruned() {
        let path = temp();
        let t = small(&path);
        let (a, b) = (replay_key("h", "a"), replay_key("h", "b"));
        let first = [
            t.record(&a, 1_000, 0).unwrap(),
            t.record(&b, 9_000, 0).unwrap(),
        ];
        let again = [
            t.record(&a, 1_000, 0).unwrap(),
            t.record(&b, 9_000, 0).unwrap(),
        ];
        let pruned = t.prune(5_000).unwrap();
        let after = [
            t.record(&a, 1_000, 0).unwrap(),
            t.record(&b, 9_000, 0).unwrap(),
        ];
        // A record whose expiry passed long ago is still a replay until pruned.
        let late = t.record(&b, 9_000, 1_000_000).unwrap();
        let _ = std::fs::remove_file(&path);
        assert_eq!(first, [true, true]);
        assert_eq!(again, [false, false]);
        assert_eq!(pruned, 1);
        assert_eq!(
            after,
            [true, false],
            "a pruned key is new again, a kept one is not"
        );
        assert!(!late);
    }

    /// Another open of the file (another process, or another instance in this one) sees a
    /// record at once, and the file keeps the records when every holder closed it.
    #[test]
    fn records_are_shared_by_every_open_and_outlive_them() {
        let path = temp();
        let (one, two) = (small(&path), small(&path));
        let keys: Vec<_> = (0..40).map(|i| replay_key("h", &i.to_string())).collect();
        let firsts: Vec<bool> = keys
            .iter()
            .enumerate()
            .map(|(i, k)| [&one, &two][i % 2].record(k, 9_000, 0).unwrap())
            .collect();
        let seconds: Vec<bool> = keys
            .iter()
            .enumerate()
            .map(|(i, k)| [&two, &one][i % 2].record(k, 9_000, 0).unwrap())
            .collect();
        drop((one, two));
        let three = small(&path);
        let thirds: Vec<bool> = keys
            .iter()
            .map(|k| three.record(k, 9_000, 0).unwrap())
            .collect();
        let _ = std::fs::remove_file(&path);
        assert!(firsts.iter().all(|n| *n));
        assert!(seconds.iter().all(|n| !n));
        assert!(thirds.iter().all(|n| !n));
    }

    /// A file of another geometry is refused, not reinterpreted.
    #[test]
    fn a_table_of_another_size_is_refused() {
        let path = temp();
        drop(small(&path));
        let other = ReplayTable::open(&path, 8);
        let _ = std::fs::remove_file(&path);
        assert!(other.is_err());
    }

    /// A full bucket takes the slot of a record that ended before now, and refuses (records
    /// nothing) when every record in it is still live.
    #[test]
    fn a_full_bucket_reuses_only_an_ended_record() {
        let path = temp();
        let t = ReplayTable::open(&path, 1).unwrap();
        for i in 0..SLOTS {
            assert!(t
                .record(&replay_key("h", &i.to_string()), 10_000, 0)
                .unwrap());
        }
        let refused = t.record(&replay_key("h", "one more"), 10_000, 5_000);
        let reused = t
            .record(&replay_key("h", "one more"), 10_000, 20_000)
            .unwrap();
        let replay = t
            .record(&replay_key("h", "one more"), 10_000, 20_000)
            .unwrap();
        let _ = std::fs::remove_file(&path);
        assert!(refused.is_err());
        assert!(reused);
        assert!(!replay);
    }

    /// 32 threads over four opens of one file record 16 keys twice each, all at once: each key
    /// passes exactly once.
    #[test]
    fn concurrent_records_over_several_opens_pass_once_each() {
        let path = temp();
        let tables: Vec<ReplayTable> = (0..4).map(|_| small(&path)).collect();
        let barrier = std::sync::Barrier::new(32);
        let mut passed: Vec<usize> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..32)
                .map(|i| {
                    let (t, barrier) = (&tables[i % 4], &barrier);
                    s.spawn(move || {
                        barrier.wait();
                        let key = replay_key("h", &(i % 16).to_string());
                        t.record(&key, 9_000, 0).unwrap().then_some(i % 16)
                    })
                })
                .collect();
            handles
                .into_iter()
                .filter_map(|h| h.join().unwrap())
                .collect()
        });
        drop(tables);
        let _ = std::fs::remove_file(&path);
        passed.sort_unstable();
        assert_eq!(passed, (0..16).collect::<Vec<_>>());
    }

    /// The child's part of the test below (this test run again as another process, told so by
    /// its environment): records the keys named there and prints each outcome.
    fn child_records(path: &str, keys: &str) {
        let t = small(Path::new(path));
        for jti in keys.split(',') {
            let new = t.record(&replay_key("h", jti), 9_000, 0).unwrap();
            // After a newline: the harness prints the test's name without one.
            println!("\njti {jti} {}", if new { "new" } else { "replay" });
        }
    }

    /// Two processes on one file: a record made by this process is a replay in another one,
    /// and the other's records are replays here.
    #[test]
    fn a_record_is_a_replay_in_another_process() {
        if let (Ok(path), Ok(keys)) = (
            std::env::var("PAY_TEST_JTI_TABLE"),
            std::env::var("PAY_TEST_JTI_KEYS"),
        ) {
            return child_records(&path, &keys);
        }
        let path = temp();
        let t = small(&path);
        assert!(t.record(&replay_key("h", "mine"), 9_000, 0).unwrap());
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "replay::table::tests::a_record_is_a_replay_in_another_process",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("PAY_TEST_JTI_TABLE", &path)
            .env("PAY_TEST_JTI_KEYS", "mine,theirs,theirs")
            .output()
            .unwrap();
        let here = t.record(&replay_key("h", "theirs"), 9_000, 0).unwrap();
        let _ = std::fs::remove_file(&path);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{stdout}");
        let lines: Vec<&str> = stdout.lines().filter(|l| l.starts_with("jti ")).collect();
        assert_eq!(
            lines,
            ["jti mine replay", "jti theirs new", "jti theirs replay"],
            "{stdout}"
        );
        assert!(!here, "the other process's record is a replay here");
    }
}
