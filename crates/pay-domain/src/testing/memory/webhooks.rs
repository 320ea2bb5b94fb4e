//! The in-memory store: webhooks.

use super::{add_deliveries, check_new_deliveries, matches_search, unique_violation, MemStore};
use crate::kernel::error::{Fault, PortResult};
use crate::kernel::idempotency::{
    claim_step, Claim, ClaimStep, Completion, Found, IdempotencyStore, IdempotentRequest,
};
use crate::kernel::ids::*;
use crate::kernel::secret::SealedSecret;
use crate::kernel::timestamp::Timestamp;
use crate::webhooks::ports::{AttemptRecord, WebhookStore};
use crate::webhooks::{
    AfterAttempt, CallbackKind, Circuit, ClaimBudget, CompanyCallback, Delivery, DeliveryFilter,
    DeliveryStatus, Endpoint, EndpointHealth, EventLogEntry, EventLogQuery, GrantSubscription,
    RoundRecorded,
};

/// Where a delivery goes.
fn endpoint_of(d: &Delivery) -> Endpoint {
    Endpoint {
        company_id: d.company_id,
        url: d.url.clone(),
    }
}

/// An idempotency record as the fake stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotencyRow {
    pub scope: String,
    pub key: String,
    pub fingerprint: String,
    pub token: String,
    pub lease_until: Timestamp,
    pub answer: Option<SealedSecret>,
    pub created_at: Timestamp,
}

impl IdempotencyStore for MemStore {
    fn claim_idempotency_key(
        &self,
        request: &IdempotentRequest,
        token: &str,
        now: Timestamp,
        lease_until: Timestamp,
    ) -> PortResult<Claim> {
        self.count_call("claim_idempotency_key");
        let mut t = self.write();
        let key = request.key.as_str();
        let at = t
            .idempotency
            .iter()
            .position(|r| r.scope == request.scope && r.key == key);
        let found = at.map(|i| {
            let r = &t.idempotency[i];
            Found {
                fingerprint: r.fingerprint.clone(),
                answer: r.answer.clone(),
                lease_until: r.lease_until,
            }
        });
        let claimed = Claim::Claimed {
            token: token.to_owned(),
        };
        Ok(match (claim_step(found, request, now), at) {
            (ClaimStep::Decided(claim), _) => claim,
            (ClaimStep::TakeOver, Some(i)) => {
                let row = &mut t.idempotency[i];
                row.token = token.to_owned();
                row.lease_until = lease_until;
                claimed
            }
            _ => {
                t.idempotency.push(IdempotencyRow {
                    scope: request.scope.clone(),
                    key: key.to_owned(),
                    fingerprint: request.fingerprint.clone(),
                    token: token.to_owned(),
                    lease_until,
                    answer: None,
                    created_at: now,
                });
                claimed
            }
        })
    }

    fn release_idempotency_key(&self, scope: &str, key: &str, token: &str) -> PortResult<()> {
        self.count_call("release_idempotency_key");
        self.write().idempotency.retain(|r| {
            !(r.scope == scope && r.key == key && r.token == token && r.answer.is_none())
        });
        Ok(())
    }

    fn prune_idempotency_keys(&self, before: Timestamp) -> PortResult<u64> {
        self.count_call("prune_idempotency_keys");
        let mut t = self.write();
        let n = t.idempotency.len();
        t.idempotency.retain(|r| r.created_at >= before);
        Ok((n - t.idempotency.len()) as u64)
    }
}

/// The unanswered record a completion answers, while its claim holds (its token).
pub(crate) fn claimed(t: &super::Tables, c: &Completion) -> Option<usize> {
    t.idempotency.iter().position(|r| {
        r.scope == c.scope && r.key == c.key && r.token == c.token && r.answer.is_none()
    })
}

/// Marks the claimed record answered (checked first with `claimed`, under the same lock: one
/// transaction with the keyed write). False when the claim was taken over.
pub(crate) fn complete(t: &mut super::Tables, completion: Option<&Completion>) -> bool {
    let Some(c) = completion else { return true };
    match claimed(t, c) {
        Some(i) => {
            t.idempotency[i].answer = Some(c.answer.clone());
            true
        }
        None => false,
    }
}

impl WebhookStore for MemStore {
    fn grant_subscription(&self, grant: uuid::Uuid) -> PortResult<Option<GrantSubscription>> {
        self.count_call("grant_subscription");
        Ok(self
            .tables()
            .grant_subscriptions
            .iter()
            .find(|s| s.grant_id == grant)
            .cloned())
    }

    fn save_grant_subscription(
        &self,
        sub: &GrantSubscription,
        completion: Option<&Completion>,
    ) -> PortResult<bool> {
        self.count_call("save_grant_subscription");
        // One lock: the write and the answer are one transaction.
        let mut guard = self.write();
        let t = &mut *guard;
        if !t.companies.iter().any(|(c, _)| c.id == sub.company_id) {
            return Err(Fault::new("foreign key: company"));
        }
        let claim = match completion {
            Some(c) => match claimed(t, c) {
                Some(i) => Some(i),
                None => return Ok(false),
            },
            None => None,
        };
        let at = t
            .grant_subscriptions
            .iter()
            .position(|s| s.grant_id == sub.grant_id);
        match at {
            Some(i) if t.grant_subscriptions[i].version + 1 == sub.version => {
                t.grant_subscriptions[i] = sub.clone()
            }
            None if sub.version == 1 => t.grant_subscriptions.push(sub.clone()),
            _ => return Ok(false),
        }
        if let (Some(i), Some(c)) = (claim, completion) {
            t.idempotency[i].answer = Some(c.answer.clone());
        }
        Ok(true)
    }

    fn company_callback(
        &self,
        company: CompanyId,
        kind: CallbackKind,
    ) -> PortResult<Option<CompanyCallback>> {
        self.count_call("company_callback");
        if let Some(stale) = self.stale_callback_reads.lock().unwrap().pop_front() {
            return Ok(Some(stale));
        }
        Ok(self.stored_callback(company, kind))
    }

    fn save_company_callback(&self, callback: &CompanyCallback) -> PortResult<bool> {
        self.count_call("save_company_callback");
        let mut t = self.write();
        if !t.companies.iter().any(|(c, _)| c.id == callback.company_id) {
            return Err(Fault::new("foreign key: company"));
        }
        match t
            .callbacks
            .iter_mut()
            .find(|c| c.company_id == callback.company_id && c.kind == callback.kind)
        {
            Some(row) if row.version + 1 == callback.version => *row = callback.clone(),
            Some(_) => return Ok(false),
            None if callback.version == 1 => t.callbacks.push(callback.clone()),
            None => return Ok(false),
        }
        Ok(true)
    }

    fn insert_deliveries(&self, deliveries: &[Delivery]) -> PortResult<()> {
        self.count_call("insert_deliveries");
        let mut t = self.write();
        check_new_deliveries(&t, deliveries)?;
        add_deliveries(&mut t, deliveries);
        Ok(())
    }

    fn claim_due_deliveries_beside(
        &self,
        now: Timestamp,
        lease_until: Timestamp,
        limit: usize,
        held: &[(Endpoint, usize)],
    ) -> PortResult<Vec<Delivery>> {
        self.count_call("claim_due_deliveries");
        let mut guard = self.write();
        let t = &mut *guard;
        t.delivery_leases.retain(|(_, until)| *until > now);
        let mut budget = ClaimBudget::new(held.iter().cloned(), t.circuits.clone(), now);
        for e in budget.probing() {
            let leased = t
                .delivery_leases
                .iter()
                .filter(|(id, _)| {
                    t.deliveries
                        .iter()
                        .any(|d| d.id == *id && endpoint_of(d) == e)
                })
                .count();
            budget.leased(&e, leased);
        }
        let leased_ids: Vec<uuid::Uuid> = t.delivery_leases.iter().map(|(id, _)| *id).collect();
        let mut due: Vec<usize> = t
            .deliveries
            .iter()
            .enumerate()
            .filter(|(_, d)| matches!(d.status, DeliveryStatus::Pending | DeliveryStatus::Retrying))
            .filter(|(_, d)| d.next_attempt_at.is_some_and(|at| at <= now))
            .filter(|(_, d)| !leased_ids.contains(&d.id))
            .map(|(i, _)| i)
            .collect();
        // Oldest due first; ids break ties; each endpoint within its share.
        due.sort_by_key(|&i| (t.deliveries[i].next_attempt_at, t.deliveries[i].id));
        due.retain(|&i| budget.take(&endpoint_of(&t.deliveries[i])));
        due.truncate(limit);
        Ok(due
            .into_iter()
            .map(|i| {
                let d = &mut t.deliveries[i];
                d.next_attempt_at = Some(lease_until);
                t.delivery_leases.push((d.id, lease_until));
                d.clone()
            })
            .collect())
    }

    fn retarget_deliveries(&self, moves: &[(uuid::Uuid, String)]) -> PortResult<()> {
        self.count_call("retarget_deliveries");
        let mut t = self.write();
        for (id, url) in moves {
            if let Some(d) = t
                .deliveries
                .iter_mut()
                .find(|d| d.id == *id && !d.status.is_terminal())
            {
                d.url = url.clone();
            }
        }
        Ok(())
    }

    fn record_attempt(&self, attempt: &AttemptRecord, after: &AfterAttempt) -> PortResult<()> {
        self.count_call("record_attempt");
        let mut guard = self.write();
        let t = &mut *guard;
        let d = t
            .deliveries
            .iter_mut()
            .find(|d| d.id == attempt.delivery_id)
            .ok_or_else(|| Fault::new("foreign key: delivery"))?;
        // Compare-and-set: only the attempt after the last recorded one, of a live delivery.
        let live = matches!(d.status, DeliveryStatus::Pending | DeliveryStatus::Retrying);
        if !live || attempt.number == 0 || d.attempts != attempt.number - 1 {
            return Err(Fault::new(format!(
                "attempt {} of a delivery with {} attempts",
                attempt.number, d.attempts
            )));
        }
        if t.attempts
            .iter()
            .any(|a| a.delivery_id == attempt.delivery_id && a.number == attempt.number)
        {
            return Err(unique_violation("webhook_attempts"));
        }
        d.attempts = attempt.number;
        d.status = after.status;
        d.next_attempt_at = after.next_attempt_at;
        d.last_attempt_at = Some(attempt.at);
        d.last_response_status = attempt.outcome.status;
        d.last_error = attempt.outcome.error;
        t.attempts.push(attempt.clone());
        t.delivery_leases
            .retain(|(id, _)| *id != attempt.delivery_id);
        Ok(())
    }

    fn record_attempts(
        &self,
        batch: &[(AttemptRecord, AfterAttempt)],
        health: &EndpointHealth<'_>,
    ) -> PortResult<RoundRecorded> {
        // A stale claim (the delivery moved on) is skipped, as the contract says.
        let recorded = batch
            .iter()
            .map(|(attempt, after)| self.record_attempt(attempt, after).is_ok())
            .collect();
        let mut t = self.write();
        let circuits = &mut t.circuits;
        let folded =
            health.fold(|e| Ok::<_, Fault>(circuits.iter().find(|c| c.endpoint == *e).cloned()))?;
        let mut opened = Vec::new();
        for (endpoint, state) in folded {
            circuits.retain(|c| c.endpoint != endpoint);
            if let Some(c) = state {
                if c.opened_at(health.now, health.rule) {
                    opened.push(c.clone());
                }
                circuits.push(c);
            }
        }
        Ok(RoundRecorded { recorded, opened })
    }

    fn outbox_gauges(
        &self,
        now: Timestamp,
    ) -> PortResult<Option<crate::webhooks::ports::OutboxGauges>> {
        let t = self.tables();
        let pending: Vec<&Delivery> = t
            .deliveries
            .iter()
            .filter(|d| matches!(d.status, DeliveryStatus::Pending | DeliveryStatus::Retrying))
            .collect();
        Ok(Some(crate::webhooks::ports::OutboxGauges {
            pending: pending.len() as u64,
            oldest_pending_at: pending.iter().map(|d| d.created_at).min(),
            circuits_open: t
                .circuits
                .iter()
                .filter(|c| c.paused_until.is_some_and(|u| u > now))
                .count() as u64,
        }))
    }

    fn endpoint_circuits(&self, company: CompanyId) -> PortResult<Vec<Circuit>> {
        self.count_call("endpoint_circuits");
        let mut list: Vec<Circuit> = self
            .tables()
            .circuits
            .iter()
            .filter(|c| c.endpoint.company_id == company)
            .cloned()
            .collect();
        list.sort_by(|a, b| a.endpoint.url.cmp(&b.endpoint.url));
        Ok(list)
    }

    fn deliveries(&self, company: CompanyId, filter: &DeliveryFilter) -> PortResult<Vec<Delivery>> {
        self.count_call("deliveries");
        let mut list: Vec<Delivery> = self
            .tables()
            .deliveries
            .iter()
            .filter(|d| d.company_id == company)
            .filter(|d| {
                filter
                    .payment_link_uid
                    .as_ref()
                    .is_none_or(|u| d.payment_link_uid.as_ref() == Some(u))
            })
            .filter(|d| filter.status.is_none_or(|s| d.status == s))
            .filter(|d| filter.grant.is_none_or(|g| d.grant_id == Some(g)))
            .filter(|d| {
                filter
                    .search
                    .as_deref()
                    .is_none_or(|q| matches_search(d, q))
            })
            .cloned()
            .collect();
        list.sort_by_key(|d| std::cmp::Reverse((d.created_at, d.id)));
        list.truncate(filter.limit);
        Ok(list)
    }

    fn delivery(&self, company: CompanyId, id: uuid::Uuid) -> PortResult<Option<Delivery>> {
        self.count_call("delivery");
        Ok(self
            .tables()
            .deliveries
            .iter()
            .find(|d| d.company_id == company && d.id == id)
            .cloned())
    }

    fn attempts(&self, company: CompanyId, id: uuid::Uuid) -> PortResult<Vec<AttemptRecord>> {
        self.count_call("attempts");
        let t = self.tables();
        if !t
            .deliveries
            .iter()
            .any(|d| d.company_id == company && d.id == id)
        {
            return Ok(vec![]);
        }
        let mut list: Vec<AttemptRecord> = t
            .attempts
            .iter()
            .filter(|a| a.delivery_id == id)
            .cloned()
            .collect();
        list.sort_by_key(|a| a.number);
        Ok(list)
    }

    fn event_log(&self, company: CompanyId, q: &EventLogQuery) -> PortResult<Vec<EventLogEntry>> {
        self.count_call("event_log");
        let t = self.tables();
        let entries = t
            .logged_events
            .iter()
            .map(|e| EventLogEntry::of(e.clone(), &t.deliveries));
        Ok(q.page(company, entries))
    }

    fn logged_event(
        &self,
        company: CompanyId,
        id: uuid::Uuid,
    ) -> PortResult<Option<EventLogEntry>> {
        self.count_call("logged_event");
        let t = self.tables();
        Ok(t.logged_events
            .iter()
            .find(|e| e.company_id == company && e.id == id)
            .map(|e| EventLogEntry::of(e.clone(), &t.deliveries)))
    }

    fn prune_event_log(&self, before: Timestamp) -> PortResult<u64> {
        self.count_call("prune_event_log");
        let mut t = self.write();
        let n = t.logged_events.len();
        t.logged_events.retain(|e| e.created_at >= before);
        Ok((n - t.logged_events.len()) as u64)
    }

    fn enqueue_link_event(
        &self,
        link: PaymentLinkId,
        build: &dyn Fn(u64) -> Vec<Delivery>,
    ) -> PortResult<Vec<Delivery>> {
        self.count_call("enqueue_link_event");
        // One lock for the whole call: the increment and the inserts are one transaction.
        let mut guard = self.write();
        let t = &mut *guard;
        if !t.links.iter().any(|l| l.id == link) {
            return Err(Fault::new("unknown payment link"));
        }
        let next = t
            .sequences
            .iter()
            .find(|(id, _)| *id == link)
            .map_or(0, |(_, n)| *n)
            + 1;
        let built = build(next);
        check_new_deliveries(t, &built)?;
        match t.sequences.iter_mut().find(|(id, _)| *id == link) {
            Some((_, n)) => *n = next,
            None => t.sequences.push((link, next)),
        }
        add_deliveries(t, &built);
        Ok(built)
    }
}
