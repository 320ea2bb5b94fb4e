//! Signing in and out of the dashboard: an HttpOnly, SameSite=Lax `pay_session` cookie plus a
//! CSRF token that every state-changing request of the session must echo.

pub mod dto;

use actix_web::cookie::{time::Duration as CookieDuration, Cookie, SameSite};
use actix_web::{post, web, HttpRequest, HttpResponse};
use pay_domain::app::Pay;
use pay_domain::kernel::secret::Secret;
use pay_domain::tenancy::SIGN_IN_TTL;

use crate::api::session::dto::{LoginRequest, LoginResponse};
use crate::edge::credentials::{blocking, Credentials, SESSION_COOKIE};
use crate::edge::error::{ApiError, ErrorBody};
use crate::edge::json::JsonBody;
use crate::HttpConfig;

/// Sign in with e-mail and password.
#[utoipa::path(
    tag = "Session",
    request_body = LoginRequest,
    responses(
        (status = 200, description = "Signed in; `pay_session` cookie set", body = LoginResponse),
        (status = 400, description = "Invalid body", body = ErrorBody),
        (status = 401, description = "Wrong e-mail or password (one message for both)", body = ErrorBody),
        (status = 429, description = "Too many failures; see `Retry-After`", body = ErrorBody),
    )
)]
#[post("/auth/login")]
pub async fn login(
    pay: web::Data<Pay>,
    config: web::Data<HttpConfig>,
    req: HttpRequest,
    body: JsonBody,
) -> Result<HttpResponse, ApiError> {
    let addr = req
        .peer_addr()
        .map(|a| a.ip().to_string())
        .unwrap_or_default();
    let outcome = blocking(move || {
        let LoginRequest { email, password } = body.read()?;
        Ok(pay.tenancy().login(&email, &Secret::new(password), &addr)?)
    })
    .await?;
    let cookie = Cookie::build(SESSION_COOKIE, outcome.session_token.expose().to_owned())
        .path("/")
        .http_only(true)
        .same_site(SameSite::Lax)
        .secure(config.secure_cookies)
        .max_age(CookieDuration::seconds(SIGN_IN_TTL.whole_seconds()))
        .finish();
    Ok(HttpResponse::Ok()
        .insert_header(("cache-control", "no-store"))
        .cookie(cookie)
        .json(LoginResponse {
            csrf_token: outcome.csrf_token.expose().to_owned(),
        }))
}

/// Sign out (needs the CSRF token).
#[utoipa::path(
    tag = "Session",
    security(("session" = [])),
    responses(
        (status = 204, description = "Signed out; cookie cleared"),
        (status = 401, description = "`Unauthorized`", body = ErrorBody),
        (status = 403, description = "Missing or wrong CSRF token", body = ErrorBody),
    )
)]
#[post("/auth/logout")]
pub async fn logout(
    pay: web::Data<Pay>,
    config: web::Data<HttpConfig>,
    creds: Credentials,
) -> Result<HttpResponse, ApiError> {
    blocking(move || {
        let signed_in = creds.signed_in(&pay)?;
        if let Credentials::Session { token, .. } = &creds {
            pay.tenancy().logout(token)?;
        }
        drop(signed_in);
        Ok(())
    })
    .await?;
    let mut gone = Cookie::build(SESSION_COOKIE, "")
        .path("/")
        .http_only(true)
        .same_site(SameSite::Lax)
        .secure(config.secure_cookies)
        .finish();
    gone.make_removal();
    Ok(HttpResponse::NoContent().cookie(gone).finish())
}
