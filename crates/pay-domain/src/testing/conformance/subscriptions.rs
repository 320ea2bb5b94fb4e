//! Contacts and subscriptions: upsert by e-mail key unique per company and kind, atomic under
//! concurrency; the scheduler's claim leases each due subscription to one claimer; a cycle is
//! never created twice.

use std::collections::HashSet;

use uuid::Uuid;

use super::fixtures::*;
use crate::customers::ports::ContactStore;
use crate::customers::{Contact, ContactKind, ContactRef, GivenFields, Upserted};
use crate::kernel::ids::*;
use crate::links::CreatedBy;
use crate::subscriptions::calendar::{Cadence, Interval};
use crate::subscriptions::ports::SubscriptionStore;
use crate::subscriptions::{Cycle, CycleStatus, Subscription, SubscriptionStatus};
use crate::tenancy::ports::TenancyStore;

/// The ports these cases need.
pub trait Ports: TenancyStore + ContactStore + SubscriptionStore + Sync {}

impl<T: TenancyStore + ContactStore + SubscriptionStore + Sync> Ports for T {}

fn contact(company: CompanyId, email: &str) -> Contact {
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

fn subscription(company: CompanyId, contact: ContactId, next_run: i64) -> (Subscription, Cycle) {
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

fn cycle(s: &Subscription, sequence: u32) -> Cycle {
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
        store.insert_subscription(&s, &c).unwrap();
        due.insert(s.id);
    }
    let (later, c) = subscription(a, bob.id, T0 + 10_000);
    store.insert_subscription(&later, &c).unwrap();
    let now = ts(T0 + 100);
    let lease = ts(T0 + 60_000);
    let claimed: Vec<Vec<SubscriptionId>> = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..4)
            .map(|_| {
                sc.spawn(|| {
                    store
                        .claim_due_subscriptions(now, lease, 7)
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
        .claim_due_subscriptions(now, lease, 50)
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
    let again = store.claim_due_subscriptions(now, lease, 50).unwrap();
    assert_eq!(again.len(), 1);
    assert_eq!((again[0].id, again[0].next_sequence), (one, 2));
    // After the lease, every due one is claimable again (the later one is due by then too).
    assert_eq!(
        store
            .claim_due_subscriptions(ts(T0 + 60_000), ts(T0 + 120_000), 50)
            .unwrap()
            .len(),
        21
    );
}

pub fn a_cycle_is_created_once<S: Ports>(store: &S) {
    let a = company(store);
    let bob = store
        .upsert_contact(&contact(a, "bob@shop.example"), GivenFields::default())
        .unwrap()
        .into_contact();
    let (s, c0) = subscription(a, bob.id, T0);
    store.insert_subscription(&s, &c0).unwrap();
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
