//! The billing scheduler's step, as a use case: claim the subscriptions whose next work has
//! come (a lease in the store, so no two instances work on one subscription and no cycle is
//! issued twice), issue the cycles whose lead time has come, mark cycles overdue, queue the
//! reminders, apply the overdue rule, and set when each is due again. Everything runs on the
//! company's clock; only the lease runs on real time.

use crate::kernel::error::{Fault, PortResult};
use crate::kernel::events::{Consumed, Consumer};
use crate::kernel::ids::{CompanyId, EventId};
use crate::kernel::timestamp::Timestamp;
use crate::mail::MailKind;
use crate::sandbox::ports::ClockFollower;
use crate::subscriptions::billing::next_run;
use crate::subscriptions::machine::{is_overdue, scheduled_status};
use crate::subscriptions::service::SubscriptionService;
use crate::subscriptions::{
    due_reminder, render_reminder, Actor, Cycle, CycleStatus, Subscription, SubscriptionError,
};

/// What one scheduler step did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BillingRun {
    pub claimed: usize,
    pub cycles_issued: usize,
    pub reminders_queued: usize,
    pub status_moves: usize,
    /// Subscriptions whose run failed (their lease runs out and another run retries them).
    pub failures: Vec<Fault>,
}

impl SubscriptionService {
    /// One scheduler step over at most `limit` due subscriptions.
    pub fn run_due_billing(&self, limit: usize) -> PortResult<BillingRun> {
        self.run_due_billing_of(None, limit, None)
    }

    /// One step over at most `limit` due subscriptions, of the company `only` when given;
    /// `until`: the end of a test clock's move (`due_reminder`'s horizon).
    fn run_due_billing_of(
        &self,
        only: Option<CompanyId>,
        limit: usize,
        until: Option<Timestamp>,
    ) -> PortResult<BillingRun> {
        let real = self.k.now();
        let lease_until = real.plus(self.config.lease);
        let subs = self
            .store
            .claim_due_subscriptions(real, lease_until, limit, only)?;
        let mut run = BillingRun {
            claimed: subs.len(),
            ..Default::default()
        };
        for sub in subs {
            if let Err(e) = self.run_one(sub, lease_until, until, &mut run) {
                run.failures.push(match e {
                    SubscriptionError::Fault(f) => f,
                    other => Fault::new(format!("billing run refused: {other}")),
                });
            }
        }
        Ok(run)
    }

    fn run_one(
        &self,
        sub: Subscription,
        lease_until: Timestamp,
        until: Option<Timestamp>,
        run: &mut BillingRun,
    ) -> Result<(), SubscriptionError> {
        let now = self.tenancy.company_now(sub.company_id)?;
        let horizon = until.unwrap_or(now);
        let mut next_sequence = sub.next_sequence;
        if sub.status.bills() {
            next_sequence = self.issue_due_cycles(&sub, now, run)?;
            let cycles = self.store.cycles(sub.company_id, &[sub.id])?;
            for c in cycles.iter().filter(|c| c.status == CycleStatus::Open) {
                if is_overdue(c, now) {
                    self.store.set_cycle_status(
                        c.id,
                        CycleStatus::Open,
                        CycleStatus::Overdue,
                        now,
                    )?;
                }
            }
            for c in &cycles {
                run.reminders_queued += usize::from(self.remind(&sub, c, now, horizon)?);
            }
        }
        let cycles = self.store.cycles(sub.company_id, &[sub.id])?;
        let mut sub = Subscription {
            next_sequence,
            ..sub
        };
        if let Some(to) = scheduled_status(sub.status, &cycles, now) {
            let before = sub.status;
            sub = self.move_status(sub, to, Actor::Scheduler)?;
            run.status_moves += usize::from(sub.status != before);
        }
        let next = next_run(&sub, &cycles, &self.config);
        self.store
            .finish_run(sub.id, lease_until, sub.status, next_sequence, next)?;
        Ok(())
    }

    /// Issues the links of cycles left scheduled (a run that stopped half-way) and creates
    /// and issues each cycle whose lead time has come. Returns the next sequence to create.
    fn issue_due_cycles(
        &self,
        sub: &Subscription,
        now: Timestamp,
        run: &mut BillingRun,
    ) -> Result<u32, SubscriptionError> {
        let client_id = None;
        for c in self.store.cycles(sub.company_id, &[sub.id])? {
            if c.status == CycleStatus::Scheduled && c.due_at.minus(self.config.invoice_lead) <= now
            {
                run.cycles_issued += usize::from(self.open(sub, &c, now, client_id.clone())?);
            }
        }
        let schedule = sub.schedule();
        let mut next = sub.next_sequence;
        for _ in 0..self.config.max_cycles_per_run {
            let Some(due) = schedule.due_at(next) else {
                break;
            };
            if due.minus(self.config.invoice_lead) > now {
                break;
            }
            let cycle = self.new_cycle(sub, next, due, now);
            if self.store.insert_cycle(&cycle)? {
                run.cycles_issued += usize::from(self.open(sub, &cycle, now, client_id.clone())?);
            }
            next += 1;
        }
        Ok(next)
    }

    /// Issues a scheduled cycle's link and opens the cycle with it.
    fn open(
        &self,
        sub: &Subscription,
        cycle: &Cycle,
        now: Timestamp,
        client_id: Option<String>,
    ) -> Result<bool, SubscriptionError> {
        let link = self.issue_cycle_link(sub, cycle, client_id)?;
        if self.store.open_cycle(cycle.id, link.id, &link.uid, now)? {
            return Ok(true);
        }
        // Opened by another run meanwhile: this link is not needed.
        self.links.archive_link_of(sub.company_id, &link.uid)?;
        Ok(false)
    }

    /// Queues the reminder a cycle is due for, if any; true when a mail was queued. The stage
    /// is recorded first (compare-and-set), so a reminder is never sent twice; a recipient
    /// past the mail cap gets none (`MailService::queue`).
    fn remind(
        &self,
        sub: &Subscription,
        c: &Cycle,
        now: Timestamp,
        horizon: Timestamp,
    ) -> PortResult<bool> {
        let Some((stage, send)) = due_reminder(c, sub.zone, now, horizon) else {
            return Ok(false);
        };
        if !self
            .store
            .set_cycle_reminders(c.id, c.reminders, stage.number())?
            || !send
        {
            return Ok(false);
        }
        let Some(uid) = &c.payment_link_uid else {
            return Ok(false);
        };
        let Some(link) = self.links.link_of(sub.company_id, uid)? else {
            return Ok(false);
        };
        let pay_url = link.public_url(&self.tenancy.pay_base(sub.company_id)?);
        let rendered = render_reminder(sub, c, stage, &pay_url);
        let queued = self.mail.queue(
            &link,
            MailKind::SubscriptionReminder,
            sub.customer_email.clone(),
            rendered,
            now,
        )?;
        Ok(queued.is_some())
    }
}

/// Subscriptions per step when a moved test clock runs a company's billing.
const CLOCK_BATCH: usize = 64;

/// A moved test clock walks through each instant a subscription of the company has work at
/// (`next_run_at`), and runs that company's due billing there.
impl SubscriptionService {
    /// The reaction to a moved test clock (`DomainEvent::ClockMoved`): the company's billing
    /// work due on the moved clock runs, then the consumption is recorded. Each run is
    /// idempotent by itself (what ran is no longer due), and a recorded event is not run again.
    pub(super) fn follow_moved_clock(
        &self,
        event: EventId,
        company: CompanyId,
        until: Timestamp,
    ) -> PortResult<()> {
        let done = Consumed {
            event,
            consumer: Consumer::BillingClock,
        };
        if self.k.events.consumed(&done)? {
            return Ok(());
        }
        self.run_due(company, until)?;
        self.k.events.record_consumed(&done, self.k.now())
    }
}

impl ClockFollower for SubscriptionService {
    fn next_due_after(
        &self,
        company: CompanyId,
        after: Timestamp,
    ) -> PortResult<Option<Timestamp>> {
        self.store.next_run_after(company, after)
    }

    /// Steps until fewer than a batch were due (each step leases what it claims, so a run
    /// never takes one subscription twice; one still due after its run is taken again).
    fn run_due(&self, company: CompanyId, until: Timestamp) -> PortResult<()> {
        loop {
            let mut run = self.run_due_billing_of(Some(company), CLOCK_BATCH, Some(until))?;
            if let Some(failed) = run.failures.pop() {
                return Err(failed);
            }
            if run.claimed < CLOCK_BATCH {
                return Ok(());
            }
        }
    }
}
