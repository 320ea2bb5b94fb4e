//! What webhooks need from the outside: the outbox and callbacks in storage, and signatures.

use crate::kernel::error::PortResult;
use crate::kernel::idempotency::{Completion, IdempotencyStore};
use crate::kernel::ids::CompanyId;
use crate::kernel::timestamp::Timestamp;
use crate::webhooks::{
    AfterAttempt, AttemptOutcome, CallbackKind, Circuit, CompanyCallback, Delivery, DeliveryFilter,
    Endpoint, EndpointHealth, EventLogEntry, EventLogQuery, GrantSubscription, RoundRecorded,
};

/// Webhook signatures.
pub trait WebhookSigner: Send + Sync {
    /// `t=<t>,v1=<hex>` with one `v1=` per secret, in order: hex HMAC-SHA256 keyed with the
    /// secret's bytes over `{t}.{body}`.
    fn signature_header(
        &self,
        secrets: &[crate::kernel::secret::Secret],
        t: i64,
        body: &[u8],
    ) -> String;
}

/// One attempt, as the delivery log keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptRecord {
    pub delivery_id: uuid::Uuid,
    /// 1-based.
    pub number: u32,
    pub at: Timestamp,
    pub outcome: AttemptOutcome,
}

/// The webhook outbox, callback configuration and grant subscriptions (whose keyed writes
/// store their idempotent answer in the same transaction).
pub trait WebhookStore: IdempotencyStore {
    /// The subscription of an OAuth grant, active or disabled; `None` before its first PUT.
    fn grant_subscription(&self, grant: uuid::Uuid) -> PortResult<Option<GrantSubscription>>;
    /// Compare-and-set, in ONE transaction with `completion`: writes `sub` only if the stored
    /// row of its grant has version `sub.version - 1` (version 1: only if the grant has no
    /// row), and, with a completion, marks that idempotency record answered with its sealed
    /// answer only if it is still in flight under the completion's token. Returns false,
    /// writing nothing, when another save came first or the claim was taken over.
    fn save_grant_subscription(
        &self,
        sub: &GrantSubscription,
        completion: Option<&Completion>,
    ) -> PortResult<bool>;
    fn company_callback(
        &self,
        company: CompanyId,
        kind: CallbackKind,
    ) -> PortResult<Option<CompanyCallback>>;
    /// Compare-and-set: writes `callback` only if the stored row of its (company, kind) has
    /// version `callback.version - 1` (for version 1: only if there is no row). Returns false,
    /// writing nothing, when another save came first.
    fn save_company_callback(&self, callback: &CompanyCallback) -> PortResult<bool>;
    /// Inserts deliveries in ONE transaction, recording their events in the log
    /// (`LoggedEvent::of_deliveries`). Every other write that inserts deliveries
    /// (`enqueue_link_event`, the checkout's and the subscriptions' moves) records their events
    /// in its transaction too.
    fn insert_deliveries(&self, deliveries: &[Delivery]) -> PortResult<()>;
    /// Atomically claims up to `limit` deliveries that are pending or retrying, due on their
    /// company's clock (`next_attempt_at <= now + that company's test-clock offset`) and not
    /// leased (a lease runs on real time: a moved clock MUST NOT end it), oldest due first, and
    /// leases them until `lease_until` (shown as their `next_attempt_at` meanwhile), so no other
    /// claimer (another thread or instance) gets them before the lease ends; recording an
    /// attempt ends the lease. Concurrent claimers MUST NOT receive the same delivery
    /// (PostgreSQL: `FOR UPDATE SKIP LOCKED`; SQLite: one writer). `now` is real time.
    ///
    /// Each endpoint's circuit is respected (`CircuitState::held_cap`): nothing of a paused
    /// one, one delivery of a probing one (counting what is leased of it by anyone). The same
    /// as `claim_due_deliveries_beside` for a dispatcher holding nothing.
    fn claim_due_deliveries(
        &self,
        now: Timestamp,
        lease_until: Timestamp,
        limit: usize,
    ) -> PortResult<Vec<Delivery>> {
        self.claim_due_deliveries_beside(now, lease_until, limit, &[])
    }
    /// `claim_due_deliveries` for a dispatcher holding `held` deliveries per endpoint (company
    /// and URL; claimed, not yet sent): each endpoint's deliveries taken stay within its cap
    /// (`CircuitState::held_cap`) minus what the dispatcher holds. A delivery over the cap is
    /// left for a later claim, and the ones behind it are claimed instead (a full endpoint's
    /// queue is skipped, not waited on).
    fn claim_due_deliveries_beside(
        &self,
        now: Timestamp,
        lease_until: Timestamp,
        limit: usize,
        held: &[(Endpoint, usize)],
    ) -> PortResult<Vec<Delivery>>;
    /// Records an attempt and the delivery's new state in ONE transaction: `attempts` becomes
    /// `attempt.number`, and status, `next_attempt_at`, `last_attempt_at`,
    /// `last_response_status` and `last_error` follow.
    fn record_attempt(&self, attempt: &AttemptRecord, after: &AfterAttempt) -> PortResult<()>;
    /// Records a batch of attempts, each as `record_attempt` would, and folds the round's
    /// endpoint results into their circuits (`EndpointHealth::fold`: a closed circuit has no
    /// row), all in ONE transaction (the dispatcher records a whole round at once). Returns, per
    /// item, whether it was recorded (an attempt whose delivery moved on, a stale claim, is
    /// skipped with `false`), and the circuits the round opened.
    fn record_attempts(
        &self,
        batch: &[(AttemptRecord, AfterAttempt)],
        health: &EndpointHealth<'_>,
    ) -> PortResult<RoundRecorded>;
    /// The company's endpoints that failed since their last success (open, probing or only
    /// failing), by URL.
    fn endpoint_circuits(&self, company: CompanyId) -> PortResult<Vec<Circuit>>;
    /// For the operator's metrics, read at once and cheaply: the deliveries pending or
    /// retrying (claimed ones included), the `created_at` of the oldest of them, and the
    /// endpoints paused at `now` (real time). `None` (the default): this store does not answer,
    /// and the metrics leave these gauges out.
    fn outbox_gauges(&self, now: Timestamp) -> PortResult<Option<OutboxGauges>> {
        let _ = now;
        Ok(None)
    }
    /// Points deliveries at the URL their next attempt goes to (their owner's callback changed
    /// since they were queued): sets `url` of each listed delivery that is still pending or
    /// retrying, in ONE transaction.
    fn retarget_deliveries(&self, moves: &[(uuid::Uuid, String)]) -> PortResult<()>;
    /// The company's deliveries matching the filter (with `filter.grant`, only that grant's),
    /// newest first, at most `filter.limit`.
    fn deliveries(&self, company: CompanyId, filter: &DeliveryFilter) -> PortResult<Vec<Delivery>>;
    /// One delivery of the company.
    fn delivery(&self, company: CompanyId, id: uuid::Uuid) -> PortResult<Option<Delivery>>;
    /// The attempts of one delivery of the company, oldest first.
    fn attempts(&self, company: CompanyId, id: uuid::Uuid) -> PortResult<Vec<AttemptRecord>>;
    /// The company's logged events that `q` admits (`EventLogQuery::admits`; with `q.grant`,
    /// only that grant's), newest first (`created_at`, then id, descending), at most
    /// `q.limit`, each with its deliveries' ids (oldest first) and whether one succeeded.
    fn event_log(&self, company: CompanyId, q: &EventLogQuery) -> PortResult<Vec<EventLogEntry>>;
    /// One logged event of the company, with its deliveries.
    fn logged_event(&self, company: CompanyId, id: uuid::Uuid)
        -> PortResult<Option<EventLogEntry>>;
    /// Forgets the logged events created before `before` (their deliveries stay in the
    /// delivery log); returns how many.
    fn prune_event_log(&self, before: Timestamp) -> PortResult<u64>;
    /// Emits one event of a link in ONE transaction: increments the link's event sequence
    /// (1, 2, ... per link), builds the deliveries for that sequence number with `build`, and
    /// inserts them. Returns what was inserted. Concurrent calls for one link MUST get
    /// distinct, increasing numbers.
    fn enqueue_link_event(
        &self,
        link: crate::kernel::ids::PaymentLinkId,
        build: &dyn Fn(u64) -> Vec<Delivery>,
    ) -> PortResult<Vec<Delivery>>;
}

/// What `WebhookStore::outbox_gauges` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OutboxGauges {
    /// Deliveries pending or retrying.
    pub pending: u64,
    /// When the oldest of them was created (None: none pending).
    pub oldest_pending_at: Option<Timestamp>,
    /// Endpoints whose circuit is open (paused) now.
    pub circuits_open: u64,
}
