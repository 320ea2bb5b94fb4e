//! Use cases. `Pay` holds the ports and the operator's configuration; each method takes the
//! resolved principal (or credentials to resolve one) and returns domain values or a
//! `DomainError`. Adapters call these and nothing else.

use std::sync::Arc;

use time::Duration;

use crate::kernel::assets::{AssetCatalogue, DestinationAsset};
use crate::kernel::error::{DomainError, DomainResult};
use crate::kernel::ids::{
    CompanyId, FormKeyId, KeyId, LinkUid, PartnerId, PaymentLinkId, SessionId, UserId,
};
use crate::kernel::ports::HealthCheck;
use crate::kernel::ports::{Clock, Crypto, SecretSealer};
use crate::kernel::ratelimit::RateLimitStore;
use crate::kernel::ratelimit::{self, Limit, RateLimits};
use crate::kernel::secret::Secret;
use crate::kernel::timestamp::Timestamp;
use crate::kernel::validate;
use crate::links::ports::LinkFilter;
use crate::links::ports::{AnonymousLinkStore, PaymentLinkStore};
use crate::links::{
    transition, CreateLinkInput, CreatedBy, LinkStatus, LinkTransition, PaymentLink,
};
use crate::settings::ports::SettingsStore;
use crate::settings::{PaySettings, SettingsPatch};
use crate::tenancy::keys::{
    needs_touch, Integration, NewIntegrationInput, StoredIntegration, APP_SLUG,
};
use crate::tenancy::ports::{IntegrationStore, SessionStore, TenancyStore};
use crate::tenancy::ports::{NewTenant, StoredSession};
use crate::tenancy::{
    normalize_email, Company, Credential, Membership, Permission, Principal, Role, Scope, Theme,
    UserRecord,
};
use crate::webhooks::ports::{WebhookSigner, WebhookStore};

/// How long a signed-in session lasts.
pub const SESSION_TTL: Duration = Duration::hours(12);
/// Length of random secret parts (base62; 43 characters carry about 256 bits).
const SECRET_LEN: usize = 43;
/// Shortest password accepted.
pub const MIN_PASSWORD_LEN: usize = 10;

fn check_password(password: &Secret) -> DomainResult<()> {
    if password.expose().chars().count() < MIN_PASSWORD_LEN {
        return Err(DomainError::validation(
            "password",
            format!("password must be at least {MIN_PASSWORD_LEN} characters"),
        ));
    }
    Ok(())
}

/// The service's use cases over its ports.
#[derive(Clone)]
pub struct Pay {
    pub store: Arc<dyn PayStore>,
    pub crypto: Arc<dyn Crypto>,
    pub clock: Arc<dyn Clock>,
    pub assets: Arc<AssetCatalogue>,
    /// `{public_pay_url}`: where hosted checkout pages live.
    pub public_pay_url: String,
    pub webhooks: Arc<WebhookPorts>,
    pub payments: Arc<PaymentPorts>,
    /// What each rate-limited entry point allows.
    pub limits: RateLimits,
}

/// What payments need besides the store.
pub struct PaymentPorts {
    pub processor: Arc<dyn crate::checkout::ports::Processor>,
    pub prices: Arc<dyn crate::checkout::ports::PriceSource>,
    /// Sandbox mode: the sandbox events route and the companies' test clocks are on.
    pub sandbox: bool,
    /// Bumped whenever this process changes a link's status (merchant moves, a one-time link
    /// paid): caches of public link pages compare it to drop what they rendered before.
    pub link_epoch: std::sync::atomic::AtomicU64,
}

impl std::fmt::Debug for PaymentPorts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PaymentPorts")
            .field("processor", &self.processor.name())
            .field("sandbox", &self.sandbox)
            .finish_non_exhaustive()
    }
}

/// What webhooks need besides the store.
pub struct WebhookPorts {
    pub sealer: Arc<dyn SecretSealer>,
    pub signer: Arc<dyn WebhookSigner>,
    /// Real time, for signature timestamps (the service clock may be a test clock).
    pub wall_clock: Arc<dyn Clock>,
    /// Development and tests: allow http and private addresses as callback targets.
    pub allow_private_targets: bool,
}

impl std::fmt::Debug for WebhookPorts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookPorts")
            .field("allow_private_targets", &self.allow_private_targets)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for Pay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pay")
            .field("public_pay_url", &self.public_pay_url)
            .finish_non_exhaustive()
    }
}

/// What `bootstrap` created (or found).
#[derive(Debug, Clone)]
pub struct BootstrapOutcome {
    pub company_id: CompanyId,
    pub user_id: UserId,
    pub key_id: KeyId,
    /// `None` when the e-mail already existed: a secret is never shown twice.
    pub key_secret: Option<Secret>,
    pub form_key_id: FormKeyId,
    pub created: bool,
}

/// A new session's secrets, returned once.
#[derive(Debug, Clone)]
pub struct LoginOutcome {
    pub session_token: Secret,
    pub csrf_token: Secret,
    pub expires_at: Timestamp,
}

/// A signed-in user, resolved from the session cookie.
#[derive(Debug, Clone)]
pub struct SignedIn {
    pub session: StoredSession,
}

impl Pay {
    /// Real time: for security windows (throttles, rate limits, sign-in sessions), leases and
    /// what no company schedules.
    pub fn now(&self) -> Timestamp {
        self.clock.now()
    }

    /// Counts one hit of `key` (digested: never stored raw) against `limit`, on real time;
    /// `RateLimited` when the bucket is full. The count and the decision are one atomic store
    /// call, so a burst cannot pass together.
    pub(crate) fn throttle(&self, key: &str, limit: &Limit) -> DomainResult<()> {
        let bucket = self.crypto.digest(key).0;
        let counted = self
            .store
            .hit(&bucket, self.now(), limit.window, limit.max)?;
        ratelimit::check(counted, limit)
    }

    /// Now on `company`'s clock: real time plus its sandbox test clock's offset. For what the
    /// company owns and schedules (`crate::sandbox::clock`). The anonymous links' owner has no
    /// clock of its own: real time.
    pub(crate) fn company_now(&self, company: CompanyId) -> DomainResult<Timestamp> {
        if company == crate::links::ANONYMOUS_COMPANY {
            return Ok(self.now());
        }
        let (c, _) = self.company_with_settings(company)?;
        Ok(self.company_now_of(&c))
    }

    pub(crate) fn company_now_of(&self, company: &Company) -> Timestamp {
        crate::sandbox::clock::company_now(self.now(), company.test_clock_offset_ms)
    }

    /// Now on the clock of the company that owns `link`.
    pub(crate) fn link_now(&self, link: &PaymentLink) -> DomainResult<Timestamp> {
        self.company_now(link.company_id)
    }

    fn new_secret(&self, prefix: &str) -> Secret {
        Secret::new(format!(
            "{prefix}{}",
            self.crypto.random_alphanumeric(SECRET_LEN)
        ))
    }

    fn new_integration(
        &self,
        company_id: CompanyId,
        input: NewIntegrationInput,
    ) -> DomainResult<(StoredIntegration, Secret)> {
        let key_id = KeyId::from_random(&self.crypto.random_alphanumeric(KeyId::RANDOM_LEN))
            .ok_or_else(|| DomainError::Internal("bad key id from generator".into()))?;
        let form_key_id =
            FormKeyId::from_random(&self.crypto.random_alphanumeric(FormKeyId::RANDOM_LEN))
                .ok_or_else(|| DomainError::Internal("bad form key from generator".into()))?;
        let secret = self.new_secret("mksec_");
        let integration = Integration {
            partner_id: PartnerId(self.crypto.new_uuid()),
            company_id,
            key_id,
            form_key_id,
            name: input.name,
            app_slug: input.app_slug,
            allowed_origins: input.allowed_origins,
            enabled: true,
            created_at: self.now(),
            last_used_at: None,
        };
        let stored = StoredIntegration {
            integration,
            secret_digest: self.crypto.digest(secret.expose()),
        };
        Ok((stored, secret))
    }

    // ----- tenancy -----

    /// Creates a user, a company owned by that user, its settings and an API key. Idempotent on
    /// the e-mail: an existing user gets back their first company and key, without a secret.
    pub fn bootstrap(
        &self,
        company_name: &str,
        email: &str,
        password: &Secret,
    ) -> DomainResult<BootstrapOutcome> {
        validate::text("company", company_name, 200, false)?;
        let email = normalize_email(email);
        validate::email("email", &email)?;
        if let Some(user) = self.store.user_by_email(&email)? {
            let first = self
                .store
                .memberships(user.id)?
                .into_iter()
                .next()
                .ok_or_else(|| {
                    DomainError::Internal("bootstrap: existing user has no company".into())
                })?;
            let key = self
                .store
                .integrations(first.company_id)?
                .into_iter()
                .last()
                .ok_or_else(|| DomainError::Internal("bootstrap: company has no key".into()))?;
            return Ok(BootstrapOutcome {
                company_id: first.company_id,
                user_id: user.id,
                key_id: key.key_id,
                key_secret: None,
                form_key_id: key.form_key_id,
                created: false,
            });
        }
        check_password(password)?;
        let now = self.now();
        let user = UserRecord {
            id: UserId(self.crypto.new_uuid()),
            email,
            password_hash: self.crypto.hash_password(password.expose())?,
            created_at: now,
        };
        let company = Company {
            id: CompanyId(self.crypto.new_uuid()),
            name: company_name.trim().to_owned(),
            picture_url: None,
            logo_url: None,
            theme: Theme::System,
            created_at: now,
            test_clock_offset_ms: 0,
        };
        let (integration, secret) = self.new_integration(
            company.id,
            NewIntegrationInput {
                name: "Default key".into(),
                app_slug: APP_SLUG.into(),
                allowed_origins: vec![],
            },
        )?;
        let outcome = BootstrapOutcome {
            company_id: company.id,
            user_id: user.id,
            key_id: integration.integration.key_id.clone(),
            key_secret: Some(secret),
            form_key_id: integration.integration.form_key_id.clone(),
            created: true,
        };
        self.store.create_tenant(&NewTenant {
            owner: user.id,
            new_user: Some(user),
            settings: PaySettings::new_company_default(&self.assets),
            company,
            integration,
        })?;
        Ok(outcome)
    }

    /// Adds a person to a company with a role (operator command; the dashboard invites later).
    /// A new e-mail creates the user with `password`; an existing user keeps theirs.
    pub fn add_member(
        &self,
        company: CompanyId,
        email: &str,
        password: &Secret,
        role: Role,
    ) -> DomainResult<UserId> {
        let email = normalize_email(email);
        validate::email("email", &email)?;
        if self.store.company_with_settings(company)?.is_none() {
            return Err(DomainError::NotFound { kind: "Company" });
        }
        let now = self.now();
        let existing = self.store.user_by_email(&email)?;
        let new_user = match existing {
            Some(_) => None,
            None => {
                check_password(password)?;
                Some(UserRecord {
                    id: UserId(self.crypto.new_uuid()),
                    email,
                    password_hash: self.crypto.hash_password(password.expose())?,
                    created_at: now,
                })
            }
        };
        let user_id = match (&existing, &new_user) {
            (Some(u), _) | (None, Some(u)) => u.id,
            (None, None) => unreachable!("one of the two is set above"),
        };
        if existing.is_some() && self.store.role(user_id, company)?.is_some() {
            return Err(DomainError::validation(
                "email",
                "already a member of this company",
            ));
        }
        self.store
            .add_member(new_user.as_ref(), user_id, company, role, now)?;
        Ok(user_id)
    }

    // ----- credentials -----

    /// Resolves an API-key pair. Only one header: `Unauthorized`; a wrong, unknown or disabled
    /// pair: `InvalidCredentials`.
    pub fn authenticate_api_key(
        &self,
        key_id: Option<&str>,
        secret: Option<&str>,
    ) -> DomainResult<Principal> {
        let (Some(key_id), Some(secret)) = (key_id, secret) else {
            return Err(DomainError::Unauthorized);
        };
        let key_id = KeyId::parse(key_id).ok_or(DomainError::InvalidCredentials)?;
        if !secret.starts_with("mksec_") {
            return Err(DomainError::InvalidCredentials);
        }
        let stored = self
            .store
            .integration_by_key_id(&key_id)?
            .ok_or(DomainError::InvalidCredentials)?;
        if !self.crypto.digest_matches(secret, &stored.secret_digest) || !stored.integration.enabled
        {
            return Err(DomainError::InvalidCredentials);
        }
        let now = self.now();
        if needs_touch(stored.integration.last_used_at, now) {
            self.store
                .touch_integration(stored.integration.partner_id, now)?;
        }
        Ok(Principal {
            company_id: stored.integration.company_id,
            credential: Credential::ApiKey {
                partner_id: stored.integration.partner_id,
            },
        })
    }

    /// Signs a user in: the same error for an unknown e-mail and a wrong password, and at most
    /// `limits.login` attempts per e-mail and address in its window; a success clears them.
    pub fn login(
        &self,
        email: &str,
        password: &Secret,
        client_addr: &str,
    ) -> DomainResult<LoginOutcome> {
        let email = normalize_email(email);
        let now = self.now();
        // Every attempt counts before the password is checked, so parallel guesses cannot
        // pass the limit together; a success forgets the bucket.
        let key = format!("login:{email}|{client_addr}");
        self.throttle(&key, &self.limits.login)?;
        let user = self.store.user_by_email(&email)?;
        let ok = self.crypto.verify_password(
            password.expose(),
            user.as_ref().map(|u| u.password_hash.as_str()),
        );
        let (true, Some(user)) = (ok, user) else {
            return Err(DomainError::InvalidLogin);
        };
        let company = self
            .store
            .memberships(user.id)?
            .into_iter()
            .next()
            .ok_or(DomainError::InvalidLogin)?;
        self.store.clear_hits(&self.crypto.digest(&key).0)?;
        let token = self.new_secret("pss_");
        let csrf = self.new_secret("");
        let session = StoredSession {
            id: SessionId(self.crypto.new_uuid()),
            token_digest: self.crypto.digest(token.expose()),
            csrf_digest: self.crypto.digest(csrf.expose()),
            user_id: user.id,
            company_id: company.company_id,
            created_at: now,
            expires_at: now.plus(SESSION_TTL),
        };
        self.store.insert_session(&session)?;
        Ok(LoginOutcome {
            session_token: token,
            csrf_token: csrf,
            expires_at: session.expires_at,
        })
    }

    /// Resolves a session cookie; an unknown or expired session is `Unauthorized`.
    pub fn authenticate_session(&self, token: &str) -> DomainResult<SignedIn> {
        let session = self
            .store
            .session_by_token(&self.crypto.digest(token))?
            .ok_or(DomainError::Unauthorized)?;
        if session.expires_at <= self.now() {
            return Err(DomainError::Unauthorized);
        }
        Ok(SignedIn { session })
    }

    /// Checks the CSRF token of a session-authenticated mutation (403 when wrong or missing).
    pub fn check_csrf(&self, signed_in: &SignedIn, token: Option<&str>) -> DomainResult<()> {
        match token {
            Some(t)
                if self
                    .crypto
                    .digest_matches(t, &signed_in.session.csrf_digest) =>
            {
                Ok(())
            }
            _ => Err(DomainError::Forbidden),
        }
    }

    /// The principal a session acts as on payment routes: its current company and role.
    pub fn session_principal(&self, signed_in: &SignedIn) -> DomainResult<Principal> {
        let s = &signed_in.session;
        let role = self
            .store
            .role(s.user_id, s.company_id)?
            .ok_or(DomainError::Forbidden)?;
        Ok(Principal {
            company_id: s.company_id,
            credential: Credential::Session {
                session_id: s.id,
                user_id: s.user_id,
                role,
            },
        })
    }

    pub fn logout(&self, token: &str) -> DomainResult<()> {
        self.store.delete_session(&self.crypto.digest(token))
    }

    /// The teams the signed-in user belongs to.
    pub fn companies(&self, signed_in: &SignedIn) -> DomainResult<Vec<Membership>> {
        self.store.memberships(signed_in.session.user_id)
    }

    /// The user's role in a company named in a dashboard path; not a member is `Forbidden`.
    pub(crate) fn team_role(
        &self,
        signed_in: &SignedIn,
        company: CompanyId,
        need: Option<Permission>,
    ) -> DomainResult<Role> {
        let role = self
            .store
            .role(signed_in.session.user_id, company)?
            .ok_or(DomainError::Forbidden)?;
        match need {
            Some(p) if !role.has(p) => Err(DomainError::Forbidden),
            _ => Ok(role),
        }
    }

    // ----- integrations (key management) -----

    pub fn create_integration(
        &self,
        signed_in: &SignedIn,
        company: CompanyId,
        input: NewIntegrationInput,
    ) -> DomainResult<(Integration, Secret)> {
        self.team_role(signed_in, company, Some(Permission::SettingsManage))?;
        input.validate()?;
        let (stored, secret) = self.new_integration(company, input)?;
        self.store.insert_integration(&stored)?;
        Ok((stored.integration, secret))
    }

    pub fn list_integrations(
        &self,
        signed_in: &SignedIn,
        company: CompanyId,
    ) -> DomainResult<Vec<Integration>> {
        self.team_role(signed_in, company, None)?;
        self.store.integrations(company)
    }

    pub fn set_integration_enabled(
        &self,
        signed_in: &SignedIn,
        company: CompanyId,
        partner: PartnerId,
        enabled: bool,
    ) -> DomainResult<Integration> {
        self.team_role(signed_in, company, Some(Permission::SettingsManage))?;
        self.store
            .set_integration_enabled(company, partner, enabled)?
            .ok_or(DomainError::ApiKeyNotFound)
    }

    pub fn delete_integration(
        &self,
        signed_in: &SignedIn,
        company: CompanyId,
        partner: PartnerId,
    ) -> DomainResult<()> {
        self.team_role(signed_in, company, Some(Permission::SettingsManage))?;
        if self.store.delete_integration(company, partner)? {
            Ok(())
        } else {
            Err(DomainError::ApiKeyNotFound)
        }
    }

    // ----- payment links -----

    pub(crate) fn company_with_settings(
        &self,
        company: CompanyId,
    ) -> DomainResult<(Company, PaySettings)> {
        self.store
            .company_with_settings(company)?
            .ok_or_else(|| DomainError::Internal(format!("company {company} has no settings")))
    }

    pub fn create_link(&self, p: &Principal, input: CreateLinkInput) -> DomainResult<PaymentLink> {
        p.authorize(Scope::PaymentLinksWrite)?;
        let (company, settings) = self.company_with_settings(p.company_id)?;
        let payload = input.into_payload(&self.assets, &settings, &company)?;
        let now = self.company_now_of(&company);
        let uid = LinkUid::parse(&self.crypto.random_alphanumeric(LinkUid::LEN))
            .ok_or_else(|| DomainError::Internal("bad uid from generator".into()))?;
        let link = PaymentLink {
            id: PaymentLinkId(self.crypto.new_uuid()),
            uid,
            company_id: p.company_id,
            status: LinkStatus::Active,
            expires_at: payload.expiration_time.expires_at(now),
            payload,
            created_at: now,
            updated_at: now,
            created_by: CreatedBy::from_principal(p),
        };
        self.store.insert_link(&link)?;
        Ok(link)
    }

    /// Up to 200 newest links: company-wide for keys and sessions, the grant's own for OAuth.
    pub fn list_links(&self, p: &Principal) -> DomainResult<Vec<PaymentLink>> {
        p.authorize(Scope::PaymentLinksRead)?;
        let filter = LinkFilter {
            grant_id: p.grant_id(),
        };
        self.store
            .links(p.company_id, filter, crate::links::LIST_LIMIT)
    }

    /// One link; another company's (or another grant's) is `NotFound`.
    pub fn get_link(&self, p: &Principal, uid: &str) -> DomainResult<PaymentLink> {
        p.authorize(Scope::PaymentLinksRead)?;
        self.visible_link(p, uid)
    }

    pub(crate) fn visible_link(&self, p: &Principal, uid: &str) -> DomainResult<PaymentLink> {
        let not_found = DomainError::NotFound {
            kind: "Payment link",
        };
        let uid = LinkUid::parse(uid).ok_or(not_found.clone())?;
        let link = self
            .store
            .link(p.company_id, &uid)?
            .ok_or(not_found.clone())?;
        if link.is_anonymous() {
            return Err(not_found);
        }
        if let Some(g) = p.grant_id() {
            if link.grant_id() != Some(g) {
                return Err(not_found);
            }
        }
        Ok(link)
    }

    /// Moves a link per the transition table (compare-and-set; a lost race is re-read and
    /// re-decided, so concurrent writers never skip the table).
    pub fn set_link_status(
        &self,
        p: &Principal,
        uid: &str,
        to: LinkStatus,
    ) -> DomainResult<PaymentLink> {
        p.authorize(Scope::PaymentLinksWrite)?;
        for _ in 0..3 {
            let link = self.visible_link(p, uid)?;
            match transition(link.status, to)? {
                LinkTransition::Same => return Ok(link),
                LinkTransition::Move { from, to } => {
                    let now = self.link_now(&link)?;
                    if self
                        .store
                        .set_link_status(p.company_id, &link.uid, from, to, now)?
                    {
                        let link = PaymentLink {
                            status: to,
                            updated_at: now,
                            ..link
                        };
                        // Pausing or archiving ends the payers' unfinished sessions. Should
                        // this stop half-way, the expiry work ends the rest.
                        self.link_changed();
                        if to != LinkStatus::Active {
                            self.end_sessions_of_inactive_link(&link)?;
                        }
                        return Ok(link);
                    }
                }
            }
        }
        Err(DomainError::Internal(
            "link status kept changing under us".into(),
        ))
    }

    // ----- settings and assets -----

    pub fn settings(&self, p: &Principal) -> DomainResult<PaySettings> {
        p.authorize(Scope::SettingsRead)?;
        Ok(self.company_with_settings(p.company_id)?.1)
    }

    pub fn update_settings(
        &self,
        p: &Principal,
        patch: SettingsPatch,
    ) -> DomainResult<PaySettings> {
        p.authorize(Scope::SettingsWrite)?;
        let current = self.company_with_settings(p.company_id)?.1;
        let next = patch.apply(&current, &self.assets)?;
        if next != current {
            self.store.save_settings(p.company_id, &next, self.now())?;
        }
        Ok(next)
    }

    /// The enabled settlement assets, each with whether it is the company's default.
    pub fn destination_assets(&self, p: &Principal) -> DomainResult<Vec<(DestinationAsset, bool)>> {
        p.authorize(Scope::PaymentLinksRead)?;
        let default = self
            .company_with_settings(p.company_id)?
            .1
            .default_destination_asset;
        Ok(self
            .assets
            .all()
            .iter()
            .map(|a| {
                (
                    a.clone(),
                    default.as_deref() == Some(a.asset_identifier.as_str()),
                )
            })
            .collect())
    }

    /// Readiness: the database answers.
    pub fn ready(&self) -> DomainResult<()> {
        self.store.ping()
    }

    /// Housekeeping: forgets expired sessions, and rate-limit hits older than the longest
    /// window that counts them. Returns how many rows went.
    pub fn prune(&self) -> DomainResult<u64> {
        let now = self.now();
        let rows = self
            .store
            .prune(now, now.minus(self.limits.longest_window()))?;
        let mails = self
            .store
            .prune_mails(now.minus(crate::mail::MAIL_RETENTION))?;
        Ok(rows + mails)
    }
}

pub use crate::sandbox::clock::MAX_ADVANCE_SECS as MAX_CLOCK_ADVANCE_SECS;

#[cfg(test)]
mod tests;

/// Everything the service needs from storage, as one object.
pub trait PayStore:
    TenancyStore
    + SessionStore
    + IntegrationStore
    + PaymentLinkStore
    + SettingsStore
    + WebhookStore
    + AnonymousLinkStore
    + RateLimitStore
    + crate::checkout::CheckoutStore
    + crate::links::gateway::FormKeyStore
    + crate::mail::MailStore
    + HealthCheck
    + Send
    + Sync
{
}

impl<T> PayStore for T where
    T: TenancyStore
        + SessionStore
        + IntegrationStore
        + PaymentLinkStore
        + SettingsStore
        + WebhookStore
        + AnonymousLinkStore
        + RateLimitStore
        + crate::checkout::CheckoutStore
        + crate::links::gateway::FormKeyStore
        + crate::mail::MailStore
        + HealthCheck
        + Send
        + Sync
{
}
