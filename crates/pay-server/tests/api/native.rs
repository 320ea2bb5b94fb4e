//! Native installations over HTTP: registration (`POST /oauth/native/installations`) with
//! every rule of the spec's table, consent and tokens bound to the registered key.

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{assert_error, read, spawn_configured, Backend, Tenant, TestApp};
use crate::oauth_support::*;
use crate::on_both_backends;

pub const REGISTER: &str = "/oauth/native/installations";
pub const SITE: &str = "https://shop.example";
pub const CALLBACK: &str = "https://shop.example/pay/oauth/callback";
pub const NATIVE_SCOPES: &str =
    "company:read pay:payment-links:read pay:payment-links:write pay:webhooks:read pay:webhooks:write";
const LINKS: &str = "/api/partner/v1/pay/payment-links";

/// Creates the platform template `platform` (`admin create-native-platform`).
pub async fn platform(app: &TestApp, platform: &str, name: &str) {
    let pay = app.pay.clone();
    let input = pay_domain::installations::NewPlatform {
        platform: platform.into(),
        name: name.into(),
        icon_url: Some("https://cdn.example/woo.png".into()),
        support_url: Some("https://support.example".into()),
    };
    tokio::task::spawn_blocking(move || pay.installations().create_platform(input))
        .await
        .unwrap()
        .unwrap();
}

/// A fresh `registrationId`: 32 random bytes, canonical unpadded base64url.
pub fn registration_id() -> String {
    let mut bytes = uuid::Uuid::new_v4().as_bytes().to_vec();
    bytes.extend_from_slice(uuid::Uuid::new_v4().as_bytes());
    b64(&bytes)
}

pub fn body(registration_id: &str, key: &DpopKey) -> Value {
    json!({
        "platform": "woocommerce",
        "registrationId": registration_id,
        "siteUrl": SITE,
        "redirectUri": CALLBACK,
        "dpopJkt": key.jkt,
        "platformVersion": "6.5.2",
        "pluginVersion": "1.0.0",
        "siteName": "Evil Bank Login",
    })
}

/// POST the registration with these `DPoP` and `DPoP-Previous` headers.
pub async fn post(
    app: &TestApp,
    body: &Value,
    dpop: Option<String>,
    previous: Option<String>,
) -> (reqwest::StatusCode, Value, reqwest::header::HeaderMap) {
    let mut req = app.anon(Method::POST, REGISTER).json(body);
    if let Some(p) = dpop {
        req = req.header("DPoP", p);
    }
    if let Some(p) = previous {
        req = req.header("DPoP-Previous", p);
    }
    let res = req.send().await.unwrap();
    let headers = res.headers().clone();
    let (status, body) = read(res).await;
    (status, body, headers)
}

/// Registers `body` with a fresh proof of `key`.
pub async fn register_with(
    app: &TestApp,
    body: &Value,
    key: &DpopKey,
) -> (reqwest::StatusCode, Value, reqwest::header::HeaderMap) {
    let proof = key.proof("POST", &htu(app, REGISTER), None);
    post(app, body, Some(proof), None).await
}

/// Registers a new installation of `woocommerce` with `key` (201): its client.
pub async fn installed(app: &TestApp, key: &DpopKey) -> (String, Value) {
    let id = registration_id();
    let (status, client, _) = register_with(app, &body(&id, key), key).await;
    assert_eq!(status, 201, "{client}");
    (id, client)
}

/// The consent of `t`'s owner for a native client, through the domain: the code.
pub async fn native_code(app: &TestApp, t: &Tenant, client_id: &str) -> String {
    code_with_redirect(app, t, client_id, CALLBACK, NATIVE_SCOPES).await
}

/// Redeems a native code with a proof of `key`.
pub async fn native_exchange(
    app: &TestApp,
    client_id: &str,
    code: &str,
    key: &DpopKey,
) -> (reqwest::StatusCode, Value, reqwest::header::HeaderMap) {
    let client = App {
        client_id: client_id.into(),
        secret: None,
    };
    let pairs = [
        ("grant_type", "authorization_code"),
        ("code", code),
        ("redirect_uri", CALLBACK),
        ("code_verifier", VERIFIER),
    ];
    token(app, &client, &pairs, Some(key)).await
}

/// Refreshes a native family with a proof of `key`.
pub async fn native_refresh(
    app: &TestApp,
    client_id: &str,
    refresh: &str,
    key: &DpopKey,
) -> (reqwest::StatusCode, Value, reqwest::header::HeaderMap) {
    let client = App {
        client_id: client_id.into(),
        secret: None,
    };
    let pairs = [("grant_type", "refresh_token"), ("refresh_token", refresh)];
    token(app, &client, &pairs, Some(key)).await
}

/// A consented installation's tokens, bound to `key`.
pub async fn connected(app: &TestApp, client_id: &str, key: &DpopKey) -> Value {
    let code = native_code(app, &app.t, client_id).await;
    let (status, tokens, _) = native_exchange(app, client_id, &code, key).await;
    assert_eq!(status, 200, "{tokens}");
    assert_eq!(tokens["token_type"], "DPoP");
    tokens
}

/// Creates a link with a DPoP-bound access token: the status.
pub async fn create_link(app: &TestApp, key: &DpopKey, access: &str) -> reqwest::StatusCode {
    let res = with_dpop(app, key, Method::POST, LINKS, access)
        .json(&json!({"title": "Order 7", "amount": "10.00", "currency": "USDC"}))
        .send()
        .await
        .unwrap();
    res.status()
}

/// The `WWW-Authenticate` of a refused registration names `invalid_dpop_proof`.
#[track_caller]
pub fn assert_proof_refused(got: &(reqwest::StatusCode, Value, reqwest::header::HeaderMap)) {
    assert_eq!(got.0, 401, "{}", got.1);
    assert_eq!(got.1["error"], "Invalid pay API credentials", "{}", got.1);
    assert_eq!(got.1["errorCode"], "invalid_credentials");
    let challenge = challenges(&got.2);
    assert!(
        challenge.starts_with("DPoP error=\"invalid_dpop_proof\""),
        "{challenge}"
    );
}

async fn registers_once_and_again(app: TestApp) {
    platform(&app, "woocommerce", "Woo Pay Connector").await;
    let key = DpopKey::generate();
    let id = registration_id();
    let first = register_with(&app, &body(&id, &key), &key).await;
    assert_eq!(first.0, 201, "{}", first.1);
    assert_eq!(first.2.get("cache-control").unwrap(), "no-store");
    let client = &first.1;
    let client_id = client["client_id"].as_str().unwrap();
    assert!(
        client_id.starts_with("svc_app_") && client_id.len() == 40,
        "{client}"
    );
    assert_eq!(
        *client,
        json!({
            "client_id": client_id,
            "client_type": "public",
            "dpop_bound": true,
            "registration_id": id,
            "redirect_uri": CALLBACK,
            "scopes": NATIVE_SCOPES.split(' ').collect::<Vec<_>>(),
        })
    );

    // Again, identical: 200 with the same public fields. A new plugin version and another
    // spelling of the same origin too.
    let again = register_with(&app, &body(&id, &key), &key).await;
    assert_eq!((again.0.as_u16(), &again.1), (200, client));
    let mut upgraded = body(&id, &key);
    upgraded["pluginVersion"] = json!("1.1.0");
    upgraded["siteUrl"] = json!("https://SHOP.example:443");
    upgraded["siteName"] = json!("Yet Another Name");
    let again = register_with(&app, &upgraded, &key).await;
    assert_eq!((again.0.as_u16(), &again.1), (200, client));

    // The consent page shows the template's branding, never the siteName.
    let session = app.login_owner(&app.t).await;
    let query = form(&[
        ("response_type", "code"),
        ("client_id", client_id),
        ("redirect_uri", CALLBACK),
        ("scope", NATIVE_SCOPES),
        ("state", "s1"),
        ("code_challenge", CHALLENGE),
        ("code_challenge_method", "S256"),
    ]);
    let res = app
        .in_session(&session, Method::GET, &format!("/oauth/authorize?{query}"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let html = res.text().await.unwrap();
    assert!(html.contains("Woo Pay Connector"), "{html}");
    assert!(
        !html.contains("Evil Bank") && !html.contains("Yet Another"),
        "{html}"
    );
    // Another redirect URI than the registered callback is never redirected to.
    let other = query.replace("callback", "other");
    let res = app
        .in_session(&session, Method::GET, &format!("/oauth/authorize?{other}"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 400);

    // Consent, then tokens bound to the registered key: only that key redeems the code.
    let code = native_code(&app, &app.t, client_id).await;
    let intruder = DpopKey::generate();
    let (status, e, _) = native_exchange(&app, client_id, &code, &intruder).await;
    assert_eq!(
        (status.as_u16(), &e["error"]),
        (400, &json!("invalid_dpop_proof"))
    );
    let code = native_code(&app, &app.t, client_id).await;
    let (status, tokens, _) = native_exchange(&app, client_id, &code, &key).await;
    assert_eq!(status, 200, "{tokens}");
    assert_eq!(tokens["token_type"], "DPoP");
    assert_eq!(tokens["scope"], NATIVE_SCOPES);
    let access = tokens["access_token"].as_str().unwrap();
    assert_eq!(create_link(&app, &key, access).await, 201);
    // The same token with another key's proof, or as Bearer, is refused.
    assert_eq!(create_link(&app, &intruder, access).await, 401);
    let res = app
        .anon(Method::GET, LINKS)
        .header("authorization", format!("Bearer {access}"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);
    // A token request without a proof is refused: the client is DPoP-bound.
    let refresh = tokens["refresh_token"].as_str().unwrap();
    let public = App {
        client_id: client_id.into(),
        secret: None,
    };
    let pairs = [("grant_type", "refresh_token"), ("refresh_token", refresh)];
    let (status, e, _) = token_with_proof(&app, &public, &pairs, None).await;
    assert_eq!(
        (status.as_u16(), &e["error"]),
        (400, &json!("invalid_dpop_proof"))
    );

    // Another installation is another client.
    let (_, second) = installed(&app, &DpopKey::generate()).await;
    assert_ne!(second["client_id"], client["client_id"]);
}

/// A server refusing private sites, as in production.
async fn public_only(backend: Backend) -> Option<TestApp> {
    let processor = std::sync::Arc::new(pay_processor::SandboxProcessor::new());
    spawn_configured(backend, processor, |c| c.allow_private_targets = false).await
}

async fn every_field_rule(app: TestApp) {
    platform(&app, "woocommerce", "Woo Pay Connector").await;
    let key = DpopKey::generate();
    let id = registration_id();
    let good = body(&id, &key);
    let refused = |field: &'static str, value: Value| {
        let mut b = good.clone();
        b[field] = value;
        (field, b)
    };
    let noncanonical = format!("{}B", &id[..42]);
    let mut cases = vec![
        refused("platform", json!("shopify")),
        refused("platform", json!("Woo Commerce")),
        refused("registrationId", json!(noncanonical)),
        refused("registrationId", json!(&id[..42])),
        refused("registrationId", json!(format!("{id}A"))),
        refused("registrationId", json!(format!("{}=", &id[..42]))),
        refused("siteUrl", json!("http://shop.example")),
        refused("siteUrl", json!("https://user@shop.example")),
        refused("siteUrl", json!("https://shop.example/")),
        refused("siteUrl", json!("https://shop.example/shop")),
        refused("siteUrl", json!("https://shop.example?x=1")),
        refused("siteUrl", json!("https://shop.example#x")),
        refused("siteUrl", json!("https://127.0.0.1")),
        refused("siteUrl", json!("https://localhost")),
        refused("siteUrl", json!("https://10.1.2.3")),
        refused("redirectUri", json!("https://shop.example/pay/oauth/other")),
        refused(
            "redirectUri",
            json!("https://shop.example/wp/pay/oauth/callback"),
        ),
        refused(
            "redirectUri",
            json!("https://other.example/pay/oauth/callback"),
        ),
        refused(
            "redirectUri",
            json!("https://shop.example/pay/oauth/callback?x=1"),
        ),
        refused("dpopJkt", json!("abc")),
        refused("dpopJkt", json!(format!("{}B", &key.jkt[..42]))),
        refused("platformVersion", json!("")),
        refused("pluginVersion", json!("1".repeat(65))),
        refused("siteName", json!("a\u{202e}b")),
        refused("siteName", json!(7)),
    ];
    for field in [
        "platform",
        "registrationId",
        "siteUrl",
        "redirectUri",
        "dpopJkt",
    ] {
        let mut b = good.clone();
        b.as_object_mut().unwrap().remove(field);
        cases.push((field, b));
    }
    for (field, b) in cases {
        let got = register_with(&app, &b, &key).await;
        assert_error(&(got.0, got.1), 400, "validation_failed", Some(field));
    }
    let mut b = good.clone();
    b["siteUrl2"] = json!(SITE);
    let got = register_with(&app, &b, &key).await;
    assert_error(&(got.0, got.1), 400, "unknown_field", Some("siteUrl2"));
    // None of these registered anything.
    let got = register_with(&app, &good, &key).await;
    assert_eq!(got.0, 201, "{}", got.1);
}

async fn the_proof_must_be_of_the_key(app: TestApp) {
    platform(&app, "woocommerce", "Woo Pay Connector").await;
    let key = DpopKey::generate();
    let id = registration_id();
    let b = body(&id, &key);
    let url = htu(&app, REGISTER);
    // No proof; a proof by another key; for another method or URL; two proofs; a replay.
    assert_proof_refused(&post(&app, &b, None, None).await);
    let other = DpopKey::generate();
    assert_proof_refused(&register_with(&app, &b, &other).await);
    let get = key.proof("GET", &url, None);
    assert_proof_refused(&post(&app, &b, Some(get), None).await);
    let elsewhere = key.proof("POST", &htu(&app, "/oauth/token"), None);
    assert_proof_refused(&post(&app, &b, Some(elsewhere), None).await);
    let stale = key.sign(&json!({
        "jti": "stale-1", "htm": "POST", "htu": url, "iat": now_unix() - 3600,
    }));
    assert_proof_refused(&post(&app, &b, Some(stale), None).await);
    let res = app
        .anon(Method::POST, REGISTER)
        .header("DPoP", key.proof("POST", &url, None))
        .header("DPoP", key.proof("POST", &url, None))
        .json(&b)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);
    let proof = key.proof("POST", &url, None);
    let first = post(&app, &b, Some(proof.clone()), None).await;
    assert_eq!(first.0, 201, "{}", first.1);
    assert_proof_refused(&post(&app, &b, Some(proof), None).await);

    // The same registrationId with another site or platform: 409, nothing changes.
    platform(&app, "shopware", "Shopware Pay").await;
    let mut moved = b.clone();
    moved["siteUrl"] = json!("https://elsewhere.example");
    moved["redirectUri"] = json!("https://elsewhere.example/pay/oauth/callback");
    let got = register_with(&app, &moved, &key).await;
    assert_error(
        &(got.0, got.1),
        409,
        "registration_conflict",
        Some("siteUrl"),
    );
    let mut other_platform = b.clone();
    other_platform["platform"] = json!("shopware");
    let got = register_with(&app, &other_platform, &key).await;
    assert_error(
        &(got.0, got.1),
        409,
        "registration_conflict",
        Some("platform"),
    );
    let again = register_with(&app, &b, &key).await;
    assert_eq!((again.0.as_u16(), &again.1), (200, &first.1));
}

on_both_backends!(registers_once_and_again, the_proof_must_be_of_the_key);
on_both_backends!(spawn = public_only; every_field_rule);

/// Registers `new`'s key for installation `id` with these two proofs.
async fn rotate(
    app: &TestApp,
    id: &str,
    new: &DpopKey,
    dpop: Option<String>,
    previous: Option<String>,
) -> (reqwest::StatusCode, Value, reqwest::header::HeaderMap) {
    post(app, &body(id, new), dpop, previous).await
}

async fn key_rotation(app: TestApp) {
    platform(&app, "woocommerce", "Woo Pay Connector").await;
    let old = DpopKey::generate();
    let (id, client) = installed(&app, &old).await;
    let client_id = client["client_id"].as_str().unwrap().to_owned();
    let tokens = connected(&app, &client_id, &old).await;
    let url = htu(&app, REGISTER);
    let new = DpopKey::generate();
    let proof = |k: &DpopKey| Some(k.proof("POST", &url, None));

    // Another key without DPoP-Previous, or with one by a key that is not the registered
    // one, or by the registered key for another URL or method, or sharing the jti.
    assert_proof_refused(&rotate(&app, &id, &new, proof(&new), None).await);
    let stranger = DpopKey::generate();
    assert_proof_refused(&rotate(&app, &id, &new, proof(&new), proof(&stranger)).await);
    assert_proof_refused(&rotate(&app, &id, &new, proof(&new), proof(&new)).await);
    let elsewhere = Some(old.proof("POST", &htu(&app, "/oauth/token"), None));
    assert_proof_refused(&rotate(&app, &id, &new, proof(&new), elsewhere).await);
    let get = Some(old.proof("GET", &url, None));
    assert_proof_refused(&rotate(&app, &id, &new, proof(&new), get).await);
    let claims = |jti: &str| json!({"jti": jti, "htm": "POST", "htu": url, "iat": now_unix()});
    let same = (new.sign(&claims("same-jti")), old.sign(&claims("same-jti")));
    assert_proof_refused(&rotate(&app, &id, &new, Some(same.0), Some(same.1)).await);
    // The new key's proof must be of the key dpopJkt names, even with the old key's blessing.
    assert_proof_refused(&rotate(&app, &id, &new, proof(&stranger), proof(&old)).await);

    // With the registered key's DPoP-Previous: 200, the same client. Nothing changes until
    // consent: the old family keeps working (an abandoned consent costs nothing).
    let got = rotate(&app, &id, &new, proof(&new), proof(&old)).await;
    assert_eq!((got.0.as_u16(), &got.1), (200, &client));
    let access = tokens["access_token"].as_str().unwrap();
    assert_eq!(create_link(&app, &old, access).await, 201);
    let refresh = tokens["refresh_token"].as_str().unwrap();
    let (status, tokens, _) = native_refresh(&app, &client_id, refresh, &old).await;
    assert_eq!(status, 200, "{tokens}");
    let old_access = tokens["access_token"].as_str().unwrap().to_owned();
    let old_refresh = tokens["refresh_token"].as_str().unwrap().to_owned();

    // The pending key was lost: the registered key replaces it again.
    let newer = DpopKey::generate();
    let got = rotate(&app, &id, &newer, proof(&newer), proof(&old)).await;
    assert_eq!((got.0.as_u16(), &got.1), (200, &client));
    // The pending key is not the registered one: it cannot bless another.
    assert_proof_refused(&rotate(&app, &id, &stranger, proof(&stranger), proof(&newer)).await);

    // Consent binds the grant and the code to the pending key and revokes the old family.
    let code = native_code(&app, &app.t, &client_id).await;
    assert_eq!(create_link(&app, &old, &old_access).await, 401);
    let (status, e, _) = native_refresh(&app, &client_id, &old_refresh, &old).await;
    assert_eq!(
        (status.as_u16(), &e["error"]),
        (400, &json!("invalid_grant"))
    );
    let (status, e, _) = native_exchange(&app, &client_id, &code, &old).await;
    assert_eq!(
        (status.as_u16(), &e["error"]),
        (400, &json!("invalid_dpop_proof"))
    );
    let (status, fresh, _) = native_exchange(&app, &client_id, &code, &newer).await;
    assert_eq!(status, 200, "{fresh}");
    let access = fresh["access_token"].as_str().unwrap();
    assert_eq!(create_link(&app, &newer, access).await, 201);
    let refresh = fresh["refresh_token"].as_str().unwrap();
    let (status, again, _) = native_refresh(&app, &client_id, refresh, &newer).await;
    assert_eq!(status, 200, "{again}");

    // The old key is nobody now: it registers nothing, and blesses nothing.
    assert_proof_refused(&register_with(&app, &body(&id, &old), &old).await);
    assert_proof_refused(&rotate(&app, &id, &new, proof(&new), proof(&old)).await);
    let got = register_with(&app, &body(&id, &newer), &newer).await;
    assert_eq!((got.0.as_u16(), &got.1), (200, &client));
}

async fn a_rotation_withdrawn_by_the_registered_key(app: TestApp) {
    platform(&app, "woocommerce", "Woo Pay Connector").await;
    let key = DpopKey::generate();
    let (id, client) = installed(&app, &key).await;
    let client_id = client["client_id"].as_str().unwrap().to_owned();
    let url = htu(&app, REGISTER);
    let new = DpopKey::generate();
    let got = rotate(
        &app,
        &id,
        &new,
        Some(new.proof("POST", &url, None)),
        Some(key.proof("POST", &url, None)),
    )
    .await;
    assert_eq!(got.0, 200, "{}", got.1);
    // The plugin lost the new key and registers the old one again: the replacement is
    // withdrawn, and consent binds to the registered key.
    let got = register_with(&app, &body(&id, &key), &key).await;
    assert_eq!((got.0.as_u16(), &got.1), (200, &client));
    let code = native_code(&app, &app.t, &client_id).await;
    let (status, e, _) = native_exchange(&app, &client_id, &code, &new).await;
    assert_eq!(
        (status.as_u16(), &e["error"]),
        (400, &json!("invalid_dpop_proof"))
    );
    connected(&app, &client_id, &key).await;
}

on_both_backends!(key_rotation, a_rotation_withdrawn_by_the_registered_key);

async fn native_grants_never_expire_from_inactivity(app: TestApp) {
    platform(&app, "woocommerce", "Woo Pay Connector").await;
    let key = DpopKey::generate();
    let (_, client) = installed(&app, &key).await;
    let client_id = client["client_id"].as_str().unwrap().to_owned();
    let tokens = connected(&app, &client_id, &key).await;
    // An ordinary public, DPoP-bound application keeps its refresh lifetime (30 days).
    let scope = "pay:payment-links:read pay:payment-links:write";
    let ordinary = register(&app, scope, true, true).await;
    let code = code_for(&app, &app.t, &ordinary, scope).await;
    let (status, theirs, _) = exchange(&app, &ordinary, &code, Some(&key)).await;
    assert_eq!(status, 200, "{theirs}");

    // 31 days without a request.
    app.clock.advance_secs(31 * 86_400);
    let access = tokens["access_token"].as_str().unwrap();
    assert_eq!(create_link(&app, &key, access).await, 401);
    let refresh = tokens["refresh_token"].as_str().unwrap();
    let (status, fresh, _) = native_refresh(&app, &client_id, refresh, &key).await;
    assert_eq!(status, 200, "{fresh}");
    let access = fresh["access_token"].as_str().unwrap();
    assert_eq!(create_link(&app, &key, access).await, 201);
    let pairs = [
        ("grant_type", "refresh_token"),
        ("refresh_token", theirs["refresh_token"].as_str().unwrap()),
    ];
    let (status, e, _) = token(&app, &ordinary, &pairs, Some(&key)).await;
    assert_eq!(
        (status.as_u16(), &e["error"]),
        (400, &json!("invalid_grant"))
    );

    // A year later still; housekeeping keeps the live family.
    app.clock.advance_secs(400 * 86_400);
    let pay = app.pay.clone();
    tokio::task::spawn_blocking(move || pay.oauth().prune().unwrap())
        .await
        .unwrap();
    let refresh = fresh["refresh_token"].as_str().unwrap();
    let (status, later, _) = native_refresh(&app, &client_id, refresh, &key).await;
    assert_eq!(status, 200, "{later}");

    // What ends it: reuse of a rotated refresh token (the whole family), or revocation.
    let (status, e, _) = native_refresh(&app, &client_id, refresh, &key).await;
    assert_eq!(
        (status.as_u16(), &e["error"]),
        (400, &json!("invalid_grant"))
    );
    let refresh = later["refresh_token"].as_str().unwrap();
    let (status, e, _) = native_refresh(&app, &client_id, refresh, &key).await;
    assert_eq!(
        (status.as_u16(), &e["error"]),
        (400, &json!("invalid_grant"))
    );
    let tokens = connected(&app, &client_id, &key).await;
    let refresh = tokens["refresh_token"].as_str().unwrap();
    let res = app
        .anon(Method::POST, "/oauth/revoke")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form(&[("token", refresh), ("client_id", &client_id)]))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let (status, e, _) = native_refresh(&app, &client_id, refresh, &key).await;
    assert_eq!(
        (status.as_u16(), &e["error"]),
        (400, &json!("invalid_grant"))
    );
}

on_both_backends!(native_grants_never_expire_from_inactivity);
