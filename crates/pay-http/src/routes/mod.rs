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

use pay_domain::kernel::ids::CompanyId;
use pay_domain::DomainError;

use crate::error::ApiError;

/// The client's address for per-address rate limits: the TCP peer (behind a reverse proxy,
/// every client shares the proxy's; docs/operations.md).
pub(crate) fn client_addr(req: &actix_web::HttpRequest) -> String {
    req.peer_addr()
        .map(|a| a.ip().to_string())
        .unwrap_or_default()
}

/// A `{companyId}` the user cannot access is the spec's 403, malformed or not.
pub(crate) fn company_id(s: &str) -> Result<CompanyId, ApiError> {
    CompanyId::parse(s).ok_or(ApiError::Domain(DomainError::Forbidden))
}
