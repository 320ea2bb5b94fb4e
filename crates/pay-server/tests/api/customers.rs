//! Customers through real HTTP: the upsert by e-mail (201/200), the list, the signed portal
//! URL, strict input, credentials, scopes and tenancy.

use pay_domain::kernel::ports::Clock;
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{assert_error, read, TestApp};
use crate::links::millis;
use crate::oauth_support::access_token;
use crate::on_both_backends;

pub const CUSTOMERS: &str = "/api/partner/v1/pay/customers";

pub fn portal_path(id: &str) -> String {
    format!("{CUSTOMERS}/{id}/portal")
}

pub async fn upsert(app: &TestApp, body: Value) -> (reqwest::StatusCode, Value) {
    read(
        app.req(Method::POST, CUSTOMERS)
            .json(&body)
            .send()
            .await
            .unwrap(),
    )
    .await
}

/// A portal URL for the main tenant's customer `id` (200 expected): the answer.
pub async fn portal(app: &TestApp, id: &str) -> Value {
    let got = read(
        app.req(Method::POST, &portal_path(id))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(got.0, 200, "{}", got.1);
    got.1
}

async fn upsert_creates_then_updates_by_email(app: TestApp) {
    let created = upsert(
        &app,
        json!({"email": "  Ann.Lee@Example.COM ", "name": "Ann", "clientId": "c-1", "metadata": {"tier": "gold"}}),
    )
    .await;
    assert_eq!(created.0, 201, "{}", created.1);
    let c = &created.1;
    assert_eq!(c["email"], "Ann.Lee@Example.COM", "trimmed, case kept");
    assert_eq!(c["name"], "Ann");
    assert_eq!(c["clientId"], "c-1");
    assert_eq!(c["metadata"], json!({"tier": "gold"}));
    assert!(c["uid"].as_str().unwrap().starts_with("cus_"));
    assert!(uuid::Uuid::parse_str(c["id"].as_str().unwrap()).is_ok());
    assert_eq!(c["createdAt"], c["updatedAt"]);
    assert!(
        c.get("urls").is_none(),
        "a portal URL only on the portal route"
    );
    // Same e-mail, other case and spaces: the same contact, only the given field changed.
    app.clock.advance_secs(5);
    let updated = upsert(
        &app,
        json!({"email": "ann.lee@example.com", "name": "Ann Lee"}),
    )
    .await;
    assert_eq!(updated.0, 200, "{}", updated.1);
    let u = &updated.1;
    assert_eq!(u["id"], c["id"]);
    assert_eq!(u["uid"], c["uid"]);
    assert_eq!(
        u["email"], "Ann.Lee@Example.COM",
        "the first spelling stays"
    );
    assert_eq!(u["name"], "Ann Lee");
    assert_eq!(u["clientId"], "c-1");
    assert_eq!(u["metadata"], json!({"tier": "gold"}));
    assert_eq!(u["createdAt"], c["createdAt"]);
    assert_eq!(
        millis(u["updatedAt"].as_str().unwrap()) - millis(c["updatedAt"].as_str().unwrap()),
        5000
    );
    // Another e-mail is another contact; the list is newest first.
    app.clock.advance_secs(1);
    let bob = upsert(&app, json!({"email": "bob@example.com"})).await;
    assert_eq!(bob.0, 201);
    assert_eq!(bob.1["name"], Value::Null);
    assert_eq!(bob.1["clientId"], Value::Null);
    assert_eq!(bob.1["metadata"], json!({}));
    let list = read(app.req(Method::GET, CUSTOMERS).send().await.unwrap()).await;
    assert_eq!(list.0, 200);
    let data = list.1["data"].as_array().unwrap();
    assert_eq!(data.len(), 2);
    assert_eq!(data[0]["email"], "bob@example.com");
    assert_eq!(data[1], *u);
    // Another company's list does not show them; its upsert of the same e-mail is its own.
    let other = app.new_tenant("Other Co").await;
    let theirs = read(
        app.as_tenant(&other, Method::GET, CUSTOMERS)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(theirs.1["data"], json!([]));
    let mine_there = read(
        app.as_tenant(&other, Method::POST, CUSTOMERS)
            .json(&json!({"email": "ann.lee@example.com"}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(mine_there.0, 201);
    assert_ne!(mine_there.1["id"], c["id"]);
}

async fn upsert_input_is_strict(app: TestApp) {
    for (body, code, field) in [
        (json!({}), "validation_failed", "email"),
        (json!({"email": "nope"}), "validation_failed", "email"),
        (json!({"email": "   "}), "validation_failed", "email"),
        (json!({"email": 5}), "validation_failed", "email"),
        (
            json!({"email": "a@b.example", "name": ""}),
            "validation_failed",
            "name",
        ),
        (
            json!({"email": "a@b.example", "clientId": "x".repeat(201)}),
            "validation_failed",
            "clientId",
        ),
        (
            json!({"email": "a@b.example", "metadata": []}),
            "validation_failed",
            "metadata",
        ),
        (
            json!({"email": "a@b.example", "uid": "cus_x"}),
            "unknown_field",
            "uid",
        ),
        (
            json!({"email": "a@b.example", "urls": {}}),
            "unknown_field",
            "urls",
        ),
    ] {
        let got = upsert(&app, body.clone()).await;
        assert_error(&got, 400, code, Some(field));
    }
    let list = read(app.req(Method::GET, CUSTOMERS).send().await.unwrap()).await;
    assert_eq!(list.1["data"], json!([]), "nothing was written");
}

async fn portal_url_is_signed_for_24_hours(app: TestApp) {
    let c = upsert(&app, json!({"email": "ann@example.com", "clientId": "c-9"}))
        .await
        .1;
    let (id, uid) = (c["id"].as_str().unwrap(), c["uid"].as_str().unwrap());
    let by_id = portal(&app, id).await;
    assert_eq!(by_id["ok"], true);
    assert_eq!(by_id["companyId"], app.t.company_id);
    let customer = &by_id["customer"];
    assert_eq!(customer["id"], c["id"]);
    assert_eq!(customer["uid"], c["uid"]);
    assert_eq!(customer["email"], "ann@example.com");
    assert_eq!(customer["clientId"], "c-9");
    assert_eq!(customer["companyAccountId"], app.t.company_id);
    let url = url::Url::parse(customer["urls"]["customerPortal"].as_str().unwrap()).unwrap();
    assert_eq!(
        url.origin().ascii_serialization(),
        "https://pay.test.example"
    );
    assert_eq!(url.path(), "/portal");
    let q: std::collections::HashMap<String, String> = url.query_pairs().into_owned().collect();
    assert_eq!(q.len(), 4);
    assert_eq!(q["company"], app.t.company_id);
    assert_eq!(q["customer"], uid);
    let expires: i64 = q["expires"].parse().unwrap();
    assert_eq!(expires * 1000, millis(by_id["expiresAt"].as_str().unwrap()));
    let now = app.clock.now().unix_seconds();
    assert!(
        (expires - now - 86_400).abs() <= 1,
        "24 h ahead: {expires} vs {now}"
    );
    assert_eq!(q["signature"].len(), 64);
    assert!(q["signature"]
        .bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
    // By uid: the same customer. Never stored: the contact read does not carry it.
    let by_uid = portal(&app, uid).await;
    assert_eq!(by_uid["customer"]["id"], c["id"]);
    let list = read(app.req(Method::GET, CUSTOMERS).send().await.unwrap()).await;
    assert!(list.1["data"][0].get("urls").is_none());
    // Unknown ids, and another company's customer: 404.
    for bad in [
        "nope",
        "cus_AAAAAAAAAAAAAAAAAAAAAAAA",
        "0192f0c4-1a2b-7c3d-8e4f-0123456789ab",
    ] {
        let got = read(
            app.req(Method::POST, &portal_path(bad))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_error(&got, 404, "not_found", None);
    }
    let other = app.new_tenant("Other Co").await;
    for who in [id, uid] {
        let got = read(
            app.as_tenant(&other, Method::POST, &portal_path(who))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_error(&got, 404, "not_found", None);
    }
}

async fn credentials_and_scopes(app: TestApp) {
    let c = upsert(&app, json!({"email": "ann@example.com"})).await.1;
    let id = c["id"].as_str().unwrap().to_owned();
    let routes = [
        (
            Method::POST,
            CUSTOMERS.to_owned(),
            Some(json!({"email": "z@example.com"})),
        ),
        (Method::GET, CUSTOMERS.to_owned(), None),
        (Method::POST, portal_path(&id), None),
    ];
    for (m, path, body) in &routes {
        let with = |r: reqwest::RequestBuilder| match body {
            Some(b) => r.json(b),
            None => r,
        };
        // No credential; half a pair; a wrong secret.
        let got = read(with(app.anon(m.clone(), path)).send().await.unwrap()).await;
        assert_eq!(
            (got.0.as_u16(), got.1["error"].as_str()),
            (401, Some("Unauthorized"))
        );
        let got = read(
            with(
                app.anon(m.clone(), path)
                    .header("x-svc-key-id", &app.t.key_id),
            )
            .send()
            .await
            .unwrap(),
        )
        .await;
        assert_eq!(got.0, 401);
        let got = read(
            with(
                app.anon(m.clone(), path)
                    .header("x-svc-key-id", &app.t.key_id)
                    .header("x-svc-key-secret", "mksec_wrong"),
            )
            .send()
            .await
            .unwrap(),
        )
        .await;
        assert_eq!(
            (got.0.as_u16(), got.1["error"].as_str()),
            (401, Some("Invalid pay API credentials")),
            "{m} {path}"
        );
    }
    // A malformed customer id is refused for the credential first (401), not as unknown (404).
    let malformed = portal_path("not-a-customer-id");
    let got = read(app.anon(Method::POST, &malformed).send().await.unwrap()).await;
    assert_eq!(got.0, 401, "{:?}", got.1);
    let got = read(
        app.anon(Method::POST, &malformed)
            .header("x-svc-key-id", &app.t.key_id)
            .header("x-svc-key-secret", "mksec_wrong")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(got.0, 401, "{:?}", got.1);
    let got = read(app.req(Method::POST, &malformed).send().await.unwrap()).await;
    assert_eq!(got.0, 404, "{:?}", got.1);
    // A member's session reads, and may not write (403); the owner's may.
    let (email, password) = app.add_member(&app.t, "member").await;
    let member = app.login(&email, &password).await;
    let got = read(
        app.in_session(&member, Method::GET, CUSTOMERS)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(got.0, 200);
    for (m, path, body) in &routes[..] {
        if *m == Method::GET {
            continue;
        }
        let mut r = app.in_session(&member, m.clone(), path);
        if let Some(b) = body {
            r = r.json(b);
        }
        let got = read(r.send().await.unwrap()).await;
        assert_error(&got, 403, "forbidden", None);
    }
    // OAuth: the read scope reads and cannot write or issue portal URLs (the spec's 401).
    let read_only = access_token(&app, "pay:customers:read").await;
    let got = read(
        app.anon(Method::GET, CUSTOMERS)
            .bearer_auth(&read_only)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(got.0, 200, "{}", got.1);
    assert_eq!(got.1["data"][0]["id"], c["id"]);
    for (m, path, body) in &routes {
        if *m == Method::GET {
            continue;
        }
        let mut r = app.anon(m.clone(), path).bearer_auth(&read_only);
        if let Some(b) = body {
            r = r.json(b);
        }
        let got = read(r.send().await.unwrap()).await;
        assert_eq!(
            (got.0.as_u16(), got.1["error"].as_str()),
            (401, Some("Invalid pay API credentials")),
            "{m} {path}: {}",
            got.1
        );
    }
    // A grant without any customers scope cannot read them either.
    let links_only = access_token(&app, "pay:payment-links:read").await;
    let got = read(
        app.anon(Method::GET, CUSTOMERS)
            .bearer_auth(&links_only)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        (got.0.as_u16(), got.1["error"].as_str()),
        (401, Some("Invalid pay API credentials"))
    );
    // The write scope upserts and issues portal URLs.
    let writer = access_token(&app, "pay:customers:write").await;
    let got = read(
        app.anon(Method::POST, CUSTOMERS)
            .bearer_auth(&writer)
            .json(&json!({"email": "oauth@example.com"}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(got.0, 201, "{}", got.1);
    let got = read(
        app.anon(Method::POST, &portal_path(&id))
            .bearer_auth(&writer)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(got.0, 200, "{}", got.1);
}

on_both_backends!(
    upsert_creates_then_updates_by_email,
    upsert_input_is_strict,
    portal_url_is_signed_for_24_hours,
    credentials_and_scopes,
);
