//! The grant's own webhook subscription: read, PUT and DELETE by a grant-bound OAuth token
//! only, each write moved by the spec's state table (`webhooks::grant::transition`), and the
//! keyed writes made idempotent: the key is claimed first, the write and its sealed answer
//! commit in one transaction, a byte-identical retry gets that answer again.

use super::*;
use crate::kernel::idempotency::{
    Claim, Completion, IdempotencyConflict, IdempotencyKey, IdempotentRequest,
};
use crate::webhooks::grant::{self, CheckedInput, SecretChange, SubscriptionMove};
use crate::webhooks::{
    EventFilter, GrantSubscription, SubscriptionAnswer, SubscriptionInput, SubscriptionView,
};

/// The route of the idempotency scope (`<grant>:<METHOD>:<route>`).
const ROUTE: &str = "webhook-subscriptions/current";
const NONE_YET: NotFound = NotFound {
    kind: "Webhook subscription",
};

/// A write of the subscription.
enum Change {
    Put(CheckedInput),
    Delete,
}

impl WebhookService {
    /// The caller grant's subscription (`pay:webhooks:read`): `secretLast4` while active,
    /// never the secret; not found before its first PUT.
    pub fn grant_subscription(&self, p: &Principal) -> WebhookResult<SubscriptionView> {
        let grant = p.authorize_grant(Scope::WebhooksRead)?;
        let sub = self.store.grant_subscription(grant)?.ok_or(NONE_YET)?;
        Ok(SubscriptionView::from(&sub))
    }

    /// Creates or changes the caller grant's subscription (`pay:webhooks:write`). `body` is
    /// the request's raw body: with `key`, a byte-identical retry replays the first answer.
    pub fn put_grant_subscription(
        &self,
        p: &Principal,
        input: SubscriptionInput,
        key: Option<&str>,
        body: &str,
    ) -> WebhookResult<SubscriptionAnswer> {
        let grant = p.authorize_grant(Scope::WebhooksWrite)?;
        let request = self.idempotent_request(grant, "PUT", key, body)?;
        let checked = input.check(self.allow_private_targets)?;
        self.keyed(p.company_id, grant, Change::Put(checked), request)
    }

    /// Disables the caller grant's subscription and erases its secret (`pay:webhooks:write`).
    pub fn delete_grant_subscription(
        &self,
        p: &Principal,
        key: Option<&str>,
    ) -> WebhookResult<SubscriptionAnswer> {
        let grant = p.authorize_grant(Scope::WebhooksWrite)?;
        let request = self.idempotent_request(grant, "DELETE", key, "")?;
        self.keyed(p.company_id, grant, Change::Delete, request)
    }

    fn idempotent_request(
        &self,
        grant: uuid::Uuid,
        method: &str,
        key: Option<&str>,
        body: &str,
    ) -> WebhookResult<Option<IdempotentRequest>> {
        let Some(key) = key else { return Ok(None) };
        Ok(Some(IdempotentRequest {
            scope: format!("grant:{grant}:{method}:{ROUTE}"),
            key: IdempotencyKey::parse(key)?,
            fingerprint: self.k.crypto.digest(body).0,
        }))
    }

    /// Runs a write under its key, if any: claimed first (the lease on real time), answered
    /// from the record when the same request was answered, refused while it runs or when the
    /// key holds another request; released when the write is refused, so a retry may run.
    fn keyed(
        &self,
        company: CompanyId,
        grant: uuid::Uuid,
        change: Change,
        request: Option<IdempotentRequest>,
    ) -> WebhookResult<SubscriptionAnswer> {
        let Some(request) = request else {
            return self.apply(company, grant, &change, None);
        };
        // Claims and their leases run on real time (the process clock), never a test clock.
        let now = self.k.clock.now();
        let token = self.k.crypto.random_alphanumeric(32);
        let lease_until = now.plus(crate::kernel::idempotency::CLAIM_LEASE);
        match self
            .store
            .claim_idempotency_key(&request, &token, now, lease_until)?
        {
            Claim::Claimed { token } => {
                let result = self.apply(company, grant, &change, Some((&request, &token)));
                if result.is_err() {
                    // Nothing was written with the answer; a failed release leaves the claim
                    // to its lease, after which a retry takes it over.
                    let _ = self.store.release_idempotency_key(
                        &request.scope,
                        request.key.as_str(),
                        &token,
                    );
                }
                result
            }
            Claim::Answered(sealed) => {
                let text = self.k.sealer.open(&sealed, &request.aad())?;
                let answer: SubscriptionAnswer = serde_json::from_str(text.expose())
                    .map_err(|e| Fault::caused("stored idempotent answer", e))?;
                let mut answer = self.with_live_secret(grant, answer)?;
                answer.replayed = true;
                Ok(answer)
            }
            Claim::Reused => Err(IdempotencyConflict::Reused.into()),
            Claim::InFlight => Err(IdempotencyConflict::InFlight.into()),
        }
    }

    /// A stored answer as it is replayed: the secret it issued, taken from the subscription
    /// while it still signs there (current, or previous within its grace), else left out.
    fn with_live_secret(
        &self,
        grant: uuid::Uuid,
        mut answer: SubscriptionAnswer,
    ) -> WebhookResult<SubscriptionAnswer> {
        // An answer stored before `issued_secret_digest` carries the secret itself.
        let wanted = match answer.signing_secret.take() {
            Some(legacy) => self.k.crypto.digest(&legacy),
            None => match answer.issued_secret_digest.take() {
                Some(d) => crate::kernel::secret::SecretDigest(d),
                None => return Ok(answer),
            },
        };
        let Some(sub) = self.store.grant_subscription(grant)? else {
            return Ok(answer);
        };
        let aad = GrantSubscription::aad(sub.id);
        for stored in sub.live_secrets(self.k.clock.now()) {
            let secret = self.k.sealer.open(&stored.sealed, &aad)?;
            if self.k.crypto.digest_matches(secret.expose(), &wanted) {
                answer.signing_secret = Some(secret.expose().to_owned());
                break;
            }
        }
        Ok(answer)
    }

    /// One write by the state table, compare-and-set on the version (re-decided on a lost
    /// race), with the keyed request's answer sealed into the same transaction.
    fn apply(
        &self,
        company: CompanyId,
        grant: uuid::Uuid,
        change: &Change,
        keyed: Option<(&IdempotentRequest, &str)>,
    ) -> WebhookResult<SubscriptionAnswer> {
        let moved = match change {
            Change::Put(c) => c.moved,
            Change::Delete => SubscriptionMove::Delete,
        };
        for _ in 0..3 {
            let existing = self.store.grant_subscription(grant)?;
            let (_, secret_change) =
                grant::transition(existing.as_ref().map(|s| s.state()), moved)?;
            let now = self.k.clock.now();
            let created = existing.is_none();
            let mut sub = match existing {
                Some(s) => GrantSubscription {
                    updated_at: now,
                    version: s.version + 1,
                    ..s
                },
                None => GrantSubscription {
                    id: self.k.crypto.new_uuid(),
                    grant_id: grant,
                    company_id: company,
                    url: String::new(),
                    events: EventFilter::wildcard(),
                    description: None,
                    metadata: None,
                    secret: None,
                    previous: None,
                    retained: None,
                    created_at: now,
                    updated_at: now,
                    version: 1,
                },
            };
            if let Change::Put(c) = change {
                sub.url = c.url.clone();
                sub.events = c.events.clone();
                sub.description = c.description.clone();
                sub.metadata = c.metadata.clone();
            }
            let issued = self.move_secret(&mut sub, secret_change, now)?;
            let answer = SubscriptionAnswer {
                created,
                subscription: SubscriptionView::from(&sub),
                signing_secret: issued.map(|s| s.expose().to_owned()),
                issued_secret_digest: None,
                replayed: false,
            };
            let completion = match keyed {
                Some((request, token)) => {
                    // Stored without the secret (`SubscriptionAnswer`): one copy of it lives,
                    // the subscription's, so erasing that erases it everywhere.
                    let stored = SubscriptionAnswer {
                        signing_secret: None,
                        issued_secret_digest: answer
                            .signing_secret
                            .as_deref()
                            .map(|s| self.k.crypto.digest(s).0),
                        ..answer.clone()
                    };
                    let text = serde_json::to_string(&stored)
                        .map_err(|e| Fault::caused("idempotent answer", e))?;
                    Some(Completion {
                        scope: request.scope.clone(),
                        key: request.key.as_str().to_owned(),
                        token: token.to_owned(),
                        answer: self.k.sealer.seal(&Secret::new(text), &request.aad())?,
                    })
                }
                None => None,
            };
            if self
                .store
                .save_grant_subscription(&sub, completion.as_ref())?
            {
                return Ok(answer);
            }
        }
        Err(Fault::new("webhook subscription kept changing under us").into())
    }

    /// An official native installation's grant was disconnected or revoked (spec, state table
    /// "Grant webhook subscription"): its active subscription is disabled for new links, and
    /// its endpoint and a copy of its signing secret, sealed apart from the live one, are
    /// kept for the late payment-status events of the links issued before. Nothing to do for
    /// a grant without an active subscription (a retry of the disconnect included).
    pub fn retain_grant_subscription(&self, grant: uuid::Uuid) -> PortResult<()> {
        for _ in 0..3 {
            let Some(sub) = self.store.grant_subscription(grant)? else {
                return Ok(());
            };
            let Some(current) = &sub.secret else {
                return Ok(());
            };
            let secret = self
                .k
                .sealer
                .open(&current.sealed, &GrantSubscription::aad(sub.id))?;
            let retained = crate::webhooks::RetainedCredential {
                sealed: self
                    .k
                    .sealer
                    .seal(&secret, &GrantSubscription::retained_aad(sub.id))?,
                url: sub.url.clone(),
                since: self.tenancy.company_now(sub.company_id)?,
            };
            let next = GrantSubscription {
                secret: None,
                previous: None,
                retained: Some(retained),
                updated_at: self.k.clock.now(),
                version: sub.version + 1,
                ..sub
            };
            if self.store.save_grant_subscription(&next, None)? {
                return Ok(());
            }
        }
        Err(Fault::new("webhook subscription kept changing under us"))
    }

    /// Housekeeping: idempotency records older than `KEEP_FOR` and logged events older than
    /// the configured retention (real time `now`).
    pub(crate) fn prune(&self, now: Timestamp) -> PortResult<u64> {
        Ok(self
            .store
            .prune_idempotency_keys(now.minus(crate::kernel::idempotency::KEEP_FOR))?
            + self.store.prune_event_log(now.minus(self.events_kept))?)
    }

    /// Applies the table's secret change to `sub`; the new secret when one is issued.
    fn move_secret(
        &self,
        sub: &mut GrantSubscription,
        change: SecretChange,
        now: Timestamp,
    ) -> PortResult<Option<Secret>> {
        let aad = GrantSubscription::aad(sub.id);
        let current = sub.secret.take();
        let previous = sub.previous.take();
        Ok(match change {
            SecretChange::Issue | SecretChange::Rotate => {
                let (secret, stored) = self.new_signing_secret(&aad, now)?;
                if let (SecretChange::Rotate, Some(old)) = (change, current) {
                    sub.previous = Some((self.current_form(old, &aad)?, now.plus(ROTATION_GRACE)));
                }
                sub.secret = Some(stored);
                Some(secret)
            }
            SecretChange::Keep => {
                sub.secret = current.map(|s| self.current_form(s, &aad)).transpose()?;
                sub.previous = match previous {
                    Some((p, until)) => Some((self.current_form(p, &aad)?, until)),
                    None => None,
                };
                None
            }
            // Disabled: both sealed secrets erased.
            SecretChange::Erase => None,
        })
    }
}
