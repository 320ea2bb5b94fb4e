//! Payment sessions: one write per move (session, timeline, deliveries), compare-and-set on the version, processor events applied once (also concurrently), consecutive event numbers, reads in their order.

use std::cell::Cell;
use std::sync::Barrier;
use std::thread;

use serde_json::{Map, Value};
use uuid::Uuid;

use super::fixtures::*;
use crate::checkout::machine::SessionStatus;
use crate::checkout::{
    CheckoutStore, LinkEventWrite, PaymentSession, SessionChange, TimelineEvent, WriteOutcome,
};
use crate::checkout::{ResolutionRecord, Settlement, TimelineFacts, TimelineKind};
use crate::kernel::amount::Decimal;
use crate::kernel::error::Fault;
use crate::kernel::ids::*;
use crate::links::ports::PaymentLinkStore;
use crate::links::{CreatedBy, LinkStatus, PaymentLink};
use crate::tenancy::ports::TenancyStore;
use crate::webhooks::ports::WebhookStore;
use crate::webhooks::*;

/// The ports these cases need.
pub trait Ports: TenancyStore + PaymentLinkStore + CheckoutStore + WebhookStore + Sync {}

impl<T: TenancyStore + PaymentLinkStore + CheckoutStore + WebhookStore + Sync> Ports for T {}

pub fn session_and_timeline_round_trip<S: Ports>(store: &S) {
    let c = company(store);
    let l = link(store, c);
    assert_eq!(store.latest_session(l.id).unwrap(), None);
    assert_eq!(store.timeline(l.id).unwrap(), vec![]);
    assert_eq!(
        store.latest_session_and_timeline(l.id).unwrap(),
        (None, vec![])
    );

    // Every field set, the settlement a nested object with exact decimals and non-ASCII text.
    let full = PaymentSession {
        previous_status: Some(SessionStatus::Pending),
        deposit_address: Some("0x00000000000000000000000000000000000000bb".into()),
        channel_id: Some("ch_123".into()),
        composite_channel_id: Some("eip155:8453:ch_123".into()),
        source_chain: Some("eip155:8453".into()),
        settlement: Settlement {
            received_amount: Some(dec("12.562499999999999999")),
            asset: Some("eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913".into()),
            short_by: Some(dec("0.000000000000000001")),
            late_amount: Some(dec("1.5")),
            late: Some(true),
            resolution: Some(ResolutionRecord::RefundedByMerchant),
            refund_address: Some("0x00000000000000000000000000000000000000cc".into()),
            transfers: vec![
                crate::checkout::ChainTransfer {
                    tx_hash: format!("0x{}", "ab".repeat(32)),
                    log_index: Some(4),
                    amount: dec("12.5"),
                    block_number: 19_000_001,
                    confirmations: 12,
                },
                crate::checkout::ChainTransfer {
                    tx_hash: format!("0x{}", "cd".repeat(32)),
                    log_index: None,
                    amount: dec("0.062499999999999999"),
                    block_number: 19_000_002,
                    confirmations: 11,
                },
            ],
            ..Settlement::default()
        },
        error_message: Some("deposit below minimum — retry".into()),
        updated_at: ts(T0 + 7),
        ..session(&l, SessionStatus::Processing, T0 + 1, T0 + 1_800_000)
    };
    // Every optional field empty.
    let bare = session(&l, SessionStatus::Quote, T0 + 2, T0 + 60_000);
    let t1 = TimelineEvent {
        facts: TimelineFacts::StatusChanged {
            previous_status: SessionStatus::Pending,
            status: SessionStatus::Processing,
        },
        ..entry(&l, Some(full.id), "status_changed", T0 + 1)
    };
    let t2 = TimelineEvent {
        facts: TimelineFacts::None {},
        ..entry(&l, None, "start_blocked_missing_company_wallet", T0 + 1)
    };
    let called = Cell::new(false);
    let spy = |_: u64| {
        called.set(true);
        vec![]
    };
    let out = store
        .write_link_event(
            &LinkEventWrite {
                timeline: vec![t1.clone(), t2.clone()],
                ..write(&l, SessionChange::Insert(full.clone()))
            },
            &spy,
        )
        .unwrap();
    assert_eq!(out, WriteOutcome::Applied(vec![]));
    assert!(!called.get(), "build is not called without webhook events");
    // A new session carrying a processor event id: the event row names a session that the same
    // transaction inserts after it.
    let opened = LinkEventWrite {
        processor_event_id: Some("evt_opened".into()),
        ..write(&l, SessionChange::Insert(bare.clone()))
    };
    assert_eq!(
        applied(store.write_link_event(&opened, &never).unwrap()),
        vec![]
    );
    assert_eq!(
        store.write_link_event(&opened, &never).unwrap(),
        WriteOutcome::Duplicate
    );

    assert_eq!(store.payment_session(full.id).unwrap(), Some(full.clone()));
    assert_eq!(store.payment_session(bare.id).unwrap(), Some(bare.clone()));
    assert_eq!(
        store
            .payment_session(PaymentSessionId(Uuid::now_v7()))
            .unwrap(),
        None
    );
    // Timeline: oldest first, ties in id order.
    let mut want = vec![t1, t2];
    want.sort_by_key(|e| (e.created_at, e.id));
    assert_eq!(store.timeline(l.id).unwrap(), want);

    // A write about the link alone (no session row).
    let t3 = entry(&l, None, "quote_created", T0 + 3);
    let out = store
        .write_link_event(
            &LinkEventWrite {
                timeline: vec![t3.clone()],
                ..write(&l, SessionChange::None)
            },
            &never,
        )
        .unwrap();
    assert_eq!(out, WriteOutcome::Applied(vec![]));
    want.push(t3);
    assert_eq!(store.timeline(l.id).unwrap(), want);
    // The link detail's combined read: the newest session (`bare`, created last) and the same
    // timeline.
    assert_eq!(
        store.latest_session_and_timeline(l.id).unwrap(),
        (Some(bare), want)
    );
    // Another link's timeline is its own.
    let other = link(store, c);
    assert_eq!(store.timeline(other.id).unwrap(), vec![]);
    assert_eq!(
        store.latest_session_and_timeline(other.id).unwrap(),
        (None, vec![])
    );
}

pub fn update_is_compare_and_set<S: Ports>(store: &S) {
    let c = company(store);
    let l = link(store, c);
    let v1 = session(&l, SessionStatus::Quote, T0, T0 + 60_000);
    applied(store.write_link_event(&insert(&l, &v1), &never).unwrap());

    // The right version: written, with its timeline entry and delivery.
    let v2 = PaymentSession {
        deposit_address: Some("0xdead".into()),
        expires_at: ts(T0 + 1_800_000),
        ..moved(&v1, SessionStatus::Pending, T0 + 10)
    };
    let b = builder(c, &l, 1);
    let out = applied(
        store
            .write_link_event(
                &LinkEventWrite {
                    webhook_events: 1,
                    ..update(&l, &v1, &v2)
                },
                &b,
            )
            .unwrap(),
    );
    assert_eq!(sequences(&out), vec![r#"{"sequence":1}"#]);
    assert_eq!(store.payment_session(v1.id).unwrap(), Some(v2.clone()));
    let timeline = store.timeline(l.id).unwrap();
    assert_eq!(timeline.len(), 2);

    // A write based on version 1 again: Stale, nothing written (session, timeline, deliveries,
    // event sequence), `build` never called.
    let lost = PaymentSession {
        error_message: Some("lost".into()),
        ..moved(&v1, SessionStatus::Cancelled, T0 + 11)
    };
    let out = store
        .write_link_event(
            &LinkEventWrite {
                webhook_events: 1,
                ..update(&l, &v1, &lost)
            },
            &never,
        )
        .unwrap();
    assert_eq!(out, WriteOutcome::Stale);
    assert_eq!(store.payment_session(v1.id).unwrap(), Some(v2.clone()));
    assert_eq!(store.timeline(l.id).unwrap(), timeline);
    assert_eq!(store.deliveries(c, &all_deliveries()).unwrap().len(), 1);

    // Optional fields cleared by an update are stored as NULL.
    let v3 = PaymentSession {
        deposit_address: None,
        ..moved(&v2, SessionStatus::Cancelled, T0 + 12)
    };
    applied(
        store
            .write_link_event(&update(&l, &v2, &v3), &never)
            .unwrap(),
    );
    assert_eq!(store.payment_session(v1.id).unwrap(), Some(v3));

    // The stale write did not use up a sequence number.
    let next = store.enqueue_link_event(l.id, &builder(c, &l, 1)).unwrap();
    assert_eq!(sequences(&next), vec![r#"{"sequence":2}"#]);

    // An update of a session that does not exist is stale too.
    let ghost = session(&l, SessionStatus::Quote, T0, T0 + 60_000);
    let out = store
        .write_link_event(
            &update(&l, &ghost, &moved(&ghost, SessionStatus::Pending, T0 + 1)),
            &never,
        )
        .unwrap();
    assert_eq!(out, WriteOutcome::Stale);
    assert_eq!(store.payment_session(ghost.id).unwrap(), None);
}

pub fn duplicate_processor_event_writes_nothing<S: Ports>(store: &S) {
    let c = company(store);
    let l = link(store, c);
    let v1 = session(&l, SessionStatus::Pending, T0, T0 + 60_000);
    applied(store.write_link_event(&insert(&l, &v1), &never).unwrap());

    let v2 = moved(&v1, SessionStatus::Processing, T0 + 10);
    let b = builder(c, &l, 1);
    let first = LinkEventWrite {
        processor_event_id: Some("evt_deposit_1".into()),
        webhook_events: 1,
        ..update(&l, &v1, &v2)
    };
    applied(store.write_link_event(&first, &b).unwrap());
    let timeline = store.timeline(l.id).unwrap();

    // The same event again, even as a write that would otherwise apply (right version): nothing
    // written, `build` never called.
    let v3 = moved(&v2, SessionStatus::Complete, T0 + 20);
    let again = LinkEventWrite {
        processor_event_id: Some("evt_deposit_1".into()),
        webhook_events: 1,
        ..update(&l, &v2, &v3)
    };
    assert_eq!(
        store.write_link_event(&again, &never).unwrap(),
        WriteOutcome::Duplicate
    );
    // Also when it carries no session change.
    let bare = LinkEventWrite {
        processor_event_id: Some("evt_deposit_1".into()),
        timeline: vec![entry(&l, None, "settlement_updated", T0 + 21)],
        ..write(&l, SessionChange::None)
    };
    assert_eq!(
        store.write_link_event(&bare, &never).unwrap(),
        WriteOutcome::Duplicate
    );
    assert_eq!(store.payment_session(v1.id).unwrap(), Some(v2.clone()));
    assert_eq!(store.timeline(l.id).unwrap(), timeline);
    assert_eq!(store.deliveries(c, &all_deliveries()).unwrap().len(), 1);

    // Another event id applies.
    let other = LinkEventWrite {
        processor_event_id: Some("evt_settled_1".into()),
        webhook_events: 1,
        ..update(&l, &v2, &v3)
    };
    let out = applied(store.write_link_event(&other, &b).unwrap());
    assert_eq!(sequences(&out), vec![r#"{"sequence":2}"#]);
    assert_eq!(store.payment_session(v1.id).unwrap(), Some(v3));
}

/// A processor delivering one event 20 times at once: applied once.
pub fn concurrent_duplicate_events_apply_once<S: Ports>(store: &S) {
    const THREADS: usize = 20;
    let c = company(store);
    let l = link(store, c);
    let v1 = session(&l, SessionStatus::Pending, T0, T0 + 60_000);
    applied(store.write_link_event(&insert(&l, &v1), &never).unwrap());
    let barrier = Barrier::new(THREADS);
    let results: Vec<WriteOutcome> = thread::scope(|scope| {
        let threads: Vec<_> = (0..THREADS)
            .map(|_| {
                let (l, v1, barrier) = (&l, &v1, &barrier);
                scope.spawn(move || {
                    let w = LinkEventWrite {
                        processor_event_id: Some("evt_same".into()),
                        webhook_events: 1,
                        ..update(l, v1, &moved(v1, SessionStatus::Processing, T0 + 10))
                    };
                    barrier.wait();
                    store.write_link_event(&w, &builder(c, l, 1)).unwrap()
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    });
    let applied_count = results
        .iter()
        .filter(|o| matches!(o, WriteOutcome::Applied(_)))
        .count();
    let duplicates = results
        .iter()
        .filter(|o| **o == WriteOutcome::Duplicate)
        .count();
    assert_eq!(applied_count, 1, "{results:?}");
    assert_eq!(duplicates, THREADS - 1, "{results:?}");
    assert_eq!(store.payment_session(v1.id).unwrap().unwrap().version, 2);
    assert_eq!(store.timeline(l.id).unwrap().len(), 2);
    assert_eq!(store.deliveries(c, &all_deliveries()).unwrap().len(), 1);
}

pub fn webhook_events_take_consecutive_numbers<S: Ports>(store: &S) {
    let c = company(store);
    let l = link(store, c);
    let other = link(store, c);
    let first = store.enqueue_link_event(l.id, &builder(c, &l, 1)).unwrap();
    assert_eq!(sequences(&first), vec![r#"{"sequence":1}"#]);
    // Another link's numbers are its own.
    store
        .enqueue_link_event(other.id, &builder(c, &other, 1))
        .unwrap();

    let v1 = session(&l, SessionStatus::Quote, T0, T0 + 60_000);
    let firsts = std::cell::RefCell::new(Vec::new());
    let b = builder(c, &l, 2);
    let recording = |n: u64| {
        firsts.borrow_mut().push(n);
        b(n)
    };
    let out = applied(
        store
            .write_link_event(
                &LinkEventWrite {
                    webhook_events: 2,
                    ..insert(&l, &v1)
                },
                &recording,
            )
            .unwrap(),
    );
    assert_eq!(
        *firsts.borrow(),
        vec![2],
        "build is called once, with the first"
    );
    assert_eq!(
        sequences(&out),
        vec![r#"{"sequence":2}"#, r#"{"sequence":3}"#]
    );
    // What was returned is what was stored, through the delivery ports.
    for d in &out {
        assert_eq!(store.delivery(c, d.id).unwrap().as_ref(), Some(d));
    }
    let listed = store
        .deliveries(
            c,
            &DeliveryFilter {
                payment_link_uid: Some(l.uid.to_string()),
                ..all_deliveries()
            },
        )
        .unwrap();
    assert_eq!(listed.len(), 3);
    for d in &out {
        assert!(listed.contains(d));
    }
    // The next number follows.
    let next = store.enqueue_link_event(l.id, &builder(c, &l, 1)).unwrap();
    assert_eq!(sequences(&next), vec![r#"{"sequence":4}"#]);

    // Emitting for an unknown link: a fault, `build` never called, nothing written.
    let ghost = new_link(c, LinkStatus::Active, None);
    let e = store
        .write_link_event(
            &LinkEventWrite {
                webhook_events: 1,
                ..write(&ghost, SessionChange::None)
            },
            &never,
        )
        .unwrap_err();
    assert_eq!(e, Fault::new("unknown payment link"));
}

/// The newest session of a link among some statuses (a payment under way): other statuses and
/// other links never count.
pub fn latest_session_in_picks_the_newest_of_those_statuses<S: Ports>(store: &S) {
    let c = company(store);
    let l = link(store, c);
    let other = link(store, c);
    let held = [SessionStatus::Processing, SessionStatus::Underpaid];
    assert_eq!(store.latest_session_in(l.id, &held).unwrap(), None);
    let short = session(&l, SessionStatus::Underpaid, T0, T0 + 60_000);
    let newer_quote = session(&l, SessionStatus::Quote, T0 + 10, T0 + 60_000);
    let theirs = session(&other, SessionStatus::Processing, T0 + 20, T0 + 60_000);
    for s in [&newer_quote, &short, &theirs] {
        applied(
            store
                .write_link_event(&insert(s_link(s, &l, &other), s), &never)
                .unwrap(),
        );
    }
    assert_eq!(
        store.latest_session_in(l.id, &held).unwrap(),
        Some(short.clone())
    );
    let confirming = session(&l, SessionStatus::Processing, T0 + 5, T0 + 60_000);
    applied(
        store
            .write_link_event(&insert(&l, &confirming), &never)
            .unwrap(),
    );
    assert_eq!(
        store.latest_session_in(l.id, &held).unwrap(),
        Some(confirming)
    );
    assert_eq!(
        store
            .latest_session_in(l.id, &[SessionStatus::Underpaid])
            .unwrap(),
        Some(short)
    );
    assert_eq!(
        store
            .latest_session_in(l.id, &[SessionStatus::Complete])
            .unwrap(),
        None
    );
    assert_eq!(store.latest_session_in(l.id, &[]).unwrap(), None);
}

/// The link of `s` among two.
fn s_link<'a>(
    s: &PaymentSession,
    a: &'a crate::links::PaymentLink,
    b: &'a crate::links::PaymentLink,
) -> &'a crate::links::PaymentLink {
    if s.link_id == a.id {
        a
    } else {
        b
    }
}

pub fn latest_session_newest_first<S: Ports>(store: &S) {
    let c = company(store);
    let l = link(store, c);
    let other = link(store, c);
    // Two sessions in the same millisecond: the larger id is the newer one.
    let mut ids = [Uuid::now_v7(), Uuid::now_v7()];
    ids.sort();
    let old = session(&l, SessionStatus::Expired, T0, T0 + 1);
    let tie_low = session_with_id(
        PaymentSessionId(ids[0]),
        &l,
        SessionStatus::Quote,
        T0 + 10,
        T0 + 60_000,
    );
    let tie_high = session_with_id(
        PaymentSessionId(ids[1]),
        &l,
        SessionStatus::Cancelled,
        T0 + 10,
        T0 + 60_000,
    );
    let before = session(&l, SessionStatus::Quote, T0 + 5, T0 + 60_000);
    // Written out of order, so that insertion order cannot explain the answer.
    for s in [&tie_high, &old, &tie_low, &before] {
        applied(store.write_link_event(&insert(&l, s), &never).unwrap());
    }
    assert_eq!(store.latest_session(l.id).unwrap(), Some(tie_high));
    assert_eq!(store.latest_session(other.id).unwrap(), None);
    let mine = session(&other, SessionStatus::Pending, T0, T0 + 60_000);
    applied(
        store
            .write_link_event(&insert(&other, &mine), &never)
            .unwrap(),
    );
    assert_eq!(store.latest_session(other.id).unwrap(), Some(mine));
}

pub fn unfinished_sessions_oldest_first<S: Ports>(store: &S) {
    let c = company(store);
    let l = link(store, c);
    let other = link(store, c);
    let pending = session(&l, SessionStatus::Pending, T0 + 2, T0 + 60_000);
    let quote = session(&l, SessionStatus::Quote, T0 + 1, T0 + 60_000);
    let mut sessions = vec![pending.clone(), quote.clone()];
    for status in [
        SessionStatus::Processing,
        SessionStatus::Complete,
        SessionStatus::Underpaid,
        SessionStatus::RefundPending,
        SessionStatus::Refunded,
        SessionStatus::Expired,
        SessionStatus::Cancelled,
        SessionStatus::Failed,
    ] {
        sessions.push(session(&l, status, T0, T0 + 60_000));
    }
    sessions.push(session(&other, SessionStatus::Quote, T0, T0 + 60_000));
    for s in &sessions {
        let owner = if s.link_id == l.id { &l } else { &other };
        applied(store.write_link_event(&insert(owner, s), &never).unwrap());
    }
    assert_eq!(
        store.unfinished_sessions(l.id).unwrap(),
        vec![quote, pending]
    );
    assert_eq!(store.unfinished_sessions(other.id).unwrap().len(), 1);
    assert_eq!(
        store
            .unfinished_sessions(PaymentLinkId(Uuid::now_v7()))
            .unwrap(),
        vec![]
    );
}

mod by_status;
pub mod values;
pub use by_status::{
    company_collected_adds_up_by_day_and_asset, company_collected_follows_every_session_change,
    company_sessions_in_status_newest_change_first,
};
use values::*;
// The checkout cases store links without expiry (`values::link`), not the shared fixture.
use values::link;

fn dec(s: &str) -> Decimal {
    Decimal::parse(s).expect("a literal decimal")
}
