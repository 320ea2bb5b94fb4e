//! Partner onboarding: a partner's draft of a merchant's company
//! (`POST /api/partner/v1/onboarding/company`, with the partner's onboarding secret), answered
//! with the claim URL the merchant opens (`pages::onboarding`).

pub mod dto;

use actix_web::http::StatusCode;
use actix_web::{post, web, HttpRequest, HttpResponse};
use pay_domain::app::Pay;

use crate::api::onboarding::dto::{DraftBody, DraftDto, DraftResponse};
use crate::edge::credentials::{bearer_secret, blocking};
use crate::edge::error::{ApiError, ErrorBody};
use crate::edge::json::JsonBody;
use crate::HttpConfig;

/// The claim page's path under `PAY_BASE_URL`.
pub const CLAIM_PATH: &str = "/onboarding/claim";

/// Create a merchant's onboarding draft.
///
/// `Authorization: Bearer <onboarding secret>` (from `pay-server admin create-partner`). Every
/// field is checked first, `oauth` against its application: a registered `client_id` (not a
/// native installation's), exactly one of its redirect URIs, scopes it may ask for, PKCE S256.
/// The first call with an `idempotencyKey` answers 201; the same key with the same body, the
/// same draft and claim URL (200, whatever its status now); with another body, 409
/// `idempotency_key_reused`. The merchant opens `claimUrl`, signs up or in, and owns the new
/// company; with `oauth` the browser then goes to `redirectUri` with `code` and `state`, to be
/// exchanged at `/oauth/token` with the `code_verifier`. A draft expires unclaimed after 7 days
/// and is claimed at most once.
#[utoipa::path(
    tag = "Onboarding",
    request_body = DraftBody,
    security(("onboardingSecret" = [])),
    responses(
        (status = 201, description = "Draft created", body = DraftResponse),
        (status = 200, description = "The draft of this `idempotencyKey`, the same body: the same draft and claim URL", body = DraftResponse),
        (status = 400, description = "`validation_failed` on the field at fault (`oauth.clientId` unknown, `oauth.redirectUri` not registered, `oauth.scope` not allowed...), `unknown_field`, `invalid_json`", body = ErrorBody),
        (status = 401, description = "`Unauthorized` (no `Authorization`) or `Invalid pay API credentials` (not a partner's onboarding secret)", body = ErrorBody),
        (status = 409, description = "`idempotency_key_reused`: this partner's `idempotencyKey` was used with another body", body = ErrorBody),
    )
)]
#[post("/api/partner/v1/onboarding/company")]
pub async fn create_draft(
    pay: web::Data<Pay>,
    config: web::Data<HttpConfig>,
    req: HttpRequest,
    body: JsonBody,
) -> Result<HttpResponse, ApiError> {
    let secret = bearer_secret(&req);
    let p = pay.clone();
    let (draft, token, created) = blocking(move || {
        let onboarding = p.onboarding();
        // The credential before the body: a malformed body without one is 401.
        let partner = onboarding.authenticate_partner(secret.as_deref())?;
        let input: DraftBody = body.read()?;
        Ok(onboarding.create_draft(&partner, input.into())?)
    })
    .await?;
    let claim_url = format!(
        "{}{CLAIM_PATH}/{}",
        config.base_url.trim_end_matches('/'),
        token.expose()
    );
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok(HttpResponse::build(status)
        .insert_header(("cache-control", "no-store"))
        .json(DraftResponse {
            draft: DraftDto::of(&draft, pay.now()),
            claim_url,
        }))
}
