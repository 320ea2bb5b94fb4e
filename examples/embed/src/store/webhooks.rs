//! The webhook outbox (deliveries, their attempts and leases, endpoint circuits), callbacks,
//! grant subscriptions and idempotency keys: what the webhook service the checkout queues its
//! events through takes.

use std::collections::BTreeMap;

use pay_domain::kernel::idempotency::{
    claim_step, Claim, ClaimStep, Completion, Found, IdempotencyStore, IdempotentRequest,
};
use pay_domain::kernel::ids::{CompanyId, PaymentLinkId};
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::tenancy::company_now;
use pay_domain::webhooks::ports::{AttemptRecord, WebhookStore};
use pay_domain::webhooks::{
    AfterAttempt, CallbackKind, Circuit, ClaimBudget, CompanyCallback, Delivery, DeliveryFilter,
    DeliveryStatus, Endpoint, EndpointHealth, EventLogEntry, EventLogQuery, GrantSubscription,
    RoundRecorded,
};
use pay_domain::{Fault, PortResult};

use super::{HostStore, KeyRecord, Tables};

fn endpoint(d: &Delivery) -> Endpoint {
    Endpoint {
        company_id: d.company_id,
        url: d.url.clone(),
    }
}

fn is_live(d: &Delivery) -> bool {
    matches!(d.status, DeliveryStatus::Pending | DeliveryStatus::Retrying)
}

/// The delivery log's search: the delivery id, the event's short name, the link uid or the
/// order id, matched exactly.
fn found_by(d: &Delivery, q: &str) -> bool {
    [
        Some(d.id.to_string().as_str()),
        Some(d.event.short_name()),
        d.payment_link_uid.as_deref(),
        d.order_id.as_deref(),
    ]
    .contains(&Some(q))
}

impl Tables {
    /// Records the attempt after the delivery's last one, ending its lease; refuses any other.
    fn record(&mut self, a: &AttemptRecord, after: &AfterAttempt) -> PortResult<()> {
        let d = self
            .deliveries
            .get_mut(&a.delivery_id)
            .ok_or_else(|| Fault::new("attempt of an unknown delivery"))?;
        if !is_live(d) || a.number != d.attempts + 1 {
            return Err(Fault::new(format!(
                "attempt {} of a delivery with {} attempts",
                a.number, d.attempts
            )));
        }
        d.attempts = a.number;
        d.status = after.status;
        d.next_attempt_at = after.next_attempt_at;
        d.last_attempt_at = Some(a.at);
        d.last_response_status = a.outcome.status;
        d.last_error = a.outcome.error;
        self.attempts.insert((a.delivery_id, a.number), a.clone());
        self.leases.remove(&a.delivery_id);
        Ok(())
    }

    /// Whether `d` waits for an attempt at `now` (real time) on its company's clock, unleased.
    fn waits(&self, d: &Delivery, now: Timestamp) -> bool {
        let offset = self
            .companies
            .get(&d.company_id)
            .map_or(0, |(c, _)| c.test_clock_offset_ms);
        is_live(d)
            && !self.leases.contains_key(&d.id)
            && d.next_attempt_at
                .is_some_and(|at| at <= company_now(now, offset))
    }
}

impl IdempotencyStore for HostStore {
    fn claim_idempotency_key(
        &self,
        request: &IdempotentRequest,
        token: &str,
        now: Timestamp,
        lease_until: Timestamp,
    ) -> PortResult<Claim> {
        let mut t = self.lock();
        let id = (request.scope.clone(), request.key.as_str().to_owned());
        let found = t.idempotency.get(&id).map(|r| Found {
            fingerprint: r.fingerprint.clone(),
            answer: r.answer.clone(),
            lease_until: r.lease_until,
        });
        let step = claim_step(found, request, now);
        let record = t.idempotency.entry(id);
        match step {
            ClaimStep::Decided(claim) => return Ok(claim),
            ClaimStep::TakeOver => {
                record.and_modify(|r| {
                    r.token = token.to_owned();
                    r.lease_until = lease_until;
                });
            }
            ClaimStep::Insert => {
                record.or_insert(KeyRecord {
                    fingerprint: request.fingerprint.clone(),
                    token: token.to_owned(),
                    lease_until,
                    answer: None,
                    created_at: now,
                });
            }
        }
        Ok(Claim::Claimed {
            token: token.to_owned(),
        })
    }

    fn release_idempotency_key(&self, scope: &str, key: &str, token: &str) -> PortResult<()> {
        let mut t = self.lock();
        let id = (scope.to_owned(), key.to_owned());
        if t.idempotency
            .get(&id)
            .is_some_and(|r| r.token == token && r.answer.is_none())
        {
            t.idempotency.remove(&id);
        }
        Ok(())
    }

    fn prune_idempotency_keys(&self, before: Timestamp) -> PortResult<u64> {
        let mut t = self.lock();
        let had = t.idempotency.len();
        t.idempotency.retain(|_, r| r.created_at >= before);
        Ok((had - t.idempotency.len()) as u64)
    }
}

impl WebhookStore for HostStore {
    fn grant_subscription(&self, grant: uuid::Uuid) -> PortResult<Option<GrantSubscription>> {
        Ok(self.lock().grant_subscriptions.get(&grant).cloned())
    }

    fn save_grant_subscription(
        &self,
        sub: &GrantSubscription,
        completion: Option<&Completion>,
    ) -> PortResult<bool> {
        let mut t = self.lock();
        if !t.companies.contains_key(&sub.company_id) {
            return Err(Fault::new("subscription of an unknown company"));
        }
        let stored = t.grant_subscriptions.get(&sub.grant_id).map(|s| s.version);
        if stored.map_or(0, |v| v) + 1 != sub.version {
            return Ok(false);
        }
        if let Some(c) = completion {
            let id = (c.scope.clone(), c.key.clone());
            let Some(claim) = t
                .idempotency
                .get_mut(&id)
                .filter(|r| r.token == c.token && r.answer.is_none())
            else {
                return Ok(false);
            };
            claim.answer = Some(c.answer.clone());
        }
        t.grant_subscriptions.insert(sub.grant_id, sub.clone());
        Ok(true)
    }

    fn company_callback(
        &self,
        company: CompanyId,
        kind: CallbackKind,
    ) -> PortResult<Option<CompanyCallback>> {
        let t = self.lock();
        let mine = t.callbacks.get(&company).into_iter().flatten();
        Ok(mine.into_iter().find(|c| c.kind == kind).cloned())
    }

    fn save_company_callback(&self, callback: &CompanyCallback) -> PortResult<bool> {
        let mut t = self.lock();
        if !t.companies.contains_key(&callback.company_id) {
            return Err(Fault::new("callback of an unknown company"));
        }
        let rows = t.callbacks.entry(callback.company_id).or_default();
        let at = rows.iter().position(|c| c.kind == callback.kind);
        let stored = at.map_or(0, |i| rows[i].version);
        if stored + 1 != callback.version {
            return Ok(false);
        }
        match at {
            Some(i) => rows[i] = callback.clone(),
            None => rows.push(callback.clone()),
        }
        Ok(true)
    }

    fn insert_deliveries(&self, deliveries: &[Delivery]) -> PortResult<()> {
        let mut t = self.lock();
        t.check_deliveries(deliveries)?;
        t.add_deliveries(deliveries);
        Ok(())
    }

    fn claim_due_deliveries_beside(
        &self,
        now: Timestamp,
        lease_until: Timestamp,
        limit: usize,
        held: &[(Endpoint, usize)],
    ) -> PortResult<Vec<Delivery>> {
        let mut t = self.lock();
        // Leases run on real time.
        t.leases.retain(|_, until| *until > now);
        let mut budget = ClaimBudget::new(held.to_vec(), t.circuits.values().cloned(), now);
        for probed in budget.probing() {
            let leased = t
                .leases
                .keys()
                .filter_map(|id| t.deliveries.get(id))
                .filter(|d| endpoint(d) == probed)
                .count();
            budget.leased(&probed, leased);
        }
        let mut due: Vec<&Delivery> = t.deliveries.values().filter(|d| t.waits(d, now)).collect();
        due.sort_by_key(|d| (d.next_attempt_at, d.id));
        let mut claimed = Vec::new();
        for d in due {
            if claimed.len() == limit {
                break;
            }
            if budget.take(&endpoint(d)) {
                claimed.push(d.id);
            }
        }
        Ok(claimed
            .into_iter()
            .filter_map(|id| {
                t.leases.insert(id, lease_until);
                let d = t.deliveries.get_mut(&id)?;
                d.next_attempt_at = Some(lease_until);
                Some(d.clone())
            })
            .collect())
    }

    fn record_attempt(&self, attempt: &AttemptRecord, after: &AfterAttempt) -> PortResult<()> {
        self.lock().record(attempt, after)
    }

    fn record_attempts(
        &self,
        batch: &[(AttemptRecord, AfterAttempt)],
        health: &EndpointHealth<'_>,
    ) -> PortResult<RoundRecorded> {
        let mut t = self.lock();
        let recorded = batch
            .iter()
            .map(|(attempt, after)| t.record(attempt, after).is_ok())
            .collect();
        let folded = health.fold(|e| Ok::<_, Fault>(t.circuits.get(e).cloned()))?;
        let mut opened = Vec::new();
        for (e, circuit) in folded {
            match circuit {
                None => {
                    t.circuits.remove(&e);
                }
                Some(c) => {
                    if c.opened_at(health.now, health.rule) {
                        opened.push(c.clone());
                    }
                    t.circuits.insert(e, c);
                }
            }
        }
        Ok(RoundRecorded { recorded, opened })
    }

    fn endpoint_circuits(&self, company: CompanyId) -> PortResult<Vec<Circuit>> {
        let t = self.lock();
        let mine = t
            .circuits
            .values()
            .filter(|c| c.endpoint.company_id == company);
        // Keyed by (company, url): already in URL order.
        Ok(mine.cloned().collect())
    }

    fn retarget_deliveries(&self, moves: &[(uuid::Uuid, String)]) -> PortResult<()> {
        let mut t = self.lock();
        for (id, url) in moves {
            if let Some(d) = t.deliveries.get_mut(id).filter(|d| is_live(d)) {
                d.url = url.clone();
            }
        }
        Ok(())
    }

    fn deliveries(&self, company: CompanyId, f: &DeliveryFilter) -> PortResult<Vec<Delivery>> {
        let t = self.lock();
        let by_age: BTreeMap<_, &Delivery> = t
            .deliveries
            .values()
            .filter(|d| d.company_id == company)
            .filter(|d| f.status.is_none_or(|s| d.status == s))
            .filter(|d| f.grant.is_none_or(|g| d.grant_id == Some(g)))
            .filter(|d| f.payment_link_uid.is_none() || d.payment_link_uid == f.payment_link_uid)
            .filter(|d| f.search.as_deref().is_none_or(|q| found_by(d, q)))
            .map(|d| ((d.created_at, d.id), d))
            .collect();
        // Newest first.
        Ok(by_age.into_values().rev().take(f.limit).cloned().collect())
    }

    fn delivery(&self, company: CompanyId, id: uuid::Uuid) -> PortResult<Option<Delivery>> {
        let t = self.lock();
        let found = t.deliveries.get(&id).filter(|d| d.company_id == company);
        Ok(found.cloned())
    }

    fn attempts(&self, company: CompanyId, id: uuid::Uuid) -> PortResult<Vec<AttemptRecord>> {
        let t = self.lock();
        let mine = t
            .deliveries
            .get(&id)
            .is_some_and(|d| d.company_id == company);
        let numbered = t.attempts.range((id, 0)..=(id, u32::MAX)).map(|(_, a)| a);
        Ok(numbered.filter(|_| mine).cloned().collect())
    }

    fn event_log(&self, company: CompanyId, q: &EventLogQuery) -> PortResult<Vec<EventLogEntry>> {
        let t = self.lock();
        let entries = t
            .logged_events
            .values()
            .map(|e| EventLogEntry::of(e.clone(), t.deliveries.values()));
        Ok(q.page(company, entries))
    }

    fn logged_event(
        &self,
        company: CompanyId,
        id: uuid::Uuid,
    ) -> PortResult<Option<EventLogEntry>> {
        let t = self.lock();
        let found = t.logged_events.get(&id).filter(|e| e.company_id == company);
        Ok(found.map(|e| EventLogEntry::of(e.clone(), t.deliveries.values())))
    }

    fn prune_event_log(&self, before: Timestamp) -> PortResult<u64> {
        let mut t = self.lock();
        let n = t.logged_events.len();
        t.logged_events.retain(|_, e| e.created_at >= before);
        Ok((n - t.logged_events.len()) as u64)
    }

    fn enqueue_link_event(
        &self,
        link: PaymentLinkId,
        build: &dyn Fn(u64) -> Vec<Delivery>,
    ) -> PortResult<Vec<Delivery>> {
        let mut t = self.lock();
        if t.link_by_id(link).is_none() {
            return Err(Fault::new("unknown payment link"));
        }
        let (deliveries, last) = t.next_events(link, 1, build)?;
        t.add_deliveries(&deliveries);
        t.event_numbers.insert(link, last);
        Ok(deliveries)
    }
}
