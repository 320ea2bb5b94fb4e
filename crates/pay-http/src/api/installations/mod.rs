//! Native installations: a commerce-platform plugin registers itself with a DPoP proof of the
//! key it generated (`POST {auth_url}/oauth/native/installations`), and gets a public,
//! DPoP-bound OAuth client; a key change also carries `DPoP-Previous` made with the registered
//! key.

pub mod dto;

use actix_web::http::StatusCode;
use actix_web::{post, web, HttpRequest, HttpResponse};
use pay_domain::app::Pay;

use crate::api::installations::dto::{NativeClientDto, RegistrationRequest};
use crate::edge::credentials::{
    all_values, blocking, token_refusal, verify_dpop, verify_rotation, DPOP_HEADER,
};
use crate::edge::error::{ApiError, ErrorBody};
use crate::edge::json::JsonBody;
use crate::HttpConfig;

/// The header of the proof made with the registered key on a key change.
pub const DPOP_PREVIOUS_HEADER: &str = "dpop-previous";

/// Register a native installation, or register it again.
///
/// The `DPoP` header must be a proof (`htm` POST, `htu` this URL under `PAY_AUTH_URL`) made
/// with the key whose thumbprint is `dpopJkt`. The first registration of a `registrationId`
/// answers 201; again with the same key, 200 with the same client. With another `dpopJkt`, a
/// `DPoP-Previous` proof made with the registered key is needed too (distinct `jti`): the new
/// key then becomes the accepted one at the merchant's next consent, which revokes the old
/// key's tokens; until then the old ones keep working. The support metadata (versions,
/// `siteName`) is updated by each registration and never changes the consent page's branding.
#[utoipa::path(
    tag = "OAuth",
    request_body = RegistrationRequest,
    params(
        ("DPoP" = String, Header, description = "A DPoP proof JWT made with the key `dpopJkt` names (`htm` POST, `htu` this URL)"),
        ("DPoP-Previous" = Option<String>, Header, description = "On a key change: a DPoP proof for the same request made with the registered key, with another `jti`"),
    ),
    responses(
        (status = 201, description = "Registered", body = NativeClientDto),
        (status = 200, description = "Registered before: the same client (a new key waits for consent)", body = NativeClientDto),
        (status = 400, description = "`validation_failed` on the field at fault (an unknown `platform` too), `unknown_field`, `invalid_json`", body = ErrorBody),
        (status = 401, description = "`Invalid pay API credentials` with `WWW-Authenticate: DPoP error=\"invalid_dpop_proof\"` (missing, invalid or replayed proof; a proof of another key than `dpopJkt`; a key change without `DPoP-Previous` of the registered key) or `use_dpop_nonce` (with `DPoP-Nonce`)", body = ErrorBody),
        (status = 409, description = "`registration_conflict`: this `registrationId` is registered with another `platform` or `siteUrl` (`field` says which)", body = ErrorBody),
        (status = 413, description = "`payload_too_large`", body = ErrorBody),
        (status = 415, description = "`unsupported_media_type`", body = ErrorBody),
    )
)]
#[post("/oauth/native/installations")]
pub async fn register_installation(
    pay: web::Data<Pay>,
    config: web::Data<HttpConfig>,
    req: HttpRequest,
    body: JsonBody,
) -> Result<HttpResponse, ApiError> {
    let proofs = all_values(&req, DPOP_HEADER);
    let previous = all_values(&req, DPOP_PREVIOUS_HEADER);
    let target = format!("{}{}", config.auth_url.trim_end_matches('/'), req.path());
    let nonces = config.dpop_nonces.clone();
    let client = blocking(move || {
        let input: RegistrationRequest = body.read()?;
        let installations = pay.installations();
        let reg = installations.check_registration(input.into())?;
        let refused = |error: &'static str, description: String| {
            token_refusal(true, nonces.as_deref(), error, description)
        };
        let target = Some(target.as_str());
        let (proof, previous) = match installations.key_to_replace(&reg)? {
            None => (
                verify_dpop(&pay, &proofs, "POST", target, None, nonces.as_deref())
                    .map_err(|e| refused(e.www_authenticate_error(), e.to_string()))?,
                None,
            ),
            Some(registered) => {
                let (proof, previous) = verify_rotation(
                    &pay,
                    &proofs,
                    &previous,
                    "POST",
                    target,
                    &registered,
                    nonces.as_deref(),
                )
                .map_err(|e| refused(e.www_authenticate_error(), e.to_string()))?;
                (proof, Some(previous))
            }
        };
        Ok(installations.register(reg, &proof, previous.as_ref())?)
    })
    .await?;
    let status = if client.created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok(HttpResponse::build(status)
        .insert_header(("cache-control", "no-store"))
        .json(NativeClientDto::from(client)))
}
