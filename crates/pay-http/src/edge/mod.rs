//! The edge every route shares: the one capped body reader, strict JSON, credentials, the one
//! error mapping, CORS, header limits, telemetry and the canonical host.

pub mod body;
pub mod canonical;
pub mod cors;
pub mod credentials;
pub mod error;
pub mod exact_json;
pub mod form;
pub mod idempotency;
pub mod json;
pub mod limits;
pub mod metrics;
pub mod multipart;
pub mod telemetry;

use pay_domain::bookkeeping::{ActivityRef, ACTIVITY_NOT_FOUND, FILE_NOT_FOUND};
use pay_domain::checkout::SESSION_NOT_FOUND;
use pay_domain::customers::{ContactRef, CUSTOMER_NOT_FOUND};
use pay_domain::kernel::error::NotFound;
use pay_domain::kernel::ids::{CompanyId, LinkUid, PaymentSessionId};
use pay_domain::kernel::ids::{DeliveryId, EvidenceFileId, SubscriptionUid};
use pay_domain::links::LINK_NOT_FOUND;
use pay_domain::subscriptions::SUBSCRIPTION_NOT_FOUND;
use pay_domain::tenancy::Denied;
use pay_domain::webhooks::DELIVERY_NOT_FOUND;

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

/// A customer as a route names it, by internal id or public uid: one that is neither is the
/// unknown customer (404).
pub(crate) fn contact_ref(s: &str) -> Result<ContactRef, NotFound> {
    ContactRef::parse(s).ok_or(CUSTOMER_NOT_FOUND)
}

/// A subscription's public uid as the route gives it: one that is no subscription's is the
/// unknown subscription (404).
pub(crate) fn subscription_uid(s: &str) -> Result<SubscriptionUid, NotFound> {
    SubscriptionUid::parse(s).ok_or(SUBSCRIPTION_NOT_FOUND)
}

/// A wallet activity as a route names it, by id or `<chain>:<txHash>:<index>` key: one that is
/// neither is the unknown activity (404).
pub(crate) fn activity_ref(s: &str) -> Result<ActivityRef, NotFound> {
    ActivityRef::parse(s).ok_or(ACTIVITY_NOT_FOUND)
}

/// An evidence file's id as the route gives it: one that is no file's is the unknown file (404).
pub(crate) fn evidence_file_id(s: &str) -> Result<EvidenceFileId, NotFound> {
    EvidenceFileId::parse(s).ok_or(FILE_NOT_FOUND)
}

/// A webhook delivery's id as the route gives it: one that is no delivery's is the unknown
/// delivery (404).
pub(crate) fn delivery_id(s: &str) -> Result<DeliveryId, NotFound> {
    DeliveryId::parse(s).ok_or(DELIVERY_NOT_FOUND)
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

    /// Each other path id the routes take: what names nothing is that kind's 404, before any
    /// store is asked; a well-formed one passes through unchanged.
    #[test]
    fn a_malformed_path_id_is_its_kinds_404() {
        let uuid = "0192f0c4-1a2b-7c3d-8e4f-0123456789ab";
        let malformed = [
            "",
            "nope",
            "1234",
            "0192f0c41a2b7c3d8e4f0123456789ab",
            "0192f0c4-1a2b-7c3d-8e4f-0123456789ab0",
            "00000000-0000-0000-0000-00000000zzzz",
            "sub_AAAAAAAAAAAAAAAAAAAAAAA",
            "cus_AAAAAAAAAAAAAAAAAAAAAAA/",
            "' OR 1=1 --",
        ];
        for bad in malformed {
            assert_eq!(delivery_id(bad), Err(DELIVERY_NOT_FOUND), "{bad:?}");
            assert_eq!(evidence_file_id(bad), Err(FILE_NOT_FOUND), "{bad:?}");
            assert_eq!(
                subscription_uid(bad),
                Err(SUBSCRIPTION_NOT_FOUND),
                "{bad:?}"
            );
            assert_eq!(contact_ref(bad), Err(CUSTOMER_NOT_FOUND), "{bad:?}");
            assert_eq!(activity_ref(bad), Err(ACTIVITY_NOT_FOUND), "{bad:?}");
        }
        assert_eq!(
            delivery_id(uuid).map(|d| d.to_string()).as_deref(),
            Ok(uuid)
        );
        assert_eq!(
            evidence_file_id(uuid).map(|d| d.to_string()).as_deref(),
            Ok(uuid)
        );
        let sub = "sub_AAAAAAAAAAAAAAAAAAAAAAAA";
        assert_eq!(
            subscription_uid(sub).map(|s| s.to_string()).as_deref(),
            Ok(sub)
        );
        let cus = "cus_AAAAAAAAAAAAAAAAAAAAAAAA";
        assert!(matches!(contact_ref(cus), Ok(ContactRef::Uid(u)) if u.as_str() == cus));
        assert!(matches!(contact_ref(uuid), Ok(ContactRef::Id(i)) if i.to_string() == uuid));
        assert!(matches!(activity_ref(uuid), Ok(ActivityRef::Id(i)) if i.to_string() == uuid));
        let key = format!("eip155:8453:0x{}:3", "ab".repeat(32));
        assert!(
            matches!(activity_ref(&key), Ok(ActivityRef::Key(_))),
            "{key}"
        );
    }
}
