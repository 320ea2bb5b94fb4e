//! `PAY_APEX_HOST`: every route answers a request addressed to the apex with 307 to the same
//! path and query on `PAY_BASE_URL`, and a DPoP proof built for the apex fails after it.

use std::sync::Arc;

use reqwest::Method;
use serde_json::json;

use crate::helpers::{read, spawn_configured, Backend, TestApp};
use crate::oauth_support::*;
use crate::on_both_backends;

const APEX: &str = "apex.example";

async fn spawn_apex(backend: Backend) -> Option<TestApp> {
    spawn_configured(
        backend,
        Arc::new(pay_processor::SandboxProcessor::new()),
        |c| c.apex_host = Some(APEX.into()),
    )
    .await
}

/// A path of the document with each `{param}` filled.
fn concrete(path: &str) -> String {
    path.split('/')
        .map(|seg| if seg.starts_with('{') { "x1" } else { seg })
        .collect::<Vec<_>>()
        .join("/")
}

async fn every_route_redirects_from_the_apex(app: TestApp) {
    let base = app.config.base_url.clone();
    let mut seen = 0;
    for (path, allow) in pay_http::openapi::route_methods() {
        for method in allow.split(", ") {
            let method = Method::from_bytes(method.as_bytes()).unwrap();
            let target = format!("{}?a=1&b=%20two", concrete(path));
            let res = app
                .anon(method.clone(), &target)
                .header("host", format!("{APEX}:443"))
                .header("authorization", "Bearer sk_not_a_key")
                .body("{}")
                .send()
                .await
                .unwrap();
            assert_eq!(res.status(), 307, "{method} {target}");
            assert_eq!(
                res.headers()["location"].to_str().unwrap(),
                format!("{base}{target}"),
                "{method} {target}"
            );
            assert!(res.bytes().await.unwrap().is_empty(), "no error body");
            seen += 1;
        }
    }
    assert!(seen > 50, "{seen} routes");
    // The case of the name does not matter; an unknown path is redirected too; the
    // canonical host itself is served.
    let res = app
        .anon(Method::GET, "/no/such/path")
        .header("host", "APEX.Example")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 307);
    let res = app.anon(Method::GET, "/healthz").send().await.unwrap();
    assert_eq!(res.status(), 200);
    let res = app
        .anon(Method::GET, "/healthz")
        .header("host", "www.apex.example")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200, "another name is not the apex");
}

/// The spec's rule: a proof is built for the canonical URL; one built for the apex fails once
/// the 307 took the request to the canonical host (its `htu` no longer matches).
async fn a_dpop_proof_for_the_apex_fails_after_the_redirect(app: TestApp) {
    let scope = "pay:payment-links:read pay:payment-links:write";
    let client = register(&app, scope, true, true).await;
    let key = DpopKey::generate();
    let code = code_for(&app, &app.t, &client, scope).await;
    let (status, t, _) = exchange(&app, &client, &code, Some(&key)).await;
    assert_eq!(status, 200, "{t}");
    let access = t["access_token"].as_str().unwrap().to_owned();
    let links = "/api/partner/v1/pay/payment-links";
    let (status, link) = read(
        with_dpop(&app, &key, Method::POST, links, &access)
            .json(&json!({"title": "T", "amount": "5.00", "currency": "USDC"}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 201, "{link}");
    let path = format!("{links}/{}", link["uid"].as_str().unwrap());
    // Built for the apex and sent there: 307 to the canonical URL.
    let apex_proof = key.proof("GET", &format!("https://{APEX}{path}"), Some(&access));
    let res = app
        .anon(Method::GET, &path)
        .header("host", APEX)
        .header("authorization", format!("DPoP {access}"))
        .header("DPoP", &apex_proof)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 307);
    let location = res.headers()["location"].to_str().unwrap().to_owned();
    assert_eq!(location, htu(&app, &path));
    // Followed with the same headers, as a client would: the proof names the apex.
    let res = app
        .anon(Method::GET, &path)
        .header("authorization", format!("DPoP {access}"))
        .header("DPoP", &apex_proof)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);
    let challenge = challenges(res.headers());
    assert!(challenge.contains("invalid_dpop_proof"), "{challenge}");
    // A proof for the canonical URL, sent there directly, works.
    let res = with_dpop(&app, &key, Method::GET, &path, &access)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
}

on_both_backends!(
    spawn = spawn_apex;
    every_route_redirects_from_the_apex,
    a_dpop_proof_for_the_apex_fails_after_the_redirect
);
