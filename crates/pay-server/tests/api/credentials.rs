//! The edge's credential rules on every payment route: the spec's exact 401 messages, disabled
//! and deleted keys, and browser sessions (CSRF, team permission).

use reqwest::Method;
use serde_json::json;

use crate::helpers::{assert_error, read, TestApp};
use crate::on_both_backends;

/// Every payment route with a body that would succeed.
fn payment_routes(uid: &str) -> Vec<(Method, String, Option<serde_json::Value>)> {
    let link = format!("/api/partner/v1/pay/payment-links/{uid}");
    vec![
        (
            Method::GET,
            "/api/partner/v1/pay/payment-links".into(),
            None,
        ),
        (
            Method::POST,
            "/api/partner/v1/pay/payment-links".into(),
            Some(json!({"amount": "1"})),
        ),
        (Method::GET, link.clone(), None),
        (Method::PATCH, link, Some(json!({"status": "active"}))),
        (Method::GET, "/api/partner/v1/pay/settings".into(), None),
        (
            Method::PUT,
            "/api/partner/v1/pay/settings".into(),
            Some(json!({"skipQuoteAcceptance": false})),
        ),
        (
            Method::GET,
            "/api/partner/v1/pay/destination-assets".into(),
            None,
        ),
    ]
}

async fn send(
    app: &TestApp,
    rb: reqwest::RequestBuilder,
    body: &Option<serde_json::Value>,
) -> (reqwest::StatusCode, serde_json::Value) {
    let rb = match body {
        Some(b) => rb.json(b),
        None => rb,
    };
    let _ = app;
    read(rb.send().await.unwrap()).await
}

async fn missing_or_half_credentials_are_unauthorized(app: TestApp) {
    let uid = app.create_link(json!({"amount": "1"})).await["uid"]
        .as_str()
        .unwrap()
        .to_owned();
    for (m, path, body) in payment_routes(&uid) {
        // Without any credential, creating a link is the spec's anonymous link (its own
        // tests are in anonymous.rs): this body lacks `settlement`, so it is a 400, not a 401.
        let create = m == Method::POST && path == "/api/partner/v1/pay/payment-links";
        let got = send(&app, app.anon(m.clone(), &path), &body).await;
        if create {
            assert_error(
                &got,
                400,
                "validation_failed",
                Some("settlement.priorities"),
            );
        } else {
            assert_error(&got, 401, "unauthorized", None);
            assert_eq!(got.1["error"], "Unauthorized", "{m} {path}");
        }
        let variants = [
            app.anon(m.clone(), &path)
                .header("x-svc-key-id", &app.t.key_id),
            app.anon(m.clone(), &path)
                .header("x-svc-key-secret", &app.t.key_secret),
        ];
        for rb in variants {
            let got = send(&app, rb, &body).await;
            assert_error(&got, 401, "unauthorized", None);
            assert_eq!(got.1["error"], "Unauthorized", "{m} {path}");
        }
    }
}

async fn wrong_pairs_are_invalid_credentials(app: TestApp) {
    let uid = app.create_link(json!({"amount": "1"})).await["uid"]
        .as_str()
        .unwrap()
        .to_owned();
    let other = app.new_tenant("Other Co").await;
    for (m, path, body) in payment_routes(&uid) {
        let variants = [
            // Right id, wrong secret.
            app.anon(m.clone(), &path)
                .header("x-svc-key-id", &app.t.key_id)
                .header(
                    "x-svc-key-secret",
                    "mksec_wrongwrongwrongwrongwrongwrongwrongwrong",
                ),
            // Another team's secret with our id.
            app.anon(m.clone(), &path)
                .header("x-svc-key-id", &app.t.key_id)
                .header("x-svc-key-secret", &other.key_secret),
            // Unknown id.
            app.anon(m.clone(), &path)
                .header("x-svc-key-id", "mk_pay_AAAAAAAAAAAAAAAAAAAAAAAA")
                .header("x-svc-key-secret", &app.t.key_secret),
            // Malformed id and secret prefix.
            app.anon(m.clone(), &path)
                .header("x-svc-key-id", "nope")
                .header("x-svc-key-secret", &app.t.key_secret),
            app.anon(m.clone(), &path)
                .header("x-svc-key-id", &app.t.key_id)
                .header(
                    "x-svc-key-secret",
                    app.t.key_secret.trim_start_matches("mksec_"),
                ),
            // An OAuth token (none can be valid yet).
            app.anon(m.clone(), &path)
                .header("authorization", "Bearer abc"),
        ];
        for rb in variants {
            let got = send(&app, rb, &body).await;
            assert_error(&got, 401, "invalid_credentials", None);
            assert_eq!(got.1["error"], "Invalid pay API credentials", "{m} {path}");
        }
    }
}

async fn disabled_and_deleted_keys_are_refused(app: TestApp) {
    let s = app.login_owner(&app.t).await;
    let keys = format!(
        "/api/partner/v1/companies/{}/integrations",
        app.t.company_id
    );
    let created = read(
        app.in_session(&s, Method::POST, &keys)
            .json(&json!({"name": "Temp", "appSlug": "pay", "allowedOrigins": []}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(created.0, 201);
    let i = &created.1["integration"];
    let (kid, ksec, pid) = (
        i["key_id"].as_str().unwrap().to_owned(),
        i["keySecret"].as_str().unwrap().to_owned(),
        i["partner_id"].as_str().unwrap().to_owned(),
    );
    let use_key = || {
        app.anon(Method::GET, "/api/partner/v1/pay/payment-links")
            .header("x-svc-key-id", &kid)
            .header("x-svc-key-secret", &ksec)
            .send()
    };
    assert_eq!(use_key().await.unwrap().status(), 200);
    let path = format!("{keys}/{pid}");
    let off = read(
        app.in_session(&s, Method::PATCH, &path)
            .json(&json!({"enabled": false}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(off.0, 200);
    assert_eq!(off.1["enabled"], false);
    let got = read(use_key().await.unwrap()).await;
    assert_error(&got, 401, "invalid_credentials", None);
    // Refused on every payment route while disabled.
    let uid = app.create_link(json!({"amount": "1"})).await["uid"]
        .as_str()
        .unwrap()
        .to_owned();
    for (m, route, body) in payment_routes(&uid) {
        let rb = app
            .anon(m.clone(), &route)
            .header("x-svc-key-id", &kid)
            .header("x-svc-key-secret", &ksec);
        let got = send(&app, rb, &body).await;
        assert_error(&got, 401, "invalid_credentials", None);
        assert_eq!(got.1["error"], "Invalid pay API credentials", "{m} {route}");
    }
    let on = read(
        app.in_session(&s, Method::PATCH, &path)
            .json(&json!({"enabled": true}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(on.1["enabled"], true);
    assert_eq!(use_key().await.unwrap().status(), 200);
    let del = app
        .in_session(&s, Method::DELETE, &path)
        .send()
        .await
        .unwrap();
    assert_eq!(del.status(), 204);
    let got = read(use_key().await.unwrap()).await;
    assert_error(&got, 401, "invalid_credentials", None);
    // The tenant's other key is unaffected.
    assert_eq!(
        app.req(Method::GET, "/api/partner/v1/pay/payment-links")
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
}

async fn owner_session_works_on_payment_routes_with_csrf(app: TestApp) {
    let s = app.login_owner(&app.t).await;
    let uid = app.create_link(json!({"amount": "1"})).await["uid"]
        .as_str()
        .unwrap()
        .to_owned();
    for (m, path, body) in payment_routes(&uid) {
        let got = send(&app, app.in_session(&s, m.clone(), &path), &body).await;
        assert!(got.0.is_success(), "{m} {path}: {}", got.1);
        let mutating = m != Method::GET;
        let got = send(&app, app.in_session_no_csrf(&s, m.clone(), &path), &body).await;
        if mutating {
            assert_error(&got, 403, "forbidden", None);
        } else {
            assert!(got.0.is_success(), "reads need no CSRF token: {m} {path}");
        }
        // A wrong CSRF token is as good as none.
        let wrong = app
            .anon(m.clone(), &path)
            .header("cookie", format!("pay_session={}", s.cookie))
            .header("x-csrf-token", "not-the-token");
        let got = send(&app, wrong, &body).await;
        assert_eq!(
            got.0.as_u16(),
            if mutating { 403 } else { 200 },
            "{m} {path}"
        );
    }
    // A link created in the session belongs to the session's company.
    let created = send(
        &app,
        app.in_session(&s, Method::POST, "/api/partner/v1/pay/payment-links"),
        &Some(json!({"amount": "9"})),
    )
    .await;
    let via_key = read(
        app.req(
            Method::GET,
            &format!(
                "/api/partner/v1/pay/payment-links/{}",
                created.1["uid"].as_str().unwrap()
            ),
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(via_key.0, 200);
}

async fn member_session_reads_but_cannot_write(app: TestApp) {
    let (email, password) = app.add_member(&app.t, "member").await;
    let s = app.login(&email, &password).await;
    let uid = app.create_link(json!({"amount": "1"})).await["uid"]
        .as_str()
        .unwrap()
        .to_owned();
    for (m, path, body) in payment_routes(&uid) {
        let got = send(&app, app.in_session(&s, m.clone(), &path), &body).await;
        if m == Method::GET {
            assert_eq!(got.0, 200, "{m} {path}");
        } else {
            assert_error(&got, 403, "forbidden", None);
            assert_eq!(got.1["error"], "Forbidden");
        }
    }
}

async fn forged_or_expired_sessions_are_unauthorized(app: TestApp) {
    let forged = app
        .anon(Method::GET, "/api/partner/v1/pay/payment-links")
        .header("cookie", "pay_session=pss_forged");
    assert_error(
        &read(forged.send().await.unwrap()).await,
        401,
        "unauthorized",
        None,
    );
    let s = app.login_owner(&app.t).await;
    let out = app
        .in_session(&s, Method::POST, "/auth/logout")
        .send()
        .await
        .unwrap();
    assert_eq!(out.status(), 204);
    let got = read(
        app.in_session(&s, Method::GET, "/api/partner/v1/pay/payment-links")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 401, "unauthorized", None);
}

on_both_backends!(
    missing_or_half_credentials_are_unauthorized,
    wrong_pairs_are_invalid_credentials,
    disabled_and_deleted_keys_are_refused,
    owner_session_works_on_payment_routes_with_csrf,
    member_session_reads_but_cannot_write,
    forged_or_expired_sessions_are_unauthorized,
);
