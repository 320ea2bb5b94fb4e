//! Tenancy rows: users, companies and memberships, API-key integrations and browser
//! sessions.

use diesel::prelude::*;
use pay_domain::kernel::ids::{CompanyId, FormKeyId, KeyId, PartnerId, SignInId, UserId};
use pay_domain::kernel::secret::SecretDigest;
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::tenancy::keys::{Integration, StoredIntegration};
use pay_domain::tenancy::ports::StoredSignIn;
use pay_domain::tenancy::{Company, Membership, Role, Theme, UserRecord};
use pay_domain::{Fault, PortResult};

use super::{corrupt, id, instant, opt_instant};
use crate::conn::MultiBackend;
use crate::schema::{browser_sessions, companies, integrations, memberships, users};

// ----- users -----

#[derive(Queryable, Selectable)]
#[diesel(table_name = users, check_for_backend(MultiBackend))]
pub(crate) struct UserRow {
    id: String,
    email: String,
    password_hash: String,
    created_at: i64,
}

impl TryFrom<UserRow> for UserRecord {
    type Error = Fault;

    fn try_from(r: UserRow) -> PortResult<UserRecord> {
        Ok(UserRecord {
            id: id(&r.id, UserId::parse, "users.id")?,
            email: r.email,
            password_hash: r.password_hash,
            created_at: instant(r.created_at, "users.created_at")?,
        })
    }
}

#[derive(Insertable)]
#[diesel(table_name = users)]
pub(crate) struct NewUserRow<'a> {
    id: String,
    email: &'a str,
    password_hash: &'a str,
    created_at: i64,
}

impl<'a> From<&'a UserRecord> for NewUserRow<'a> {
    fn from(u: &'a UserRecord) -> Self {
        NewUserRow {
            id: u.id.to_string(),
            email: &u.email,
            password_hash: &u.password_hash,
            created_at: u.created_at.unix_millis(),
        }
    }
}

// ----- companies and memberships -----

#[derive(Queryable, Selectable)]
#[diesel(table_name = companies, check_for_backend(MultiBackend))]
pub(crate) struct CompanyRow {
    id: String,
    name: String,
    picture_url: Option<String>,
    logo_url: Option<String>,
    theme: String,
    created_at: i64,
    test_clock_offset_ms: i64,
    payment_link_domain: Option<String>,
    website: Option<String>,
}

impl TryFrom<CompanyRow> for Company {
    type Error = Fault;

    fn try_from(r: CompanyRow) -> PortResult<Company> {
        Ok(Company {
            id: id(&r.id, CompanyId::parse, "companies.id")?,
            name: r.name,
            picture_url: r.picture_url,
            logo_url: r.logo_url,
            theme: Theme::parse(&r.theme).ok_or_else(|| corrupt("companies.theme"))?,
            created_at: instant(r.created_at, "companies.created_at")?,
            test_clock_offset_ms: r.test_clock_offset_ms,
            payment_link_domain: r.payment_link_domain,
            website: r.website,
        })
    }
}

#[derive(Insertable)]
#[diesel(table_name = companies, treat_none_as_default_value = false)]
pub(crate) struct NewCompanyRow<'a> {
    id: String,
    name: &'a str,
    picture_url: Option<&'a str>,
    logo_url: Option<&'a str>,
    theme: &'static str,
    created_at: i64,
    test_clock_offset_ms: i64,
    website: Option<&'a str>,
}

impl<'a> From<&'a Company> for NewCompanyRow<'a> {
    fn from(c: &'a Company) -> Self {
        NewCompanyRow {
            id: c.id.to_string(),
            name: &c.name,
            picture_url: c.picture_url.as_deref(),
            logo_url: c.logo_url.as_deref(),
            theme: c.theme.as_str(),
            created_at: c.created_at.unix_millis(),
            test_clock_offset_ms: c.test_clock_offset_ms,
            website: c.website.as_deref(),
        }
    }
}

#[derive(Insertable)]
#[diesel(table_name = memberships)]
pub(crate) struct NewMembershipRow {
    pub(crate) user_id: String,
    pub(crate) company_id: String,
    pub(crate) role: &'static str,
    pub(crate) created_at: i64,
}

/// A membership joined with its company's name.
#[derive(Queryable)]
pub(crate) struct MembershipRow {
    company_id: String,
    company_name: String,
    role: String,
}

impl TryFrom<MembershipRow> for Membership {
    type Error = Fault;

    fn try_from(r: MembershipRow) -> PortResult<Membership> {
        Ok(Membership {
            company_id: id(&r.company_id, CompanyId::parse, "memberships.company_id")?,
            company_name: r.company_name,
            role: parse_role(&r.role)?,
        })
    }
}

pub(crate) fn parse_role(text: &str) -> PortResult<Role> {
    Role::parse(text).ok_or_else(|| corrupt("memberships.role"))
}

// ----- integrations -----

/// Every column but the secret digest, which only the authenticating lookup selects.
#[derive(Queryable, Selectable)]
#[diesel(table_name = integrations, check_for_backend(MultiBackend))]
pub(crate) struct IntegrationRow {
    partner_id: String,
    company_id: String,
    key_id: String,
    form_key_id: String,
    name: String,
    app_slug: String,
    allowed_origins: String,
    enabled: bool,
    created_at: i64,
    last_used_at: Option<i64>,
}

impl TryFrom<IntegrationRow> for Integration {
    type Error = Fault;

    fn try_from(r: IntegrationRow) -> PortResult<Integration> {
        Ok(Integration {
            partner_id: id(&r.partner_id, PartnerId::parse, "integrations.partner_id")?,
            company_id: id(&r.company_id, CompanyId::parse, "integrations.company_id")?,
            key_id: id(&r.key_id, KeyId::parse, "integrations.key_id")?,
            form_key_id: id(&r.form_key_id, FormKeyId::parse, "integrations.form_key_id")?,
            name: r.name,
            app_slug: r.app_slug,
            allowed_origins: serde_json::from_str(&r.allowed_origins)
                .map_err(|_| corrupt("integrations.allowed_origins"))?,
            enabled: r.enabled,
            created_at: instant(r.created_at, "integrations.created_at")?,
            last_used_at: opt_instant(r.last_used_at, "integrations.last_used_at")?,
        })
    }
}

/// An integration row with its secret digest.
pub(crate) type StoredIntegrationRow = (IntegrationRow, String);

pub(crate) fn stored_integration(
    (row, secret_digest): StoredIntegrationRow,
) -> PortResult<StoredIntegration> {
    Ok(StoredIntegration {
        integration: row.try_into()?,
        secret_digest: SecretDigest(secret_digest),
    })
}

#[derive(Insertable)]
#[diesel(table_name = integrations, treat_none_as_default_value = false)]
pub(crate) struct NewIntegrationRow<'a> {
    partner_id: String,
    company_id: String,
    key_id: &'a str,
    form_key_id: &'a str,
    secret_digest: &'a str,
    name: &'a str,
    app_slug: &'a str,
    allowed_origins: String,
    enabled: bool,
    created_at: i64,
    last_used_at: Option<i64>,
}

impl<'a> TryFrom<&'a StoredIntegration> for NewIntegrationRow<'a> {
    type Error = Fault;

    fn try_from(s: &'a StoredIntegration) -> PortResult<Self> {
        let i = &s.integration;
        Ok(NewIntegrationRow {
            partner_id: i.partner_id.to_string(),
            company_id: i.company_id.to_string(),
            key_id: i.key_id.as_str(),
            form_key_id: i.form_key_id.as_str(),
            secret_digest: &s.secret_digest.0,
            name: &i.name,
            app_slug: &i.app_slug,
            allowed_origins: serde_json::to_string(&i.allowed_origins)
                .map_err(|e| Fault::caused("encoding allowed origins", e))?,
            enabled: i.enabled,
            created_at: i.created_at.unix_millis(),
            last_used_at: i.last_used_at.map(Timestamp::unix_millis),
        })
    }
}

// ----- browser sessions -----

#[derive(Queryable, Selectable)]
#[diesel(table_name = browser_sessions, check_for_backend(MultiBackend))]
pub(crate) struct SessionRow {
    id: String,
    token_digest: String,
    csrf_digest: String,
    user_id: String,
    company_id: String,
    created_at: i64,
    expires_at: i64,
}

impl TryFrom<SessionRow> for StoredSignIn {
    type Error = Fault;

    fn try_from(r: SessionRow) -> PortResult<StoredSignIn> {
        Ok(StoredSignIn {
            id: id(&r.id, SignInId::parse, "browser_sessions.id")?,
            token_digest: SecretDigest(r.token_digest),
            csrf_digest: SecretDigest(r.csrf_digest),
            user_id: id(&r.user_id, UserId::parse, "browser_sessions.user_id")?,
            company_id: id(
                &r.company_id,
                CompanyId::parse,
                "browser_sessions.company_id",
            )?,
            created_at: instant(r.created_at, "browser_sessions.created_at")?,
            expires_at: instant(r.expires_at, "browser_sessions.expires_at")?,
        })
    }
}

#[derive(Insertable)]
#[diesel(table_name = browser_sessions)]
pub(crate) struct NewSessionRow<'a> {
    id: String,
    token_digest: &'a str,
    csrf_digest: &'a str,
    user_id: String,
    company_id: String,
    created_at: i64,
    expires_at: i64,
}

impl<'a> From<&'a StoredSignIn> for NewSessionRow<'a> {
    fn from(s: &'a StoredSignIn) -> Self {
        NewSessionRow {
            id: s.id.to_string(),
            token_digest: &s.token_digest.0,
            csrf_digest: &s.csrf_digest.0,
            user_id: s.user_id.to_string(),
            company_id: s.company_id.to_string(),
            created_at: s.created_at.unix_millis(),
            expires_at: s.expires_at.unix_millis(),
        }
    }
}
