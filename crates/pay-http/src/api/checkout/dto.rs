//! Shapes of payment sessions, timelines and the public checkout.

use pay_domain::checkout::CheckoutView;
use pay_domain::checkout::{
    DepositsLeftReason, PaymentSession, RefundReason, ResolutionRecord, TimelineEvent,
    TimelineFacts,
};
use pay_domain::kernel::amount::Decimal;
use pay_domain::kernel::assets::DestinationAsset;
use pay_domain::kernel::timestamp::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;

/// A payment session: one payer's attempt to pay a link.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PaymentSessionDto {
    #[schema(example = "0192f0c4-1a2b-7c3d-8e4f-0123456789ab")]
    pub id: String,
    /// `quote`, `pending`, `processing`, `complete`, `underpaid`, `refund_pending`,
    /// `refunded`, `expired`, `cancelled` or `failed`.
    #[schema(example = "pending")]
    pub status: &'static str,
    #[schema(example = "quote")]
    pub previous_status: Option<&'static str>,
    /// The invoice unit: the link's fiat currency, else its settlement asset.
    pub invoice_asset: String,
    #[schema(example = "12.50")]
    pub invoice_amount: String,
    /// The asset the payer pays with.
    pub selected_sell_asset: String,
    /// What the payer sends, in the pay asset.
    pub required_sell_amount: String,
    /// What the merchant receives, in the settlement asset.
    pub expected_buy_amount: String,
    pub destination_address: String,
    pub deposit_address: Option<String>,
    pub channel_id: Option<String>,
    pub composite_channel_id: Option<String>,
    pub source_chain: Option<String>,
    /// The quote's expiry (`quote`) or the deposit request's (`pending`).
    #[schema(value_type = String, example = "2026-11-22T06:17:20.123Z")]
    pub expires_at: Timestamp,
    /// Received amounts, shortfall, overpayment, late deposits, resolution, refund address,
    /// and the chain transfers seen.
    pub settlement: crate::api::checkout::settlement::SettlementDto,
    pub error_message: Option<String>,
    #[schema(value_type = String)]
    pub created_at: Timestamp,
    #[schema(value_type = String)]
    pub updated_at: Timestamp,
}

impl From<PaymentSession> for PaymentSessionDto {
    fn from(s: PaymentSession) -> Self {
        PaymentSessionDto {
            id: s.id.to_string(),
            status: s.status.as_str(),
            previous_status: s.previous_status.map(|p| p.as_str()),
            invoice_asset: s.invoice_asset,
            invoice_amount: s.invoice_amount.as_str().to_owned(),
            selected_sell_asset: s.selected_sell_asset,
            required_sell_amount: s.required_sell_amount.to_string(),
            expected_buy_amount: s.expected_buy_amount.to_string(),
            destination_address: s.destination_address,
            deposit_address: s.deposit_address,
            channel_id: s.channel_id,
            composite_channel_id: s.composite_channel_id,
            source_chain: s.source_chain,
            expires_at: s.expires_at,
            settlement: s.settlement.into(),
            error_message: s.error_message,
            created_at: s.created_at,
            updated_at: s.updated_at,
        }
    }
}

/// One event of a link's timeline.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TimelineEventDto {
    pub id: String,
    /// The short event name (`quote_created`, `channel_created`, `status_changed`, ...).
    #[serde(rename = "type")]
    #[schema(example = "status_changed")]
    pub kind: String,
    pub session_id: Option<String>,
    #[schema(value_type = String)]
    pub created_at: Timestamp,
    #[schema(value_type = Object)]
    pub data: Map<String, Value>,
}

impl From<TimelineEvent> for TimelineEventDto {
    fn from(e: TimelineEvent) -> Self {
        TimelineEventDto {
            id: e.id.to_string(),
            kind: e.kind.as_str().to_owned(),
            session_id: e.session_id.map(|s| s.to_string()),
            created_at: e.created_at,
            data: timeline_data(&e.facts),
        }
    }
}

/// An entry's `data`: the API's names for the facts of each kind of entry (amounts as
/// normalised decimal text, statuses and instants as the rest of the API writes them).
fn timeline_data(facts: &TimelineFacts) -> Map<String, Value> {
    let amount = |d: &Decimal| Value::String(d.normalized().to_string());
    let text = |s: &str| Value::String(s.to_owned());
    let pairs: Vec<(&str, Value)> = match facts {
        TimelineFacts::Quote(q) => vec![
            ("payAsset", text(&q.pay_asset)),
            // The session's amounts as the session writes them (its scale kept).
            (
                "requiredSellAmount",
                text(&q.required_sell_amount.to_string()),
            ),
            (
                "expectedBuyAmount",
                text(&q.expected_buy_amount.to_string()),
            ),
            ("target", amount(&q.target)),
            ("fee", amount(&q.fee)),
            ("payPrice", amount(&q.pay_price)),
            ("expiresAt", text(&q.expires_at.to_rfc3339())),
        ],
        TimelineFacts::StatusChanged {
            previous_status,
            status,
        } => vec![
            ("previousStatus", text(previous_status.as_str())),
            ("status", text(status.as_str())),
        ],
        TimelineFacts::ChannelOpened {
            channel_id,
            deposit_address,
            source_chain,
        } => vec![
            ("channelId", text(channel_id)),
            ("depositAddress", text(deposit_address)),
            ("sourceChain", text(source_chain)),
        ],
        TimelineFacts::StartBlocked { asset, pay_asset } => {
            vec![("asset", text(asset)), ("payAsset", text(pay_asset))]
        }
        TimelineFacts::Settled {
            received_amount,
            short_by,
        } => {
            let mut v = vec![("receivedAmount", amount(received_amount))];
            if let Some(short) = short_by {
                v.push(("shortBy", amount(short)));
            }
            v
        }
        TimelineFacts::LateDeposit { late_amount } => vec![("lateAmount", amount(late_amount))],
        TimelineFacts::Resolved { resolution } => vec![(
            "resolution",
            text(match resolution {
                ResolutionRecord::CompletedByMerchant => "completed_by_merchant",
                ResolutionRecord::RefundedByMerchant => "refunded_by_merchant",
            }),
        )],
        TimelineFacts::RefundRequested { reason } => vec![(
            "reason",
            text(match reason {
                RefundReason::LinkAlreadyPaid => "link_already_paid",
            }),
        )],
        TimelineFacts::DepositsLeft { reason } => vec![(
            "reason",
            text(match reason {
                DepositsLeftReason::DepositsLeftChain => "deposits_left_chain",
            }),
        )],
        TimelineFacts::RefundAddress { address } => vec![("address", text(address))],
        TimelineFacts::Deposit { amount: a } => vec![("amount", amount(a))],
        TimelineFacts::None {} => Vec::new(),
    };
    pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
}

/// The merchant's branding on the checkout.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CheckoutBrandingDto {
    pub name: String,
    pub logo_url: Option<String>,
    /// `light`, `dark` or `system`.
    #[schema(example = "system")]
    pub theme: &'static str,
}

/// An asset the payer can pay with.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PayAssetDto {
    #[schema(example = "eip155:1/slip44:60")]
    pub asset_identifier: String,
    #[schema(example = "ETH")]
    pub symbol: String,
    pub name: String,
    pub chain_code: String,
    pub chain_name: String,
    pub decimals: u32,
}

impl From<&DestinationAsset> for PayAssetDto {
    fn from(a: &DestinationAsset) -> Self {
        PayAssetDto {
            asset_identifier: a.asset_identifier.clone(),
            symbol: a.symbol.clone(),
            name: a.name.clone(),
            chain_code: a.chain_code.clone(),
            chain_name: a.chain_name.clone(),
            decimals: a.decimals,
        }
    }
}

/// The public view of a payment link.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CheckoutDto {
    pub uid: String,
    pub title: Option<String>,
    pub description: Option<String>,
    #[schema(example = "12.50")]
    pub amount: String,
    /// The display currency: the link's fiat currency, else its settlement symbol.
    #[schema(example = "USDC")]
    pub currency: String,
    /// `active`, `paused`, `archived` or `expired`; only `active` takes payments.
    #[schema(example = "active")]
    pub status: &'static str,
    #[schema(value_type = Option<String>)]
    pub expires_at: Option<Timestamp>,
    pub branding: CheckoutBrandingDto,
    pub pay_assets: Vec<PayAssetDto>,
    /// Whether the payer reviews and accepts the quote before the deposit channel opens.
    pub review_required: bool,
    pub success_url: Option<String>,
    pub failure_url: Option<String>,
    pub return_url: Option<String>,
}

impl From<CheckoutView> for CheckoutDto {
    fn from(v: CheckoutView) -> Self {
        let p = v.link.payload;
        CheckoutDto {
            uid: v.link.uid.to_string(),
            title: p.title,
            description: p.description,
            amount: p.amount.as_str().to_owned(),
            currency: v.display_currency,
            status: v.state.as_str(),
            expires_at: v.link.expires_at,
            branding: CheckoutBrandingDto {
                name: v.merchant_name,
                logo_url: v.logo_url,
                theme: v.theme.as_str(),
            },
            pay_assets: v.pay_assets.iter().map(PayAssetDto::from).collect(),
            review_required: v.review_required,
            success_url: v.success_url,
            failure_url: v.failure_url,
            return_url: v.return_url,
        }
    }
}

/// `POST /api/public/checkout/{uid}/sessions`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StartSessionRequest {
    /// An asset identifier from the link's `payAssets`.
    #[schema(example = "eip155:1/slip44:60", min_length = 1)]
    pub pay_asset: String,
}

/// `POST .../sessions/{sessionId}/refund-address`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RefundAddressRequest {
    /// An address on the chain of the session's pay asset.
    #[schema(min_length = 1, max_length = 128)]
    pub address: String,
}

/// A sandbox processor event.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SandboxEventRequest {
    /// `deposit`, `settle`, `expire`, `fail` or `refund`.
    #[serde(rename = "type")]
    #[schema(schema_with = crate::api::schema::sandbox_event_type)]
    pub kind: String,
    /// `deposit` only, and required there: the amount of the pay asset received.
    #[serde(default)]
    #[schema(schema_with = crate::api::schema::deposit_amount)]
    pub amount: Option<String>,
    /// `deposit` only: stop at `processing` (settle later with `settle`).
    #[serde(default)]
    pub hold: Option<bool>,
    /// The event's id: the same id is applied once (default: a fresh id). 1 to 200
    /// characters, no control characters.
    #[serde(default)]
    #[schema(min_length = 1, max_length = 200, pattern = "^[ -~]+$")]
    pub event_id: Option<String>,
    /// The session to drive (default: the link's latest).
    #[serde(default)]
    pub session_id: Option<String>,
}

/// The test clock.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AdvanceClockRequest {
    /// Seconds to move forward, 1 to 31,622,400 (366 days).
    #[schema(value_type = i64, minimum = 1, maximum = 31_622_400)]
    pub advance_seconds: serde_json::Number,
}

/// The service clock's now.
#[derive(Debug, Serialize, ToSchema)]
pub struct ClockDto {
    #[schema(value_type = String)]
    pub now: Timestamp,
}

/// The merchant's decision on an underpaid session.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ManualResolutionRequest {
    /// `complete` (keep what arrived) or `refund`.
    #[schema(schema_with = crate::api::schema::resolution_action)]
    pub action: String,
}
