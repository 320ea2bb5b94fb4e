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
    let served: Value = app
        .anon(Method::GET, "/api/partner/v1/openapi.json")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
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

on_both_backends!(
    health_and_readiness,
    timezones_are_public_and_real,
    openapi_is_served_and_matches_the_committed_file,
    unknown_routes_and_methods,
    request_ids_are_echoed,
);
