//! What OAuth refuses, each refusal carrying the code its RFC gives it: the authorization
//! and token endpoints' (RFC 6749 sections 4.1.2.1 and 5.2, RFC 9449 section 5), the
//! resource routes' (RFC 6750 section 3.1, RFC 9449 section 7.1), and the authorization
//! requests that must never be redirected (an unknown client or redirect URI).

use crate::kernel::error::{Fault, FieldError};
use crate::tenancy::Denied;

/// An error code of the authorization and token endpoints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OAuthErrorCode {
    InvalidRequest,
    InvalidClient,
    InvalidGrant,
    UnauthorizedClient,
    UnsupportedGrantType,
    InvalidScope,
    AccessDenied,
    /// RFC 9449: the token request's DPoP proof is missing, invalid or of the wrong key.
    InvalidDpopProof,
    /// RFC 9449: retry with the server's nonce.
    UseDpopNonce,
    /// A native token request's `Idempotency-Key` holds another request (409, as the spec's
    /// idempotency rule).
    IdempotencyKeyReused,
    /// A native token request with this `Idempotency-Key` is still running (409).
    IdempotencyKeyInFlight,
}

impl OAuthErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            OAuthErrorCode::InvalidRequest => "invalid_request",
            OAuthErrorCode::InvalidClient => "invalid_client",
            OAuthErrorCode::InvalidGrant => "invalid_grant",
            OAuthErrorCode::UnauthorizedClient => "unauthorized_client",
            OAuthErrorCode::UnsupportedGrantType => "unsupported_grant_type",
            OAuthErrorCode::InvalidScope => "invalid_scope",
            OAuthErrorCode::AccessDenied => "access_denied",
            OAuthErrorCode::InvalidDpopProof => "invalid_dpop_proof",
            OAuthErrorCode::UseDpopNonce => "use_dpop_nonce",
            OAuthErrorCode::IdempotencyKeyReused => "idempotency_key_reused",
            OAuthErrorCode::IdempotencyKeyInFlight => "idempotency_key_in_flight",
        }
    }
}

/// A refused authorization or token request: `error` and `error_description` of the RFC 6749
/// body (or of the redirect, for an authorization request whose client and redirect URI are
/// known). The description names the rule, never a secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{description}")]
pub struct OAuthRefusal {
    pub code: OAuthErrorCode,
    pub description: &'static str,
}

impl OAuthRefusal {
    pub const fn new(code: OAuthErrorCode, description: &'static str) -> Self {
        OAuthRefusal { code, description }
    }
}

/// An authorization request with an unknown `client_id` or a `redirect_uri` the application
/// did not register: shown as an error page, never redirected (RFC 6749 section 4.1.2.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{description}")]
pub struct NoRedirect {
    pub description: &'static str,
}

/// The description of a DPoP proof refused because its `jti` was used before (the edge counts
/// these refusals by it).
pub const PROOF_REPLAYED: &str = "the DPoP proof was already used";

/// An error code of a protected resource (`WWW-Authenticate` `error=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ResourceErrorCode {
    /// RFC 6750: unknown, expired or revoked token, or a bound token used as Bearer.
    InvalidToken,
    /// RFC 9449: a missing proof for a bound token, a proof of another key, a replayed `jti`.
    InvalidDpopProof,
    /// RFC 9449: retry with the server's nonce.
    UseDpopNonce,
}

impl ResourceErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ResourceErrorCode::InvalidToken => "invalid_token",
            ResourceErrorCode::InvalidDpopProof => "invalid_dpop_proof",
            ResourceErrorCode::UseDpopNonce => "use_dpop_nonce",
        }
    }
}

/// An access token a resource route refuses (the spec's 401 `Invalid pay API credentials`,
/// with `WWW-Authenticate` carrying `code`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{description}")]
pub struct ResourceRefusal {
    pub code: ResourceErrorCode,
    pub description: &'static str,
}

impl ResourceRefusal {
    pub const fn new(code: ResourceErrorCode, description: &'static str) -> Self {
        ResourceRefusal { code, description }
    }
}

crate::context_error! {
    /// What an OAuth use case (registration, authorization, token, revocation, resource
    /// authentication) can return.
    pub enum OAuthError {
        /// Registration input (the operator's command).
        Invalid(FieldError),
        /// The signed-in user is not a member of the company, or may not approve for it.
        Denied(Denied),
        /// RFC 6749 / RFC 9449 token and authorization endpoint errors.
        Refused(OAuthRefusal),
        /// Unknown client or redirect URI at the authorization endpoint: an error page.
        NoRedirect(NoRedirect),
        /// RFC 6750 / RFC 9449 resource errors.
        Resource(ResourceRefusal),
        Fault(Fault),
    }
}

/// Shorthands for the refusals the use cases return.
pub(crate) fn refused(code: OAuthErrorCode, description: &'static str) -> OAuthError {
    OAuthError::Refused(OAuthRefusal::new(code, description))
}

pub(crate) fn resource(code: ResourceErrorCode, description: &'static str) -> OAuthError {
    OAuthError::Resource(ResourceRefusal::new(code, description))
}
