//! The edge every route shares: the one capped body reader, strict JSON, credentials, the one
//! error mapping, CORS, header limits, telemetry and the canonical host.

pub mod body;
pub mod canonical;
pub mod cors;
pub mod credentials;
pub mod error;
pub mod exact_json;
pub mod form;
pub mod json;
pub mod limits;
pub mod telemetry;

use pay_domain::kernel::ids::CompanyId;
use pay_domain::tenancy::Denied;

use crate::edge::error::ApiError;

/// The client's address for per-address rate limits: the TCP peer (behind a reverse proxy,
/// every client shares the proxy's; docs/operations.md).
pub(crate) fn client_addr(req: &actix_web::HttpRequest) -> String {
    req.peer_addr()
        .map(|a| a.ip().to_string())
        .unwrap_or_default()
}

/// A `{companyId}` the user cannot access is the spec's 403, malformed or not.
pub(crate) fn company_id(s: &str) -> Result<CompanyId, ApiError> {
    CompanyId::parse(s).ok_or(ApiError::Denied(Denied::Forbidden))
}
