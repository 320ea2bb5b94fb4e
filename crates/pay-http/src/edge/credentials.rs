//! Credentials at the edge. Extraction only reads headers (no I/O); the principal is resolved
//! inside the same blocking call as the use case, so a request costs one hop to the pool.

use std::future::{ready, Ready};

use actix_web::dev::Payload;
use actix_web::http::Method;
use actix_web::{FromRequest, HttpRequest};
use pay_domain::app::Pay;
use pay_domain::tenancy::Principal;
use pay_domain::tenancy::SignedIn;
use pay_domain::tenancy::{Denied, TenancyError};
use pay_domain::Fault;

use crate::edge::error::ApiError;

pub const KEY_ID_HEADER: &str = "x-svc-key-id";
pub const KEY_SECRET_HEADER: &str = "x-svc-key-secret";
pub const CSRF_HEADER: &str = "x-csrf-token";
pub const SESSION_COOKIE: &str = "pay_session";

/// What the request presented.
#[derive(Clone)]
pub enum Credentials {
    /// One or both API-key headers.
    ApiKey {
        key_id: Option<String>,
        secret: Option<String>,
    },
    /// An `Authorization` header (OAuth arrives with a later issue; today it cannot succeed).
    Authorization,
    /// The session cookie, with the CSRF header when the method changes state.
    Session {
        token: String,
        csrf: Option<String>,
        mutating: bool,
    },
    None,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self {
            Credentials::ApiKey { .. } => "ApiKey(***)",
            Credentials::Authorization => "Authorization(***)",
            Credentials::Session { .. } => "Session(***)",
            Credentials::None => "None",
        };
        f.write_str(kind)
    }
}

fn header(req: &HttpRequest, name: &str) -> Option<String> {
    req.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

fn is_mutating(m: &Method) -> bool {
    !matches!(*m, Method::GET | Method::HEAD | Method::OPTIONS)
}

impl Credentials {
    pub fn from_request_headers(req: &HttpRequest) -> Credentials {
        let key_id = header(req, KEY_ID_HEADER);
        let secret = header(req, KEY_SECRET_HEADER);
        if key_id.is_some() || secret.is_some() {
            return Credentials::ApiKey { key_id, secret };
        }
        if req
            .headers()
            .contains_key(actix_web::http::header::AUTHORIZATION)
        {
            return Credentials::Authorization;
        }
        if let Some(c) = req.cookie(SESSION_COOKIE) {
            return Credentials::Session {
                token: c.value().to_owned(),
                csrf: header(req, CSRF_HEADER),
                mutating: is_mutating(req.method()),
            };
        }
        Credentials::None
    }

    /// Resolves the principal for a payment route (API key or session).
    pub fn principal(&self, pay: &Pay) -> Result<Principal, TenancyError> {
        match self {
            Credentials::ApiKey { key_id, secret } => pay
                .tenancy()
                .authenticate_api_key(key_id.as_deref(), secret.as_deref()),
            Credentials::Authorization => Err(Denied::InvalidCredentials.into()),
            Credentials::Session { .. } => {
                let signed_in = self.signed_in(pay)?;
                pay.tenancy().sign_in_principal(&signed_in)
            }
            Credentials::None => Err(Denied::Unauthenticated.into()),
        }
    }

    /// Resolves a signed-in user for a dashboard route, checking CSRF on mutations.
    pub fn signed_in(&self, pay: &Pay) -> Result<SignedIn, TenancyError> {
        match self {
            Credentials::Session {
                token,
                csrf,
                mutating,
            } => {
                let signed_in = pay.tenancy().authenticate_sign_in(token)?;
                if *mutating {
                    pay.tenancy().check_csrf(&signed_in, csrf.as_deref())?;
                }
                Ok(signed_in)
            }
            _ => Err(Denied::Unauthenticated.into()),
        }
    }
}

impl FromRequest for Credentials {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(Ok(Credentials::from_request_headers(req)))
    }
}

/// Runs blocking domain work on the pool, inside the request's tracing span, and logs the
/// cause of any server-side failure there.
pub async fn blocking<T, F>(f: F) -> Result<T, ApiError>
where
    F: FnOnce() -> Result<T, ApiError> + Send + 'static,
    T: Send + 'static,
{
    let span = tracing::Span::current();
    let result = actix_web::web::block(move || span.in_scope(f))
        .await
        .map_err(|e| ApiError::Fault(Fault::caused("blocking pool", e)))
        .and_then(|r| r);
    if let Err(e) = &result {
        e.log();
    }
    result
}
