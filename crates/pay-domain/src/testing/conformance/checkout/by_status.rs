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
