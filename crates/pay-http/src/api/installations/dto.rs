//! Request and response shapes of the native registration route (the spec's "Native
//! registration body" and "Native installation client").

use pay_domain::installations::registration::RegistrationBody;
use pay_domain::installations::NativeClient;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::edge::json::non_null;

/// Body of `POST /oauth/native/installations`. `platform`, `registrationId`, `siteUrl`,
/// `redirectUri` and `dpopJkt` are required; the versions and `siteName` are support metadata.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RegistrationRequest {
    /// The commerce platform template (created by the operator); an unknown one is refused.
    #[schema(example = "woocommerce", pattern = "^[a-z0-9][a-z0-9-]{0,63}$")]
    pub platform: String,
    /// 32 random bytes as canonical unpadded base64url (43 characters, the last one carrying
    /// no padding bits): generated once, persisted before the first request, reused on
    /// retries and reconnects; never derived from the site address.
    #[schema(
        example = "q0pJd3W8yFz4c3vV1b9Xo5nT7kLmR2sAeGhUiYwPxQA",
        pattern = "^[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$"
    )]
    pub registration_id: String,
    /// Exactly one public https origin: no user info, path (not even `/`), query or fragment.
    #[schema(example = "https://shop.example", pattern = "^https://[^/?#@]+$")]
    pub site_url: String,
    /// Exactly the `siteUrl` origin followed by `/pay/oauth/callback`.
    #[schema(
        example = "https://shop.example/pay/oauth/callback",
        pattern = "^https://[^/?#@]+/pay/oauth/callback$"
    )]
    pub redirect_uri: String,
    /// The base64url SHA-256 JWK thumbprint (RFC 7638) of the installation's DPoP key; the
    /// `DPoP` header must be a proof made with that key.
    #[schema(
        example = "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs",
        pattern = "^[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$"
    )]
    pub dpop_jkt: String,
    /// Support metadata.
    #[serde(default, deserialize_with = "non_null")]
    #[schema(example = "6.5.2", min_length = 1, max_length = 64, nullable = false)]
    pub platform_version: Option<String>,
    /// Support metadata.
    #[serde(default, deserialize_with = "non_null")]
    #[schema(example = "1.0.0", min_length = 1, max_length = 64, nullable = false)]
    pub plugin_version: Option<String>,
    /// Support metadata only: the consent page shows the platform template's name and icon,
    /// never this.
    #[serde(default, deserialize_with = "non_null")]
    #[schema(
        example = "My Shop",
        min_length = 1,
        max_length = 200,
        nullable = false
    )]
    pub site_name: Option<String>,
}

impl From<RegistrationRequest> for RegistrationBody {
    fn from(r: RegistrationRequest) -> Self {
        RegistrationBody {
            platform: r.platform,
            registration_id: r.registration_id,
            site_url: r.site_url,
            redirect_uri: r.redirect_uri,
            dpop_jkt: r.dpop_jkt,
            platform_version: r.platform_version,
            plugin_version: r.plugin_version,
            site_name: r.site_name,
        }
    }
}

/// The installation's OAuth client (the same public fields on every registration).
#[derive(Debug, Serialize, ToSchema)]
pub struct NativeClientDto {
    /// `svc_app_` and 32 alphanumerics.
    #[schema(example = "svc_app_4Hk2m9QpX7vR1sT8wY3zB6nC0dF5gJ2L")]
    pub client_id: String,
    /// Always `public`: no client secret, PKCE S256 and the DPoP key instead.
    #[schema(example = "public")]
    pub client_type: &'static str,
    /// Always true: every token is bound to the registered key.
    pub dpop_bound: bool,
    /// The `registrationId` sent.
    pub registration_id: String,
    /// `{siteUrl}/pay/oauth/callback`, the only redirect URI of the client.
    #[schema(example = "https://shop.example/pay/oauth/callback")]
    pub redirect_uri: String,
    /// The official native scopes.
    #[schema(example = json!(["company:read", "pay:payment-links:read", "pay:payment-links:write", "pay:webhooks:read", "pay:webhooks:write"]))]
    pub scopes: Vec<&'static str>,
}

impl From<NativeClient> for NativeClientDto {
    fn from(c: NativeClient) -> Self {
        NativeClientDto {
            client_id: c.client_id.to_string(),
            client_type: pay_domain::oauth::ClientType::Public.as_str(),
            dpop_bound: true,
            registration_id: c.registration_id,
            redirect_uri: c.redirect_uri,
            scopes: c.scopes.iter().map(|s| s.as_str()).collect(),
        }
    }
}
