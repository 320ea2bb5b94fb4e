//! The billing scheduler's sweep over a large table, measured side by side with its ceiling in
//! one run: PostgreSQL holds `--rows` subscriptions (100,000) of which 1 % are due. Per round,
//! the ceiling is a bare SQL query selecting the same due rows (every column, in the claim's
//! order); the sweep is the scheduler's claim of every due row, in its batches (64, the server's) with their
//! leases (`claim_due_subscriptions`, `FOR UPDATE SKIP LOCKED`), the part of a sweep that would
//! grow with the table if it scanned it. Reported: time per sweep, the ratio to the bare query
//! (target <= 5x), and what PostgreSQL counted for each (statements as transactions, rows read,
//! sequential scans of `subscriptions`), plus the EXPLAIN of the claim's select.
//!
//! `cargo bench -p pay-server --bench billing [-- --rounds 3 --rows 100000 --batch 64]`; PostgreSQL from
//! `PAY_TEST_POSTGRES_URL` (skipped with a line when unset; a failure when
//! `PAY_REQUIRE_ALL_TESTS=1`). Needs `psql`.
//!
//! `-- --smoke` (CI, with `cargo bench --profile dev`): one round over 2,000 rows, to show the
//! benchmark still works; its figures mean nothing. Every run checks that it measured: each
//! sweep claimed exactly the due rows, the bare query returned them all, no time is zero, and
//! the sweep made no sequential scan of `subscriptions`; a failed check panics (non-zero exit).

use std::process::Command;
use std::time::Instant;

use diesel::pg::PgConnection;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};
use pay_domain::kernel::secret::Secret;
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::subscriptions::ports::SubscriptionStore;
use pay_domain::subscriptions::CreateSubscriptionInput;
use pay_server::{build_pay, open_store, Config};
use pay_store::testing::TestDb;

#[path = "support/args.rs"]
mod args;
use args::{arg, flag};

fn psql(url: &str, sql: &str) -> String {
    let out = Command::new("psql")
        .args([url, "-v", "ON_ERROR_STOP=1", "-Atc", sql])
        .output()
        .expect("psql (postgresql-client) must be installed");
    assert!(
        out.status.success(),
        "psql: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[derive(QueryableByName)]
struct Json {
    #[diesel(sql_type = Text)]
    r: String,
}

#[derive(QueryableByName, Debug, Clone, Copy, Default)]
struct Counters {
    #[diesel(sql_type = BigInt)]
    xacts: i64,
    #[diesel(sql_type = BigInt)]
    rows_read: i64,
    #[diesel(sql_type = BigInt)]
    seq_scans: i64,
}

/// What PostgreSQL counted so far for this database (after the backends flushed).
fn counters(conn: &mut PgConnection) -> Counters {
    // Backends report at transaction end, at most once a second when busy.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    diesel::sql_query("SELECT pg_stat_clear_snapshot()")
        .execute(conn)
        .unwrap();
    diesel::sql_query(
        "SELECT (d.xact_commit + d.xact_rollback)::bigint AS xacts, \
                (d.tup_returned + d.tup_fetched)::bigint AS rows_read, \
                t.seq_scan::bigint AS seq_scans \
         FROM pg_stat_database d, pg_stat_user_tables t \
         WHERE d.datname = current_database() AND t.relname = 'subscriptions'",
    )
    .get_result(conn)
    .unwrap()
}

fn minus(a: Counters, b: Counters) -> Counters {
    Counters {
        xacts: a.xacts - b.xacts,
        rows_read: a.rows_read - b.rows_read,
        seq_scans: a.seq_scans - b.seq_scans,
    }
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
    xs[xs.len() / 2]
}

fn main() {
    let smoke = flag("--smoke");
    let rounds = arg("--rounds", if smoke { 1 } else { 3 });
    let rows = arg("--rows", if smoke { 2_000 } else { 100_000 });
    // The server's batch unless told otherwise (to see what the batch size does).
    let batch = arg("--batch", pay_server::billing::BATCH);
    let Some(db) = TestDb::postgres() else {
        println!("billing sweep: skipped (no PAY_TEST_POSTGRES_URL)");
        return;
    };
    let config = Config::for_database(&db.url);
    let setup = open_store(&config).unwrap();
    let pay = build_pay(&config, setup.clone()).unwrap();
    let b = pay
        .tenancy()
        .bootstrap(
            "Bench",
            "bench@bench.example",
            &Secret::new("bench password 123"),
        )
        .unwrap();
    let key = pay
        .tenancy()
        .authenticate_api_key(
            Some(b.key_id.as_str()),
            b.key_secret.as_ref().map(Secret::expose),
        )
        .unwrap();
    let template = pay
        .subscriptions()
        .create_subscription(
            &key,
            CreateSubscriptionInput {
                customer_email: "c@shop.example".into(),
                label: "Seat".into(),
                amount_usd: "5".into(),
                cadence: "monthly".into(),
                timezone: "UTC".into(),
                ..Default::default()
            },
        )
        .unwrap()
        .subscription;
    // The set-up's connections close here: a backend reports its table counters when it
    // ends, but an idle one only after up to 10 s, and the sweep's counters must not catch
    // the set-up's reads of the then one-row table. The sweep gets a pool of its own.
    drop(pay);
    drop(setup);
    let store = open_store(&config).unwrap();

    // The table: `rows` subscriptions, every 100th due a minute ago, the others in 30 days.
    let now = Timestamp::from_datetime(time::OffsetDateTime::now_utc()).unix_millis();
    let (due_at, later) = (now - 60_000, now + 30 * 86_400_000);
    let seeded = Instant::now();
    let cols = "company_id, contact_id, status, customer_email, label, description, amount_usd, \
                settlement_asset, cadence, interval_count, start_at, zone, metadata, \
                created_by_kind, created_by_id, grant_id, created_at, updated_at, next_sequence";
    psql(
        &db.url,
        &format!(
            "UPDATE subscriptions SET next_run_at = {later}; \
             INSERT INTO subscriptions (id, uid, {cols}, next_run_at, lease_until) \
             SELECT md5(g::text || ':id')::uuid::text, 'sub_' || substr(md5(g::text), 1, 24), \
                    {cols}, CASE WHEN g % 100 = 1 THEN {due_at} ELSE {later} END, NULL \
             FROM subscriptions t, generate_series(1, {}) g WHERE t.id = '{}'; \
             ANALYZE subscriptions;",
            rows - 1,
            template.id
        ),
    );
    let due: usize = psql(
        &db.url,
        &format!("SELECT count(*) FROM subscriptions WHERE next_run_at <= {now}"),
    )
    .trim()
    .parse()
    .unwrap();
    assert_eq!(due, rows / 100, "1 % due");
    println!(
        "seeded {rows} subscriptions ({due} due) in {:.1} s",
        seeded.elapsed().as_secs_f64()
    );
    let plan = psql(
        &db.url,
        &format!(
            "EXPLAIN SELECT * FROM subscriptions WHERE next_run_at <= {now} \
             AND (lease_until IS NULL OR lease_until <= {now}) \
             ORDER BY next_run_at, id LIMIT {batch} FOR UPDATE SKIP LOCKED"
        ),
    );
    println!("EXPLAIN of the claim's select:\n{plan}");
    assert!(
        plan.contains("subscriptions_due") && !plan.contains("Seq Scan"),
        "the claim reads the due index"
    );

    let mut conn = PgConnection::establish(&db.url).unwrap();
    let bare_sql = "SELECT row_to_json(s)::text AS r FROM (SELECT * FROM subscriptions \
                    WHERE next_run_at <= $1 ORDER BY next_run_at, id) s";
    let (mut ratios, mut sweeps, mut bares) = (Vec::new(), Vec::new(), Vec::new());
    for round in 1..=rounds {
        let before = counters(&mut conn);
        let t = Instant::now();
        let got: Vec<Json> = diesel::sql_query(bare_sql)
            .bind::<BigInt, _>(now)
            .load(&mut conn)
            .unwrap();
        let bare = t.elapsed().as_secs_f64();
        assert_eq!(got.len(), due, "the bare query returns every due row");
        assert!(got.iter().all(|j| j.r.starts_with('{')));
        let mid = counters(&mut conn);

        let real = Timestamp::from_datetime(time::OffsetDateTime::now_utc());
        let lease = real.plus(time::Duration::minutes(2));
        let t = Instant::now();
        let (mut claimed, mut calls) = (0, 0);
        loop {
            calls += 1;
            let got = store
                .claim_due_subscriptions(real, lease, batch, None)
                .unwrap();
            claimed += got.len();
            if got.len() < batch {
                break;
            }
        }
        let sweep = t.elapsed().as_secs_f64();
        assert_eq!(claimed, due, "the sweep claims every due row once");
        let after = counters(&mut conn);
        let (b_cost, s_cost) = (minus(mid, before), minus(after, mid));
        // At 100,000 rows the planner must keep to the index. The smoke run's 2,000 rows fit in
        // a few pages, where PostgreSQL may rightly scan the table, so there the count is
        // shown, not held to zero.
        if smoke {
            println!(
                "seq scans of subscriptions during the sweep: {}",
                s_cost.seq_scans
            );
        } else {
            assert_eq!(s_cost.seq_scans, 0, "the sweep never scans the table");
        }
        assert!(bare > 0.0 && sweep > 0.0);
        // Leases off again for the next round.
        diesel::sql_query(
            "UPDATE subscriptions SET lease_until = NULL WHERE lease_until IS NOT NULL",
        )
        .execute(&mut conn)
        .unwrap();
        let ratio = sweep / bare;
        println!(
            "round {round}: bare {:.2} ms ({} xacts, {} rows read, {} seq scans) | \
             sweep {:.2} ms ({} xacts, {} rows read, {} seq scans; {} claims of {batch}) | \
             ratio {ratio:.2}x",
            bare * 1e3,
            b_cost.xacts,
            b_cost.rows_read,
            b_cost.seq_scans,
            sweep * 1e3,
            s_cost.xacts,
            s_cost.rows_read,
            s_cost.seq_scans,
            calls,
        );
        ratios.push(ratio);
        sweeps.push(sweep * 1e3);
        bares.push(bare * 1e3);
    }
    let ratio = median(ratios);
    println!(
        "median over {rounds} rounds ({rows} rows, {due} due): bare {:.2} ms, sweep {:.2} ms, \
         ratio {ratio:.2}x (target <= 5x)",
        median(bares),
        median(sweeps)
    );
    if smoke {
        println!("smoke run ok: the sweep claimed every due row, the claim's select by the index");
    }
}
