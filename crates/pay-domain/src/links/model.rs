//! Payment links: the payload rules, the status machine and the link record.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use time::Duration;

use crate::kernel::amount::{Amount, DecimalError};
use crate::kernel::assets::AssetRefusal;
use crate::kernel::assets::{fiat_decimals, AssetCatalogue};
use crate::kernel::error::FieldError;
use crate::kernel::ids::{CompanyId, LinkUid, PartnerId, PaymentLinkId, UserId};
use crate::kernel::timestamp::Timestamp;
use crate::kernel::validate;
use crate::links::{InvalidTransition, LinkError};
use crate::settings::{FeePayer, PaySettings};
/// The reserved company anonymous links belong to (declared by tenancy, whose clock and pages
/// treat it apart).
pub use crate::tenancy::ANONYMOUS_COMPANY;
use crate::tenancy::{Company, Credential, Principal, Theme};

pub const RUNTIME_MODE: &str = "merchant_target_net_v2";
pub const BILLING_VERSION: &str = "v2";
/// The spec's list limit: up to 200 newest links.
pub const LIST_LIMIT: usize = 200;

/// Merchant-managed link state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LinkStatus {
    Active,
    Paused,
    Archived,
}

impl LinkStatus {
    pub const ALL: [LinkStatus; 3] = [LinkStatus::Active, LinkStatus::Paused, LinkStatus::Archived];

    pub fn as_str(self) -> &'static str {
        match self {
            LinkStatus::Active => "active",
            LinkStatus::Paused => "paused",
            LinkStatus::Archived => "archived",
        }
    }

    pub fn parse(s: &str) -> Option<LinkStatus> {
        LinkStatus::ALL.into_iter().find(|x| x.as_str() == s)
    }
}

impl fmt::Display for LinkStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a requested status change amounts to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkTransition {
    /// The link moves; write it.
    Move { from: LinkStatus, to: LinkStatus },
    /// Already there: a 200 no-op.
    Same,
}

/// The one transition function: active<->paused, active|paused->archived, the same status is a
/// no-op, and nothing leaves archived.
pub fn transition(from: LinkStatus, to: LinkStatus) -> Result<LinkTransition, InvalidTransition> {
    use LinkStatus::*;
    match (from, to) {
        (a, b) if a == b => Ok(LinkTransition::Same),
        (Active, Paused) | (Paused, Active) | (Active, Archived) | (Paused, Archived) => {
            Ok(LinkTransition::Move { from, to })
        }
        (Archived, _) => Err(InvalidTransition { from, to }),
        // Every other pair is covered above; kept explicit so a new status must be decided.
        (Active, Active) | (Paused, Paused) => Ok(LinkTransition::Same),
    }
}

/// Requested lifetime of a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ExpirationTime {
    #[serde(rename = "15m")]
    M15,
    #[serde(rename = "1h")]
    H1,
    #[serde(rename = "12h")]
    H12,
    #[serde(rename = "24h")]
    H24,
    #[serde(rename = "72h")]
    H72,
    #[serde(rename = "never")]
    Never,
}

impl ExpirationTime {
    pub const ALL: [ExpirationTime; 6] = [
        ExpirationTime::M15,
        ExpirationTime::H1,
        ExpirationTime::H12,
        ExpirationTime::H24,
        ExpirationTime::H72,
        ExpirationTime::Never,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ExpirationTime::M15 => "15m",
            ExpirationTime::H1 => "1h",
            ExpirationTime::H12 => "12h",
            ExpirationTime::H24 => "24h",
            ExpirationTime::H72 => "72h",
            ExpirationTime::Never => "never",
        }
    }

    pub fn parse(s: &str) -> Option<ExpirationTime> {
        ExpirationTime::ALL.into_iter().find(|x| x.as_str() == s)
    }

    pub fn lifetime(self) -> Option<Duration> {
        match self {
            ExpirationTime::M15 => Some(Duration::minutes(15)),
            ExpirationTime::H1 => Some(Duration::hours(1)),
            ExpirationTime::H12 => Some(Duration::hours(12)),
            ExpirationTime::H24 => Some(Duration::hours(24)),
            ExpirationTime::H72 => Some(Duration::hours(72)),
            ExpirationTime::Never => None,
        }
    }

    /// `expires_at` for a link created at `now`.
    pub fn expires_at(self, now: Timestamp) -> Option<Timestamp> {
        self.lifetime().map(|d| now.plus(d))
    }
}

/// The link definition (`payload`). How it is stored (`pay-store`'s `StoredPayload`) and how
/// the API shows it (`pay-http`'s `PaymentLinkPayloadDto`) are types of their own, converted
/// from and to this one, so the storage, the API and the model can evolve apart.
#[derive(Debug, Clone, PartialEq)]
pub struct PaymentLinkPayload {
    pub title: Option<String>,
    pub description: Option<String>,
    pub amount: Amount,
    pub fiat_currency: Option<String>,
    pub currency: String,
    pub asset: String,
    pub skip_quote_acceptance: Option<bool>,
    pub fee_paid_by: Option<FeePayer>,
    pub order_id: Option<String>,
    pub invoice_pdf_url: Option<String>,
    pub customer_email: Option<String>,
    pub client_id: Option<String>,
    pub return_url: Option<String>,
    pub success_url: Option<String>,
    pub failure_url: Option<String>,
    pub expiration_time: ExpirationTime,
    pub metadata: Option<Map<String, Value>>,
    pub runtime_mode: String,
    pub billing_version: String,
    pub merchant_name: Option<String>,
    pub merchant_picture_url: Option<String>,
    pub merchant_logo_url: Option<String>,
    pub merchant_payment_link_theme: Option<Theme>,
    /// Anonymous links: the address the payment settles to (from `settlement.priorities`).
    pub settlement_address: Option<String>,
}

/// Separates the fields of a link's search text (`PaymentLinkPayload::search_text`); no folded
/// query holds it (`search_query` drops controls).
const SEARCH_SEPARATOR: char = '\u{1f}';

impl PaymentLinkPayload {
    /// What a link list's search looks in: the order id, title and customer e-mail, in lower
    /// case, apart by a control character so that no query matches across two fields.
    pub fn search_text(&self) -> String {
        [&self.order_id, &self.title, &self.customer_email]
            .into_iter()
            .map(|f| f.as_deref().unwrap_or("").to_lowercase())
            .collect::<Vec<_>>()
            .join(&SEARCH_SEPARATOR.to_string())
    }
}

/// A typed search as a list compares it with `search_text`: controls dropped, trimmed, in
/// lower case; `None` when nothing is left.
pub fn search_query(typed: &str) -> Option<String> {
    let q: String = typed.chars().filter(|c| !c.is_control()).collect();
    let q = q.trim().to_lowercase();
    (!q.is_empty()).then_some(q)
}

/// Which credential created a link (OAuth work filters lists and events by grant).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CreatedBy {
    ApiKey(PartnerId),
    User(UserId),
    Grant(uuid::Uuid),
    Anonymous,
}

impl CreatedBy {
    pub fn from_principal(p: &Principal) -> CreatedBy {
        match &p.credential {
            Credential::ApiKey { partner_id } => CreatedBy::ApiKey(*partner_id),
            Credential::SignIn { user_id, .. } => CreatedBy::User(*user_id),
            Credential::OAuthGrant { grant_id, .. } => CreatedBy::Grant(*grant_id),
        }
    }
}

/// A payment link as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct PaymentLink {
    pub id: PaymentLinkId,
    pub uid: LinkUid,
    pub company_id: CompanyId,
    pub status: LinkStatus,
    pub payload: PaymentLinkPayload,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    pub expires_at: Option<Timestamp>,
    pub created_by: CreatedBy,
    /// For a link a grant created: the grant's webhook subscription that was active then
    /// (`None` when it had none, or it was disabled).
    pub grant_subscription_id: Option<uuid::Uuid>,
}

/// The hosted checkout page of the link `uid` under `base`.
pub fn checkout_url(base: &str, uid: &LinkUid) -> String {
    format!("{}/pay/{uid}", base.trim_end_matches('/'))
}

impl PaymentLink {
    /// Hosted checkout URL under `base` (the public payment site, or the company's
    /// verified payment-link domain: `TenancyService::pay_base`).
    pub fn public_url(&self, base: &str) -> String {
        checkout_url(base, &self.uid)
    }

    pub fn grant_id(&self) -> Option<uuid::Uuid> {
        match self.created_by {
            CreatedBy::Grant(g) => Some(g),
            _ => None,
        }
    }

    pub fn is_anonymous(&self) -> bool {
        self.created_by == CreatedBy::Anonymous
    }

    /// Past its `expires_at` at `now` (its company's clock: `LinkService::link_now`). Expiry
    /// is not a status (the contract); reads say it beside `status`.
    pub fn is_expired_at(&self, now: Timestamp) -> bool {
        self.expires_at.is_some_and(|e| e <= now)
    }
}

/// The caller-settable fields of a new link, already typed by the edge (JSON types checked),
/// not yet checked against the rules.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CreateLinkInput {
    pub title: Option<String>,
    pub description: Option<String>,
    pub amount: String,
    pub fiat_currency: Option<String>,
    pub currency: Option<String>,
    pub asset: Option<String>,
    pub skip_quote_acceptance: Option<bool>,
    pub fee_paid_by: Option<String>,
    pub order_id: Option<String>,
    pub invoice_pdf_url: Option<String>,
    pub customer_email: Option<String>,
    pub client_id: Option<String>,
    pub return_url: Option<String>,
    pub success_url: Option<String>,
    pub failure_url: Option<String>,
    pub expiration_time: Option<String>,
    pub metadata: Option<Map<String, Value>>,
}

/// Field names the create route takes (anything else is `unknown_field`).
pub const CREATE_LINK_FIELDS: &[&str] = &[
    "title",
    "description",
    "amount",
    "fiatCurrency",
    "currency",
    "asset",
    "skipQuoteAcceptance",
    "feePaidBy",
    "orderId",
    "invoicePdfUrl",
    "customerEmail",
    "clientId",
    "returnUrl",
    "successUrl",
    "failureUrl",
    "expirationTime",
    "metadata",
];

impl CreateLinkInput {
    /// Applies every rule and builds the stored payload: resolves the asset, checks the amount
    /// against its precision, injects runtime mode, billing version and the merchant branding.
    pub fn into_payload(
        self,
        catalogue: &AssetCatalogue,
        settings: &PaySettings,
        company: &Company,
    ) -> Result<PaymentLinkPayload, LinkError> {
        let opt_text = |field: &str, v: &Option<String>, max: usize| -> Result<(), FieldError> {
            match v {
                Some(s) => validate::text(field, s, max, false),
                None => Ok(()),
            }
        };
        opt_text("title", &self.title, 200)?;
        opt_text("description", &self.description, 2000)?;
        opt_text("orderId", &self.order_id, 200)?;
        opt_text("clientId", &self.client_id, 200)?;
        if let Some(e) = &self.customer_email {
            validate::email("customerEmail", e)?;
        }
        for (field, v) in [
            ("invoicePdfUrl", &self.invoice_pdf_url),
            ("returnUrl", &self.return_url),
            ("successUrl", &self.success_url),
            ("failureUrl", &self.failure_url),
        ] {
            if let Some(u) = v {
                validate::http_url(field, u)?;
            }
        }
        if let Some(m) = &self.metadata {
            validate::metadata("metadata", m)?;
            crate::settings::with_link_overrides(settings, Some(m), catalogue)?;
        }
        let expiration_time = match &self.expiration_time {
            None => ExpirationTime::H24,
            Some(s) => ExpirationTime::parse(s).ok_or_else(|| {
                FieldError::new(
                    "expirationTime",
                    "expirationTime must be one of 15m, 1h, 12h, 24h, 72h, never",
                )
            })?,
        };
        let fee_paid_by = match &self.fee_paid_by {
            None => None,
            Some(s) => Some(FeePayer::parse(s).ok_or_else(|| {
                FieldError::new("feePaidBy", "feePaidBy must be client or merchant")
            })?),
        };
        let fiat_scale = match &self.fiat_currency {
            None => None,
            Some(code) => Some(fiat_decimals(code).ok_or_else(|| {
                FieldError::new(
                    "fiatCurrency",
                    "fiatCurrency must be a supported ISO 4217 code such as USD",
                )
            })?),
        };
        if let Some(c) = &self.currency {
            validate::text("currency", c, 20, false)?;
        }
        let asset = catalogue.resolve(
            self.asset.as_deref(),
            self.currency.as_deref(),
            settings.default_destination_asset.as_deref(),
        )?;
        // The amount is in the display currency when one is given, else in the asset.
        let scale = fiat_scale.unwrap_or(asset.decimals);
        let amount = Amount::parse(&self.amount, scale).map_err(|e| {
            let why = match e {
                DecimalError::TooPrecise(n) => {
                    format!("amount must have at most {n} decimal places")
                }
                DecimalError::TooLarge => "amount is too large".to_owned(),
                DecimalError::LeadingZero => {
                    "amount must not start with a zero (\"7\", not \"007\"; \"0.5\" is fine)"
                        .to_owned()
                }
                DecimalError::Format | DecimalError::NegativeZero => {
                    "amount must be a positive decimal string such as \"12.50\"".to_owned()
                }
            };
            FieldError::new("amount", why)
        })?;
        Ok(PaymentLinkPayload {
            title: self.title,
            description: self.description,
            amount,
            fiat_currency: self.fiat_currency,
            currency: asset.symbol.clone(),
            asset: asset.asset_identifier.clone(),
            skip_quote_acceptance: self.skip_quote_acceptance,
            fee_paid_by,
            order_id: self.order_id,
            invoice_pdf_url: self.invoice_pdf_url,
            customer_email: self.customer_email,
            client_id: self.client_id,
            return_url: self.return_url,
            success_url: self.success_url,
            failure_url: self.failure_url,
            expiration_time,
            metadata: self.metadata,
            runtime_mode: RUNTIME_MODE.to_owned(),
            billing_version: BILLING_VERSION.to_owned(),
            merchant_name: Some(company.name.clone()),
            merchant_picture_url: company.picture_url.clone(),
            merchant_logo_url: company.logo_url.clone(),
            merchant_payment_link_theme: Some(company.theme),
            settlement_address: None,
        })
    }
}

/// Most settlement priorities an anonymous link may list.
pub const MAX_SETTLEMENT_PRIORITIES: usize = 10;

/// One entry of `settlement.priorities`: an asset and the address to settle it to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettlementPriority {
    pub asset: String,
    pub address: String,
}

/// `branding` of an anonymous link (it has no merchant profile to take it from).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Branding {
    pub name: Option<String>,
    pub logo_url: Option<String>,
    pub theme: Option<String>,
}

/// The body of an anonymous link: the link fields, where to settle, how to brand the page,
/// and where to report.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CreateAnonymousLinkInput {
    pub link: CreateLinkInput,
    pub priorities: Vec<SettlementPriority>,
    pub branding: Branding,
    pub webhook_url: Option<String>,
}

/// Field names of the anonymous-link body.
pub const ANONYMOUS_LINK_EXTRA_FIELDS: &[&str] = &["settlement", "branding", "webhookUrl"];

impl CreateAnonymousLinkInput {
    /// The payload: the first settlement priority the catalogue can settle picks the asset and
    /// the address; branding replaces the merchant profile. `asset` and `currency` are not
    /// taken here (the priorities decide), so a caller cannot contradict them.
    pub fn into_payload(self, catalogue: &AssetCatalogue) -> Result<PaymentLinkPayload, LinkError> {
        if self.link.asset.is_some() {
            return Err(FieldError::new(
                "asset",
                "anonymous links settle by settlement.priorities; omit asset",
            )
            .into());
        }
        if self.link.currency.is_some() {
            return Err(FieldError::new(
                "currency",
                "anonymous links settle by settlement.priorities; omit currency",
            )
            .into());
        }
        if self.priorities.is_empty() || self.priorities.len() > MAX_SETTLEMENT_PRIORITIES {
            return Err(FieldError::new(
                "settlement.priorities",
                format!("settlement.priorities must list 1 to {MAX_SETTLEMENT_PRIORITIES} entries"),
            )
            .into());
        }
        for (i, p) in self.priorities.iter().enumerate() {
            let field = format!("settlement.priorities[{i}].address");
            validate::text(&field, &p.address, 128, false)?;
            if p.address.chars().any(char::is_whitespace) {
                return Err(FieldError::new(field, "an address has no spaces").into());
            }
        }
        let chosen = self
            .priorities
            .iter()
            .find(|p| catalogue.get(&p.asset).is_some())
            .ok_or_else(|| AssetRefusal::InvalidDestinationAsset {
                field: "settlement.priorities".into(),
                message: "no settlement priority names an asset this service can settle".into(),
            })?
            .clone();
        let b = &self.branding;
        if let Some(n) = &b.name {
            validate::text("branding.name", n, 100, false)?;
        }
        if let Some(u) = &b.logo_url {
            validate::http_url("branding.logoUrl", u)?;
        }
        let theme = match &b.theme {
            None => Theme::System,
            Some(t) => Theme::parse(t).ok_or_else(|| {
                FieldError::new(
                    "branding.theme",
                    "branding.theme must be light, dark or system",
                )
            })?,
        };
        let settings = PaySettings {
            default_destination_asset: Some(chosen.asset.clone()),
            ..PaySettings::new_company_default(catalogue)
        };
        let company = Company {
            id: ANONYMOUS_COMPANY,
            name: b.name.clone().unwrap_or_default(),
            picture_url: None,
            logo_url: b.logo_url.clone(),
            theme,
            created_at: Timestamp::from_datetime(time::OffsetDateTime::UNIX_EPOCH),
            test_clock_offset_ms: 0,
            payment_link_domain: None,
            website: None,
        };
        let mut payload = self.link.into_payload(catalogue, &settings, &company)?;
        if b.name.is_none() {
            payload.merchant_name = None;
        }
        payload.settlement_address = Some(chosen.address);
        Ok(payload)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::ids::CompanyId;

    #[test]
    fn transition_table_is_exhaustive() {
        use LinkStatus::*;
        let allowed = [
            (Active, Paused),
            (Paused, Active),
            (Active, Archived),
            (Paused, Archived),
        ];
        for from in LinkStatus::ALL {
            for to in LinkStatus::ALL {
                let got = transition(from, to);
                if from == to {
                    assert_eq!(got, Ok(LinkTransition::Same), "{from}->{to}");
                } else if allowed.contains(&(from, to)) {
                    assert_eq!(got, Ok(LinkTransition::Move { from, to }), "{from}->{to}");
                } else {
                    assert_eq!(got, Err(InvalidTransition { from, to }), "{from}->{to}");
                }
            }
        }
    }

    #[test]
    fn expiration_times() {
        let now = Timestamp::from_unix_millis(0).unwrap();
        assert_eq!(
            ExpirationTime::M15.expires_at(now).unwrap().unix_millis(),
            900_000
        );
        assert_eq!(
            ExpirationTime::H72.expires_at(now).unwrap().unix_seconds(),
            72 * 3600
        );
        assert_eq!(ExpirationTime::Never.expires_at(now), None);
        for e in ExpirationTime::ALL {
            assert_eq!(ExpirationTime::parse(e.as_str()), Some(e));
        }
        assert_eq!(ExpirationTime::parse("2h"), None);
    }

    fn company() -> Company {
        Company {
            id: CompanyId(uuid::Uuid::nil()),
            name: "Acme".into(),
            picture_url: None,
            logo_url: Some("https://acme.example/logo.png".into()),
            theme: Theme::Dark,
            created_at: Timestamp::from_unix_millis(0).unwrap(),
            test_clock_offset_ms: 0,
            payment_link_domain: None,
            website: None,
        }
    }

    fn settings() -> PaySettings {
        PaySettings::new_company_default(&AssetCatalogue::builtin())
    }

    fn input(amount: &str) -> CreateLinkInput {
        CreateLinkInput {
            amount: amount.into(),
            ..Default::default()
        }
    }

    fn build(i: CreateLinkInput) -> Result<PaymentLinkPayload, LinkError> {
        i.into_payload(&AssetCatalogue::builtin(), &settings(), &company())
    }

    fn field_of(r: Result<PaymentLinkPayload, LinkError>) -> String {
        match r {
            Err(LinkError::Invalid(FieldError { field, .. })) => field,
            other => panic!("expected a validation error, got {other:?}"),
        }
    }

    #[test]
    fn payload_injects_server_fields_and_resolves_the_default_asset() {
        let p = build(input("12.50")).unwrap();
        assert_eq!(p.amount.as_str(), "12.50");
        assert_eq!(p.runtime_mode, "merchant_target_net_v2");
        assert_eq!(p.billing_version, "v2");
        assert_eq!(p.merchant_name.as_deref(), Some("Acme"));
        assert_eq!(
            p.merchant_logo_url.as_deref(),
            Some("https://acme.example/logo.png")
        );
        assert_eq!(p.merchant_payment_link_theme, Some(Theme::Dark));
        assert_eq!(p.currency, "USDC");
        assert_eq!(p.expiration_time, ExpirationTime::H24);
        // Left unset: the stored and API JSON leave them out (tested with those types).
        assert_eq!(p.merchant_picture_url, None);
        assert_eq!(p.skip_quote_acceptance, None);
    }

    #[test]
    fn amount_precision_follows_asset_or_fiat() {
        assert!(build(input("1.123456")).is_ok());
        assert_eq!(field_of(build(input("1.1234567"))), "amount");
        let eth = CreateLinkInput {
            currency: Some("ETH".into()),
            ..input("0.000000000000000001")
        };
        assert!(build(eth).is_ok());
        let usd = CreateLinkInput {
            fiat_currency: Some("USD".into()),
            ..input("10.001")
        };
        assert_eq!(field_of(build(usd)), "amount");
        for bad in ["0", "-1", "1e2", "", "abc", " 1", "-0"] {
            assert_eq!(field_of(build(input(bad))), "amount", "{bad:?}");
        }
        // No leading zeros: "0.5" is the one way to write half.
        assert_eq!(build(input("0.5")).unwrap().amount.as_str(), "0.5");
        for bad in ["007", "00.5", "01"] {
            match build(input(bad)) {
                Err(LinkError::Invalid(FieldError { field, message })) => {
                    assert_eq!(field, "amount");
                    assert!(message.contains("must not start with a zero"), "{message}");
                }
                other => panic!("{bad:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn each_field_rule_names_its_field() {
        let cases: Vec<(CreateLinkInput, &str)> = vec![
            (
                CreateLinkInput {
                    title: Some("t".repeat(201)),
                    ..input("1")
                },
                "title",
            ),
            (
                CreateLinkInput {
                    description: Some("d".repeat(2001)),
                    ..input("1")
                },
                "description",
            ),
            (
                CreateLinkInput {
                    order_id: Some("o".repeat(201)),
                    ..input("1")
                },
                "orderId",
            ),
            (
                CreateLinkInput {
                    client_id: Some(String::new()),
                    ..input("1")
                },
                "clientId",
            ),
            (
                CreateLinkInput {
                    customer_email: Some("nope".into()),
                    ..input("1")
                },
                "customerEmail",
            ),
            (
                CreateLinkInput {
                    invoice_pdf_url: Some("ftp://x".into()),
                    ..input("1")
                },
                "invoicePdfUrl",
            ),
            (
                CreateLinkInput {
                    return_url: Some("/relative".into()),
                    ..input("1")
                },
                "returnUrl",
            ),
            (
                CreateLinkInput {
                    success_url: Some("https://u:p@x.example".into()),
                    ..input("1")
                },
                "successUrl",
            ),
            (
                CreateLinkInput {
                    failure_url: Some("x".into()),
                    ..input("1")
                },
                "failureUrl",
            ),
            (
                CreateLinkInput {
                    expiration_time: Some("2h".into()),
                    ..input("1")
                },
                "expirationTime",
            ),
            (
                CreateLinkInput {
                    fee_paid_by: Some("nobody".into()),
                    ..input("1")
                },
                "feePaidBy",
            ),
            (
                CreateLinkInput {
                    fiat_currency: Some("XXX".into()),
                    ..input("1")
                },
                "fiatCurrency",
            ),
        ];
        for (i, field) in cases {
            assert_eq!(field_of(build(i)), field);
        }
        let mut m = Map::new();
        m.insert("k".into(), Value::from("x".repeat(9000)));
        assert_eq!(
            field_of(build(CreateLinkInput {
                metadata: Some(m),
                ..input("1")
            })),
            "metadata"
        );
        let t200 = CreateLinkInput {
            title: Some("t".repeat(200)),
            ..input("1")
        };
        assert!(build(t200).is_ok());
    }

    #[test]
    fn overrides_are_kept() {
        let p = build(CreateLinkInput {
            fee_paid_by: Some("merchant".into()),
            skip_quote_acceptance: Some(false),
            expiration_time: Some("never".into()),
            ..input("5")
        })
        .unwrap();
        assert_eq!(p.fee_paid_by, Some(FeePayer::Merchant));
        assert_eq!(p.skip_quote_acceptance, Some(false));
        assert_eq!(p.expiration_time, ExpirationTime::Never);
    }

    #[test]
    fn public_url_is_on_the_public_site() {
        let now = Timestamp::from_unix_millis(0).unwrap();
        let link = PaymentLink {
            id: PaymentLinkId(uuid::Uuid::nil()),
            uid: LinkUid::parse("AbCdEfGhIjKlMnOpQrStUv").unwrap(),
            company_id: CompanyId(uuid::Uuid::nil()),
            status: LinkStatus::Active,
            payload: build(input("1")).unwrap(),
            created_at: now,
            updated_at: now,
            expires_at: None,
            created_by: CreatedBy::Anonymous,
            grant_subscription_id: None,
        };
        assert_eq!(
            link.public_url("https://pay.example/"),
            "https://pay.example/pay/AbCdEfGhIjKlMnOpQrStUv"
        );
        assert!(link.is_anonymous());
    }
}
