//! A company's sessions in one status changed since a time (the dashboard's overview).

use super::*;
use crate::checkout::{collect_days, CollectedDay, DAY_MILLIS};
use crate::kernel::amount::Amount;

pub fn company_sessions_in_status_newest_change_first<S: Ports>(store: &S) {
    let c = company(store);
    let l = link(store, c);
    let other_company = company(store);
    let theirs = link(store, other_company);
    let at = |s: PaymentSession, updated: i64| PaymentSession {
        updated_at: ts(updated),
        ..s
    };
    let old = at(
        session(&l, SessionStatus::Complete, T0, T0 + 60_000),
        T0 + 5,
    );
    let newer = at(
        session(&l, SessionStatus::Complete, T0 + 1, T0 + 60_000),
        T0 + 20,
    );
    let newest = at(
        session(&l, SessionStatus::Complete, T0 + 2, T0 + 60_000),
        T0 + 30,
    );
    let underpaid = at(
        session(&l, SessionStatus::Underpaid, T0 + 3, T0 + 60_000),
        T0 + 40,
    );
    let foreign = at(
        session(&theirs, SessionStatus::Complete, T0 + 4, T0 + 60_000),
        T0 + 50,
    );
    for s in [&old, &newer, &newest, &underpaid] {
        applied(store.write_link_event(&insert(&l, s), &never).unwrap());
    }
    applied(
        store
            .write_link_event(&insert(&theirs, &foreign), &never)
            .unwrap(),
    );

    let done = |since: i64, limit: usize| {
        store
            .company_sessions_in(c, SessionStatus::Complete, ts(since), limit)
            .unwrap()
            .into_iter()
            .map(|s| s.id)
            .collect::<Vec<_>>()
    };
    // Newest change first, `since` inclusive, only this company's, only this status.
    assert_eq!(done(T0, 10), vec![newest.id, newer.id, old.id]);
    assert_eq!(done(T0 + 20, 10), vec![newest.id, newer.id]);
    assert_eq!(done(T0 + 31, 10), Vec::<PaymentSessionId>::new());
    assert_eq!(done(T0, 2), vec![newest.id, newer.id]);
    assert_eq!(done(T0, 0), Vec::<PaymentSessionId>::new());
    let short = store
        .company_sessions_in(c, SessionStatus::Underpaid, ts(0), 10)
        .unwrap();
    assert_eq!(short, vec![underpaid]);
    let theirs_done = store
        .company_sessions_in(other_company, SessionStatus::Complete, ts(T0), 10)
        .unwrap();
    assert_eq!(theirs_done, vec![foreign]);
}

/// `company_collected`: the company's completed sessions from a UTC day on, added up by day of
/// their last change and invoice asset, exactly (decimals of any scale), day then asset.
pub fn company_collected_adds_up_by_day_and_asset<S: Ports>(store: &S) {
    let c = company(store);
    let l = link(store, c);
    let other_company = company(store);
    let theirs = link(store, other_company);
    // T0's day, and the next; a session changed on the last millisecond of a day counts there.
    let day = T0.div_euclid(DAY_MILLIS);
    let next = (day + 1) * DAY_MILLIS;
    let mut created = T0;
    let mut made = |l: &PaymentLink, status, asset: &str, amount: &str, updated: i64| {
        created += 1;
        let s = PaymentSession {
            updated_at: ts(updated),
            invoice_asset: asset.into(),
            invoice_amount: Amount::parse(amount, 18).expect("a literal amount"),
            ..session(l, status, created, T0 + 60_000)
        };
        applied(store.write_link_event(&insert(l, &s), &never).unwrap());
    };
    made(&l, SessionStatus::Complete, "USD", "0.1", T0 + 5);
    made(&l, SessionStatus::Complete, "USD", "0.2", next - 1);
    made(&l, SessionStatus::Complete, "EUR", "12.50", T0 + 6);
    made(
        &l,
        SessionStatus::Complete,
        "USD",
        "1.000000000000000001",
        next,
    );
    made(&l, SessionStatus::Complete, "USD", "7", next + 3);
    // Every digit an amount may carry, twice: the sums carry across the stored digit groups.
    for _ in 0..2 {
        made(
            &l,
            SessionStatus::Complete,
            "BTC",
            "999999999999999999.999999999999999999",
            next + 4,
        );
    }
    // Not counted: the day before, another status, another company.
    made(
        &l,
        SessionStatus::Complete,
        "USD",
        "100",
        day * DAY_MILLIS - 1,
    );
    made(&l, SessionStatus::Underpaid, "USD", "100", T0 + 7);
    made(&l, SessionStatus::Expired, "EUR", "100", T0 + 8);
    made(&theirs, SessionStatus::Complete, "USD", "100", T0 + 8);

    let got = store.company_collected(c, day).unwrap();
    let most = Decimal::parse("999999999999999999.999999999999999999").unwrap();
    assert_eq!(
        got,
        vec![
            collected(day, "EUR", 1, "12.50"),
            collected(day, "USD", 2, "0.3"),
            CollectedDay {
                amount: most.checked_add(most).unwrap(),
                ..collected(day + 1, "BTC", 2, "0")
            },
            collected(day + 1, "USD", 2, "8.000000000000000001"),
        ]
    );
    // The shown scale is the most any amount added carried.
    assert_eq!(got[0].amount.to_string(), "12.50");
    assert_eq!(
        store.company_collected(c, day + 1).unwrap(),
        got[2..].to_vec()
    );
    assert_eq!(store.company_collected(c, day + 2).unwrap(), vec![]);
    assert_eq!(
        store.company_collected(other_company, day).unwrap(),
        vec![collected(day, "USD", 1, "100")]
    );
}

fn collected(day: i64, asset: &str, count: u64, amount: &str) -> CollectedDay {
    CollectedDay {
        day,
        asset: asset.into(),
        count,
        amount: Decimal::parse(amount).unwrap(),
    }
}

/// What the company's sessions say they collected, read from the sessions themselves (the
/// port's default): what any store's `company_collected` must answer.
fn recounted<S: Ports>(store: &S, c: CompanyId, first_day: i64) -> Vec<CollectedDay> {
    let sessions = store
        .company_sessions_in(
            c,
            SessionStatus::Complete,
            ts(first_day * DAY_MILLIS),
            usize::MAX,
        )
        .unwrap();
    collect_days(sessions.iter().map(|s| {
        (
            s.updated_at,
            s.invoice_asset.as_str(),
            s.invoice_amount.value(),
        )
    }))
    .unwrap()
}

/// `company_collected` follows every change of a session, written by `write_link_event`: a
/// session completing by an update (a settlement, a manual resolution), one inserted complete,
/// a completed one changed again on a later day or in another asset, one leaving `complete`
/// (a reversal), and a write refused as stale (which changes nothing). After each write the
/// answer is the sessions' own sum, so a store that keeps a roll-up and misses a path fails
/// here.
pub fn company_collected_follows_every_session_change<S: Ports>(store: &S) {
    let c = company(store);
    let l = link(store, c);
    let day = T0.div_euclid(DAY_MILLIS);
    let check = |step: &str, want: Vec<CollectedDay>| {
        let got = store.company_collected(c, day - 1).unwrap();
        assert_eq!(
            got,
            recounted(store, c, day - 1),
            "{step}: the sessions' own sum"
        );
        assert_eq!(got, want, "{step}");
    };
    let with = |s: PaymentSession, asset: &str, amount: &str| PaymentSession {
        invoice_asset: asset.into(),
        invoice_amount: Amount::parse(amount, 18).expect("a literal amount"),
        ..s
    };
    let a0 = with(
        session(&l, SessionStatus::Processing, T0, T0 + 60_000),
        "USD",
        "10.25",
    );
    let b0 = with(
        session(&l, SessionStatus::Underpaid, T0 + 1, T0 + 60_000),
        "USD",
        "4.5",
    );
    for s in [&a0, &b0] {
        applied(store.write_link_event(&insert(&l, s), &never).unwrap());
    }
    check("nothing completed", vec![]);

    // Settled: processing -> complete.
    let a1 = moved(&a0, SessionStatus::Complete, T0 + 10);
    applied(
        store
            .write_link_event(&update(&l, &a0, &a1), &never)
            .unwrap(),
    );
    check("settled", vec![collected(day, "USD", 1, "10.25")]);

    // Resolved by hand: underpaid -> complete.
    let b1 = moved(&b0, SessionStatus::Complete, T0 + 11);
    applied(
        store
            .write_link_event(&update(&l, &b0, &b1), &never)
            .unwrap(),
    );
    check("resolved", vec![collected(day, "USD", 2, "14.75")]);

    // A stale write changes nothing.
    let lost = moved(&b0, SessionStatus::Complete, T0 + 12);
    assert_eq!(
        store
            .write_link_event(&update(&l, &b0, &lost), &never)
            .unwrap(),
        WriteOutcome::Stale
    );
    check("stale", vec![collected(day, "USD", 2, "14.75")]);

    // Inserted complete.
    let c0 = with(
        session(&l, SessionStatus::Complete, T0 + 2, T0 + 60_000),
        "EUR",
        "3",
    );
    applied(store.write_link_event(&insert(&l, &c0), &never).unwrap());
    check(
        "inserted complete",
        vec![
            collected(day, "EUR", 1, "3"),
            collected(day, "USD", 2, "14.75"),
        ],
    );

    // A completed session written again on the next day, in another asset and amount: it
    // leaves its old day and asset and counts on the new ones.
    let next = (day + 1) * DAY_MILLIS;
    let a2 = with(
        moved(&a1, SessionStatus::Complete, next + 5),
        "EUR",
        "0.000000000000000001",
    );
    applied(
        store
            .write_link_event(&update(&l, &a1, &a2), &never)
            .unwrap(),
    );
    check(
        "moved to the next day",
        vec![
            collected(day, "EUR", 1, "3"),
            collected(day, "USD", 1, "4.5"),
            collected(day + 1, "EUR", 1, "0.000000000000000001"),
        ],
    );

    // Reversed: complete -> another status. The day's figures go back to what remains.
    let b2 = moved(&b1, SessionStatus::RefundPending, next + 6);
    applied(
        store
            .write_link_event(&update(&l, &b1, &b2), &never)
            .unwrap(),
    );
    let c1 = moved(&c0, SessionStatus::Failed, T0 + 20);
    applied(
        store
            .write_link_event(&update(&l, &c0, &c1), &never)
            .unwrap(),
    );
    check(
        "reversed",
        vec![collected(day + 1, "EUR", 1, "0.000000000000000001")],
    );
    // And completed again.
    let b3 = moved(&b2, SessionStatus::Complete, next + 7);
    applied(
        store
            .write_link_event(&update(&l, &b2, &b3), &never)
            .unwrap(),
    );
    check(
        "completed again",
        vec![
            collected(day + 1, "EUR", 1, "0.000000000000000001"),
            collected(day + 1, "USD", 1, "4.5"),
        ],
    );
}
