//! The outbox gauges the metrics read: live deliveries of every company and the oldest one.

use super::*;

/// A store that answers `outbox_gauges` (the metrics' read) counts the live deliveries of
/// every company, claimed or not, with the oldest one's creation; terminal ones are not
/// counted. A store answering `None` is not checked.
pub fn outbox_gauges_count_live_deliveries<S: Ports>(store: &S) {
    let now = T0 + 10_000;
    let Some(empty) = store.outbox_gauges(ts(now)).unwrap() else {
        return;
    };
    assert_eq!(empty, crate::webhooks::ports::OutboxGauges::default());
    let (c, other) = (company(store), company(store));
    let mut retrying = delivery(c, T0 + 200, now - 1000);
    retrying.status = DeliveryStatus::Retrying;
    retrying.attempts = 1;
    let oldest = delivery(other, T0 + 100, now + 5000);
    let mut done = delivery(c, T0, now - 5000);
    done.status = DeliveryStatus::Succeeded;
    done.next_attempt_at = None;
    let mut failed = delivery(c, T0 + 50, now - 5000);
    failed.status = DeliveryStatus::Failed;
    failed.next_attempt_at = None;
    store
        .insert_deliveries(&[delivery(c, T0 + 300, now), retrying, oldest, done, failed])
        .unwrap();
    let want = crate::webhooks::ports::OutboxGauges {
        pending: 3,
        oldest_pending_at: Some(ts(T0 + 100)),
        circuits_open: 0,
    };
    assert_eq!(store.outbox_gauges(ts(now)).unwrap(), Some(want));
    // A claimed delivery is still queued.
    let claimed = store
        .claim_due_deliveries(ts(now), ts(now + LEASE), 100)
        .unwrap();
    assert_eq!(claimed.len(), 2);
    assert_eq!(store.outbox_gauges(ts(now)).unwrap(), Some(want));
}
