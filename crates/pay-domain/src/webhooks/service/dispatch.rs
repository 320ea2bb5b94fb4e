//! The dispatcher's three steps: claim due deliveries (each endpoint within its share), prepare
//! each signed request, record the outcomes with their endpoints' circuits.

use std::collections::hash_map::Entry;
use std::collections::HashMap;

use super::*;

impl WebhookService {
    /// Dispatcher step 1: claims due deliveries for `CLAIM_LEASE`.
    pub fn claim_due_deliveries(&self, limit: usize) -> PortResult<Vec<Delivery>> {
        self.claim_due_deliveries_for(limit, CLAIM_LEASE)
    }

    /// Step 1 with the dispatcher's own lease (`PAY_WEBHOOK_LEASE_SECS`): how long the claimed
    /// deliveries stay hidden from other claimers, and so how long a crashed dispatcher's claims
    /// wait before they are sent again. The dispatcher keeps its sends inside it.
    pub fn claim_due_deliveries_for(
        &self,
        limit: usize,
        lease: time::Duration,
    ) -> PortResult<Vec<Delivery>> {
        self.claim_due_deliveries_beside(limit, lease, &[])
    }

    /// Step 1 for a dispatcher holding `held` deliveries per endpoint (claimed, not yet sent):
    /// each endpoint's deliveries claimed stay within its share (`ENDPOINT_HELD`, or its
    /// circuit's).
    pub fn claim_due_deliveries_beside(
        &self,
        limit: usize,
        lease: time::Duration,
        held: &[(Endpoint, usize)],
    ) -> PortResult<Vec<Delivery>> {
        let now = self.k.clock.now();
        self.store
            .claim_due_deliveries_beside(now, now.plus(lease), limit, held)
    }

    /// Dispatcher step 2: the signed request for the next attempt. The signature's `t` is real
    /// time (the receiver checks it against its own clock), even when the sandbox clock moved
    /// business time. Every live secret of the callback signs (two during a rotation).
    pub fn prepare_attempt(&self, d: &Delivery) -> Result<OutboundRequest, NotPrepared> {
        self.prepare_attempts(std::slice::from_ref(d))
            .pop()
            .unwrap_or_else(|| Err(NotPrepared::internal("nothing prepared")))
    }

    /// Step 2 for a whole round: each owner's callback is read and its secrets opened once.
    /// An attempt goes to the owner's callback as it is now (a retry or a resend after the
    /// merchant changed it goes to the new URL, signed with the current secrets); deliveries
    /// whose URL changed are pointed at it in the store first, so the log says where they went.
    pub fn prepare_attempts(
        &self,
        deliveries: &[Delivery],
    ) -> Vec<Result<OutboundRequest, NotPrepared>> {
        let mut targets: HashMap<Owner, Result<CurrentTarget, NotPrepared>> = HashMap::new();
        let mut moved: Vec<(uuid::Uuid, String)> = Vec::new();
        let t = self.wall_clock.now().unix_seconds();
        let mut prepared: Vec<Result<OutboundRequest, NotPrepared>> = deliveries
            .iter()
            .map(|d| {
                let owner = Owner::of(d)?;
                let target = targets
                    .entry(owner)
                    .or_insert_with_key(|owner| self.current_target(owner))
                    .as_ref()
                    .map_err(Clone::clone)?;
                if let Some(sub) = &target.retained {
                    self.retained_allows(d, sub)?;
                }
                if target.url != d.url {
                    moved.push((d.id, target.url.clone()));
                }
                Ok(self.signed_request(d, &target.url, &target.secrets, t))
            })
            .collect();
        if !moved.is_empty() {
            if let Err(e) = self.store.retarget_deliveries(&moved) {
                // Not sent where the log cannot say: tried again after the lease.
                for (p, d) in prepared.iter_mut().zip(deliveries) {
                    if moved.iter().any(|(id, _)| *id == d.id) {
                        *p = Err(NotPrepared::store(e.clone()));
                    }
                }
            }
        }
        prepared
    }

    fn signed_request(
        &self,
        d: &Delivery,
        url: &str,
        secrets: &[Secret],
        t: i64,
    ) -> OutboundRequest {
        let attempt = d.attempts + 1;
        let signature = self.signer.signature_header(secrets, t, d.body.as_bytes());
        let headers = vec![
            ("content-type".to_owned(), "application/json".to_owned()),
            ("user-agent".to_owned(), USER_AGENT.to_owned()),
            ("x-pay-delivery-id".to_owned(), d.id.to_string()),
            ("x-pay-delivery-group-id".to_owned(), d.group_id.to_string()),
            (
                "x-pay-delivery-origin".to_owned(),
                d.origin.as_str().to_owned(),
            ),
            ("x-pay-event".to_owned(), d.event.short_name().to_owned()),
            ("x-pay-attempt".to_owned(), attempt.to_string()),
            ("x-pay-signature".to_owned(), signature),
        ];
        OutboundRequest {
            delivery_id: d.id,
            url: url.to_owned(),
            headers,
            body: d.body.clone(),
            attempt,
        }
    }

    /// Dispatcher step 3: records the attempt and moves the delivery (one transaction).
    pub fn record_attempt(
        &self,
        d: &Delivery,
        outcome: AttemptOutcome,
    ) -> PortResult<AfterAttempt> {
        let now = self.tenancy.company_now(d.company_id)?;
        let (record, after) = decide(d, outcome, now)?;
        self.store.record_attempt(&record, &after)?;
        Ok(after)
    }

    /// Step 3 for a whole round, in as few transactions as the store can. Returns how many
    /// were recorded (an attempt on a claim that moved on is skipped) and the endpoints the
    /// round paused. Each company's clock is read once per round, not once per delivery. Each
    /// attempt's verdict on its receiver (at the delivery's `url`, where the attempt went) moves
    /// that endpoint's circuit, on real time.
    pub fn record_attempts(&self, round: Vec<(Delivery, AttemptOutcome)>) -> PortResult<Recorded> {
        let mut clocks: HashMap<CompanyId, Timestamp> = HashMap::new();
        let mut results: Vec<EndpointResult> = Vec::new();
        let batch: Vec<(AttemptRecord, AfterAttempt)> = round
            .into_iter()
            .map(|(d, outcome)| {
                let now = match clocks.entry(d.company_id) {
                    Entry::Occupied(e) => *e.get(),
                    Entry::Vacant(e) => *e.insert(self.tenancy.company_now(d.company_id)?),
                };
                let endpoint = Endpoint {
                    company_id: d.company_id,
                    url: d.url.clone(),
                };
                results.extend(EndpointResult::of(endpoint, &outcome));
                decide(&d, outcome, now)
            })
            .collect::<PortResult<_>>()?;
        let health = EndpointHealth {
            results: &results,
            now: self.k.clock.now(),
            rule: &self.circuit,
        };
        let round = self.store.record_attempts(&batch, &health)?;
        Ok(Recorded {
            recorded: round.recorded.iter().filter(|r| **r).count(),
            opened: round.opened,
        })
    }

    /// The outbox as the operator's metrics show it (`WebhookStore::outbox_gauges`), read now
    /// (circuits on real time); `None` when the store does not answer it.
    pub fn outbox_gauges(&self) -> PortResult<Option<super::super::ports::OutboxGauges>> {
        self.store.outbox_gauges(self.wall_clock.now())
    }

    /// The company's endpoints failing since their last success, with their circuits.
    pub fn endpoint_circuits(&self, company: CompanyId) -> PortResult<Vec<Circuit>> {
        self.store.endpoint_circuits(company)
    }
}

/// What recording a round did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// Attempts recorded (the rest were on stale claims).
    pub recorded: usize,
    /// Endpoints this round paused.
    pub opened: Vec<Circuit>,
}

/// The attempt's record and what follows it, at `now` on the delivery's company clock (the
/// next retry falls due on that clock).
fn decide(
    d: &Delivery,
    outcome: AttemptOutcome,
    now: Timestamp,
) -> PortResult<(AttemptRecord, AfterAttempt)> {
    let attempt = d.attempts + 1;
    let after = after_attempt(d.status, attempt, &outcome, now)?;
    Ok((
        AttemptRecord {
            delivery_id: d.id,
            number: attempt,
            at: now,
            outcome,
        },
        after,
    ))
}
