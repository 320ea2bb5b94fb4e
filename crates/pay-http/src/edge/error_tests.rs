//! Unit tests of the error mapping (edge/error.rs).
use pay_domain::subscriptions::SubscriptionStatus;

use super::*;

#[test]
fn billing_refusals_map_once() {
    let moved = InvalidSubscriptionTransition {
        from: SubscriptionStatus::Cancelled,
        to: SubscriptionStatus::Active,
    };
    let (status, code, _, field) = ApiError::from(SubscriptionError::from(moved)).parts();
    assert_eq!(
        (status, code, field.as_deref()),
        (
            StatusCode::CONFLICT,
            "invalid_status_transition",
            Some("status")
        )
    );
    for refused in [
        ApiError::from(CustomerError::from(PortalRefused)),
        ApiError::from(SubscriptionError::from(PortalRefused)),
    ] {
        let (status, code, _, field) = refused.parts();
        assert_eq!(
            (status, code, field),
            (StatusCode::FORBIDDEN, "portal_link_invalid", None)
        );
    }
}

/// A fault a retry can pass (a full disk, a lost database connection) is 503 with a
/// Retry-After; any other is 500. Neither says what failed.
#[test]
fn unavailable_faults_are_503_with_retry_after() {
    let cause = std::io::Error::other("database or disk is full");
    let full = ApiError::Fault(Fault::unavailable("database (insert link)", cause));
    let res = full.error_response();
    assert_eq!(res.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(res.headers().get(header::RETRY_AFTER).unwrap(), "5");
    let (_, code, message, _) = full.parts();
    assert_eq!(code, "unavailable");
    assert!(
        !message.contains("disk") && !message.contains("insert"),
        "{message}"
    );
    let other = ApiError::Fault(Fault::caused(
        "database (insert link)",
        std::io::Error::other("x"),
    ));
    assert_eq!(
        other.error_response().status(),
        StatusCode::INTERNAL_SERVER_ERROR
    );
    assert!(other
        .error_response()
        .headers()
        .get(header::RETRY_AFTER)
        .is_none());
}
