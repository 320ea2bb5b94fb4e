//! Where a delivery goes when it is attempted: its owner's callback as it is then (URL and
//! live secrets), not as it was when the delivery was queued.

use crate::kernel::error::PortResult;
use crate::kernel::ids::{CompanyId, LinkUid};
use crate::kernel::secret::Secret;
use crate::webhooks::WebhookService;
use crate::webhooks::{
    AttemptError, CallbackKind, CompanyCallback, Delivery, EventFilter, EventKind,
    GrantSubscription, LinkWebhook, NotPrepared, StoredSigningSecret,
};

/// A callback that receives a link's events when they are emitted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Target {
    pub(crate) kind: CallbackKind,
    pub(crate) url: String,
    /// The grant whose subscription it is.
    pub(crate) grant: Option<uuid::Uuid>,
    /// The events it takes; `None`: every event.
    pub(crate) events: Option<EventFilter>,
    /// A disconnected native installation's retained credential: payment-status events only.
    pub(crate) payment_status_only: bool,
}

impl Target {
    /// A callback that takes every event of the links it receives.
    pub(crate) fn all(kind: CallbackKind, url: String) -> Target {
        Target {
            kind,
            url,
            grant: None,
            events: None,
            payment_status_only: false,
        }
    }

    pub(crate) fn accepts(&self, event: EventKind) -> bool {
        (!self.payment_status_only || crate::webhooks::is_payment_status(event))
            && self.events.as_ref().is_none_or(|f| f.accepts(event))
    }
}

/// Whose callback a delivery belongs to, for as long as it is retried: a company's (its
/// payment callback, else its legacy shared one, whichever is set when it is attempted), one
/// anonymous link's (fixed at the link's creation) or one OAuth grant's subscription.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum Owner {
    Company(CompanyId),
    Link(LinkUid),
    Grant(uuid::Uuid),
}

impl Owner {
    pub(super) fn of(d: &Delivery) -> Result<Owner, NotPrepared> {
        match d.target {
            CallbackKind::CompanyPayment | CallbackKind::LegacyShared => {
                Ok(Owner::Company(d.company_id))
            }
            CallbackKind::AnonymousLink => d
                .payment_link_uid
                .as_deref()
                .and_then(LinkUid::parse)
                .map(Owner::Link)
                .ok_or_else(|| NotPrepared::internal("anonymous delivery without a link")),
            CallbackKind::Grant => d
                .grant_id
                .map(Owner::Grant)
                .ok_or_else(|| NotPrepared::internal("grant delivery without a grant")),
        }
    }
}

/// Where an owner's deliveries go now, and the secrets that sign them.
pub(super) struct CurrentTarget {
    pub(super) url: String,
    pub(super) secrets: Vec<Secret>,
    /// Signing with a disconnected native installation's retained credential: each delivery
    /// must pass `retained_allows` first.
    pub(super) retained: Option<GrantSubscription>,
}

impl WebhookService {
    /// The company callback that receives the company's events now: the payment callback,
    /// else the legacy shared one.
    pub(super) fn company_target(&self, company: CompanyId) -> PortResult<Option<CompanyCallback>> {
        for kind in [CallbackKind::CompanyPayment, CallbackKind::LegacyShared] {
            if let Some(cb) = self.store.company_callback(company, kind)? {
                return Ok(Some(cb));
            }
        }
        Ok(None)
    }

    /// The URL and live secrets of an owner's callback now; `no callback` when it has none.
    pub(super) fn current_target(&self, owner: &Owner) -> Result<CurrentTarget, NotPrepared> {
        let gone = || NotPrepared {
            error: AttemptError::NoCallback,
            reason: "the delivery's owner has no callback".into(),
            transient: false,
        };
        let sealer = &self.k.sealer;
        match owner {
            Owner::Company(company) => {
                let cb = self
                    .company_target(*company)
                    .map_err(NotPrepared::store)?
                    .ok_or_else(gone)?;
                let aad = CompanyCallback::aad(*company, cb.kind);
                let secrets = self.open_all(&cb.live_secrets(self.k.clock.now()), &aad)?;
                Ok(CurrentTarget {
                    url: cb.url,
                    secrets,
                    retained: None,
                })
            }
            Owner::Grant(grant) => {
                let sub = self
                    .store
                    .grant_subscription(*grant)
                    .map_err(NotPrepared::store)?
                    .ok_or_else(gone)?;
                if sub.secret.is_some() {
                    let aad = GrantSubscription::aad(sub.id);
                    let secrets = self.open_all(&sub.live_secrets(self.k.clock.now()), &aad)?;
                    return Ok(CurrentTarget {
                        url: sub.url,
                        secrets,
                        retained: None,
                    });
                }
                // Disabled (its secret erased) is as gone as deleted, unless a native
                // installation's disconnect retained a credential for its late payments.
                let kept = sub.retained.as_ref().ok_or_else(gone)?;
                let secret = sealer
                    .open(&kept.sealed, &GrantSubscription::retained_aad(sub.id))
                    .map_err(NotPrepared::internal)?;
                Ok(CurrentTarget {
                    url: kept.url.clone(),
                    secrets: vec![secret],
                    retained: Some(sub),
                })
            }
            Owner::Link(uid) => {
                let hook = self
                    .links
                    .link_webhook(uid)
                    .map_err(NotPrepared::store)?
                    .ok_or_else(gone)?;
                let secret = sealer
                    .open(&hook.secret.sealed, &LinkWebhook::aad(uid.as_str()))
                    .map_err(NotPrepared::internal)?;
                Ok(CurrentTarget {
                    url: hook.url,
                    secrets: vec![secret],
                    retained: None,
                })
            }
        }
    }

    /// Opens the live secrets of a callback row.
    fn open_all(
        &self,
        live: &[&StoredSigningSecret],
        aad: &str,
    ) -> Result<Vec<Secret>, NotPrepared> {
        live.iter()
            .map(|s| self.k.sealer.open(&s.sealed, aad))
            .collect::<PortResult<_>>()
            .map_err(NotPrepared::internal)
    }

    /// The URL of an owner's callback now, without opening its secrets.
    pub(super) fn current_url(&self, owner: &Owner) -> PortResult<Option<String>> {
        Ok(match owner {
            Owner::Company(company) => self.company_target(*company)?.map(|cb| cb.url),
            Owner::Link(uid) => self.links.link_webhook(uid)?.map(|w| w.url),
            Owner::Grant(grant) => {
                self.store
                    .grant_subscription(*grant)?
                    .and_then(|s| match (&s.secret, s.retained) {
                        (Some(_), _) => Some(s.url),
                        (None, Some(kept)) => Some(kept.url),
                        (None, None) => None,
                    })
            }
        })
    }

    /// Whether a retained credential may sign `d` (spec, "Grant subscription notes"): a
    /// canonical payment-status event of the subscription's company and grant, about a link
    /// that grant made under this subscription before the disconnect, whose envelope names
    /// that link and a session. Anything else is never sent (`no callback`).
    pub(super) fn retained_allows(
        &self,
        d: &Delivery,
        sub: &GrantSubscription,
    ) -> Result<(), NotPrepared> {
        let refuse = |why: &str| NotPrepared {
            error: AttemptError::NoCallback,
            reason: format!("the disconnected installation's retained credential {why}"),
            transient: false,
        };
        if !crate::webhooks::is_payment_status(d.event) {
            return Err(refuse("signs payment-status events only"));
        }
        if d.company_id != sub.company_id || d.grant_id != Some(sub.grant_id) {
            return Err(refuse("signs only its own grant's events"));
        }
        let uid = d
            .payment_link_uid
            .as_deref()
            .and_then(LinkUid::parse)
            .ok_or_else(|| refuse("needs a link"))?;
        let link = self
            .links
            .company_link(d.company_id, &uid)
            .map_err(NotPrepared::internal)?
            .ok_or_else(|| refuse("needs a link"))?;
        if !sub.retains_link(link.as_ref()) {
            return Err(refuse("signs only links issued before the disconnect"));
        }
        let body: serde_json::Value =
            serde_json::from_str(&d.body).map_err(NotPrepared::internal)?;
        let session = body["session"]["id"].as_str().unwrap_or("");
        if body["paymentLink"]["uid"].as_str() != Some(uid.as_str()) || session.is_empty() {
            return Err(refuse("signs only the link's own payment sessions"));
        }
        Ok(())
    }
}
