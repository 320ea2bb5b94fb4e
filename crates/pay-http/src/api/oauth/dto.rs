//! Request and response shapes of the OAuth endpoints. The token and revocation requests are
//! forms (RFC 6749 section 4.1.3, RFC 7009 section 2.1) read by these structs
//! (`edge::form::read`); unknown parameters are ignored, as RFC 6749 section 3.2 requires.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// The grant types the token endpoint takes (documentation only: the body reads the text and
/// answers `unsupported_grant_type` for any other, RFC 6749 5.2).
#[derive(Debug, ToSchema)]
#[schema(rename_all = "snake_case")]
#[allow(dead_code)]
pub enum GrantType {
    AuthorizationCode,
    RefreshToken,
}

/// Body of `POST /oauth/token`.
#[derive(Deserialize, ToSchema)]
pub struct TokenRequest {
    /// `authorization_code` or `refresh_token`.
    #[schema(value_type = GrantType, example = "authorization_code")]
    pub grant_type: String,
    /// `authorization_code`: the code from the redirect.
    pub code: Option<String>,
    /// `authorization_code`: exactly the `redirect_uri` of the authorization request.
    pub redirect_uri: Option<String>,
    /// `authorization_code`: the PKCE verifier (43-128 characters of `[A-Za-z0-9-._~]`).
    pub code_verifier: Option<String>,
    /// `refresh_token`: the current refresh token (it rotates on every use).
    pub refresh_token: Option<String>,
    /// `refresh_token`: narrows the new access token's scopes (never widens them).
    pub scope: Option<String>,
    /// Public clients and `client_secret_post`.
    pub client_id: Option<String>,
    /// `client_secret_post` (else send it with `Authorization: Basic`).
    pub client_secret: Option<String>,
}

impl std::fmt::Debug for TokenRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TokenRequest(***)")
    }
}

/// Body of `POST /oauth/revoke` (RFC 7009).
#[derive(Deserialize, ToSchema)]
pub struct RevokeRequest {
    /// An access or refresh token of this client; a refresh token revokes its whole family.
    pub token: String,
    /// `access_token` or `refresh_token`; not needed (our tokens name their kind).
    pub token_type_hint: Option<String>,
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
}

impl std::fmt::Debug for RevokeRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RevokeRequest(***)")
    }
}

/// A successful token response (RFC 6749 section 5.1), sent with `Cache-Control: no-store`.
#[derive(Serialize, ToSchema)]
pub struct TokenResponseDto {
    /// Opaque; send as `Authorization: DPoP <token>` with a proof (`token_type` DPoP) or
    /// `Authorization: Bearer <token>`.
    pub access_token: String,
    /// `DPoP` when the token request carried a proof (the token is bound to its key), else
    /// `Bearer`.
    #[schema(example = "DPoP")]
    pub token_type: &'static str,
    /// Seconds until the access token expires.
    #[schema(example = 900)]
    pub expires_in: i64,
    /// Rotates on every use: store the new one before discarding the old one.
    pub refresh_token: String,
    /// The granted scopes, space-separated.
    #[schema(example = "pay:payment-links:read pay:payment-links:write")]
    pub scope: String,
}

impl std::fmt::Debug for TokenResponseDto {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TokenResponseDto(***)")
    }
}

/// Authorization server metadata (RFC 8414).
#[derive(Debug, Serialize, ToSchema)]
pub struct ServerMetadata {
    pub issuer: String,
    pub authorization_endpoint: String,
    pub token_endpoint: String,
    pub revocation_endpoint: String,
    pub response_types_supported: Vec<&'static str>,
    pub response_modes_supported: Vec<&'static str>,
    pub grant_types_supported: Vec<&'static str>,
    pub code_challenge_methods_supported: Vec<&'static str>,
    pub token_endpoint_auth_methods_supported: Vec<&'static str>,
    pub revocation_endpoint_auth_methods_supported: Vec<&'static str>,
    pub scopes_supported: Vec<&'static str>,
    /// RFC 9449 section 5.1.
    pub dpop_signing_alg_values_supported: Vec<&'static str>,
}
