//! Request and response shapes of the API (the third model layer). Responses are built from
//! domain values by explicit conversions; request bodies are structs that read themselves
//! (`requests`) and convert into domain inputs.

pub mod checkout;
pub mod forms;
pub mod requests;
pub mod schema;

pub use requests::{
    BrandingRequest, CreateAnonymousLinkRequest, CreateIntegrationRequest,
    CreatePaymentLinkRequest, LoginRequest, PutCallbackRequest, SettlementPriorityRequest,
    SettlementRequest, TestEventRequest, UpdateIntegrationRequest, UpdateLinkStatusRequest,
    UpdateSettingsRequest,
};

use pay_domain::kernel::assets::DestinationAsset;
use pay_domain::kernel::ids::{LinkUid, PaymentLinkId};
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::links::{LinkStatus, PaymentLink, PaymentLinkPayload};
use pay_domain::settings::PaySettings;
use pay_domain::tenancy::keys::Integration;
use pay_domain::tenancy::Membership;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use utoipa::ToSchema;

macro_rules! data_list {
    ($name:ident, $item:ty, $doc:expr) => {
        #[doc = $doc]
        #[derive(Debug, Serialize, ToSchema)]
        pub struct $name {
            pub data: Vec<$item>,
        }
    };
}

data_list!(
    PaymentLinkList,
    PaymentLinkDto,
    "Up to 200 newest payment links: `{\"data\": [...]}`."
);
data_list!(CompanyList, CompanyDto, "The user's teams.");
data_list!(
    IntegrationList,
    IntegrationDto,
    "The team's API keys, newest first."
);
data_list!(
    DestinationAssetList,
    DestinationAssetDto,
    "Enabled settlement assets."
);
data_list!(TimezoneList, String, "IANA time zone names, sorted.");

// Fields keep their domain types and serialise straight into the response, so a list of 200
// links allocates little.
/// A payment link (`publicUrl` is the hosted checkout URL).
#[derive(Debug, Serialize, ToSchema)]
pub struct PaymentLinkDto {
    #[schema(value_type = String, example = "0192f0c4-1a2b-7c3d-8e4f-0123456789ab")]
    pub id: PaymentLinkId,
    #[schema(value_type = String, example = "Xk3pQ9rT2mVw8LzA4bN7cD")]
    pub uid: LinkUid,
    #[schema(value_type = String, example = "active")]
    pub status: LinkStatus,
    #[schema(value_type = PayloadSchema)]
    pub payload: PaymentLinkPayload,
    #[schema(value_type = String, example = "2026-11-22T06:07:20.123Z")]
    pub created_at: Timestamp,
    #[schema(value_type = String, example = "2026-11-22T06:07:20.123Z")]
    pub updated_at: Timestamp,
    #[schema(value_type = Option<String>, example = "2026-11-23T06:07:20.123Z")]
    pub expires_at: Option<Timestamp>,
    #[serde(rename = "publicUrl")]
    pub public_url: String,
}

impl PaymentLinkDto {
    pub fn new(link: PaymentLink, public_pay_url: &str) -> Self {
        PaymentLinkDto {
            public_url: link.public_url(public_pay_url),
            id: link.id,
            uid: link.uid,
            status: link.status,
            created_at: link.created_at,
            updated_at: link.updated_at,
            expires_at: link.expires_at,
            payload: link.payload,
        }
    }
}

/// A payment link with its latest session and timeline.
#[derive(Debug, Serialize, ToSchema)]
pub struct PaymentLinkDetailDto {
    #[serde(flatten)]
    pub link: PaymentLinkDto,
    /// The latest payment session, or null before any payer started one.
    #[serde(rename = "latestSession")]
    pub latest_session: Option<checkout::PaymentSessionDto>,
    /// Events of the link, oldest first.
    pub timeline: Vec<checkout::TimelineEventDto>,
}

/// The stored link definition.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub struct PayloadSchema {
    pub title: Option<String>,
    pub description: Option<String>,
    #[schema(example = "12.50")]
    pub amount: String,
    pub fiat_currency: Option<String>,
    #[schema(example = "USDC")]
    pub currency: String,
    #[schema(example = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913")]
    pub asset: String,
    pub skip_quote_acceptance: Option<bool>,
    #[schema(example = "merchant")]
    pub fee_paid_by: Option<String>,
    pub order_id: Option<String>,
    pub invoice_pdf_url: Option<String>,
    pub customer_email: Option<String>,
    pub client_id: Option<String>,
    pub return_url: Option<String>,
    pub success_url: Option<String>,
    pub failure_url: Option<String>,
    #[schema(example = "24h")]
    pub expiration_time: String,
    #[schema(value_type = Option<Object>)]
    pub metadata: Option<Map<String, Value>>,
    #[schema(example = "merchant_target_net_v2")]
    pub runtime_mode: String,
    #[schema(example = "v2")]
    pub billing_version: String,
    pub merchant_name: Option<String>,
    pub merchant_picture_url: Option<String>,
    pub merchant_logo_url: Option<String>,
    #[schema(example = "system")]
    pub merchant_payment_link_theme: Option<String>,
}

/// Merchant settings.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PaySettingsDto {
    #[schema(example = "active")]
    pub status: String,
    pub default_destination_asset: Option<String>,
    #[schema(example = "merchant")]
    pub fee_paid_by: String,
    pub skip_quote_acceptance: bool,
    #[schema(value_type = f64, example = 0.5)]
    pub merchant_surcharge_percent: Box<RawValue>,
    pub return_redirect_url: Option<String>,
    pub success_redirect_url: Option<String>,
    pub failure_redirect_url: Option<String>,
    pub underpayment_percent_enabled: bool,
    #[schema(value_type = f64)]
    pub underpayment_percent_threshold: Box<RawValue>,
    pub underpayment_fixed_enabled: bool,
    #[schema(value_type = f64)]
    pub underpayment_fixed_threshold: Box<RawValue>,
}

/// A settings decimal as a JSON number with exactly its digits (no float: `0.50` stays `0.50`,
/// 18 places stay 18). A `Decimal` prints `-?digits[.digits]`, always a valid JSON number.
fn json_number(d: pay_domain::kernel::amount::Decimal) -> Box<RawValue> {
    RawValue::from_string(d.to_string()).unwrap_or_else(|_| unreachable!("a decimal is JSON"))
}

impl From<PaySettings> for PaySettingsDto {
    fn from(s: PaySettings) -> Self {
        PaySettingsDto {
            status: s.status.as_str().into(),
            default_destination_asset: s.default_destination_asset,
            fee_paid_by: s.fee_paid_by.as_str().into(),
            skip_quote_acceptance: s.skip_quote_acceptance,
            merchant_surcharge_percent: json_number(s.merchant_surcharge_percent),
            return_redirect_url: s.return_redirect_url,
            success_redirect_url: s.success_redirect_url,
            failure_redirect_url: s.failure_redirect_url,
            underpayment_percent_enabled: s.underpayment_percent_enabled,
            underpayment_percent_threshold: json_number(s.underpayment_percent_threshold),
            underpayment_fixed_enabled: s.underpayment_fixed_enabled,
            underpayment_fixed_threshold: json_number(s.underpayment_fixed_threshold),
        }
    }
}

/// A settlement asset.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DestinationAssetDto {
    #[schema(example = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913")]
    pub asset_identifier: String,
    #[schema(example = "base")]
    pub chain_code: String,
    pub chain_name: String,
    #[schema(example = "USDC")]
    pub symbol: String,
    pub name: String,
    #[schema(example = 6)]
    pub decimals: u32,
    pub is_default: bool,
}

impl DestinationAssetDto {
    pub fn new(a: DestinationAsset, is_default: bool) -> Self {
        DestinationAssetDto {
            asset_identifier: a.asset_identifier,
            chain_code: a.chain_code,
            chain_name: a.chain_name,
            symbol: a.symbol,
            name: a.name,
            decimals: a.decimals,
            is_default,
        }
    }
}

/// A team the signed-in user belongs to.
#[derive(Debug, Serialize, ToSchema)]
pub struct CompanyDto {
    pub id: String,
    pub name: String,
    #[schema(example = "owner")]
    pub role: String,
    #[schema(example = json!(["settings.manage"]))]
    pub permissions: Vec<String>,
}

impl From<Membership> for CompanyDto {
    fn from(m: Membership) -> Self {
        CompanyDto {
            id: m.company_id.to_string(),
            name: m.company_name,
            role: m.role.as_str().into(),
            permissions: m
                .role
                .permissions()
                .iter()
                .map(|p| p.as_str().into())
                .collect(),
        }
    }
}

/// An integration (API key) record; never its secret.
#[derive(Debug, Serialize, ToSchema)]
pub struct IntegrationDto {
    #[schema(example = "mk_pay_Q2x8Lm4Vb7Nc1Zr5Tw9Ye3Ua")]
    pub key_id: String,
    pub partner_id: String,
    pub name: String,
    #[serde(rename = "appSlug")]
    #[schema(example = "pay")]
    pub app_slug: String,
    #[serde(rename = "allowedOrigins")]
    pub allowed_origins: Vec<String>,
    #[schema(example = "pk_pay_H6j2Kd9Lq3Wm7Rp1Xs5Tv8Zb")]
    pub form_key_id: String,
    pub enabled: bool,
    #[serde(rename = "createdAt")]
    pub created_at: String,
    #[serde(rename = "lastUsedAt")]
    pub last_used_at: Option<String>,
}

impl From<Integration> for IntegrationDto {
    fn from(i: Integration) -> Self {
        IntegrationDto {
            key_id: i.key_id.to_string(),
            partner_id: i.partner_id.to_string(),
            name: i.name,
            app_slug: i.app_slug,
            allowed_origins: i.allowed_origins,
            form_key_id: i.form_key_id.to_string(),
            enabled: i.enabled,
            created_at: i.created_at.to_rfc3339(),
            last_used_at: i.last_used_at.map(|t| t.to_rfc3339()),
        }
    }
}

/// A newly created integration, with its secret (shown this once).
#[derive(Debug, Serialize, ToSchema)]
pub struct CreatedIntegrationDto {
    #[serde(flatten)]
    pub integration: IntegrationDto,
    /// The secret; stored hashed, never shown again.
    #[serde(rename = "keySecret")]
    pub key_secret: String,
}

/// `{"integration": {...}}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct CreateIntegrationResponse {
    pub integration: CreatedIntegrationDto,
}

/// Answer of a successful login; the session itself is the `pay_session` cookie.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LoginResponse {
    /// Send as `x-csrf-token` on every state-changing request of this session.
    pub csrf_token: String,
}

/// Liveness and readiness.
#[derive(Debug, Serialize, ToSchema)]
pub struct HealthDto {
    #[schema(example = "ok")]
    pub status: String,
}

/// A company callback. `signingSecret` appears only when a secret is issued (first save,
/// rotation); reads never reveal it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CallbackDto {
    #[schema(example = "https://shop.example/webhooks/pay")]
    pub url: Option<String>,
    #[schema(example = "Q7xZ")]
    pub secret_last4: Option<String>,
    #[schema(value_type = Option<String>, example = "2026-11-22T06:07:20.123Z")]
    pub secret_created_at: Option<Timestamp>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(example = "whsec_...")]
    pub signing_secret: Option<String>,
}

/// One webhook delivery and its retry state.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryDto {
    #[schema(value_type = String)]
    pub id: uuid::Uuid,
    #[schema(value_type = String)]
    pub group_id: uuid::Uuid,
    #[schema(example = "event")]
    pub origin: &'static str,
    #[schema(example = "status_changed")]
    pub event: &'static str,
    #[serde(rename = "type")]
    #[schema(example = "pay.payment.status_changed")]
    pub type_name: String,
    #[schema(example = "retrying")]
    pub status: &'static str,
    pub attempts: u32,
    #[schema(value_type = Option<String>)]
    pub next_attempt_at: Option<Timestamp>,
    #[schema(value_type = Option<String>)]
    pub last_attempt_at: Option<Timestamp>,
    pub last_response_status: Option<u16>,
    pub last_error: Option<String>,
    pub payment_link_uid: Option<String>,
    pub subscription_uid: Option<String>,
    pub url: String,
    #[schema(value_type = String)]
    pub created_at: Timestamp,
}

impl From<pay_domain::webhooks::Delivery> for DeliveryDto {
    fn from(d: pay_domain::webhooks::Delivery) -> Self {
        DeliveryDto {
            id: d.id,
            group_id: d.group_id,
            origin: d.origin.as_str(),
            event: d.event.short_name(),
            type_name: d.event.type_name(),
            status: d.status.as_str(),
            attempts: d.attempts,
            // A delivery being attempted right now shows its lease; terminal ones show none.
            next_attempt_at: if d.status.is_terminal() {
                None
            } else {
                d.next_attempt_at
            },
            last_attempt_at: d.last_attempt_at,
            last_response_status: d.last_response_status,
            last_error: d.last_error.map(|e| e.as_str().to_owned()),
            payment_link_uid: d.payment_link_uid,
            subscription_uid: d.subscription_uid,
            url: d.url,
            created_at: d.created_at,
        }
    }
}

data_list!(
    DeliveryList,
    DeliveryDto,
    "Webhook deliveries, newest first."
);

/// One attempt of a delivery.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AttemptDto {
    pub number: u32,
    #[schema(value_type = String)]
    pub at: Timestamp,
    /// HTTP status of the answer, when one arrived.
    pub response_status: Option<u16>,
    pub duration_ms: u64,
    pub error: Option<String>,
    /// The start of the response body (at most 1,024 characters).
    pub response_excerpt: Option<String>,
}

impl From<pay_domain::webhooks::ports::AttemptRecord> for AttemptDto {
    fn from(a: pay_domain::webhooks::ports::AttemptRecord) -> Self {
        AttemptDto {
            number: a.number,
            at: a.at,
            response_status: a.outcome.status,
            duration_ms: a.outcome.duration_ms,
            error: a.outcome.error.map(|e| e.as_str().to_owned()),
            response_excerpt: a.outcome.response_excerpt,
        }
    }
}

/// A delivery with its attempts, oldest first (`attempts` is their count).
#[derive(Debug, Serialize, ToSchema)]
pub struct DeliveryDetailDto {
    #[serde(flatten)]
    pub delivery: DeliveryDto,
    #[serde(rename = "attemptHistory")]
    pub attempt_history: Vec<AttemptDto>,
}

/// An anonymous link: the link, and its callback's signing secret when a `webhookUrl` was
/// given (shown this once).
#[derive(Debug, Serialize, ToSchema)]
pub struct AnonymousLinkDto {
    #[serde(flatten)]
    pub link: PaymentLinkDto,
    #[serde(rename = "webhookSecret", skip_serializing_if = "Option::is_none")]
    pub webhook_secret: Option<String>,
}
