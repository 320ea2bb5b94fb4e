//! The company identity as the API shows it.

use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::tenancy::Company;
use serde::Serialize;
use utoipa::ToSchema;

/// The company the credential acts for.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CompanyIdentityDto {
    #[schema(example = "0192f0c4-1a2b-7c3d-8e4f-0123456789ab")]
    pub id: String,
    #[schema(example = "Acme Goods")]
    pub name: String,
    /// The company's website; null when none is recorded.
    #[schema(example = "https://acme.example")]
    pub website: Option<String>,
    #[schema(value_type = String, example = "2026-11-22T06:07:20.123Z")]
    pub created_at: Timestamp,
}

impl From<Company> for CompanyIdentityDto {
    fn from(c: Company) -> Self {
        CompanyIdentityDto {
            id: c.id.to_string(),
            name: c.name,
            website: c.website,
            created_at: c.created_at,
        }
    }
}
