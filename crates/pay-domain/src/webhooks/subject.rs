//! What webhooks knows of the payment links its events are about. Webhooks sits below links
//! (`docs/architecture.md`, "Dependency direction"): it declares what it reads of a link and
//! the links context provides it (`links/subject.rs`).

use crate::kernel::error::PortResult;
use crate::kernel::ids::{CompanyId, LinkUid, PaymentLinkId};
use crate::tenancy::Principal;
use crate::webhooks::{LinkSnapshot, LinkWebhook, WebhookError};

/// Who made a link, as far as its events' receivers go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkOrigin {
    /// An API key or a signed-in member: the company's callback receives its events.
    Company,
    /// An OAuth grant: the grant's own subscription receives them.
    Grant(uuid::Uuid),
    /// An anonymous link: its own callback receives them.
    Anonymous,
}

/// A payment link, as an event about it reads it.
pub trait LinkSubject {
    fn link_id(&self) -> PaymentLinkId;
    fn link_uid(&self) -> &LinkUid;
    fn company(&self) -> CompanyId;
    fn order_id(&self) -> Option<&str>;
    fn origin(&self) -> LinkOrigin;
    /// The grant subscription active when a grant made the link (none otherwise).
    fn grant_subscription(&self) -> Option<uuid::Uuid>;
    /// When the link was made (its company's clock).
    fn created_at(&self) -> crate::kernel::timestamp::Timestamp;
    /// The envelope's `paymentLink`, with its public URL under `public_pay_url`.
    fn snapshot(&self, public_pay_url: &str) -> LinkSnapshot;
}

/// The links webhooks reads besides the ones an emitter hands it.
pub trait LinkSource: Send + Sync {
    /// A link of the principal's company that it may see (as its reads of links decide), or
    /// not found.
    fn visible_link(
        &self,
        p: &Principal,
        uid: &LinkUid,
    ) -> Result<Box<dyn LinkSubject>, WebhookError>;
    /// The callback of an anonymous link.
    fn link_webhook(&self, link_uid: &LinkUid) -> PortResult<Option<LinkWebhook>>;
    /// A link of `company` by its uid, whoever made it (the dispatcher's checks).
    fn company_link(
        &self,
        company: CompanyId,
        uid: &LinkUid,
    ) -> PortResult<Option<Box<dyn LinkSubject>>>;
}
