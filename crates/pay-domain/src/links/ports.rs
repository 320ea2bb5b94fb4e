//! What payment links need from storage.

use crate::kernel::error::PortResult;
use crate::kernel::events::EventRecord;
use crate::kernel::idempotency::Completion;
use crate::kernel::ids::{CompanyId, LinkUid};
use crate::kernel::timestamp::Timestamp;
use crate::links::{LinkStatus, PaymentLink};
use crate::webhooks::LinkWebhook;

/// Which links a list returns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LinkFilter {
    /// `Some`: only links created by this OAuth grant.
    pub grant_id: Option<uuid::Uuid>,
    /// `Some`: only links in this status.
    pub status: Option<LinkStatus>,
    /// `Some`: only links whose `PaymentLinkPayload::search_text` contains this query, as
    /// `search_query` folded it (never empty).
    pub search: Option<String>,
}

/// Payment links.
pub trait PaymentLinkStore {
    /// Inserts; `uid` MUST be unique across companies. With a completion (a keyed create,
    /// `kernel::keyed`), marks that idempotency record answered in the SAME transaction; false
    /// with nothing written when its claim was taken over (no record with its token left
    /// unanswered). Without one: true.
    fn insert_link(&self, link: &PaymentLink, completion: Option<&Completion>) -> PortResult<bool>;
    /// Up to `limit` newest non-anonymous links of the company (newest first, ties by id).
    fn links(
        &self,
        company: CompanyId,
        filter: LinkFilter,
        limit: usize,
    ) -> PortResult<Vec<PaymentLink>>;
    /// The company's link with this uid; `None` for another company's.
    fn link(&self, company: CompanyId, uid: &LinkUid) -> PortResult<Option<PaymentLink>>;
    /// Compare-and-set: moves the link only if its status is still `from`; false otherwise,
    /// writing nothing. `event` (a stop: `DomainEvent::LinkStopped`) is inserted into the
    /// event outbox in the same transaction.
    fn set_link_status(
        &self,
        company: CompanyId,
        uid: &LinkUid,
        from: LinkStatus,
        to: LinkStatus,
        at: Timestamp,
        event: Option<&EventRecord>,
    ) -> PortResult<bool>;
    /// The id of the grant's webhook subscription if it is active (has a signing secret);
    /// `None` when the grant has none or it is disabled.
    fn active_grant_subscription(&self, grant: uuid::Uuid) -> PortResult<Option<uuid::Uuid>>;
}

/// Anonymous links.
pub trait AnonymousLinkStore {
    /// Inserts an anonymous link and its callback (when it has one) in ONE transaction.
    fn insert_anonymous_link(
        &self,
        link: &PaymentLink,
        webhook: Option<&LinkWebhook>,
    ) -> PortResult<()>;
    /// The callback of an anonymous link.
    fn link_webhook(&self, link_uid: &LinkUid) -> PortResult<Option<LinkWebhook>>;
}

/// Who hears of link changes made in this process: page caches drop what they rendered
/// before. (What other contexts do about a stopped link goes through the event outbox:
/// `DomainEvent::LinkStopped`.)
pub trait LinkObserver: Send + Sync {
    /// Some link's status or payability changed (a merchant move, a paid one-time link, a
    /// company's moved test clock).
    fn links_changed(&self) {}
}

/// Every store port of links, as one object (a blanket impl covers any type with all three).
pub trait LinkPorts:
    PaymentLinkStore + AnonymousLinkStore + crate::links::gateway::FormKeyStore + Send + Sync
{
}

impl<T> LinkPorts for T where
    T: PaymentLinkStore + AnonymousLinkStore + crate::links::gateway::FormKeyStore + Send + Sync
{
}
