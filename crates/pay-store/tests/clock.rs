//! Per-company test clocks in the store, on SQLite and PostgreSQL: a move is atomic and per
//! company, due scans compare each row with its own company's clock, and a claim's lease runs
//! on real time (a moved clock never ends it early).

use pay_domain::kernel::ids::CompanyId;
use pay_domain::mail::{MailId, MailKind, MailStatus, MailStore, OutgoingMail};
use pay_domain::tenancy::ports::TenancyStore;
use pay_domain::webhooks::ports::WebhookStore;
use pay_store::DieselStore;
use uuid::Uuid;

#[macro_use]
mod common;
use common::*;

both_backends!(
    moves_are_per_company_and_bounded,
    deliveries_fall_due_on_their_company_clock,
    a_moved_clock_never_ends_a_lease,
    mails_fall_due_on_their_company_clock,
);

const HOUR: i64 = 3_600_000;
const LEASE: i64 = 60_000;

fn offset(store: &DieselStore, c: CompanyId) -> i64 {
    store
        .company_with_settings(c)
        .unwrap()
        .unwrap()
        .0
        .test_clock_offset_ms
}

fn claimed_ids(store: &DieselStore, now: i64) -> Vec<Uuid> {
    store
        .claim_due_deliveries(ts(now), ts(now + LEASE), 10)
        .unwrap()
        .into_iter()
        .map(|d| d.id)
        .collect()
}

fn moves_are_per_company_and_bounded(store: &DieselStore, _url: &str) {
    let (a, b) = (company(store), company(store));
    assert_eq!((offset(store, a), offset(store, b)), (0, 0));
    assert_eq!(
        store.advance_test_clock(a, 1000, 10_000, None).unwrap(),
        Some(1000)
    );
    assert_eq!(
        store.advance_test_clock(a, 500, 10_000, None).unwrap(),
        Some(1500)
    );
    assert_eq!(
        (offset(store, a), offset(store, b)),
        (1500, 0),
        "only a moved"
    );
    // Up to the maximum exactly, then nothing more (and nothing written).
    assert_eq!(
        store.advance_test_clock(a, 8500, 10_000, None).unwrap(),
        Some(10_000)
    );
    assert_eq!(store.advance_test_clock(a, 1, 10_000, None).unwrap(), None);
    assert_eq!(offset(store, a), 10_000);
    // An unknown company has no clock to move.
    let nobody = CompanyId(Uuid::now_v7());
    assert_eq!(
        store.advance_test_clock(nobody, 1, 10_000, None).unwrap(),
        None
    );
    // Concurrent moves add up.
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let store = store.clone();
            std::thread::spawn(move || {
                for _ in 0..5 {
                    store
                        .advance_test_clock(b, 7, 10_000, None)
                        .unwrap()
                        .unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(offset(store, b), 8 * 5 * 7);
}

fn deliveries_fall_due_on_their_company_clock(store: &DieselStore, _url: &str) {
    let (a, b) = (company(store), company(store));
    let now = T0 + 10_000;
    let (da, db) = (delivery(a, T0, now + HOUR), delivery(b, T0, now + HOUR));
    store.insert_deliveries(&[da.clone(), db.clone()]).unwrap();
    assert!(claimed_ids(store, now).is_empty(), "not due on real time");
    // Company a's clock runs an hour ahead: its delivery is due, b's is not.
    store.advance_test_clock(a, HOUR, 10 * HOUR, None).unwrap();
    assert_eq!(claimed_ids(store, now), vec![da.id]);
    assert!(
        claimed_ids(store, now + LEASE - 1).is_empty(),
        "a's leased, b's not due"
    );
    // b's falls due on real time as usual (a's lease has ended by then: due again first).
    assert_eq!(claimed_ids(store, now + HOUR), vec![da.id, db.id]);
}

fn a_moved_clock_never_ends_a_lease(store: &DieselStore, _url: &str) {
    let a = company(store);
    let now = T0 + 10_000;
    let d = delivery(a, T0, now);
    store.insert_deliveries(std::slice::from_ref(&d)).unwrap();
    assert_eq!(claimed_ids(store, now), vec![d.id]);
    // A day ahead on the company's clock: the lease (real time) still holds the delivery.
    store
        .advance_test_clock(a, 24 * HOUR, 100 * HOUR, None)
        .unwrap();
    assert!(claimed_ids(store, now).is_empty());
    assert!(claimed_ids(store, now + LEASE - 1).is_empty());
    // When the lease ends on real time, it is claimable again (a dispatcher died mid-send).
    assert_eq!(claimed_ids(store, now + LEASE), vec![d.id]);
}

fn mails_fall_due_on_their_company_clock(store: &DieselStore, _url: &str) {
    let (a, b) = (company(store), company(store));
    let (la, lb) = (link(store, a), link(store, b));
    let now = T0 + 10_000;
    let mail = |l: &pay_domain::links::PaymentLink| OutgoingMail {
        id: MailId(Uuid::now_v7()),
        company_id: l.company_id,
        link_id: l.id,
        link_uid: l.uid.clone(),
        kind: MailKind::PaymentRequest,
        to: "payer@example.com".into(),
        subject: "Payment request".into(),
        text_body: "Pay here".into(),
        html_body: "<p>Pay here</p>".into(),
        status: MailStatus::Pending,
        attempts: 0,
        next_attempt_at: Some(ts(now + HOUR)),
        last_attempt_at: None,
        last_error: None,
        created_at: ts(T0),
        sent_at: None,
    };
    let (ma, mb) = (mail(&la), mail(&lb));
    store.insert_mail(&ma, None).unwrap();
    store.insert_mail(&mb, None).unwrap();
    let claim = |at: i64| -> Vec<MailId> {
        store
            .claim_due_mails(ts(at), ts(at + LEASE), 10)
            .unwrap()
            .into_iter()
            .map(|m| m.id)
            .collect()
    };
    assert!(claim(now).is_empty());
    store
        .advance_test_clock(a, 2 * HOUR, 10 * HOUR, None)
        .unwrap();
    assert_eq!(claim(now), vec![ma.id]);
    // Leased on real time, however far a's clock moves.
    store
        .advance_test_clock(a, 5 * HOUR, 10 * HOUR, None)
        .unwrap();
    assert!(claim(now + LEASE - 1).is_empty());
    assert_eq!(claim(now + LEASE), vec![ma.id]);
    assert_eq!(claim(now + HOUR), vec![ma.id, mb.id]);
}
