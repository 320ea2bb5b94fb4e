//! The host's own store: every table a `BTreeMap` (or a list where rows have no key of their
//! own) behind ONE `Mutex`, so each port method holding the lock is one transaction. It
//! implements only the ports the services this host builds take (see `docs/architecture.md`,
//! "Embedding"); a real host would put the same methods over its own database.

mod checkout;
mod events;
mod links;
mod tenancy;
mod webhooks;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Mutex, MutexGuard};

use pay_domain::checkout::{PaymentSession, TimelineEvent};
use pay_domain::kernel::ids::{CompanyId, PartnerId, PaymentLinkId, PaymentSessionId, UserId};
use pay_domain::kernel::secret::SealedSecret;
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::links::PaymentLink;
use pay_domain::settings::PaySettings;
use pay_domain::tenancy::keys::StoredIntegration;
use pay_domain::tenancy::ports::StoredSignIn;
use pay_domain::tenancy::{Company, Role, UserRecord};
use pay_domain::webhooks::ports::AttemptRecord;
use pay_domain::webhooks::{
    Circuit, CompanyCallback, Delivery, Endpoint, GrantSubscription, LinkWebhook,
};
use pay_domain::Fault;

/// An idempotency key's record: the request it belongs to, its claim, and its answer once given.
#[derive(Debug, Clone)]
struct KeyRecord {
    fingerprint: String,
    token: String,
    lease_until: Timestamp,
    answer: Option<SealedSecret>,
    created_at: Timestamp,
}

/// The rows, keyed the way the ports look them up.
#[derive(Debug, Default)]
struct Tables {
    users: BTreeMap<UserId, UserRecord>,
    companies: BTreeMap<CompanyId, (Company, PaySettings)>,
    /// (user, company) -> role and when it was granted.
    members: BTreeMap<(UserId, CompanyId), (Role, Timestamp)>,
    /// By token digest.
    sign_ins: BTreeMap<String, StoredSignIn>,
    integrations: BTreeMap<PartnerId, StoredIntegration>,
    /// By uid (unique across companies).
    links: BTreeMap<String, PaymentLink>,
    /// Anonymous links' callbacks, by link uid.
    link_webhooks: BTreeMap<String, LinkWebhook>,
    sessions: BTreeMap<PaymentSessionId, PaymentSession>,
    /// Processor event ids already applied.
    processor_events: BTreeSet<String>,
    /// One-time links' one paid session.
    paid: BTreeMap<PaymentLinkId, PaymentSessionId>,
    timeline: Vec<TimelineEvent>,
    /// The last webhook event number handed out per link.
    event_numbers: BTreeMap<PaymentLinkId, u64>,
    callbacks: BTreeMap<CompanyId, Vec<CompanyCallback>>,
    grant_subscriptions: BTreeMap<uuid::Uuid, GrantSubscription>,
    /// (scope, key) -> record.
    idempotency: BTreeMap<(String, String), KeyRecord>,
    deliveries: BTreeMap<uuid::Uuid, Delivery>,
    /// The event log (`LoggedEvent::of_deliveries` of what was inserted), by id.
    logged_events: BTreeMap<uuid::Uuid, pay_domain::webhooks::LoggedEvent>,
    /// (delivery, attempt number) -> attempt.
    attempts: BTreeMap<(uuid::Uuid, u32), AttemptRecord>,
    /// Claimed deliveries -> end of their lease (real time).
    leases: BTreeMap<uuid::Uuid, Timestamp>,
    /// Endpoints failing since their last success.
    circuits: BTreeMap<Endpoint, Circuit>,
    /// Rate-limit buckets -> their hits.
    hits: BTreeMap<String, Vec<Timestamp>>,
    /// The domain events' outbox, by id.
    events: BTreeMap<pay_domain::kernel::ids::EventId, events::EventRow>,
    /// (event, consumer) -> when it was consumed.
    consumed: BTreeMap<(pay_domain::kernel::ids::EventId, &'static str), Timestamp>,
}

/// The host's store.
#[derive(Debug, Default)]
pub struct HostStore {
    tables: Mutex<Tables>,
}

impl HostStore {
    fn lock(&self) -> MutexGuard<'_, Tables> {
        // A panic while holding the lock leaves no half-written transaction behind: every
        // method checks before it writes.
        self.tables.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Tables {
    fn link_by_id(&self, id: PaymentLinkId) -> Option<&PaymentLink> {
        self.links.values().find(|l| l.id == id)
    }

    /// Refuses new deliveries unless each names a known company and a new id.
    fn check_deliveries(&self, new: &[Delivery]) -> Result<(), Fault> {
        let mut ids = BTreeSet::new();
        for d in new {
            if !self.companies.contains_key(&d.company_id) {
                return Err(Fault::new("delivery of an unknown company"));
            }
            if self.deliveries.contains_key(&d.id) || !ids.insert(d.id) {
                return Err(Fault::new("duplicate delivery id"));
            }
        }
        Ok(())
    }

    /// Stores checked deliveries and logs their events.
    fn add_deliveries(&mut self, new: &[Delivery]) {
        self.deliveries
            .extend(new.iter().map(|d| (d.id, d.clone())));
        let logged = pay_domain::webhooks::LoggedEvent::of_deliveries(new);
        self.logged_events
            .extend(logged.into_iter().map(|e| (e.id, e)));
    }

    /// What `build` makes of the next `n` event numbers of `link`, checked, not yet stored;
    /// with the last number they use.
    fn next_events(
        &self,
        link: PaymentLinkId,
        n: u64,
        build: &dyn Fn(u64) -> Vec<Delivery>,
    ) -> Result<(Vec<Delivery>, u64), Fault> {
        let last = self.event_numbers.get(&link).copied().unwrap_or(0);
        if n == 0 {
            return Ok((vec![], last));
        }
        let built = build(last + 1);
        self.check_deliveries(&built)?;
        Ok((built, last + n))
    }
}
