//! `send-request-email`: queues a link's payment request for a customer. The mail goes into
//! the outbox in the request; the mailer sends it later (nothing is sent inline), hence 202.

use actix_web::http::StatusCode;
use actix_web::{post, web, HttpResponse};
use pay_domain::app::Pay;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;

use crate::edge::credentials::{blocking, Credentials};
use crate::edge::error::{ApiError, ErrorBody};
use crate::edge::idempotency::{json_answer, reply, Keyed, KeyedRequest, KEY_DOC};
use crate::edge::json::{from_object, parse_object};
use crate::edge::link_uid;

/// The body of `send-request-email`. The whole body is optional: no body, an empty one, `null`
/// or `{}` sends to the link's `customerEmail`.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SendRequestEmailRequest {
    #[serde(default)]
    #[schema(schema_with = crate::api::schema::recipient_email)]
    pub email: Option<String>,
}

/// The request was queued.
#[derive(Debug, Serialize, ToSchema)]
pub struct SendRequestEmailResponse {
    #[schema(example = true)]
    pub ok: bool,
    /// The address the mail goes to (trimmed, domain in lower case).
    #[schema(example = "payer@example.com")]
    pub email: String,
}

/// The body read as optional: an empty body (any or no content type) or a JSON `null` is
/// `None`; anything else must be one `application/json` object of at most 64 KiB, as for
/// every other route.
fn optional_object(body: &KeyedRequest) -> Result<Option<Map<String, Value>>, ApiError> {
    let raw = body.raw();
    if raw.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    if !body.is_json() {
        return Err(ApiError::UnsupportedMediaType);
    }
    // The document says the body is optional, which OpenAPI spells "an object or null".
    if raw.trim_ascii() == b"null" {
        return Ok(None);
    }
    parse_object(raw).map(Some)
}

/// The body as the route's request struct; its default when there was no body.
fn read_optional<T: DeserializeOwned + Default>(body: &KeyedRequest) -> Result<T, ApiError> {
    Ok(optional_object(body)?
        .map(from_object)
        .transpose()?
        .unwrap_or_default())
}

/// Send (or resend) a link's payment request by e-mail: a plain-text and an HTML message with
/// the hosted checkout URL. The mail is queued in the outbox and sent by the mailer; each call
/// queues one more mail.
#[utoipa::path(
    tag = "Payment links",
    params(
        ("uid" = String, Path, description = "Public link identifier"),
        ("Idempotency-Key" = Option<String>, Header, min_length = 1, max_length = 255, pattern = "^[ -~]*[!-~][ -~]*$", description = KEY_DOC),
    ),
    request_body(
        content = Option<SendRequestEmailRequest>,
        description = "Optional: no body, an empty body, `null` or `{}` sends to the link's `customerEmail`",
        content_type = "application/json"
    ),
    security(("apiKeyId" = [], "apiKeySecret" = []), ("session" = [])),
    responses(
        (status = 202, description = "Queued for sending; a replay (same key, byte-identical body) carries `Idempotent-Replayed: true` and queues nothing", body = SendRequestEmailResponse),
        (status = 400, description = "`missing_email` (no `email` and no `customerEmail` on the link), `validation_failed` (field `email` or `Idempotency-Key`), `invalid_json`, `unknown_field`", body = ErrorBody),
        (status = 401, description = "`Unauthorized` or `Invalid pay API credentials`", body = ErrorBody),
        (status = 403, description = "Session without `settings.manage` or CSRF token", body = ErrorBody),
        (status = 404, description = "Unknown, or another company's", body = ErrorBody),
        (status = 409, description = "`link_not_active`: the link is paused, archived or expired; `idempotency_key_reused` (the key was used for another request) or `idempotency_key_in_flight` (the first is still running)", body = ErrorBody),
        (status = 413, description = "Body over 64 KiB", body = ErrorBody),
        (status = 415, description = "A non-empty body that is not application/json", body = ErrorBody),
        (status = 429, description = "`rate_limited`: too many request mails for this link or to this recipient (`Retry-After` in seconds)", body = ErrorBody),
    )
)]
#[post("/api/partner/v1/pay/payment-links/{uid}/send-request-email")]
pub async fn send_request_email(
    pay: web::Data<Pay>,
    creds: Credentials,
    uid: web::Path<String>,
    body: Keyed,
) -> Result<HttpResponse, ApiError> {
    let uid = uid.into_inner();
    blocking(move || {
        let principal = creds.principal(&pay)?;
        let body = body.open()?;
        let email = read_optional::<SendRequestEmailRequest>(&body)?.email;
        let render = |email: &String| {
            json_answer(
                StatusCode::ACCEPTED,
                &SendRequestEmailResponse {
                    ok: true,
                    email: email.clone(),
                },
            )
        };
        let answer = pay.mail().send_request_email_keyed(
            &principal,
            &link_uid(&uid)?,
            email,
            body.call(&render)?,
        )?;
        reply(answer, &render)
    })
    .await?
    .response()
}
