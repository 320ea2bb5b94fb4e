//! The OpenAPI document, generated from the handlers' own annotations. `docs/openapi.json` is
//! this document committed; a test fails when it is stale.

use utoipa::openapi::security::{ApiKey, ApiKeyValue, SecurityScheme};
use utoipa::{Modify, OpenApi};

use crate::checkout_page;
use crate::error::ErrorBody;
use crate::routes::{checkout, companies, gateway, links, meta, session, settings, webhooks};

#[derive(Debug, OpenApi)]
#[openapi(
    info(
        title = "Payment Collection Partner API",
        version = "1.0.0",
        description = "Payment links, settings, assets, API keys and webhooks of the self-hostable payment collection service. Errors are `{\"error\", \"errorCode\", \"field\"?}`."
    ),
    paths(
        meta::healthz,
        meta::readyz,
        meta::timezones,
        meta::openapi_json,
        session::login,
        session::logout,
        companies::list_companies,
        companies::create_integration,
        companies::list_integrations,
        companies::update_integration,
        companies::delete_integration,
        links::create_link,
        gateway::gateway_pay,
        links::create_anonymous_link,
        links::list_links,
        links::get_link,
        links::update_link_status,
        crate::routes::mail::send_request_email,
        checkout::manual_resolution,
        checkout::checkout_view,
        checkout_page::checkout_page,
        checkout_page::start,
        checkout_page::accept,
        checkout_page::cancel,
        checkout_page::refresh,
        checkout_page::refund_address,
        checkout::start_session,
        checkout::get_session,
        checkout::accept_session,
        checkout::cancel_session,
        checkout::refresh_quote,
        checkout::refund_address,
        checkout::sandbox_event,
        checkout::public_sandbox_event,
        checkout::get_clock,
        checkout::advance_clock,
        settings::get_settings,
        settings::put_settings,
        settings::destination_assets,
        webhooks::get_payment_callback,
        webhooks::put_payment_callback,
        webhooks::rotate_payment_callback,
        webhooks::get_legacy_callback,
        webhooks::put_legacy_callback,
        webhooks::rotate_legacy_callback,
        webhooks::list_deliveries,
        webhooks::send_test_event,
        webhooks::get_delivery,
        webhooks::resend_delivery,
    ),
    components(schemas(ErrorBody)),
    modifiers(&Security)
)]
pub struct ApiDoc;

struct Security;

impl Modify for Security {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "apiKeyId",
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                crate::auth::KEY_ID_HEADER,
                "Public key id (`mk_pay_...`); send together with x-svc-key-secret",
            ))),
        );
        components.add_security_scheme(
            "apiKeySecret",
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                crate::auth::KEY_SECRET_HEADER,
                "Key secret (`mksec_...`), shown once at creation",
            ))),
        );
        components.add_security_scheme(
            "session",
            SecurityScheme::ApiKey(ApiKey::Cookie(ApiKeyValue::with_description(
                crate::auth::SESSION_COOKIE,
                "Signed-in session from POST /auth/login; mutations also need x-csrf-token",
            ))),
        );
    }
}

/// The document as committed: pretty JSON with a trailing newline.
pub fn document() -> String {
    let mut s = ApiDoc::openapi().to_pretty_json().unwrap_or_default();
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    /// Fails when `docs/openapi.json` differs from what the handlers generate. Run with
    /// `PAY_UPDATE_OPENAPI=1` to rewrite it.
    #[test]
    fn committed_openapi_document_is_current() {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/openapi.json");
        let generated = super::document();
        if std::env::var("PAY_UPDATE_OPENAPI").as_deref() == Ok("1") {
            std::fs::write(&path, &generated).expect("write docs/openapi.json");
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == generated,
            "docs/openapi.json is stale: run `PAY_UPDATE_OPENAPI=1 cargo test -p pay-http openapi` and commit it"
        );
    }

    /// Every path the server routes (the API's and the hosted page's) is in the document.
    #[test]
    fn every_served_path_is_in_the_document() {
        let doc: serde_json::Value = serde_json::from_str(&super::document()).unwrap();
        let paths = doc["paths"].as_object().unwrap();
        for path in crate::ROUTE_PATHS.iter().chain(crate::checkout_page::PATHS) {
            assert!(
                paths.contains_key(*path),
                "{path} is served but not documented"
            );
        }
    }

    #[test]
    fn every_route_is_documented() {
        let doc: serde_json::Value = serde_json::from_str(&super::document()).unwrap();
        let paths = doc["paths"].as_object().unwrap();
        for (path, method) in [
            ("/healthz", "get"),
            ("/readyz", "get"),
            ("/auth/login", "post"),
            ("/auth/logout", "post"),
            ("/api/partner/v1/companies", "get"),
            ("/api/partner/v1/companies/{companyId}/integrations", "post"),
            ("/api/partner/v1/companies/{companyId}/integrations", "get"),
            (
                "/api/partner/v1/companies/{companyId}/integrations/{partnerId}",
                "patch",
            ),
            (
                "/api/partner/v1/companies/{companyId}/integrations/{partnerId}",
                "delete",
            ),
            ("/api/partner/v1/pay/payment-links", "post"),
            ("/api/public/anonymous-payment-links", "post"),
            ("/gateway/pay/{payKeyId}", "post"),
            ("/api/partner/v1/pay/payment-links", "get"),
            ("/api/partner/v1/pay/payment-links/{uid}", "get"),
            ("/api/partner/v1/pay/payment-links/{uid}", "patch"),
            (
                "/api/partner/v1/pay/payment-links/{uid}/send-request-email",
                "post",
            ),
            ("/api/partner/v1/pay/settings", "get"),
            ("/api/partner/v1/pay/settings", "put"),
            ("/api/partner/v1/pay/destination-assets", "get"),
            ("/api/partner/v1/timezones", "get"),
            ("/api/partner/v1/openapi.json", "get"),
            (
                "/api/partner/v1/companies/{companyId}/payment-callback",
                "get",
            ),
            (
                "/api/partner/v1/companies/{companyId}/payment-callback",
                "put",
            ),
            (
                "/api/partner/v1/companies/{companyId}/payment-callback/rotate-secret",
                "post",
            ),
            (
                "/api/partner/v1/companies/{companyId}/legacy-callback",
                "get",
            ),
            (
                "/api/partner/v1/companies/{companyId}/legacy-callback",
                "put",
            ),
            (
                "/api/partner/v1/companies/{companyId}/legacy-callback/rotate-secret",
                "post",
            ),
            ("/api/partner/v1/pay/webhook-requests", "get"),
            ("/api/partner/v1/pay/webhook-requests/test", "post"),
            ("/api/partner/v1/pay/webhook-requests/{id}", "get"),
            ("/api/partner/v1/pay/webhook-requests/{id}/resend", "post"),
        ] {
            assert!(
                paths.get(path).and_then(|p| p.get(method)).is_some(),
                "{method} {path}"
            );
        }
    }
}
