//! Request and response shapes of the events routes.

use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::webhooks::{EventKind, EventLogEntry, EventLogRequest, PaymentEvent};
use pay_domain::{Fault, FieldError};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use utoipa::{IntoParams, ToSchema};

use crate::api::bookkeeping::dto::parse_instant;

/// The query of the events list: this struct documents it and reads it (each parameter at
/// most once, no other; an empty value is refused like any other bad one).
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct EventListQuery {
    /// 1 to 100, default 10.
    #[param(value_type = Option<u32>, minimum = 1, maximum = 100)]
    pub limit: Option<String>,
    /// The `id` of an event you were given (the last of a page): the page starts with the
    /// next older event.
    #[param(value_type = Option<String>, pattern = "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$", example = "0196f0c4-1a2b-7c3d-8e4f-0123456789ab")]
    pub starting_after: Option<String>,
    /// Event types, comma-separated (`pay.payment.status_changed,pay.subscription.status_changed`);
    /// an unknown type is refused.
    #[serde(rename = "type")]
    #[param(rename = "type", example = "pay.payment.status_changed")]
    pub types: Option<String>,
    /// Only events created at or after this instant (RFC 3339).
    #[serde(rename = "created[gte]")]
    #[param(rename = "created[gte]", value_type = Option<String>, format = DateTime)]
    pub created_gte: Option<String>,
    /// Only events created before this instant (RFC 3339).
    #[serde(rename = "created[lt]")]
    #[param(rename = "created[lt]", value_type = Option<String>, format = DateTime)]
    pub created_lt: Option<String>,
    /// `false`: only events none of whose deliveries has succeeded yet; `true`: only those one
    /// of whose deliveries has.
    #[param(value_type = Option<bool>)]
    pub delivered: Option<String>,
}

/// Every event type the log may hold, by its envelope `type`.
fn kind_of(type_name: &str) -> Option<EventKind> {
    PaymentEvent::ALL
        .into_iter()
        .map(EventKind::Payment)
        .chain([EventKind::SubscriptionStatusChanged, EventKind::Test])
        .find(|k| k.type_name() == type_name)
}

impl EventListQuery {
    /// The parameter names this struct takes, as its document lists them.
    pub fn names() -> Vec<String> {
        <EventListQuery as IntoParams>::into_params(|| None)
            .into_iter()
            .map(|p| p.name)
            .collect()
    }

    /// What the caller asks, each value checked (400 `validation_failed` naming the parameter).
    pub fn request(self) -> Result<EventLogRequest, FieldError> {
        let limit = match self.limit {
            None => 0,
            Some(v) => v
                .parse::<usize>()
                .ok()
                .filter(|n| (1..=pay_domain::webhooks::EVENTS_LIMIT_MAX).contains(n))
                .ok_or_else(|| {
                    FieldError::new("limit", "limit must be an integer from 1 to 100")
                })?,
        };
        let starting_after = self
            .starting_after
            .map(|v| {
                pay_domain::kernel::ids::DeliveryId::parse(&v)
                    .map(|id| id.0)
                    .ok_or_else(|| {
                        FieldError::new("starting_after", "starting_after must be an event id")
                    })
            })
            .transpose()?;
        let kinds = match self.types {
            None => vec![],
            Some(v) => v
                .split(',')
                .map(|t| {
                    kind_of(t.trim()).ok_or_else(|| {
                        FieldError::new(
                            "type",
                            format!(
                                "unknown event type {:?}: use the envelope's type, such as \
                                 pay.payment.status_changed",
                                t.trim()
                            ),
                        )
                    })
                })
                .collect::<Result<_, _>>()?,
        };
        let created_gte = self
            .created_gte
            .map(|v| parse_instant("created[gte]", &v))
            .transpose()?;
        let created_lt = self
            .created_lt
            .map(|v| parse_instant("created[lt]", &v))
            .transpose()?;
        let delivered = match self.delivered.as_deref() {
            None => None,
            Some("true") => Some(true),
            Some("false") => Some(false),
            Some(_) => {
                return Err(FieldError::new(
                    "delivered",
                    "delivered must be true or false",
                ))
            }
        };
        Ok(EventLogRequest {
            limit,
            starting_after,
            kinds,
            created_gte,
            created_lt,
            delivered,
        })
    }
}

/// One event: the envelope its webhooks carry, as the first delivery sent it, with the ids
/// of all its deliveries (that one, deliveries to other callbacks, manual resends).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EventDto {
    /// The event's id: the `x-pay-delivery-group-id` of its deliveries.
    #[schema(value_type = String)]
    pub id: uuid::Uuid,
    #[serde(rename = "type")]
    #[schema(example = "pay.payment.status_changed")]
    pub type_name: String,
    #[schema(value_type = String)]
    pub created_at: Timestamp,
    pub payment_link_uid: Option<String>,
    pub subscription_uid: Option<String>,
    /// Whether one of its deliveries got a 2xx answer.
    pub delivered: bool,
    /// Its deliveries, oldest first; the envelope's `deliveryId` is the first.
    #[schema(value_type = Vec<String>)]
    pub delivery_ids: Vec<uuid::Uuid>,
    /// The payment or subscription envelope (see the spec's Events), byte for byte.
    #[schema(value_type = Object)]
    pub envelope: Box<RawValue>,
}

impl TryFrom<EventLogEntry> for EventDto {
    type Error = Fault;

    fn try_from(e: EventLogEntry) -> Result<Self, Fault> {
        let ev = e.event;
        Ok(EventDto {
            id: ev.id,
            type_name: ev.event.type_name(),
            created_at: ev.created_at,
            payment_link_uid: ev.payment_link_uid,
            subscription_uid: ev.subscription_uid,
            delivered: e.delivered,
            delivery_ids: e.delivery_ids,
            envelope: RawValue::from_string(ev.body)
                .map_err(|e| Fault::caused("a logged event's envelope is not JSON", e))?,
        })
    }
}

/// A page of events, newest first.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EventList {
    pub data: Vec<EventDto>,
    /// Whether older events follow: ask again with `starting_after` = the last `id`.
    pub has_more: bool,
}
