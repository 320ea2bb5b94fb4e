//! The cross-context reactions through the event outbox, on a whole store: the deciding write
//! commits its event, the process "dies" before the reacting write, and the drain replays it
//! (nothing is lost); a second telling of the same event changes nothing. One case per
//! reaction: a completed session pays its subscription cycle, records its incoming transfer,
//! a stopped link ends its sessions, and a moved test clock runs the billing work due on it.
//! The cases build `Pay` over the store with the fakes, write what the deciding context writes
//! (its row and its event, in one port call), and let the real consumers react.

use std::sync::atomic::AtomicI64;
use std::sync::Arc;

use super::checkout::values::{moved, session, update, write};
use super::fixtures::*;
use crate::app::{Adapters, AppConfig, Pay, PayStore, Stores};
use crate::bookkeeping::ActivityFilter;
use crate::checkout::machine::SessionStatus;
use crate::checkout::{PaymentSession, SessionChange};
use crate::customers::GivenFields;
use crate::kernel::assets::AssetCatalogue;
use crate::kernel::events::{DomainEvent, EventRecord, GRACE};
use crate::kernel::ids::EventId;
use crate::kernel::ports::Clock;
use crate::links::{LinkStatus, PaymentLink};
use crate::subscriptions::CycleStatus;
use crate::testing::{
    FakeCrypto, FakePortalKeys, FakePrices, FakeProcessor, FakeSealer, FakeSigner, FixedClock,
    MemFiles,
};

/// `Pay` over `store`, its clock at `T0`.
fn pay_over<S: PayStore + 'static>(store: Arc<S>) -> (Pay, Arc<FixedClock>) {
    let clock = Arc::new(FixedClock(AtomicI64::new(T0)));
    let pay = Pay::new(
        AppConfig {
            assets: AssetCatalogue::builtin(),
            public_pay_url: "https://pay.example".into(),
            limits: Default::default(),
            sandbox: true,
            allow_private_targets: false,
            billing: Default::default(),
            oauth: Default::default(),
            webhook_circuit: Default::default(),
            events_kept: crate::webhooks::EVENTS_KEPT_DEFAULT,
        },
        Stores::all_in(store),
        Adapters {
            clock: clock.clone(),
            crypto: Arc::new(FakeCrypto::default()),
            sealer: Arc::new(FakeSealer::default()),
            signer: Arc::new(FakeSigner::default()),
            wall_clock: clock.clone(),
            processor: Arc::new(FakeProcessor::default()),
            prices: Arc::new(FakePrices),
            portal_keys: Arc::new(FakePortalKeys::default()),
            files: Arc::new(MemFiles::default()),
        },
    );
    (pay, clock)
}

/// A company's link with a pending session (expiring at `expires_at`) in the store.
fn pending_payment<S: PayStore>(
    store: &S,
    a: crate::kernel::ids::CompanyId,
    expires_at: i64,
) -> (PaymentLink, PaymentSession) {
    let l = link(store, a);
    let pending = session(&l, SessionStatus::Pending, T0 + 10, expires_at);
    store
        .write_link_event(
            &write(&l, SessionChange::Insert(pending.clone())),
            &|_| vec![],
        )
        .unwrap();
    (l, pending)
}

/// The checkout's completing write: the session moves to `complete` with its event (what
/// `CheckoutService` writes), the reactions not run (the process died after the commit).
fn complete<S: PayStore>(
    store: &S,
    l: &PaymentLink,
    pending: &PaymentSession,
) -> (PaymentSession, EventRecord) {
    let done = moved(pending, SessionStatus::Complete, T0 + 20);
    let event = EventRecord::new(
        EventId(uuid::Uuid::now_v7()),
        DomainEvent::SessionCompleted {
            company: l.company_id,
            link: l.id,
            session: done.id,
            at: done.updated_at,
        },
        ts(T0),
    );
    let w = crate::checkout::LinkEventWrite {
        events: vec![event.clone()],
        ..update(l, pending, &done)
    };
    store.write_link_event(&w, &|_| vec![]).unwrap();
    (done, event)
}

/// The drain after the grace: replays exactly one event; a second round finds nothing.
fn drain_replays_one(pay: &Pay, clock: &FixedClock) {
    clock.advance(GRACE);
    let report = pay.drain_events().unwrap();
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    assert_eq!(report.replayed, 1);
    assert_eq!(pay.drain_events().unwrap().replayed, 0);
}

/// A completed session pays its subscription cycle: lost to a crash, replayed by the drain;
/// told again, nothing changes.
pub fn a_crash_before_the_cycle_payment_loses_nothing<S: PayStore + 'static>(store: Arc<S>) {
    let (pay, clock) = pay_over(store.clone());
    let a = company(&*store);
    let bob = store
        .upsert_contact(&contact_value(a), GivenFields::default())
        .unwrap()
        .into_contact();
    let (s, c0) = super::subscriptions::subscription(a, bob.id, T0 + 50_000);
    store.insert_subscription(&s, &c0, None).unwrap();
    let (l, pending) = pending_payment(&*store, a, T0 + 90_000);
    assert!(store.open_cycle(c0.id, l.id, &l.uid, ts(T0)).unwrap());
    let (_, event) = complete(&*store, &l, &pending);
    // The crash: the session is complete, its cycle not yet paid.
    assert_eq!(
        store.cycles(a, &[s.id]).unwrap()[0].status,
        CycleStatus::Open
    );
    drain_replays_one(&pay, &clock);
    let paid = store.cycles(a, &[s.id]).unwrap();
    assert_eq!(
        (paid[0].status, paid[0].paid_at),
        (CycleStatus::Paid, Some(ts(T0 + 20)))
    );
    let after = store.subscription(a, &s.uid).unwrap().unwrap();
    assert_eq!(after.next_run_at, Some(ts(T0 + 20)));
    // A replay (a second drain that claimed it too, a redelivery): nothing changes.
    pay.events().deliver(&[event], Clock::now(&*clock)).unwrap();
    assert_eq!(store.cycles(a, &[s.id]).unwrap(), paid);
    assert_eq!(store.subscription(a, &s.uid).unwrap().unwrap(), after);
}

/// A completed session records its incoming transfer: lost to a crash, replayed by the drain;
/// told again, nothing is recorded twice.
pub fn a_crash_before_the_incoming_activity_loses_nothing<S: PayStore + 'static>(store: Arc<S>) {
    let (pay, clock) = pay_over(store.clone());
    let a = company(&*store);
    let (l, pending) = pending_payment(&*store, a, T0 + 90_000);
    let (done, event) = complete(&*store, &l, &pending);
    let activities = || {
        store
            .activities(a, &ActivityFilter::default(), 10)
            .unwrap()
            .into_iter()
            .map(|(x, _)| x)
            .collect::<Vec<_>>()
    };
    assert!(activities().is_empty(), "the crash came before the record");
    drain_replays_one(&pay, &clock);
    let recorded = activities();
    assert_eq!(recorded.len(), 1);
    assert_eq!(recorded[0].payment_session_id, Some(done.id));
    assert_eq!(recorded[0].amount, done.expected_buy_amount);
    pay.events().deliver(&[event], Clock::now(&*clock)).unwrap();
    assert_eq!(activities(), recorded);
}

/// A stopped link ends its unfinished sessions: lost to a crash, replayed by the drain; told
/// again, nothing moves.
pub fn a_crash_before_the_session_end_loses_nothing<S: PayStore + 'static>(store: Arc<S>) {
    let (pay, clock) = pay_over(store.clone());
    let a = company(&*store);
    let (l, pending) = pending_payment(&*store, a, T0 + 90_000_000);
    let event = EventRecord::new(
        EventId(uuid::Uuid::now_v7()),
        DomainEvent::LinkStopped {
            company: a,
            link: l.uid.clone(),
        },
        ts(T0),
    );
    assert!(store
        .set_link_status(
            a,
            &l.uid,
            LinkStatus::Active,
            LinkStatus::Paused,
            ts(T0 + 30),
            Some(&event)
        )
        .unwrap());
    assert_eq!(
        store.payment_session(pending.id).unwrap().unwrap(),
        pending,
        "the crash came before the session's end"
    );
    drain_replays_one(&pay, &clock);
    let ended = store.payment_session(pending.id).unwrap().unwrap();
    assert!(!ended.status.is_unfinished(), "{:?}", ended.status);
    let timeline = store.timeline(l.id).unwrap();
    pay.events().deliver(&[event], Clock::now(&*clock)).unwrap();
    assert_eq!(store.payment_session(pending.id).unwrap().unwrap(), ended);
    assert_eq!(store.timeline(l.id).unwrap(), timeline);
}

/// A moved test clock runs the billing work due on it: the move (its offset and its
/// `ClockMoved` event, one write) survives a crash before the scheduler's work, the drain
/// replays it (the due cycle is issued), and told again nothing changes.
pub fn a_crash_before_the_billing_clock_work_loses_nothing<S: PayStore + 'static>(store: Arc<S>) {
    const HOUR: i64 = 3_600_000;
    let (pay, clock) = pay_over(store.clone());
    let a = company(&*store);
    let bob = store
        .upsert_contact(&contact_value(a), GivenFields::default())
        .unwrap()
        .into_contact();
    // Due an hour from now on the company's clock: nothing runs before the move.
    let (s, c0) = super::subscriptions::subscription(a, bob.id, T0 + HOUR);
    store.insert_subscription(&s, &c0, None).unwrap();
    let event = EventRecord::new(
        EventId(uuid::Uuid::now_v7()),
        DomainEvent::ClockMoved {
            company: a,
            until: ts(T0 + 2 * HOUR),
        },
        ts(T0),
    );
    assert_eq!(
        store
            .advance_test_clock(a, 2 * HOUR, 10 * HOUR, Some(&event))
            .unwrap(),
        Some(2 * HOUR)
    );
    // The crash: the clock moved, the scheduler has not run on it.
    assert_eq!(store.cycles(a, &[s.id]).unwrap(), vec![c0.clone()]);
    drain_replays_one(&pay, &clock);
    let issued = store.cycles(a, &[s.id]).unwrap();
    assert_eq!(issued[0].id, c0.id);
    assert_eq!(issued[0].status, CycleStatus::Open, "{issued:?}");
    assert!(issued[0].payment_link_uid.is_some(), "{issued:?}");
    let after = store.subscription(a, &s.uid).unwrap().unwrap();
    assert_ne!(after.next_run_at, s.next_run_at);
    // A replay: nothing is issued, queued or moved again.
    pay.events().deliver(&[event], Clock::now(&*clock)).unwrap();
    assert_eq!(store.cycles(a, &[s.id]).unwrap(), issued);
    assert_eq!(store.subscription(a, &s.uid).unwrap().unwrap(), after);
}

fn contact_value(company: crate::kernel::ids::CompanyId) -> crate::customers::Contact {
    super::subscriptions::contact(company, "bob@shop.example")
}
