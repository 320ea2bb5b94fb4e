//! Routes, one module per resource; each handler reads its input strictly, calls one use case
//! on the blocking pool and converts the result.

pub mod checkout;
pub mod companies;
pub mod gateway;
pub mod links;
pub mod mail;
pub mod meta;
pub mod session;
pub mod settings;
pub mod webhooks;

use pay_domain::ids::CompanyId;
use pay_domain::DomainError;

use crate::error::ApiError;

/// A `{companyId}` the user cannot access is the spec's 403, malformed or not.
pub(crate) fn company_id(s: &str) -> Result<CompanyId, ApiError> {
    CompanyId::parse(s).ok_or(ApiError::Domain(DomainError::Forbidden))
}
