//! Tenancy use cases: bootstrap and members, API-key and sign-in credentials, key management,
//! and each company's own clock.

use std::sync::Arc;

use time::Duration;

use crate::kernel::error::{Fault, FieldError, NotFound, PortResult};
use crate::kernel::events::EventRecord;
use crate::tenancy::error::{ApiKeyNotFound, Denied, InvalidLogin, TenancyError};

type Result<T, E = TenancyError> = std::result::Result<T, E>;
use crate::kernel::ids::{CompanyId, FormKeyId, KeyId, PartnerId, SignInId, UserId};
use crate::kernel::secret::Secret;
use crate::kernel::service::Kernel;
use crate::kernel::timestamp::Timestamp;
use crate::kernel::validate;
use crate::tenancy::keys::{
    needs_touch, Integration, NewIntegrationInput, StoredIntegration, APP_SLUG,
};
use crate::tenancy::ports::{DomainWrite, NewTenant, StoredSignIn, TenancyPorts};
use crate::tenancy::{
    company_now, normalize_email, Company, Credential, Membership, PaySettings, Permission,
    Principal, Role, Scope, TeamMember, Theme, UserRecord, ANONYMOUS_COMPANY,
};

/// How long a signed-in session lasts.
mod signin;

pub const SIGN_IN_TTL: Duration = Duration::hours(12);
/// Shortest password accepted.
pub const MIN_PASSWORD_LEN: usize = 10;

fn check_password(password: &Secret) -> Result<(), FieldError> {
    if password.expose().chars().count() < MIN_PASSWORD_LEN {
        return Err(FieldError::new(
            "password",
            format!("password must be at least {MIN_PASSWORD_LEN} characters"),
        ));
    }
    Ok(())
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
    pub sign_in: StoredSignIn,
}

/// Users, companies, credentials and keys, over the tenancy ports only.
#[derive(Clone)]
pub struct TenancyService {
    k: Kernel,
    store: Arc<dyn TenancyPorts>,
}

impl std::fmt::Debug for TenancyService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TenancyService").finish_non_exhaustive()
    }
}

impl TenancyService {
    /// The companies, their users, keys and sign-ins, over the tenancy store alone.
    pub fn new(k: Kernel, store: Arc<dyn TenancyPorts>) -> TenancyService {
        TenancyService { k, store }
    }

    /// Whether no user exists yet (the first start of an empty database).
    pub fn is_empty(&self) -> PortResult<bool> {
        self.store.is_empty()
    }

    /// Now on `company`'s clock: real time plus its sandbox test clock's offset. For what the
    /// company owns and schedules (`crate::sandbox::clock` moves it). The anonymous links' owner has
    /// no clock of its own: real time.
    pub(crate) fn company_now(&self, company: CompanyId) -> PortResult<Timestamp> {
        if company == ANONYMOUS_COMPANY {
            return Ok(self.k.now());
        }
        let (c, _) = self.company_with_settings(company)?;
        Ok(self.company_now_of(&c))
    }

    pub(crate) fn company_now_of(&self, company: &Company) -> Timestamp {
        company_now(self.k.now(), company.test_clock_offset_ms)
    }

    /// Moves the company's test clock, with the move's event (see
    /// `TenancyStore::advance_test_clock`).
    pub(crate) fn advance_test_clock(
        &self,
        company: CompanyId,
        by_ms: i64,
        max_offset_ms: i64,
        event: &EventRecord,
    ) -> PortResult<Option<i64>> {
        self.store
            .advance_test_clock(company, by_ms, max_offset_ms, Some(event))
    }

    /// Records a use of the key (at most once a minute).
    pub(crate) fn touch_key(&self, integration: &Integration) -> PortResult<()> {
        let now = self.k.now();
        if needs_touch(integration.last_used_at, now) {
            self.store.touch_integration(integration.partner_id, now)?;
        }
        Ok(())
    }

    fn new_integration(
        &self,
        company_id: CompanyId,
        input: NewIntegrationInput,
    ) -> Result<(StoredIntegration, Secret)> {
        let key_id = self
            .k
            .new_public_id(KeyId::RANDOM_LEN, KeyId::from_random)?;
        let form_key_id = self
            .k
            .new_public_id(FormKeyId::RANDOM_LEN, FormKeyId::from_random)?;
        let secret = self.k.new_secret("mksec_");
        let integration = Integration {
            partner_id: PartnerId(self.k.crypto.new_uuid()),
            company_id,
            key_id,
            form_key_id,
            name: input.name,
            app_slug: input.app_slug,
            allowed_origins: input.allowed_origins,
            enabled: true,
            created_at: self.k.now(),
            last_used_at: None,
        };
        let stored = StoredIntegration {
            integration,
            secret_digest: self.k.crypto.digest(secret.expose()),
        };
        Ok((stored, secret))
    }

    /// Creates a user, a company owned by that user, its settings and an API key. Idempotent on
    /// the e-mail: an existing user gets back their first company and key, without a secret.
    pub fn bootstrap(
        &self,
        company_name: &str,
        email: &str,
        password: &Secret,
    ) -> Result<BootstrapOutcome> {
        validate::text("company", company_name, 200, false)?;
        let email = normalize_email(email);
        validate::email("email", &email)?;
        if let Some(user) = self.store.user_by_email(&email)? {
            let first = self
                .store
                .memberships(user.id)?
                .into_iter()
                .next()
                .ok_or_else(|| Fault::new("bootstrap: existing user has no company"))?;
            let key = self
                .store
                .integrations(first.company_id)?
                .into_iter()
                .last()
                .ok_or_else(|| Fault::new("bootstrap: company has no key"))?;
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
        let now = self.k.now();
        let user = UserRecord {
            id: UserId(self.k.crypto.new_uuid()),
            email,
            password_hash: self.k.crypto.hash_password(password.expose())?,
            created_at: now,
        };
        let company = Company {
            id: CompanyId(self.k.crypto.new_uuid()),
            name: company_name.trim().to_owned(),
            picture_url: None,
            logo_url: None,
            theme: Theme::System,
            created_at: now,
            test_clock_offset_ms: 0,
            payment_link_domain: None,
            website: None,
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
            settings: PaySettings::new_company_default(&self.k.assets),
            company,
            integration,
        })?;
        Ok(outcome)
    }

    /// A new user's record for a sign-up (the claim page): a valid e-mail that no user has
    /// yet (`email` at fault otherwise) and a long enough password, hashed. Not stored.
    pub(crate) fn new_user(&self, email: &str, password: &Secret) -> Result<UserRecord> {
        let email = normalize_email(email);
        validate::email("email", &email)?;
        if self.store.user_by_email(&email)?.is_some() {
            return Err(FieldError::new(
                "email",
                "an account with this e-mail exists: sign in instead",
            )
            .into());
        }
        check_password(password)?;
        Ok(UserRecord {
            id: UserId(self.k.crypto.new_uuid()),
            email,
            password_hash: self.k.crypto.hash_password(password.expose())?,
            created_at: self.k.now(),
        })
    }

    /// A new company (checked by the caller) and its default settings. Not stored.
    pub(crate) fn new_company(&self, name: &str, website: Option<&str>) -> (Company, PaySettings) {
        let company = Company {
            id: CompanyId(self.k.crypto.new_uuid()),
            name: name.trim().to_owned(),
            picture_url: None,
            logo_url: None,
            theme: Theme::System,
            created_at: self.k.now(),
            test_clock_offset_ms: 0,
            payment_link_domain: None,
            website: website.map(str::to_owned),
        };
        (company, PaySettings::new_company_default(&self.k.assets))
    }

    /// Adds a person to a company with a role (operator command; the dashboard invites later).
    /// A new e-mail creates the user with `password`; an existing user keeps theirs.
    pub fn add_member(
        &self,
        company: CompanyId,
        email: &str,
        password: &Secret,
        role: Role,
    ) -> Result<UserId> {
        let email = normalize_email(email);
        validate::email("email", &email)?;
        if self.store.company_with_settings(company)?.is_none() {
            return Err(NotFound { kind: "Company" }.into());
        }
        let now = self.k.now();
        let existing = self.store.user_by_email(&email)?;
        let new_user = match existing {
            Some(_) => None,
            None => {
                check_password(password)?;
                Some(UserRecord {
                    id: UserId(self.k.crypto.new_uuid()),
                    email,
                    password_hash: self.k.crypto.hash_password(password.expose())?,
                    created_at: now,
                })
            }
        };
        let user_id = match (&existing, &new_user) {
            (Some(u), _) | (None, Some(u)) => u.id,
            (None, None) => unreachable!("one of the two is set above"),
        };
        if existing.is_some() && self.store.role(user_id, company)?.is_some() {
            return Err(FieldError::new("email", "already a member of this company").into());
        }
        self.store
            .add_member(new_user.as_ref(), user_id, company, role, now)?;
        Ok(user_id)
    }

    /// Resolves an API-key pair. Only one header: `Unauthorized`; a wrong, unknown or disabled
    /// pair: `InvalidCredentials`.
    pub fn authenticate_api_key(
        &self,
        key_id: Option<&str>,
        secret: Option<&str>,
    ) -> Result<Principal> {
        let (Some(key_id), Some(secret)) = (key_id, secret) else {
            return Err(Denied::Unauthenticated.into());
        };
        let key_id = KeyId::parse(key_id).ok_or(Denied::InvalidCredentials)?;
        if !secret.starts_with("mksec_") {
            return Err(Denied::InvalidCredentials.into());
        }
        let stored = self
            .store
            .integration_by_key_id(&key_id)?
            .ok_or(Denied::InvalidCredentials)?;
        if !self.k.crypto.digest_matches(secret, &stored.secret_digest)
            || !stored.integration.enabled
        {
            return Err(Denied::InvalidCredentials.into());
        }
        let now = self.k.now();
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

    /// The teams the signed-in user belongs to.
    pub fn companies(&self, signed_in: &SignedIn) -> PortResult<Vec<Membership>> {
        self.store.memberships(signed_in.sign_in.user_id)
    }

    /// The user's role in a company named in a dashboard path; not a member is `Forbidden`.
    pub(crate) fn team_role<E: From<Denied> + From<Fault>>(
        &self,
        signed_in: &SignedIn,
        company: CompanyId,
        need: Option<Permission>,
    ) -> Result<Role, E> {
        let role = self
            .store
            .role(signed_in.sign_in.user_id, company)?
            .ok_or(Denied::Forbidden)?;
        match need {
            Some(p) if !role.has(p) => Err(Denied::Forbidden.into()),
            _ => Ok(role),
        }
    }

    pub fn create_integration(
        &self,
        signed_in: &SignedIn,
        company: CompanyId,
        input: NewIntegrationInput,
    ) -> Result<(Integration, Secret)> {
        self.team_role::<TenancyError>(signed_in, company, Some(Permission::SettingsManage))?;
        input.validate()?;
        let (stored, secret) = self.new_integration(company, input)?;
        self.store.insert_integration(&stored)?;
        Ok((stored.integration, secret))
    }

    pub fn list_integrations(
        &self,
        signed_in: &SignedIn,
        company: CompanyId,
    ) -> Result<Vec<Integration>> {
        self.team_role::<TenancyError>(signed_in, company, None)?;
        Ok(self.store.integrations(company)?)
    }

    /// The team's members and their roles (any member may read them).
    pub fn members(&self, signed_in: &SignedIn, company: CompanyId) -> Result<Vec<TeamMember>> {
        self.team_role::<TenancyError>(signed_in, company, None)?;
        Ok(self.store.members(company)?)
    }

    pub fn set_integration_enabled(
        &self,
        signed_in: &SignedIn,
        company: CompanyId,
        partner: PartnerId,
        enabled: bool,
    ) -> Result<Integration> {
        self.team_role::<TenancyError>(signed_in, company, Some(Permission::SettingsManage))?;
        Ok(self
            .store
            .set_integration_enabled(company, partner, enabled)?
            .ok_or(ApiKeyNotFound)?)
    }

    pub fn delete_integration(
        &self,
        signed_in: &SignedIn,
        company: CompanyId,
        partner: PartnerId,
    ) -> Result<()> {
        self.team_role::<TenancyError>(signed_in, company, Some(Permission::SettingsManage))?;
        if self.store.delete_integration(company, partner)? {
            Ok(())
        } else {
            Err(ApiKeyNotFound.into())
        }
    }

    /// The operator marks `domain` verified as the company's payment-link domain (after
    /// checking its DNS points here): from then on its hosted checkout links' `publicUrl` and
    /// its customer portal URLs are on `https://{domain}`. `None` clears it. Returns the
    /// normalised domain. No principal: an operator command (`admin verify-domain`).
    pub fn set_payment_link_domain(
        &self,
        company: CompanyId,
        domain: Option<&str>,
    ) -> Result<Option<String>> {
        let domain = domain
            .map(|d| validate::domain_name("domain", d))
            .transpose()?;
        match self
            .store
            .set_payment_link_domain(company, domain.as_deref())?
        {
            DomainWrite::Written => Ok(domain),
            DomainWrite::NoCompany => Err(NotFound { kind: "Company" }.into()),
            DomainWrite::Taken => {
                Err(FieldError::new("domain", "this domain is verified for another company").into())
            }
        }
    }

    /// Sets (or with `None` clears) the company's website: an absolute http(s) URL of at most
    /// 2,048 characters (`website`). No principal: an operator command (`admin bootstrap
    /// --website`); partner onboarding will set it too.
    pub fn set_company_website(&self, company: CompanyId, website: Option<&str>) -> Result<()> {
        let website = website.map(str::trim);
        if let Some(w) = website {
            validate::http_url("website", w)?;
        }
        if self.store.set_company_website(company, website)? {
            Ok(())
        } else {
            Err(NotFound { kind: "Company" }.into())
        }
    }

    /// Where the company's hosted pages live: `https://{its verified payment-link domain}`,
    /// else the public payment site (`PAY_PUBLIC_PAY_URL`; anonymous links always).
    pub fn pay_base(&self, company: CompanyId) -> PortResult<String> {
        if company == ANONYMOUS_COMPANY {
            return Ok(self.k.public_pay_url.to_string());
        }
        let (c, _) = self.company_with_settings(company)?;
        Ok(pay_base_of(&c, &self.k.public_pay_url))
    }

    /// `pay_base` and now on the company's clock, from one read of the company: what a read of
    /// its links shows (`publicUrl`, and whether each is past its expiry on that clock).
    pub fn pay_base_and_now(&self, company: CompanyId) -> PortResult<(String, Timestamp)> {
        if company == ANONYMOUS_COMPANY {
            return Ok((self.k.public_pay_url.to_string(), self.k.now()));
        }
        let (c, _) = self.company_with_settings(company)?;
        Ok((
            pay_base_of(&c, &self.k.public_pay_url),
            self.company_now_of(&c),
        ))
    }

    /// Whether `host` is `company`'s verified payment-link domain (its hosted pages' forms may
    /// come from `https://{host}`). An unknown company has none.
    pub fn pays_on(&self, company: CompanyId, host: &str) -> PortResult<bool> {
        Ok(self
            .store
            .company_with_settings(company)?
            .and_then(|(c, _)| c.payment_link_domain)
            .is_some_and(|d| d.eq_ignore_ascii_case(host)))
    }

    /// The company the credential acts for (scope `company:read`; API keys and every member
    /// of a signed-in session read it too).
    pub fn company(&self, p: &Principal) -> Result<Company> {
        p.authorize(Scope::CompanyRead)?;
        Ok(self.company_with_settings(p.company_id)?.0)
    }

    pub(crate) fn company_with_settings(
        &self,
        company: CompanyId,
    ) -> PortResult<(Company, PaySettings)> {
        self.store
            .company_with_settings(company)?
            .ok_or_else(|| Fault::new(format!("company {company} has no settings")))
    }
}

/// `https://{domain}` for a company with a verified payment-link domain, else `public_pay_url`.
pub(crate) fn pay_base_of(company: &Company, public_pay_url: &str) -> String {
    match &company.payment_link_domain {
        Some(d) => format!("https://{d}"),
        None => public_pay_url.trim_end_matches('/').to_owned(),
    }
}
