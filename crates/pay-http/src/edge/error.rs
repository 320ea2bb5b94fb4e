//! The one place where errors become HTTP: each domain error maps to exactly one status and
//! `errorCode`, plus the edge's own errors (body shape, media type, size). 500s never carry
//! internals; their cause goes to the log, tagged with the request id.

use actix_web::http::{header, StatusCode};
use actix_web::{HttpResponse, ResponseError};
use pay_domain::bookkeeping::{BookkeepingError, EvidenceRefusal};
use pay_domain::chains::{WalletError, XpubRefusal};
use pay_domain::checkout::{
    CheckoutError, LinkAlreadyPaid, PaymentUnderWay, PriceUnavailable, RefundAddressAlreadySet,
    SessionTransition, StartBlocked,
};
use pay_domain::customers::{CustomerError, PortalRefused};
use pay_domain::installations::{InstallationError, PlatformExists, RegistrationConflict};
use pay_domain::kernel::assets::AssetRefusal;
use pay_domain::kernel::error::{Fault, FieldError, NotFound, RateLimited, UnknownField};
use pay_domain::kernel::idempotency::IdempotencyConflict;
use pay_domain::links::{InvalidTransition, LinkError, LinkNotActive};
use pay_domain::mail::{MailError, MissingEmail};
use pay_domain::oauth::{NoRedirect, OAuthError, OAuthErrorCode, OAuthRefusal, ResourceRefusal};
use pay_domain::onboarding::{ClaimRefused, OnboardingError};
use pay_domain::sandbox::SandboxError;
use pay_domain::settings::SettingsError;
use pay_domain::subscriptions::{InvalidSubscriptionTransition, SubscriptionError};
use pay_domain::tenancy::{ApiKeyNotFound, Denied, InvalidLogin, Scope, TenancyError};
use pay_domain::webhooks::WebhookError;
use serde::Serialize;
use utoipa::ToSchema;

use crate::edge::metrics::{mark, Counted};

/// The error body of every route.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ErrorBody {
    /// Human-readable message.
    #[schema(example = "amount must have at most 2 decimal places")]
    pub error: String,
    /// Stable machine-readable code.
    #[schema(example = "validation_failed")]
    pub error_code: String,
    /// The input field at fault, when one is.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(example = "amount")]
    pub field: Option<String>,
}

/// A refused OAuth access token on a resource route (RFC 6750 section 3, RFC 9449 section
/// 7.1): the spec's 401 `Invalid pay API credentials`, with a `WWW-Authenticate` challenge
/// of the scheme the client used naming `error`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Invalid pay API credentials")]
pub struct TokenChallenge {
    /// The request used `Authorization: DPoP` (else `Bearer`).
    pub dpop: bool,
    /// `invalid_token`, `invalid_dpop_proof`, `use_dpop_nonce` or `insufficient_scope`.
    pub error: &'static str,
    /// Names the rule, never a value the client sent.
    pub description: String,
    /// The scope the route needs (`insufficient_scope` only).
    pub scope: Option<&'static str>,
    /// The nonce to retry with, sent as `DPoP-Nonce` (`use_dpop_nonce` only).
    pub nonce: Option<String>,
}

/// The header carrying a server-issued DPoP nonce (RFC 9449 section 8.1).
pub const DPOP_NONCE_HEADER: &str = "DPoP-Nonce";

impl From<ResourceRefusal> for ApiError {
    /// A refusal of the domain without the request's scheme: the DPoP one (only the edge's
    /// credential reader knows better, and it says so).
    fn from(r: ResourceRefusal) -> Self {
        ApiError::Token(TokenChallenge {
            dpop: true,
            error: r.code.as_str(),
            description: r.description.into(),
            scope: None,
            nonce: None,
        })
    }
}

/// An `auth-param` value: quotes and backslashes cannot occur in a quoted-string unescaped,
/// so they become `'` (descriptions are ours and never hold them; this is a guard).
fn quoted(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c == '"' || c == '\\' || c.is_control() {
                '\''
            } else {
                c
            }
        })
        .collect()
}

impl TokenChallenge {
    /// A token without the route's scope: the challenge of the scheme the token is used with
    /// (a DPoP-bound token authenticates only with DPoP, an unbound one only with Bearer).
    pub fn insufficient_scope(scope: Scope, dpop: bool) -> TokenChallenge {
        TokenChallenge {
            dpop,
            error: "insufficient_scope",
            description: format!("the access token lacks the scope {}", scope.as_str()),
            scope: Some(scope.as_str()),
            nonce: None,
        }
    }

    /// The `WWW-Authenticate` values: for DPoP one challenge with `algs`; for Bearer the
    /// Bearer challenge plus a DPoP one with the same error, since a DPoP-bound token sent as
    /// Bearer must be told to use DPoP (docs/security.md, "DPoP proofs") and the scheme is offered anyway
    /// (RFC 9449 section 7.2).
    /// A missing scope is told in the scheme used, with `scope` (RFC 6750 section 3).
    pub fn www_authenticate(&self) -> Vec<String> {
        let d = quoted(&self.description);
        let scope = self
            .scope
            .map(|s| format!(", scope=\"{s}\""))
            .unwrap_or_default();
        let dpop = format!(
            "DPoP error=\"{}\", error_description=\"{d}\"{scope}, algs=\"{}\"",
            self.error,
            pay_dpop::SUPPORTED_ALGS
        );
        let bearer = format!(
            "Bearer error=\"{}\", error_description=\"{d}\"{scope}",
            self.error
        );
        match (self.dpop, self.scope.is_some()) {
            (true, _) => vec![dpop],
            (false, true) => vec![bearer],
            (false, false) => vec![bearer, dpop],
        }
    }
}

/// The RFC 6749 section 5.2 error body of the token and revocation endpoints.
#[derive(Debug, Serialize, ToSchema)]
pub struct OAuthErrorBody {
    /// `invalid_request`, `invalid_client`, `invalid_grant`, `unauthorized_client`,
    /// `unsupported_grant_type`, `invalid_scope`, `invalid_dpop_proof` or `use_dpop_nonce`.
    #[schema(example = "invalid_grant")]
    pub error: String,
    /// Names the rule that refused the request.
    #[schema(example = "the authorization code was already used")]
    pub error_description: String,
}

/// The one RFC 6749 section 5.2 answer of the token and revocation endpoints: the error body,
/// never cached (`Cache-Control: no-store`, `Pragma: no-cache`), and on a 401 (a client that
/// failed to authenticate) the `WWW-Authenticate: Basic` challenge.
pub(crate) fn oauth_error_response(
    status: StatusCode,
    error: &str,
    description: String,
) -> HttpResponse {
    let mut res = HttpResponse::build(status);
    res.insert_header((header::CACHE_CONTROL, "no-store"))
        .insert_header((header::PRAGMA, "no-cache"));
    if status == StatusCode::UNAUTHORIZED {
        res.insert_header((header::WWW_AUTHENTICATE, "Basic realm=\"pay\""));
    }
    res.json(OAuthErrorBody {
        error: error.into(),
        error_description: description,
    })
}

/// An error on its way to the client: one variant per domain refusal type (each context's
/// error enum converts into these, see `from_context!`) and the edge's own errors.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error(transparent)]
    Invalid(#[from] FieldError),
    #[error(transparent)]
    UnknownField(#[from] UnknownField),
    #[error(transparent)]
    Asset(#[from] AssetRefusal),
    #[error(transparent)]
    Denied(#[from] Denied),
    #[error(transparent)]
    InvalidLogin(#[from] InvalidLogin),
    #[error(transparent)]
    ApiKeyNotFound(#[from] ApiKeyNotFound),
    #[error(transparent)]
    NotFound(#[from] NotFound),
    #[error(transparent)]
    LinkTransition(#[from] InvalidTransition),
    #[error(transparent)]
    SessionTransition(#[from] SessionTransition),
    #[error(transparent)]
    SubscriptionTransition(#[from] InvalidSubscriptionTransition),
    #[error(transparent)]
    PortalRefused(#[from] PortalRefused),
    #[error(transparent)]
    NotActive(#[from] LinkNotActive),
    #[error(transparent)]
    AlreadyPaid(#[from] LinkAlreadyPaid),
    #[error(transparent)]
    UnderWay(#[from] PaymentUnderWay),
    #[error(transparent)]
    StartBlocked(#[from] StartBlocked),
    #[error(transparent)]
    PriceUnavailable(#[from] PriceUnavailable),
    #[error(transparent)]
    RefundAddressSet(#[from] RefundAddressAlreadySet),
    #[error(transparent)]
    MissingEmail(#[from] MissingEmail),
    #[error(transparent)]
    RateLimited(#[from] RateLimited),
    #[error(transparent)]
    Idempotency(#[from] IdempotencyConflict),
    #[error(transparent)]
    Evidence(#[from] EvidenceRefusal),
    /// The `xpub` of a settlement wallet: a private key, or not a public key.
    #[error(transparent)]
    Xpub(#[from] XpubRefusal),
    #[error(transparent)]
    OAuth(#[from] OAuthRefusal),
    /// `admin create-native-platform` for an existing template (the command's, never HTTP's).
    #[error(transparent)]
    PlatformExists(#[from] PlatformExists),
    /// A native registration naming another platform or site than its `registrationId` has.
    #[error(transparent)]
    RegistrationConflict(#[from] RegistrationConflict),
    /// A claim of an onboarding draft already claimed or expired (the claim page's).
    #[error(transparent)]
    Claim(#[from] ClaimRefused),
    /// A token request's DPoP proof refused by the verifier (RFC 9449 section 5).
    #[error(transparent)]
    TokenProof(#[from] pay_dpop::ProofError),
    #[error(transparent)]
    NoRedirect(#[from] NoRedirect),
    #[error(transparent)]
    Token(#[from] TokenChallenge),
    #[error(transparent)]
    Fault(#[from] Fault),
    #[error("{0}")]
    InvalidJson(String),
    #[error("request body is larger than {0} bytes")]
    PayloadTooLarge(usize),
    #[error("content-type must be application/json")]
    UnsupportedMediaType,
    #[error("no route {0}")]
    RouteNotFound(String),
    #[error("method not allowed")]
    MethodNotAllowed,
    #[error("request header fields are too large: at most {fields} fields and {bytes} bytes of names and values")]
    RequestHeaderFieldsTooLarge { fields: usize, bytes: usize },
    #[error("{0}")]
    Unavailable(String),
}

/// `From<ContextError> for ApiError`: each variant of a context's error goes to the variant of
/// the refusal type it wraps. The match is exhaustive, so a new variant in a context is a
/// compile error here until it is mapped.
macro_rules! from_context {
    ($($ctx:ident { $($variant:ident),+ $(,)? })+) => {
        $(impl From<$ctx> for ApiError {
            fn from(e: $ctx) -> Self {
                match e {
                    $($ctx::$variant(x) => x.into(),)+
                }
            }
        })+
    };
}

from_context! {
    TenancyError { Invalid, Denied, InvalidLogin, ApiKeyNotFound, NotFound, RateLimited, Fault }
    LinkError { Invalid, UnknownField, Asset, Denied, NotFound, Transition, RateLimited, Idempotency, Fault }
    CheckoutError {
        Invalid, Denied, NotFound, Transition, NotActive, AlreadyPaid, UnderWay, StartBlocked,
        PriceUnavailable, RefundAddressSet, RateLimited, Fault,
    }
    WebhookError { Invalid, Denied, NotFound, Idempotency, Fault }
    MailError { Invalid, Denied, NotFound, NotActive, MissingEmail, RateLimited, Idempotency, Fault }
    SettingsError { Invalid, Asset, Denied, Fault }
    SandboxError { Invalid, Denied, NotFound, Fault }
    OAuthError { Invalid, Denied, Refused, NoRedirect, Resource, Fault }
    CustomerError { Invalid, Denied, NotFound, Portal, Idempotency, Fault }
    SubscriptionError { Invalid, Asset, Denied, NotFound, Transition, Portal, Idempotency, Fault }
    BookkeepingError { Invalid, Denied, NotFound, Evidence, Idempotency, Fault }
    WalletError { Xpub, Invalid, NotFound, Denied, Fault }
    InstallationError { Invalid, PlatformExists, Conflict, Resource, Fault }
    OnboardingError { Invalid, Denied, InvalidLogin, Idempotency, NotFound, Claim, RateLimited, Fault }
}

/// Status, `errorCode`, message and field.
type Parts = (StatusCode, &'static str, String, Option<String>);

fn invalid(f: &FieldError) -> Parts {
    (
        StatusCode::BAD_REQUEST,
        "validation_failed",
        f.message.clone(),
        Some(f.field.clone()),
    )
}

impl ApiError {
    /// Status, `errorCode`, message and field: the one mapping (the hosted pages use it too).
    pub(crate) fn parts(&self) -> Parts {
        let msg = self.to_string();
        let plain = |status, code: &'static str| (status, code, msg.clone(), None);
        match self {
            ApiError::Invalid(f) | ApiError::Asset(AssetRefusal::Invalid(f)) => invalid(f),
            ApiError::UnknownField(u) => (
                StatusCode::BAD_REQUEST,
                "unknown_field",
                msg.clone(),
                Some(u.field.clone()),
            ),
            ApiError::Asset(a) => match a {
                AssetRefusal::InvalidDestinationAsset { field, message } => (
                    StatusCode::BAD_REQUEST,
                    "invalid_destination_asset",
                    message.clone(),
                    Some(field.clone()),
                ),
                AssetRefusal::AmbiguousCurrency { .. } => (
                    StatusCode::BAD_REQUEST,
                    "ambiguous_currency",
                    msg.clone(),
                    Some("currency".into()),
                ),
                AssetRefusal::MissingDestinationAsset => {
                    plain(StatusCode::BAD_REQUEST, "missing_destination_asset")
                }
                AssetRefusal::Invalid(f) => invalid(f),
            },
            ApiError::Denied(d) => match d {
                Denied::Unauthenticated => plain(StatusCode::UNAUTHORIZED, "unauthorized"),
                Denied::InvalidCredentials | Denied::MissingScope { .. } => {
                    plain(StatusCode::UNAUTHORIZED, "invalid_credentials")
                }
                Denied::Forbidden => plain(StatusCode::FORBIDDEN, "forbidden"),
            },
            ApiError::InvalidLogin(_) => plain(StatusCode::UNAUTHORIZED, "invalid_login"),
            ApiError::ApiKeyNotFound(_) => plain(StatusCode::NOT_FOUND, "api_key_not_found"),
            ApiError::NotFound(_) => plain(StatusCode::NOT_FOUND, "not_found"),
            ApiError::LinkTransition(_) | ApiError::SubscriptionTransition(_) => (
                StatusCode::CONFLICT,
                "invalid_status_transition",
                msg.clone(),
                Some("status".into()),
            ),
            ApiError::SessionTransition(_) => {
                plain(StatusCode::CONFLICT, "invalid_status_transition")
            }
            // Expired, tampered or cross-customer portal URLs: refused before any data loads,
            // without saying which check failed.
            ApiError::PortalRefused(_) => plain(StatusCode::FORBIDDEN, "portal_link_invalid"),
            ApiError::NotActive(_) | ApiError::AlreadyPaid(_) => {
                plain(StatusCode::CONFLICT, "link_not_active")
            }
            ApiError::UnderWay(u) if u.is_paid() => {
                plain(StatusCode::CONFLICT, "link_already_paid")
            }
            ApiError::UnderWay(_) => plain(StatusCode::CONFLICT, "payment_in_progress"),
            ApiError::StartBlocked(_) => plain(StatusCode::CONFLICT, "missing_company_wallet"),
            ApiError::PriceUnavailable(_) => plain(StatusCode::CONFLICT, "price_unavailable"),
            ApiError::Xpub(XpubRefusal::PrivateKey) => (
                StatusCode::BAD_REQUEST,
                "private_key_refused",
                msg.clone(),
                Some("xpub".into()),
            ),
            ApiError::Xpub(XpubRefusal::Invalid(_)) => (
                StatusCode::BAD_REQUEST,
                "validation_failed",
                msg.clone(),
                Some("xpub".into()),
            ),
            ApiError::RefundAddressSet(_) => {
                plain(StatusCode::CONFLICT, "refund_address_already_set")
            }
            ApiError::MissingEmail(_) => (
                StatusCode::BAD_REQUEST,
                "missing_email",
                msg.clone(),
                Some("email".into()),
            ),
            ApiError::RateLimited(_) => plain(StatusCode::TOO_MANY_REQUESTS, "rate_limited"),
            ApiError::Idempotency(c) => plain(
                StatusCode::CONFLICT,
                match c {
                    IdempotencyConflict::Reused => "idempotency_key_reused",
                    IdempotencyConflict::InFlight => "idempotency_key_in_flight",
                },
            ),
            ApiError::PlatformExists(_) => plain(StatusCode::CONFLICT, "platform_exists"),
            ApiError::Claim(ClaimRefused::Claimed) => {
                plain(StatusCode::CONFLICT, "draft_already_claimed")
            }
            ApiError::Claim(ClaimRefused::Expired) => plain(StatusCode::GONE, "draft_expired"),
            ApiError::RegistrationConflict(c) => (
                StatusCode::CONFLICT,
                "registration_conflict",
                msg.clone(),
                Some(c.field.into()),
            ),
            ApiError::Evidence(e) => match e {
                EvidenceRefusal::TooLarge { .. } => {
                    plain(StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large")
                }
                EvidenceRefusal::UnsupportedType => (
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    "unsupported_file_type",
                    msg.clone(),
                    Some("file".into()),
                ),
                EvidenceRefusal::NotFound { field, .. } => (
                    StatusCode::NOT_FOUND,
                    "not_found",
                    msg.clone(),
                    Some(field.clone()),
                ),
                EvidenceRefusal::LinkedElsewhere { field, .. } => (
                    StatusCode::CONFLICT,
                    "evidence_file_linked",
                    msg.clone(),
                    Some(field.clone()),
                ),
            },
            // RFC 6749 section 5.2: 401 for a client that failed to authenticate, else 400.
            ApiError::OAuth(r) => (
                match r.code {
                    OAuthErrorCode::InvalidClient => StatusCode::UNAUTHORIZED,
                    // A native token request's key (the spec's idempotency rule).
                    OAuthErrorCode::IdempotencyKeyReused
                    | OAuthErrorCode::IdempotencyKeyInFlight => StatusCode::CONFLICT,
                    _ => StatusCode::BAD_REQUEST,
                },
                r.code.as_str(),
                msg.clone(),
                None,
            ),
            ApiError::TokenProof(e) => plain(StatusCode::BAD_REQUEST, e.www_authenticate_error()),
            ApiError::NoRedirect(_) => plain(StatusCode::BAD_REQUEST, "invalid_request"),
            ApiError::Token(_) => plain(StatusCode::UNAUTHORIZED, "invalid_credentials"),
            ApiError::Fault(f) if f.is_unavailable() => (
                StatusCode::SERVICE_UNAVAILABLE,
                "unavailable",
                "Service unavailable for a moment; retry later".into(),
                None,
            ),
            ApiError::Fault(_) => (
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal_error",
                "Internal server error".into(),
                None,
            ),
            ApiError::InvalidJson(m) => (StatusCode::BAD_REQUEST, "invalid_json", m.clone(), None),
            ApiError::PayloadTooLarge(_) => {
                plain(StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large")
            }
            ApiError::UnsupportedMediaType => {
                plain(StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type")
            }
            ApiError::RouteNotFound(_) => {
                (StatusCode::NOT_FOUND, "not_found", "Not found".into(), None)
            }
            ApiError::MethodNotAllowed => (
                StatusCode::METHOD_NOT_ALLOWED,
                "method_not_allowed",
                "Method not allowed".into(),
                None,
            ),
            ApiError::RequestHeaderFieldsTooLarge { .. } => plain(
                StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
                "request_header_fields_too_large",
            ),
            ApiError::Unavailable(m) => (
                StatusCode::SERVICE_UNAVAILABLE,
                "unavailable",
                m.clone(),
                None,
            ),
        }
    }

    /// A validation error on `field` (the edge's own readers).
    pub(crate) fn invalid(field: impl Into<String>, message: impl Into<String>) -> Self {
        ApiError::Invalid(FieldError::new(field, message))
    }

    /// A field the route does not take.
    pub(crate) fn unknown_field(field: impl Into<String>) -> Self {
        ApiError::UnknownField(UnknownField {
            field: field.into(),
        })
    }

    /// Logs the cause of a server-side failure (never of a client error, which is expected),
    /// with its whole chain of causes.
    pub fn log(&self) {
        if let ApiError::Fault(fault) = self {
            tracing::error!(cause = %fault.chain(), "request failed");
        }
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        self.parts().0
    }

    fn error_response(&self) -> HttpResponse {
        let mut res = self.render();
        let counted = match self {
            ApiError::InvalidLogin(_) => Some(Counted::SignInFailed),
            ApiError::Token(c) if c.description == pay_domain::oauth::PROOF_REPLAYED => {
                Some(Counted::DpopReplay)
            }
            ApiError::OAuth(r) if r.description == pay_domain::oauth::PROOF_REPLAYED => {
                Some(Counted::DpopReplay)
            }
            _ => None,
        };
        if let Some(c) = counted {
            mark(&mut res, c);
        }
        res
    }
}

impl ApiError {
    fn render(&self) -> HttpResponse {
        let (status, code, message, field) = self.parts();
        let mut res = HttpResponse::build(status);
        if let ApiError::OAuth(_) | ApiError::TokenProof(_) = self {
            return oauth_error_response(status, code, message);
        }
        let missing_scope = match self {
            ApiError::Denied(Denied::MissingScope { scope, dpop_bound }) => {
                Some(TokenChallenge::insufficient_scope(*scope, *dpop_bound))
            }
            _ => None,
        };
        if let Some(c) = missing_scope.as_ref().or(match self {
            ApiError::Token(c) => Some(c),
            _ => None,
        }) {
            for value in c.www_authenticate() {
                res.append_header((header::WWW_AUTHENTICATE, value));
            }
            if let Some(nonce) = &c.nonce {
                res.insert_header((DPOP_NONCE_HEADER, nonce.as_str()));
            }
            return res.json(ErrorBody {
                error: message,
                error_code: code.into(),
                field,
            });
        }
        if let ApiError::RateLimited(RateLimited { retry_after_secs }) = self {
            res.insert_header((header::RETRY_AFTER, retry_after_secs.to_string()));
        }
        if let ApiError::Fault(f) = self {
            if f.is_unavailable() {
                res.insert_header((header::RETRY_AFTER, "5"));
            }
        }
        if status == StatusCode::UNAUTHORIZED {
            res.insert_header((header::WWW_AUTHENTICATE, "PayKey realm=\"pay\""));
        }
        res.json(ErrorBody {
            error: message,
            error_code: code.into(),
            field,
        })
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

impl From<crate::edge::body::BodyError> for ApiError {
    fn from(e: crate::edge::body::BodyError) -> Self {
        match e {
            crate::edge::body::BodyError::TooLarge => {
                ApiError::PayloadTooLarge(crate::edge::body::MAX_BODY_BYTES)
            }
            crate::edge::body::BodyError::Unreadable(why) => ApiError::InvalidJson(why),
        }
    }
}

#[cfg(test)]
#[path = "error_tests.rs"]
mod tests;
