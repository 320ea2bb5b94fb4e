//! Payment-link use cases: create, list, read and move the merchant's links. Anonymous links
//! and the gateway form are in their own files of this context.

use std::sync::Arc;

use crate::kernel::error::{Fault, NotFound, PortResult};
use crate::kernel::events::{DomainEvent, EventRecord};
use crate::kernel::ids::{EventId, LinkUid, PaymentLinkId};
use crate::kernel::keyed::{self, Answer, KeyedCall, Sealing};
use crate::kernel::observers::Observers;
use crate::kernel::service::Kernel;
use crate::kernel::timestamp::Timestamp;
use crate::links::ports::{LinkFilter, LinkObserver, LinkPorts};
use crate::links::{
    transition, CreateLinkInput, CreatedBy, LinkStatus, LinkTransition, PaymentLink,
};
use crate::links::{LinkError, LINK_NOT_FOUND};
use crate::tenancy::TenancyService;
use crate::tenancy::{Denied, Principal, Scope};

/// The merchant's links, anonymous links and gateway forms, over the links ports only.
#[derive(Clone)]
pub struct LinkService {
    pub(super) k: Kernel,
    pub(super) tenancy: TenancyService,
    pub(super) store: Arc<dyn LinkPorts>,
    /// Development and tests: allow http and private addresses as callback targets.
    pub(super) allow_private_targets: bool,
    observers: Observers<dyn LinkObserver>,
}

impl std::fmt::Debug for LinkService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LinkService").finish_non_exhaustive()
    }
}

impl LinkService {
    /// Payment links over the link store. `allow_private_targets` lets callback URLs be http or
    /// private (development and tests only). Observers (`observe`) hear of link moves.
    pub fn new(
        k: Kernel,
        tenancy: TenancyService,
        store: Arc<dyn LinkPorts>,
        allow_private_targets: bool,
    ) -> LinkService {
        LinkService {
            k,
            tenancy,
            store,
            allow_private_targets,
            observers: Observers::default(),
        }
    }

    /// Tells `observer` of link changes from now on. The service keeps a weak reference: the
    /// caller keeps the observer alive for as long as it wants to hear.
    pub fn observe(&self, observer: &Arc<dyn LinkObserver>) {
        self.observers.add(observer);
    }

    /// Some link's status or payability changed in this process.
    pub(crate) fn changed(&self) {
        for o in self.observers.each() {
            o.links_changed();
        }
    }

    /// The event of a move to `to`, when it stops the link (its sessions end).
    fn stop_event(&self, link: &PaymentLink, to: LinkStatus) -> Option<EventRecord> {
        (to != LinkStatus::Active).then(|| {
            EventRecord::new(
                EventId(self.k.crypto.new_uuid()),
                DomainEvent::LinkStopped {
                    company: link.company_id,
                    link: link.uid.clone(),
                },
                self.k.now(),
            )
        })
    }

    /// A link move was written with `event`: the reactions follow (the checkout ends the
    /// link's sessions).
    fn stopped(&self, event: Option<EventRecord>) -> PortResult<()> {
        let events: Vec<EventRecord> = event.into_iter().collect();
        self.k.events.deliver(&events, self.k.now())
    }

    /// Now on the clock of the company that owns `link`.
    pub(crate) fn link_now(&self, link: &PaymentLink) -> PortResult<Timestamp> {
        self.tenancy.company_now(link.company_id)
    }

    pub fn create_link(
        &self,
        p: &Principal,
        input: CreateLinkInput,
    ) -> Result<PaymentLink, LinkError> {
        p.authorize(Scope::PaymentLinksWrite)?;
        self.issue_link(p.company_id, input, CreatedBy::from_principal(p), None)
    }

    /// `create_link` with an `Idempotency-Key` (`kernel::keyed`): the link and its answer
    /// commit together; a byte-identical retry gets that answer.
    pub fn create_link_keyed(
        &self,
        p: &Principal,
        input: CreateLinkInput,
        call: Option<KeyedCall<'_, PaymentLink>>,
    ) -> Result<Answer<PaymentLink>, LinkError> {
        p.authorize(Scope::PaymentLinksWrite)?;
        self.k.keyed(
            &p.idempotency_credential(),
            "payment-links",
            call,
            |sealing| self.issue_link(p.company_id, input, CreatedBy::from_principal(p), sealing),
        )
    }

    /// Creates a link of `company` for another use case of it (a subscription's cycle
    /// invoice): the same rules as `create_link`, on the company's clock, recorded as made by
    /// `created_by` (the credential that created what it belongs to).
    pub(crate) fn issue_link(
        &self,
        company_id: crate::kernel::ids::CompanyId,
        input: CreateLinkInput,
        created_by: CreatedBy,
        sealing: Option<&Sealing<'_, PaymentLink>>,
    ) -> Result<PaymentLink, LinkError> {
        let (company, settings) = self.tenancy.company_with_settings(company_id)?;
        let payload = input.into_payload(&self.k.assets, &settings, &company)?;
        let now = self.tenancy.company_now_of(&company);
        let uid = self.k.new_public_id(LinkUid::LEN, LinkUid::parse)?;
        // A grant's link is tagged with the grant's webhook subscription active now.
        let grant_subscription_id = match &created_by {
            CreatedBy::Grant(grant) => self.store.active_grant_subscription(*grant)?,
            _ => None,
        };
        let link = PaymentLink {
            id: PaymentLinkId(self.k.crypto.new_uuid()),
            uid,
            company_id,
            status: LinkStatus::Active,
            expires_at: payload.expiration_time.expires_at(now),
            payload,
            created_at: now,
            updated_at: now,
            created_by,
            grant_subscription_id,
        };
        if !self
            .store
            .insert_link(&link, keyed::completion(sealing, &link)?.as_ref())?
        {
            return Err(keyed::claim_lost().into());
        }
        Ok(link)
    }

    /// Archives a link of `company` for another use case of it (a cancelled subscription's
    /// unpaid cycle), by compare-and-set from whatever status it has, and ends its unfinished
    /// sessions as a merchant's archive does. Already archived or unknown: nothing happens.
    pub(crate) fn archive_link_of(
        &self,
        company_id: crate::kernel::ids::CompanyId,
        uid: &LinkUid,
    ) -> PortResult<()> {
        for _ in 0..3 {
            let Some(link) = self.store.link(company_id, uid)? else {
                return Ok(());
            };
            let from = link.status;
            if from == LinkStatus::Archived {
                return Ok(());
            }
            let now = self.link_now(&link)?;
            let event = self.stop_event(&link, LinkStatus::Archived);
            if self.store.set_link_status(
                company_id,
                uid,
                from,
                LinkStatus::Archived,
                now,
                event.as_ref(),
            )? {
                self.changed();
                return self.stopped(event);
            }
        }
        Err(Fault::new("link status kept changing under us"))
    }

    /// Up to 200 newest links: company-wide for keys and sessions, the grant's own for OAuth.
    pub fn list_links(&self, p: &Principal) -> Result<Vec<PaymentLink>, LinkError> {
        self.find_links(p, None, "")
    }

    /// `list_links` narrowed to one status (`Some`) and to the links whose order id, title or
    /// customer e-mail contain `search` (any case; blank: every link).
    pub fn find_links(
        &self,
        p: &Principal,
        status: Option<LinkStatus>,
        search: &str,
    ) -> Result<Vec<PaymentLink>, LinkError> {
        p.authorize(Scope::PaymentLinksRead)?;
        let filter = LinkFilter {
            grant_id: p.grant_id(),
            status,
            search: crate::links::search_query(search),
        };
        Ok(self
            .store
            .links(p.company_id, filter, crate::links::LIST_LIMIT)?)
    }

    /// One link; another company's (or another grant's) is `NotFound`.
    pub fn get_link(&self, p: &Principal, uid: &LinkUid) -> Result<PaymentLink, LinkError> {
        self.readable_link(p, uid)
    }

    /// `get_link` in the error type of the calling context.
    pub(crate) fn readable_link<E: From<Denied> + From<NotFound> + From<Fault>>(
        &self,
        p: &Principal,
        uid: &LinkUid,
    ) -> Result<PaymentLink, E> {
        p.authorize(Scope::PaymentLinksRead)?;
        self.visible_link(p, uid)
    }

    pub(crate) fn visible_link<E: From<NotFound> + From<Fault>>(
        &self,
        p: &Principal,
        uid: &LinkUid,
    ) -> Result<PaymentLink, E> {
        let not_found = LINK_NOT_FOUND;
        let link = self.store.link(p.company_id, uid)?.ok_or(not_found)?;
        if link.is_anonymous() {
            return Err(not_found.into());
        }
        if let Some(g) = p.grant_id() {
            if link.grant_id() != Some(g) {
                return Err(not_found.into());
            }
        }
        Ok(link)
    }

    /// Moves a link per the transition table (compare-and-set; a lost race is re-read and
    /// re-decided, so concurrent writers never skip the table).
    pub fn set_link_status(
        &self,
        p: &Principal,
        uid: &LinkUid,
        to: LinkStatus,
    ) -> Result<PaymentLink, LinkError> {
        p.authorize(Scope::PaymentLinksWrite)?;
        for _ in 0..3 {
            let link = self.visible_link::<LinkError>(p, uid)?;
            match transition(link.status, to)? {
                LinkTransition::Same => return Ok(link),
                LinkTransition::Move { from, to } => {
                    let now = self.link_now(&link)?;
                    let event = self.stop_event(&link, to);
                    if self.store.set_link_status(
                        p.company_id,
                        &link.uid,
                        from,
                        to,
                        now,
                        event.as_ref(),
                    )? {
                        let link = PaymentLink {
                            status: to,
                            updated_at: now,
                            ..link
                        };
                        // Pausing or archiving ends the payers' unfinished sessions (through
                        // the event outbox). Should this stop half-way, the drain and the
                        // expiry work end the rest.
                        self.changed();
                        self.stopped(event)?;
                        return Ok(link);
                    }
                }
            }
        }
        Err(Fault::new("link status kept changing under us").into())
    }

    /// A link of `company` by uid, for another use case of it (no principal: the caller
    /// already holds the company's record that names the link).
    pub(crate) fn link_of(
        &self,
        company_id: crate::kernel::ids::CompanyId,
        uid: &LinkUid,
    ) -> PortResult<Option<PaymentLink>> {
        self.store.link(company_id, uid)
    }

    /// The callback of an anonymous link (its webhook receiver).
    pub(crate) fn link_webhook(
        &self,
        link_uid: &LinkUid,
    ) -> PortResult<Option<crate::webhooks::LinkWebhook>> {
        self.store.link_webhook(link_uid)
    }
}
