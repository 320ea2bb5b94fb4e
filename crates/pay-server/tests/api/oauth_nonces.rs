//! Server-issued DPoP nonces (`PAY_DPOP_NONCES`, RFC 9449 sections 8 and 9): a proof without
//! the server's nonce is refused with `use_dpop_nonce` and the nonce to use in `DPoP-Nonce`
//! (400 at the token endpoint, 401 on the payment routes); the retry carrying it passes. The
//! nonce is stateless: another instance with the same keyring accepts it.

use reqwest::Method;
use serde_json::Value;

use crate::helpers::{assert_error, read, spawn_configured, Backend, TestApp};
use crate::oauth_support::*;

const LINKS: &str = "/api/partner/v1/pay/payment-links";
const RW: &str = "pay:payment-links:read pay:payment-links:write";

async fn spawn_with_nonces(backend: Backend) -> Option<TestApp> {
    spawn_configured(
        backend,
        std::sync::Arc::new(pay_processor::SandboxProcessor::new()),
        |c| c.dpop_nonces = true,
    )
    .await
}

fn nonce_of(headers: &reqwest::header::HeaderMap) -> String {
    headers
        .get("dpop-nonce")
        .expect("a DPoP-Nonce header")
        .to_str()
        .unwrap()
        .to_owned()
}

/// POST /oauth/token exchanging a fresh code, with a proof carrying `nonce` (or none).
async fn exchange_with(
    app: &TestApp,
    client: &App,
    key: &DpopKey,
    nonce: Option<&str>,
) -> (reqwest::StatusCode, Value, reqwest::header::HeaderMap) {
    let code = code_for(app, &app.t, client, RW).await;
    let proof = key.proof_with_nonce("POST", &htu(app, "/oauth/token"), None, nonce);
    let pairs = [
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("redirect_uri", REDIRECT),
        ("code_verifier", VERIFIER),
    ];
    token_with_proof(app, client, &pairs, Some(proof)).await
}

async fn the_token_endpoint_asks_for_a_nonce(app: TestApp) {
    let client = register(&app, RW, false, false).await;
    let key = DpopKey::generate();
    for nonce in [None, Some("not-ours")] {
        let (status, body, headers) = exchange_with(&app, &client, &key, nonce).await;
        assert_eq!(status, 400, "{body}");
        assert_eq!(body["error"], "use_dpop_nonce", "{body}");
        assert_eq!(headers.get("cache-control").unwrap(), "no-store");
        assert_eq!(nonce_of(&headers).len(), 32);
    }
    let (_, _, headers) = exchange_with(&app, &client, &key, None).await;
    let nonce = nonce_of(&headers);
    let (status, body, headers) = exchange_with(&app, &client, &key, Some(&nonce)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["token_type"], "DPoP");
    // Every answer carries the current nonce (the same one until its window passes).
    assert_eq!(nonce_of(&headers).len(), 32);
}

async fn payment_routes_ask_for_a_nonce(app: TestApp) {
    let client = register(&app, RW, false, false).await;
    let key = DpopKey::generate();
    let (_, _, headers) = exchange_with(&app, &client, &key, None).await;
    let nonce = nonce_of(&headers);
    let (status, t, _) = exchange_with(&app, &client, &key, Some(&nonce)).await;
    assert_eq!(status, 200, "{t}");
    let access = t["access_token"].as_str().unwrap();
    let send = |nonce: Option<String>| {
        let proof = key.proof_with_nonce("GET", &htu(&app, LINKS), Some(access), nonce.as_deref());
        app.anon(Method::GET, LINKS)
            .header("authorization", format!("DPoP {access}"))
            .header("DPoP", proof)
            .send()
    };
    let res = send(None).await.unwrap();
    assert_eq!(res.status(), 401);
    assert!(
        challenges(res.headers()).starts_with("DPoP error=\"use_dpop_nonce\""),
        "{}",
        challenges(res.headers())
    );
    let nonce = nonce_of(res.headers());
    assert_error(&read(res).await, 401, "invalid_credentials", None);
    let res = send(Some("stale".into())).await.unwrap();
    assert_eq!(res.status(), 401);
    assert_eq!(nonce_of(res.headers()).len(), 32);
    let (status, list) = read(send(Some(nonce)).await.unwrap()).await;
    assert_eq!(status, 200, "{list}");

    // Stateless: a nonce made with the same keyring (any instance) is accepted, one made
    // with another key is not.
    let ring = app.config.keyring().unwrap();
    let key_bytes = ring.derive(pay_server::DPOP_NONCE_KEY_LABEL).0;
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let elsewhere = pay_dpop::NonceIssuer::new(&key_bytes).current(now);
    let (status, _) = read(send(Some(elsewhere)).await.unwrap()).await;
    assert_eq!(status, 200);
    let foreign = pay_dpop::NonceIssuer::new(&[9; 32]).current(now);
    assert_eq!(send(Some(foreign)).await.unwrap().status(), 401);

    // Bearer tokens carry no proof, so no nonce either.
    let bearer_client = register(&app, RW, false, false).await;
    let code = code_for(&app, &app.t, &bearer_client, RW).await;
    let (status, t, _) = exchange(&app, &bearer_client, &code, None).await;
    assert_eq!(status, 200, "{t}");
    let res = app
        .anon(Method::GET, LINKS)
        .bearer_auth(t["access_token"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
}

crate::on_both_backends!(spawn = spawn_with_nonces;
    the_token_endpoint_asks_for_a_nonce,
    payment_routes_ask_for_a_nonce,
);
