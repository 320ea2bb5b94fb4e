//! A native commerce-platform template: what an operator creates once per platform and every
//! installation of that platform shows (its name, icon and support link), with the official
//! native scopes as its policy. A template never changes once created; an installation's own
//! `siteName` is support metadata and never replaces its branding.

use crate::kernel::error::FieldError;
use crate::kernel::ids::{ApplicationId, ClientId};
use crate::kernel::timestamp::Timestamp;
use crate::kernel::validate;
use crate::tenancy::Scope;

/// The official native scope set (the spec's registration response).
pub const NATIVE_SCOPES: [Scope; 5] = [
    Scope::CompanyRead,
    Scope::PaymentLinksRead,
    Scope::PaymentLinksWrite,
    Scope::WebhooksRead,
    Scope::WebhooksWrite,
];

/// Longest platform identifier.
pub const MAX_PLATFORM_LEN: usize = 64;
/// Longest display name.
pub const MAX_PLATFORM_NAME_LEN: usize = 100;

/// A stored platform template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NativePlatform {
    /// The identifier a registration names (`platform`): `[a-z0-9-]`, starting with a letter
    /// or digit.
    pub platform: String,
    /// The name the consent page shows.
    pub name: String,
    pub icon_url: Option<String>,
    pub support_url: Option<String>,
    /// What an installation of this platform may be granted: `NATIVE_SCOPES`.
    pub scopes: Vec<Scope>,
    pub created_at: Timestamp,
}

/// The operator's input (`admin create-native-platform`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewPlatform {
    pub platform: String,
    pub name: String,
    pub icon_url: Option<String>,
    pub support_url: Option<String>,
}

/// Whether `value` is a platform identifier (see `NativePlatform::platform`).
pub fn is_platform_id(value: &str) -> bool {
    !value.is_empty()
        && value.len() <= MAX_PLATFORM_LEN
        && value
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !value.starts_with('-')
}

/// An https URL (icons and support pages are shown to merchants on our pages).
fn https_url(field: &str, value: &str) -> Result<(), FieldError> {
    validate::http_url(field, value)?;
    if !value.starts_with("https://") {
        return Err(FieldError::new(
            field,
            format!("{field} must be an https URL"),
        ));
    }
    Ok(())
}

impl NewPlatform {
    /// Checks every field; the first wrong one is the error.
    pub fn validate(&self) -> Result<(), FieldError> {
        if !is_platform_id(&self.platform) {
            return Err(FieldError::new(
                "platform",
                format!(
                    "platform must be 1 to {MAX_PLATFORM_LEN} characters of a-z, 0-9 and -, not starting with -"
                ),
            ));
        }
        if self.name.trim().is_empty() {
            return Err(FieldError::new("name", "name must not be empty"));
        }
        validate::text("name", &self.name, MAX_PLATFORM_NAME_LEN, false)?;
        if let Some(u) = &self.icon_url {
            https_url("iconUrl", u)?;
        }
        if let Some(u) = &self.support_url {
            https_url("supportUrl", u)?;
        }
        Ok(())
    }
}

/// A native installation: one site's plugin, registered under its `registrationId`, with the
/// OAuth application (`svc_app_...`) made for it. Its key lives on that application
/// (`oauth::RegisteredKey`), where consent binds grants to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installation {
    /// Canonical unpadded base64url of 32 random bytes, chosen by the plugin once.
    pub registration_id: String,
    /// The template it was registered under; never changes.
    pub platform: String,
    pub application_id: ApplicationId,
    pub client_id: ClientId,
    /// The site's normalised https origin; never changes.
    pub site_url: String,
    /// `{site_url}/pay/oauth/callback`.
    pub redirect_uri: String,
    /// Support metadata, as last registered; never shown as branding.
    pub platform_version: Option<String>,
    pub plugin_version: Option<String>,
    pub site_name: Option<String>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// The registration response's client (the spec's "Native installation client"): always a
/// public, DPoP-bound client with the template's scopes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NativeClient {
    pub client_id: ClientId,
    pub registration_id: String,
    pub redirect_uri: String,
    pub scopes: Vec<Scope>,
    /// Whether this registration created the installation (201) or found it (200).
    pub created: bool,
}
