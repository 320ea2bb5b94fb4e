//! The SQLite ceiling of the link detail route: the route's own three queries (the link by uid
//! and company, its newest session, its timeline) run back to back on one connection per
//! thread, each statement prepared once and reused (rusqlite's statement cache), every column of every row read, with the
//! pragmas pay-server uses. No HTTP, no pool, no JSON: what the database alone allows.
//!
//! `sqlite-read-loop <db file> <seconds> <threads> <link uid> <company id>` prints route
//! equivalents (all three queries) per second, summed over the threads.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rusqlite::types::ValueRef;
use rusqlite::{params, Connection};

/// The queries as diesel sends them for `GET /api/partner/v1/pay/payment-links/{uid}`.
const LINK: &str = "SELECT `payment_links`.`id`, `payment_links`.`uid`, `payment_links`.`company_id`, \
    `payment_links`.`status`, `payment_links`.`payload`, `payment_links`.`created_at`, \
    `payment_links`.`updated_at`, `payment_links`.`expires_at`, `payment_links`.`created_by_kind`, \
    `payment_links`.`created_by_id`, `payment_links`.`grant_id`, `payment_links`.`grant_subscription_id` \
    FROM `payment_links` WHERE ((`payment_links`.`uid` = ?) AND (`payment_links`.`company_id` = ?)) LIMIT ?";
const SESSION: &str = "SELECT `payment_sessions`.`id`, `payment_sessions`.`link_id`, \
    `payment_sessions`.`company_id`, `payment_sessions`.`status`, `payment_sessions`.`previous_status`, \
    `payment_sessions`.`version`, `payment_sessions`.`invoice_asset`, `payment_sessions`.`invoice_amount`, \
    `payment_sessions`.`selected_sell_asset`, `payment_sessions`.`required_sell_amount`, \
    `payment_sessions`.`expected_buy_amount`, `payment_sessions`.`destination_address`, \
    `payment_sessions`.`deposit_address`, `payment_sessions`.`channel_id`, \
    `payment_sessions`.`composite_channel_id`, `payment_sessions`.`source_chain`, \
    `payment_sessions`.`expires_at`, `payment_sessions`.`settlement`, `payment_sessions`.`error_message`, \
    `payment_sessions`.`created_at`, `payment_sessions`.`updated_at` FROM `payment_sessions` \
    WHERE (`payment_sessions`.`link_id` = ?) \
    ORDER BY `payment_sessions`.`created_at` DESC, `payment_sessions`.`id` DESC LIMIT ?";
const TIMELINE: &str = "SELECT `timeline_events`.`id`, `timeline_events`.`link_id`, \
    `timeline_events`.`session_id`, `timeline_events`.`type`, `timeline_events`.`created_at`, \
    `timeline_events`.`data` FROM `timeline_events` WHERE (`timeline_events`.`link_id` = ?) \
    ORDER BY `timeline_events`.`created_at` ASC, `timeline_events`.`id` ASC";

/// pay-server's connection pragmas (`pay-store`'s `conn.rs`), page cache included.
const PRAGMAS: &str = "PRAGMA busy_timeout = 5000; PRAGMA journal_mode = WAL; \
    PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA cache_size = -512;";

/// Reads every column of every row the way a row decoder does (text and blobs copied out,
/// integers read); returns the rows and the first column of the first row.
fn read_all(
    stmt: &mut rusqlite::CachedStatement<'_>,
    params: impl rusqlite::Params,
) -> (usize, String) {
    let n = stmt.column_count();
    let mut rows = stmt.query(params).expect("query");
    let (mut count, mut first) = (0, String::new());
    while let Some(row) = rows.next().expect("step") {
        for col in 0..n {
            match row.get_ref(col).expect("column") {
                ValueRef::Integer(i) => {
                    std::hint::black_box(i);
                }
                ValueRef::Text(t) | ValueRef::Blob(t) => {
                    let owned = t.to_vec();
                    if count == 0 && col == 0 {
                        first = String::from_utf8(owned).expect("text");
                    } else {
                        std::hint::black_box(owned);
                    }
                }
                other => {
                    std::hint::black_box(other);
                }
            }
        }
        count += 1;
    }
    (count, first)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [path, secs, threads, uid, company] = &args[..] else {
        eprintln!("usage: sqlite-read-loop <db file> <seconds> <threads> <link uid> <company id>");
        std::process::exit(2);
    };
    let secs: u64 = secs.parse().expect("seconds");
    let threads: usize = threads.parse().expect("threads");
    let stop = Arc::new(AtomicBool::new(false));
    let total = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let workers: Vec<_> = (0..threads)
        .map(|_| {
            let (path, uid, company) = (path.clone(), uid.clone(), company.clone());
            let (stop, total) = (stop.clone(), total.clone());
            std::thread::spawn(move || {
                let conn = Connection::open(&path).expect("open");
                conn.execute_batch(PRAGMAS).expect("pragmas");
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    // Cached: prepared on the first pass, reused after.
                    let mut link = conn.prepare_cached(LINK).expect("prepare");
                    let (found, id) = read_all(&mut link, params![uid, company, 1]);
                    assert_eq!(found, 1, "the link {uid} of {company} is not in {path}");
                    let mut session = conn.prepare_cached(SESSION).expect("prepare");
                    std::hint::black_box(read_all(&mut session, params![id, 1]));
                    let mut timeline = conn.prepare_cached(TIMELINE).expect("prepare");
                    std::hint::black_box(read_all(&mut timeline, params![id]));
                    n += 1;
                }
                total.fetch_add(n, Ordering::Relaxed);
            })
        })
        .collect();
    std::thread::sleep(Duration::from_secs(secs));
    stop.store(true, Ordering::Relaxed);
    for w in workers {
        w.join().expect("worker");
    }
    let rate = total.load(Ordering::Relaxed) as f64 / start.elapsed().as_secs_f64();
    println!("{rate:.0}");
}

#[cfg(test)]
mod tests {
    use rusqlite::{Connection, StatementStatus};

    /// The SQLite this workspace builds (`.cargo/config.toml`: `SQLITE_ENABLE_QPSG`) keeps a
    /// cached statement with a bound `LIMIT` prepared: binding the value again, even the same
    /// one, does not make the next step prepare it anew (SQLite 3.50 without the option does,
    /// which is how both this loop and the server's reads with `.first()` lost their statement
    /// caches). The server's diesel and this rusqlite link the same `libsqlite3-sys` build.
    #[test]
    fn a_bound_limit_does_not_prepare_the_statement_again() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1), (2);")
            .unwrap();
        let mut stmt = conn
            .prepare_cached("SELECT x FROM t WHERE x > ? ORDER BY x LIMIT ?")
            .unwrap();
        for _ in 0..3 {
            let got: i64 = stmt.query_row((0, 1), |r| r.get(0)).unwrap();
            assert_eq!(got, 1);
        }
        assert_eq!(stmt.get_status(StatementStatus::RePrepare), 0);
    }
}
