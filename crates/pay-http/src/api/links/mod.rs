//! Payment links: create, list, detail, status.

pub mod dto;

use actix_web::http::header::ContentType;
use actix_web::http::StatusCode;
use actix_web::{get, patch, post, web, HttpRequest, HttpResponse};
use pay_domain::app::Pay;
use pay_domain::kernel::idempotency::HEADER as IDEMPOTENCY_KEY;
use pay_domain::links::{CreateAnonymousLinkInput, CreateLinkInput, LinkStatus, PaymentLink};
use pay_domain::{Fault, FieldError};

use crate::api::links::dto::{
    AnonymousLinkDto, CreateAnonymousLinkRequest, CreatePaymentLinkRequest, PaymentLinkDetailDto,
    PaymentLinkDto, PaymentLinkList, UpdateLinkStatusRequest,
};
use crate::edge::credentials::{blocking, Credentials};
use crate::edge::error::{ApiError, ErrorBody};
use crate::edge::idempotency::{json_answer, reply, Keyed, CONFLICT_DOC, KEY_DOC};
use crate::edge::json::JsonBody;
use crate::edge::link_uid;

async fn anonymous(
    pay: web::Data<Pay>,
    req: HttpRequest,
    body: JsonBody,
) -> Result<HttpResponse, ApiError> {
    let addr = crate::edge::client_addr(&req);
    let p = pay.clone();
    let (link, secret) = blocking(move || {
        let input = CreateAnonymousLinkInput::try_from(body.read::<CreateAnonymousLinkRequest>()?)?;
        Ok(p.links().create_anonymous_link(input, &addr)?)
    })
    .await?;
    Ok(HttpResponse::Created()
        .insert_header(("cache-control", "no-store"))
        .json(AnonymousLinkDto {
            link: PaymentLinkDto::new(&link, pay.public_pay_url(), pay.now()),
            webhook_secret: secret.map(|s| s.expose().to_owned()),
        }))
}

/// Create an anonymous one-time link: no account; it settles to the first of your
/// `settlement.priorities` the service can settle, is branded with `branding`, and reports to
/// `webhookUrl` with a signing secret returned only here. 30 per minute per client address.
#[utoipa::path(
    tag = "Payment links",
    request_body = CreateAnonymousLinkRequest,
    responses(
        (status = 201, description = "The link, and `webhookSecret` when a `webhookUrl` was given", body = AnonymousLinkDto),
        (status = 400, description = "Invalid body; `invalid_destination_asset` when no priority can be settled", body = ErrorBody),
        (status = 429, description = "Too many from this address; see `Retry-After`", body = ErrorBody),
    )
)]
#[post("/api/public/anonymous-payment-links")]
pub async fn create_anonymous_link(
    pay: web::Data<Pay>,
    req: HttpRequest,
    body: JsonBody,
) -> Result<HttpResponse, ApiError> {
    anonymous(pay, req, body).await
}

/// Create a payment link.
#[utoipa::path(
    tag = "Payment links",
    request_body(
        content = CreatePaymentLinkRequest,
        description = "With a credential, this body. Without any credential (the optional `{}` security), the body of `POST /api/public/anonymous-payment-links`, which creates an anonymous one-time link"
    ),
    params(("Idempotency-Key" = Option<String>, Header, min_length = 1, max_length = 255, pattern = "^[ -~]*[!-~][ -~]*$", description = KEY_DOC)),
    security((), ("apiKeyId" = [], "apiKeySecret" = []), ("session" = [])),
    responses(
        (status = 201, description = "The new link (without any credential: an anonymous one-time link, as `POST /api/public/anonymous-payment-links`); a replay carries `Idempotent-Replayed: true`", body = PaymentLinkDto),
        (status = 409, description = CONFLICT_DOC, body = ErrorBody),
        (status = 429, description = "Without a credential: more than 30 anonymous links a minute from this address; see `Retry-After`", body = ErrorBody),
        (status = 400, description = "Invalid body (`invalid_json`, `unknown_field`, `validation_failed`, `invalid_destination_asset`, `ambiguous_currency`, `missing_destination_asset`); `validation_failed` on `Idempotency-Key` (also given without a credential)", body = ErrorBody),
        (status = 401, description = "`Unauthorized` or `Invalid pay API credentials`", body = ErrorBody),
        (status = 403, description = "Session without `settings.manage` or CSRF token", body = ErrorBody),
        (status = 413, description = "Body over 64 KiB", body = ErrorBody),
        (status = 415, description = "Not application/json", body = ErrorBody),
    )
)]
#[post("/api/partner/v1/pay/payment-links")]
pub async fn create_link(
    pay: web::Data<Pay>,
    creds: Credentials,
    req: HttpRequest,
    body: Keyed,
) -> Result<HttpResponse, ApiError> {
    // Without any credential the spec creates an anonymous one-time link. Half a key pair, a
    // bad session or an `Authorization` header is still a credential, and fails as one.
    if matches!(creds, Credentials::None) {
        let body = body.open().and_then(|b| {
            if b.has_key() {
                // Keys are scoped per credential: there is none to scope this one.
                return Err(ApiError::invalid(
                    IDEMPOTENCY_KEY,
                    "an anonymous link takes no Idempotency-Key (it needs a credential)",
                ));
            }
            b.object()
        });
        return anonymous(pay, req, JsonBody(body)).await;
    }
    blocking(move || {
        let principal = creds.principal(&pay)?;
        let body = body.open()?;
        let input = CreateLinkInput::from(body.read::<CreatePaymentLinkRequest>()?);
        let company = principal.company_id;
        let render = |link: &PaymentLink| {
            let (base, now) = pay.tenancy().pay_base_and_now(company)?;
            json_answer(StatusCode::CREATED, &PaymentLinkDto::new(link, &base, now))
        };
        let answer = pay
            .links()
            .create_link_keyed(&principal, input, body.call(&render)?)?;
        reply(answer, &render)
    })
    .await?
    .response()
}

/// List up to 200 newest payment links.
#[utoipa::path(
    tag = "Payment links",
    security(("apiKeyId" = [], "apiKeySecret" = []), ("session" = [])),
    responses(
        (status = 200, description = "Newest first; anonymous links excluded", body = PaymentLinkList),
        (status = 401, description = "`Unauthorized` or `Invalid pay API credentials`", body = ErrorBody),
    )
)]
#[get("/api/partner/v1/pay/payment-links")]
pub async fn list_links(pay: web::Data<Pay>, creds: Credentials) -> Result<HttpResponse, ApiError> {
    let p = pay.clone();
    // Serialised on the blocking thread that decoded the rows: the response borrows them, and
    // they are freed where they were allocated.
    let body = blocking(move || {
        let principal = creds.principal(&p)?;
        let links = p.links().list_links(&principal)?;
        let (base, now) = p.tenancy().pay_base_and_now(principal.company_id)?;
        let data: Vec<_> = links
            .iter()
            .map(|l| PaymentLinkDto::new(l, &base, now))
            .collect();
        // About 1 KB a link: one buffer, no regrowth on the way.
        let mut body = Vec::with_capacity(64 + 1024 * data.len());
        serde_json::to_writer(&mut body, &PaymentLinkList { data })
            .map_err(|e| ApiError::Fault(Fault::caused("list response", e)))?;
        Ok(body)
    })
    .await?;
    Ok(HttpResponse::Ok()
        .content_type(ContentType::json())
        .body(body))
}

/// A payment link with its latest session and timeline.
#[utoipa::path(
    tag = "Payment links",
    params(("uid" = String, Path, description = "Public link identifier")),
    security(("apiKeyId" = [], "apiKeySecret" = []), ("session" = [])),
    responses(
        (status = 200, description = "The link", body = PaymentLinkDetailDto),
        (status = 401, description = "`Unauthorized` or `Invalid pay API credentials`", body = ErrorBody),
        (status = 404, description = "Unknown, or another company's", body = ErrorBody),
    )
)]
#[get("/api/partner/v1/pay/payment-links/{uid}")]
pub async fn get_link(
    pay: web::Data<Pay>,
    creds: Credentials,
    uid: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let p = pay.clone();
    let uid = uid.into_inner();
    let (detail, (base, now)) = blocking(move || {
        let principal = creds.principal(&p)?;
        let detail = p.checkout().link_detail(&principal, &link_uid(&uid)?)?;
        Ok((detail, p.tenancy().pay_base_and_now(principal.company_id)?))
    })
    .await?;
    Ok(HttpResponse::Ok().json(PaymentLinkDetailDto {
        link: PaymentLinkDto::new(&detail.link, &base, now),
        latest_session: detail.latest_session.map(Into::into),
        timeline: detail.timeline.into_iter().map(Into::into).collect(),
    }))
}

/// Change a link's status: active<->paused, active|paused->archived; the same status is a
/// no-op; nothing leaves archived.
#[utoipa::path(
    tag = "Payment links",
    params(("uid" = String, Path, description = "Public link identifier")),
    request_body = UpdateLinkStatusRequest,
    security(("apiKeyId" = [], "apiKeySecret" = []), ("session" = [])),
    responses(
        (status = 200, description = "The link after the change", body = PaymentLinkDto),
        (status = 400, description = "Invalid body", body = ErrorBody),
        (status = 401, description = "`Unauthorized` or `Invalid pay API credentials`", body = ErrorBody),
        (status = 404, description = "Unknown, or another company's", body = ErrorBody),
        (status = 409, description = "`invalid_status_transition`", body = ErrorBody),
    )
)]
#[patch("/api/partner/v1/pay/payment-links/{uid}")]
pub async fn update_link_status(
    pay: web::Data<Pay>,
    creds: Credentials,
    uid: web::Path<String>,
    body: JsonBody,
) -> Result<HttpResponse, ApiError> {
    let p = pay.clone();
    let uid = uid.into_inner();
    let link = blocking(move || {
        let principal = creds.principal(&p)?;
        let status = body.read::<UpdateLinkStatusRequest>()?.status;
        let to = LinkStatus::parse(&status).ok_or_else(|| {
            FieldError::new("status", "status must be active, paused or archived")
        })?;
        let link = p
            .links()
            .set_link_status(&principal, &link_uid(&uid)?, to)?;
        Ok((link, p.tenancy().pay_base_and_now(principal.company_id)?))
    })
    .await?;
    let (link, (base, now)) = link;
    Ok(HttpResponse::Ok().json(PaymentLinkDto::new(&link, &base, now)))
}
