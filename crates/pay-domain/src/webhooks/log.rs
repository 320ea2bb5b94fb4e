//! The event log: every event queued for a callback (payment and subscription events, test
//! events), kept with the envelope its first delivery carried, so a receiver that missed
//! deliveries can page through them and reconcile without a resend. An event is the group of
//! its deliveries (`x-pay-delivery-group-id`): the stores record it in the transaction that
//! inserts the group's first deliveries (origin `event`); manual resends join the group.

use std::collections::BTreeMap;

use time::Duration;

use crate::kernel::error::NotFound;
use crate::kernel::ids::CompanyId;
use crate::kernel::timestamp::Timestamp;

use super::delivery::{Delivery, DeliveryOrigin, DeliveryStatus};
use super::event::EventKind;

/// Event-log page size: default and most.
pub const EVENTS_LIMIT_DEFAULT: usize = 10;
pub const EVENTS_LIMIT_MAX: usize = 100;
/// How long events are kept unless configured (`PAY_EVENTS_RETENTION_DAYS`).
pub const EVENTS_KEPT_DEFAULT: Duration = Duration::days(30);
/// An event of another company or grant, or one no longer kept.
pub const EVENT_NOT_FOUND: NotFound = NotFound { kind: "Event" };

/// One event as the log keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoggedEvent {
    /// The group id of its deliveries.
    pub id: uuid::Uuid,
    pub company_id: CompanyId,
    /// The OAuth grant whose subscription receives it (a grant's token sees only these).
    pub grant_id: Option<uuid::Uuid>,
    pub event: EventKind,
    pub payment_link_uid: Option<String>,
    pub subscription_uid: Option<String>,
    /// The envelope (raw JSON) as the event's first delivery carries it.
    pub body: String,
    /// The envelope's `createdAt` (the company's clock).
    pub created_at: Timestamp,
}

impl LoggedEvent {
    /// The events that inserting `deliveries` records: one per group of origin `event`, from
    /// its first delivery in the slice. Manual resends record nothing (their group is known).
    pub fn of_deliveries(deliveries: &[Delivery]) -> Vec<LoggedEvent> {
        let mut out: Vec<LoggedEvent> = Vec::new();
        for d in deliveries {
            if d.origin != DeliveryOrigin::Event || out.iter().any(|e| e.id == d.group_id) {
                continue;
            }
            out.push(LoggedEvent {
                id: d.group_id,
                company_id: d.company_id,
                grant_id: d.grant_id,
                event: d.event,
                payment_link_uid: d.payment_link_uid.clone(),
                subscription_uid: d.subscription_uid.clone(),
                body: d.body.clone(),
                created_at: d.created_at,
            });
        }
        out
    }
}

/// An event with what became of its deliveries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventLogEntry {
    pub event: LoggedEvent,
    /// Its deliveries (the first ones, then manual resends), oldest first.
    pub delivery_ids: Vec<uuid::Uuid>,
    /// Whether one of its deliveries succeeded (a 2xx answer).
    pub delivered: bool,
}

impl EventLogEntry {
    /// For stores that hold deliveries in memory: `event` with the ids and outcome of the
    /// deliveries of its group among `deliveries`.
    pub fn of<'a>(
        event: LoggedEvent,
        deliveries: impl IntoIterator<Item = &'a Delivery>,
    ) -> EventLogEntry {
        let mut mine: Vec<&Delivery> = deliveries
            .into_iter()
            .filter(|d| d.group_id == event.id)
            .collect();
        mine.sort_by_key(|d| (d.created_at, d.id));
        EventLogEntry {
            delivered: mine.iter().any(|d| d.status == DeliveryStatus::Succeeded),
            delivery_ids: mine.iter().map(|d| d.id).collect(),
            event,
        }
    }
}

/// What a page of the log holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventLogQuery {
    /// Most entries returned.
    pub limit: usize,
    /// Only events strictly older than this one (`created_at`, then id, descending).
    pub after: Option<(Timestamp, uuid::Uuid)>,
    /// Only these kinds (none: all).
    pub kinds: Vec<EventKind>,
    pub created_gte: Option<Timestamp>,
    pub created_lt: Option<Timestamp>,
    /// Only events one of whose deliveries succeeded (true) or none did (false).
    pub delivered: Option<bool>,
    /// Only the events of this OAuth grant.
    pub grant: Option<uuid::Uuid>,
}

impl EventLogQuery {
    /// Whether the entry belongs on a page of this query (everything but the limit).
    pub fn admits(&self, e: &EventLogEntry) -> bool {
        let ev = &e.event;
        self.after
            .is_none_or(|(at, id)| (ev.created_at, ev.id) < (at, id))
            && (self.kinds.is_empty() || self.kinds.contains(&ev.event))
            && self.created_gte.is_none_or(|t| ev.created_at >= t)
            && self.created_lt.is_none_or(|t| ev.created_at < t)
            && self.delivered.is_none_or(|d| e.delivered == d)
            && self.grant.is_none_or(|g| ev.grant_id == Some(g))
    }

    /// For stores that hold the log in memory: the company's entries this query admits,
    /// newest first, at most `limit`.
    pub fn page(
        &self,
        company: CompanyId,
        entries: impl IntoIterator<Item = EventLogEntry>,
    ) -> Vec<EventLogEntry> {
        let sorted: BTreeMap<(Timestamp, uuid::Uuid), EventLogEntry> = entries
            .into_iter()
            .filter(|e| e.event.company_id == company && self.admits(e))
            .map(|e| ((e.event.created_at, e.event.id), e))
            .collect();
        sorted.into_values().rev().take(self.limit).collect()
    }
}

/// What a caller asks of the log (the service turns it into an `EventLogQuery`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventLogRequest {
    /// 0: the default.
    pub limit: usize,
    /// An event id of the caller's: the page starts after it.
    pub starting_after: Option<uuid::Uuid>,
    pub kinds: Vec<EventKind>,
    pub created_gte: Option<Timestamp>,
    pub created_lt: Option<Timestamp>,
    pub delivered: Option<bool>,
}

/// One page of the log, and whether older entries follow it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventLogPage {
    pub data: Vec<EventLogEntry>,
    pub has_more: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::webhooks::{CallbackKind, PaymentEvent};

    fn at(s: i64) -> Timestamp {
        Timestamp::from_unix_millis(s * 1000).unwrap()
    }

    fn delivery(group: u128, id: u128, origin: DeliveryOrigin, created: i64) -> Delivery {
        Delivery {
            id: uuid::Uuid::from_u128(id),
            group_id: uuid::Uuid::from_u128(group),
            company_id: CompanyId(uuid::Uuid::from_u128(7)),
            origin,
            event: EventKind::Payment(PaymentEvent::StatusChanged),
            status: DeliveryStatus::Pending,
            attempts: 0,
            next_attempt_at: Some(at(created)),
            last_attempt_at: None,
            last_response_status: None,
            last_error: None,
            payment_link_uid: Some("uid".into()),
            subscription_uid: None,
            grant_id: None,
            order_id: None,
            target: CallbackKind::CompanyPayment,
            url: "https://x.example".into(),
            body: format!("{{\"deliveryId\":\"{}\"}}", uuid::Uuid::from_u128(id)),
            created_at: at(created),
        }
    }

    #[test]
    fn one_event_per_group_of_origin_event_from_its_first_delivery() {
        let ds = [
            delivery(1, 10, DeliveryOrigin::Event, 5),
            delivery(1, 11, DeliveryOrigin::Event, 5),
            delivery(2, 12, DeliveryOrigin::Manual, 6),
        ];
        let events = LoggedEvent::of_deliveries(&ds);
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].id, uuid::Uuid::from_u128(1));
        assert_eq!(events[0].body, ds[0].body);
        assert_eq!(events[0].created_at, at(5));
    }

    #[test]
    fn an_entry_is_delivered_once_one_delivery_of_its_group_succeeded() {
        let event =
            LoggedEvent::of_deliveries(&[delivery(1, 10, DeliveryOrigin::Event, 5)]).remove(0);
        let mut resend = delivery(1, 13, DeliveryOrigin::Manual, 9);
        let other = delivery(2, 14, DeliveryOrigin::Event, 1);
        let first = delivery(1, 10, DeliveryOrigin::Event, 5);
        let e = EventLogEntry::of(event.clone(), [&resend, &other, &first]);
        assert_eq!(e.delivery_ids, vec![first.id, resend.id]);
        assert!(!e.delivered);
        resend.status = DeliveryStatus::Succeeded;
        assert!(EventLogEntry::of(event, [&resend, &first]).delivered);
    }

    #[test]
    fn a_page_is_newest_first_after_the_cursor_within_the_filters() {
        let company = CompanyId(uuid::Uuid::from_u128(7));
        let entries: Vec<EventLogEntry> = (1..=5)
            .map(|i| {
                let d = delivery(i, 100 + i, DeliveryOrigin::Event, i as i64);
                EventLogEntry {
                    event: LoggedEvent::of_deliveries(&[d]).remove(0),
                    delivery_ids: vec![],
                    delivered: i % 2 == 0,
                }
            })
            .collect();
        let ids = |page: Vec<EventLogEntry>| -> Vec<u128> {
            page.iter().map(|e| e.event.id.as_u128()).collect()
        };
        let q = EventLogQuery {
            limit: 2,
            ..Default::default()
        };
        assert_eq!(ids(q.page(company, entries.clone())), vec![5, 4]);
        let q = EventLogQuery {
            limit: 10,
            after: Some((at(4), uuid::Uuid::from_u128(4))),
            created_gte: Some(at(2)),
            ..Default::default()
        };
        assert_eq!(ids(q.page(company, entries.clone())), vec![3, 2]);
        let q = EventLogQuery {
            limit: 10,
            delivered: Some(false),
            created_lt: Some(at(5)),
            ..Default::default()
        };
        assert_eq!(ids(q.page(company, entries.clone())), vec![3, 1]);
        let other = CompanyId(uuid::Uuid::from_u128(8));
        assert!(q.page(other, entries.clone()).is_empty());
        let q = EventLogQuery {
            limit: 10,
            kinds: vec![EventKind::Test],
            ..Default::default()
        };
        assert!(q.page(company, entries.clone()).is_empty());
        let q = EventLogQuery {
            limit: 10,
            grant: Some(uuid::Uuid::from_u128(3)),
            ..Default::default()
        };
        assert!(q.page(company, entries).is_empty());
    }
}
