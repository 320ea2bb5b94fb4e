//! The hosted checkout page's form bodies: what reads each form (`edge::form::read_page_form`:
//! exactly these names, each at most once, anything else refused) and what the OpenAPI
//! document describes (their serde attributes give it the names and
//! `additionalProperties: false`).

use serde::Deserialize;
use utoipa::ToSchema;

/// The accept, cancel and refresh forms: no field.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EmptyForm {}

/// The asset choice of `POST /pay/{uid}/start`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StartForm {
    /// An asset identifier of the link's pay assets.
    #[serde(rename = "payAsset")]
    #[schema(min_length = 1)]
    pub pay_asset: String,
}

/// The refund address of a `refund_pending` session.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RefundAddressForm {
    /// An address on the chain of the session's pay asset.
    #[schema(min_length = 1, max_length = 128)]
    pub address: String,
}
