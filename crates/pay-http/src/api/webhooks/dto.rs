//! Request and response shapes of the webhooks routes.

use crate::api::schema;
use pay_domain::kernel::timestamp::Timestamp;
use serde::Deserialize;
use serde::Serialize;
use utoipa::ToSchema;

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
