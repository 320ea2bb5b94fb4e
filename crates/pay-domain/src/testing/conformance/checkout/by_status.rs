//! A company's sessions in one status changed since a time (the dashboard's overview).

use super::*;

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

/// `company_collected`: the company's sessions in one status since a time, added up by UTC day
/// of their last change and invoice asset, exactly (decimals of any scale), day then asset.
pub fn company_collected_adds_up_by_day_and_asset<S: Ports>(store: &S) {
    use crate::checkout::{CollectedDay, DAY_MILLIS};
    use crate::kernel::amount::Amount;
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
    // Not counted: before `since`, another status, another company.
    made(&l, SessionStatus::Complete, "USD", "100", T0 - 1);
    made(&l, SessionStatus::Underpaid, "USD", "100", T0 + 7);
    made(&theirs, SessionStatus::Complete, "USD", "100", T0 + 8);

    let got = store
        .company_collected(c, SessionStatus::Complete, ts(T0))
        .unwrap();
    let want = |day, asset: &str, count, amount: &str| CollectedDay {
        day,
        asset: asset.into(),
        count,
        amount: Decimal::parse(amount).unwrap(),
    };
    assert_eq!(
        got,
        vec![
            want(day, "EUR", 1, "12.50"),
            want(day, "USD", 2, "0.3"),
            want(day + 1, "USD", 2, "8.000000000000000001"),
        ]
    );
    let later = store
        .company_collected(c, SessionStatus::Complete, ts(next + 1))
        .unwrap();
    assert_eq!(later, vec![want(day + 1, "USD", 1, "7")]);
    let short = store
        .company_collected(c, SessionStatus::Underpaid, ts(0))
        .unwrap();
    assert_eq!(short, vec![want(day, "USD", 1, "100")]);
    assert_eq!(
        store
            .company_collected(c, SessionStatus::Expired, ts(0))
            .unwrap(),
        vec![]
    );
}
