//! The OAuth grant's own webhook subscription (`/api/partner/v1/pay/webhook-subscriptions/current`):
//! read, replace and disable, for grant-bound OAuth tokens only. Writes take an
//! `Idempotency-Key`: a byte-identical retry replays the first answer with
//! `Idempotent-Replayed: true`.

pub mod dto;

use actix_web::http::StatusCode;
use actix_web::{delete, get, put, web, HttpRequest, HttpResponse};
use pay_domain::app::Pay;
use pay_domain::tenancy::Scope;
use pay_domain::webhooks::{SubscriptionAnswer, SubscriptionInput};

use crate::api::webhook_subscription::dto::{GrantWebhookSubscriptionDto, PutSubscriptionRequest};
use crate::edge::credentials::{blocking, Credentials};
use crate::edge::error::{ApiError, ErrorBody};
use crate::edge::idempotency::{idempotency_key, ExactJson, REPLAYED_HEADER};
use crate::edge::json::{from_object, parse_object};

fn answered(a: SubscriptionAnswer) -> HttpResponse {
    let mut res = HttpResponse::build(if a.created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    });
    res.insert_header(("cache-control", "no-store"));
    if a.replayed {
        res.insert_header((REPLAYED_HEADER, "true"));
    }
    res.json(GrantWebhookSubscriptionDto::from(a))
}

/// The current grant's webhook subscription: `secretLast4` while active, never the secret.
#[utoipa::path(
    tag = "Webhooks",
    security(("oauthToken" = [])),
    responses(
        (status = 200, description = "The subscription (a disabled one: `active: false`, no `secretLast4`)", body = GrantWebhookSubscriptionDto),
        (status = 401, description = "`Invalid pay API credentials`: not a grant-bound OAuth token (API keys and sessions are refused), or no `pay:webhooks:read`", body = ErrorBody),
        (status = 404, description = "`not_found`: the grant has no subscription yet", body = ErrorBody),
    )
)]
#[get("/api/partner/v1/pay/webhook-subscriptions/current")]
pub async fn get_subscription(
    pay: web::Data<Pay>,
    creds: Credentials,
) -> Result<HttpResponse, ApiError> {
    let view = blocking(move || {
        let p = creds.principal(&pay)?;
        Ok(pay.webhooks().grant_subscription(&p)?)
    })
    .await?;
    Ok(HttpResponse::Ok()
        .insert_header(("cache-control", "no-store"))
        .json(GrantWebhookSubscriptionDto::of(view, None)))
}

/// Create or replace the current grant's webhook subscription. `signingSecret` is returned
/// once: on creation, with `rotateSecret: true`, and when a disabled one is reactivated.
#[utoipa::path(
    tag = "Webhooks",
    request_body = PutSubscriptionRequest,
    params(
        ("Idempotency-Key" = Option<String>, Header, description = "1 to 255 printable ASCII characters; scoped to the grant, method and route, kept 24 hours"),
    ),
    security(("oauthToken" = [])),
    responses(
        (status = 201, description = "Created, with `signingSecret`", body = GrantWebhookSubscriptionDto),
        (status = 200, description = "Replaced (`signingSecret` on rotation or reactivation); a replay carries `Idempotent-Replayed: true`", body = GrantWebhookSubscriptionDto),
        (status = 400, description = "`validation_failed` on the field at fault (`url` or its alias, `events[i]`, `description`, `metadata`, `rotateSecret`, `Idempotency-Key`), `unknown_field`, `invalid_json`", body = ErrorBody),
        (status = 401, description = "`Invalid pay API credentials`: not a grant-bound OAuth token, or no `pay:webhooks:write`", body = ErrorBody),
        (status = 409, description = "`idempotency_key_reused` (the key was used for another request) or `idempotency_key_in_flight` (the first is still running)", body = ErrorBody),
    )
)]
#[put("/api/partner/v1/pay/webhook-subscriptions/current")]
pub async fn put_subscription(
    pay: web::Data<Pay>,
    creds: Credentials,
    req: HttpRequest,
    body: ExactJson,
) -> Result<HttpResponse, ApiError> {
    let key = idempotency_key(&req);
    let answer = blocking(move || {
        let p = creds.principal(&pay)?;
        // Credentials before the body: a key or a session gets its 401 whatever it sent.
        p.authorize_grant(Scope::WebhooksWrite)?;
        let key = key?;
        let bytes = body.0?;
        let input: PutSubscriptionRequest = from_object(parse_object(&bytes)?)?;
        // `parse_object` accepted the bytes, so they are UTF-8.
        let text = String::from_utf8_lossy(&bytes);
        Ok(pay.webhooks().put_grant_subscription(
            &p,
            SubscriptionInput::from(input),
            key.as_deref(),
            &text,
        )?)
    })
    .await?;
    Ok(answered(answer))
}

/// Disable the current grant's webhook subscription and erase its signing secret; the record
/// stays for connection status (a later PUT reactivates it with a new secret).
#[utoipa::path(
    tag = "Webhooks",
    params(
        ("Idempotency-Key" = Option<String>, Header, description = "1 to 255 printable ASCII characters; scoped to the grant, method and route, kept 24 hours"),
    ),
    security(("oauthToken" = [])),
    responses(
        (status = 200, description = "The disabled subscription; a replay carries `Idempotent-Replayed: true`", body = GrantWebhookSubscriptionDto),
        (status = 400, description = "`validation_failed` on `Idempotency-Key`", body = ErrorBody),
        (status = 401, description = "`Invalid pay API credentials`: not a grant-bound OAuth token, or no `pay:webhooks:write`", body = ErrorBody),
        (status = 404, description = "`not_found`: the grant has no subscription", body = ErrorBody),
        (status = 409, description = "`idempotency_key_reused` or `idempotency_key_in_flight`", body = ErrorBody),
    )
)]
#[delete("/api/partner/v1/pay/webhook-subscriptions/current")]
pub async fn delete_subscription(
    pay: web::Data<Pay>,
    creds: Credentials,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let key = idempotency_key(&req);
    let answer = blocking(move || {
        let p = creds.principal(&pay)?;
        p.authorize_grant(Scope::WebhooksWrite)?;
        Ok(pay
            .webhooks()
            .delete_grant_subscription(&p, key?.as_deref())?)
    })
    .await?;
    Ok(answered(answer))
}
