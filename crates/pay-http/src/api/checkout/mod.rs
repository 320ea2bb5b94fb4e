//! The public Checkout API (the hosted page is built on it; an embedded checkout can use it
//! alone), the sandbox processor's events and test clock, and the merchant's manual
//! resolution of an underpayment.

pub mod dto;
pub mod settlement;

use actix_web::{get, post, web, HttpResponse};
use pay_domain::app::Pay;
use pay_domain::checkout::CheckoutError;
use pay_domain::checkout::PaymentSession;
use pay_domain::checkout::{CheckoutService, Resolution};
use pay_domain::kernel::ids::{LinkUid, PaymentSessionId};
use pay_domain::sandbox::SandboxEvent;
use pay_domain::FieldError;

use crate::api::checkout::dto::{
    AdvanceClockRequest, CheckoutDto, ClockDto, ManualResolutionRequest, PaymentSessionDto,
    RefundAddressRequest, SandboxEventRequest, StartSessionRequest,
};
use crate::edge::credentials::{blocking, Credentials};
use crate::edge::error::{ApiError, ErrorBody};
use crate::edge::json::{number_text, JsonBody};
use crate::edge::{link_uid, session_id};

fn session_response(status: actix_web::http::StatusCode, s: PaymentSessionDto) -> HttpResponse {
    HttpResponse::build(status)
        .insert_header(("cache-control", "no-store"))
        .json(s)
}

/// A use case on one session of a link, answered with the session (200).
async fn payer_move(
    pay: web::Data<Pay>,
    path: web::Path<(String, String)>,
    act: fn(&CheckoutService, &LinkUid, PaymentSessionId) -> Result<PaymentSession, CheckoutError>,
) -> Result<HttpResponse, ApiError> {
    let (uid, id) = path.into_inner();
    let s = blocking(move || {
        let uid = link_uid(&uid)?;
        Ok(act(pay.checkout(), &uid, session_id(&id)?)?)
    })
    .await?;
    Ok(session_response(actix_web::http::StatusCode::OK, s.into()))
}

/// The public view of a payment link: what it asks, who asks, what it can be paid with.
#[utoipa::path(
    tag = "Checkout",
    params(("uid" = String, Path, description = "Public link identifier")),
    responses(
        (status = 200, description = "The link's public view", body = CheckoutDto),
        (status = 404, description = "Unknown link", body = ErrorBody),
    )
)]
#[get("/api/public/checkout/{uid}")]
pub async fn checkout_view(
    pay: web::Data<Pay>,
    uid: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let uid = uid.into_inner();
    let view = blocking(move || Ok(pay.checkout().checkout_view(&link_uid(&uid)?)?)).await?;
    Ok(HttpResponse::Ok()
        .insert_header(("cache-control", "no-store"))
        .json(CheckoutDto::from(view)))
}

/// Start a payment session paying with `payAsset`: a quote to review (`quote`), or, when the
/// link skips the review, an open deposit channel (`pending`).
#[utoipa::path(
    tag = "Checkout",
    params(("uid" = String, Path, description = "Public link identifier")),
    request_body = StartSessionRequest,
    responses(
        (status = 201, description = "The new session", body = PaymentSessionDto),
        (status = 400, description = "Invalid body or `payAsset`", body = ErrorBody),
        (status = 404, description = "Unknown link", body = ErrorBody),
        (status = 409, description = "`link_not_active` (paused, archived, expired), `missing_company_wallet` (no merchant wallet for the asset) or `price_unavailable` (no fresh price of the pay asset: no quote)", body = ErrorBody),
        (status = 429, description = "More than 60 starts a minute from this address; see `Retry-After`", body = ErrorBody),
    )
)]
#[post("/api/public/checkout/{uid}/sessions")]
pub async fn start_session(
    pay: web::Data<Pay>,
    req: actix_web::HttpRequest,
    uid: web::Path<String>,
    body: JsonBody,
) -> Result<HttpResponse, ApiError> {
    let uid = uid.into_inner();
    let addr = crate::edge::client_addr(&req);
    let s = blocking(move || {
        let asset = body.read::<StartSessionRequest>()?.pay_asset;
        Ok(pay
            .checkout()
            .start_session(&link_uid(&uid)?, &asset, &addr)?)
    })
    .await?;
    Ok(session_response(
        actix_web::http::StatusCode::CREATED,
        s.into(),
    ))
}

/// A session of the link (work that fell due, such as expiry, is applied first).
#[utoipa::path(
    tag = "Checkout",
    params(
        ("uid" = String, Path, description = "Public link identifier"),
        ("sessionId" = String, Path, description = "Session id"),
    ),
    responses(
        (status = 200, description = "The session", body = PaymentSessionDto),
        (status = 404, description = "Unknown link or session", body = ErrorBody),
    )
)]
#[get("/api/public/checkout/{uid}/sessions/{sessionId}")]
pub async fn get_session(
    pay: web::Data<Pay>,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, ApiError> {
    payer_move(pay, path, CheckoutService::checkout_session).await
}

/// Accept the quote: the deposit channel opens (`pending`).
#[utoipa::path(
    tag = "Checkout",
    params(
        ("uid" = String, Path, description = "Public link identifier"),
        ("sessionId" = String, Path, description = "Session id"),
    ),
    responses(
        (status = 200, description = "The session after the move", body = PaymentSessionDto),
        (status = 404, description = "Unknown link or session", body = ErrorBody),
        (status = 409, description = "`invalid_status_transition`, or `link_not_active`", body = ErrorBody),
    )
)]
#[post("/api/public/checkout/{uid}/sessions/{sessionId}/accept")]
pub async fn accept_session(
    pay: web::Data<Pay>,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, ApiError> {
    payer_move(pay, path, CheckoutService::accept_session).await
}

/// Cancel a session that waits for the payer (`quote` or `pending`).
#[utoipa::path(
    tag = "Checkout",
    params(
        ("uid" = String, Path, description = "Public link identifier"),
        ("sessionId" = String, Path, description = "Session id"),
    ),
    responses(
        (status = 200, description = "The session after the move", body = PaymentSessionDto),
        (status = 404, description = "Unknown link or session", body = ErrorBody),
        (status = 409, description = "`invalid_status_transition`, or `link_not_active`", body = ErrorBody),
    )
)]
#[post("/api/public/checkout/{uid}/sessions/{sessionId}/cancel")]
pub async fn cancel_session(
    pay: web::Data<Pay>,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, ApiError> {
    payer_move(pay, path, CheckoutService::cancel_session).await
}

/// Refresh the prices of a quote that has not expired (a new 10-minute quote).
#[utoipa::path(
    tag = "Checkout",
    params(
        ("uid" = String, Path, description = "Public link identifier"),
        ("sessionId" = String, Path, description = "Session id"),
    ),
    responses(
        (status = 200, description = "The session after the move", body = PaymentSessionDto),
        (status = 404, description = "Unknown link or session", body = ErrorBody),
        (status = 409, description = "`invalid_status_transition`, or `link_not_active`", body = ErrorBody),
    )
)]
#[post("/api/public/checkout/{uid}/sessions/{sessionId}/refresh")]
pub async fn refresh_quote(
    pay: web::Data<Pay>,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, ApiError> {
    payer_move(pay, path, CheckoutService::refresh_quote).await
}

/// Give the address a refund goes to (a session in `refund_pending`).
#[utoipa::path(
    tag = "Checkout",
    params(
        ("uid" = String, Path, description = "Public link identifier"),
        ("sessionId" = String, Path, description = "Session id"),
    ),
    request_body = RefundAddressRequest,
    responses(
        (status = 200, description = "The session", body = PaymentSessionDto),
        (status = 400, description = "Invalid body, or `address` is not an address of the chain paid on (`validation_failed`, the message names the chain)", body = ErrorBody),
        (status = 404, description = "Unknown link or session", body = ErrorBody),
        (status = 409, description = "`invalid_status_transition`: no refund is pending; `refund_address_already_set`: an address was already given (the first one stays)", body = ErrorBody),
    )
)]
#[post("/api/public/checkout/{uid}/sessions/{sessionId}/refund-address")]
pub async fn refund_address(
    pay: web::Data<Pay>,
    path: web::Path<(String, String)>,
    body: JsonBody,
) -> Result<HttpResponse, ApiError> {
    let (uid, id) = path.into_inner();
    let s = blocking(move || {
        let address = body.read::<RefundAddressRequest>()?.address;
        let uid = link_uid(&uid)?;
        Ok(pay
            .checkout()
            .submit_refund_address(&uid, session_id(&id)?, &address)?)
    })
    .await?;
    Ok(session_response(actix_web::http::StatusCode::OK, s.into()))
}

/// A sandbox event, its id and the session it drives (default: the latest).
type SandboxRequest = (SandboxEvent, Option<String>, Option<PaymentSessionId>);

fn read_sandbox_event(body: JsonBody) -> Result<SandboxRequest, ApiError> {
    let r: SandboxEventRequest = body.read()?;
    let event = SandboxEvent::parse(&r.kind, r.amount.as_deref(), r.hold)?;
    let session = r.session_id.as_deref().map(session_id).transpose()?;
    Ok((event, r.event_id, session))
}

/// Sandbox: drive the link's latest session as a chain would (`deposit` settles at once
/// unless `hold`; `settle`, `expire`, `fail`, `refund`). Off outside sandbox mode.
#[utoipa::path(
    tag = "Sandbox",
    params(("uid" = String, Path, description = "Public link identifier")),
    request_body = SandboxEventRequest,
    security(("apiKeyId" = [], "apiKeySecret" = []), ("session" = [])),
    responses(
        (status = 200, description = "The session after the event", body = PaymentSessionDto),
        (status = 400, description = "Invalid body", body = ErrorBody),
        (status = 401, description = "`Unauthorized` or `Invalid pay API credentials`", body = ErrorBody),
        (status = 404, description = "Unknown link, another company's, no session, or not in sandbox mode", body = ErrorBody),
        (status = 409, description = "`invalid_status_transition`", body = ErrorBody),
    )
)]
#[post("/api/partner/v1/pay/sandbox/payment-links/{uid}/events")]
pub async fn sandbox_event(
    pay: web::Data<Pay>,
    creds: Credentials,
    uid: web::Path<String>,
    body: JsonBody,
) -> Result<HttpResponse, ApiError> {
    let uid = uid.into_inner();
    let s = blocking(move || {
        let p = creds.principal(&pay)?;
        let (event, id, session) = read_sandbox_event(body)?;
        Ok(pay.sandbox().sandbox_event(
            Some(&p),
            &link_uid(&uid)?,
            event,
            id.as_deref(),
            session,
        )?)
    })
    .await?;
    Ok(session_response(actix_web::http::StatusCode::OK, s.into()))
}

/// Sandbox: the same for anonymous links, without credentials.
#[utoipa::path(
    tag = "Sandbox",
    params(("uid" = String, Path, description = "Public identifier of an anonymous link")),
    request_body = SandboxEventRequest,
    responses(
        (status = 200, description = "The session after the event", body = PaymentSessionDto),
        (status = 400, description = "Invalid body", body = ErrorBody),
        (status = 404, description = "Unknown or not anonymous link, no session, or not in sandbox mode", body = ErrorBody),
        (status = 409, description = "`invalid_status_transition`", body = ErrorBody),
    )
)]
#[post("/api/public/sandbox/payment-links/{uid}/events")]
pub async fn public_sandbox_event(
    pay: web::Data<Pay>,
    uid: web::Path<String>,
    body: JsonBody,
) -> Result<HttpResponse, ApiError> {
    let uid = uid.into_inner();
    let s = blocking(move || {
        let (event, id, session) = read_sandbox_event(body)?;
        Ok(pay
            .sandbox()
            .sandbox_event(None, &link_uid(&uid)?, event, id.as_deref(), session)?)
    })
    .await?;
    Ok(session_response(actix_web::http::StatusCode::OK, s.into()))
}

/// Sandbox: now on the calling company's test clock.
#[utoipa::path(
    tag = "Sandbox",
    security(("apiKeyId" = [], "apiKeySecret" = []), ("session" = [])),
    responses(
        (status = 200, description = "Now, on the company's test clock", body = ClockDto),
        (status = 401, description = "`Unauthorized` or `Invalid pay API credentials`", body = ErrorBody),
        (status = 404, description = "Not in sandbox mode", body = ErrorBody),
    )
)]
#[get("/api/partner/v1/pay/sandbox/clock")]
pub async fn get_clock(pay: web::Data<Pay>, creds: Credentials) -> Result<HttpResponse, ApiError> {
    let now = blocking(move || Ok(pay.sandbox().test_clock_now(&creds.principal(&pay)?)?)).await?;
    Ok(HttpResponse::Ok().json(ClockDto { now }))
}

/// Sandbox: move the calling company's test clock forward and run the work that became due
/// (expiry of its quotes, deposit requests, sessions of expired links; its webhook and mail
/// retries fall due by it too). Other companies' clocks and real time do not move.
#[utoipa::path(
    tag = "Sandbox",
    request_body = AdvanceClockRequest,
    security(("apiKeyId" = [], "apiKeySecret" = []), ("session" = [])),
    responses(
        (status = 200, description = "Now, after the move", body = ClockDto),
        (status = 400, description = "Invalid body, or the clock would run more than ten years ahead", body = ErrorBody),
        (status = 401, description = "`Unauthorized` or `Invalid pay API credentials`", body = ErrorBody),
        (status = 403, description = "A signed-in member without `settings.manage`", body = ErrorBody),
        (status = 404, description = "Not in sandbox mode", body = ErrorBody),
    )
)]
#[post("/api/partner/v1/pay/sandbox/clock")]
pub async fn advance_clock(
    pay: web::Data<Pay>,
    creds: Credentials,
    body: JsonBody,
) -> Result<HttpResponse, ApiError> {
    let now = blocking(move || {
        let p = creds.principal(&pay)?;
        let text = number_text(&body.read::<AdvanceClockRequest>()?.advance_seconds);
        let seconds: i64 = text.parse().map_err(|_| {
            FieldError::new("advanceSeconds", "advanceSeconds must be a whole number")
        })?;
        Ok(pay.sandbox().advance_test_clock(&p, seconds)?)
    })
    .await?;
    Ok(HttpResponse::Ok().json(ClockDto { now }))
}

/// Resolve the link's underpaid session by hand: `complete` keeps what arrived and completes
/// the payment (`manual_resolution_completed`); `refund` requests the payer's refund address.
#[utoipa::path(
    tag = "Payment links",
    params(("uid" = String, Path, description = "Public link identifier")),
    request_body = ManualResolutionRequest,
    security(("apiKeyId" = [], "apiKeySecret" = []), ("session" = [])),
    responses(
        (status = 200, description = "The session after the decision", body = PaymentSessionDto),
        (status = 400, description = "Invalid body", body = ErrorBody),
        (status = 401, description = "`Unauthorized` or `Invalid pay API credentials`", body = ErrorBody),
        (status = 404, description = "Unknown link, another company's, or no session", body = ErrorBody),
        (status = 409, description = "`invalid_status_transition`: the latest session is not underpaid", body = ErrorBody),
    )
)]
#[post("/api/partner/v1/pay/payment-links/{uid}/manual-resolution")]
pub async fn manual_resolution(
    pay: web::Data<Pay>,
    creds: Credentials,
    uid: web::Path<String>,
    body: JsonBody,
) -> Result<HttpResponse, ApiError> {
    let uid = uid.into_inner();
    let s = blocking(move || {
        let p = creds.principal(&pay)?;
        let action = body.read::<ManualResolutionRequest>()?.action;
        let resolution = Resolution::parse(&action)?;
        Ok(pay
            .checkout()
            .resolve_underpayment(&p, &link_uid(&uid)?, resolution)?)
    })
    .await?;
    Ok(session_response(actix_web::http::StatusCode::OK, s.into()))
}
