//! Signing in and out: an HttpOnly, SameSite=Lax `pay_session` cookie (the same session the
//! `/signin` page starts, recognised by every page and route) plus the session's CSRF token,
//! which every state-changing request of the session must echo.

pub mod dto;

use actix_web::{post, web, HttpRequest, HttpResponse};
use pay_domain::app::Pay;
use pay_domain::kernel::secret::Secret;

use crate::api::session::dto::{LoginRequest, LoginResponse};
use crate::edge::credentials::{blocking, session_cookie, Credentials};
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
    let cookie = session_cookie(&config, outcome.session_token.expose());
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
    let mut gone = session_cookie(&config, "");
    gone.make_removal();
    Ok(HttpResponse::NoContent().cookie(gone).finish())
}
