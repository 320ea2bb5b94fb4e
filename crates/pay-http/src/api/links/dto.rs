//! Request and response shapes of the links routes.

use crate::api::schema;
use crate::edge::json::non_null;
use pay_domain::kernel::ids::{LinkUid, PaymentLinkId};
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::links::{Branding, CreateAnonymousLinkInput, CreateLinkInput, SettlementPriority};
use pay_domain::links::{ExpirationTime, LinkStatus, PaymentLink, PaymentLinkPayload};
use pay_domain::settings::FeePayer;
use pay_domain::tenancy::Theme;
use pay_domain::FieldError;
use serde::Deserialize;
use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;

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

/// Up to 200 newest payment links: `{"data": [...]}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct PaymentLinkList<'a> {
    pub data: Vec<PaymentLinkDto<'a>>,
}

// The response borrows the domain's link: nothing is copied or allocated per field, and the
// list serialises 200 links straight from the rows the store decoded.
/// A payment link (`publicUrl` is the hosted checkout URL).
#[derive(Debug, Serialize, ToSchema)]
pub struct PaymentLinkDto<'a> {
    #[schema(value_type = String, example = "0192f0c4-1a2b-7c3d-8e4f-0123456789ab")]
    pub id: &'a PaymentLinkId,
    #[schema(value_type = String, example = "Xk3pQ9rT2mVw8LzA4bN7cD")]
    pub uid: &'a LinkUid,
    #[schema(value_type = String, example = "active")]
    pub status: LinkStatus,
    pub payload: PaymentLinkPayloadDto<'a>,
    #[schema(value_type = String, example = "2026-11-22T06:07:20.123Z")]
    pub created_at: Timestamp,
    #[schema(value_type = String, example = "2026-11-22T06:07:20.123Z")]
    pub updated_at: Timestamp,
    #[schema(value_type = Option<String>, example = "2026-11-23T06:07:20.123Z")]
    pub expires_at: Option<Timestamp>,
    /// Whether `expires_at` has passed on the company's clock (its sandbox test clock
    /// included). Expiry is not a status: `status` stays the merchant's; an expired link takes
    /// no payment (the Checkout API's `status` then reads `expired`).
    pub expired: bool,
    #[serde(rename = "publicUrl")]
    #[schema(value_type = String)]
    pub public_url: PublicUrl<'a>,
}

impl<'a> PaymentLinkDto<'a> {
    /// `base`: where the company's hosted pages live, `now`: the company's clock
    /// (`TenancyService::pay_base_and_now`).
    pub fn new(link: &'a PaymentLink, base: &'a str, now: Timestamp) -> Self {
        PaymentLinkDto {
            public_url: PublicUrl {
                base,
                uid: &link.uid,
            },
            id: &link.id,
            uid: &link.uid,
            status: link.status,
            created_at: link.created_at,
            updated_at: link.updated_at,
            expires_at: link.expires_at,
            expired: link.is_expired_at(now),
            payload: PaymentLinkPayloadDto::from(&link.payload),
        }
    }
}

/// The hosted checkout URL of a link, written into the response as it is serialised
/// (`PaymentLink::public_url` without the `String`).
#[derive(Debug)]
pub struct PublicUrl<'a> {
    base: &'a str,
    uid: &'a LinkUid,
}

impl std::fmt::Display for PublicUrl<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/pay/{}", self.base.trim_end_matches('/'), self.uid)
    }
}

impl Serialize for PublicUrl<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// A payment link with its latest session and timeline.
#[derive(Debug, Serialize, ToSchema)]
pub struct PaymentLinkDetailDto<'a> {
    #[serde(flatten)]
    pub link: PaymentLinkDto<'a>,
    /// The latest payment session, or null before any payer started one.
    #[serde(rename = "latestSession")]
    pub latest_session: Option<crate::api::checkout::dto::PaymentSessionDto>,
    /// Events of the link, oldest first.
    pub timeline: Vec<crate::api::checkout::dto::TimelineEventDto>,
}

/// The stored link definition.
// The API's own type: the same keys as stored, absent options left out.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = PayloadSchema)]
pub struct PaymentLinkPayloadDto<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<&'a str>,
    #[schema(example = "12.50")]
    pub amount: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fiat_currency: Option<&'a str>,
    #[schema(example = "USDC")]
    pub currency: &'a str,
    #[schema(example = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913")]
    pub asset: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skip_quote_acceptance: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, example = "merchant")]
    pub fee_paid_by: Option<FeePayer>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub invoice_pdf_url: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub customer_email: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub return_url: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub success_url: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_url: Option<&'a str>,
    #[schema(value_type = String, example = "24h")]
    pub expiration_time: ExpirationTime,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub metadata: Option<&'a Map<String, Value>>,
    #[schema(example = "merchant_target_net_v2")]
    pub runtime_mode: &'a str,
    #[schema(example = "v2")]
    pub billing_version: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merchant_name: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merchant_picture_url: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merchant_logo_url: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, example = "system")]
    pub merchant_payment_link_theme: Option<Theme>,
    /// Anonymous links: the address the payment settles to (from `settlement.priorities`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(ignore)]
    pub settlement_address: Option<&'a str>,
}

impl<'a> From<&'a PaymentLinkPayload> for PaymentLinkPayloadDto<'a> {
    fn from(p: &'a PaymentLinkPayload) -> Self {
        PaymentLinkPayloadDto {
            title: p.title.as_deref(),
            description: p.description.as_deref(),
            amount: p.amount.as_str(),
            fiat_currency: p.fiat_currency.as_deref(),
            currency: &p.currency,
            asset: &p.asset,
            skip_quote_acceptance: p.skip_quote_acceptance,
            fee_paid_by: p.fee_paid_by,
            order_id: p.order_id.as_deref(),
            invoice_pdf_url: p.invoice_pdf_url.as_deref(),
            customer_email: p.customer_email.as_deref(),
            client_id: p.client_id.as_deref(),
            return_url: p.return_url.as_deref(),
            success_url: p.success_url.as_deref(),
            failure_url: p.failure_url.as_deref(),
            expiration_time: p.expiration_time,
            metadata: p.metadata.as_ref(),
            runtime_mode: &p.runtime_mode,
            billing_version: &p.billing_version,
            merchant_name: p.merchant_name.as_deref(),
            merchant_picture_url: p.merchant_picture_url.as_deref(),
            merchant_logo_url: p.merchant_logo_url.as_deref(),
            merchant_payment_link_theme: p.merchant_payment_link_theme,
            settlement_address: p.settlement_address.as_deref(),
        }
    }
}

/// An anonymous link: the link, and its callback's signing secret when a `webhookUrl` was
/// given (shown this once).
#[derive(Debug, Serialize, ToSchema)]
pub struct AnonymousLinkDto<'a> {
    #[serde(flatten)]
    pub link: PaymentLinkDto<'a>,
    #[serde(rename = "webhookSecret", skip_serializing_if = "Option::is_none")]
    pub webhook_secret: Option<String>,
}

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
    type Error = FieldError;

    fn try_from(r: CreateAnonymousLinkRequest) -> Result<Self, FieldError> {
        let settlement = r.settlement.ok_or_else(|| {
            FieldError::new("settlement.priorities", "settlement.priorities is required")
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_options_are_left_out_and_keys_are_camel_case() {
        let mut p = pay_domain::testing::conformance::fixtures::link_value(
            pay_domain::kernel::ids::CompanyId(uuid::Uuid::nil()),
        )
        .payload;
        p.order_id = None;
        p.fee_paid_by = Some(FeePayer::Merchant);
        p.merchant_name = Some("Acme".into());
        p.merchant_payment_link_theme = Some(Theme::Dark);
        let json = serde_json::to_string(&PaymentLinkPayloadDto::from(&p)).unwrap();
        assert_eq!(
            json,
            r#"{"amount":"12.50","currency":"USDC","asset":"eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","feePaidBy":"merchant","expirationTime":"24h","runtimeMode":"merchant_target_net_v2","billingVersion":"v2","merchantName":"Acme","merchantPaymentLinkTheme":"dark"}"#
        );
    }

    #[test]
    fn public_url_is_written_as_the_domain_builds_it() {
        let link = pay_domain::testing::conformance::fixtures::link_value(
            pay_domain::kernel::ids::CompanyId(uuid::Uuid::nil()),
        );
        for base in [
            "https://pay.example",
            "https://pay.example/",
            "https://pay.example//",
        ] {
            let json =
                serde_json::to_value(PaymentLinkDto::new(&link, base, link.created_at)).unwrap();
            assert_eq!(json["publicUrl"], link.public_url(base), "{base}");
            assert_eq!(json["expired"], false);
            assert_eq!(json["uid"], link.uid.as_str());
        }
    }
}
