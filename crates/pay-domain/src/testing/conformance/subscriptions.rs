//! Contacts and subscriptions: upsert by e-mail key unique per company and kind, atomic under
//! concurrency; the scheduler's claim leases each due subscription to one claimer; a cycle is
//! never created twice; moves and cycle writes are compare-and-set; a completed session of a
//! cycle's link pays the cycle in the checkout write (the cross-port guarantee).

use std::collections::HashSet;

use uuid::Uuid;

use super::fixtures::*;
use crate::checkout::CheckoutStore;
use crate::customers::ports::ContactStore;
use crate::customers::{Contact, ContactKind, ContactRef, GivenFields, Upserted};
use crate::kernel::ids::*;
use crate::links::ports::PaymentLinkStore;
use crate::links::CreatedBy;
use crate::subscriptions::calendar::{Cadence, Interval};
use crate::subscriptions::ports::{StatusWrite, SubscriptionFilter, SubscriptionStore};
use crate::subscriptions::{Cycle, CycleStatus, Subscription, SubscriptionStatus};
use crate::tenancy::ports::TenancyStore;
use crate::webhooks::ports::WebhookStore;

/// The ports these cases need.
pub trait Ports:
    TenancyStore
    + ContactStore
    + SubscriptionStore
    + PaymentLinkStore
    + CheckoutStore
    + WebhookStore
    + Sync
{
}

impl<T> Ports for T where
    T: TenancyStore
        + ContactStore
        + SubscriptionStore
        + PaymentLinkStore
        + CheckoutStore
        + WebhookStore
        + Sync
{
}

/// A customer of `company` with this e-mail (named Bob), as stored.
pub fn contact(company: CompanyId, email: &str) -> Contact {
    Contact {
        id: ContactId(Uuid::now_v7()),
        uid: ContactUid::from_random(&random_alnum(24)).unwrap(),
        company_id: company,
        kind: ContactKind::Customer,
        email: email.into(),
        name: Some("Bob".into()),
        client_id: None,
        metadata: Default::default(),
        created_at: ts(T0),
        updated_at: ts(T0),
    }
}

/// An active monthly subscription of `contact` and its cycle 0 (scheduled), as stored.
pub fn subscription(
    company: CompanyId,
    contact: ContactId,
    next_run: i64,
) -> (Subscription, Cycle) {
    let s = Subscription {
        id: SubscriptionId(Uuid::now_v7()),
        uid: SubscriptionUid::from_random(&random_alnum(24)).unwrap(),
        company_id: company,
        contact_id: contact,
        status: SubscriptionStatus::Active,
        customer_email: "bob@shop.example".into(),
        label: "Pro".into(),
        description: None,
        amount_usd: "19.99".into(),
        settlement_asset: "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913".into(),
        interval: Interval::new(Cadence::Monthly, None).unwrap(),
        start_at: ts(T0),
        zone: "Europe/Berlin".parse().unwrap(),
        metadata: Default::default(),
        created_by: CreatedBy::Anonymous,
        created_at: ts(T0),
        updated_at: ts(T0),
        next_sequence: 1,
        next_run_at: Some(ts(next_run)),
    };
    let c = cycle(&s, 0);
    (s, c)
}

/// A scheduled cycle of `s`.
pub fn cycle(s: &Subscription, sequence: u32) -> Cycle {
    Cycle {
        id: CycleId(Uuid::now_v7()),
        subscription_id: s.id,
        company_id: s.company_id,
        sequence,
        due_at: ts(T0),
        amount_usd: "19.99".into(),
        status: CycleStatus::Scheduled,
        payment_link_id: None,
        payment_link_uid: None,
        issued_at: None,
        paid_at: None,
        reminders: 0,
        created_at: ts(T0),
        updated_at: ts(T0),
    }
}

pub fn upsert_is_keyed_by_email_per_company<S: Ports>(store: &S) {
    let a = company(store);
    let b = company(store);
    let first = store
        .upsert_contact(&contact(a, "Bob@Shop.example"), GivenFields::default())
        .unwrap();
    assert!(matches!(first, Upserted::Created(_)));
    let mut again = contact(a, "bob@shop.EXAMPLE");
    again.name = Some("Robert".into());
    again.updated_at = ts(T0 + 5);
    let got = store
        .upsert_contact(
            &again,
            GivenFields {
                name: true,
                ..Default::default()
            },
        )
        .unwrap();
    let Upserted::Updated(c) = got else {
        panic!("{got:?}")
    };
    assert_eq!(c.id, first.contact().id);
    assert_eq!(c.email, "Bob@Shop.example");
    assert_eq!(c.name.as_deref(), Some("Robert"));
    assert_eq!(c.updated_at, ts(T0 + 5));
    // Another company has its own.
    assert!(store
        .upsert_contact(&contact(b, "bob@shop.example"), GivenFields::default())
        .unwrap()
        .was_created());
    assert_eq!(
        store.contacts(a, ContactKind::Customer, 200).unwrap(),
        vec![c.clone()]
    );
    assert_eq!(
        store.contact(b, &ContactRef::Uid(c.uid.clone())).unwrap(),
        None
    );
    assert_eq!(
        store.contact(a, &ContactRef::Id(c.id)).unwrap(),
        Some(c.clone())
    );
    // Concurrent upserts of one new e-mail make one contact.
    let created: Vec<bool> = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..8)
            .map(|_| {
                sc.spawn(|| {
                    store
                        .upsert_contact(&contact(a, "carol@shop.example"), GivenFields::default())
                        .unwrap()
                        .was_created()
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(created.iter().filter(|c| **c).count(), 1);
    assert_eq!(
        store.contacts(a, ContactKind::Customer, 200).unwrap().len(),
        2
    );
}

pub fn claim_leases_each_due_subscription_once<S: Ports>(store: &S) {
    let a = company(store);
    let bob = store
        .upsert_contact(&contact(a, "bob@shop.example"), GivenFields::default())
        .unwrap()
        .into_contact();
    let mut due = HashSet::new();
    for i in 0..20 {
        let (s, c) = subscription(a, bob.id, T0 + i);
        store.insert_subscription(&s, &c, None).unwrap();
        due.insert(s.id);
    }
    let (later, c) = subscription(a, bob.id, T0 + 10_000);
    store.insert_subscription(&later, &c, None).unwrap();
    let now = ts(T0 + 100);
    let lease = ts(T0 + 60_000);
    let claimed: Vec<Vec<SubscriptionId>> = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..4)
            .map(|_| {
                sc.spawn(|| {
                    store
                        .claim_due_subscriptions(now, lease, 7, None)
                        .unwrap()
                        .into_iter()
                        .map(|s| s.id)
                        .collect()
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let all: Vec<SubscriptionId> = claimed.into_iter().flatten().collect();
    let set: HashSet<SubscriptionId> = all.iter().copied().collect();
    assert_eq!(all.len(), set.len(), "no subscription claimed twice");
    assert_eq!(set, due, "every due one, not the later one");
    assert!(store
        .claim_due_subscriptions(now, lease, 50, None)
        .unwrap()
        .is_empty());
    // Finishing with the lease ends it; a stale lease writes nothing.
    let one = *due.iter().next().unwrap();
    assert!(!store
        .finish_run(
            one,
            ts(T0 + 1),
            SubscriptionStatus::Active,
            2,
            Some(ts(T0 + 50))
        )
        .unwrap());
    assert!(store
        .finish_run(one, lease, SubscriptionStatus::Active, 2, Some(ts(T0 + 50)))
        .unwrap());
    let again = store.claim_due_subscriptions(now, lease, 50, None).unwrap();
    assert_eq!(again.len(), 1);
    assert_eq!((again[0].id, again[0].next_sequence), (one, 2));
    // After the lease, every due one is claimable again (the later one is due by then too).
    assert_eq!(
        store
            .claim_due_subscriptions(ts(T0 + 60_000), ts(T0 + 120_000), 50, None)
            .unwrap()
            .len(),
        21
    );
}

/// A moved test clock runs its own company's billing: the claim limited to one company takes
/// none of another's, and the next run after an instant is the company's own earliest later
/// one (leased or not).
pub fn a_company_claim_and_its_next_run_stay_in_the_company<S: Ports>(store: &S) {
    let (a, b) = (company(store), company(store));
    let mut due_a = HashSet::new();
    for (co, next_runs) in [(a, [T0 + 10, T0 + 20]), (b, [T0 + 5, T0 + 15])] {
        let bob = store
            .upsert_contact(&contact(co, "bob@shop.example"), GivenFields::default())
            .unwrap()
            .into_contact();
        for at in next_runs.into_iter().chain([T0 + 5_000]) {
            let (s, c) = subscription(co, bob.id, at);
            store.insert_subscription(&s, &c, None).unwrap();
            if co == a && at < T0 + 100 {
                due_a.insert(s.id);
            }
        }
    }
    assert_eq!(store.next_run_after(a, ts(T0)).unwrap(), Some(ts(T0 + 10)));
    assert_eq!(store.next_run_after(b, ts(T0)).unwrap(), Some(ts(T0 + 5)));
    assert_eq!(
        store.next_run_after(a, ts(T0 + 10)).unwrap(),
        Some(ts(T0 + 20)),
        "strictly after"
    );
    assert_eq!(store.next_run_after(a, ts(T0 + 5_000)).unwrap(), None);
    let (now, lease) = (ts(T0 + 100), ts(T0 + 60_000));
    let claimed: HashSet<SubscriptionId> = store
        .claim_due_subscriptions(now, lease, 50, Some(a))
        .unwrap()
        .into_iter()
        .map(|s| s.id)
        .collect();
    assert_eq!(
        claimed, due_a,
        "a's due ones only, not b's, not a's later one"
    );
    assert!(store
        .claim_due_subscriptions(now, lease, 50, Some(a))
        .unwrap()
        .is_empty());
    assert_eq!(
        store.next_run_after(a, ts(T0)).unwrap(),
        Some(ts(T0 + 10)),
        "a leased subscription still names its next run"
    );
    let rest = store.claim_due_subscriptions(now, lease, 50, None).unwrap();
    assert_eq!(rest.len(), 2, "b's two due ones are left: {rest:?}");
    assert!(rest.iter().all(|s| s.company_id == b));
}

pub fn a_cycle_is_created_once<S: Ports>(store: &S) {
    let a = company(store);
    let bob = store
        .upsert_contact(&contact(a, "bob@shop.example"), GivenFields::default())
        .unwrap()
        .into_contact();
    let (s, c0) = subscription(a, bob.id, T0);
    store.insert_subscription(&s, &c0, None).unwrap();
    let inserted: Vec<bool> = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..6)
            .map(|_| sc.spawn(|| store.insert_cycle(&cycle(&s, 1)).unwrap()))
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(inserted.iter().filter(|x| **x).count(), 1);
    let cycles = store.cycles(a, &[s.id]).unwrap();
    assert_eq!(
        cycles.iter().map(|c| c.sequence).collect::<Vec<_>>(),
        [0, 1]
    );
    assert_eq!(cycles[0], c0);
}

pub fn subscriptions_round_trip_and_moves_are_compare_and_set<S: Ports>(store: &S) {
    let a = company(store);
    let bob = store
        .upsert_contact(&contact(a, "bob@shop.example"), GivenFields::default())
        .unwrap()
        .into_contact();
    let (mut s, c0) = subscription(a, bob.id, T0 + 100);
    let grant = Uuid::now_v7();
    s.created_by = CreatedBy::Grant(grant);
    s.description = Some("Monthly plan".into());
    s.interval = Interval::new(Cadence::Weekly, Some(3)).unwrap();
    s.metadata
        .insert("plan".into(), serde_json::json!({"tier": 2}));
    store.insert_subscription(&s, &c0, None).unwrap();
    let (other, c) = subscription(a, bob.id, T0 + 100);
    store.insert_subscription(&other, &c, None).unwrap();
    // Read back exactly; the grant filter; another company sees nothing.
    assert_eq!(store.subscription(a, &s.uid).unwrap(), Some(s.clone()));
    assert_eq!(store.subscription(company(store), &s.uid).unwrap(), None);
    let mine = SubscriptionFilter {
        grant_id: Some(grant),
    };
    assert_eq!(store.subscriptions(a, mine, 200).unwrap(), vec![s.clone()]);
    assert_eq!(
        store
            .subscriptions(a, SubscriptionFilter::default(), 200)
            .unwrap(),
        vec![other.clone(), s.clone()]
    );
    assert_eq!(store.contact_subscriptions(a, bob.id).unwrap().len(), 2);
    // Cycle writes are compare-and-set.
    let l = link(store, a);
    assert!(store.open_cycle(c0.id, l.id, &l.uid, ts(T0 + 1)).unwrap());
    assert!(!store.open_cycle(c0.id, l.id, &l.uid, ts(T0 + 2)).unwrap());
    assert!(store.set_cycle_reminders(c0.id, 0, 1).unwrap());
    assert!(!store.set_cycle_reminders(c0.id, 0, 2).unwrap());
    let from = CycleStatus::Open;
    assert!(store
        .set_cycle_status(c0.id, from, CycleStatus::Overdue, ts(T0 + 3))
        .unwrap());
    assert!(!store
        .set_cycle_status(c0.id, from, CycleStatus::Paid, ts(T0 + 4))
        .unwrap());
    let got = store.cycles(a, &[s.id]).unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(
        (got[0].status, got[0].reminders, got[0].issued_at),
        (CycleStatus::Overdue, 1, Some(ts(T0 + 1)))
    );
    assert_eq!(got[0].payment_link_uid.as_ref(), Some(&l.uid));
    // A cancel moves the status once, cancels the unpaid cycles and records its deliveries.
    let mut hook = delivery(a, T0 + 5, T0 + 5);
    hook.subscription_uid = Some(s.uid.to_string());
    let cancel = StatusWrite {
        company: a,
        subscription: s.id,
        from: SubscriptionStatus::Active,
        to: SubscriptionStatus::Cancelled,
        at: ts(T0 + 5),
        next_sequence: 1,
        next_run_at: None,
        cancel_unpaid_cycles: true,
        deliveries: vec![hook],
    };
    assert!(store.move_subscription(&cancel).unwrap());
    let again = StatusWrite {
        deliveries: vec![delivery(a, T0 + 6, T0 + 6)],
        ..cancel.clone()
    };
    assert!(!store.move_subscription(&again).unwrap());
    let after = store.subscription(a, &s.uid).unwrap().unwrap();
    assert_eq!(
        (after.status, after.next_run_at, after.updated_at),
        (SubscriptionStatus::Cancelled, None, ts(T0 + 5))
    );
    assert_eq!(
        store.cycles(a, &[s.id]).unwrap()[0].status,
        CycleStatus::Cancelled
    );
    let all = super::checkout::values::all_deliveries();
    assert_eq!(store.deliveries(a, &all).unwrap().len(), 1);
    // The other subscription did not move.
    assert_eq!(
        store.cycles(a, &[other.id]).unwrap()[0].status,
        CycleStatus::Scheduled
    );
}

/// A cycle payment (the consumption of a completion event): compare-and-set on the cycle's
/// status, the subscription's next run brought forward (never pushed back), and the event's
/// consumption recorded with it, so the same event pays nothing twice; a stale payment writes
/// nothing, its consumption included. The cycle is found by its invoice link.
pub fn a_cycle_is_paid_once_per_event<S: Ports>(store: &S) {
    use crate::kernel::events::{Consumed, Consumer};
    use crate::subscriptions::ports::{CyclePaid, CyclePayment};
    let a = company(store);
    let bob = store
        .upsert_contact(&contact(a, "bob@shop.example"), GivenFields::default())
        .unwrap()
        .into_contact();
    let (s, c0) = subscription(a, bob.id, T0 + 50_000);
    store.insert_subscription(&s, &c0, None).unwrap();
    let l = link(store, a);
    assert_eq!(store.cycle_of_link(l.id).unwrap(), None);
    assert!(store.open_cycle(c0.id, l.id, &l.uid, ts(T0)).unwrap());
    let open = store.cycle_of_link(l.id).unwrap().unwrap();
    assert_eq!((open.id, open.status), (c0.id, CycleStatus::Open));
    let event = |n: u128| Consumed {
        event: EventId(Uuid::from_u128(n)),
        consumer: Consumer::SubscriptionCycle,
    };
    let pay = |consumed: Consumed, from: CycleStatus| CyclePayment {
        consumed,
        cycle: c0.id,
        from,
        subscription: s.id,
        at: ts(T0 + 20),
    };
    // Stale: nothing written, the event not consumed.
    assert_eq!(
        store
            .pay_cycle(&pay(event(1), CycleStatus::Overdue))
            .unwrap(),
        CyclePaid::Stale
    );
    assert_eq!(store.cycle_of_link(l.id).unwrap().unwrap(), open);
    assert_eq!(
        store.pay_cycle(&pay(event(1), CycleStatus::Open)).unwrap(),
        CyclePaid::Applied
    );
    let c = store.cycle_of_link(l.id).unwrap().unwrap();
    assert_eq!(
        (c.status, c.paid_at, c.updated_at),
        (CycleStatus::Paid, Some(ts(T0 + 20)), ts(T0 + 20))
    );
    let after = store.subscription(a, &s.uid).unwrap().unwrap();
    assert_eq!(after.next_run_at, Some(ts(T0 + 20)));
    // The same event again: nothing.
    assert_eq!(
        store.pay_cycle(&pay(event(1), CycleStatus::Open)).unwrap(),
        CyclePaid::AlreadyConsumed
    );
    assert_eq!(store.cycle_of_link(l.id).unwrap().unwrap(), c);
}
