//! Request and response shapes of the grant's webhook subscription.

use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::webhooks::{SubscriptionAnswer, SubscriptionInput, SubscriptionView};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;

use crate::api::schema;
use crate::edge::json::non_null;

/// Body of `PUT .../webhook-subscriptions/current`: the whole configuration. The URL is
/// required under exactly one of its four names.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PutSubscriptionRequest {
    /// The endpoint (canonical name).
    #[serde(default, deserialize_with = "non_null")]
    #[schema(schema_with = schema::callback_target)]
    pub url: Option<String>,
    /// Alias of `url`.
    #[serde(default, deserialize_with = "non_null")]
    #[schema(schema_with = schema::callback_target)]
    pub endpoint_url: Option<String>,
    /// Alias of `url`.
    #[serde(default, deserialize_with = "non_null")]
    #[schema(schema_with = schema::callback_target)]
    pub callback_url: Option<String>,
    /// Alias of `url`.
    #[serde(default, deserialize_with = "non_null")]
    #[schema(schema_with = schema::callback_target)]
    pub webhook_url: Option<String>,
    /// 1 to 32 distinct `pay.payment.<event>` names; default `["pay.payment.*"]`.
    #[serde(default, deserialize_with = "non_null")]
    #[schema(schema_with = schema::subscription_events)]
    pub events: Option<Vec<String>>,
    #[serde(default, deserialize_with = "non_null")]
    #[schema(schema_with = schema::grant_subscription_description)]
    pub description: Option<String>,
    /// A JSON object of at most 8 KB (and 50 keys).
    #[serde(default, deserialize_with = "non_null")]
    #[schema(value_type = Option<Object>)]
    pub metadata: Option<Map<String, Value>>,
    /// `true` issues a new signing secret (returned once); the previous one keeps signing as
    /// a second `v1=` for 24 hours.
    #[serde(default, deserialize_with = "non_null")]
    pub rotate_secret: Option<bool>,
    /// `false` disables the subscription and erases its secret; default `true` (a PUT on a
    /// disabled subscription reactivates it with a new secret).
    #[serde(default, deserialize_with = "non_null")]
    pub active: Option<bool>,
}

impl From<PutSubscriptionRequest> for SubscriptionInput {
    fn from(r: PutSubscriptionRequest) -> Self {
        let urls = [
            ("url", r.url),
            ("endpointUrl", r.endpoint_url),
            ("callbackUrl", r.callback_url),
            ("webhookUrl", r.webhook_url),
        ]
        .into_iter()
        .filter_map(|(field, url)| url.map(|u| (field, u)))
        .collect();
        SubscriptionInput {
            urls,
            events: r.events,
            description: r.description,
            metadata: r.metadata,
            rotate_secret: r.rotate_secret.unwrap_or(false),
            active: r.active,
        }
    }
}

/// The grant's webhook subscription. `secretLast4` and `secretCreatedAt` only while active;
/// `signingSecret` only in the answer that issued it (creation, rotation, reactivation).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GrantWebhookSubscriptionDto {
    #[schema(value_type = String)]
    pub id: uuid::Uuid,
    #[schema(example = "https://shop.example/webhooks/pay")]
    pub url: String,
    #[schema(example = json!(["pay.payment.*"]))]
    pub events: Vec<String>,
    pub description: Option<String>,
    #[schema(value_type = Option<Object>)]
    pub metadata: Option<Map<String, Value>>,
    pub active: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(example = "Q7xZ")]
    pub secret_last4: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, example = "2026-11-22T06:07:20.123Z")]
    pub secret_created_at: Option<Timestamp>,
    #[schema(value_type = String)]
    pub created_at: Timestamp,
    #[schema(value_type = String)]
    pub updated_at: Timestamp,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(example = "whsec_...")]
    pub signing_secret: Option<String>,
}

fn at(ms: i64) -> Timestamp {
    // Written from a valid instant by the domain.
    Timestamp::from_unix_millis(ms).unwrap_or_else(|| Timestamp::from_unix_millis(0).unwrap())
}

impl GrantWebhookSubscriptionDto {
    pub fn of(v: SubscriptionView, signing_secret: Option<String>) -> Self {
        GrantWebhookSubscriptionDto {
            id: v.id,
            url: v.url,
            events: v.events,
            description: v.description,
            metadata: v.metadata,
            active: v.active,
            secret_last4: v.secret_last4,
            secret_created_at: v.secret_created_ms.map(at),
            created_at: at(v.created_ms),
            updated_at: at(v.updated_ms),
            signing_secret,
        }
    }
}

impl From<SubscriptionAnswer> for GrantWebhookSubscriptionDto {
    fn from(a: SubscriptionAnswer) -> Self {
        GrantWebhookSubscriptionDto::of(a.subscription, a.signing_secret)
    }
}
