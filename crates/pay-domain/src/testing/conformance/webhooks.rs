//! The webhook outbox: callbacks saved by compare-and-set, per-link event numbers (consecutive, distinct under concurrency, rolled back with their deliveries), claims oldest first on a lease, attempts recorded once.

use std::cell::Cell;
use std::thread;

use uuid::Uuid;

use super::fixtures::*;
use crate::kernel::error::Fault;
use crate::kernel::ids::*;
use crate::kernel::secret::SealedSecret;
use crate::links::ports::PaymentLinkStore;
use crate::links::PaymentLink;
use crate::tenancy::ports::TenancyStore;
use crate::webhooks::ports::{AttemptRecord, WebhookStore};
use crate::webhooks::*;

/// The ports these cases need.
pub trait Ports: TenancyStore + PaymentLinkStore + WebhookStore + Sync {}

impl<T: TenancyStore + PaymentLinkStore + WebhookStore + Sync> Ports for T {}

/// How long a claim leases (ms).
const LEASE: i64 = 60_000;
#[allow(dead_code)]
const NONE: Vec<Uuid> = Vec::new();

pub fn callbacks_save_read_replace<S: Ports>(store: &S) {
    let a = company(store);
    let b = company(store);
    assert_eq!(
        store
            .company_callback(a, CallbackKind::CompanyPayment)
            .unwrap(),
        None
    );

    // Insert, without a previous secret.
    let first = callback(a, CallbackKind::CompanyPayment, "https://a.example/hook");
    assert!(store.save_company_callback(&first).unwrap());
    assert_eq!(
        store
            .company_callback(a, CallbackKind::CompanyPayment)
            .unwrap(),
        Some(first.clone())
    );

    // Replace: rotated, with the previous secret and its grace period.
    let rotated = CompanyCallback {
        url: "https://a.example/hook2".into(),
        secret: sealed("b2"),
        previous: Some((sealed("a1"), ts(T0 + 86_400_000))),
        updated_at: ts(T0 + 5),
        version: 2,
        ..first.clone()
    };
    assert!(store.save_company_callback(&rotated).unwrap());
    // A save based on the version it replaced loses: nothing is written.
    let stale = CompanyCallback {
        url: "https://a.example/stale".into(),
        ..rotated.clone()
    };
    assert!(!store.save_company_callback(&stale).unwrap());
    assert!(
        !store.save_company_callback(&first).unwrap(),
        "version 1 again"
    );
    assert_eq!(
        store
            .company_callback(a, CallbackKind::CompanyPayment)
            .unwrap(),
        Some(rotated.clone())
    );

    // Replace again without a previous secret: it is cleared.
    let plain = CompanyCallback {
        previous: None,
        updated_at: ts(T0 + 9),
        version: 3,
        ..rotated
    };
    assert!(store.save_company_callback(&plain).unwrap());
    assert_eq!(
        store
            .company_callback(a, CallbackKind::CompanyPayment)
            .unwrap(),
        Some(plain.clone())
    );

    // Kinds and companies are separate rows.
    assert_eq!(
        store
            .company_callback(a, CallbackKind::LegacyShared)
            .unwrap(),
        None
    );
    assert_eq!(
        store
            .company_callback(b, CallbackKind::CompanyPayment)
            .unwrap(),
        None
    );
    let legacy = callback(a, CallbackKind::LegacyShared, "https://a.example/legacy");
    let other = callback(b, CallbackKind::CompanyPayment, "https://b.example/hook");
    assert!(store.save_company_callback(&legacy).unwrap());
    assert!(store.save_company_callback(&other).unwrap());
    assert_eq!(
        store
            .company_callback(a, CallbackKind::LegacyShared)
            .unwrap(),
        Some(legacy)
    );
    assert_eq!(
        store
            .company_callback(a, CallbackKind::CompanyPayment)
            .unwrap(),
        Some(plain)
    );
    assert_eq!(
        store
            .company_callback(b, CallbackKind::CompanyPayment)
            .unwrap(),
        Some(other)
    );

    // An unknown company is refused (foreign key), not stored.
    let ghost = callback(
        CompanyId(Uuid::now_v7()),
        CallbackKind::CompanyPayment,
        "https://x.example",
    );
    assert!(is_fault(store.save_company_callback(&ghost)));
}

pub fn enqueue_numbers_events_per_link<S: Ports>(store: &S) {
    let c = company(store);
    let l1 = link(store, c);
    let l2 = link(store, c);
    let b1 = builder(c, &l1);
    let b2 = builder(c, &l2);
    let mut made = Vec::new();
    for (l, b, want) in [
        (&l1, &b1, 1),
        (&l1, &b1, 2),
        (&l2, &b2, 1),
        (&l1, &b1, 3),
        (&l2, &b2, 2),
    ] {
        let out = store.enqueue_link_event(l.id, b).unwrap();
        assert_eq!(sequences(&out), vec![format!(r#"{{"sequence":{want}}}"#)]);
        made.extend(out);
    }
    // What was returned is what was stored.
    for d in &made {
        assert_eq!(store.delivery(c, d.id).unwrap().as_ref(), Some(d));
    }
    // Several deliveries per event (one per callback) share the number.
    let two = |n: u64| {
        let mut v = b1(n);
        v.extend(b1(n));
        v
    };
    let out = store.enqueue_link_event(l1.id, &two).unwrap();
    assert_eq!(out.len(), 2);
    assert_eq!(sequences(&out), vec![r#"{"sequence":4}"#; 2]);

    // An unknown link: an error, `build` never called, nothing written.
    let called = Cell::new(false);
    let spy = |n: u64| {
        called.set(true);
        b1(n)
    };
    let e = store
        .enqueue_link_event(PaymentLinkId(Uuid::now_v7()), &spy)
        .unwrap_err();
    assert_eq!(e, Fault::new("unknown payment link"));
    assert!(!called.get());
    assert_eq!(store.deliveries(c, &filter()).unwrap().len(), 7);
}

pub fn enqueue_rolls_back_with_its_deliveries<S: Ports>(store: &S) {
    let c = company(store);
    let l = link(store, c);
    let b = builder(c, &l);
    let first = store.enqueue_link_event(l.id, &b).unwrap();
    assert_eq!(sequences(&first), vec![r#"{"sequence":1}"#]);

    // The second delivery reuses an existing id: the insert fails, and with it the whole event
    // (the sequence bump and the first, valid delivery).
    let fresh = Cell::new(None);
    let clashing = |n: u64| {
        let ok = b(n).remove(0);
        fresh.set(Some(ok.id));
        let mut dup = b(n).remove(0);
        dup.id = first[0].id;
        vec![ok, dup]
    };
    assert!(is_fault(store.enqueue_link_event(l.id, &clashing)));
    let fresh = fresh.get().unwrap();
    assert_eq!(store.delivery(c, fresh).unwrap(), None);
    assert_eq!(store.deliveries(c, &filter()).unwrap().len(), 1);

    // The failed event did not use up a number.
    let next = store.enqueue_link_event(l.id, &b).unwrap();
    assert_eq!(sequences(&next), vec![r#"{"sequence":2}"#]);
}

/// Many emitters of one link at once (and of another link beside them): every number once.
pub fn enqueue_concurrently_gets_distinct_numbers<S: Ports>(store: &S) {
    let c = company(store);
    let l1 = link(store, c);
    let l2 = link(store, c);
    let mut got: Vec<(PaymentLinkId, String)> = Vec::new();
    thread::scope(|scope| {
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let l = if i % 4 == 3 { l2.clone() } else { l1.clone() };
                scope.spawn(move || {
                    let b = builder(c, &l);
                    (0..10)
                        .map(|_| store.enqueue_link_event(l.id, &b).unwrap()[0].body.clone())
                        .map(|body| (l.id, body))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for t in threads {
            got.extend(t.join().unwrap());
        }
    });
    for (l, count) in [(l1.id, 60), (l2.id, 20)] {
        let mut mine: Vec<String> = got
            .iter()
            .filter(|(id, _)| *id == l)
            .map(|(_, b)| b.clone())
            .collect();
        mine.sort();
        let mut want: Vec<String> = (1..=count)
            .map(|n| format!(r#"{{"sequence":{n}}}"#))
            .collect();
        want.sort();
        assert_eq!(mine, want);
    }
}

pub fn insert_deliveries_is_all_or_nothing<S: Ports>(store: &S) {
    let c = company(store);
    store.insert_deliveries(&[]).unwrap();
    let a = delivery(c, T0, T0);
    let b = delivery(c, T0 + 1, T0);
    store.insert_deliveries(&[a.clone(), b.clone()]).unwrap();
    assert_eq!(
        store.deliveries(c, &filter()).unwrap(),
        vec![b.clone(), a.clone()]
    );
    // A batch with one bad row (a duplicate id) writes none of its rows.
    let d = delivery(c, T0 + 2, T0);
    assert!(is_fault(store.insert_deliveries(&[d.clone(), a.clone()])));
    assert_eq!(store.delivery(c, d.id).unwrap(), None);
    // So does one for an unknown company.
    let ghost = delivery(CompanyId(Uuid::now_v7()), T0, T0);
    assert!(is_fault(store.insert_deliveries(&[ghost])));
    assert_eq!(store.deliveries(c, &filter()).unwrap(), vec![b, a]);
}

pub fn claim_due_oldest_first_with_lease<S: Ports>(store: &S) {
    let c = company(store);
    let now = T0 + 10_000;
    let oldest = delivery(c, T0, now - 3000);
    let mut middle = delivery(c, T0, now - 2000);
    middle.status = DeliveryStatus::Retrying;
    middle.attempts = 2;
    middle.last_attempt_at = Some(ts(T0));
    middle.last_response_status = Some(503);
    middle.last_error = Some(AttemptError::ConnectionFailed);
    let newest = delivery(c, T0, now);
    let later = delivery(c, T0, now + 1000);
    let mut done = delivery(c, T0, now - 5000);
    done.status = DeliveryStatus::Succeeded;
    done.next_attempt_at = None;
    let mut failed = delivery(c, T0, now - 5000);
    failed.status = DeliveryStatus::Failed;
    let mut stale_done = delivery(c, T0, now - 5000);
    // A terminal row that still has a date (should not happen) is never claimed either.
    stale_done.status = DeliveryStatus::Succeeded;
    // Inserted out of order, so that the order comes from the query.
    store
        .insert_deliveries(&[
            newest.clone(),
            later.clone(),
            done,
            middle.clone(),
            failed,
            oldest.clone(),
            stale_done,
        ])
        .unwrap();

    let leased = |d: &Delivery, until: i64| Delivery {
        next_attempt_at: Some(ts(until)),
        ..d.clone()
    };
    assert_eq!(
        store
            .claim_due_deliveries(ts(now), ts(now + LEASE), 0)
            .unwrap(),
        vec![]
    );
    let first = store
        .claim_due_deliveries(ts(now), ts(now + LEASE), 2)
        .unwrap();
    assert_eq!(
        first,
        vec![leased(&oldest, now + LEASE), leased(&middle, now + LEASE)]
    );
    // The claim is stored, not only returned.
    assert_eq!(
        store.delivery(c, oldest.id).unwrap(),
        Some(leased(&oldest, now + LEASE))
    );
    // Leased rows are not claimed again while the lease runs.
    let second = store
        .claim_due_deliveries(ts(now), ts(now + LEASE), 10)
        .unwrap();
    assert_eq!(second, vec![leased(&newest, now + LEASE)]);
    assert_eq!(
        store
            .claim_due_deliveries(ts(now + LEASE - 1), ts(now + 2 * LEASE), 10)
            .unwrap(),
        vec![leased(&later, now + 2 * LEASE)]
    );
    assert_eq!(
        store
            .claim_due_deliveries(ts(now + LEASE - 1), ts(now + 2 * LEASE), 10)
            .unwrap(),
        vec![]
    );
    // Once the lease ends they are due again: oldest due first, ties by id.
    let mut expired = [oldest.clone(), middle.clone(), newest.clone()];
    expired.sort_by_key(|d| d.id.hyphenated().to_string());
    let again = store
        .claim_due_deliveries(ts(now + LEASE), ts(now + 3 * LEASE), 10)
        .unwrap();
    assert_eq!(
        again,
        expired
            .iter()
            .map(|d| leased(d, now + 3 * LEASE))
            .collect::<Vec<_>>()
    );
}

pub fn record_attempt_moves_state_once<S: Ports>(store: &S) {
    let c = company(store);
    let d = delivery(c, T0, T0);
    store.insert_deliveries(std::slice::from_ref(&d)).unwrap();
    let claimed = store
        .claim_due_deliveries(ts(T0), ts(T0 + LEASE), 1)
        .unwrap()
        .remove(0);

    // Attempt 1 fails; the receiver asked to wait ten minutes.
    let failure = AttemptOutcome {
        status: Some(429),
        duration_ms: 1234,
        error: None,
        response_excerpt: Some("slow down ✓".into()),
        retry_after: Some(time::Duration::milliseconds(600_500)),
    };
    let first = attempt(&claimed, 1, T0 + 10, failure.clone());
    let retry = AfterAttempt {
        status: DeliveryStatus::Retrying,
        next_attempt_at: Some(ts(T0 + 600_010)),
    };
    store.record_attempt(&first, &retry).unwrap();
    let after_first = Delivery {
        status: DeliveryStatus::Retrying,
        attempts: 1,
        next_attempt_at: Some(ts(T0 + 600_010)),
        last_attempt_at: Some(ts(T0 + 10)),
        last_response_status: Some(429),
        last_error: None,
        ..d.clone()
    };
    assert_eq!(store.delivery(c, d.id).unwrap(), Some(after_first.clone()));
    assert_eq!(store.attempts(c, d.id).unwrap(), vec![first.clone()]);

    // A late duplicate of attempt 1 (another dispatcher whose lease ran out) changes nothing.
    let dup = attempt(&claimed, 1, T0 + 20, success(5));
    let done = AfterAttempt {
        status: DeliveryStatus::Succeeded,
        next_attempt_at: None,
    };
    assert!(is_fault(store.record_attempt(&dup, &done)));
    // So does one that skips a number.
    assert!(is_fault(store.record_attempt(
        &attempt(&claimed, 3, T0 + 20, success(5)),
        &done
    )));
    assert_eq!(store.delivery(c, d.id).unwrap(), Some(after_first));
    assert_eq!(store.attempts(c, d.id).unwrap(), vec![first.clone()]);

    // Attempt 2 fails without a response: the error is kept, the status code cleared.
    let broken = AttemptOutcome {
        status: None,
        duration_ms: 10_000,
        error: Some(AttemptError::TimedOut),
        response_excerpt: None,
        retry_after: None,
    };
    let second = attempt(&claimed, 2, T0 + 600_020, broken);
    let retry2 = AfterAttempt {
        status: DeliveryStatus::Retrying,
        next_attempt_at: Some(ts(T0 + 900_020)),
    };
    store.record_attempt(&second, &retry2).unwrap();
    let after_second = store.delivery(c, d.id).unwrap().unwrap();
    assert_eq!(after_second.last_response_status, None);
    assert_eq!(after_second.last_error, Some(AttemptError::TimedOut));
    assert_eq!(after_second.attempts, 2);

    // Attempt 3 succeeds: terminal, nothing due.
    let third = attempt(&claimed, 3, T0 + 900_030, success(42));
    store.record_attempt(&third, &done).unwrap();
    assert_eq!(
        store.delivery(c, d.id).unwrap(),
        Some(Delivery {
            status: DeliveryStatus::Succeeded,
            attempts: 3,
            next_attempt_at: None,
            last_attempt_at: Some(ts(T0 + 900_030)),
            last_response_status: Some(200),
            last_error: None,
            ..d.clone()
        })
    );
    assert_eq!(store.attempts(c, d.id).unwrap(), vec![first, second, third]);
    // A finished delivery takes no more attempts, and an unknown one none at all.
    assert!(is_fault(store.record_attempt(
        &attempt(&claimed, 4, T0 + 900_040, success(1)),
        &done
    )));
    let ghost = delivery(c, T0, T0);
    assert!(is_fault(
        store.record_attempt(&attempt(&ghost, 1, T0, success(1)), &done)
    ));
    assert_eq!(store.attempts(c, ghost.id).unwrap(), vec![]);
    assert_eq!(
        store
            .claim_due_deliveries(ts(T0 + 10_000_000), ts(T0 + 20_000_000), 10)
            .unwrap(),
        vec![]
    );
}

pub fn retarget_moves_live_deliveries_only<S: Ports>(store: &S) {
    let c = company(store);
    let pending = delivery(c, T0, T0);
    let mut retrying = delivery(c, T0, T0);
    retrying.status = DeliveryStatus::Retrying;
    retrying.attempts = 1;
    let mut done = delivery(c, T0, T0);
    done.status = DeliveryStatus::Succeeded;
    done.next_attempt_at = None;
    let other = delivery(c, T0, T0);
    let all = [
        pending.clone(),
        retrying.clone(),
        done.clone(),
        other.clone(),
    ];
    store.insert_deliveries(&all).unwrap();
    store
        .retarget_deliveries(&[
            (pending.id, "https://new.example/a".into()),
            (retrying.id, "https://new.example/b".into()),
            (done.id, "https://new.example/a".into()),
            (Uuid::now_v7(), "https://new.example/a".into()),
        ])
        .unwrap();
    let url = |d: &Delivery| store.delivery(c, d.id).unwrap().unwrap().url;
    assert_eq!(url(&pending), "https://new.example/a");
    assert_eq!(url(&retrying), "https://new.example/b");
    assert_eq!(url(&done), done.url, "a finished delivery is history");
    assert_eq!(url(&other), other.url, "not listed");
    // Nothing else moved.
    let moved = store.delivery(c, pending.id).unwrap().unwrap();
    assert_eq!(
        moved,
        Delivery {
            url: "https://new.example/a".into(),
            ..pending
        }
    );
    store.retarget_deliveries(&[]).unwrap();
}

pub fn record_attempts_in_one_batch<S: Ports>(store: &S) {
    let c = company(store);
    let ds: Vec<Delivery> = (0..3).map(|i| delivery(c, T0 + i, T0)).collect();
    store.insert_deliveries(&ds).unwrap();
    let claimed = store
        .claim_due_deliveries(ts(T0), ts(T0 + LEASE), 10)
        .unwrap();
    assert_eq!(claimed.len(), 3);
    let done = AfterAttempt {
        status: DeliveryStatus::Succeeded,
        next_attempt_at: None,
    };
    // The second one is stale (attempt 2 where the delivery is at 0): skipped, the others land.
    let batch = vec![
        (attempt(&ds[0], 1, T0 + 10, success(3)), done),
        (attempt(&ds[1], 2, T0 + 10, success(3)), done),
        (attempt(&ds[2], 1, T0 + 10, success(3)), done),
    ];
    assert_eq!(
        store
            .record_attempts(&batch, &no_health())
            .unwrap()
            .recorded,
        vec![true, false, true]
    );
    for (d, recorded) in ds.iter().zip([true, false, true]) {
        let now = store.delivery(c, d.id).unwrap().unwrap();
        if recorded {
            assert_eq!((now.status, now.attempts), (DeliveryStatus::Succeeded, 1));
            assert_eq!(store.attempts(c, d.id).unwrap().len(), 1);
        } else {
            assert_eq!((now.status, now.attempts), (DeliveryStatus::Pending, 0));
            assert!(store.attempts(c, d.id).unwrap().is_empty());
        }
    }
    // Replaying the same batch records nothing more.
    assert_eq!(
        store
            .record_attempts(&batch, &no_health())
            .unwrap()
            .recorded,
        vec![false, false, false]
    );
    assert_eq!(
        store.record_attempts(&[], &no_health()).unwrap(),
        RoundRecorded::default()
    );
}

/// A round with no endpoint results.
fn no_health() -> EndpointHealth<'static> {
    EndpointHealth {
        results: &[],
        now: ts(T0),
        rule: &RULE,
    }
}

/// The default circuit rule.
const RULE: CircuitRule = CircuitRule {
    open_after: time::Duration::hours(1),
    min_failures: 10,
    first_pause: time::Duration::minutes(5),
    max_pause: time::Duration::hours(1),
};

pub mod endpoints;
pub use endpoints::*;
pub mod values;
use values::*;
pub mod gauges;
pub use gauges::*;
mod event_log;
pub use event_log::*;
