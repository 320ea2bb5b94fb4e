//! Sign-in, the companies list and key management (the session-only routes).

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{assert_error, read, TestApp};
use crate::on_both_backends;

fn keys_path(company: &str) -> String {
    format!("/api/partner/v1/companies/{company}/integrations")
}

async fn login_sets_a_safe_cookie_and_csrf_token(app: TestApp) {
    let res = app
        .anon(Method::POST, "/auth/login")
        .json(&json!({"email": app.t.email.to_uppercase(), "password": app.t.password}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200, "e-mail is case-insensitive");
    let cookie = res.headers()["set-cookie"].to_str().unwrap().to_owned();
    assert!(cookie.starts_with("pay_session=pss_"), "{cookie}");
    for attr in ["HttpOnly", "SameSite=Lax", "Path=/", "Max-Age=43200"] {
        assert!(cookie.contains(attr), "{attr} in {cookie}");
    }
    assert_eq!(res.headers()["cache-control"], "no-store");
    let body: Value = res.json().await.unwrap();
    assert!(body["csrfToken"].as_str().unwrap().len() >= 40);
    assert_eq!(body.as_object().unwrap().len(), 1);
}

async fn login_failures_share_one_message_and_are_throttled(app: TestApp) {
    let attempt = |email: String, password: &'static str| {
        app.anon(Method::POST, "/auth/login")
            .json(&json!({"email": email, "password": password}))
            .send()
    };
    let wrong_pw = read(
        attempt(app.t.email.clone(), "wrong password!!")
            .await
            .unwrap(),
    )
    .await;
    let unknown = read(
        attempt("nobody@nowhere.example".into(), "wrong password!!")
            .await
            .unwrap(),
    )
    .await;
    assert_error(&wrong_pw, 401, "invalid_login", None);
    assert_error(&unknown, 401, "invalid_login", None);
    assert_eq!(wrong_pw.1, unknown.1, "no hint which part was wrong");
    // Nine more failures reach the limit of ten per 15 minutes.
    for _ in 0..9 {
        assert_eq!(
            attempt(app.t.email.clone(), "wrong password!!")
                .await
                .unwrap()
                .status(),
            401
        );
    }
    let res = attempt(app.t.email.clone(), "still wrong!!").await.unwrap();
    assert_eq!(res.headers()["retry-after"], "900");
    assert_error(&read(res).await, 429, "rate_limited", None);
    // Even the right password waits.
    let res = app
        .anon(Method::POST, "/auth/login")
        .json(&json!({"email": app.t.email, "password": app.t.password}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 429);
    let bad = read(
        app.anon(Method::POST, "/auth/login")
            .json(&json!({"email": "a@b.example"}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&bad, 400, "validation_failed", Some("password"));
    let bad = read(
        app.anon(Method::POST, "/auth/login")
            .json(&json!({"email": "a@b.example", "password": "x", "remember": true}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&bad, 400, "unknown_field", Some("remember"));
}

async fn companies_lists_the_users_teams(app: TestApp) {
    let s = app.login_owner(&app.t).await;
    let got = read(
        app.in_session(&s, Method::GET, "/api/partner/v1/companies")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(got.0, 200);
    assert_eq!(
        got.1,
        json!({"data": [{"id": app.t.company_id, "name": "Acme Goods", "role": "owner", "permissions": ["settings.manage"]}]})
    );
    let (email, pw) = app.add_member(&app.t, "member").await;
    let m = app.login(&email, &pw).await;
    let got = read(
        app.in_session(&m, Method::GET, "/api/partner/v1/companies")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(got.1["data"][0]["role"], "member");
    assert_eq!(got.1["data"][0]["permissions"], json!([]));
    // Session-only: an API key is not a signed-in user.
    let got = read(
        app.req(Method::GET, "/api/partner/v1/companies")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 401, "unauthorized", None);
    let got = read(
        app.anon(Method::GET, "/api/partner/v1/companies")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 401, "unauthorized", None);
}

async fn create_list_and_use_an_integration(app: TestApp) {
    let s = app.login_owner(&app.t).await;
    let path = keys_path(&app.t.company_id);
    let got = read(
        app.in_session(&s, Method::POST, &path)
            .json(&json!({"name": "Shop backend", "appSlug": "pay", "allowedOrigins": ["https://shop.example", "http://localhost:3000"]}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(got.0, 201, "{}", got.1);
    let i = &got.1["integration"];
    let key_id = i["key_id"].as_str().unwrap();
    let secret = i["keySecret"].as_str().unwrap();
    assert!(key_id.starts_with("mk_pay_") && key_id.len() == 31);
    assert!(secret.starts_with("mksec_") && secret.len() == 49);
    assert!(i["form_key_id"].as_str().unwrap().starts_with("pk_pay_"));
    assert_eq!(i["partner_id"].as_str().unwrap().len(), 36);
    assert_eq!(i["appSlug"], "pay");
    assert_eq!(i["enabled"], true);
    assert_eq!(i["lastUsedAt"], Value::Null);
    assert_eq!(
        i["allowedOrigins"],
        json!(["https://shop.example", "http://localhost:3000"])
    );
    // The new key works and records its use.
    let used = app
        .anon(Method::GET, "/api/partner/v1/pay/settings")
        .header("x-svc-key-id", key_id)
        .header("x-svc-key-secret", secret)
        .send()
        .await
        .unwrap();
    assert_eq!(used.status(), 200);
    let list = app.in_session(&s, Method::GET, &path).send().await.unwrap();
    let text = list.text().await.unwrap();
    assert!(!text.contains(secret), "a secret is never shown twice");
    assert!(!text.contains("keySecret"));
    let list: Value = serde_json::from_str(&text).unwrap();
    let data = list["data"].as_array().unwrap();
    assert_eq!(data.len(), 2, "bootstrap key and the new one");
    assert_eq!(data[0]["key_id"], key_id, "newest first");
    assert!(data[0]["lastUsedAt"].as_str().is_some());
    assert!(data[1]["key_id"] == app.t.key_id.as_str());
}

async fn integration_rules(app: TestApp) {
    let s = app.login_owner(&app.t).await;
    let path = keys_path(&app.t.company_id);
    let post = |b: Value| app.in_session(&s, Method::POST, &path).json(&b).send();
    let cases = [
        (json!({"appSlug": "pay"}), "validation_failed", "name"),
        (
            json!({"name": "", "appSlug": "pay"}),
            "validation_failed",
            "name",
        ),
        (
            json!({"name": "k", "appSlug": "shop"}),
            "validation_failed",
            "appSlug",
        ),
        (json!({"name": "k"}), "validation_failed", "appSlug"),
        (
            json!({"name": "k", "appSlug": "pay", "allowedOrigins": "https://a.example"}),
            "validation_failed",
            "allowedOrigins",
        ),
        (
            json!({"name": "k", "appSlug": "pay", "allowedOrigins": ["https://a.example/path"]}),
            "validation_failed",
            "allowedOrigins[0]",
        ),
        (
            json!({"name": "k", "appSlug": "pay", "allowedOrigins": ["https://a.example", 3]}),
            "validation_failed",
            "allowedOrigins[1]",
        ),
        (
            json!({"name": "k", "appSlug": "pay", "keySecret": "mine"}),
            "unknown_field",
            "keySecret",
        ),
    ];
    for (body, code, field) in cases {
        assert_error(
            &read(post(body).await.unwrap()).await,
            400,
            code,
            Some(field),
        );
    }
    let patch = format!("{path}/{}", uuid::Uuid::new_v4());
    let got = read(
        app.in_session(&s, Method::PATCH, &patch)
            .json(&json!({"enabled": false}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 404, "api_key_not_found", None);
    assert_eq!(got.1["error"], "API key not found");
    let got = read(
        app.in_session(&s, Method::DELETE, &format!("{path}/not-a-uuid"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 404, "api_key_not_found", None);
    // The PATCH body is strict too.
    let own = read(app.in_session(&s, Method::GET, &path).send().await.unwrap())
        .await
        .1["data"][0]["partner_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let one = format!("{path}/{own}");
    for (body, code, field) in [
        (
            json!({"enabled": false, "name": "renamed"}),
            "unknown_field",
            "name",
        ),
        (json!({}), "validation_failed", "enabled"),
        (json!({"enabled": null}), "validation_failed", "enabled"),
    ] {
        let got = read(
            app.in_session(&s, Method::PATCH, &one)
                .json(&body)
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_error(&got, 400, code, Some(field));
    }
    let got = read(
        app.in_session(&s, Method::PATCH, &one)
            .header("content-type", "application/json")
            .body("{")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 400, "invalid_json", None);
    // Still enabled after all the refusals.
    let list = read(app.in_session(&s, Method::GET, &path).send().await.unwrap())
        .await
        .1;
    assert_eq!(list["data"][0]["enabled"], true);
}

async fn integrations_are_team_scoped(app: TestApp) {
    let other = app.new_tenant("Other Co").await;
    let s = app.login_owner(&app.t).await;
    // Another team's company id in the path: 403, whatever the method.
    let theirs = keys_path(&other.company_id);
    let got = read(
        app.in_session(&s, Method::GET, &theirs)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 403, "forbidden", None);
    assert_eq!(got.1["error"], "Forbidden");
    let got = read(
        app.in_session(&s, Method::POST, &theirs)
            .json(&json!({"name": "x", "appSlug": "pay"}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 403, "forbidden", None);
    let got = read(
        app.in_session(&s, Method::GET, &keys_path("not-a-company"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 403, "forbidden", None);
    // Another team's partner id under our own company: not found, and untouched.
    let os = app.login_owner(&other).await;
    let their_keys = read(
        app.in_session(&os, Method::GET, &theirs)
            .send()
            .await
            .unwrap(),
    )
    .await
    .1;
    let their_partner = their_keys["data"][0]["partner_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let ours = format!("{}/{their_partner}", keys_path(&app.t.company_id));
    let got = read(
        app.in_session(&s, Method::PATCH, &ours)
            .json(&json!({"enabled": false}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 404, "api_key_not_found", None);
    let got = read(
        app.in_session(&s, Method::DELETE, &ours)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 404, "api_key_not_found", None);
    let still = read(
        app.as_tenant(&other, Method::GET, "/api/partner/v1/pay/settings")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(still.0, 200);
    // Their path with their partner id from our session: 403 (team first).
    let got = read(
        app.in_session(&s, Method::DELETE, &format!("{theirs}/{their_partner}"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 403, "forbidden", None);
}

async fn key_management_needs_session_permission_and_csrf(app: TestApp) {
    let path = keys_path(&app.t.company_id);
    let body = json!({"name": "k", "appSlug": "pay"});
    // API keys cannot manage keys.
    let got = read(
        app.req(Method::POST, &path)
            .json(&body)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 401, "unauthorized", None);
    let got = read(app.anon(Method::GET, &path).send().await.unwrap()).await;
    assert_error(&got, 401, "unauthorized", None);
    let s = app.login_owner(&app.t).await;
    let got = read(
        app.in_session_no_csrf(&s, Method::POST, &path)
            .json(&body)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 403, "forbidden", None);
    let (email, pw) = app.add_member(&app.t, "member").await;
    let m = app.login(&email, &pw).await;
    let got = read(
        app.in_session(&m, Method::POST, &path)
            .json(&body)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 403, "forbidden", None);
    // Members may read the list.
    assert_eq!(
        app.in_session(&m, Method::GET, &path)
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    let partner = read(app.in_session(&s, Method::GET, &path).send().await.unwrap())
        .await
        .1["data"][0]["partner_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let one = format!("{path}/{partner}");
    let got = read(
        app.in_session(&m, Method::PATCH, &one)
            .json(&json!({"enabled": false}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 403, "forbidden", None);
    let got = read(
        app.in_session(&m, Method::DELETE, &one)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 403, "forbidden", None);
    // Admins hold settings.manage.
    let (email, pw) = app.add_member(&app.t, "admin").await;
    let a = app.login(&email, &pw).await;
    let got = read(
        app.in_session(&a, Method::POST, &path)
            .json(&body)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(got.0, 201);
    let got = read(
        app.in_session(&s, Method::PATCH, &one)
            .json(&json!({"enabled": "no"}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 400, "validation_failed", Some("enabled"));
}

on_both_backends!(
    login_sets_a_safe_cookie_and_csrf_token,
    login_failures_share_one_message_and_are_throttled,
    companies_lists_the_users_teams,
    create_list_and_use_an_integration,
    integration_rules,
    integrations_are_team_scoped,
    key_management_needs_session_permission_and_csrf,
);
