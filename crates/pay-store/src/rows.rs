//! Row structs, one pair per table (what is read, what is written), and their conversions to
//! and from domain types. A value the domain would refuse (bad id, status or instant) means the
//! row is corrupt: it becomes `Fault::Internal`, never a panic or a silent default.

use diesel::prelude::*;
use pay_domain::kernel::amount::Decimal;
use pay_domain::kernel::ids::{
    CompanyId, FormKeyId, KeyId, LinkUid, PartnerId, PaymentLinkId, SignInId, UserId,
};
use pay_domain::kernel::secret::SecretDigest;
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::links::{CreatedBy, LinkStatus, PaymentLink};
use pay_domain::settings::{FeePayer, PaySettings, ProductStatus};
use pay_domain::tenancy::keys::{Integration, StoredIntegration};
use pay_domain::tenancy::ports::StoredSignIn;
use pay_domain::tenancy::{Company, Membership, Role, Theme, UserRecord};
use pay_domain::{Fault, PortResult};

use crate::conn::MultiBackend;
use crate::schema::{
    browser_sessions, companies, integrations, memberships, pay_settings, payment_links, users,
};

mod anonymous;
mod bookkeeping;
mod checkout;
mod customers;
mod grant_webhooks;
pub(crate) mod installations;
mod mail;
pub(crate) mod oauth;
mod payload;
mod short_text;
mod subscriptions;
mod webhooks;

pub(crate) use anonymous::*;
pub(crate) use bookkeeping::*;
pub(crate) use checkout::*;
pub(crate) use customers::*;
pub(crate) use grant_webhooks::*;
pub(crate) use mail::*;
pub(crate) use short_text::ShortText;
pub(crate) use subscriptions::*;
pub(crate) use webhooks::*;

/// Names the column only: values may be secrets or personal data.
pub(crate) fn corrupt(column: &str) -> Fault {
    Fault::new(format!("corrupt stored value in {column}"))
}

fn instant(ms: i64, column: &str) -> PortResult<Timestamp> {
    Timestamp::from_unix_millis(ms).ok_or_else(|| corrupt(column))
}

pub(crate) fn opt_instant(ms: Option<i64>, column: &str) -> PortResult<Option<Timestamp>> {
    ms.map(|ms| instant(ms, column)).transpose()
}

fn id<T>(text: &str, parse: fn(&str) -> Option<T>, column: &str) -> PortResult<T> {
    parse(text).ok_or_else(|| corrupt(column))
}

fn decimal(text: &str, column: &str) -> PortResult<Decimal> {
    Decimal::parse(text).map_err(|_| corrupt(column))
}

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

// ----- settings -----

#[derive(Queryable, Selectable)]
#[diesel(table_name = pay_settings, check_for_backend(MultiBackend))]
pub(crate) struct SettingsRow {
    status: String,
    default_destination_asset: Option<String>,
    fee_paid_by: String,
    skip_quote_acceptance: bool,
    merchant_surcharge_percent: String,
    return_redirect_url: Option<String>,
    success_redirect_url: Option<String>,
    failure_redirect_url: Option<String>,
    underpayment_percent_enabled: bool,
    underpayment_percent_threshold: String,
    underpayment_fixed_enabled: bool,
    underpayment_fixed_threshold: String,
}

impl TryFrom<SettingsRow> for PaySettings {
    type Error = Fault;

    fn try_from(r: SettingsRow) -> PortResult<PaySettings> {
        Ok(PaySettings {
            status: ProductStatus::parse(&r.status)
                .ok_or_else(|| corrupt("pay_settings.status"))?,
            default_destination_asset: r.default_destination_asset,
            fee_paid_by: FeePayer::parse(&r.fee_paid_by)
                .ok_or_else(|| corrupt("pay_settings.fee_paid_by"))?,
            skip_quote_acceptance: r.skip_quote_acceptance,
            merchant_surcharge_percent: decimal(
                &r.merchant_surcharge_percent,
                "pay_settings.merchant_surcharge_percent",
            )?,
            return_redirect_url: r.return_redirect_url,
            success_redirect_url: r.success_redirect_url,
            failure_redirect_url: r.failure_redirect_url,
            underpayment_percent_enabled: r.underpayment_percent_enabled,
            underpayment_percent_threshold: decimal(
                &r.underpayment_percent_threshold,
                "pay_settings.underpayment_percent_threshold",
            )?,
            underpayment_fixed_enabled: r.underpayment_fixed_enabled,
            underpayment_fixed_threshold: decimal(
                &r.underpayment_fixed_threshold,
                "pay_settings.underpayment_fixed_threshold",
            )?,
        })
    }
}

/// Written whole by both insert and update. `treat_none_as_null`: a cleared URL must become
/// NULL, not "leave the column alone" (diesel's default for `None` in a changeset).
#[derive(Insertable, AsChangeset)]
#[diesel(
    table_name = pay_settings,
    primary_key(company_id),
    treat_none_as_default_value = false,
    treat_none_as_null = true
)]
pub(crate) struct NewSettingsRow<'a> {
    company_id: String,
    status: &'static str,
    default_destination_asset: Option<&'a str>,
    fee_paid_by: &'static str,
    skip_quote_acceptance: bool,
    merchant_surcharge_percent: String,
    return_redirect_url: Option<&'a str>,
    success_redirect_url: Option<&'a str>,
    failure_redirect_url: Option<&'a str>,
    underpayment_percent_enabled: bool,
    underpayment_percent_threshold: String,
    underpayment_fixed_enabled: bool,
    underpayment_fixed_threshold: String,
    updated_at: i64,
}

impl<'a> NewSettingsRow<'a> {
    pub(crate) fn new(company: CompanyId, s: &'a PaySettings, at: Timestamp) -> Self {
        NewSettingsRow {
            company_id: company.to_string(),
            status: s.status.as_str(),
            default_destination_asset: s.default_destination_asset.as_deref(),
            fee_paid_by: s.fee_paid_by.as_str(),
            skip_quote_acceptance: s.skip_quote_acceptance,
            merchant_surcharge_percent: s.merchant_surcharge_percent.to_string(),
            return_redirect_url: s.return_redirect_url.as_deref(),
            success_redirect_url: s.success_redirect_url.as_deref(),
            failure_redirect_url: s.failure_redirect_url.as_deref(),
            underpayment_percent_enabled: s.underpayment_percent_enabled,
            underpayment_percent_threshold: s.underpayment_percent_threshold.to_string(),
            underpayment_fixed_enabled: s.underpayment_fixed_enabled,
            underpayment_fixed_threshold: s.underpayment_fixed_threshold.to_string(),
            updated_at: at.unix_millis(),
        }
    }
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

// ----- payment links -----

const BY_API_KEY: &str = "api_key";
const BY_USER: &str = "user";
const BY_GRANT: &str = "grant";
const BY_ANONYMOUS: &str = "anonymous";

#[derive(Queryable, Selectable)]
#[diesel(table_name = payment_links, check_for_backend(MultiBackend))]
pub(crate) struct LinkRow {
    id: ShortText,
    uid: String,
    company_id: ShortText,
    status: ShortText,
    payload: String,
    created_at: i64,
    updated_at: i64,
    expires_at: Option<i64>,
    created_by_kind: ShortText,
    created_by_id: Option<ShortText>,
    grant_id: Option<ShortText>,
    grant_subscription_id: Option<ShortText>,
}

/// `created_by` from the three columns payment links and subscriptions share.
pub(crate) fn parse_created_by(
    kind: &str,
    by_id: Option<&str>,
    grant_id: Option<&str>,
    table: &str,
) -> PortResult<CreatedBy> {
    let col = |c: &str| corrupt(&format!("{table}.{c}"));
    let by_id = by_id.unwrap_or_default();
    Ok(match kind {
        BY_API_KEY => {
            CreatedBy::ApiKey(PartnerId::parse(by_id).ok_or_else(|| col("created_by_id"))?)
        }
        BY_USER => CreatedBy::User(UserId::parse(by_id).ok_or_else(|| col("created_by_id"))?),
        BY_GRANT => CreatedBy::Grant(
            grant_id
                .and_then(|g| uuid::Uuid::try_parse(g).ok())
                .ok_or_else(|| col("grant_id"))?,
        ),
        BY_ANONYMOUS => CreatedBy::Anonymous,
        _ => return Err(col("created_by_kind")),
    })
}

/// `created_by` as those three columns (kind, id, grant); the grant also goes in its own
/// column so that grant-filtered lists use an index.
pub(crate) fn created_by_columns(by: &CreatedBy) -> (&'static str, Option<String>, Option<String>) {
    match by {
        CreatedBy::ApiKey(p) => (BY_API_KEY, Some(p.to_string()), None),
        CreatedBy::User(u) => (BY_USER, Some(u.to_string()), None),
        CreatedBy::Grant(g) => {
            let g = g.hyphenated().to_string();
            (BY_GRANT, Some(g.clone()), Some(g))
        }
        CreatedBy::Anonymous => (BY_ANONYMOUS, None, None),
    }
}

impl LinkRow {
    fn created_by(&self) -> PortResult<CreatedBy> {
        parse_created_by(
            &self.created_by_kind,
            self.created_by_id.as_deref(),
            self.grant_id.as_deref(),
            "payment_links",
        )
    }
}

impl TryFrom<LinkRow> for PaymentLink {
    type Error = Fault;

    fn try_from(r: LinkRow) -> PortResult<PaymentLink> {
        Ok(PaymentLink {
            created_by: r.created_by()?,
            id: id(&r.id, PaymentLinkId::parse, "payment_links.id")?,
            uid: LinkUid::from_string(r.uid).ok_or_else(|| corrupt("payment_links.uid"))?,
            company_id: id(&r.company_id, CompanyId::parse, "payment_links.company_id")?,
            status: LinkStatus::parse(&r.status).ok_or_else(|| corrupt("payment_links.status"))?,
            payload: serde_json::from_str::<payload::StoredPayload>(&r.payload)
                .map_err(|_| corrupt("payment_links.payload"))?
                .into(),
            created_at: instant(r.created_at, "payment_links.created_at")?,
            updated_at: instant(r.updated_at, "payment_links.updated_at")?,
            expires_at: opt_instant(r.expires_at, "payment_links.expires_at")?,
            grant_subscription_id: r
                .grant_subscription_id
                .map(|s| {
                    uuid::Uuid::try_parse(s.as_str())
                        .map_err(|_| corrupt("payment_links.grant_subscription_id"))
                })
                .transpose()?,
        })
    }
}

#[derive(Insertable)]
#[diesel(table_name = payment_links, treat_none_as_default_value = false)]
pub(crate) struct NewLinkRow<'a> {
    id: String,
    uid: &'a str,
    company_id: String,
    status: &'static str,
    payload: String,
    created_at: i64,
    updated_at: i64,
    expires_at: Option<i64>,
    created_by_kind: &'static str,
    created_by_id: Option<String>,
    grant_id: Option<String>,
    anonymous: bool,
    grant_subscription_id: Option<String>,
}

impl<'a> TryFrom<&'a PaymentLink> for NewLinkRow<'a> {
    type Error = Fault;

    fn try_from(l: &'a PaymentLink) -> PortResult<Self> {
        let (kind, by_id, grant_id) = created_by_columns(&l.created_by);
        Ok(NewLinkRow {
            id: l.id.to_string(),
            uid: l.uid.as_str(),
            company_id: l.company_id.to_string(),
            status: l.status.as_str(),
            payload: serde_json::to_string(&payload::StoredPayload::from(&l.payload))
                .map_err(|e| Fault::caused("encoding link payload", e))?,
            created_at: l.created_at.unix_millis(),
            updated_at: l.updated_at.unix_millis(),
            expires_at: l.expires_at.map(Timestamp::unix_millis),
            created_by_kind: kind,
            created_by_id: by_id,
            grant_id,
            anonymous: l.is_anonymous(),
            grant_subscription_id: l.grant_subscription_id.map(|s| s.hyphenated().to_string()),
        })
    }
}
