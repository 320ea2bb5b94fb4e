//! The event log: the events the webhooks carried (or still carry), a page at a time, so a
//! receiver that was down can catch up without a resend (`docs/webhooks.md`).

pub mod dto;

use actix_web::{get, web, HttpRequest, HttpResponse};
use pay_domain::app::Pay;
use pay_domain::webhooks::EVENT_NOT_FOUND;

use crate::api::events::dto::{EventDto, EventList, EventListQuery};
use crate::edge::credentials::{blocking, Credentials};
use crate::edge::error::{ApiError, ErrorBody};
use crate::edge::form::read_query;

/// Reads the list's query by `EventListQuery`: only its parameters, each at most once.
fn read_list_query(query: &str) -> Result<EventListQuery, ApiError> {
    let names = EventListQuery::names();
    let known: Vec<&str> = names.iter().map(String::as_str).collect();
    let pairs = read_query(query, &known)?;
    let map: serde_json::Map<String, serde_json::Value> = pairs
        .into_iter()
        .map(|(k, v)| (k, serde_json::Value::String(v)))
        .collect();
    serde_json::from_value(serde_json::Value::Object(map))
        .map_err(|e| pay_domain::Fault::caused("reading the events query", e).into())
}

/// The events of your payments and subscriptions, newest first, as their webhooks carry them:
/// the company's for API keys and members, only its own links' for an OAuth grant. Kept 30
/// days (`PAY_EVENTS_RETENTION_DAYS`).
#[utoipa::path(
    tag = "Webhooks",
    params(EventListQuery),
    security(("apiKeyId" = [], "apiKeySecret" = []), ("session" = []), ("oauthToken" = [])),
    responses(
        (status = 200, body = EventList),
        (status = 400, description = "`unknown_field` or `validation_failed` on a query parameter (`starting_after` not one of your events)", body = ErrorBody),
        (status = 401, description = "`Unauthorized`, or `Invalid pay API credentials` (a token without `pay:webhooks:read`)", body = ErrorBody),
    )
)]
#[get("/api/partner/v1/pay/events")]
pub async fn list_events(
    pay: web::Data<Pay>,
    creds: Credentials,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let query = req.query_string().to_owned();
    let page = blocking(move || {
        let principal = creds.principal(&pay)?;
        let request = read_list_query(&query)?.request()?;
        Ok(pay.webhooks().event_log(&principal, request)?)
    })
    .await?;
    Ok(HttpResponse::Ok().json(EventList {
        data: page
            .data
            .into_iter()
            .map(EventDto::try_from)
            .collect::<Result<_, _>>()?,
        has_more: page.has_more,
    }))
}

/// One event with the ids of its deliveries.
#[utoipa::path(
    tag = "Webhooks",
    params(("id" = String, Path)),
    security(("apiKeyId" = [], "apiKeySecret" = []), ("session" = []), ("oauthToken" = [])),
    responses(
        (status = 200, body = EventDto),
        (status = 401, description = "`Unauthorized`, or `Invalid pay API credentials` (a token without `pay:webhooks:read`)", body = ErrorBody),
        (status = 404, description = "Unknown, another company's (or grant's), or no longer kept", body = ErrorBody),
    )
)]
#[get("/api/partner/v1/pay/events/{id}")]
pub async fn get_event(
    pay: web::Data<Pay>,
    creds: Credentials,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let entry = blocking(move || {
        let principal = creds.principal(&pay)?;
        let id = pay_domain::kernel::ids::DeliveryId::parse(&path).ok_or(EVENT_NOT_FOUND)?;
        Ok(pay.webhooks().logged_event(&principal, id.0)?)
    })
    .await?;
    Ok(HttpResponse::Ok().json(EventDto::try_from(entry)?))
}
