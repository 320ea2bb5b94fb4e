//! JSON request bodies. Each struct is both the reader (`json::JsonBody::read`: unknown fields
//! refused, JSON types checked, the field at fault named by its path) and the OpenAPI schema of
//! its body, so the document and the parser cannot disagree. Each converts into its domain
//! input, where the range and format rules live.

use pay_domain::links::{Branding, CreateAnonymousLinkInput, CreateLinkInput, SettlementPriority};
use pay_domain::settings::SettingsPatch;
use pay_domain::tenancy::keys::NewIntegrationInput;
use pay_domain::DomainError;
use serde::Deserialize;
use serde_json::{Map, Number, Value};
use utoipa::ToSchema;

use super::schema;
use crate::error::ApiError;
use crate::exact_json::ExactNumbers;
use crate::json::{non_null, nullable};

/// The fields of a new payment link, shared by the partner create and the anonymous create
/// (serde cannot refuse unknown fields of a flattened struct, so each body lists them).
macro_rules! link_request {
    ($(#[$meta:meta])* $name:ident { $($extra:tt)* }) => {
        $(#[$meta])*
        #[derive(Debug, Deserialize, ToSchema)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        pub struct $name {
            #[serde(default)]
            #[schema(schema_with = schema::title)]
            pub title: Option<String>,
            #[serde(default)]
            #[schema(schema_with = schema::description)]
            pub description: Option<String>,
            #[schema(schema_with = schema::amount)]
            pub amount: String,
            #[serde(default)]
            #[schema(schema_with = schema::fiat_currency)]
            pub fiat_currency: Option<String>,
            #[serde(default)]
            pub skip_quote_acceptance: Option<bool>,
            #[serde(default)]
            #[schema(schema_with = schema::fee_paid_by)]
            pub fee_paid_by: Option<String>,
            #[serde(default)]
            #[schema(schema_with = schema::order_id)]
            pub order_id: Option<String>,
            #[serde(default)]
            #[schema(schema_with = schema::link_url)]
            pub invoice_pdf_url: Option<String>,
            #[serde(default)]
            #[schema(schema_with = schema::customer_email)]
            pub customer_email: Option<String>,
            #[serde(default)]
            #[schema(schema_with = schema::client_id)]
            pub client_id: Option<String>,
            #[serde(default)]
            #[schema(schema_with = schema::link_url)]
            pub return_url: Option<String>,
            #[serde(default)]
            #[schema(schema_with = schema::link_url)]
            pub success_url: Option<String>,
            #[serde(default)]
            #[schema(schema_with = schema::link_url)]
            pub failure_url: Option<String>,
            #[serde(default)]
            #[schema(schema_with = schema::expiration_time)]
            pub expiration_time: Option<String>,
            #[serde(default)]
            #[schema(schema_with = schema::metadata)]
            pub metadata: Option<Map<String, Value>>,
            $($extra)*
        }
    };
}

link_request!(
    /// Body of `POST /api/partner/v1/pay/payment-links`. Only `amount` is required.
    CreatePaymentLinkRequest {
        #[serde(default)]
        #[schema(schema_with = schema::currency)]
        pub currency: Option<String>,
        /// Exact destination asset identifier, one of the company's enabled assets
        /// (`GET /api/partner/v1/pay/destination-assets`). With `currency`, it must be its symbol.
        #[serde(default)]
        #[schema(example = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913")]
        pub asset: Option<String>,
    }
);

/// The link fields as the domain takes them (`asset` and `currency` given apart).
macro_rules! link_input {
    ($r:expr, $asset:expr, $currency:expr) => {
        CreateLinkInput {
            title: $r.title,
            description: $r.description,
            amount: $r.amount,
            fiat_currency: $r.fiat_currency,
            currency: $currency,
            asset: $asset,
            skip_quote_acceptance: $r.skip_quote_acceptance,
            fee_paid_by: $r.fee_paid_by,
            order_id: $r.order_id,
            invoice_pdf_url: $r.invoice_pdf_url,
            customer_email: $r.customer_email,
            client_id: $r.client_id,
            return_url: $r.return_url,
            success_url: $r.success_url,
            failure_url: $r.failure_url,
            expiration_time: $r.expiration_time,
            metadata: $r.metadata,
        }
    };
}

impl From<CreatePaymentLinkRequest> for CreateLinkInput {
    fn from(r: CreatePaymentLinkRequest) -> Self {
        link_input!(r, r.asset, r.currency)
    }
}

/// One settlement priority: an asset identifier and the address to settle it to.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SettlementPriorityRequest {
    #[schema(example = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913")]
    pub asset: String,
    #[schema(schema_with = schema::settlement_address)]
    pub address: String,
}

/// `settlement` of an anonymous link.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SettlementRequest {
    /// 1 to 10; the first one the service can settle wins.
    #[schema(min_items = 1, max_items = 10)]
    pub priorities: Vec<SettlementPriorityRequest>,
}

/// `branding` of an anonymous link.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BrandingRequest {
    #[serde(default)]
    #[schema(schema_with = schema::branding_name)]
    pub name: Option<String>,
    #[serde(default)]
    #[schema(schema_with = schema::logo_url)]
    pub logo_url: Option<String>,
    #[serde(default)]
    #[schema(schema_with = schema::theme)]
    pub theme: Option<String>,
}

link_request!(
    /// Body of an anonymous link: the link fields (without `asset` and `currency`, which the
    /// priorities decide) plus `settlement`, `branding` and `webhookUrl`.
    CreateAnonymousLinkRequest {
        /// Where to settle (required).
        #[serde(default, deserialize_with = "non_null")]
        #[schema(required = true, nullable = false)]
        pub settlement: Option<SettlementRequest>,
        #[serde(default)]
        pub branding: Option<BrandingRequest>,
        #[serde(default)]
        #[schema(schema_with = schema::webhook_url)]
        pub webhook_url: Option<String>,
        /// Not taken: the priorities decide (read only to refuse it by name).
        #[serde(default)]
        #[schema(ignore)]
        pub currency: Option<String>,
        /// Not taken: the priorities decide (read only to refuse it by name).
        #[serde(default)]
        #[schema(ignore)]
        pub asset: Option<String>,
    }
);

impl TryFrom<CreateAnonymousLinkRequest> for CreateAnonymousLinkInput {
    type Error = DomainError;

    fn try_from(r: CreateAnonymousLinkRequest) -> Result<Self, DomainError> {
        let settlement = r.settlement.ok_or_else(|| {
            DomainError::validation("settlement.priorities", "settlement.priorities is required")
        })?;
        let branding = r.branding.unwrap_or_default();
        Ok(CreateAnonymousLinkInput {
            priorities: settlement
                .priorities
                .into_iter()
                .map(|p| SettlementPriority {
                    asset: p.asset,
                    address: p.address,
                })
                .collect(),
            branding: Branding {
                name: branding.name,
                logo_url: branding.logo_url,
                theme: branding.theme,
            },
            webhook_url: r.webhook_url,
            link: link_input!(r, r.asset, r.currency),
        })
    }
}

/// Body of `PATCH /api/partner/v1/pay/payment-links/{uid}`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateLinkStatusRequest {
    /// `active`, `paused` or `archived`.
    #[schema(schema_with = schema::link_status)]
    pub status: String,
}

/// Body of `PUT /api/partner/v1/pay/settings`: any subset of the fields; `null` clears a
/// nullable field.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateSettingsRequest {
    #[serde(default, deserialize_with = "non_null")]
    #[schema(schema_with = schema::product_status)]
    pub status: Option<String>,
    /// One of the enabled assets (`GET /api/partner/v1/pay/destination-assets`); `null` clears it.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub default_destination_asset: Option<Option<String>>,
    #[serde(default, deserialize_with = "non_null")]
    #[schema(schema_with = schema::fee_paid_by_setting)]
    pub fee_paid_by: Option<String>,
    #[serde(default, deserialize_with = "non_null")]
    #[schema(nullable = false)]
    pub skip_quote_acceptance: Option<bool>,
    /// -1 to 1.
    #[serde(default, deserialize_with = "non_null")]
    #[schema(value_type = Option<f64>, nullable = false, minimum = -1, maximum = 1)]
    pub merchant_surcharge_percent: Option<Number>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(schema_with = schema::settings_url)]
    pub return_redirect_url: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(schema_with = schema::settings_url)]
    pub success_redirect_url: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(schema_with = schema::settings_url)]
    pub failure_redirect_url: Option<Option<String>>,
    #[serde(default, deserialize_with = "non_null")]
    #[schema(nullable = false)]
    pub underpayment_percent_enabled: Option<bool>,
    /// 0 to 100.
    #[serde(default, deserialize_with = "non_null")]
    #[schema(value_type = Option<f64>, nullable = false, minimum = 0, maximum = 100)]
    pub underpayment_percent_threshold: Option<Number>,
    #[serde(default, deserialize_with = "non_null")]
    #[schema(nullable = false)]
    pub underpayment_fixed_enabled: Option<bool>,
    /// At least 0, below 10^18.
    #[serde(default, deserialize_with = "non_null")]
    #[schema(
        value_type = Option<f64>,
        nullable = false,
        minimum = 0,
        exclusive_maximum = 1e18
    )]
    pub underpayment_fixed_threshold: Option<Number>,
}

impl UpdateSettingsRequest {
    /// The domain's patch; the decimal fields are taken as the exact text the client sent
    /// (`exact`), never through the float that `Number` holds.
    pub fn into_patch(self, exact: &ExactNumbers) -> Result<SettingsPatch, ApiError> {
        Ok(SettingsPatch {
            status: self.status,
            default_destination_asset: self.default_destination_asset,
            fee_paid_by: self.fee_paid_by,
            skip_quote_acceptance: self.skip_quote_acceptance,
            merchant_surcharge_percent: exact.get("merchantSurchargePercent")?,
            return_redirect_url: self.return_redirect_url,
            success_redirect_url: self.success_redirect_url,
            failure_redirect_url: self.failure_redirect_url,
            underpayment_percent_enabled: self.underpayment_percent_enabled,
            underpayment_percent_threshold: exact.get("underpaymentPercentThreshold")?,
            underpayment_fixed_enabled: self.underpayment_fixed_enabled,
            underpayment_fixed_threshold: exact.get("underpaymentFixedThreshold")?,
        })
    }
}

/// Body of `POST .../integrations`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateIntegrationRequest {
    #[schema(schema_with = schema::integration_name)]
    pub name: String,
    /// The payment product's slug: `pay`.
    #[serde(rename = "appSlug")]
    #[schema(example = "pay", pattern = "^pay$")]
    pub app_slug: String,
    /// Origins (`scheme://host[:port]`) the gateway form may be posted from.
    #[serde(rename = "allowedOrigins", default)]
    #[schema(example = json!(["https://shop.example"]))]
    pub allowed_origins: Option<Vec<String>>,
}

impl From<CreateIntegrationRequest> for NewIntegrationInput {
    fn from(r: CreateIntegrationRequest) -> Self {
        NewIntegrationInput {
            name: r.name,
            app_slug: r.app_slug,
            allowed_origins: r.allowed_origins.unwrap_or_default(),
        }
    }
}

/// Body of `PATCH .../integrations/{partnerId}`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateIntegrationRequest {
    pub enabled: bool,
}

/// Body of `POST /auth/login`.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LoginRequest {
    pub email: String,
    pub password: String,
}

impl std::fmt::Debug for LoginRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LoginRequest(***)")
    }
}

/// Body of a callback PUT.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PutCallbackRequest {
    #[schema(schema_with = schema::callback_target)]
    pub url: String,
}

/// Body of `POST .../webhook-requests/test`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TestEventRequest {
    pub payment_link_uid: String,
}
