//! The deliveries of a link's events, built in one place for every emitter (the checkout's
//! session moves, test events): one group per event, with consecutive sequence numbers from
//! the first the store hands out, one delivery per receiving callback.

use super::*;

/// Events planned for a link: ids drawn, targets resolved; `build(first)` makes the rows once
/// the store has handed out the first sequence number.
pub(crate) struct PlannedEvents {
    planned: Vec<(EventKind, uuid::Uuid, Vec<uuid::Uuid>)>,
    targets: Vec<Target>,
    snapshot: LinkSnapshot,
    session: SessionSnapshot,
    company: CompanyId,
    uid: String,
    order_id: Option<String>,
    trigger: String,
    now: Timestamp,
}

impl PlannedEvents {
    /// Whether no callback receives any of the planned events.
    pub(crate) fn has_no_target(&self) -> bool {
        !self
            .planned
            .iter()
            .any(|(event, _, _)| self.targets.iter().any(|t| t.accepts(*event)))
    }

    pub(crate) fn build(&self, first: u64) -> Vec<Delivery> {
        let mut out = Vec::new();
        for (i, (event, group_id, ids)) in self.planned.iter().enumerate() {
            let draft = PaymentEventDraft {
                event: *event,
                trigger: self.trigger.clone(),
                link: self.snapshot.clone(),
                session: self.session.clone(),
                created_at: self.now,
                sequence: first + i as u64,
            };
            for (target, id) in self.targets.iter().zip(ids) {
                if !target.accepts(*event) {
                    continue;
                }
                out.push(Delivery {
                    id: *id,
                    group_id: *group_id,
                    company_id: self.company,
                    origin: DeliveryOrigin::Event,
                    event: *event,
                    status: DeliveryStatus::Pending,
                    attempts: 0,
                    next_attempt_at: Some(self.now),
                    last_attempt_at: None,
                    last_response_status: None,
                    last_error: None,
                    payment_link_uid: Some(self.uid.clone()),
                    subscription_uid: None,
                    grant_id: target.grant,
                    order_id: self.order_id.clone(),
                    target: target.kind,
                    url: target.url.clone(),
                    body: draft.body_for(*id),
                    created_at: self.now,
                });
            }
        }
        out
    }
}

impl WebhookService {
    /// Plans `events` of `link` (as the write leaves it) at `now` on the owner's clock.
    pub(crate) fn plan_events(
        &self,
        link: &dyn LinkSubject,
        session: SessionSnapshot,
        events: &[EventKind],
        trigger: &str,
        now: Timestamp,
    ) -> PortResult<PlannedEvents> {
        let targets = self.targets(link)?;
        let snapshot = link.snapshot(&self.tenancy.pay_base(link.company())?);
        let planned = events
            .iter()
            .map(|e| {
                (
                    *e,
                    self.k.crypto.new_uuid(),
                    targets.iter().map(|_| self.k.crypto.new_uuid()).collect(),
                )
            })
            .collect();
        Ok(PlannedEvents {
            planned,
            targets,
            snapshot,
            session,
            company: link.company(),
            uid: link.link_uid().to_string(),
            order_id: link.order_id().map(str::to_owned),
            trigger: trigger.to_owned(),
            now,
        })
    }
}
