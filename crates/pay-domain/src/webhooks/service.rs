//! Webhook use cases: the company callbacks of the developer settings, the delivery log and
//! resend, emitting a link's event into the outbox, and the dispatcher's three steps (claim,
//! prepare a signed request, record the outcome).

use std::sync::Arc;

use crate::kernel::error::{Fault, FieldError, NotFound, PortResult};
use crate::kernel::ids::{CompanyId, DeliveryId, LinkUid};
use crate::kernel::ports::Clock;
use crate::kernel::secret::Secret;
use crate::kernel::service::Kernel;
use crate::kernel::timestamp::Timestamp;
use crate::tenancy::{Permission, Principal, Scope};
use crate::tenancy::{SignedIn, TenancyService};
use crate::webhooks::error::{WebhookError, WebhookResult};
use crate::webhooks::ports::AttemptRecord;
use crate::webhooks::ports::{WebhookSigner, WebhookStore};
use crate::webhooks::{
    after_attempt, last4, signing_secret, validate_callback_url, AfterAttempt, AttemptOutcome,
    CallbackKind, Circuit, CircuitRule, CompanyCallback, Delivery, DeliveryFilter, DeliveryOrigin,
    DeliveryStatus, Endpoint, EndpointHealth, EndpointResult, EventKind, LinkOrigin, LinkSnapshot,
    LinkSource, LinkSubject, NotPrepared, OutboundRequest, PaymentEventDraft, SessionSnapshot,
    StoredSigningSecret, SubscriptionState, CLAIM_LEASE, LOG_LIMIT_DEFAULT, LOG_LIMIT_MAX,
    ROTATION_GRACE, SECRET_RANDOM_LEN, USER_AGENT,
};

mod dispatch;
mod events;
mod grant;
mod plan;
mod subscription;
mod targets;

pub use dispatch::Recorded;
pub use subscription::SubscriptionEventDraft;

use targets::{CurrentTarget, Owner, Target};

/// An unknown delivery, another company's or grant's, or an id that names none.
pub const DELIVERY_NOT_FOUND: NotFound = NotFound { kind: "Delivery" };

/// What reads of a callback show (never the secret).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallbackView {
    pub url: String,
    pub secret_last4: String,
    pub secret_created_at: Timestamp,
}

impl From<&CompanyCallback> for CallbackView {
    fn from(c: &CompanyCallback) -> Self {
        CallbackView {
            url: c.url.clone(),
            secret_last4: c.secret.last4.clone(),
            secret_created_at: c.secret.created_at,
        }
    }
}

fn company_kind(kind: CallbackKind) -> PortResult<CallbackKind> {
    match kind {
        CallbackKind::CompanyPayment | CallbackKind::LegacyShared => Ok(kind),
        other => Err(Fault::new(format!(
            "{} is not a company callback",
            other.as_str()
        ))),
    }
}

/// Company callbacks, the outbox of deliveries, the delivery log and the dispatcher's steps,
/// over the webhook ports only.
#[derive(Clone)]
pub struct WebhookService {
    k: Kernel,
    pub(super) tenancy: TenancyService,
    links: Arc<dyn LinkSource>,
    store: Arc<dyn WebhookStore + Send + Sync>,
    signer: Arc<dyn WebhookSigner>,
    /// Real time, for signature timestamps (tests may stand in for the process clock).
    wall_clock: Arc<dyn Clock>,
    /// Development and tests: allow http and private addresses as callback targets.
    allow_private_targets: bool,
    /// When a failing endpoint is paused.
    circuit: CircuitRule,
    /// How long logged events are kept.
    events_kept: time::Duration,
}

impl std::fmt::Debug for WebhookService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookService")
            .field("allow_private_targets", &self.allow_private_targets)
            .finish_non_exhaustive()
    }
}

/// What the webhook service needs besides the store.
pub struct WebhookAdapters {
    pub signer: Arc<dyn WebhookSigner>,
    /// Real time, for signature timestamps.
    pub wall_clock: Arc<dyn Clock>,
    /// Development and tests: allow http and private addresses as callback targets.
    pub allow_private_targets: bool,
    /// When a failing endpoint is paused.
    pub circuit: CircuitRule,
    /// How long logged events are kept (`EVENTS_KEPT_DEFAULT` unless configured).
    pub events_kept: time::Duration,
}

impl std::fmt::Debug for WebhookAdapters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookAdapters").finish_non_exhaustive()
    }
}

impl WebhookService {
    /// Callback endpoints, subscriptions and deliveries over the webhook store; `links` resolves
    /// the links an event is about, `adapters` sign and time the deliveries.
    pub fn new(
        k: Kernel,
        tenancy: TenancyService,
        links: Arc<dyn LinkSource>,
        store: Arc<dyn WebhookStore + Send + Sync>,
        adapters: WebhookAdapters,
    ) -> WebhookService {
        WebhookService {
            k,
            tenancy,
            links,
            store,
            signer: adapters.signer,
            wall_clock: adapters.wall_clock,
            allow_private_targets: adapters.allow_private_targets,
            circuit: adapters.circuit,
            events_kept: adapters.events_kept,
        }
    }

    /// A new signing secret sealed with `aad` (its row's associated data).
    fn new_signing_secret(
        &self,
        aad: &str,
        now: Timestamp,
    ) -> PortResult<(Secret, StoredSigningSecret)> {
        let secret = signing_secret(&self.k.crypto.random_alphanumeric(SECRET_RANDOM_LEN));
        let sealed = self.k.sealer.seal(&secret, aad)?;
        let stored = StoredSigningSecret {
            sealed,
            last4: last4(&secret),
            created_at: now,
        };
        Ok((secret, stored))
    }

    /// `stored` in the sealer's current form: as it is when it already is, else opened and
    /// sealed again (a value of an older key, or of the format before the key id was bound
    /// into the associated data). Every write of a callback row goes through here, so rows
    /// move to the current form as they are saved.
    fn current_form(
        &self,
        stored: StoredSigningSecret,
        aad: &str,
    ) -> PortResult<StoredSigningSecret> {
        let sealer = &self.k.sealer;
        if sealer.is_current(&stored.sealed) {
            return Ok(stored);
        }
        let secret = sealer.open(&stored.sealed, aad)?;
        Ok(StoredSigningSecret {
            sealed: sealer.seal(&secret, aad)?,
            ..stored
        })
    }

    /// A company callback (session with `settings.manage`); `None` when not set.
    pub fn company_callback(
        &self,
        signed_in: &SignedIn,
        company: CompanyId,
        kind: CallbackKind,
    ) -> WebhookResult<Option<CallbackView>> {
        self.tenancy.team_role::<WebhookError>(
            signed_in,
            company,
            Some(Permission::SettingsManage),
        )?;
        let kind = company_kind(kind)?;
        Ok(self
            .store
            .company_callback(company, kind)?
            .as_ref()
            .map(CallbackView::from))
    }

    /// Saves a company callback URL. The first save issues a signing secret (returned this
    /// once); changing the URL keeps the secret.
    pub fn put_company_callback(
        &self,
        signed_in: &SignedIn,
        company: CompanyId,
        kind: CallbackKind,
        url: &str,
    ) -> WebhookResult<(CallbackView, Option<Secret>)> {
        self.tenancy.team_role::<WebhookError>(
            signed_in,
            company,
            Some(Permission::SettingsManage),
        )?;
        let kind = company_kind(kind)?;
        validate_callback_url("url", url, self.allow_private_targets)?;
        // Compare-and-set, re-read on a lost race: a rotation or another save that landed in
        // between is kept, never overwritten with what was read before it.
        for _ in 0..3 {
            let now = self.k.clock.now();
            let (callback, issued) = match self.store.company_callback(company, kind)? {
                Some(existing) => {
                    let aad = CompanyCallback::aad(company, kind);
                    let previous = match existing.previous {
                        Some((prev, until)) => Some((self.current_form(prev, &aad)?, until)),
                        None => None,
                    };
                    (
                        CompanyCallback {
                            url: url.to_owned(),
                            secret: self.current_form(existing.secret, &aad)?,
                            previous,
                            updated_at: now,
                            version: existing.version + 1,
                            ..existing
                        },
                        None,
                    )
                }
                None => {
                    let (secret, stored) =
                        self.new_signing_secret(&CompanyCallback::aad(company, kind), now)?;
                    (
                        CompanyCallback {
                            company_id: company,
                            kind,
                            url: url.to_owned(),
                            secret: stored,
                            previous: None,
                            updated_at: now,
                            version: 1,
                        },
                        Some(secret),
                    )
                }
            };
            if self.store.save_company_callback(&callback)? {
                return Ok((CallbackView::from(&callback), issued));
            }
        }
        Err(Fault::new("callback kept changing under us").into())
    }

    /// Issues a new signing secret (returned this once). The previous one keeps signing, as a
    /// second `v1=`, for `ROTATION_GRACE`, so receivers can switch without losing events.
    pub fn rotate_company_callback_secret(
        &self,
        signed_in: &SignedIn,
        company: CompanyId,
        kind: CallbackKind,
    ) -> WebhookResult<(CallbackView, Secret)> {
        self.tenancy.team_role::<WebhookError>(
            signed_in,
            company,
            Some(Permission::SettingsManage),
        )?;
        let kind = company_kind(kind)?;
        for _ in 0..3 {
            let existing = self
                .store
                .company_callback(company, kind)?
                .ok_or(NotFound { kind: "Callback" })?;
            let now = self.k.clock.now();
            let aad = CompanyCallback::aad(company, kind);
            let (secret, stored) = self.new_signing_secret(&aad, now)?;
            let previous = self.current_form(existing.secret.clone(), &aad)?;
            let callback = CompanyCallback {
                previous: Some((previous, now.plus(ROTATION_GRACE))),
                secret: stored,
                updated_at: now,
                version: existing.version + 1,
                ..existing
            };
            if self.store.save_company_callback(&callback)? {
                return Ok((CallbackView::from(&callback), secret));
            }
        }
        Err(Fault::new("callback kept changing under us").into())
    }

    /// Where a link's events go: the company payment callback, else the legacy shared one,
    /// for links made by API keys and sessions; the grant's own subscription while active
    /// (and only the events it names) for links made by an OAuth grant (spec, Events: the
    /// company callback never gets them); the link's own URL for anonymous links.
    pub(crate) fn targets(&self, link: &dyn LinkSubject) -> PortResult<Vec<Target>> {
        Ok(match link.origin() {
            LinkOrigin::Company => self
                .company_target(link.company())?
                .map(|cb| vec![Target::all(cb.kind, cb.url)])
                .unwrap_or_default(),
            LinkOrigin::Anonymous => self
                .links
                .link_webhook(link.link_uid())?
                .map(|w| vec![Target::all(CallbackKind::AnonymousLink, w.url)])
                .unwrap_or_default(),
            LinkOrigin::Grant(grant) => match self.store.grant_subscription(grant)? {
                Some(s) if s.state() == SubscriptionState::Active => vec![Target {
                    kind: CallbackKind::Grant,
                    url: s.url,
                    grant: Some(grant),
                    events: Some(s.events),
                    payment_status_only: false,
                }],
                // A disconnected native installation: its retained credential takes the
                // payment-status events of the links issued before the disconnect.
                Some(s) if s.retains_link(link) => {
                    let url = s.retained.as_ref().map(|r| r.url.clone()).unwrap_or(s.url);
                    vec![Target {
                        kind: CallbackKind::Grant,
                        url,
                        grant: Some(grant),
                        events: Some(s.events),
                        payment_status_only: true,
                    }]
                }
                _ => vec![],
            },
        })
    }

    /// Writes one event of a link into the outbox: one delivery per receiving callback, in
    /// one group, with the link's next sequence number. Nothing is sent here.
    pub fn emit_link_event(
        &self,
        link: &dyn LinkSubject,
        event: EventKind,
        trigger: &str,
        session: SessionSnapshot,
    ) -> PortResult<Vec<Delivery>> {
        // Dated on the link's company clock, as every event of its payments: the log's order
        // (and a retry's due time) follows that clock.
        let now = self.tenancy.company_now(link.company())?;
        let plan = self.plan_events(link, session, &[event], trigger, now)?;
        if plan.has_no_target() {
            return Ok(vec![]);
        }
        self.store
            .enqueue_link_event(link.link_id(), &|first| plan.build(first))
    }

    /// Sends a `pay.webhook.test` event about one of the caller's links to its callbacks.
    pub fn send_test_event(
        &self,
        p: &Principal,
        link_uid: &LinkUid,
    ) -> WebhookResult<Vec<Delivery>> {
        p.authorize(Scope::WebhooksWrite)?;
        let link = self.links.visible_link(p, link_uid)?;
        let sent = self.emit_link_event(
            link.as_ref(),
            EventKind::Test,
            "merchant_test",
            SessionSnapshot::default(),
        )?;
        if sent.is_empty() {
            return Err(FieldError::new(
                "paymentLinkUid",
                "no callback receives this link's events: set the company payment callback first",
            )
            .into());
        }
        Ok(sent)
    }

    /// The delivery log of the caller's company.
    pub fn deliveries(
        &self,
        p: &Principal,
        mut filter: DeliveryFilter,
    ) -> WebhookResult<Vec<Delivery>> {
        p.authorize(Scope::WebhooksRead)?;
        if filter.limit == 0 {
            filter.limit = LOG_LIMIT_DEFAULT;
        }
        // A grant sees only its own deliveries.
        filter.grant = p.grant_id();
        if filter.limit > LOG_LIMIT_MAX {
            return Err(
                FieldError::new("limit", format!("limit must be 1 to {LOG_LIMIT_MAX}")).into(),
            );
        }
        Ok(self.store.deliveries(p.company_id, &filter)?)
    }

    /// One delivery of the caller's company (of its grant, for a grant's token); another
    /// company's or grant's is not found.
    fn visible_delivery(&self, p: &Principal, id: DeliveryId) -> WebhookResult<Delivery> {
        let d = self
            .store
            .delivery(p.company_id, id.0)?
            .ok_or(DELIVERY_NOT_FOUND)?;
        match p.grant_id() {
            Some(grant) if d.grant_id != Some(grant) => Err(DELIVERY_NOT_FOUND.into()),
            _ => Ok(d),
        }
    }

    /// One delivery with its attempts.
    pub fn delivery(
        &self,
        p: &Principal,
        id: DeliveryId,
    ) -> WebhookResult<(Delivery, Vec<AttemptRecord>)> {
        p.authorize(Scope::WebhooksRead)?;
        let d = self.visible_delivery(p, id)?;
        let id = d.id;
        let attempts = self.store.attempts(p.company_id, id)?;
        Ok((d, attempts))
    }

    /// Resends a delivery: a new delivery in the same group, origin `manual`, the same event
    /// and body (with its own `deliveryId`), due now.
    pub fn resend_delivery(&self, p: &Principal, id: DeliveryId) -> WebhookResult<Delivery> {
        p.authorize(Scope::WebhooksWrite)?;
        let old = self.visible_delivery(p, id)?;
        // On the company's clock, as the deliveries it sits among in the log.
        let now = self.tenancy.company_now(old.company_id)?;
        let new_id = self.k.crypto.new_uuid();
        // It goes where the owner's callback points now (the dispatcher checks again when it
        // sends); with no callback left it keeps the old URL and ends `no callback`.
        let url = match Owner::of(&old) {
            Ok(owner) => self.current_url(&owner)?,
            Err(_) => None,
        };
        let d = Delivery {
            id: new_id,
            url: url.unwrap_or_else(|| old.url.clone()),
            origin: DeliveryOrigin::Manual,
            status: DeliveryStatus::Pending,
            attempts: 0,
            next_attempt_at: Some(now),
            last_attempt_at: None,
            last_response_status: None,
            last_error: None,
            body: old.body.replace(&old.id.to_string(), &new_id.to_string()),
            created_at: now,
            ..old
        };
        self.store.insert_deliveries(std::slice::from_ref(&d))?;
        Ok(d)
    }
}
