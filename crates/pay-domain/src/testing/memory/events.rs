//! The in-memory store: the domain events' outbox and its consumption records.

use super::MemStore;
use crate::kernel::error::PortResult;
use crate::kernel::events::{Consumed, EventRecord, EventStore};
use crate::kernel::ids::EventId;
use crate::kernel::timestamp::Timestamp;

/// An event row: the record, its lease and when it was done.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredEvent {
    pub record: EventRecord,
    pub lease_until: Option<Timestamp>,
    pub done_at: Option<Timestamp>,
}

impl StoredEvent {
    pub(crate) fn new(record: &EventRecord) -> StoredEvent {
        StoredEvent {
            record: record.clone(),
            lease_until: None,
            done_at: None,
        }
    }
}

impl EventStore for MemStore {
    fn claim_due_events(
        &self,
        now: Timestamp,
        lease_until: Timestamp,
        limit: usize,
    ) -> PortResult<Vec<EventRecord>> {
        self.count_call("claim_due_events");
        let mut t = self.write();
        let mut due: Vec<&mut StoredEvent> = t
            .events
            .iter_mut()
            .filter(|e| e.done_at.is_none() && e.record.due_at <= now)
            .filter(|e| e.lease_until.is_none_or(|l| l <= now))
            .collect();
        due.sort_by_key(|e| (e.record.due_at, e.record.id));
        Ok(due
            .into_iter()
            .take(limit)
            .map(|e| {
                e.lease_until = Some(lease_until);
                e.record.due_at = lease_until;
                e.record.clone()
            })
            .collect())
    }

    fn event_consumed(&self, c: &Consumed) -> PortResult<bool> {
        self.count_call("event_consumed");
        Ok(self.tables().consumed.iter().any(|(x, _)| x == c))
    }

    fn consume_event(&self, c: &Consumed, at: Timestamp) -> PortResult<bool> {
        self.count_call("consume_event");
        let mut t = self.write();
        if t.consumed.iter().any(|(x, _)| x == c) {
            return Ok(false);
        }
        t.consumed.push((*c, at));
        Ok(true)
    }

    fn finish_event(&self, id: EventId, at: Timestamp) -> PortResult<()> {
        self.count_call("finish_event");
        let mut t = self.write();
        if let Some(e) = t
            .events
            .iter_mut()
            .find(|e| e.record.id == id && e.done_at.is_none())
        {
            e.done_at = Some(at);
            e.lease_until = None;
        }
        Ok(())
    }

    fn prune_events(&self, before: Timestamp) -> PortResult<u64> {
        self.count_call("prune_events");
        let mut guard = self.write();
        let t = &mut *guard;
        let gone: Vec<EventId> = t
            .events
            .iter()
            .filter(|e| e.done_at.is_some_and(|d| d < before))
            .map(|e| e.record.id)
            .collect();
        let rows = t.events.len() + t.consumed.len();
        t.events.retain(|e| !gone.contains(&e.record.id));
        t.consumed.retain(|(c, _)| !gone.contains(&c.event));
        Ok((rows - t.events.len() - t.consumed.len()) as u64)
    }
}
