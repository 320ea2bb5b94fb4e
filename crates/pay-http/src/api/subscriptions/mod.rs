//! Subscriptions: create (customer upserted, cycle 0 issued), list with cycles, read, and the
//! merchant's status moves.

pub mod dto;

use actix_web::http::StatusCode;
use actix_web::{get, patch, post, web, HttpResponse};
use pay_domain::app::Pay;
use pay_domain::subscriptions::{CreateSubscriptionInput, SubscriptionStatus, SubscriptionView};
use pay_domain::FieldError;

use crate::api::subscriptions::dto::{
    CreateSubscriptionRequest, SubscriptionDto, SubscriptionList, UpdateSubscriptionRequest,
};
use crate::edge::credentials::{blocking, Credentials};
use crate::edge::error::{ApiError, ErrorBody};
use crate::edge::idempotency::{json_answer, reply, Keyed, CONFLICT_DOC, KEY_DOC};
use crate::edge::json::JsonBody;

fn dto(pay: &Pay, v: SubscriptionView) -> SubscriptionDto {
    SubscriptionDto::new(v, |c| pay.subscriptions().payment_url(c))
}

/// Create a subscription: the customer is upserted by `customerEmail`, cycle 0 is due at
/// `startAt` (default now) and its invoice link is issued at once. Scope
/// `pay:subscriptions:write`.
#[utoipa::path(
    tag = "Subscriptions",
    request_body = CreateSubscriptionRequest,
    params(("Idempotency-Key" = Option<String>, Header, min_length = 1, max_length = 255, pattern = "^[ -~]*[!-~][ -~]*$", description = KEY_DOC)),
    security(("apiKeyId" = [], "apiKeySecret" = []), ("session" = [])),
    responses(
        (status = 201, description = "The subscription with cycle 0 and its invoice link; a replay carries `Idempotent-Replayed: true`", body = SubscriptionDto),
        (status = 400, description = "Invalid body (the field is named); `invalid_destination_asset` for `settlementAsset`; `validation_failed` on `Idempotency-Key`", body = ErrorBody),
        (status = 401, description = "`Unauthorized` or `Invalid pay API credentials` (also a grant without `pay:subscriptions:write`)", body = ErrorBody),
        (status = 403, description = "Session without `settings.manage` or CSRF token", body = ErrorBody),
        (status = 409, description = CONFLICT_DOC, body = ErrorBody),
    )
)]
#[post("/api/partner/v1/pay/subscriptions")]
pub async fn create_subscription(
    pay: web::Data<Pay>,
    creds: Credentials,
    body: Keyed,
) -> Result<HttpResponse, ApiError> {
    blocking(move || {
        let principal = creds.principal(&pay)?;
        let body = body.open()?;
        let input = CreateSubscriptionInput::from(body.read::<CreateSubscriptionRequest>()?);
        let render =
            |view: &SubscriptionView| json_answer(StatusCode::CREATED, &dto(&pay, view.clone()));
        let answer = pay.subscriptions().create_subscription_keyed(
            &principal,
            input,
            body.call(&render)?,
        )?;
        reply(answer, &render)
    })
    .await?
    .response()
}

/// List up to 200 newest subscriptions with their cycles: company-wide for API keys and
/// sessions, the grant's own for OAuth. Scope `pay:subscriptions:read`.
#[utoipa::path(
    tag = "Subscriptions",
    security(("apiKeyId" = [], "apiKeySecret" = []), ("session" = [])),
    responses(
        (status = 200, description = "Newest first", body = SubscriptionList),
        (status = 401, description = "`Unauthorized` or `Invalid pay API credentials`", body = ErrorBody),
    )
)]
#[get("/api/partner/v1/pay/subscriptions")]
pub async fn list_subscriptions(
    pay: web::Data<Pay>,
    creds: Credentials,
) -> Result<HttpResponse, ApiError> {
    let p = pay.clone();
    let views = blocking(move || {
        Ok(p.subscriptions()
            .list_subscriptions(&creds.principal(&p)?)?)
    })
    .await?;
    Ok(HttpResponse::Ok().json(SubscriptionList {
        data: views.into_iter().map(|v| dto(&pay, v)).collect(),
    }))
}

/// A subscription with its cycles. Scope `pay:subscriptions:read`.
#[utoipa::path(
    tag = "Subscriptions",
    params(("uid" = String, Path, description = "The subscription's `uid`")),
    security(("apiKeyId" = [], "apiKeySecret" = []), ("session" = [])),
    responses(
        (status = 200, description = "The subscription", body = SubscriptionDto),
        (status = 401, description = "`Unauthorized` or `Invalid pay API credentials`", body = ErrorBody),
        (status = 404, description = "Unknown, or another company's (or grant's)", body = ErrorBody),
    )
)]
#[get("/api/partner/v1/pay/subscriptions/{uid}")]
pub async fn get_subscription(
    pay: web::Data<Pay>,
    creds: Credentials,
    uid: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let p = pay.clone();
    let uid = uid.into_inner();
    let view = blocking(move || {
        let principal = creds.principal(&p)?;
        let uid = crate::edge::subscription_uid(&uid)?;
        Ok(p.subscriptions().get_subscription(&principal, &uid)?)
    })
    .await?;
    Ok(HttpResponse::Ok().json(dto(&pay, view)))
}

/// Move a subscription: active|overdue -> paused, paused -> active, any but cancelled ->
/// cancelled (its unpaid cycles are cancelled and their links archived). The same status is a
/// no-op; every move sends `pay.subscription.status_changed`. Scope
/// `pay:subscriptions:write`.
#[utoipa::path(
    tag = "Subscriptions",
    params(("uid" = String, Path, description = "The subscription's `uid`")),
    request_body = UpdateSubscriptionRequest,
    security(("apiKeyId" = [], "apiKeySecret" = []), ("session" = [])),
    responses(
        (status = 200, description = "The subscription after the move", body = SubscriptionDto),
        (status = 400, description = "Invalid body", body = ErrorBody),
        (status = 401, description = "`Unauthorized` or `Invalid pay API credentials`", body = ErrorBody),
        (status = 403, description = "Session without `settings.manage` or CSRF token", body = ErrorBody),
        (status = 404, description = "Unknown, or another company's (or grant's)", body = ErrorBody),
        (status = 409, description = "`invalid_status_transition`", body = ErrorBody),
    )
)]
#[patch("/api/partner/v1/pay/subscriptions/{uid}")]
pub async fn update_subscription(
    pay: web::Data<Pay>,
    creds: Credentials,
    uid: web::Path<String>,
    body: JsonBody,
) -> Result<HttpResponse, ApiError> {
    let p = pay.clone();
    let uid = uid.into_inner();
    let view = blocking(move || {
        let principal = creds.principal(&p)?;
        let status = body.read::<UpdateSubscriptionRequest>()?.status;
        let to = SubscriptionStatus::parse(&status).ok_or_else(|| {
            FieldError::new(
                "status",
                "status must be active, paused, overdue or cancelled",
            )
        })?;
        let uid = crate::edge::subscription_uid(&uid)?;
        Ok(p.subscriptions()
            .set_subscription_status(&principal, &uid, to)?)
    })
    .await?;
    Ok(HttpResponse::Ok().json(dto(&pay, view)))
}
