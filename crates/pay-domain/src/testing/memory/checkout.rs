//! The in-memory store: checkout.

use super::{check_new_deliveries, unique_violation, MemStore};
use crate::checkout::{
    CheckoutStore, DueSession, LinkEventWrite, PaymentSession, SessionChange, TimelineEvent,
    WriteOutcome,
};
use crate::kernel::error::{Fault, PortResult};
use crate::kernel::ids::*;
use crate::kernel::timestamp::Timestamp;
use crate::links::{LinkStatus, PaymentLink};
use crate::webhooks::Delivery;

impl CheckoutStore for MemStore {
    fn public_link(&self, uid: &LinkUid) -> PortResult<Option<PaymentLink>> {
        self.count_call("public_link");
        Ok(self.tables().links.iter().find(|l| &l.uid == uid).cloned())
    }

    fn write_link_event(
        &self,
        w: &LinkEventWrite,
        build: &dyn Fn(u64) -> Vec<Delivery>,
    ) -> PortResult<WriteOutcome> {
        self.count_call("write_link_event");
        // One lock: the whole write is one transaction.
        let mut guard = self.write();
        let t = &mut *guard;
        if !t.links.iter().any(|l| l.id == w.link_id) {
            return Err(Fault::new("unknown payment link"));
        }
        if let Some(id) = &w.processor_event_id {
            if t.processor_events.contains(id) {
                return Ok(WriteOutcome::Duplicate);
            }
        }
        if let Some(session) = w.claim_link {
            if t.paid_links.iter().any(|(l, _)| *l == w.link_id) {
                return Ok(WriteOutcome::LinkAlreadyPaid);
            }
            t.paid_links.push((w.link_id, session));
        }
        match &w.change {
            SessionChange::Insert(s) => {
                if t.payment_sessions.iter().any(|x| x.id == s.id) {
                    return Err(unique_violation("payment_sessions.id"));
                }
                t.payment_sessions.push(s.clone());
            }
            SessionChange::Update {
                session,
                expected_version,
            } => {
                let Some(row) = t
                    .payment_sessions
                    .iter_mut()
                    .find(|x| x.id == session.id && x.version == *expected_version)
                else {
                    if w.claim_link.is_some() {
                        t.paid_links.retain(|(l, _)| *l != w.link_id);
                    }
                    return Ok(WriteOutcome::Stale);
                };
                *row = session.clone();
            }
            SessionChange::None => {}
        }
        if w.claim_link.is_some() {
            let link = t.links.iter_mut().find(|l| l.id == w.link_id).unwrap();
            link.status = LinkStatus::Archived;
        }
        if let Some(id) = &w.processor_event_id {
            t.processor_events.push(id.clone());
        }
        t.timeline.extend(w.timeline.iter().cloned());
        t.events
            .extend(w.events.iter().map(super::events::StoredEvent::new));
        let mut built = Vec::new();
        if w.webhook_events > 0 {
            let last = t
                .sequences
                .iter()
                .find(|(id, _)| *id == w.link_id)
                .map_or(0, |(_, n)| *n);
            built = build(last + 1);
            check_new_deliveries(t, &built)?;
            let next = last + w.webhook_events;
            match t.sequences.iter_mut().find(|(id, _)| *id == w.link_id) {
                Some((_, n)) => *n = next,
                None => t.sequences.push((w.link_id, next)),
            }
            super::add_deliveries(t, &built);
        }
        Ok(WriteOutcome::Applied(built))
    }

    fn processor_event_applied(&self, event_id: &str) -> PortResult<bool> {
        self.count_call("processor_event_applied");
        Ok(self.tables().processor_events.iter().any(|e| e == event_id))
    }

    fn payment_session(&self, id: PaymentSessionId) -> PortResult<Option<PaymentSession>> {
        self.count_call("payment_session");
        Ok(self
            .tables()
            .payment_sessions
            .iter()
            .find(|s| s.id == id)
            .cloned())
    }

    fn session_with_link(
        &self,
        id: PaymentSessionId,
    ) -> PortResult<Option<(crate::links::PaymentLink, PaymentSession)>> {
        self.count_call("session_with_link");
        let t = self.tables();
        Ok(t.payment_sessions
            .iter()
            .find(|s| s.id == id)
            .and_then(|s| {
                let l = t.links.iter().find(|l| l.id == s.link_id)?;
                Some((l.clone(), s.clone()))
            }))
    }

    fn latest_session(&self, link: PaymentLinkId) -> PortResult<Option<PaymentSession>> {
        self.count_call("latest_session");
        Ok(self
            .tables()
            .payment_sessions
            .iter()
            .filter(|s| s.link_id == link)
            .max_by_key(|s| (s.created_at, s.id))
            .cloned())
    }

    fn latest_session_in(
        &self,
        link: PaymentLinkId,
        statuses: &[crate::checkout::machine::SessionStatus],
    ) -> PortResult<Option<PaymentSession>> {
        self.count_call("latest_session_in");
        Ok(self
            .tables()
            .payment_sessions
            .iter()
            .filter(|s| s.link_id == link && statuses.contains(&s.status))
            .max_by_key(|s| (s.created_at, s.id))
            .cloned())
    }

    fn company_sessions_in(
        &self,
        company: CompanyId,
        status: crate::checkout::machine::SessionStatus,
        since: Timestamp,
        limit: usize,
    ) -> PortResult<Vec<PaymentSession>> {
        self.count_call("company_sessions_in");
        let mut v: Vec<PaymentSession> = self
            .tables()
            .payment_sessions
            .iter()
            .filter(|s| s.company_id == company && s.status == status && s.updated_at >= since)
            .cloned()
            .collect();
        v.sort_by_key(|s| std::cmp::Reverse((s.updated_at, s.id)));
        v.truncate(limit);
        Ok(v)
    }

    fn unfinished_sessions(&self, link: PaymentLinkId) -> PortResult<Vec<PaymentSession>> {
        self.count_call("unfinished_sessions");
        Ok(self
            .tables()
            .payment_sessions
            .iter()
            .filter(|s| s.link_id == link && s.status.is_unfinished())
            .cloned()
            .collect::<Vec<_>>())
        .map(|mut v| {
            v.sort_by_key(|s| (s.created_at, s.id));
            v
        })
    }

    fn timeline(&self, link: PaymentLinkId) -> PortResult<Vec<TimelineEvent>> {
        self.count_call("timeline");
        Ok(self
            .tables()
            .timeline
            .iter()
            .filter(|e| e.link_id == link)
            .cloned()
            .collect())
    }

    fn due_sessions(&self, now: Timestamp, limit: usize) -> PortResult<Vec<DueSession>> {
        self.count_call("due_sessions");
        let t = self.tables();
        let mut due: Vec<DueSession> = t
            .payment_sessions
            .iter()
            .filter(|s| s.status.is_unfinished())
            .filter_map(|s| {
                let link = t.links.iter().find(|l| l.id == s.link_id)?;
                // Deadlines are on the link's company clock.
                let offset = t
                    .companies
                    .iter()
                    .find(|(c, _)| c.id == link.company_id)
                    .map_or(0, |(c, _)| c.test_clock_offset_ms);
                let now = crate::tenancy::company_now(now, offset);
                let is_due = s.expires_at <= now
                    || link.status != LinkStatus::Active
                    || link.expires_at.is_some_and(|e| e <= now);
                is_due.then(|| DueSession {
                    session: s.clone(),
                    link: link.clone(),
                })
            })
            .collect();
        due.sort_by_key(|d| (d.session.expires_at, d.session.id));
        due.truncate(limit);
        Ok(due)
    }
}
