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

/// Every store port over `Mutex`ed vectors, with a call counter per method.
#[derive(Debug, Default)]
pub struct MemStore {
    pub t: Mutex<Tables>,
    pub calls: Mutex<BTreeMap<&'static str, usize>>,
    /// Statuses a "concurrent writer" sets on the link just before each CAS (one per call).
    pub cas_interference: Mutex<VecDeque<LinkStatus>>,
    /// Callbacks the next `company_callback` reads return instead of the stored row (one per
    /// call): what a reader sees when another writer commits between its read and its write.
    pub stale_callback_reads: Mutex<VecDeque<CompanyCallback>>,
}

/// The store methods that write.
pub const WRITE_METHODS: &[&str] = &[
    "create_tenant",
    "add_member",
    "insert_sign_in",
    "delete_sign_in",
    "rate_hit",
    "clear_hits",
    "advance_test_clock",
    "set_payment_link_domain",
    "set_company_website",
    "insert_integration",
    "set_integration_enabled",
    "delete_integration",
    "touch_integration",
    "insert_link",
    "set_link_status",
    "save_settings",
    "save_company_callback",
    "save_grant_subscription",
    "claim_idempotency_key",
    "release_idempotency_key",
    "prune_idempotency_keys",
    "insert_deliveries",
    "claim_due_deliveries",
    "record_attempt",
    "retarget_deliveries",
    "enqueue_link_event",
    "write_link_event",
    "upsert_contact",
    "rename_contact",
    "insert_subscription",
    "move_subscription",
    "claim_due_subscriptions",
    "finish_run",
    "insert_cycle",
    "open_cycle",
    "set_cycle_status",
    "set_cycle_reminders",
    "pay_cycle",
    "claim_due_events",
    "consume_event",
    "finish_event",
    "prune_events",
    "insert_application",
    "save_authorization",
    "claim_code",
    "insert_tokens",
    "rotate_refresh",
    "revoke_family",
    "revoke_access_token",
    "prune_oauth",
    "record_jti",
    "prune_jtis",
    "put_wallet",
    "delete_wallet",
    "assign_address",
];

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

    /// Calls of write methods since the last reset.
    pub fn writes(&self) -> usize {
        WRITE_METHODS.iter().map(|m| self.calls(m)).sum()
    }

    pub fn reset_calls(&self) {
        self.calls.lock().unwrap().clear();
    }

    pub fn tables(&self) -> MutexGuard<'_, Tables> {
        self.t.lock().unwrap()
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
        let mut t = self.tables();
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
