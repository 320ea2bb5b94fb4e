//! What subscriptions need from storage.

use crate::kernel::error::PortResult;
use crate::kernel::events::Consumed;
use crate::kernel::idempotency::Completion;
use crate::kernel::ids::{
    CompanyId, ContactId, CycleId, LinkUid, PaymentLinkId, SubscriptionId, SubscriptionUid,
};
use crate::kernel::timestamp::Timestamp;
use crate::subscriptions::{Cycle, CycleStatus, Subscription, SubscriptionStatus};
use crate::webhooks::Delivery;

/// Which subscriptions a list returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SubscriptionFilter {
    /// `Some`: only those created by this OAuth grant.
    pub grant_id: Option<uuid::Uuid>,
}

/// One status move, written in ONE transaction.
#[derive(Debug, Clone, PartialEq)]
pub struct StatusWrite {
    pub company: CompanyId,
    pub subscription: SubscriptionId,
    /// Compare-and-set: written only while the stored status is `from`.
    pub from: SubscriptionStatus,
    pub to: SubscriptionStatus,
    pub at: Timestamp,
    pub next_sequence: u32,
    pub next_run_at: Option<Timestamp>,
    /// Cancel: every cycle still scheduled, open or overdue becomes cancelled.
    pub cancel_unpaid_cycles: bool,
    /// The webhook deliveries of the move.
    pub deliveries: Vec<Delivery>,
}

/// A cycle paid by its link's completed session (the consumption of that
/// `DomainEvent::SessionCompleted`), written in ONE transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CyclePayment {
    /// Recorded with the payment; recorded before, nothing is written.
    pub consumed: Consumed,
    pub cycle: CycleId,
    /// Compare-and-set: written only while the cycle's status is still `from`.
    pub from: CycleStatus,
    pub subscription: SubscriptionId,
    /// The session's completion: the cycle's `paid_at` and `updated_at`, and the latest its
    /// subscription's `next_run_at` (when set) may be, so the scheduler re-decides then.
    pub at: Timestamp,
}

/// What became of a `CyclePayment`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CyclePaid {
    Applied,
    /// The event was consumed before; nothing written.
    AlreadyConsumed,
    /// The cycle's status is no longer `from`; nothing written.
    Stale,
}

/// Subscriptions and their cycles.
pub trait SubscriptionStore {
    /// Inserts a subscription and its first cycle in ONE transaction, with, given a
    /// completion (a keyed create, `kernel::keyed`), that idempotency record marked answered;
    /// false with nothing written when its claim was taken over. `uid` MUST be unique across
    /// companies; (subscription, sequence) MUST be unique.
    fn insert_subscription(
        &self,
        s: &Subscription,
        first: &Cycle,
        completion: Option<&Completion>,
    ) -> PortResult<bool>;
    /// Up to `limit` newest subscriptions of the company (newest first, ties by id).
    fn subscriptions(
        &self,
        company: CompanyId,
        filter: SubscriptionFilter,
        limit: usize,
    ) -> PortResult<Vec<Subscription>>;
    /// The company's subscription with this uid; `None` for another company's.
    fn subscription(
        &self,
        company: CompanyId,
        uid: &SubscriptionUid,
    ) -> PortResult<Option<Subscription>>;
    /// The company's subscriptions of one contact, newest first.
    fn contact_subscriptions(
        &self,
        company: CompanyId,
        contact: ContactId,
    ) -> PortResult<Vec<Subscription>>;
    /// The cycles of these subscriptions of the company, by subscription then sequence (one
    /// query, however many subscriptions).
    fn cycles(&self, company: CompanyId, of: &[SubscriptionId]) -> PortResult<Vec<Cycle>>;
    /// A status move (see `StatusWrite`): status, `updated_at`, `next_sequence`,
    /// `next_run_at`, the cancelled cycles and the deliveries land together. Returns false,
    /// writing nothing, when the status is no longer `from`.
    fn move_subscription(&self, w: &StatusWrite) -> PortResult<bool>;
    /// Atomically claims up to `limit` subscriptions whose `next_run_at` has come on their
    /// company's clock (`next_run_at <= now + that company's test-clock offset`) and that are
    /// not leased (`lease_until` unset or `<= now`; a lease runs on real time), earliest
    /// first, and leases them until `lease_until`; with `only`, that company's alone (a moved
    /// test clock runs its own company's work). Concurrent claimers MUST NOT receive the
    /// same subscription (PostgreSQL: `FOR UPDATE SKIP LOCKED`; SQLite: one writer). Reads
    /// only due rows (an index on `next_run_at`), never the whole table.
    fn claim_due_subscriptions(
        &self,
        now: Timestamp,
        lease_until: Timestamp,
        limit: usize,
        only: Option<CompanyId>,
    ) -> PortResult<Vec<Subscription>>;
    /// The earliest `next_run_at` of the company's subscriptions strictly after `after`
    /// (company clock), leased or not; `None` when none has a later run.
    fn next_run_after(&self, company: CompanyId, after: Timestamp)
        -> PortResult<Option<Timestamp>>;
    /// Ends a claimed run, only while the lease is still `lease_until` (false otherwise,
    /// writing nothing: another run took over): clears the lease and, while the status is
    /// still `status` (a person's move during the run decided these already), sets
    /// `next_sequence` (never lowering it) and `next_run_at`.
    fn finish_run(
        &self,
        id: SubscriptionId,
        lease_until: Timestamp,
        status: SubscriptionStatus,
        next_sequence: u32,
        next_run_at: Option<Timestamp>,
    ) -> PortResult<bool>;
    /// Inserts a cycle; false, writing nothing, when its (subscription, sequence) exists: a
    /// cycle is never created twice.
    fn insert_cycle(&self, c: &Cycle) -> PortResult<bool>;
    /// Compare-and-set: a scheduled cycle becomes open with its link, issued at `at`.
    fn open_cycle(
        &self,
        id: CycleId,
        link: PaymentLinkId,
        link_uid: &LinkUid,
        at: Timestamp,
    ) -> PortResult<bool>;
    /// Compare-and-set on the cycle's status.
    fn set_cycle_status(
        &self,
        id: CycleId,
        from: CycleStatus,
        to: CycleStatus,
        at: Timestamp,
    ) -> PortResult<bool>;
    /// Compare-and-set on the cycle's reminder stage (`from` -> `to`).
    fn set_cycle_reminders(&self, id: CycleId, from: u8, to: u8) -> PortResult<bool>;
    /// The cycle whose invoice is this link, if any (any company: the link names it).
    fn cycle_of_link(&self, link: PaymentLinkId) -> PortResult<Option<Cycle>>;
    /// Pays a cycle (see `CyclePayment`): the consumption record, the subscription's
    /// `next_run_at` and the cycle's status land together. The subscription's row is written
    /// before the cycle's, the order `move_subscription` locks them in.
    fn pay_cycle(&self, w: &CyclePayment) -> PortResult<CyclePaid>;
}
