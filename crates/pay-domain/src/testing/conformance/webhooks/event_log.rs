//! The event log: one entry per event queued for a callback, written with its deliveries,
//! read newest first a page at a time with its deliveries' ids and outcome, pruned by age.

use super::*;

/// A delivery of group `group` (its event) created at `T0 + at`.
fn of_group(c: CompanyId, group: Uuid, at: i64) -> Delivery {
    Delivery {
        group_id: group,
        ..delivery(c, T0 + at, T0 + at)
    }
}

fn ids(page: &[EventLogEntry]) -> Vec<Uuid> {
    page.iter().map(|e| e.event.id).collect()
}

fn all() -> EventLogQuery {
    EventLogQuery {
        limit: 100,
        ..Default::default()
    }
}

/// Inserting deliveries logs one event per group of origin `event` (the first delivery's
/// envelope), in the same write; a manual resend joins its event; the event shows every
/// delivery's id, oldest first, and is delivered once one of them succeeded. Another
/// company's event is not found.
pub fn the_event_log_records_each_event_with_its_deliveries<S: Ports>(store: &S) {
    let (c, other) = (company(store), company(store));
    let group = Uuid::now_v7();
    let first = of_group(c, group, 10);
    let second = Delivery {
        target: CallbackKind::LegacyShared,
        ..of_group(c, group, 10)
    };
    store
        .insert_deliveries(&[first.clone(), second.clone()])
        .unwrap();
    let logged = store.event_log(c, &all()).unwrap();
    assert_eq!(logged.len(), 1, "one event for the group");
    let e = &logged[0];
    assert_eq!(e.event.id, group);
    assert_eq!(e.event.company_id, c);
    assert_eq!(e.event.body, first.body, "the first delivery's envelope");
    assert_eq!(e.event.created_at, first.created_at);
    assert_eq!(e.event.event, first.event);
    let mut both = vec![first.id, second.id];
    both.sort();
    let mut got = e.delivery_ids.clone();
    got.sort();
    assert_eq!(got, both);
    assert!(!e.delivered);

    // A manual resend, succeeded: the same event, now delivered, with three deliveries.
    let resend = Delivery {
        id: Uuid::now_v7(),
        origin: DeliveryOrigin::Manual,
        status: DeliveryStatus::Succeeded,
        next_attempt_at: None,
        created_at: ts(T0 + 20),
        ..first.clone()
    };
    store
        .insert_deliveries(std::slice::from_ref(&resend))
        .unwrap();
    let e = store.logged_event(c, group).unwrap().expect("logged");
    assert_eq!(e.delivery_ids.len(), 3);
    assert_eq!(e.delivery_ids[2], resend.id, "oldest first");
    assert!(e.delivered);
    assert_eq!(store.event_log(c, &all()).unwrap(), vec![e]);

    // A link's event is logged with its deliveries.
    let l = link(store, c);
    let made = store.enqueue_link_event(l.id, &builder(c, &l)).unwrap();
    let page = store.event_log(c, &all()).unwrap();
    // (created at T0, before the group's T0 + 10)
    assert_eq!(ids(&page), vec![group, made[0].group_id], "newest first");
    assert_eq!(page[1].event.body, made[0].body);

    // Another company sees none of it.
    assert_eq!(store.logged_event(other, group).unwrap(), None);
    assert!(store.event_log(other, &all()).unwrap().is_empty());
    assert_eq!(store.logged_event(c, Uuid::now_v7()).unwrap(), None);
}

/// A page: newest first (`created_at`, then id), strictly after the cursor, within the kinds,
/// the creation range, the delivered state and the grant asked for, at most `limit`.
pub fn the_event_log_pages_and_filters<S: Ports>(store: &S) {
    let c = company(store);
    let grant = Uuid::now_v7();
    let groups: Vec<Uuid> = (0..6).map(|_| Uuid::now_v7()).collect();
    let mut ds: Vec<Delivery> = groups
        .iter()
        .enumerate()
        .map(|(i, g)| of_group(c, *g, i as i64 * 1000))
        .collect();
    // Two events at the same instant: the greater id is the newer.
    ds[5].created_at = ds[4].created_at;
    ds[1].event = EventKind::Test;
    ds[2].event = EventKind::SubscriptionStatusChanged;
    ds[3].grant_id = Some(grant);
    ds[4].status = DeliveryStatus::Succeeded;
    ds[4].next_attempt_at = None;
    store.insert_deliveries(&ds).unwrap();
    let g = &groups;

    let page = |q: EventLogQuery| ids(&store.event_log(c, &q).unwrap());
    assert_eq!(page(all()), vec![g[5], g[4], g[3], g[2], g[1], g[0]]);
    let first = page(EventLogQuery { limit: 2, ..all() });
    assert_eq!(first, vec![g[5], g[4]]);
    let after = |i: usize| Some((ds[i].created_at, g[i]));
    assert_eq!(
        page(EventLogQuery {
            limit: 2,
            after: after(4),
            ..all()
        }),
        vec![g[3], g[2]]
    );
    assert_eq!(
        page(EventLogQuery {
            after: after(5),
            ..all()
        }),
        vec![g[4], g[3], g[2], g[1], g[0]],
        "the same instant, a smaller id"
    );
    assert_eq!(
        page(EventLogQuery {
            kinds: vec![EventKind::Test, EventKind::SubscriptionStatusChanged],
            ..all()
        }),
        vec![g[2], g[1]]
    );
    assert_eq!(
        page(EventLogQuery {
            created_gte: Some(ds[1].created_at),
            created_lt: Some(ds[4].created_at),
            ..all()
        }),
        vec![g[3], g[2], g[1]]
    );
    assert_eq!(
        page(EventLogQuery {
            delivered: Some(true),
            ..all()
        }),
        vec![g[4]]
    );
    assert_eq!(
        page(EventLogQuery {
            delivered: Some(false),
            ..all()
        }),
        vec![g[5], g[3], g[2], g[1], g[0]]
    );
    assert_eq!(
        page(EventLogQuery {
            grant: Some(grant),
            ..all()
        }),
        vec![g[3]]
    );
    assert!(page(EventLogQuery {
        grant: Some(Uuid::now_v7()),
        ..all()
    })
    .is_empty());
}

/// Pruning forgets the events created before the instant given (their deliveries stay) and
/// says how many.
pub fn the_event_log_is_pruned_by_age<S: Ports>(store: &S) {
    let (c, other) = (company(store), company(store));
    let (old, kept, elsewhere) = (Uuid::now_v7(), Uuid::now_v7(), Uuid::now_v7());
    let old_delivery = of_group(c, old, 0);
    store
        .insert_deliveries(&[
            old_delivery.clone(),
            of_group(c, kept, 5000),
            of_group(other, elsewhere, 1000),
        ])
        .unwrap();
    assert_eq!(store.prune_event_log(ts(T0 + 5000)).unwrap(), 2);
    assert_eq!(ids(&store.event_log(c, &all()).unwrap()), vec![kept]);
    assert!(store.event_log(other, &all()).unwrap().is_empty());
    assert_eq!(store.logged_event(c, old).unwrap(), None);
    assert!(store.delivery(c, old_delivery.id).unwrap().is_some());
    assert_eq!(store.prune_event_log(ts(T0 + 5000)).unwrap(), 0);
}
