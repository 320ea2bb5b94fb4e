//! The company identity: `GET /api/partner/v1/pay/company` answers the company the credential
//! resolves to, for API keys, signed-in members and OAuth grants holding `company:read`.

use reqwest::Method;
use serde_json::Value;

use crate::helpers::{assert_error, read, TestApp};
use crate::oauth_support::*;
use crate::on_both_backends;

const COMPANY: &str = "/api/partner/v1/pay/company";

fn assert_company(got: &(reqwest::StatusCode, Value), id: &str, name: &str) {
    assert_eq!(got.0, 200, "{}", got.1);
    assert_eq!(got.1["id"], id);
    assert_eq!(got.1["name"], name);
    assert!(
        got.1["createdAt"].as_str().unwrap().ends_with('Z'),
        "{}",
        got.1
    );
    let mut keys: Vec<&String> = got.1.as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(keys, ["createdAt", "id", "name", "website"]);
}

async fn each_credential_reads_its_own_company(app: TestApp) {
    let got = read(app.req(Method::GET, COMPANY).send().await.unwrap()).await;
    assert_company(&got, &app.t.company_id, "Acme Goods");

    // Another team's key reads that team: the company comes from the credential.
    let other = app.new_tenant("Other Co").await;
    let got = read(
        app.as_tenant(&other, Method::GET, COMPANY)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_company(&got, &other.company_id, "Other Co");

    // A member's session, read-only role included.
    let (email, password) = app.add_member(&app.t, "member").await;
    let session = app.login(&email, &password).await;
    let got = read(
        app.in_session(&session, Method::GET, COMPANY)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_company(&got, &app.t.company_id, "Acme Goods");
}

async fn oauth_needs_company_read(app: TestApp) {
    // With the scope: the company the merchant approved.
    let client = register(&app, "company:read pay:payment-links:read", false, false).await;
    let code = code_for(&app, &app.t, &client, "company:read").await;
    let (status, t, _) = exchange(&app, &client, &code, None).await;
    assert_eq!(status, 200, "{t}");
    let access = t["access_token"].as_str().unwrap();
    let got = read(
        app.anon(Method::GET, COMPANY)
            .bearer_auth(access)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_company(&got, &app.t.company_id, "Acme Goods");

    // Without it: the spec's 401, with a Bearer challenge naming the scope (RFC 6750 3.1).
    let code = code_for(&app, &app.t, &client, "pay:payment-links:read").await;
    let (status, t, _) = exchange(&app, &client, &code, None).await;
    assert_eq!(status, 200, "{t}");
    let res = app
        .anon(Method::GET, COMPANY)
        .bearer_auth(t["access_token"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(
        challenges(res.headers()),
        "Bearer error=\"insufficient_scope\", error_description=\"the access token lacks the \
         scope company:read\", scope=\"company:read\""
    );
    let got = read(res).await;
    assert_error(&got, 401, "invalid_credentials", None);
    assert_eq!(got.1["error"], "Invalid pay API credentials");
}

/// A missing scope answers the challenge of the credential used: DPoP for a DPoP-bound token
/// (with `algs`), Bearer for a Bearer token (above), `PayKey` for an API key.
async fn missing_scope_challenge_follows_the_scheme(app: TestApp) {
    let client = register(&app, "company:read pay:payment-links:read", false, false).await;
    let key = DpopKey::generate();
    let code = code_for(&app, &app.t, &client, "pay:payment-links:read").await;
    let (status, t, _) = exchange(&app, &client, &code, Some(&key)).await;
    assert_eq!(
        (status, &t["token_type"]),
        (reqwest::StatusCode::OK, &Value::from("DPoP"))
    );
    let access = t["access_token"].as_str().unwrap();
    let res = with_dpop(&app, &key, Method::GET, COMPANY, access)
        .send()
        .await
        .unwrap();
    assert_eq!(
        challenges(res.headers()),
        format!(
            "DPoP error=\"insufficient_scope\", error_description=\"the access token lacks the \
             scope company:read\", scope=\"company:read\", algs=\"{}\"",
            pay_dpop::SUPPORTED_ALGS
        )
    );
    assert_error(&read(res).await, 401, "invalid_credentials", None);
    // The same token on a route it holds the scope of passes.
    let res = with_dpop(
        &app,
        &key,
        Method::GET,
        "/api/partner/v1/pay/payment-links",
        access,
    )
    .send()
    .await
    .unwrap();
    assert_eq!(res.status(), 200);

    let res = app
        .anon(Method::GET, COMPANY)
        .header("x-svc-key-id", &app.t.key_id)
        .header("x-svc-key-secret", "mksec_wrong")
        .send()
        .await
        .unwrap();
    assert_eq!(challenges(res.headers()), "PayKey realm=\"pay\"");
}

async fn refusals(app: TestApp) {
    let got = read(app.anon(Method::GET, COMPANY).send().await.unwrap()).await;
    assert_error(&got, 401, "unauthorized", None);
    let got = read(
        app.anon(Method::GET, COMPANY)
            .header("x-svc-key-id", &app.t.key_id)
            .header("x-svc-key-secret", "mksec_wrong")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 401, "invalid_credentials", None);
    let got = read(
        app.anon(Method::GET, COMPANY)
            .bearer_auth("oat_unknown")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 401, "invalid_credentials", None);
    let res = app.req(Method::POST, COMPANY).send().await.unwrap();
    assert_eq!(res.status(), 405);
}

/// `website` is null until recorded (`admin bootstrap --website`), then the URL; cleared, null
/// again. Another company's stays its own.
async fn website_is_null_until_recorded(app: TestApp) {
    let got = read(app.req(Method::GET, COMPANY).send().await.unwrap()).await;
    assert_company(&got, &app.t.company_id, "Acme Goods");
    assert_eq!(got.1["website"], Value::Null);
    let other = app.new_tenant("Other Co").await;
    let set = |website: Option<&'static str>| {
        let pay = app.pay.clone();
        let company = pay_domain::kernel::ids::CompanyId::parse(&app.t.company_id).unwrap();
        async move {
            tokio::task::spawn_blocking(move || pay.tenancy().set_company_website(company, website))
                .await
                .unwrap()
        }
    };
    set(Some("https://acme.example/shop")).await.unwrap();
    let got = read(app.req(Method::GET, COMPANY).send().await.unwrap()).await;
    assert_company(&got, &app.t.company_id, "Acme Goods");
    assert_eq!(got.1["website"], "https://acme.example/shop");
    let theirs = read(
        app.as_tenant(&other, Method::GET, COMPANY)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(theirs.1["website"], Value::Null);
    // Refused values change nothing.
    for bad in [
        "acme.example",
        "ftp://acme.example",
        "https://user@acme.example",
    ] {
        assert!(set(Some(bad)).await.is_err(), "{bad}");
    }
    let got = read(app.req(Method::GET, COMPANY).send().await.unwrap()).await;
    assert_eq!(got.1["website"], "https://acme.example/shop");
    set(None).await.unwrap();
    let got = read(app.req(Method::GET, COMPANY).send().await.unwrap()).await;
    assert_eq!(got.1["website"], Value::Null);
}

on_both_backends!(
    website_is_null_until_recorded,
    each_credential_reads_its_own_company,
    oauth_needs_company_read,
    missing_scope_challenge_follows_the_scheme,
    refusals,
);
