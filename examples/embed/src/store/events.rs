//! The host's store: the outbox of domain events (what links and checkout decided that the
//! checkout reacts to) and who consumed each.

use std::collections::BTreeMap;

use pay_domain::kernel::events::{Consumed, EventRecord, EventStore};
use pay_domain::kernel::ids::EventId;
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::PortResult;

use super::{HostStore, Tables};

/// An event, its lease and when it was done.
#[derive(Debug, Clone)]
pub(super) struct EventRow {
    record: EventRecord,
    lease_until: Option<Timestamp>,
    done_at: Option<Timestamp>,
}

impl Tables {
    /// Inside a deciding write: its events, into the outbox.
    pub(super) fn add_events<'a>(&mut self, events: impl Iterator<Item = &'a EventRecord>) {
        for e in events {
            let row = EventRow {
                record: e.clone(),
                lease_until: None,
                done_at: None,
            };
            self.events.insert(e.id, row);
        }
    }
}

impl EventStore for HostStore {
    fn claim_due_events(
        &self,
        now: Timestamp,
        lease_until: Timestamp,
        limit: usize,
    ) -> PortResult<Vec<EventRecord>> {
        let mut t = self.lock();
        let mut due: Vec<&mut EventRow> = t
            .events
            .values_mut()
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
        let t = self.lock();
        Ok(t.consumed.contains_key(&(c.event, c.consumer.as_str())))
    }

    fn consume_event(&self, c: &Consumed, at: Timestamp) -> PortResult<bool> {
        let mut t = self.lock();
        let key = (c.event, c.consumer.as_str());
        if t.consumed.contains_key(&key) {
            return Ok(false);
        }
        t.consumed.insert(key, at);
        Ok(true)
    }

    fn finish_event(&self, id: EventId, at: Timestamp) -> PortResult<()> {
        let mut t = self.lock();
        if let Some(e) = t.events.get_mut(&id).filter(|e| e.done_at.is_none()) {
            e.done_at = Some(at);
            e.lease_until = None;
        }
        Ok(())
    }

    fn prune_events(&self, before: Timestamp) -> PortResult<u64> {
        let mut guard = self.lock();
        let t = &mut *guard;
        let before_rows = t.events.len() + t.consumed.len();
        t.events
            .retain(|_, e| e.done_at.is_none_or(|d| d >= before));
        let events: &BTreeMap<EventId, EventRow> = &t.events;
        t.consumed.retain(|(id, _), _| events.contains_key(id));
        Ok((before_rows - t.events.len() - t.consumed.len()) as u64)
    }
}
