//! Webhook configuration and the delivery log: the company callbacks of the developer settings
//! (session with `settings.manage`), the log with its filters, one delivery with its attempts,
//! manual resend, and a test event.

pub mod dto;

use actix_web::{get, post, put, web, HttpRequest, HttpResponse};
use pay_domain::app::Pay;
use pay_domain::webhooks::CallbackView;
use pay_domain::webhooks::{CallbackKind, DeliveryFilter, DeliveryStatus};
use pay_domain::FieldError;

use crate::api::webhooks::dto::DeliveryList;
use crate::api::webhooks::dto::{
    AttemptDto, CallbackDto, DeliveryDetailDto, DeliveryDto, PutCallbackRequest, TestEventRequest,
};
use crate::edge::credentials::{blocking, Credentials};
use crate::edge::error::{ApiError, ErrorBody};
use crate::edge::form::read_query;
use crate::edge::json::JsonBody;
use crate::edge::{company_id, link_uid};

fn callback_body(view: Option<CallbackView>, secret: Option<String>) -> CallbackDto {
    CallbackDto {
        url: view.as_ref().map(|v| v.url.clone()),
        secret_last4: view.as_ref().map(|v| v.secret_last4.clone()),
        secret_created_at: view.map(|v| v.secret_created_at),
        signing_secret: secret,
    }
}

async fn get_callback(
    pay: web::Data<Pay>,
    creds: Credentials,
    path: web::Path<String>,
    kind: CallbackKind,
) -> Result<HttpResponse, ApiError> {
    let view = blocking(move || {
        let signed_in = creds.signed_in(&pay)?;
        Ok(pay
            .webhooks()
            .company_callback(&signed_in, company_id(&path)?, kind)?)
    })
    .await?;
    Ok(HttpResponse::Ok().json(callback_body(view, None)))
}

async fn put_callback(
    pay: web::Data<Pay>,
    creds: Credentials,
    path: web::Path<String>,
    body: JsonBody,
    kind: CallbackKind,
) -> Result<HttpResponse, ApiError> {
    let (view, secret) = blocking(move || {
        let signed_in = creds.signed_in(&pay)?;
        let company = company_id(&path)?;
        let url = body.read::<PutCallbackRequest>()?.url;
        Ok(pay
            .webhooks()
            .put_company_callback(&signed_in, company, kind, &url)?)
    })
    .await?;
    Ok(HttpResponse::Ok()
        .insert_header(("cache-control", "no-store"))
        .json(callback_body(
            Some(view),
            secret.map(|s| s.expose().to_owned()),
        )))
}

async fn rotate(
    pay: web::Data<Pay>,
    creds: Credentials,
    path: web::Path<String>,
    kind: CallbackKind,
) -> Result<HttpResponse, ApiError> {
    let (view, secret) = blocking(move || {
        let signed_in = creds.signed_in(&pay)?;
        Ok(pay
            .webhooks()
            .rotate_company_callback_secret(&signed_in, company_id(&path)?, kind)?)
    })
    .await?;
    Ok(HttpResponse::Ok()
        .insert_header(("cache-control", "no-store"))
        .json(callback_body(Some(view), Some(secret.expose().to_owned()))))
}

/// The company payment callback (takes precedence over the legacy shared one).
#[utoipa::path(
    tag = "Webhooks",
    params(("companyId" = String, Path)),
    security(("session" = [])),
    responses(
        (status = 200, description = "The callback; all fields null when none is set", body = CallbackDto),
        (status = 401, description = "`Unauthorized`", body = ErrorBody),
        (status = 403, description = "`Forbidden`: not a member or no `settings.manage`", body = ErrorBody),
    )
)]
#[get("/api/partner/v1/companies/{companyId}/payment-callback")]
pub async fn get_payment_callback(
    pay: web::Data<Pay>,
    creds: Credentials,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    get_callback(pay, creds, path, CallbackKind::CompanyPayment).await
}

/// Set the company payment callback URL; the first save issues the signing secret (returned
/// once as `signingSecret`).
#[utoipa::path(
    tag = "Webhooks",
    params(("companyId" = String, Path)),
    request_body = PutCallbackRequest,
    security(("session" = [])),
    responses(
        (status = 200, body = CallbackDto),
        (status = 400, description = "`validation_failed` on `url` (https, no user info, public address)", body = ErrorBody),
        (status = 401, description = "`Unauthorized`", body = ErrorBody),
        (status = 403, description = "`Forbidden`", body = ErrorBody),
    )
)]
#[put("/api/partner/v1/companies/{companyId}/payment-callback")]
pub async fn put_payment_callback(
    pay: web::Data<Pay>,
    creds: Credentials,
    path: web::Path<String>,
    body: JsonBody,
) -> Result<HttpResponse, ApiError> {
    put_callback(pay, creds, path, body, CallbackKind::CompanyPayment).await
}

/// Issue a new signing secret for the company payment callback (returned once); the previous
/// one keeps signing as a second `v1=` for 24 hours.
#[utoipa::path(
    tag = "Webhooks",
    params(("companyId" = String, Path)),
    security(("session" = [])),
    responses(
        (status = 200, body = CallbackDto),
        (status = 401, description = "`Unauthorized`", body = ErrorBody),
        (status = 403, description = "`Forbidden`", body = ErrorBody),
        (status = 404, description = "No callback set", body = ErrorBody),
    )
)]
#[post("/api/partner/v1/companies/{companyId}/payment-callback/rotate-secret")]
pub async fn rotate_payment_callback(
    pay: web::Data<Pay>,
    creds: Credentials,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    rotate(pay, creds, path, CallbackKind::CompanyPayment).await
}

/// The legacy shared callback (used when no company payment callback is set).
#[utoipa::path(
    tag = "Webhooks",
    params(("companyId" = String, Path)),
    security(("session" = [])),
    responses(
        (status = 200, description = "The callback; all fields null when none is set", body = CallbackDto),
        (status = 401, description = "`Unauthorized`", body = ErrorBody),
        (status = 403, description = "`Forbidden`", body = ErrorBody),
    )
)]
#[get("/api/partner/v1/companies/{companyId}/legacy-callback")]
pub async fn get_legacy_callback(
    pay: web::Data<Pay>,
    creds: Credentials,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    get_callback(pay, creds, path, CallbackKind::LegacyShared).await
}

/// Set the legacy shared callback URL.
#[utoipa::path(
    tag = "Webhooks",
    params(("companyId" = String, Path)),
    request_body = PutCallbackRequest,
    security(("session" = [])),
    responses(
        (status = 200, body = CallbackDto),
        (status = 400, description = "`validation_failed` on `url`", body = ErrorBody),
        (status = 401, description = "`Unauthorized`", body = ErrorBody),
        (status = 403, description = "`Forbidden`", body = ErrorBody),
    )
)]
#[put("/api/partner/v1/companies/{companyId}/legacy-callback")]
pub async fn put_legacy_callback(
    pay: web::Data<Pay>,
    creds: Credentials,
    path: web::Path<String>,
    body: JsonBody,
) -> Result<HttpResponse, ApiError> {
    put_callback(pay, creds, path, body, CallbackKind::LegacyShared).await
}

/// Issue a new signing secret for the legacy shared callback.
#[utoipa::path(
    tag = "Webhooks",
    params(("companyId" = String, Path)),
    security(("session" = [])),
    responses(
        (status = 200, body = CallbackDto),
        (status = 401, description = "`Unauthorized`", body = ErrorBody),
        (status = 403, description = "`Forbidden`", body = ErrorBody),
        (status = 404, description = "No callback set", body = ErrorBody),
    )
)]
#[post("/api/partner/v1/companies/{companyId}/legacy-callback/rotate-secret")]
pub async fn rotate_legacy_callback(
    pay: web::Data<Pay>,
    creds: Credentials,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    rotate(pay, creds, path, CallbackKind::LegacyShared).await
}

/// Reads the log's query string strictly: known parameters only, each at most once.
pub(crate) fn read_filter(query: &str) -> Result<DeliveryFilter, ApiError> {
    let mut f = DeliveryFilter::default();
    let known = ["limit", "paymentLinkUid", "deliveryStatus", "search"];
    for (key, value) in read_query(query, &known)? {
        match key.as_str() {
            "limit" => {
                f.limit = value
                    .parse::<usize>()
                    .ok()
                    .filter(|n| (1..=pay_domain::webhooks::LOG_LIMIT_MAX).contains(n))
                    .ok_or_else(|| {
                        FieldError::new("limit", "limit must be an integer from 1 to 200")
                    })?;
            }
            "paymentLinkUid" => f.payment_link_uid = Some(value),
            "deliveryStatus" => {
                f.status = Some(DeliveryStatus::parse(&value).ok_or_else(|| {
                    FieldError::new(
                        "deliveryStatus",
                        "deliveryStatus must be pending, retrying, succeeded or failed",
                    )
                })?)
            }
            _ => f.search = Some(value).filter(|s| !s.is_empty()),
        }
    }
    Ok(f)
}

/// The delivery log: payment and subscription webhooks with their retry state, newest first.
#[utoipa::path(
    tag = "Webhooks",
    params(
        ("limit" = Option<u32>, Query, minimum = 1, maximum = 200, description = "1 to 200, default 50"),
        ("paymentLinkUid" = Option<String>, Query),
        ("deliveryStatus" = inline(Option<DeliveryStatusParam>), Query),
        ("search" = Option<String>, Query, description = "A delivery id, event name, link uid or order id"),
    ),
    security(("apiKeyId" = [], "apiKeySecret" = []), ("session" = [])),
    responses(
        (status = 200, body = DeliveryList),
        (status = 400, description = "`unknown_field` or `validation_failed` on a query parameter", body = ErrorBody),
        (status = 401, description = "`Unauthorized` or `Invalid pay API credentials`", body = ErrorBody),
    )
)]
#[get("/api/partner/v1/pay/webhook-requests")]
pub async fn list_deliveries(
    pay: web::Data<Pay>,
    creds: Credentials,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let query = req.query_string().to_owned();
    let list = blocking(move || {
        let principal = creds.principal(&pay)?;
        let filter = read_filter(&query)?;
        Ok(pay.webhooks().deliveries(&principal, filter)?)
    })
    .await?;
    Ok(HttpResponse::Ok().json(DeliveryList {
        data: list.into_iter().map(DeliveryDto::from).collect(),
    }))
}

/// One delivery with its attempts, oldest first.
#[utoipa::path(
    tag = "Webhooks",
    params(("id" = String, Path)),
    security(("apiKeyId" = [], "apiKeySecret" = []), ("session" = [])),
    responses(
        (status = 200, body = DeliveryDetailDto),
        (status = 401, description = "`Unauthorized` or `Invalid pay API credentials`", body = ErrorBody),
        (status = 404, description = "Unknown, or another company's", body = ErrorBody),
    )
)]
#[get("/api/partner/v1/pay/webhook-requests/{id}")]
pub async fn get_delivery(
    pay: web::Data<Pay>,
    creds: Credentials,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let (d, attempts) = blocking(move || {
        let principal = creds.principal(&pay)?;
        let id = crate::edge::delivery_id(&path)?;
        Ok(pay.webhooks().delivery(&principal, id)?)
    })
    .await?;
    Ok(HttpResponse::Ok().json(DeliveryDetailDto {
        delivery: DeliveryDto::from(d),
        attempt_history: attempts.into_iter().map(AttemptDto::from).collect(),
    }))
}

/// Resend a delivery: a new delivery in the same group, origin `manual`.
#[utoipa::path(
    tag = "Webhooks",
    params(("id" = String, Path)),
    security(("apiKeyId" = [], "apiKeySecret" = []), ("session" = [])),
    responses(
        (status = 202, description = "The new delivery, queued", body = DeliveryDto),
        (status = 401, description = "`Unauthorized` or `Invalid pay API credentials`", body = ErrorBody),
        (status = 403, description = "Session without `settings.manage` or CSRF token", body = ErrorBody),
        (status = 404, description = "Unknown, or another company's", body = ErrorBody),
    )
)]
#[post("/api/partner/v1/pay/webhook-requests/{id}/resend")]
pub async fn resend_delivery(
    pay: web::Data<Pay>,
    creds: Credentials,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let d = blocking(move || {
        let principal = creds.principal(&pay)?;
        let id = crate::edge::delivery_id(&path)?;
        Ok(pay.webhooks().resend_delivery(&principal, id)?)
    })
    .await?;
    Ok(HttpResponse::Accepted().json(DeliveryDto::from(d)))
}

/// Queue a `pay.webhook.test` event about one of your links to your callback, to check an
/// endpoint and its signature verification. Receivers ignore event types they do not know.
#[utoipa::path(
    tag = "Webhooks",
    request_body = TestEventRequest,
    security(("apiKeyId" = [], "apiKeySecret" = []), ("session" = [])),
    responses(
        (status = 202, description = "The queued deliveries", body = DeliveryList),
        (status = 400, description = "No callback set, or an invalid body", body = ErrorBody),
        (status = 401, description = "`Unauthorized` or `Invalid pay API credentials`", body = ErrorBody),
        (status = 404, description = "Unknown link, or another company's", body = ErrorBody),
    )
)]
#[post("/api/partner/v1/pay/webhook-requests/test")]
pub async fn send_test_event(
    pay: web::Data<Pay>,
    creds: Credentials,
    body: JsonBody,
) -> Result<HttpResponse, ApiError> {
    let sent = blocking(move || {
        let principal = creds.principal(&pay)?;
        let uid = body.read::<TestEventRequest>()?.payment_link_uid;
        Ok(pay
            .webhooks()
            .send_test_event(&principal, &link_uid(&uid)?)?)
    })
    .await?;
    Ok(HttpResponse::Accepted().json(DeliveryList {
        data: sent.into_iter().map(DeliveryDto::from).collect(),
    }))
}

// The document's `deliveryStatus`; the query itself is read by `read_filter`.
/// A delivery's status.
#[derive(Debug, Clone, Copy, utoipa::ToSchema)]
#[schema(rename_all = "lowercase")]
pub enum DeliveryStatusParam {
    Pending,
    Retrying,
    Succeeded,
    Failed,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_statuses_are_the_domains() {
        let doc =
            serde_json::to_value(<DeliveryStatusParam as utoipa::PartialSchema>::schema()).unwrap();
        let documented: Vec<&str> = doc["enum"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        let domain: Vec<&str> = DeliveryStatus::ALL.iter().map(|s| s.as_str()).collect();
        assert_eq!(documented, domain);
    }

    #[test]
    fn query_strings_are_read_strictly() {
        let f = read_filter("limit=10&paymentLinkUid=abc&deliveryStatus=failed&search=order%2042")
            .unwrap();
        assert_eq!(f.limit, 10);
        assert_eq!(f.payment_link_uid.as_deref(), Some("abc"));
        assert_eq!(f.status, Some(DeliveryStatus::Failed));
        assert_eq!(f.search.as_deref(), Some("order 42"));
        assert_eq!(read_filter("").unwrap(), DeliveryFilter::default());
        for bad in [
            "limit=0",
            "limit=201",
            "limit=x",
            "deliveryStatus=done",
            "limit=1&limit=2",
            "search=%zz",
            "search=%4",
        ] {
            assert!(read_filter(bad).is_err(), "{bad}");
        }
        assert!(
            matches!(read_filter("status=failed"), Err(ApiError::UnknownField(f)) if f.field == "status")
        );
    }
}
