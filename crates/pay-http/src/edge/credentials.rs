//! Credentials at the edge. Extraction reads headers; the principal is resolved inside the
//! same blocking call as the use case, so a request costs one hop to the pool. OAuth access
//! tokens arrive as `Authorization: Bearer` or `Authorization: DPoP` plus a `DPoP` proof,
//! verified against the configured base URL (never `Host`). A DPoP request goes further at
//! extraction, on the async worker: its proof is verified there, and when the store holds the
//! token bound to the proof's key, its `jti` record is awaited there without holding a thread
//! (`OAuthService::authenticate_held_dpop`), so the replay writer commits the records of every
//! request in flight at once; the outcome waits in the credentials for `principal`.

use std::future::{ready, Future};
use std::pin::Pin;
use std::sync::Arc;

use actix_web::dev::Payload;
use actix_web::http::Method;
use actix_web::{FromRequest, HttpRequest};
use pay_domain::app::Pay;
use pay_domain::oauth::{DpopAccess, OAuthError, ProofFacts};
use pay_domain::tenancy::Principal;
use pay_domain::tenancy::SignedIn;
use pay_domain::tenancy::{Denied, TenancyError};
use pay_domain::Fault;
use pay_dpop::NonceIssuer;

use crate::edge::error::{ApiError, TokenChallenge};
use crate::HttpConfig;

pub const KEY_ID_HEADER: &str = "x-svc-key-id";
pub const KEY_SECRET_HEADER: &str = "x-svc-key-secret";
pub const CSRF_HEADER: &str = "x-csrf-token";
pub const SESSION_COOKIE: &str = "pay_session";
pub const DPOP_HEADER: &str = "dpop";

/// The session cookie both sign-in doors set (`POST /auth/login` and the `/signin` page): one
/// session, recognised by every page and route; its CSRF token belongs to it (no second cookie).
pub fn session_cookie(config: &HttpConfig, token: &str) -> actix_web::cookie::Cookie<'static> {
    actix_web::cookie::Cookie::build(SESSION_COOKIE, token.to_owned())
        .path("/")
        .http_only(true)
        .same_site(actix_web::cookie::SameSite::Lax)
        .secure(config.secure_cookies)
        .max_age(actix_web::cookie::time::Duration::seconds(
            pay_domain::tenancy::SIGN_IN_TTL.whole_seconds(),
        ))
        .finish()
}

/// An OAuth access token and what its DPoP proof must match.
#[derive(Clone)]
pub struct OAuthToken {
    pub token: String,
    /// `Authorization: DPoP` (else `Bearer`).
    pub dpop: bool,
    /// Every `DPoP` header of the request (more than one is refused by the verifier).
    pub proofs: Vec<String>,
    pub method: String,
    /// The configured base URL plus the request path; `None` without a configuration.
    pub target: Option<String>,
    /// The nonce issuer when proofs must carry a server nonce (`PAY_DPOP_NONCES`).
    pub nonces: Option<Arc<NonceIssuer>>,
    /// What extraction settled of a DPoP request (`None`: everything is left to `principal`).
    pub settled: Option<Settled>,
}

/// What the extractor settled of a DPoP request, before the handler ran.
#[derive(Clone, Debug)]
pub enum Settled {
    /// The proof was refused: the challenge's error code and description.
    Proof(&'static str, String),
    /// The `jti` was recorded on the store's copy of the token and every check ran.
    Decided(Result<Principal, OAuthError>),
    /// The proof is verified; the token and the record are still to do.
    Verified(ProofFacts),
    /// The proof is verified and its `jti` recorded (`true` new), the token to read again.
    Recorded(ProofFacts, bool),
}

/// What the request presented.
#[derive(Clone)]
pub enum Credentials {
    /// One or both API-key headers.
    ApiKey {
        key_id: Option<String>,
        secret: Option<String>,
    },
    /// An OAuth access token.
    OAuth(OAuthToken),
    /// An `Authorization` header of another scheme, or several: never a valid credential.
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
            Credentials::OAuth(t) if t.dpop => "DPoP(***)",
            Credentials::OAuth(_) => "Bearer(***)",
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
        let mut auth = req
            .headers()
            .get_all(actix_web::http::header::AUTHORIZATION);
        if let Some(first) = auth.next() {
            if auth.next().is_some() {
                return Credentials::Authorization;
            }
            return match first.to_str().ok().and_then(access_token) {
                Some((dpop, token)) => Credentials::OAuth(OAuthToken {
                    token: token.to_owned(),
                    dpop,
                    proofs: all_values(req, DPOP_HEADER),
                    method: req.method().as_str().to_owned(),
                    target: target_uri(req),
                    nonces: req
                        .app_data::<actix_web::web::Data<HttpConfig>>()
                        .and_then(|c| c.dpop_nonces.clone()),
                    settled: None,
                }),
                None => Credentials::Authorization,
            };
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

    /// Resolves the principal for a payment route (API key, OAuth token or session).
    pub fn principal(&self, pay: &Pay) -> Result<Principal, ApiError> {
        match self {
            Credentials::ApiKey { key_id, secret } => Ok(pay
                .tenancy()
                .authenticate_api_key(key_id.as_deref(), secret.as_deref())?),
            Credentials::OAuth(t) => t.principal(pay),
            Credentials::Authorization => Err(Denied::InvalidCredentials.into()),
            Credentials::Session { .. } => {
                let signed_in = self.signed_in(pay)?;
                Ok(pay.tenancy().sign_in_principal(&signed_in)?)
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

/// The token of `Authorization: Bearer <token>` for a route with a bearer secret of its own
/// (partner onboarding): `None` without the header, `Some("")` for several, another scheme or
/// a malformed token (refused as a wrong secret).
pub fn bearer_secret(req: &HttpRequest) -> Option<String> {
    let mut auth = req
        .headers()
        .get_all(actix_web::http::header::AUTHORIZATION);
    let first = auth.next()?;
    if auth.next().is_some() {
        return Some(String::new());
    }
    Some(match first.to_str().ok().and_then(access_token) {
        Some((false, token)) => token.to_owned(),
        _ => String::new(),
    })
}

/// `Bearer <token>` or `DPoP <token>` (scheme names are case-insensitive, RFC 9110 section
/// 11.1): whether DPoP, and the token68.
fn access_token(value: &str) -> Option<(bool, &str)> {
    let (scheme, token) = value.split_once(' ')?;
    let dpop = if scheme.eq_ignore_ascii_case("dpop") {
        true
    } else if scheme.eq_ignore_ascii_case("bearer") {
        false
    } else {
        return None;
    };
    let token = token.trim_matches(' ');
    let token68 = !token.is_empty()
        && token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~+/=".contains(&b));
    token68.then_some((dpop, token))
}

/// Every value of the header `name` (an unreadable one as a NUL, which no verifier accepts).
pub fn all_values(req: &HttpRequest, name: &str) -> Vec<String> {
    req.headers()
        .get_all(name)
        .map(|v| v.to_str().unwrap_or("\u{0}").to_owned())
        .collect()
}

/// The request's URI as a DPoP proof must name it: the configured base URL (`PAY_BASE_URL`)
/// plus the path, never anything the client can set (`Host`, `X-Forwarded-*`).
pub fn target_uri(req: &HttpRequest) -> Option<String> {
    let config = req.app_data::<actix_web::web::Data<HttpConfig>>()?;
    Some(format!(
        "{}{}",
        config.base_url.trim_end_matches('/'),
        req.path()
    ))
}

/// The system's real time, unix seconds: what DPoP `iat` windows and nonces run on.
pub fn real_now_unix() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

/// The checks of one request's proofs: `method` at `target`, the configured `iat` window on
/// the system's real time `now`, `ath` of `access_token` when one is presented, and one of the
/// live nonces when the server asks for them. The `iat` window runs on real time, like webhook
/// signature timestamps: it is checked against the client's clock, so no process or test
/// clock may move it (architecture, "Two clocks").
fn proof_check<'a>(
    pay: &Pay,
    method: &'a str,
    target: &'a str,
    now: i64,
    access_token: Option<&'a str>,
    nonces: Option<&'a [String; 2]>,
) -> pay_dpop::ProofCheck<'a> {
    let mut check = pay_dpop::ProofCheck::new(method, target, now);
    check.max_age_secs = pay.oauth().config().dpop_max_age.whole_seconds();
    if let Some(token) = access_token {
        check = check.with_access_token(token);
    }
    if let Some([current, previous]) = nonces {
        check = check.with_nonces(current, previous);
    }
    check
}

fn facts(proof: pay_dpop::VerifiedProof) -> ProofFacts {
    ProofFacts {
        jti_digest: pay_dpop::jti_digest(&proof.jti),
        jkt: proof.jkt,
        htu: proof.htu,
        iat: proof.iat,
    }
}

fn values(headers: &[String]) -> Vec<&str> {
    headers.iter().map(String::as_str).collect()
}

/// Verifies a request's DPoP proof for `method` at `target` (see `proof_check`): the facts the
/// domain binds or records.
pub fn verify_dpop(
    pay: &Pay,
    proofs: &[String],
    method: &str,
    target: Option<&str>,
    access_token: Option<&str>,
    nonces: Option<&NonceIssuer>,
) -> Result<ProofFacts, pay_dpop::ProofError> {
    let target = target.ok_or(pay_dpop::ProofError::InvalidTargetUri)?;
    let now = real_now_unix();
    let accepted = nonces.map(|n| n.accepted(now));
    let check = proof_check(pay, method, target, now, access_token, accepted.as_ref());
    Ok(facts(pay_dpop::verify_proof(&values(proofs), &check)?))
}

/// Verifies a native installation's key change: `DPoP` (the new key) and `DPoP-Previous`
/// made with `registered_jkt`, both for `method` at `target` (see `proof_check`), with
/// distinct `jti`s. The facts of both, new key first.
pub fn verify_rotation(
    pay: &Pay,
    proofs: &[String],
    previous: &[String],
    method: &str,
    target: Option<&str>,
    registered_jkt: &str,
    nonces: Option<&NonceIssuer>,
) -> Result<(ProofFacts, ProofFacts), pay_dpop::RotationError> {
    let target = target.ok_or(pay_dpop::RotationError::Current(
        pay_dpop::ProofError::InvalidTargetUri,
    ))?;
    let now = real_now_unix();
    let accepted = nonces.map(|n| n.accepted(now));
    let check = proof_check(pay, method, target, now, None, accepted.as_ref());
    let (current, previous) =
        pay_dpop::verify_key_rotation(&values(proofs), &values(previous), &check, registered_jkt)?;
    Ok((facts(current), facts(previous)))
}

/// A refused token or proof (the spec's 401) with the challenge of the scheme used; a
/// `use_dpop_nonce` carries the nonce to retry with (RFC 9449 section 9).
pub fn token_refusal(
    dpop: bool,
    nonces: Option<&NonceIssuer>,
    error: &'static str,
    description: String,
) -> ApiError {
    ApiError::Token(TokenChallenge {
        dpop,
        error,
        description,
        scope: None,
        nonce: nonces
            .filter(|_| error == pay_dpop::USE_DPOP_NONCE)
            .map(|n| n.current(real_now_unix())),
    })
}

impl OAuthToken {
    fn challenge(&self, error: &'static str, description: String) -> ApiError {
        token_refusal(self.dpop, self.nonces.as_deref(), error, description)
    }

    /// A refusal of the domain: a resource error is the scheme's challenge.
    fn refused(&self, e: OAuthError) -> ApiError {
        match e {
            OAuthError::Resource(r) => self.challenge(r.code.as_str(), r.description.into()),
            other => other.into(),
        }
    }

    fn verify(&self, pay: &Pay) -> Result<ProofFacts, Settled> {
        verify_dpop(
            pay,
            &self.proofs,
            &self.method,
            self.target.as_deref(),
            Some(&self.token),
            self.nonces.as_deref(),
        )
        .map_err(|e| Settled::Proof(e.www_authenticate_error(), e.to_string()))
    }

    /// A DPoP request's proof, verified on the async worker, and its `jti` record awaited
    /// there when the store holds the token (the record then never holds a blocking thread).
    async fn settle(&self, pay: &Pay) -> Settled {
        let facts = match self.verify(pay) {
            Ok(facts) => facts,
            Err(refused) => return refused,
        };
        match pay
            .oauth()
            .authenticate_held_dpop(&self.token, &facts)
            .await
        {
            DpopAccess::Decided(result) => Settled::Decided(result),
            DpopAccess::Recorded(recorded) => Settled::Recorded(facts, recorded),
            DpopAccess::NotHeld => Settled::Verified(facts),
        }
    }

    /// The principal of the token: a DPoP request's proof verified first (signature, `htm`,
    /// `htu`, `iat`, `ath`), then the domain checks the token, its binding and the `jti`
    /// (or what extraction settled of those).
    fn principal(&self, pay: &Pay) -> Result<Principal, ApiError> {
        let settled = match &self.settled {
            Some(settled) => settled.clone(),
            None if self.dpop => match self.verify(pay) {
                Ok(facts) => Settled::Verified(facts),
                Err(refused) => refused,
            },
            None => {
                return pay
                    .oauth()
                    .authenticate_access_token(&self.token, None)
                    .map_err(|e| self.refused(e))
            }
        };
        let principal = match settled {
            Settled::Proof(error, description) => Err(self.challenge(error, description)),
            Settled::Decided(result) => result.map_err(|e| self.refused(e)),
            Settled::Verified(facts) => pay
                .oauth()
                .authenticate_access_token(&self.token, Some(&facts))
                .map_err(|e| self.refused(e)),
            Settled::Recorded(facts, recorded) => pay
                .oauth()
                .authenticate_recorded(&self.token, &facts, recorded)
                .map_err(|e| self.refused(e)),
        };
        // A proof accepted for a token bound to its key: the key counts towards its table.
        if let (Ok(_), true, [proof]) = (&principal, self.dpop, &self.proofs[..]) {
            pay_dpop::note_bound_proof(proof);
        }
        principal
    }
}

impl std::fmt::Debug for OAuthToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.dpop {
            "DPoP(***)"
        } else {
            "Bearer(***)"
        })
    }
}

impl FromRequest for Credentials {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    /// Never fails: a DPoP request's refusal waits in its credentials for `principal`, so the
    /// order of the route's errors is the handler's.
    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        match Credentials::from_request_headers(req) {
            Credentials::OAuth(mut token) if token.dpop => {
                let Some(pay) = req.app_data::<actix_web::web::Data<Pay>>().cloned() else {
                    return Box::pin(ready(Ok(Credentials::OAuth(token))));
                };
                Box::pin(async move {
                    token.settled = Some(token.settle(&pay).await);
                    Ok(Credentials::OAuth(token))
                })
            }
            other => Box::pin(ready(Ok(other))),
        }
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
