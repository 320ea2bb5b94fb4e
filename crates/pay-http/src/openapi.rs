//! The OpenAPI document, generated from the handlers' own annotations. `docs/openapi.json` is
//! this document committed; a test fails when it is stale.

use utoipa::openapi::security::{ApiKey, ApiKeyValue, SecurityScheme};
use utoipa::openapi::{ContentBuilder, Ref, RefOr, Response, ResponseBuilder};
use utoipa::{Modify, OpenApi, PartialSchema};

use crate::api::{
    bookkeeping, checkout, companies, company, customers, events, installations, links, meta,
    oauth, session, settings, subscriptions, wallets, webhook_subscription, webhooks,
};
use crate::edge::error::ErrorBody;
use crate::pages::gateway;

/// Every route, declared once: each handler carries its `#[utoipa::path]` and its actix
/// method macro, and this list makes both the actix registration (`register_routes`) and the
/// document's paths (`ApiDoc`), in this order. The 405 answers and the route test read the
/// paths back from the document.
macro_rules! routes {
    ($($handler:path),* $(,)?) => {
        /// Registers every route's handler.
        pub(crate) fn register_routes(cfg: &mut actix_web::web::ServiceConfig) {
            $(cfg.service($handler);)*
        }

        #[derive(Debug, OpenApi)]
        #[openapi(
            info(
                title = "Payment Collection Partner API",
                version = "1.0.0",
                description = "Payment links, customers, subscriptions, settings, assets, API keys and webhooks of the self-hostable payment collection service. Errors are `{\"error\", \"errorCode\", \"field\"?}`."
            ),
            paths($($handler),*),
            components(schemas(ErrorBody, crate::edge::error::OAuthErrorBody)),
            modifiers(&Security, &EdgeResponses, &GatewayFormNames)
        )]
        pub struct ApiDoc;
    };
}

routes!(
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
    crate::api::mail::send_request_email,
    customers::upsert_customer,
    customers::list_customers,
    customers::customer_portal,
    bookkeeping::search_contacts,
    subscriptions::create_subscription,
    subscriptions::list_subscriptions,
    subscriptions::get_subscription,
    subscriptions::update_subscription,
    bookkeeping::list_wallet_activity,
    bookkeeping::get_wallet_activity,
    bookkeeping::sandbox_outgoing_transfer,
    bookkeeping::create_expense_from_activity,
    bookkeeping::export::export_expenses,
    bookkeeping::export::export_payments,
    bookkeeping::files::upload_evidence_file,
    bookkeeping::files::get_evidence_file,
    bookkeeping::files::download_evidence_file,
    checkout::manual_resolution,
    checkout::checkout_view,
    crate::pages::checkout::checkout_page,
    crate::pages::checkout::start,
    crate::pages::checkout::accept,
    crate::pages::checkout::cancel,
    crate::pages::checkout::refresh,
    crate::pages::checkout::refund_address,
    crate::pages::portal::portal_page,
    crate::pages::portal::rename,
    crate::pages::portal::set_status,
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
    wallets::put_evm_wallet,
    wallets::get_evm_wallet,
    wallets::delete_evm_wallet,
    company::get_company,
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
    events::list_events,
    events::get_event,
    webhook_subscription::get_subscription,
    webhook_subscription::put_subscription,
    webhook_subscription::delete_subscription,
    oauth::token,
    oauth::revoke,
    oauth::metadata,
    installations::register_installation,
    crate::api::onboarding::create_draft,
    crate::pages::oauth::authorize_page,
    crate::pages::oauth::authorize_decision,
    crate::pages::oauth::signin_page,
    crate::pages::oauth::signin,
    crate::pages::onboarding::claim_page,
    crate::pages::onboarding::claim,
    crate::pages::onboarding::sign_up,
    crate::pages::dashboard::dashboard,
    crate::pages::dashboard::sign_out,
    crate::pages::dashboard::home::home_page,
    crate::pages::dashboard::developers::developers_page,
    crate::pages::dashboard::developers::create_key,
    crate::pages::dashboard::developers::set_key_enabled,
    crate::pages::dashboard::developers::apps::revoke_app,
    crate::pages::dashboard::webhooks::webhooks_page,
    crate::pages::dashboard::webhooks::save_callback,
    crate::pages::dashboard::webhooks::rotate_secret,
    crate::pages::dashboard::webhooks::test_event,
    crate::pages::dashboard::webhooks::deliveries::delivery_page,
    crate::pages::dashboard::webhooks::deliveries::resend,
    crate::pages::dashboard::settings::settings_page,
    crate::pages::dashboard::settings::save_settings,
    crate::pages::dashboard::settings::set_wallet,
    crate::pages::dashboard::team::team_page,
    crate::pages::dashboard::links::list::links_page,
    crate::pages::dashboard::links::list::create_link,
    crate::pages::dashboard::links::detail::link_page,
    crate::pages::dashboard::links::detail::set_link_status,
    crate::pages::dashboard::links::detail::send_request_email,
    crate::pages::dashboard::links::detail::resolve,
    crate::pages::dashboard::customers::customers_page,
    crate::pages::dashboard::customers::upsert_customer,
    crate::pages::dashboard::customers::detail::customer_page,
    crate::pages::dashboard::customers::detail::portal_link,
    crate::pages::dashboard::subscriptions::subscriptions_page,
    crate::pages::dashboard::subscriptions::create_subscription,
    crate::pages::dashboard::subscriptions::detail::subscription_page,
    crate::pages::dashboard::subscriptions::detail::set_subscription_status,
    crate::pages::dashboard::bookkeeping::bookkeeping_page,
    crate::pages::dashboard::bookkeeping::export_csv,
    crate::pages::dashboard::bookkeeping::evidence_download,
    crate::pages::dashboard::bookkeeping::activity::activity_page,
    crate::pages::dashboard::bookkeeping::activity::save_expense,
);

/// The gateway form takes its named fields and any number of `metadata[<key>]` string fields:
/// `additionalProperties: false` plus one `patternProperties` entry, which a derive cannot
/// write (utoipa has no field for it, so it goes in as a raw schema keyword).
struct GatewayFormNames;

impl Modify for GatewayFormNames {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::schema::{AdditionalProperties, Schema};
        let Some(RefOr::T(Schema::Object(form))) = openapi
            .components
            .as_mut()
            .and_then(|c| c.schemas.get_mut("GatewayFormFields"))
        else {
            return;
        };
        form.additional_properties = Some(Box::new(AdditionalProperties::FreeForm(false)));
        form.extensions.get_or_insert_with(Default::default).insert(
            "patternProperties".into(),
            serde_json::json!({
                r"^metadata\[[^\[\]]+\]$": {
                    "type": "string",
                    "description": "A `metadata[<key>]` field (a non-empty key without brackets)"
                }
            }),
        );
    }
}

/// The answers the edge gives any route before or around its handler, added to every
/// operation that can get them so that no route's document leaves one out: a JSON body's
/// 400 (`invalid_json`, `unknown_field`, `validation_failed`), 413 and 415; a form body's 413
/// and 415 (HTML pages); 401 wherever a credential is read; 431 everywhere.
struct EdgeResponses;

const HEADER_LIMIT_RESPONSE: &str = "RequestHeaderFieldsTooLarge";

fn error_response(description: &str, html: bool) -> Response {
    let content = if html {
        (
            "text/html",
            ContentBuilder::new().schema(Some(String::schema())).build(),
        )
    } else {
        (
            "application/json",
            ContentBuilder::new()
                .schema(Some(Ref::from_schema_name("ErrorBody")))
                .build(),
        )
    };
    ResponseBuilder::new()
        .description(description)
        .content(content.0, content.1)
        .build()
}

impl Modify for EdgeResponses {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.responses.insert(
            HEADER_LIMIT_RESPONSE.into(),
            RefOr::T(error_response(
                "`request_header_fields_too_large`: more than 64 header fields or 32 KiB of \
                 header names and values",
                false,
            )),
        );
        for item in openapi.paths.paths.values_mut() {
            for op in [
                &mut item.get,
                &mut item.put,
                &mut item.post,
                &mut item.delete,
                &mut item.patch,
            ]
            .into_iter()
            .flatten()
            {
                let body = op.request_body.as_ref().map(|b| {
                    (
                        b.content.contains_key("application/json"),
                        b.content.contains_key("application/x-www-form-urlencoded"),
                    )
                });
                let mut add = |status: &str, r: Response| {
                    op.responses
                        .responses
                        .entry(status.into())
                        .or_insert(RefOr::T(r));
                };
                match body {
                    Some((true, _)) => {
                        add("400", error_response("`invalid_json`, `unknown_field` or `validation_failed` (the field is named)", false));
                        add(
                            "413",
                            error_response("`payload_too_large`: body over 64 KiB", false),
                        );
                        add(
                            "415",
                            error_response(
                                "`unsupported_media_type`: not `application/json`",
                                false,
                            ),
                        );
                    }
                    Some((false, true)) => {
                        add("413", error_response("HTML page: body over 64 KiB", true));
                        add(
                            "415",
                            error_response(
                                "HTML page: not `application/x-www-form-urlencoded`",
                                true,
                            ),
                        );
                    }
                    _ => {}
                }
                if op.security.as_ref().is_some_and(|s| !s.is_empty()) {
                    add(
                        "401",
                        error_response("`Unauthorized` or `Invalid pay API credentials`", false),
                    );
                }
                op.responses
                    .responses
                    .entry("431".into())
                    .or_insert(RefOr::Ref(Ref::new(format!(
                        "#/components/responses/{HEADER_LIMIT_RESPONSE}"
                    ))));
            }
        }
    }
}

struct Security;

impl Modify for Security {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "apiKeyId",
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                crate::edge::credentials::KEY_ID_HEADER,
                "Public key id (`mk_pay_...`); send together with x-svc-key-secret",
            ))),
        );
        components.add_security_scheme(
            "apiKeySecret",
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                crate::edge::credentials::KEY_SECRET_HEADER,
                "Key secret (`mksec_...`), shown once at creation",
            ))),
        );
        components.add_security_scheme(
            "session",
            SecurityScheme::ApiKey(ApiKey::Cookie(ApiKeyValue::with_description(
                crate::edge::credentials::SESSION_COOKIE,
                "Signed-in session from POST /auth/login; mutations also need x-csrf-token",
            ))),
        );
        components.add_security_scheme(
            "onboardingSecret",
            SecurityScheme::Http(
                utoipa::openapi::security::HttpBuilder::new()
                    .scheme(utoipa::openapi::security::HttpAuthScheme::Bearer)
                    .description(Some(
                        "A partner's onboarding secret (`obs_...`) from \
                         `pay-server admin create-partner`: `Authorization: Bearer <secret>`",
                    ))
                    .build(),
            ),
        );
        components.add_security_scheme(
            "oauthToken",
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                "authorization",
                "OAuth access token from POST /oauth/token: `Bearer <token>`, or `DPoP <token>` \
                 with a `DPoP` proof header for a DPoP-bound token",
            ))),
        );
    }
}

/// The document as committed (`docs/openapi.json`: pretty JSON with a trailing newline), which
/// `committed_openapi_document_is_current` keeps equal to the generated one. The server serves
/// these bytes and reads its paths from them: generating the document at start (every schema
/// composed) left about 4 MB in the workers' allocator arenas, most of an idle server's heap.
pub const COMMITTED: &str = include_str!("../../../docs/openapi.json");

/// Every path of the document (each served by the handlers of `routes!`) with the methods it
/// gives that path, as an `Allow` value (`GET, PUT`), read once per process from `COMMITTED`.
pub fn route_methods() -> &'static [(String, String)] {
    static ROUTES: std::sync::OnceLock<Vec<(String, String)>> = std::sync::OnceLock::new();
    ROUTES.get_or_init(|| {
        route_methods_of(COMMITTED).expect("docs/openapi.json, built in, is the generated document")
    })
}

/// The operations of one path item; whatever else it holds (parameters) is skipped unread.
#[derive(serde::Deserialize)]
struct PathMethods {
    get: Option<serde::de::IgnoredAny>,
    put: Option<serde::de::IgnoredAny>,
    post: Option<serde::de::IgnoredAny>,
    delete: Option<serde::de::IgnoredAny>,
    patch: Option<serde::de::IgnoredAny>,
}

#[derive(serde::Deserialize)]
struct PathsOnly {
    paths: std::collections::BTreeMap<String, PathMethods>,
}

fn route_methods_of(document: &str) -> serde_json::Result<Vec<(String, String)>> {
    let doc: PathsOnly = serde_json::from_str(document)?;
    Ok(doc
        .paths
        .into_iter()
        .map(|(path, m)| {
            let allow = [
                ("GET", m.get.is_some()),
                ("PUT", m.put.is_some()),
                ("POST", m.post.is_some()),
                ("DELETE", m.delete.is_some()),
                ("PATCH", m.patch.is_some()),
            ]
            .iter()
            .filter(|(_, present)| *present)
            .map(|(method, _)| *method)
            .collect::<Vec<_>>()
            .join(", ");
            (path, allow)
        })
        .collect())
}

pub fn document() -> String {
    let mut s = ApiDoc::openapi().to_pretty_json().unwrap_or_default();
    s.push('\n');
    s
}

#[cfg(test)]
mod tests;
