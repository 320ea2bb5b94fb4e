//! The one write path: every session move decided on the current row, written with its timeline entries and webhook deliveries in one store write, re-decided on a lost race.

use super::*;

impl CheckoutService {
    pub(crate) fn simple_move(
        &self,
        link: &PaymentLink,
        s: PaymentSession,
        event: SessionEvent,
        trigger: &str,
        event_id: Option<&str>,
    ) -> CheckoutResult<PaymentSession> {
        let error = s.error_message.clone();
        self.move_session(link, s, trigger, event_id, &|cur| {
            let mut after = cur.clone();
            if event == SessionEvent::Fail {
                after.error_message = error.clone();
            }
            Ok(Some(Plan {
                event,
                after,
                facts: TimelineFacts::None {},
                claim: false,
            }))
        })
    }

    /// A processor event applied before: the session as it is (what its write decided is in
    /// the outbox already: a reaction an earlier crash cut short is the drain's).
    fn replayed(&self, id: PaymentSessionId) -> CheckoutResult<PaymentSession> {
        self.reread(id)
    }

    pub(super) fn reread(&self, id: PaymentSessionId) -> CheckoutResult<PaymentSession> {
        Ok(self
            .store
            .payment_session(id)?
            .ok_or_else(session_not_found)?)
    }

    /// Decides a move on the current session, writes it with its timeline and webhooks, and on
    /// a lost compare-and-set race re-reads and decides again. A processor event already
    /// applied returns the session as it is. A one-time link another session already paid is
    /// `LinkAlreadyPaid`.
    pub(super) fn move_session(
        &self,
        link: &PaymentLink,
        s: PaymentSession,
        trigger: &str,
        event_id: Option<&str>,
        decide: &dyn Fn(&PaymentSession) -> CheckoutResult<Option<Plan>>,
    ) -> CheckoutResult<PaymentSession> {
        if let Some(id) = event_id {
            if self.store.processor_event_applied(id)? {
                return self.replayed(s.id);
            }
        }
        let mut current = s;
        for _ in 0..WRITE_ATTEMPTS {
            let Some(plan) = decide(&current)? else {
                return Ok(current);
            };
            let to = transition(current.status, plan.event)?;
            let now = self.links.link_now(link)?;
            let mut after = plan.after;
            if to != current.status {
                after.previous_status = Some(current.status);
                after.status = to;
            }
            after.version = current.version + 1;
            after.updated_at = now;
            let mut kinds: Vec<PaymentEvent> = plan.event.webhook().into_iter().collect();
            let mut timeline = Vec::new();
            if let Some(kind) = plan.event.webhook() {
                timeline.push(self.timeline_entry(
                    link,
                    Some(after.id),
                    TimelineKind::Payment(kind),
                    plan.facts.clone(),
                    now,
                ));
            }
            if to != current.status {
                kinds.push(PaymentEvent::StatusChanged);
                timeline.push(self.timeline_entry(
                    link,
                    Some(after.id),
                    TimelineKind::Payment(PaymentEvent::StatusChanged),
                    TimelineFacts::StatusChanged {
                        previous_status: current.status,
                        status: to,
                    },
                    now,
                ));
            }
            // A completion is a domain event (its subscription cycle, its incoming transfer),
            // named by the id of the timeline entry that records it.
            let completed = (to == SessionStatus::Complete && current.status != to)
                .then(|| timeline.last().map(|e| e.id))
                .flatten()
                .map(|id| {
                    EventRecord::new(
                        EventId(id),
                        DomainEvent::SessionCompleted {
                            company: link.company_id,
                            link: link.id,
                            session: after.id,
                            at: after.updated_at,
                        },
                        self.k.now(),
                    )
                });
            let write = LinkEventWrite {
                link_id: link.id,
                change: SessionChange::Update {
                    session: after.clone(),
                    expected_version: current.version,
                },
                processor_event_id: event_id.map(str::to_owned),
                claim_link: plan.claim.then_some(after.id),
                timeline,
                webhook_events: kinds.len() as u64,
                events: completed.into_iter().collect(),
            };
            // The events describe the link as this write leaves it: a one-time link that this
            // payment completes is archived in the same transaction.
            let closed;
            let link_after = if plan.claim {
                closed = PaymentLink {
                    status: LinkStatus::Archived,
                    updated_at: now,
                    ..link.clone()
                };
                &closed
            } else {
                link
            };
            let build = self.delivery_builder(link_after, Some(&after), &kinds, trigger, now)?;
            match self.store.write_link_event(&write, &build)? {
                WriteOutcome::Applied(_) => {
                    // The link's first screen changes with it: a closed one-time link, or a
                    // payment under way that a new visit is shown instead of a new start.
                    let under_way = to != current.status
                        && (matches!(to, SessionStatus::Processing | SessionStatus::Underpaid)
                            || (to == SessionStatus::Complete && takes_one_payment(link)));
                    if plan.claim || under_way {
                        self.links.changed();
                    }
                    self.k.events.deliver(&write.events, self.k.now())?;
                    return Ok(after);
                }
                WriteOutcome::Duplicate => return self.replayed(current.id),
                WriteOutcome::LinkAlreadyPaid => return Err(LinkAlreadyPaid.into()),
                WriteOutcome::Stale => current = self.reread(current.id)?,
            }
        }
        Err(Fault::new("session kept changing under us").into())
    }

    pub(super) fn timeline_entry(
        &self,
        link: &PaymentLink,
        session: Option<PaymentSessionId>,
        kind: TimelineKind,
        facts: TimelineFacts,
        now: Timestamp,
    ) -> TimelineEvent {
        TimelineEvent {
            id: self.k.crypto.new_uuid(),
            link_id: link.id,
            session_id: session,
            kind,
            created_at: now,
            facts,
        }
    }

    /// Plans the webhook deliveries of `kinds` for this write (the webhooks context builds the
    /// outbox's rows once the store hands out the first sequence number).
    pub(super) fn delivery_builder(
        &self,
        link: &PaymentLink,
        session: Option<&PaymentSession>,
        kinds: &[PaymentEvent],
        trigger: &str,
        now: Timestamp,
    ) -> CheckoutResult<impl Fn(u64) -> Vec<Delivery>> {
        let events: Vec<EventKind> = kinds.iter().map(|k| EventKind::Payment(*k)).collect();
        let session = session.map(PaymentSession::snapshot).unwrap_or_default();
        let plan = self
            .webhooks
            .plan_events(link, session, &events, trigger, now)?;
        Ok(move |first: u64| plan.build(first))
    }
}
