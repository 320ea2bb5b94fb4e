//! The OAuth endpoints a client calls directly: the token endpoint (RFC 6749 section 4.1.3
//! and 6, RFC 9449 section 5), revocation (RFC 7009) and the server metadata (RFC 8414). The
//! browser-facing authorization endpoint is a page (`pages/oauth`). Errors are RFC 6749
//! section 5.2 bodies with `Cache-Control: no-store` (`ApiError::OAuth`).

pub mod dto;

use actix_web::http::header;
use actix_web::{get, post, web, HttpRequest, HttpResponse};
use base64::Engine;
use pay_domain::app::Pay;
use pay_domain::kernel::idempotency::{IdempotencyKey, HEADER as IDEMPOTENCY_KEY};
use pay_domain::kernel::secret::Secret;
use pay_domain::oauth::{scope_string, ClientAuth, OAuthErrorCode as C, OAuthRefusal, TokenGrant};
use pay_domain::tenancy::Scope;

use crate::api::oauth::dto::{RevokeRequest, ServerMetadata, TokenRequest, TokenResponseDto};
use crate::edge::credentials::{
    all_values, blocking, real_now_unix, target_uri, verify_dpop, DPOP_HEADER,
};
use crate::edge::error::{oauth_error_response, ApiError, OAuthErrorBody, DPOP_NONCE_HEADER};
use crate::edge::form;
use crate::edge::form::{FormBody, FormError};
use crate::HttpConfig;

fn refusal(code: C, description: &'static str) -> ApiError {
    ApiError::OAuth(OAuthRefusal::new(code, description))
}

/// `invalid_request` naming what is wrong with the form (the description is the reader's).
fn bad_form(why: String) -> HttpResponse {
    oauth_error_response(
        actix_web::http::StatusCode::BAD_REQUEST,
        "invalid_request",
        why,
    )
}

/// The form's fields, or the answer refusing the body: 415 when it is not a form, 413 when
/// too large, 400 `invalid_request` when malformed or not readable by `T`.
fn read_form<T: serde::de::DeserializeOwned>(body: FormBody) -> Result<T, Box<HttpResponse>> {
    use actix_web::http::StatusCode;
    let pairs = body.0.map_err(|e| {
        Box::new(match e {
            FormError::NotAForm => oauth_error_response(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "invalid_request",
                "the body must be application/x-www-form-urlencoded".into(),
            ),
            FormError::TooLarge => oauth_error_response(
                StatusCode::PAYLOAD_TOO_LARGE,
                "invalid_request",
                "the body is larger than 64 KiB".into(),
            ),
            FormError::Malformed(why) => bad_form(why),
        })
    })?;
    form::read(&pairs).map_err(|why| Box::new(bad_form(why)))
}

/// The client's authentication (RFC 6749 section 2.3.1): `Authorization: Basic` with the
/// form-urlencoded id and secret, or `client_id` (+ `client_secret`) in the body; never both
/// ways at once. Anything else is `invalid_client`.
fn client_auth(
    req: &HttpRequest,
    client_id: Option<String>,
    client_secret: Option<String>,
) -> Result<ClientAuth, ApiError> {
    let invalid = || refusal(C::InvalidClient, "client authentication failed");
    let mut values = req.headers().get_all(header::AUTHORIZATION);
    let Some(value) = values.next() else {
        return Ok(ClientAuth {
            client_id: client_id.ok_or_else(invalid)?,
            secret: client_secret.map(Secret::new),
        });
    };
    if values.next().is_some() {
        return Err(invalid());
    }
    if client_secret.is_some() {
        return Err(refusal(
            C::InvalidRequest,
            "use one client authentication method, not two",
        ));
    }
    let encoded = value
        .to_str()
        .ok()
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("basic"))
        .map(|(_, rest)| rest.trim())
        .ok_or_else(invalid)?;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .ok_or_else(invalid)?;
    let (id, secret) = decoded.split_once(':').ok_or_else(invalid)?;
    let unescape = |s: &str| form::percent_decode(s.as_bytes()).ok();
    let (id, secret) = (
        unescape(id).ok_or_else(invalid)?,
        unescape(secret).ok_or_else(invalid)?,
    );
    if client_id.is_some_and(|body_id| body_id != id) {
        return Err(invalid());
    }
    Ok(ClientAuth {
        client_id: id,
        secret: Some(Secret::new(secret)),
    })
}

/// The `Idempotency-Key` of a token request: none, or exactly one value of 1 to 255
/// printable ASCII characters; anything else is `invalid_request`.
fn idempotency_key(req: &HttpRequest) -> Result<Option<IdempotencyKey>, ApiError> {
    let mut values = req.headers().get_all(IDEMPOTENCY_KEY);
    let Some(first) = values.next() else {
        return Ok(None);
    };
    let bad = || {
        refusal(
            C::InvalidRequest,
            "give one Idempotency-Key header of 1 to 255 printable ASCII characters",
        )
    };
    if values.next().is_some() {
        return Err(bad());
    }
    let text = first.to_str().map_err(|_| bad())?;
    IdempotencyKey::parse(text).map(Some).map_err(|_| bad())
}

/// Exchange an authorization code, or rotate a refresh token.
///
/// `authorization_code` needs `code`, `redirect_uri` and `code_verifier`; `refresh_token`
/// needs `refresh_token`. Confidential clients authenticate with `client_secret_basic` or
/// `client_secret_post`, public ones send `client_id` only. A `DPoP` proof (RFC 9449, `htu`
/// this endpoint's URL under the configured base URL) binds the tokens to its key
/// (`token_type: DPoP`); a bound refresh token needs a proof by the same key.
///
/// A native installation's client may send `Idempotency-Key`: when the response is lost, the
/// exact request retried with the same key and a fresh proof by the same key gets the same
/// tokens (`Idempotent-Replayed: true`) while they are the family's live successor, and
/// `invalid_grant` once they were used, revoked or expired.
#[utoipa::path(
    tag = "OAuth",
    request_body(content = TokenRequest, content_type = "application/x-www-form-urlencoded"),
    params(
        ("DPoP" = Option<String>, Header, description = "A DPoP proof JWT (`htm` POST, `htu` this URL)"),
        ("Idempotency-Key" = Option<String>, Header, description = "Native installations only: 1 to 255 printable ASCII characters, scoped to the client, kept 24 hours; a retry of the exact request gets the same tokens while they are the live successor"),
    ),
    responses(
        (status = 200, description = "Tokens (`Cache-Control: no-store`); a recovered answer carries `Idempotent-Replayed: true`", body = TokenResponseDto),
        (status = 400, description = "RFC 6749 error: `invalid_request`, `invalid_grant`, `unsupported_grant_type`, `invalid_scope`, `unauthorized_client`, `invalid_dpop_proof`, `use_dpop_nonce`", body = OAuthErrorBody),
        (status = 401, description = "`invalid_client` (with `WWW-Authenticate: Basic`)", body = OAuthErrorBody),
        (status = 409, description = "`idempotency_key_reused`: the key holds another token request; `idempotency_key_in_flight`: the first one still runs", body = OAuthErrorBody),
        (status = 413, description = "`invalid_request`: body over 64 KiB", body = OAuthErrorBody),
        (status = 415, description = "`invalid_request`: not `application/x-www-form-urlencoded`", body = OAuthErrorBody),
    )
)]
#[post("/oauth/token")]
pub async fn token(
    pay: web::Data<Pay>,
    req: HttpRequest,
    body: FormBody,
) -> Result<HttpResponse, ApiError> {
    let form: TokenRequest = match read_form(body) {
        Ok(f) => f,
        Err(res) => return Ok(*res),
    };
    let client = client_auth(&req, form.client_id.clone(), form.client_secret.clone())?;
    let key = idempotency_key(&req)?;
    let proofs = all_values(&req, DPOP_HEADER);
    let target = target_uri(&req);
    let nonces = req
        .app_data::<web::Data<HttpConfig>>()
        .and_then(|c| c.dpop_nonces.clone());
    let issuer = nonces.clone();
    let issued = blocking(move || {
        let proof = if proofs.is_empty() {
            None
        } else {
            Some(verify_dpop(
                &pay,
                &proofs,
                "POST",
                target.as_deref(),
                None,
                issuer.as_deref(),
            )?)
        };
        let missing = |what: &'static str| refusal(C::InvalidRequest, what);
        let grant = match form.grant_type.as_str() {
            "authorization_code" => TokenGrant::AuthorizationCode {
                code: form
                    .code
                    .as_deref()
                    .ok_or_else(|| missing("code is required"))?,
                redirect_uri: form
                    .redirect_uri
                    .as_deref()
                    .ok_or_else(|| missing("redirect_uri is required"))?,
                code_verifier: form
                    .code_verifier
                    .as_deref()
                    .ok_or_else(|| missing("code_verifier is required"))?,
            },
            "refresh_token" => TokenGrant::RefreshToken {
                refresh_token: form
                    .refresh_token
                    .as_deref()
                    .ok_or_else(|| missing("refresh_token is required"))?,
                scope: form.scope.as_deref(),
            },
            _ => {
                return Err(refusal(
                    C::UnsupportedGrantType,
                    "grant_type must be authorization_code or refresh_token",
                ))
            }
        };
        Ok(pay
            .oauth()
            .token(&client, grant, proof.as_ref(), key.as_ref())?)
    })
    .await;
    // RFC 9449 section 8: a missing or stale nonce is `use_dpop_nonce` with the nonce to use;
    // every answer carries the current one, so a client keeps up as windows pass.
    let nonce = nonces.map(|n| n.current(real_now_unix()));
    let issued = match issued {
        Err(ApiError::TokenProof(e)) if e.www_authenticate_error() == pay_dpop::USE_DPOP_NONCE => {
            let mut res = oauth_error_response(
                actix_web::http::StatusCode::BAD_REQUEST,
                pay_dpop::USE_DPOP_NONCE,
                e.to_string(),
            );
            if let Some(n) = nonce.and_then(|n| header::HeaderValue::from_str(&n).ok()) {
                res.headers_mut()
                    .insert(header::HeaderName::from_static("dpop-nonce"), n);
            }
            return Ok(res);
        }
        other => other?,
    };
    let mut res = HttpResponse::Ok();
    if let Some(n) = nonce {
        res.insert_header((DPOP_NONCE_HEADER, n));
    }
    if issued.replayed {
        res.insert_header((crate::edge::idempotency::REPLAYED_HEADER, "true"));
    }
    let issued = issued.response;
    Ok(res
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .insert_header((header::PRAGMA, "no-cache"))
        .json(TokenResponseDto {
            access_token: issued.access_token.expose().to_owned(),
            token_type: issued.token_type.as_str(),
            expires_in: issued.expires_in_secs,
            refresh_token: issued.refresh_token.expose().to_owned(),
            scope: scope_string(&issued.scopes),
        }))
}

/// Revoke a token (RFC 7009): a refresh token ends its whole family, an access token itself.
/// Unknown, foreign or already dead tokens are answered 200 all the same.
#[utoipa::path(
    tag = "OAuth",
    request_body(content = RevokeRequest, content_type = "application/x-www-form-urlencoded"),
    responses(
        (status = 200, description = "Revoked, or nothing to revoke"),
        (status = 400, description = "`invalid_request`", body = OAuthErrorBody),
        (status = 401, description = "`invalid_client` (with `WWW-Authenticate: Basic`)", body = OAuthErrorBody),
        (status = 413, description = "`invalid_request`: body over 64 KiB", body = OAuthErrorBody),
        (status = 415, description = "`invalid_request`: not `application/x-www-form-urlencoded`", body = OAuthErrorBody),
    )
)]
#[post("/oauth/revoke")]
pub async fn revoke(
    pay: web::Data<Pay>,
    req: HttpRequest,
    body: FormBody,
) -> Result<HttpResponse, ApiError> {
    let form: RevokeRequest = match read_form(body) {
        Ok(f) => f,
        Err(res) => return Ok(*res),
    };
    let client = client_auth(&req, form.client_id.clone(), form.client_secret.clone())?;
    blocking(move || Ok(pay.installations().revoke(&client, &form.token)?)).await?;
    Ok(HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .finish())
}

/// The authorization server's metadata (RFC 8414), addresses under the configured base URL.
#[utoipa::path(
    tag = "OAuth",
    responses((status = 200, description = "RFC 8414 metadata", body = ServerMetadata))
)]
#[get("/.well-known/oauth-authorization-server")]
pub async fn metadata(config: web::Data<HttpConfig>) -> HttpResponse {
    let issuer = config.base_url.trim_end_matches('/').to_owned();
    let auth_methods = vec!["client_secret_basic", "client_secret_post", "none"];
    HttpResponse::Ok().json(ServerMetadata {
        authorization_endpoint: format!("{issuer}/oauth/authorize"),
        token_endpoint: format!("{issuer}/oauth/token"),
        revocation_endpoint: format!("{issuer}/oauth/revoke"),
        issuer,
        response_types_supported: vec!["code"],
        response_modes_supported: vec!["query"],
        grant_types_supported: vec!["authorization_code", "refresh_token"],
        code_challenge_methods_supported: vec![pay_domain::oauth::pkce::PKCE_METHOD_S256],
        token_endpoint_auth_methods_supported: auth_methods.clone(),
        revocation_endpoint_auth_methods_supported: auth_methods,
        scopes_supported: Scope::ALL.iter().map(|s| s.as_str()).collect(),
        dpop_signing_alg_values_supported: pay_dpop::SUPPORTED_ALGS.split(' ').collect(),
    })
}
