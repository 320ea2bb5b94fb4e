//! Payment sessions and link timelines: the one write that moves a session, and its reads.

use std::collections::BTreeMap;

use pay_domain::checkout::machine::SessionStatus;
use pay_domain::checkout::{
    CheckoutStore, DueSession, LinkEventWrite, PaymentSession, SessionChange, TimelineEvent,
    WriteOutcome,
};
use pay_domain::kernel::ids::{CompanyId, LinkUid, PaymentLinkId, PaymentSessionId};
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::links::{LinkStatus, PaymentLink};
use pay_domain::tenancy::company_now;
use pay_domain::webhooks::Delivery;
use pay_domain::{Fault, PortResult};

use super::{HostStore, Tables};

impl Tables {
    /// The link's sessions that pass `keep`, oldest first (by creation, then id).
    fn sessions_of(
        &self,
        link: PaymentLinkId,
        keep: impl Fn(&PaymentSession) -> bool,
    ) -> Vec<&PaymentSession> {
        let mut found: Vec<&PaymentSession> = self
            .sessions
            .values()
            .filter(|s| s.link_id == link && keep(s))
            .collect();
        found.sort_by_key(|s| (s.created_at, s.id));
        found
    }

    fn newest_session(
        &self,
        link: PaymentLinkId,
        keep: impl Fn(&PaymentSession) -> bool,
    ) -> Option<PaymentSession> {
        self.sessions_of(link, keep).last().map(|s| (*s).clone())
    }

    fn timeline_of(&self, link: PaymentLinkId) -> Vec<TimelineEvent> {
        let mut entries: Vec<TimelineEvent> = self
            .timeline
            .iter()
            .filter(|e| e.link_id == link)
            .cloned()
            .collect();
        entries.sort_by_key(|e| (e.created_at, e.id));
        entries
    }

    /// Whether the unfinished `s` has work due at `now` (real time) on its company's clock.
    fn is_due(&self, s: &PaymentSession, link: &PaymentLink, now: Timestamp) -> bool {
        let offset = self
            .companies
            .get(&link.company_id)
            .map_or(0, |(c, _)| c.test_clock_offset_ms);
        let now = company_now(now, offset);
        s.expires_at <= now
            || link.status != LinkStatus::Active
            || link.expires_at.is_some_and(|at| at <= now)
    }
}

impl CheckoutStore for HostStore {
    fn public_link(&self, uid: &LinkUid) -> PortResult<Option<PaymentLink>> {
        Ok(self.lock().links.get(uid.as_str()).cloned())
    }

    fn write_link_event(
        &self,
        w: &LinkEventWrite,
        build: &dyn Fn(u64) -> Vec<Delivery>,
    ) -> PortResult<WriteOutcome> {
        let mut t = self.lock();
        // Every check first, then every write: the lock makes it one transaction.
        let Some(uid) = t.link_by_id(w.link_id).map(|l| l.uid.as_str().to_owned()) else {
            return Err(Fault::new("unknown payment link"));
        };
        if let Some(event) = &w.processor_event_id {
            if t.processor_events.contains(event) {
                return Ok(WriteOutcome::Duplicate);
            }
        }
        if w.claim_link.is_some() && t.paid.contains_key(&w.link_id) {
            return Ok(WriteOutcome::LinkAlreadyPaid);
        }
        let session = match &w.change {
            SessionChange::Insert(s) if t.sessions.contains_key(&s.id) => {
                return Err(Fault::new("payment session id already used"));
            }
            SessionChange::Insert(s) => Some(s),
            SessionChange::Update {
                session,
                expected_version,
            } => match t.sessions.get(&session.id) {
                Some(stored) if stored.version == *expected_version => Some(session),
                _ => return Ok(WriteOutcome::Stale),
            },
            SessionChange::None => None,
        };
        let (deliveries, last_number) = t.next_events(w.link_id, w.webhook_events, build)?;

        if let Some(event) = &w.processor_event_id {
            t.processor_events.insert(event.clone());
        }
        if let Some(paid_by) = w.claim_link {
            t.paid.insert(w.link_id, paid_by);
            if let Some(link) = t.links.get_mut(&uid) {
                link.status = LinkStatus::Archived;
            }
        }
        if let Some(s) = session {
            t.sessions.insert(s.id, s.clone());
        }
        t.timeline.extend(w.timeline.iter().cloned());
        t.add_events(w.events.iter());
        t.add_deliveries(&deliveries);
        t.event_numbers.insert(w.link_id, last_number);
        Ok(WriteOutcome::Applied(deliveries))
    }

    fn processor_event_applied(&self, event_id: &str) -> PortResult<bool> {
        Ok(self.lock().processor_events.contains(event_id))
    }

    fn payment_session(&self, id: PaymentSessionId) -> PortResult<Option<PaymentSession>> {
        Ok(self.lock().sessions.get(&id).cloned())
    }

    fn session_with_link(
        &self,
        id: PaymentSessionId,
    ) -> PortResult<Option<(PaymentLink, PaymentSession)>> {
        let t = self.lock();
        Ok(t.sessions.get(&id).and_then(|s| {
            let link = t.link_by_id(s.link_id)?;
            Some((link.clone(), s.clone()))
        }))
    }

    fn latest_session(&self, link: PaymentLinkId) -> PortResult<Option<PaymentSession>> {
        Ok(self.lock().newest_session(link, |_| true))
    }

    fn latest_session_in(
        &self,
        link: PaymentLinkId,
        statuses: &[SessionStatus],
    ) -> PortResult<Option<PaymentSession>> {
        let t = self.lock();
        Ok(t.newest_session(link, |s| statuses.contains(&s.status)))
    }

    fn company_sessions_in(
        &self,
        company: CompanyId,
        status: SessionStatus,
        since: Timestamp,
        limit: usize,
    ) -> PortResult<Vec<PaymentSession>> {
        let t = self.lock();
        let mut found: Vec<PaymentSession> = t
            .sessions
            .values()
            .filter(|s| s.company_id == company && s.status == status && s.updated_at >= since)
            .cloned()
            .collect();
        found.sort_by_key(|s| std::cmp::Reverse((s.updated_at, s.id)));
        found.truncate(limit);
        Ok(found)
    }

    fn unfinished_sessions(&self, link: PaymentLinkId) -> PortResult<Vec<PaymentSession>> {
        let t = self.lock();
        let open = t.sessions_of(link, |s| s.status.is_unfinished());
        Ok(open.into_iter().cloned().collect())
    }

    fn timeline(&self, link: PaymentLinkId) -> PortResult<Vec<TimelineEvent>> {
        Ok(self.lock().timeline_of(link))
    }

    fn latest_session_and_timeline(
        &self,
        link: PaymentLinkId,
    ) -> PortResult<(Option<PaymentSession>, Vec<TimelineEvent>)> {
        // One lock: both reads see the same state.
        let t = self.lock();
        Ok((t.newest_session(link, |_| true), t.timeline_of(link)))
    }

    fn due_sessions(&self, now: Timestamp, limit: usize) -> PortResult<Vec<DueSession>> {
        let t = self.lock();
        // Oldest deadline first, by a map keyed on it.
        let mut due = BTreeMap::new();
        for s in t.sessions.values().filter(|s| s.status.is_unfinished()) {
            if let Some(link) = t.link_by_id(s.link_id).filter(|l| t.is_due(s, l, now)) {
                let row = DueSession {
                    session: s.clone(),
                    link: link.clone(),
                };
                due.insert((s.expires_at, s.id), row);
            }
        }
        Ok(due.into_values().take(limit).collect())
    }
}
