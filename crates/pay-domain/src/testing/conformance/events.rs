//! `EventStore`: the outbox of domain events. A deciding write's event lands with it (and not
//! when the write is refused); the drain's claim takes what is due on real time, oldest first,
//! leases it, and never hands out a done event; a consumption is recorded once; housekeeping
//! forgets what was done, with its consumption records.

use uuid::Uuid;

use super::fixtures::*;
use crate::kernel::events::{Consumed, Consumer, DomainEvent, EventRecord, EventStore, GRACE};
use crate::kernel::ids::EventId;
use crate::links::ports::PaymentLinkStore;
use crate::links::LinkStatus;
use crate::tenancy::ports::TenancyStore;

/// The ports these cases need.
pub trait Ports: TenancyStore + PaymentLinkStore + EventStore + Sync {}

impl<T> Ports for T where T: TenancyStore + PaymentLinkStore + EventStore + Sync {}

fn stop_event(l: &crate::links::PaymentLink, at: i64) -> EventRecord {
    EventRecord::new(
        EventId(Uuid::now_v7()),
        DomainEvent::LinkStopped {
            company: l.company_id,
            link: l.uid.clone(),
        },
        ts(at),
    )
}

/// The link's compare-and-set move `from` -> `to`, written with `event` (at its instant).
fn moves<S: Ports>(
    store: &S,
    l: &crate::links::PaymentLink,
    from: LinkStatus,
    to: LinkStatus,
    event: &EventRecord,
) -> bool {
    store
        .set_link_status(
            l.company_id,
            &l.uid,
            from,
            to,
            event.created_at,
            Some(event),
        )
        .unwrap()
}

pub fn events_land_with_their_write_and_are_claimed_once_due<S: Ports>(store: &S) {
    let a = company(store);
    let l = link(store, a);
    let first = stop_event(&l, T0);
    // A refused move writes no event.
    assert!(!moves(
        store,
        &l,
        LinkStatus::Paused,
        LinkStatus::Archived,
        &first
    ));
    let grace = GRACE.whole_milliseconds() as i64;
    assert!(store
        .claim_due_events(ts(T0 + grace), ts(T0 + grace + 60_000), 10)
        .unwrap()
        .is_empty());
    assert!(moves(
        store,
        &l,
        LinkStatus::Active,
        LinkStatus::Paused,
        &first
    ));
    let second = stop_event(&l, T0 + 1);
    assert!(moves(
        store,
        &l,
        LinkStatus::Paused,
        LinkStatus::Archived,
        &second
    ));
    // Not due before its grace.
    assert!(store
        .claim_due_events(ts(T0 + grace - 1), ts(T0 + grace + 60_000), 10)
        .unwrap()
        .is_empty());
    let lease = T0 + grace + 60_000;
    let claimed = store
        .claim_due_events(ts(T0 + grace + 1), ts(lease), 1)
        .unwrap();
    assert_eq!(
        claimed,
        vec![EventRecord {
            due_at: ts(lease),
            ..first.clone()
        }],
        "oldest first, at most the limit, leased"
    );
    let rest = store
        .claim_due_events(ts(T0 + grace + 1), ts(lease), 10)
        .unwrap();
    assert_eq!(rest.iter().map(|e| e.id).collect::<Vec<_>>(), [second.id]);
    // Leased: nobody takes them until the lease ends.
    assert!(store
        .claim_due_events(ts(lease - 1), ts(lease + 60_000), 10)
        .unwrap()
        .is_empty());
    store.finish_event(first.id, ts(lease - 1)).unwrap();
    let again = store
        .claim_due_events(ts(lease), ts(lease + 60_000), 10)
        .unwrap();
    assert_eq!(again.iter().map(|e| e.id).collect::<Vec<_>>(), [second.id]);
    store.finish_event(second.id, ts(lease)).unwrap();
    assert!(store
        .claim_due_events(ts(lease + 120_000), ts(lease + 180_000), 10)
        .unwrap()
        .is_empty());
}

pub fn a_consumption_is_recorded_once_and_pruned_with_its_event<S: Ports>(store: &S) {
    let a = company(store);
    let l = link(store, a);
    let e = stop_event(&l, T0);
    assert!(moves(store, &l, LinkStatus::Active, LinkStatus::Paused, &e));
    let c = Consumed {
        event: e.id,
        consumer: Consumer::SessionEnd,
    };
    let other = Consumed {
        consumer: Consumer::IncomingActivity,
        ..c
    };
    assert!(!store.event_consumed(&c).unwrap());
    assert!(store.consume_event(&c, ts(T0)).unwrap());
    assert!(!store.consume_event(&c, ts(T0 + 1)).unwrap(), "once");
    assert!(store.event_consumed(&c).unwrap());
    assert!(!store.event_consumed(&other).unwrap(), "per consumer");
    // Not done: nothing to prune.
    assert_eq!(store.prune_events(ts(T0 + 1_000_000)).unwrap(), 0);
    store.finish_event(e.id, ts(T0 + 10)).unwrap();
    assert_eq!(
        store.prune_events(ts(T0 + 10)).unwrap(),
        0,
        "done at the cut: kept"
    );
    assert_eq!(store.prune_events(ts(T0 + 11)).unwrap(), 2);
    assert!(!store.event_consumed(&c).unwrap());
}
