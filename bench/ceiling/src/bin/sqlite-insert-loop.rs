//! The SQLite ceiling: one writer inserting link-sized rows, one autocommit statement each, with
//! the pragmas pay-server uses. `sqlite-insert-loop <db file> <seconds>` prints inserts/s.

use std::time::{Duration, Instant};

use diesel::connection::SimpleConnection;
use diesel::sql_types::{BigInt, Text};
use diesel::{Connection, RunQueryDsl, SqliteConnection};

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .unwrap_or_else(|| "/tmp/pay-bench-loop.db".into());
    let secs: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(10);
    let _ = std::fs::remove_file(&path);
    let mut conn = SqliteConnection::establish(&path).expect("open sqlite");
    conn.batch_execute(
        "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA busy_timeout=5000;
         CREATE TABLE rows (id TEXT PRIMARY KEY, uid TEXT NOT NULL UNIQUE, company_id TEXT NOT NULL,
           status TEXT NOT NULL, payload TEXT NOT NULL, created_at BIGINT NOT NULL);
         CREATE INDEX rows_list ON rows (company_id, created_at DESC, id DESC);",
    )
    .expect("schema");
    // A payload of the size pay-server stores for a typical link (about 600 bytes).
    let payload = serde_json::json!({
        "title": "Order 42", "amount": "12.50", "currency": "USDC",
        "asset": "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
        "expirationTime": "24h", "runtimeMode": "merchant_target_net_v2", "billingVersion": "v2",
        "merchantName": "Bench Co", "merchantPaymentLinkTheme": "system",
        "metadata": {"note": "x".repeat(300)}
    })
    .to_string();
    let start = Instant::now();
    let mut n: i64 = 0;
    while start.elapsed() < Duration::from_secs(secs) {
        diesel::sql_query(
            "INSERT INTO rows (id, uid, company_id, status, payload, created_at) VALUES (?, ?, 'c', 'active', ?, ?)",
        )
        .bind::<Text, _>(format!("{n:036}"))
        .bind::<Text, _>(format!("{n:022}"))
        .bind::<Text, _>(&payload)
        .bind::<BigInt, _>(n)
        .execute(&mut conn)
        .expect("insert");
        n += 1;
    }
    let rate = n as f64 / start.elapsed().as_secs_f64();
    println!("{rate:.0}");
}
