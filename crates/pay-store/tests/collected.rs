//! The daily roll-up of completed sessions (`collected_days`) on both backends, beyond the
//! conformance cases: the migration's backfill of sessions completed before it, and completions
//! of one company, day and asset written concurrently.

use std::sync::{Arc, Barrier};
use std::thread;

use diesel::{Connection, PgConnection, SqliteConnection};
use diesel_migrations::{embed_migrations, EmbeddedMigrations, MigrationHarness};
use pay_domain::checkout::machine::SessionStatus;
use pay_domain::checkout::{CheckoutStore, PaymentSession, DAY_MILLIS};
use pay_domain::kernel::amount::Amount;
use pay_store::DieselStore;

#[macro_use]
mod common;
use common::*;
use pay_domain::testing::conformance::checkout::values::link;
use pay_domain::testing::conformance::checkout::values::*;

const MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../migrations");
/// The step that creates and backfills `collected_days`.
const ROLL_UP: &str = "20261128200000";

both_backends!(
    the_migration_backfills_completed_sessions,
    concurrent_completions_all_count,
);

/// Reverts the migrations down to and including the roll-up's, then runs them again: its
/// `up.sql` backfills from the sessions already there.
fn redo_roll_up<C: MigrationHarness<B>, B: diesel::backend::Backend>(c: &mut C) {
    loop {
        let reverted = c.revert_last_migration(MIGRATIONS).unwrap();
        if reverted.to_string() == ROLL_UP {
            break;
        }
    }
    c.run_pending_migrations(MIGRATIONS).unwrap();
}

/// Sessions completed (inserted complete, or completed by an update), some moved on or
/// reversed, in amounts of every scale, then the roll-up dropped and backfilled by the
/// migration: the same figures, at the same shown scale.
fn the_migration_backfills_completed_sessions(store: &DieselStore, url: &str) {
    let c = company(store);
    let other = company(store);
    let l = link(store, c);
    let theirs = link(store, other);
    let day = T0.div_euclid(DAY_MILLIS);
    let mut n = 0;
    let mut made = |l: &_, status, asset: &str, amount: &str, at: i64| {
        n += 1;
        let s = PaymentSession {
            invoice_asset: asset.into(),
            invoice_amount: Amount::parse(amount, 18).unwrap(),
            updated_at: ts(at),
            ..session(l, status, T0 + n, T0 + 60_000)
        };
        applied(store.write_link_event(&insert(l, &s), &never).unwrap());
        s
    };
    made(&l, SessionStatus::Complete, "USD", "12.50", T0);
    made(&l, SessionStatus::Complete, "USD", "0.05", T0 + 1);
    made(
        &l,
        SessionStatus::Complete,
        "USD",
        "7",
        (day + 1) * DAY_MILLIS,
    );
    made(
        &l,
        SessionStatus::Complete,
        "BTC",
        "0.000000000000000001",
        T0 + 2,
    );
    made(
        &l,
        SessionStatus::Complete,
        "BTC",
        "999999999999999999.999999999999999999",
        T0 + 3,
    );
    made(&l, SessionStatus::Expired, "USD", "1000", T0 + 4);
    made(&theirs, SessionStatus::Complete, "USD", "3.3", T0 + 5);
    let open = made(&l, SessionStatus::Processing, "EUR", "40.1", T0 + 6);
    let done = moved(&open, SessionStatus::Complete, T0 + 7);
    applied(
        store
            .write_link_event(&update(&l, &open, &done), &never)
            .unwrap(),
    );
    let reversed = moved(&done, SessionStatus::RefundPending, T0 + 8);
    let again = made(&l, SessionStatus::Processing, "EUR", "0.9", T0 + 9);
    applied(
        store
            .write_link_event(&update(&l, &done, &reversed), &never)
            .unwrap(),
    );
    applied(
        store
            .write_link_event(
                &update(&l, &again, &moved(&again, SessionStatus::Complete, T0 + 10)),
                &never,
            )
            .unwrap(),
    );

    let before = [c, other].map(|x| store.company_collected(x, 0).unwrap());
    assert_eq!(before[0].len(), 4, "{before:?}");
    let shown = |days: &[pay_domain::checkout::CollectedDay]| {
        days.iter()
            .map(|d| format!("{} {} {} {}", d.day, d.asset, d.count, d.amount))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        shown(&before[0]),
        [
            format!("{day} BTC 2 1000000000000000000.000000000000000000"),
            format!("{day} EUR 1 0.9"),
            format!("{day} USD 2 12.55"),
            format!("{} USD 1 7", day + 1),
        ]
    );

    match url.strip_prefix("sqlite://") {
        Some(path) => redo_roll_up(&mut SqliteConnection::establish(path).unwrap()),
        None => redo_roll_up(&mut PgConnection::establish(url).unwrap()),
    }
    let after = [c, other].map(|x| store.company_collected(x, 0).unwrap());
    assert_eq!(after, before);
    assert_eq!(shown(&after[0]), shown(&before[0]));
}

/// Sessions of one company, day and asset completed at once from several threads: every one
/// counts, and the amounts add up exactly (PostgreSQL: one atomic upsert per completion, no
/// update lost; SQLite: one writer).
fn concurrent_completions_all_count(store: &DieselStore, _url: &str) {
    const THREADS: usize = 8;
    const EACH: usize = 5;
    let c = company(store);
    let l = link(store, c);
    let mut open = Vec::new();
    for i in 0..THREADS * EACH {
        let s = PaymentSession {
            invoice_amount: Amount::parse("0.01", 18).unwrap(),
            ..session(&l, SessionStatus::Processing, T0 + i as i64, T0 + 60_000)
        };
        applied(store.write_link_event(&insert(&l, &s), &never).unwrap());
        open.push(s);
    }
    let store = Arc::new(store.clone());
    let start = Arc::new(Barrier::new(THREADS));
    let threads: Vec<_> = open
        .chunks(EACH)
        .map(|mine| {
            let (store, start, l) = (store.clone(), start.clone(), l.clone());
            let mine = mine.to_vec();
            thread::spawn(move || {
                start.wait();
                for s in &mine {
                    let done = moved(s, SessionStatus::Complete, T0 + 100);
                    applied(
                        store
                            .write_link_event(&update(&l, s, &done), &never)
                            .unwrap(),
                    );
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let got = store.company_collected(c, 0).unwrap();
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].count, (THREADS * EACH) as u64);
    assert_eq!(got[0].amount.to_string(), "0.40");
}
