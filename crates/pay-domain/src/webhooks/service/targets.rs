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
}

impl Target {
    /// A callback that takes every event of the links it receives.
    pub(crate) fn all(kind: CallbackKind, url: String) -> Target {
        Target {
            kind,
            url,
            grant: None,
            events: None,
        }
    }

    pub(crate) fn accepts(&self, event: EventKind) -> bool {
        self.events.as_ref().is_none_or(|f| f.accepts(event))
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
        };
        let sealer = &self.k.sealer;
        match owner {
            Owner::Company(company) => {
                let cb = self
                    .company_target(*company)
                    .map_err(NotPrepared::internal)?
                    .ok_or_else(gone)?;
                let aad = CompanyCallback::aad(*company, cb.kind);
                let secrets = self.open_all(&cb.live_secrets(self.k.clock.now()), &aad)?;
                Ok(CurrentTarget {
                    url: cb.url,
                    secrets,
                })
            }
            Owner::Grant(grant) => {
                // Disabled (its secret erased) is as gone as deleted: nothing signs for it.
                let sub = self
                    .store
                    .grant_subscription(*grant)
                    .map_err(NotPrepared::internal)?
                    .filter(|s| s.secret.is_some())
                    .ok_or_else(gone)?;
                let aad = GrantSubscription::aad(sub.id);
                let secrets = self.open_all(&sub.live_secrets(self.k.clock.now()), &aad)?;
                Ok(CurrentTarget {
                    url: sub.url,
                    secrets,
                })
            }
            Owner::Link(uid) => {
                let hook = self
                    .links
                    .link_webhook(uid)
                    .map_err(NotPrepared::internal)?
                    .ok_or_else(gone)?;
                let secret = sealer
                    .open(&hook.secret.sealed, &LinkWebhook::aad(uid.as_str()))
                    .map_err(NotPrepared::internal)?;
                Ok(CurrentTarget {
                    url: hook.url,
                    secrets: vec![secret],
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
            Owner::Grant(grant) => self
                .store
                .grant_subscription(*grant)?
                .filter(|s| s.secret.is_some())
                .map(|s| s.url),
        })
    }
}
