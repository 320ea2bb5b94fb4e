//! Health, readiness, time zones, the OpenAPI document, unknown routes and request ids.

use reqwest::Method;
use serde_json::Value;

use crate::helpers::{assert_error, read, TestApp};
use crate::on_both_backends;

async fn health_and_readiness(app: TestApp) {
    let got = read(app.anon(Method::GET, "/healthz").send().await.unwrap()).await;
    assert_eq!(
        (got.0.as_u16(), got.1["status"].as_str()),
        (200, Some("ok"))
    );
    let got = read(app.anon(Method::GET, "/readyz").send().await.unwrap()).await;
    assert_eq!(
        (got.0.as_u16(), got.1["status"].as_str()),
        (200, Some("ok"))
    );
}

async fn timezones_are_public_and_real(app: TestApp) {
    let res = app
        .anon(Method::GET, "/api/partner/v1/timezones")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert!(res.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("application/json"));
    let body: Value = res.json().await.unwrap();
    let zones: Vec<&str> = body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|z| z.as_str().unwrap())
        .collect();
    assert!(zones.len() > 400);
    for z in [
        "Africa/Abidjan",
        "Europe/Paris",
        "America/New_York",
        "Asia/Kolkata",
        "UTC",
    ] {
        assert!(zones.contains(&z), "{z}");
    }
    assert!(zones.windows(2).all(|w| w[0] < w[1]));
}

async fn openapi_is_served_and_matches_the_committed_file(app: TestApp) {
    let res = app
        .anon(Method::GET, "/api/partner/v1/openapi.json")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["content-type"], "application/json");
    let served: Value = res.json().await.unwrap();
    let committed: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../docs/openapi.json"
        ))
        .unwrap(),
    )
    .unwrap();
    assert_eq!(served, committed);
    assert!(served["openapi"].as_str().unwrap().starts_with("3."));
}

async fn unknown_routes_and_methods(app: TestApp) {
    let got = read(
        app.req(Method::GET, "/api/partner/v1/nope")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 404, "not_found", None);
    let got = read(
        app.req(Method::DELETE, "/api/partner/v1/pay/payment-links")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 405, "method_not_allowed", None);
    let got = read(
        app.req(Method::POST, "/api/partner/v1/pay/destination-assets")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 405, "method_not_allowed", None);
}

async fn request_ids_are_echoed(app: TestApp) {
    let res = app.anon(Method::GET, "/healthz").send().await.unwrap();
    let id = res.headers()["x-request-id"].to_str().unwrap();
    assert_eq!(id.len(), 32);
    let res = app
        .anon(Method::GET, "/healthz")
        .header("x-request-id", "trace-abc_123")
        .send()
        .await
        .unwrap();
    assert_eq!(res.headers()["x-request-id"], "trace-abc_123");
    let res = app
        .anon(Method::GET, "/healthz")
        .header("x-request-id", "bad id with spaces")
        .send()
        .await
        .unwrap();
    assert_ne!(res.headers()["x-request-id"], "bad id with spaces");
}

/// A known path with another method is 405 with `Allow` naming exactly the methods the
/// document gives that path (RFC 9110 section 15.5.6), for every documented path.
async fn method_not_allowed_names_the_allowed_methods(app: TestApp) {
    let doc: Value = app
        .anon(Method::GET, "/api/partner/v1/openapi.json")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let paths = doc["paths"].as_object().unwrap();
    assert!(paths.len() > 40);
    for (path, item) in paths {
        let mut documented: Vec<String> = item
            .as_object()
            .unwrap()
            .keys()
            .filter(|k| ["get", "put", "post", "delete", "patch"].contains(&k.as_str()))
            .map(|k| k.to_uppercase())
            .collect();
        documented.sort();
        // Path parameters filled with any value: the router matches on the shape.
        let concrete = path
            .split('/')
            .map(|seg| if seg.starts_with('{') { "x1" } else { seg })
            .collect::<Vec<_>>()
            .join("/");
        for method in [Method::TRACE, Method::PUT, Method::DELETE] {
            if documented.contains(&method.as_str().to_owned()) {
                continue;
            }
            let res = app.req(method.clone(), &concrete).send().await.unwrap();
            let allow = res
                .headers()
                .get("allow")
                .map(|v| v.to_str().unwrap().to_owned());
            let got = read(res).await;
            assert_error(&got, 405, "method_not_allowed", None);
            let mut listed: Vec<String> = allow
                .unwrap_or_else(|| panic!("{method} {path}: no Allow header"))
                .split(',')
                .map(|m| m.trim().to_owned())
                .collect();
            listed.sort();
            assert_eq!(listed, documented, "{method} {path}");
        }
    }
}

/// Header fields over the documented limits are 431 with the JSON error body, before any
/// route runs (credentials or not).
async fn oversized_request_headers_are_431_with_a_json_body(app: TestApp) {
    let big = "a".repeat(40 * 1024);
    let res = app
        .req(Method::GET, "/api/partner/v1/pay/settings")
        .header("x-big", big.as_str())
        .send()
        .await
        .unwrap();
    assert!(res.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("application/json"));
    let got = read(res).await;
    assert_error(&got, 431, "request_header_fields_too_large", None);
    let mut many = app.anon(Method::GET, "/healthz");
    for i in 0..70 {
        many = many.header(format!("x-h{i}"), "1");
    }
    let got = read(many.send().await.unwrap()).await;
    assert_error(&got, 431, "request_header_fields_too_large", None);
    // Within the limits: answered as usual.
    let mut fine = app
        .anon(Method::GET, "/healthz")
        .header("x-big", "a".repeat(16 * 1024));
    for i in 0..40 {
        fine = fine.header(format!("x-h{i}"), "1");
    }
    assert_eq!(fine.send().await.unwrap().status(), 200);
}

on_both_backends!(
    method_not_allowed_names_the_allowed_methods,
    oversized_request_headers_are_431_with_a_json_body,
    health_and_readiness,
    timezones_are_public_and_real,
    openapi_is_served_and_matches_the_committed_file,
    unknown_routes_and_methods,
    request_ids_are_echoed,
);
