//! The portal's form bodies, for the OpenAPI document. The routes read their forms as (name,
//! value) pairs (`checkout::fields`: exactly these names, each at most once, anything else
//! refused), so these structs only describe what they take.

use serde::Deserialize;
use utoipa::ToSchema;

/// The rename form.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct RenameForm {
    pub company: String,
    pub customer: String,
    pub expires: String,
    pub signature: String,
    /// The URL's `grant`, when an OAuth grant minted it.
    pub grant: Option<String>,
    /// The URL's `access`, with `grant`.
    pub access: Option<String>,
    /// The token of the page (bound to the signed URL).
    #[schema(min_length = 64, max_length = 64)]
    pub token: String,
    /// The new name; empty clears it.
    #[schema(max_length = 200)]
    pub name: String,
}

/// The pause, resume and cancel forms.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct StatusForm {
    pub company: String,
    pub customer: String,
    pub expires: String,
    pub signature: String,
    /// The URL's `grant`, when an OAuth grant minted it.
    pub grant: Option<String>,
    /// The URL's `access`, with `grant`.
    pub access: Option<String>,
    /// The token of the page (bound to the signed URL).
    #[schema(min_length = 64, max_length = 64)]
    pub token: String,
    /// `paused`, `active` or `cancelled`.
    #[schema(schema_with = crate::api::schema::subscription_status)]
    pub status: String,
}
