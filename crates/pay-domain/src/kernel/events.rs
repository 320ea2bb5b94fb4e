//! Domain events: what one context decided that another reacts to, through the outbox.
//!
//! The deciding context writes the event row in the transaction of its own write (as webhook
//! deliveries and mails are written). At once after that write, in the same request, every
//! consumer reacts in a write of its own that records the consumption (deduplicated by event
//! id: a second telling changes nothing), and the event is marked done. A crash between the
//! two writes leaves the event pending: `Events::drain` (run by the server's background loops)
//! claims it on a real-time lease once it is `GRACE` old and tells the consumers again, so an
//! effect is applied at least once and, by its event id, never twice.

use std::sync::Arc;

use time::Duration;

use crate::kernel::error::{Fault, PortResult};
use crate::kernel::ids::{CompanyId, EventId, LinkUid, PaymentLinkId, PaymentSessionId};
use crate::kernel::observers::Observers;
use crate::kernel::timestamp::Timestamp;

/// How long a new event is left to the request that wrote it before the drain takes it.
pub const GRACE: Duration = Duration::minutes(1);
/// How long a drain holds an event it claimed (a drain that dies lets it go after this).
pub const LEASE: Duration = Duration::minutes(1);
/// Events per drain round.
pub const DRAIN_BATCH: usize = 100;

/// What a context decided that others react to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DomainEvent {
    /// A payment session completed (checkout): its link's subscription cycle is paid, its
    /// incoming transfer is recorded in the company's wallet activity. `at` is the session's
    /// `updated_at` (its company's clock).
    SessionCompleted {
        company: CompanyId,
        link: PaymentLinkId,
        session: PaymentSessionId,
        at: Timestamp,
    },
    /// A merchant paused or archived a link (links): its unfinished sessions end.
    LinkStopped { company: CompanyId, link: LinkUid },
    /// A company's sandbox test clock moved one step (sandbox, in the clock's write): the work
    /// the company's subscriptions have due on the moved clock runs. `until` is where the
    /// whole move ends (what a later step supersedes by then is recorded, not announced).
    ClockMoved {
        company: CompanyId,
        until: Timestamp,
    },
}

impl DomainEvent {
    /// The stored `kind` column.
    pub fn kind(&self) -> &'static str {
        match self {
            DomainEvent::SessionCompleted { .. } => "session_completed",
            DomainEvent::LinkStopped { .. } => "link_stopped",
            DomainEvent::ClockMoved { .. } => "clock_moved",
        }
    }

    /// The company whose data the event is about.
    pub fn company(&self) -> CompanyId {
        match self {
            DomainEvent::SessionCompleted { company, .. }
            | DomainEvent::LinkStopped { company, .. }
            | DomainEvent::ClockMoved { company, .. } => *company,
        }
    }

    /// The stored `payload` column (JSON text), without the company (a column of its own).
    pub fn payload(&self) -> String {
        let v = match self {
            DomainEvent::SessionCompleted {
                link, session, at, ..
            } => serde_json::json!({
                "link": link.to_string(),
                "session": session.to_string(),
                "at": at.unix_millis(),
            }),
            DomainEvent::LinkStopped { link, .. } => serde_json::json!({ "link": link.as_str() }),
            DomainEvent::ClockMoved { until, .. } => {
                serde_json::json!({ "until": until.unix_millis() })
            }
        };
        v.to_string()
    }

    /// The event back from its stored columns.
    pub fn from_stored(company: CompanyId, kind: &str, payload: &str) -> PortResult<DomainEvent> {
        let bad = || Fault::new(format!("stored domain event {kind}: unreadable payload"));
        let v: serde_json::Value = serde_json::from_str(payload).map_err(|_| bad())?;
        let text = |name: &str| v.get(name).and_then(serde_json::Value::as_str);
        match kind {
            "session_completed" => Ok(DomainEvent::SessionCompleted {
                company,
                link: text("link")
                    .and_then(PaymentLinkId::parse)
                    .ok_or_else(bad)?,
                session: text("session")
                    .and_then(PaymentSessionId::parse)
                    .ok_or_else(bad)?,
                at: v
                    .get("at")
                    .and_then(serde_json::Value::as_i64)
                    .and_then(Timestamp::from_unix_millis)
                    .ok_or_else(bad)?,
            }),
            "link_stopped" => Ok(DomainEvent::LinkStopped {
                company,
                link: text("link").and_then(LinkUid::parse).ok_or_else(bad)?,
            }),
            "clock_moved" => Ok(DomainEvent::ClockMoved {
                company,
                until: v
                    .get("until")
                    .and_then(serde_json::Value::as_i64)
                    .and_then(Timestamp::from_unix_millis)
                    .ok_or_else(bad)?,
            }),
            _ => Err(Fault::new(format!("unknown domain event kind {kind}"))),
        }
    }
}

/// One event as the outbox holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventRecord {
    pub id: EventId,
    pub event: DomainEvent,
    /// When it was written (real time).
    pub created_at: Timestamp,
    /// When the drain may take it (real time): `GRACE` after it was written, then the end of
    /// each lease a drain took on it.
    pub due_at: Timestamp,
}

impl EventRecord {
    pub(crate) fn new(id: EventId, event: DomainEvent, now: Timestamp) -> EventRecord {
        EventRecord {
            id,
            event,
            created_at: now,
            due_at: now.plus(GRACE),
        }
    }
}

/// Who reacts to events, each under its own name (the consumption records are keyed by it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Consumer {
    /// Subscriptions: a completed session pays its link's cycle.
    SubscriptionCycle,
    /// Bookkeeping: a completed session records its incoming transfer.
    IncomingActivity,
    /// Checkout: a stopped link ends its unfinished sessions.
    SessionEnd,
    /// Subscriptions: a moved test clock runs the billing work due on it.
    BillingClock,
}

impl Consumer {
    pub const ALL: [Consumer; 4] = [
        Consumer::SubscriptionCycle,
        Consumer::IncomingActivity,
        Consumer::SessionEnd,
        Consumer::BillingClock,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Consumer::SubscriptionCycle => "subscription_cycle",
            Consumer::IncomingActivity => "incoming_activity",
            Consumer::SessionEnd => "session_end",
            Consumer::BillingClock => "billing_clock",
        }
    }
}

/// That `consumer` reacted to `event`: written with the consumer's reaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Consumed {
    pub event: EventId,
    pub consumer: Consumer,
}

/// The outbox of domain events. The deciding contexts' writes insert the rows (each port that
/// decides names its events in its write).
pub trait EventStore {
    /// Atomically claims up to `limit` events not done whose `due_at` has come (`<= now`,
    /// real time) and that are not leased, oldest first, and leases them until `lease_until`
    /// (their `due_at` becomes that). Concurrent claimers MUST NOT receive the same event.
    fn claim_due_events(
        &self,
        now: Timestamp,
        lease_until: Timestamp,
        limit: usize,
    ) -> PortResult<Vec<EventRecord>>;
    /// Whether `c.consumer` has consumed `c.event`.
    fn event_consumed(&self, c: &Consumed) -> PortResult<bool>;
    /// Records that `c.consumer` consumed `c.event`; false, writing nothing, when it was
    /// recorded before (atomic: of two concurrent calls one is true).
    fn consume_event(&self, c: &Consumed, at: Timestamp) -> PortResult<bool>;
    /// Every consumer has reacted: the event is done (never claimed again).
    fn finish_event(&self, id: EventId, at: Timestamp) -> PortResult<()>;
    /// Forgets events done before `before`, with their consumption records. Returns how many
    /// rows went.
    fn prune_events(&self, before: Timestamp) -> PortResult<u64>;
}

/// A context that reacts to events; it ignores the kinds it does not consume. Telling it an
/// event again MUST change nothing (it records its consumption by event id).
pub trait EventConsumer: Send + Sync {
    fn consume(&self, event: &EventRecord) -> PortResult<()>;
}

/// What a drain round did.
#[derive(Debug, Default)]
pub struct DrainReport {
    /// Events a crash or a failure had left pending, now done.
    pub replayed: usize,
    /// Events a consumer failed on again (retried when their lease ends).
    pub failed: Vec<(EventId, Fault)>,
}

/// The outbox of domain events and who consumes them; clones share both.
#[derive(Clone)]
pub struct Events {
    store: Arc<dyn EventStore + Send + Sync>,
    consumers: Observers<dyn EventConsumer>,
    /// Tests: the process "dies" right after each deciding write (no consumer is told).
    #[cfg(any(test, feature = "testing"))]
    crash: Arc<std::sync::atomic::AtomicBool>,
}

impl std::fmt::Debug for Events {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Events").finish_non_exhaustive()
    }
}

impl Events {
    pub fn new(store: Arc<dyn EventStore + Send + Sync>) -> Events {
        Events {
            store,
            consumers: Observers::default(),
            #[cfg(any(test, feature = "testing"))]
            crash: Arc::default(),
        }
    }

    /// Tells `consumer` of every event from now on (held weakly, as observers are).
    pub fn subscribe(&self, consumer: &Arc<dyn EventConsumer>) {
        self.consumers.add(consumer);
    }

    /// Tests: with `true`, every deciding write is followed by nothing, as if the process died
    /// between the two writes; the events wait for `drain`.
    #[cfg(any(test, feature = "testing"))]
    pub fn crash_after_writes(&self, on: bool) {
        self.crash.store(on, std::sync::atomic::Ordering::SeqCst);
    }

    #[cfg(any(test, feature = "testing"))]
    fn crashed(&self) -> bool {
        self.crash.load(std::sync::atomic::Ordering::SeqCst)
    }

    #[cfg(not(any(test, feature = "testing")))]
    fn crashed(&self) -> bool {
        false
    }

    /// At once after the write that holds `records` committed: every consumer reacts, then
    /// each event is done. A failure is returned (the caller's request fails as it did when
    /// the reaction was a direct call) and leaves the event to the drain.
    pub(crate) fn deliver(&self, records: &[EventRecord], now: Timestamp) -> PortResult<()> {
        if self.crashed() {
            return Ok(());
        }
        for r in records {
            self.tell(r)?;
            self.store.finish_event(r.id, now)?;
        }
        Ok(())
    }

    fn tell(&self, r: &EventRecord) -> PortResult<()> {
        for c in self.consumers.each() {
            c.consume(r)?;
        }
        Ok(())
    }

    /// Whether `c` was recorded (a consumer's dedup check before its reaction).
    pub(crate) fn consumed(&self, c: &Consumed) -> PortResult<bool> {
        self.store.event_consumed(c)
    }

    /// Records `c` (a consumer whose reaction is a sequence of idempotent writes records its
    /// consumption after them).
    pub(crate) fn record_consumed(&self, c: &Consumed, now: Timestamp) -> PortResult<()> {
        self.store.consume_event(c, now).map(|_| ())
    }

    /// One round of the drain: claims up to `limit` pending events whose grace (or lease)
    /// ended, tells every consumer again, and marks each done. Safe on every instance at once
    /// (claims are leased; consumers deduplicate by event id).
    pub fn drain(&self, now: Timestamp, limit: usize) -> PortResult<DrainReport> {
        let mut report = DrainReport::default();
        for r in self.store.claim_due_events(now, now.plus(LEASE), limit)? {
            match self
                .tell(&r)
                .and_then(|()| self.store.finish_event(r.id, now))
            {
                Ok(()) => report.replayed += 1,
                Err(e) => report.failed.push((r.id, e)),
            }
        }
        Ok(report)
    }

    /// Forgets what was done before `before` (housekeeping).
    pub(crate) fn prune(&self, before: Timestamp) -> PortResult<u64> {
        self.store.prune_events(before)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u128) -> uuid::Uuid {
        uuid::Uuid::from_u128(n)
    }

    #[test]
    fn every_event_reads_back_from_its_columns() {
        let t = Timestamp::from_unix_millis(1_795_327_640_000).unwrap();
        let company = CompanyId(id(1));
        for e in [
            DomainEvent::SessionCompleted {
                company,
                link: PaymentLinkId(id(2)),
                session: PaymentSessionId(id(3)),
                at: t,
            },
            DomainEvent::LinkStopped {
                company,
                link: LinkUid::parse("ABCDEFGHIJKLMNOPQRSTUV").unwrap(),
            },
            DomainEvent::ClockMoved { company, until: t },
        ] {
            let back = DomainEvent::from_stored(company, e.kind(), &e.payload()).unwrap();
            assert_eq!(back, e);
            assert_eq!(back.company(), company);
        }
        assert!(DomainEvent::from_stored(company, "session_completed", "{}").is_err());
        assert!(DomainEvent::from_stored(company, "nothing", "{}").is_err());
    }
}
