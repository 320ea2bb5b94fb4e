//! Every store port in memory: `Mutex`ed vectors, with a call counter per method and hooks
//! that stage a concurrent writer. What the use-case tests run on, and what the conformance
//! suites check first.

mod bookkeeping;
mod chains;
mod checkout;
mod customers;
mod events;
mod installations;
mod links;
mod mail;
mod oauth;
mod oauth_recovery;
mod onboarding;
mod subscriptions;
mod tenancy;
mod webhooks;

pub use oauth::OAuthTables;
pub use webhooks::IdempotencyRow;

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Mutex, MutexGuard};

use crate::kernel::error::{Fault, PortResult};
use crate::kernel::ids::*;
use crate::kernel::timestamp::Timestamp;

use crate::links::{LinkStatus, PaymentLink};
use crate::settings::PaySettings;
use crate::tenancy::keys::StoredIntegration;
use crate::tenancy::ports::StoredSignIn;
use crate::tenancy::{Company, Role, UserRecord};
use crate::webhooks::ports::AttemptRecord;
use crate::webhooks::{CallbackKind, CompanyCallback, Delivery};

/// A membership row as the fake stores it.
#[derive(Debug, Clone, PartialEq)]
pub struct MemberRow {
    pub user: UserId,
    pub company: CompanyId,
    pub role: Role,
    pub at: Timestamp,
}

/// Everything the fake store holds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tables {
    pub users: Vec<UserRecord>,
    pub companies: Vec<(Company, PaySettings)>,
    pub members: Vec<MemberRow>,
    pub sessions: Vec<StoredSignIn>,
    pub integrations: Vec<StoredIntegration>,
    pub links: Vec<PaymentLink>,
    pub callbacks: Vec<CompanyCallback>,
    pub deliveries: Vec<Delivery>,
    /// The event log (one per group of origin `event`).
    pub logged_events: Vec<crate::webhooks::LoggedEvent>,
    pub attempts: Vec<AttemptRecord>,
    /// Claimed deliveries' leases (real time), until their attempt is recorded.
    pub delivery_leases: Vec<(uuid::Uuid, Timestamp)>,
    /// Endpoints failing since their last success.
    pub circuits: Vec<crate::webhooks::Circuit>,
    /// The last event sequence number handed out per link.
    pub sequences: Vec<(PaymentLinkId, u64)>,
    pub link_webhooks: Vec<crate::webhooks::LinkWebhook>,
    pub rate_hits: Vec<(String, Timestamp)>,
    pub payment_sessions: Vec<crate::checkout::PaymentSession>,
    pub processor_events: Vec<String>,
    pub timeline: Vec<crate::checkout::TimelineEvent>,
    /// One-time links' completed payment.
    pub paid_links: Vec<(PaymentLinkId, crate::kernel::ids::PaymentSessionId)>,
    pub mails: Vec<crate::mail::OutgoingMail>,
    pub contacts: Vec<crate::customers::Contact>,
    pub subscriptions: Vec<crate::subscriptions::Subscription>,
    /// Leases of claimed subscriptions (real time).
    pub subscription_leases: Vec<(SubscriptionId, Timestamp)>,
    pub cycles: Vec<crate::subscriptions::Cycle>,
    pub oauth: OAuthTables,
    pub native_platforms: Vec<crate::installations::NativePlatform>,
    pub native_installations: Vec<crate::installations::Installation>,
    pub onboarding_partners: Vec<crate::onboarding::StoredPartner>,
    pub onboarding_drafts: Vec<crate::onboarding::StoredDraft>,
    pub grant_subscriptions: Vec<crate::webhooks::GrantSubscription>,
    pub idempotency: Vec<webhooks::IdempotencyRow>,
    /// Known wallets of contacts: (company, contact, address, address key).
    pub contact_wallets: Vec<(CompanyId, ContactId, String, String)>,
    pub wallet_activities: Vec<crate::bookkeeping::WalletActivity>,
    pub expenses: Vec<crate::bookkeeping::Expense>,
    pub expense_versions: Vec<crate::bookkeeping::ExpenseVersion>,
    pub evidence_files: Vec<crate::bookkeeping::EvidenceFile>,
    /// Every EVM key a company set, with its next index.
    pub wallet_keys: Vec<chains::KeyRow>,
    /// Each company's current EVM key.
    pub wallets: Vec<chains::WalletRow>,
    pub deposit_addresses: Vec<crate::chains::DepositAddress>,
    /// The domain events' outbox.
    pub events: Vec<events::StoredEvent>,
    /// Which consumer consumed which event, and when.
    pub consumed: Vec<(crate::kernel::events::Consumed, Timestamp)>,
}

/// Every store port over `Mutex`ed vectors, with a call counter per method and a count of
/// its own writes.
///
/// The tables are reached two ways only: [`MemStore::tables`] reads (its guard has no `&mut`
/// way in), and [`MemStore::write`] writes and counts. So a write method cannot forget to be
/// counted: code that changes a table without `write()` does not compile.
///
/// ```compile_fail
/// let store = pay_domain::testing::MemStore::default();
/// store.tables().mails.clear(); // refused: reading gives no way to change a table
/// ```
///
/// ```
/// let store = pay_domain::testing::MemStore::default();
/// store.write().mails.clear();
/// assert_eq!(store.writes(), 1);
/// ```
#[derive(Debug, Default)]
pub struct MemStore {
    t: counted::Counted,
    pub calls: Mutex<BTreeMap<&'static str, usize>>,
    /// Statuses a "concurrent writer" sets on the link just before each CAS (one per call).
    pub cas_interference: Mutex<VecDeque<LinkStatus>>,
    /// Callbacks the next `company_callback` reads return instead of the stored row (one per
    /// call): what a reader sees when another writer commits between its read and its write.
    pub stale_callback_reads: Mutex<VecDeque<CompanyCallback>>,
}

/// The tables held to read: a `Deref` and nothing more, so reading cannot change a row.
#[derive(Debug)]
pub struct Read<'a>(MutexGuard<'a, Tables>);

impl std::ops::Deref for Read<'_> {
    type Target = Tables;

    fn deref(&self) -> &Tables {
        &self.0
    }
}

/// The tables and their write count, in a module of their own so that not even the port
/// implementations beside it can reach the `Mutex` past the count.
mod counted {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Mutex, MutexGuard};

    use super::{Read, Tables};

    #[derive(Debug, Default)]
    pub(super) struct Counted {
        tables: Mutex<Tables>,
        writes: AtomicUsize,
    }

    impl Counted {
        pub(super) fn read(&self) -> Read<'_> {
            Read(self.tables.lock().unwrap())
        }

        pub(super) fn write(&self) -> MutexGuard<'_, Tables> {
            self.writes.fetch_add(1, Ordering::SeqCst);
            self.tables.lock().unwrap()
        }

        pub(super) fn writes(&self) -> usize {
            self.writes.load(Ordering::SeqCst)
        }

        pub(super) fn reset(&self) {
            self.writes.store(0, Ordering::SeqCst);
        }
    }
}

pub(crate) fn unique_violation(what: &str) -> Fault {
    Fault::new(format!("unique violation: {what}"))
}

impl MemStore {
    pub fn count_call(&self, method: &'static str) {
        *self.calls.lock().unwrap().entry(method).or_default() += 1;
    }

    pub fn calls(&self, method: &str) -> usize {
        self.calls.lock().unwrap().get(method).copied().unwrap_or(0)
    }

    /// How many times the tables were taken to write since the last reset (a write method
    /// takes them once per call, whether or not it then changes a row).
    pub fn writes(&self) -> usize {
        self.t.writes()
    }

    pub fn reset_calls(&self) {
        self.calls.lock().unwrap().clear();
        self.t.reset();
    }

    /// The tables, to read.
    pub fn tables(&self) -> Read<'_> {
        self.t.read()
    }

    /// The tables, to write: counted in [`MemStore::writes`]. Every write method, and every
    /// test that arranges rows by hand, goes through here.
    pub fn write(&self) -> MutexGuard<'_, Tables> {
        self.t.write()
    }

    pub fn snapshot(&self) -> Tables {
        self.tables().clone()
    }

    pub fn stored_integration(&self, partner: PartnerId) -> Option<StoredIntegration> {
        self.tables()
            .integrations
            .iter()
            .find(|i| i.integration.partner_id == partner)
            .cloned()
    }

    pub fn stored_link(&self, uid: &LinkUid) -> Option<PaymentLink> {
        self.tables().links.iter().find(|l| &l.uid == uid).cloned()
    }

    pub fn stored_settings(&self, company: CompanyId) -> Option<PaySettings> {
        self.tables()
            .companies
            .iter()
            .find(|(c, _)| c.id == company)
            .map(|(_, s)| s.clone())
    }

    /// Test setup: puts a link into a status without going through the use case.
    pub fn force_status(&self, uid: &LinkUid, status: LinkStatus) {
        let mut t = self.write();
        let link = t.links.iter_mut().find(|l| &l.uid == uid).unwrap();
        link.status = status;
    }

    pub fn interfere_with_next_cas(&self, statuses: &[LinkStatus]) {
        self.cas_interference
            .lock()
            .unwrap()
            .extend(statuses.iter().copied());
    }

    pub fn stored_callback(
        &self,
        company: CompanyId,
        kind: CallbackKind,
    ) -> Option<CompanyCallback> {
        self.tables()
            .callbacks
            .iter()
            .find(|c| c.company_id == company && c.kind == kind)
            .cloned()
    }

    pub fn stored_delivery(&self, id: uuid::Uuid) -> Option<Delivery> {
        self.tables()
            .deliveries
            .iter()
            .find(|d| d.id == id)
            .cloned()
    }

    pub fn stored_deliveries(&self) -> Vec<Delivery> {
        self.tables().deliveries.clone()
    }

    pub fn stored_attempts(&self, id: uuid::Uuid) -> Vec<AttemptRecord> {
        self.tables()
            .attempts
            .iter()
            .filter(|a| a.delivery_id == id)
            .cloned()
            .collect()
    }

    /// The next `company_callback` read returns `stale` (as if read before another write).
    pub fn serve_stale_callback_read(&self, stale: CompanyCallback) {
        self.stale_callback_reads.lock().unwrap().push_back(stale);
    }
}

/// Stores checked deliveries and logs their events (`LoggedEvent::of_deliveries`).
pub(crate) fn add_deliveries(t: &mut Tables, new: &[Delivery]) {
    t.deliveries.extend_from_slice(new);
    t.logged_events
        .extend(crate::webhooks::LoggedEvent::of_deliveries(new));
}

/// Checks new deliveries against the table: known company, unique ids.
pub(crate) fn check_new_deliveries(t: &Tables, new: &[Delivery]) -> PortResult<()> {
    for (i, d) in new.iter().enumerate() {
        if !t.companies.iter().any(|(c, _)| c.id == d.company_id) {
            return Err(Fault::new("foreign key: company"));
        }
        if t.deliveries.iter().any(|x| x.id == d.id) || new[..i].iter().any(|x| x.id == d.id) {
            return Err(unique_violation("webhook_deliveries.id"));
        }
    }
    Ok(())
}

/// The log search: an exact match of the delivery id, the event's short name, the link uid or
/// the order id.
pub(crate) fn matches_search(d: &Delivery, q: &str) -> bool {
    d.id.to_string() == q
        || d.event.short_name() == q
        || d.payment_link_uid.as_deref() == Some(q)
        || d.order_id.as_deref() == Some(q)
}
