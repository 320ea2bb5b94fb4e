//! The in-memory store: subscriptions, cycles and the scheduler's claim.

use super::{check_new_deliveries, unique_violation, MemStore, Tables};
use crate::kernel::error::{Fault, PortResult};
use crate::kernel::idempotency::Completion;
use crate::kernel::ids::*;
use crate::kernel::timestamp::Timestamp;
use crate::links::CreatedBy;
use crate::subscriptions::ports::{CyclePaid, CyclePayment};
use crate::subscriptions::ports::{StatusWrite, SubscriptionFilter, SubscriptionStore};
use crate::subscriptions::{Cycle, CycleStatus, Subscription, SubscriptionStatus};

fn offset_of(t: &Tables, company: CompanyId) -> i64 {
    t.companies
        .iter()
        .find(|(c, _)| c.id == company)
        .map_or(0, |(c, _)| c.test_clock_offset_ms)
}

fn check_cycle(t: &Tables, c: &Cycle) -> PortResult<()> {
    if t.cycles.iter().any(|x| x.id == c.id) {
        return Err(unique_violation("subscription_cycles.id"));
    }
    Ok(())
}

impl SubscriptionStore for MemStore {
    fn insert_subscription(
        &self,
        s: &Subscription,
        first: &Cycle,
        completion: Option<&Completion>,
    ) -> PortResult<bool> {
        self.count_call("insert_subscription");
        let mut t = self.write();
        if !t.companies.iter().any(|(c, _)| c.id == s.company_id) {
            return Err(Fault::new("foreign key: company"));
        }
        if !t
            .contacts
            .iter()
            .any(|c| c.id == s.contact_id && c.company_id == s.company_id)
        {
            return Err(Fault::new("foreign key: contact"));
        }
        if t.subscriptions
            .iter()
            .any(|x| x.id == s.id || x.uid == s.uid)
        {
            return Err(unique_violation("subscriptions.uid"));
        }
        check_cycle(&t, first)?;
        if first.subscription_id != s.id {
            return Err(Fault::new("foreign key: subscription"));
        }
        if !super::webhooks::complete(&mut t, completion) {
            return Ok(false);
        }
        t.subscriptions.push(s.clone());
        t.cycles.push(first.clone());
        Ok(true)
    }

    fn subscriptions(
        &self,
        company: CompanyId,
        filter: SubscriptionFilter,
        limit: usize,
    ) -> PortResult<Vec<Subscription>> {
        self.count_call("subscriptions");
        let mut v: Vec<Subscription> = self
            .tables()
            .subscriptions
            .iter()
            .filter(|s| s.company_id == company)
            .filter(|s| {
                filter
                    .grant_id
                    .is_none_or(|g| s.created_by == CreatedBy::Grant(g))
            })
            .cloned()
            .collect();
        v.sort_by_key(|s| std::cmp::Reverse((s.created_at, s.id)));
        v.truncate(limit);
        Ok(v)
    }

    fn subscription(
        &self,
        company: CompanyId,
        uid: &SubscriptionUid,
    ) -> PortResult<Option<Subscription>> {
        self.count_call("subscription");
        Ok(self
            .tables()
            .subscriptions
            .iter()
            .find(|s| s.company_id == company && &s.uid == uid)
            .cloned())
    }

    fn contact_subscriptions(
        &self,
        company: CompanyId,
        contact: ContactId,
    ) -> PortResult<Vec<Subscription>> {
        self.count_call("contact_subscriptions");
        let mut v: Vec<Subscription> = self
            .tables()
            .subscriptions
            .iter()
            .filter(|s| s.company_id == company && s.contact_id == contact)
            .cloned()
            .collect();
        v.sort_by_key(|s| std::cmp::Reverse((s.created_at, s.id)));
        Ok(v)
    }

    fn cycles(&self, company: CompanyId, of: &[SubscriptionId]) -> PortResult<Vec<Cycle>> {
        self.count_call("cycles");
        let mut v: Vec<Cycle> = self
            .tables()
            .cycles
            .iter()
            .filter(|c| c.company_id == company && of.contains(&c.subscription_id))
            .cloned()
            .collect();
        v.sort_by_key(|c| (c.subscription_id, c.sequence));
        Ok(v)
    }

    fn move_subscription(&self, w: &StatusWrite) -> PortResult<bool> {
        self.count_call("move_subscription");
        let mut guard = self.write();
        let t = &mut *guard;
        check_new_deliveries(t, &w.deliveries)?;
        let Some(s) = t
            .subscriptions
            .iter_mut()
            .find(|s| s.company_id == w.company && s.id == w.subscription && s.status == w.from)
        else {
            return Ok(false);
        };
        s.status = w.to;
        s.updated_at = w.at;
        s.next_sequence = w.next_sequence;
        s.next_run_at = w.next_run_at;
        if w.cancel_unpaid_cycles {
            for c in t
                .cycles
                .iter_mut()
                .filter(|c| c.subscription_id == w.subscription && c.status.is_cancellable())
            {
                c.status = CycleStatus::Cancelled;
                c.updated_at = w.at;
            }
        }
        super::add_deliveries(t, &w.deliveries);
        Ok(true)
    }

    fn claim_due_subscriptions(
        &self,
        now: Timestamp,
        lease_until: Timestamp,
        limit: usize,
        only: Option<CompanyId>,
    ) -> PortResult<Vec<Subscription>> {
        self.count_call("claim_due_subscriptions");
        let mut guard = self.write();
        let t = &mut *guard;
        let mut due: Vec<Subscription> = t
            .subscriptions
            .iter()
            .filter(|s| only.is_none_or(|c| c == s.company_id))
            .filter(|s| {
                let local = now.plus(time::Duration::milliseconds(offset_of(t, s.company_id)));
                s.next_run_at.is_some_and(|at| at <= local)
                    && !t
                        .subscription_leases
                        .iter()
                        .any(|(id, until)| *id == s.id && *until > now)
            })
            .cloned()
            .collect();
        due.sort_by_key(|s| (s.next_run_at, s.id));
        due.truncate(limit);
        for s in &due {
            t.subscription_leases.retain(|(id, _)| *id != s.id);
            t.subscription_leases.push((s.id, lease_until));
        }
        Ok(due)
    }

    fn next_run_after(
        &self,
        company: CompanyId,
        after: Timestamp,
    ) -> PortResult<Option<Timestamp>> {
        self.count_call("next_run_after");
        Ok(self
            .tables()
            .subscriptions
            .iter()
            .filter(|s| s.company_id == company)
            .filter_map(|s| s.next_run_at)
            .filter(|at| *at > after)
            .min())
    }

    fn finish_run(
        &self,
        id: SubscriptionId,
        lease_until: Timestamp,
        status: SubscriptionStatus,
        next_sequence: u32,
        next_run_at: Option<Timestamp>,
    ) -> PortResult<bool> {
        self.count_call("finish_run");
        let mut guard = self.write();
        let t = &mut *guard;
        let before = t.subscription_leases.len();
        t.subscription_leases
            .retain(|(s, until)| !(*s == id && *until == lease_until));
        if t.subscription_leases.len() == before {
            return Ok(false);
        }
        if let Some(s) = t
            .subscriptions
            .iter_mut()
            .find(|s| s.id == id && s.status == status)
        {
            s.next_sequence = s.next_sequence.max(next_sequence);
            s.next_run_at = next_run_at;
        }
        Ok(true)
    }

    fn insert_cycle(&self, c: &Cycle) -> PortResult<bool> {
        self.count_call("insert_cycle");
        let mut t = self.write();
        if !t
            .subscriptions
            .iter()
            .any(|s| s.id == c.subscription_id && s.company_id == c.company_id)
        {
            return Err(Fault::new("foreign key: subscription"));
        }
        if t.cycles
            .iter()
            .any(|x| x.subscription_id == c.subscription_id && x.sequence == c.sequence)
        {
            return Ok(false);
        }
        check_cycle(&t, c)?;
        t.cycles.push(c.clone());
        Ok(true)
    }

    fn open_cycle(
        &self,
        id: CycleId,
        link: PaymentLinkId,
        link_uid: &LinkUid,
        at: Timestamp,
    ) -> PortResult<bool> {
        self.count_call("open_cycle");
        let mut t = self.write();
        let Some(c) = t
            .cycles
            .iter_mut()
            .find(|c| c.id == id && c.status == CycleStatus::Scheduled)
        else {
            return Ok(false);
        };
        c.status = CycleStatus::Open;
        c.payment_link_id = Some(link);
        c.payment_link_uid = Some(link_uid.clone());
        c.issued_at = Some(at);
        c.updated_at = at;
        Ok(true)
    }

    fn set_cycle_status(
        &self,
        id: CycleId,
        from: CycleStatus,
        to: CycleStatus,
        at: Timestamp,
    ) -> PortResult<bool> {
        self.count_call("set_cycle_status");
        let mut t = self.write();
        let Some(c) = t.cycles.iter_mut().find(|c| c.id == id && c.status == from) else {
            return Ok(false);
        };
        c.status = to;
        c.updated_at = at;
        Ok(true)
    }

    fn set_cycle_reminders(&self, id: CycleId, from: u8, to: u8) -> PortResult<bool> {
        self.count_call("set_cycle_reminders");
        let mut t = self.write();
        let Some(c) = t
            .cycles
            .iter_mut()
            .find(|c| c.id == id && c.reminders == from)
        else {
            return Ok(false);
        };
        c.reminders = to;
        Ok(true)
    }

    fn cycle_of_link(&self, link: PaymentLinkId) -> PortResult<Option<Cycle>> {
        self.count_call("cycle_of_link");
        Ok(self
            .tables()
            .cycles
            .iter()
            .find(|c| c.payment_link_id == Some(link))
            .cloned())
    }

    fn pay_cycle(&self, w: &CyclePayment) -> PortResult<CyclePaid> {
        self.count_call("pay_cycle");
        // One lock: the whole write is one transaction.
        let mut guard = self.write();
        let t = &mut *guard;
        if t.consumed.iter().any(|(c, _)| *c == w.consumed) {
            return Ok(CyclePaid::AlreadyConsumed);
        }
        let Some(c) = t
            .cycles
            .iter_mut()
            .find(|c| c.id == w.cycle && c.subscription_id == w.subscription && c.status == w.from)
        else {
            return Ok(CyclePaid::Stale);
        };
        c.status = CycleStatus::Paid;
        c.paid_at = Some(w.at);
        c.updated_at = w.at;
        if let Some(s) = t.subscriptions.iter_mut().find(|s| s.id == w.subscription) {
            s.next_run_at = s.next_run_at.map(|n| n.min(w.at));
        }
        t.consumed.push((w.consumed, w.at));
        Ok(CyclePaid::Applied)
    }
}
