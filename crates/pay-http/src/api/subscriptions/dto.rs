//! Request and response shapes of the subscriptions routes.

use crate::api::schema;
use pay_domain::kernel::ids::{CycleId, LinkUid, PaymentLinkId, SubscriptionId, SubscriptionUid};
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::subscriptions::{CreateSubscriptionInput, Cycle, SubscriptionView};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;

data_list!(
    SubscriptionList,
    SubscriptionDto,
    "Up to 200 newest subscriptions with their cycles: `{\"data\": [...]}`."
);

/// Body of `POST /api/partner/v1/pay/subscriptions`. The customer is upserted by
/// `customerEmail`; cycle 0 is due at `startAt` and its invoice link is issued at once.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateSubscriptionRequest {
    #[schema(schema_with = schema::contact_email)]
    pub customer_email: String,
    #[schema(schema_with = schema::subscription_label)]
    pub label: String,
    #[schema(schema_with = schema::amount_usd)]
    pub amount_usd: String,
    #[schema(schema_with = schema::cadence)]
    pub cadence: String,
    #[schema(schema_with = schema::timezone)]
    pub timezone: String,
    #[serde(default)]
    #[schema(schema_with = schema::subscription_description)]
    pub description: Option<String>,
    #[serde(default)]
    #[schema(schema_with = schema::settlement_asset)]
    pub settlement_asset: Option<String>,
    #[serde(default)]
    #[schema(schema_with = schema::billing_interval_count)]
    pub billing_interval_count: Option<i64>,
    #[serde(default)]
    #[schema(schema_with = schema::start_at)]
    pub start_at: Option<String>,
    /// Merchant-defined, plus the advanced settings every cycle link applies:
    /// `successRedirectUrl`, `failureRedirectUrl`, `returnRedirectUrl`,
    /// `underpaymentPercentEnabled`, `underpaymentPercentThreshold`,
    /// `underpaymentFixedEnabled`, `underpaymentFixedThreshold` (the settings' rules).
    #[serde(default)]
    #[schema(schema_with = schema::metadata)]
    pub metadata: Option<Map<String, Value>>,
}

impl From<CreateSubscriptionRequest> for CreateSubscriptionInput {
    fn from(r: CreateSubscriptionRequest) -> Self {
        CreateSubscriptionInput {
            customer_email: r.customer_email,
            label: r.label,
            amount_usd: r.amount_usd,
            cadence: r.cadence,
            timezone: r.timezone,
            description: r.description,
            settlement_asset: r.settlement_asset,
            billing_interval_count: r.billing_interval_count,
            start_at: r.start_at,
            metadata: r.metadata,
        }
    }
}

/// Body of `PATCH /api/partner/v1/pay/subscriptions/{uid}`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateSubscriptionRequest {
    #[schema(schema_with = schema::subscription_status)]
    pub status: String,
}

/// A billing cycle; its invoice is an ordinary payment link.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CycleDto {
    #[schema(value_type = String)]
    pub id: CycleId,
    #[schema(value_type = String)]
    pub subscription_id: SubscriptionId,
    /// 0, 1, 2, ...
    pub sequence: u32,
    #[schema(value_type = String, example = "2026-11-22T06:07:20.123Z")]
    pub due_at: Timestamp,
    #[schema(example = "19.99")]
    pub amount_usd: String,
    /// Null until the invoice link is issued.
    #[schema(value_type = Option<String>)]
    pub payment_link_id: Option<PaymentLinkId>,
    #[schema(value_type = Option<String>)]
    pub payment_link_uid: Option<LinkUid>,
    /// The hosted checkout of the invoice.
    pub payment_url: Option<String>,
    /// `scheduled`, `open`, `paid`, `overdue` or `cancelled`.
    #[schema(example = "open")]
    pub status: &'static str,
    #[schema(value_type = Option<String>)]
    pub paid_at: Option<Timestamp>,
}

impl CycleDto {
    pub fn new(c: Cycle, payment_url: Option<String>) -> CycleDto {
        CycleDto {
            id: c.id,
            subscription_id: c.subscription_id,
            sequence: c.sequence,
            due_at: c.due_at,
            amount_usd: c.amount_usd,
            payment_link_id: c.payment_link_id,
            payment_link_uid: c.payment_link_uid,
            payment_url,
            status: c.status.as_str(),
            paid_at: c.paid_at,
        }
    }
}

/// A subscription with its cycles (oldest first).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionDto {
    #[schema(value_type = String)]
    pub id: SubscriptionId,
    #[schema(value_type = String, example = "sub_AbCdEfGhIjKlMnOpQrStUvWx")]
    pub uid: SubscriptionUid,
    /// `active`, `paused`, `overdue` or `cancelled`.
    #[schema(example = "active")]
    pub status: &'static str,
    pub customer_email: String,
    pub label: String,
    pub description: Option<String>,
    #[schema(example = "19.99")]
    pub amount_usd: String,
    pub settlement_asset: String,
    #[schema(example = "monthly")]
    pub cadence: &'static str,
    #[schema(example = "month")]
    pub billing_interval_unit: &'static str,
    pub billing_interval_count: u32,
    #[schema(value_type = String)]
    pub start_at: Timestamp,
    #[schema(example = "Europe/Berlin")]
    pub timezone: &'static str,
    #[schema(value_type = Object)]
    pub metadata: Map<String, Value>,
    #[schema(value_type = String)]
    pub created_at: Timestamp,
    #[schema(value_type = String)]
    pub updated_at: Timestamp,
    pub cycles: Vec<CycleDto>,
}

impl SubscriptionDto {
    /// `payment_url` makes a cycle's `paymentUrl` (the service's one rule).
    pub fn new(v: SubscriptionView, payment_url: impl Fn(&Cycle) -> Option<String>) -> Self {
        let s = v.subscription;
        SubscriptionDto {
            id: s.id,
            uid: s.uid,
            status: s.status.as_str(),
            customer_email: s.customer_email,
            label: s.label,
            description: s.description,
            amount_usd: s.amount_usd,
            settlement_asset: s.settlement_asset,
            cadence: s.interval.cadence().as_str(),
            billing_interval_unit: s.interval.unit().as_str(),
            billing_interval_count: u32::from(s.interval.count()),
            start_at: s.start_at,
            timezone: s.zone.name(),
            metadata: s.metadata,
            created_at: s.created_at,
            updated_at: s.updated_at,
            cycles: v
                .cycles
                .into_iter()
                .map(|c| {
                    let url = payment_url(&c);
                    CycleDto::new(c, url)
                })
                .collect(),
        }
    }
}
