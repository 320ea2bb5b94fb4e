//! Request and response shapes of the companies routes.

use crate::api::schema;
use pay_domain::tenancy::keys::Integration;
use pay_domain::tenancy::keys::NewIntegrationInput;
use pay_domain::tenancy::Membership;
use serde::Deserialize;
use serde::Serialize;
use utoipa::ToSchema;

data_list!(CompanyList, CompanyDto, "The user's teams.");

data_list!(
    IntegrationList,
    IntegrationDto,
    "The team's API keys, newest first."
);

/// A team the signed-in user belongs to.
#[derive(Debug, Serialize, ToSchema)]
pub struct CompanyDto {
    pub id: String,
    pub name: String,
    #[schema(example = "owner")]
    pub role: String,
    #[schema(example = json!(["settings.manage"]))]
    pub permissions: Vec<String>,
}

impl From<Membership> for CompanyDto {
    fn from(m: Membership) -> Self {
        CompanyDto {
            id: m.company_id.to_string(),
            name: m.company_name,
            role: m.role.as_str().into(),
            permissions: m
                .role
                .permissions()
                .iter()
                .map(|p| p.as_str().into())
                .collect(),
        }
    }
}

/// An integration (API key) record; never its secret.
#[derive(Debug, Serialize, ToSchema)]
pub struct IntegrationDto {
    #[schema(example = "mk_pay_Q2x8Lm4Vb7Nc1Zr5Tw9Ye3Ua")]
    pub key_id: String,
    pub partner_id: String,
    pub name: String,
    #[serde(rename = "appSlug")]
    #[schema(example = "pay")]
    pub app_slug: String,
    #[serde(rename = "allowedOrigins")]
    pub allowed_origins: Vec<String>,
    #[schema(example = "pk_pay_H6j2Kd9Lq3Wm7Rp1Xs5Tv8Zb")]
    pub form_key_id: String,
    pub enabled: bool,
    #[serde(rename = "createdAt")]
    pub created_at: String,
    #[serde(rename = "lastUsedAt")]
    pub last_used_at: Option<String>,
}

impl From<Integration> for IntegrationDto {
    fn from(i: Integration) -> Self {
        IntegrationDto {
            key_id: i.key_id.to_string(),
            partner_id: i.partner_id.to_string(),
            name: i.name,
            app_slug: i.app_slug,
            allowed_origins: i.allowed_origins,
            form_key_id: i.form_key_id.to_string(),
            enabled: i.enabled,
            created_at: i.created_at.to_rfc3339(),
            last_used_at: i.last_used_at.map(|t| t.to_rfc3339()),
        }
    }
}

/// A newly created integration, with its secret (shown this once).
#[derive(Debug, Serialize, ToSchema)]
pub struct CreatedIntegrationDto {
    #[serde(flatten)]
    pub integration: IntegrationDto,
    /// The secret; stored hashed, never shown again.
    #[serde(rename = "keySecret")]
    pub key_secret: String,
}

/// `{"integration": {...}}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct CreateIntegrationResponse {
    pub integration: CreatedIntegrationDto,
}

/// Body of `POST .../integrations`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateIntegrationRequest {
    #[schema(schema_with = schema::integration_name)]
    pub name: String,
    /// The payment product's slug: `pay`.
    #[serde(rename = "appSlug")]
    #[schema(example = "pay", pattern = "^pay$")]
    pub app_slug: String,
    /// Origins (`scheme://host[:port]`) the gateway form may be posted from.
    #[serde(rename = "allowedOrigins", default)]
    #[schema(example = json!(["https://shop.example"]))]
    pub allowed_origins: Option<Vec<String>>,
}

impl From<CreateIntegrationRequest> for NewIntegrationInput {
    fn from(r: CreateIntegrationRequest) -> Self {
        NewIntegrationInput {
            name: r.name,
            app_slug: r.app_slug,
            allowed_origins: r.allowed_origins.unwrap_or_default(),
        }
    }
}

/// Body of `PATCH .../integrations/{partnerId}`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateIntegrationRequest {
    pub enabled: bool,
}
