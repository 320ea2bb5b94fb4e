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

use pay_domain::checkout::SESSION_NOT_FOUND;
use pay_domain::kernel::error::NotFound;
use pay_domain::kernel::ids::{CompanyId, LinkUid, PaymentSessionId};
use pay_domain::links::LINK_NOT_FOUND;
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

/// A link's public id as the request gives it: one that is no link's is the unknown link
/// (404), as an unknown or another company's link is.
pub(crate) fn link_uid(s: &str) -> Result<LinkUid, NotFound> {
    LinkUid::parse(s).ok_or(LINK_NOT_FOUND)
}

/// A payment session's id as the request gives it: one that is no session's is the unknown
/// session (404).
pub(crate) fn session_id(s: &str) -> Result<PaymentSessionId, NotFound> {
    PaymentSessionId::parse(s).ok_or(SESSION_NOT_FOUND)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_malformed_link_or_session_id_is_the_unknown_ones_404() {
        for bad in [
            "",
            "abc",
            "AbCdEfGhIjKlMnOpQrStU/",
            "AbCdEfGhIjKlMnOpQrStUvW",
            "../etc",
        ] {
            assert_eq!(link_uid(bad), Err(LINK_NOT_FOUND), "{bad:?}");
        }
        assert_eq!(
            link_uid("AbCdEfGhIjKlMnOpQrStUv").map(|u| u.to_string()),
            Ok("AbCdEfGhIjKlMnOpQrStUv".to_owned())
        );
        for bad in ["", "7", "0192f0c41a2b7c3d8e4f0123456789ab"] {
            assert_eq!(session_id(bad), Err(SESSION_NOT_FOUND), "{bad:?}");
        }
        let id = "0192f0c4-1a2b-7c3d-8e4f-0123456789ab";
        assert_eq!(session_id(id).map(|s| s.to_string()), Ok(id.to_owned()));
    }
}
