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

/// The paths and `Allow` values the server reads from the committed document are those of
/// the generated one, path for path (the 405 answers rely on them).
#[test]
fn the_route_methods_are_the_generated_documents() {
    let generated: serde_json::Value = serde_json::from_str(&super::document()).unwrap();
    let expected: Vec<(String, String)> = generated["paths"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(path, item)| {
            let allow = ["get", "put", "post", "delete", "patch"]
                .iter()
                .filter(|m| item.get(**m).is_some())
                .map(|m| m.to_uppercase())
                .collect::<Vec<_>>()
                .join(", ");
            (path.clone(), allow)
        })
        .collect();
    assert!(expected.len() > 40, "only {} paths", expected.len());
    assert_eq!(super::route_methods(), &expected[..]);
    assert_eq!(
        super::route_methods_of(&super::document()).unwrap(),
        expected
    );
}

/// Every operation of the document reaches a handler: a request with that method on that
/// path (parameters filled in) is neither the 404 of an unknown route nor a 405. The
/// handlers run without the service, so they stop at their first extractor.
#[actix_rt::test]
async fn every_documented_operation_is_routed() {
    use actix_web::{test, App};
    let doc: serde_json::Value = serde_json::from_str(&super::document()).unwrap();
    let app = test::init_service(App::new().configure(crate::configure)).await;
    let mut checked = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        let concrete: String = path
            .split('/')
            .map(|s| if s.starts_with('{') { "x1" } else { s })
            .collect::<Vec<_>>()
            .join("/");
        for method in item.as_object().unwrap().keys() {
            let req = test::TestRequest::default()
                .method(method.to_uppercase().parse().unwrap())
                .uri(&concrete)
                .to_request();
            let res = test::call_service(&app, req).await;
            let status = res.status().as_u16();
            let body = test::read_body(res).await;
            let text = String::from_utf8_lossy(&body);
            assert!(
                status != 405 && !text.contains("route_not_found"),
                "{method} {path}: {status} {text}"
            );
            checked += 1;
        }
    }
    assert!(checked > 40, "only {checked} operations");
}

/// A path the document does not name is the JSON 404; a documented path with another
/// method is 405 with `Allow` from the document.
#[actix_rt::test]
async fn unknown_routes_and_methods_are_refused() {
    use actix_web::{test, App};
    let app = test::init_service(App::new().configure(crate::configure).default_service(
        actix_web::web::to(|req: actix_web::HttpRequest| async move {
            actix_web::ResponseError::error_response(&crate::not_found(req).await)
        }),
    ))
    .await;
    let res = test::call_service(
        &app,
        test::TestRequest::delete()
            .uri("/api/partner/v1/pay/settings")
            .to_request(),
    )
    .await;
    assert_eq!(res.status().as_u16(), 405);
    assert_eq!(res.headers().get("allow").unwrap(), "GET, PUT");
    let res = test::call_service(&app, test::TestRequest::get().uri("/nowhere").to_request()).await;
    assert_eq!(res.status().as_u16(), 404);
}

/// What schemathesis found missing once: request bodies that admit fields the server
/// refuses, edge answers left out, the anonymous create's optional security.
#[test]
fn the_document_says_what_the_edge_does() {
    let doc: serde_json::Value = serde_json::from_str(&super::document()).unwrap();
    let schemas = &doc["components"]["schemas"];
    let resolve = |s: &serde_json::Value| match s["$ref"].as_str() {
        Some(r) => schemas[r.trim_start_matches("#/components/schemas/")].clone(),
        None => s.clone(),
    };
    let mut bodies = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let at = format!("{method} {path}");
            let responses = op["responses"].as_object().unwrap();
            assert!(responses.contains_key("431"), "{at}: 431");
            if op.get("security").is_some() {
                assert!(responses.contains_key("401"), "{at}: 401");
            }
            let content = &op["requestBody"]["content"];
            for (media, statuses) in [
                ("application/json", &["400", "413", "415"][..]),
                ("application/x-www-form-urlencoded", &["413", "415"][..]),
            ] {
                let Some(body) = content.get(media) else {
                    continue;
                };
                for status in statuses {
                    assert!(responses.contains_key(*status), "{at}: {status}");
                }
                let schema = resolve(&body["schema"]);
                let object = match schema.get("oneOf") {
                    // An optional body: null or the object.
                    Some(alternatives) => alternatives
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(resolve)
                        .find(|s| s["type"] == "object")
                        .unwrap(),
                    None => schema,
                };
                // RFC 6749 section 3.2: the token endpoint (and RFC 7009's revocation)
                // MUST ignore parameters it does not know, so those schemas admit them.
                if path != "/oauth/token" && path != "/oauth/revoke" {
                    assert_eq!(
                        object["additionalProperties"],
                        serde_json::json!(false),
                        "{at}: unknown fields are refused, so the schema must say so"
                    );
                }
                bodies += 1;
            }
        }
    }
    assert!(bodies > 20, "{bodies}");
    let security = &doc["paths"]["/api/partner/v1/pay/payment-links"]["post"]["security"];
    assert!(
        security
            .as_array()
            .unwrap()
            .contains(&serde_json::json!({})),
        "without a credential the create makes an anonymous link: {security}"
    );
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
        ("/api/partner/v1/pay/customers", "post"),
        ("/api/partner/v1/pay/customers", "get"),
        ("/api/partner/v1/pay/customers/{customerId}/portal", "post"),
        ("/api/partner/v1/pay/subscriptions", "post"),
        ("/api/partner/v1/pay/subscriptions", "get"),
        ("/api/partner/v1/pay/subscriptions/{uid}", "get"),
        ("/api/partner/v1/pay/subscriptions/{uid}", "patch"),
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
        ("/oauth/token", "post"),
        ("/oauth/revoke", "post"),
        ("/.well-known/oauth-authorization-server", "get"),
        ("/oauth/authorize", "get"),
        ("/oauth/authorize", "post"),
        ("/signin", "get"),
        ("/signin", "post"),
        ("/api/partner/v1/onboarding/company", "post"),
    ] {
        assert!(
            paths.get(path).and_then(|p| p.get(method)).is_some(),
            "{method} {path}"
        );
    }
}
