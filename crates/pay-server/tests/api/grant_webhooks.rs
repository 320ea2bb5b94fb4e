//! The OAuth grant's own webhook subscription over real HTTP: the spec's state table, every
//! field rule, grant-only credentials, `Idempotency-Key` (replay, reuse, in flight, two at
//! once, pruned after 24 hours), and grant isolation: two apps on one company each get only
//! the events, links and deliveries of their own grant; the company callback gets none of them.

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{assert_error, read, Tenant, TestApp};
use crate::oauth_support::{code_for, exchange, register, App};
use crate::on_both_backends;
use crate::webhooks::{now_secs, set_callback, Receiver};

const SUB: &str = "/api/partner/v1/pay/webhook-subscriptions/current";
const LINKS: &str = "/api/partner/v1/pay/payment-links";
const LOG: &str = "/api/partner/v1/pay/webhook-requests";
const ALL: &str =
    "pay:payment-links:read pay:payment-links:write pay:webhooks:read pay:webhooks:write";
const ASSET: &str = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";

/// A Bearer access token of a new application's grant on `t`'s company.
async fn grant_token(app: &TestApp, t: &Tenant, scopes: &str) -> String {
    let client = register(app, scopes, false, false).await;
    token_of(app, t, &client, scopes).await
}

/// A new access token of `client`'s grant on `t`'s company (one grant per company and app).
async fn token_of(app: &TestApp, t: &Tenant, client: &App, scopes: &str) -> String {
    let code = code_for(app, t, client, scopes).await;
    let (status, body, _) = exchange(app, client, &code, None).await;
    assert_eq!(status, 200, "{body}");
    body["access_token"].as_str().unwrap().to_owned()
}

fn with_token(app: &TestApp, token: &str, method: Method, path: &str) -> reqwest::RequestBuilder {
    app.anon(method, path).bearer_auth(token)
}

async fn put(app: &TestApp, token: &str, body: Value) -> (reqwest::StatusCode, Value) {
    read(
        with_token(app, token, Method::PUT, SUB)
            .json(&body)
            .send()
            .await
            .unwrap(),
    )
    .await
}

async fn delete(app: &TestApp, token: &str) -> (reqwest::StatusCode, Value) {
    read(
        with_token(app, token, Method::DELETE, SUB)
            .send()
            .await
            .unwrap(),
    )
    .await
}

async fn get(app: &TestApp, token: &str, path: &str) -> (reqwest::StatusCode, Value) {
    read(
        with_token(app, token, Method::GET, path)
            .send()
            .await
            .unwrap(),
    )
    .await
}

fn last4(secret: &str) -> &str {
    &secret[secret.len() - 4..]
}

async fn state_table(app: TestApp) {
    let token = grant_token(&app, &app.t, ALL).await;
    let hooks = Receiver::start();
    // None: nothing to read or delete.
    assert_error(&get(&app, &token, SUB).await, 404, "not_found", None);
    let got = delete(&app, &token).await;
    assert_error(&got, 404, "not_found", None);

    // none -> active: the secret once (under an alias of `url`).
    let (status, created) = put(&app, &token, json!({"webhookUrl": hooks.url})).await;
    assert_eq!(status, 201, "{created}");
    let secret = created["signingSecret"].as_str().unwrap().to_owned();
    assert!(
        secret.starts_with("whsec_") && secret.len() >= 6 + 32,
        "{secret}"
    );
    assert_eq!(created["url"], hooks.url.as_str());
    assert_eq!(created["events"], json!(["pay.payment.*"]));
    assert_eq!(created["active"], true);
    assert_eq!(created["secretLast4"], last4(&secret));
    let (status, read_back) = get(&app, &token, SUB).await;
    assert_eq!(status, 200);
    assert!(read_back.get("signingSecret").is_none(), "{read_back}");
    assert_eq!(read_back["secretLast4"], last4(&secret));
    assert!(read_back["secretCreatedAt"].is_string());
    assert_eq!(read_back["id"], created["id"]);

    // active -> active: an ordinary update keeps the secret.
    let (status, updated) = put(
        &app,
        &token,
        json!({
            "endpointUrl": hooks.url,
            "events": ["pay.payment.status_changed", "pay.payment.channel_created"],
            "description": "Shop <one>",
            "metadata": {"shop": {"id": 7}},
            "rotateSecret": false,
        }),
    )
    .await;
    assert_eq!(status, 200, "{updated}");
    assert!(updated.get("signingSecret").is_none());
    assert_eq!(updated["secretLast4"], last4(&secret));
    assert_eq!(updated["description"], "Shop <one>");
    assert_eq!(updated["metadata"], json!({"shop": {"id": 7}}));
    assert_eq!(updated["events"][1], "pay.payment.channel_created");

    // active -> active with rotation: a new secret once.
    let (status, rotated) = put(
        &app,
        &token,
        json!({"url": hooks.url, "rotateSecret": true}),
    )
    .await;
    assert_eq!(status, 200, "{rotated}");
    let second = rotated["signingSecret"].as_str().unwrap().to_owned();
    assert_ne!(second, secret);
    assert_eq!(rotated["secretLast4"], last4(&second));

    // active -> disabled by PUT: no secret, no secretLast4, the URL kept.
    let (status, off) = put(
        &app,
        &token,
        json!({"callbackUrl": hooks.url, "active": false}),
    )
    .await;
    assert_eq!(status, 200, "{off}");
    assert_eq!(off["active"], false);
    assert!(off.get("secretLast4").is_none() && off.get("signingSecret").is_none());
    let (status, off_read) = get(&app, &token, SUB).await;
    assert_eq!(status, 200);
    assert_eq!(off_read["active"], false);
    assert_eq!(off_read["url"], hooks.url.as_str());
    assert!(off_read.get("secretLast4").is_none(), "{off_read}");
    // disabled -> disabled by PUT (no rotation of a disabled one).
    let got = put(
        &app,
        &token,
        json!({"url": hooks.url, "active": false, "rotateSecret": true}),
    )
    .await;
    assert_error(&got, 400, "validation_failed", Some("rotateSecret"));
    let (status, still) = put(&app, &token, json!({"url": hooks.url, "active": false})).await;
    assert_eq!((status.as_u16(), &still["active"]), (200, &json!(false)));

    // disabled -> active: reactivation issues a new secret.
    let (status, back) = put(&app, &token, json!({"url": hooks.url})).await;
    assert_eq!(status, 200, "{back}");
    let third = back["signingSecret"].as_str().unwrap();
    assert!(third != secret && third != second);
    assert_eq!(back["active"], true);

    // active -> disabled by DELETE, and DELETE again stays disabled.
    for _ in 0..2 {
        let (status, deleted) = delete(&app, &token).await;
        assert_eq!(status, 200, "{deleted}");
        assert_eq!(deleted["active"], false);
        assert!(deleted.get("secretLast4").is_none());
    }
}

async fn credentials_and_field_rules(app: TestApp) {
    // API keys and sessions are refused; so are tokens without the scope.
    for method in [Method::GET, Method::PUT, Method::DELETE] {
        let got = read(
            app.req(method.clone(), SUB)
                .json(&json!({"url": "https://hooks.shop.example/pay"}))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_error(&got, 401, "invalid_credentials", None);
        assert_eq!(got.1["error"], "Invalid pay API credentials");
        let session = app.login_owner(&app.t).await;
        let got = read(
            app.in_session(&session, method.clone(), SUB)
                .json(&json!({"url": "https://hooks.shop.example/pay"}))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_error(&got, 401, "invalid_credentials", None);
        let got = read(app.anon(method, SUB).send().await.unwrap()).await;
        assert_error(&got, 401, "unauthorized", None);
    }
    let reader = grant_token(&app, &app.t, "pay:webhooks:read").await;
    let got = put(
        &app,
        &reader,
        json!({"url": "https://hooks.shop.example/pay"}),
    )
    .await;
    assert_error(&got, 401, "invalid_credentials", None);
    let writer = grant_token(&app, &app.t, "pay:webhooks:write").await;
    assert_error(
        &get(&app, &writer, SUB).await,
        401,
        "invalid_credentials",
        None,
    );

    // Every field rule, the field named.
    let url = "https://hooks.shop.example/pay";
    let big = "x".repeat(8 * 1024);
    let many: Vec<&str> = vec!["pay.payment.*"; 33];
    for (body, code, field) in [
        (json!({}), "validation_failed", "url"),
        (json!({"url": null}), "validation_failed", "url"),
        (
            json!({"url": url, "webhookUrl": url}),
            "validation_failed",
            "webhookUrl",
        ),
        (
            json!({"url": "ftp://hooks.shop.example/"}),
            "validation_failed",
            "url",
        ),
        (
            json!({"callbackUrl": "https://u:p@hooks.shop.example/"}),
            "validation_failed",
            "callbackUrl",
        ),
        (
            json!({"url": url, "events": []}),
            "validation_failed",
            "events",
        ),
        (
            json!({"url": url, "events": many}),
            "validation_failed",
            "events",
        ),
        (
            json!({"url": url, "events": ["pay.subscription.status_changed"]}),
            "validation_failed",
            "events[0]",
        ),
        (
            json!({"url": url, "events": ["pay.payment.*", "pay.payment.nope"]}),
            "validation_failed",
            "events[1]",
        ),
        (
            json!({"url": url, "events": ["pay.payment.*", "pay.payment.*"]}),
            "validation_failed",
            "events[1]",
        ),
        (
            json!({"url": url, "description": "d".repeat(501)}),
            "validation_failed",
            "description",
        ),
        (
            json!({"url": url, "metadata": {"k": big}}),
            "validation_failed",
            "metadata",
        ),
        (
            json!({"url": url, "metadata": [1]}),
            "validation_failed",
            "metadata",
        ),
        (
            json!({"url": url, "active": "yes"}),
            "validation_failed",
            "active",
        ),
        (
            json!({"url": url, "secret": "mine"}),
            "unknown_field",
            "secret",
        ),
    ] {
        let got = put(&app, &writer, body.clone()).await;
        assert_error(&got, 400, code, Some(field));
        assert!(got.0 == 400, "{body}");
    }
    // At the limits: every name once (the wildcard and the 13 payment events: distinct names
    // cannot reach 32), 500 characters.
    let mut names = vec!["pay.payment.*".to_owned()];
    names.extend(
        pay_domain::webhooks::PaymentEvent::ALL
            .iter()
            .map(|e| format!("pay.payment.{}", e.as_str())),
    );
    let got = put(
        &app,
        &writer,
        json!({"url": url, "events": names, "description": "d".repeat(500)}),
    )
    .await;
    assert_eq!(got.0, 201, "{}", got.1);
    assert_eq!(got.1["events"].as_array().unwrap().len(), 14);
    // The key: at most 255 printable characters.
    let got = read(
        with_token(&app, &writer, Method::PUT, SUB)
            .header("Idempotency-Key", "k".repeat(256))
            .json(&json!({"url": url}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 400, "validation_failed", Some("Idempotency-Key"));
}

async fn idempotent_writes(app: TestApp) {
    let client = register(&app, ALL, false, false).await;
    let token = token_of(&app, &app.t, &client, ALL).await;
    let other = grant_token(&app, &app.t, ALL).await;
    let body = r#"{"url": "https://hooks.shop.example/pay", "events": ["pay.payment.*"]}"#;
    let send = |token: &str, key: &str, body: &str| {
        with_token(&app, token, Method::PUT, SUB)
            .header("Idempotency-Key", key)
            .header("content-type", "application/json")
            .body(body.to_owned())
            .send()
    };
    let first = send(&token, "key-1", body).await.unwrap();
    assert_eq!(first.status(), 201);
    assert!(first.headers().get("Idempotent-Replayed").is_none());
    let first = first.text().await.unwrap();
    // A byte-identical retry: the same answer, the same secret, replayed.
    let again = send(&token, "key-1", body).await.unwrap();
    assert_eq!(again.status(), 201);
    assert_eq!(again.headers().get("Idempotent-Replayed").unwrap(), "true");
    assert_eq!(again.text().await.unwrap(), first);
    // Another body with the key (even one space more): 409.
    let spaced = body.replace(", ", ",  ");
    let got = read(send(&token, "key-1", &spaced).await.unwrap()).await;
    assert_error(&got, 409, "idempotency_key_reused", None);
    // The key is the grant's own: another grant's request with it runs (its own secret).
    let theirs = send(&other, "key-1", body).await.unwrap();
    assert_eq!(theirs.status(), 201);
    assert!(theirs.headers().get("Idempotent-Replayed").is_none());
    let theirs: Value = theirs.json().await.unwrap();
    let mine: Value = serde_json::from_str(&first).unwrap();
    assert_ne!(theirs["signingSecret"], mine["signingSecret"]);
    // ... and DELETE is another route for it.
    let deleted = with_token(&app, &token, Method::DELETE, SUB)
        .header("Idempotency-Key", "key-1")
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 200);
    let replay = with_token(&app, &token, Method::DELETE, SUB)
        .header("Idempotency-Key", "key-1")
        .send()
        .await
        .unwrap();
    assert_eq!(replay.headers().get("Idempotent-Replayed").unwrap(), "true");
    // A refused request leaves the key free.
    let got = read(
        send(&token, "key-2", r#"{"url": "ftp://x.example/"}"#)
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 400, "validation_failed", Some("url"));
    let ok = send(&token, "key-2", body).await.unwrap();
    assert_eq!(ok.status(), 200, "reactivation");

    // Eight at once with one key: one runs; the others are told it is in flight, or get its
    // answer replayed. Exactly one new secret was issued.
    let rotate = r#"{"url": "https://hooks.shop.example/pay", "rotateSecret": true}"#;
    let answers =
        futures_util::future::join_all((0..8).map(|_| send(&token, "key-3", rotate))).await;
    let mut secrets = Vec::new();
    let mut fresh = 0;
    for res in answers {
        let res = res.unwrap();
        let replayed = res.headers().get("Idempotent-Replayed").is_some();
        let (status, v) = read(res).await;
        match status.as_u16() {
            200 => {
                fresh += usize::from(!replayed);
                secrets.push(v["signingSecret"].as_str().unwrap().to_owned());
            }
            409 => assert_eq!(v["errorCode"], "idempotency_key_in_flight", "{v}"),
            other => panic!("{other}: {v}"),
        }
    }
    assert_eq!(fresh, 1, "{secrets:?}");
    secrets.dedup();
    assert_eq!(secrets.len(), 1);
    let (_, now) = get(&app, &token, SUB).await;
    assert_eq!(now["secretLast4"], last4(&secrets[0]));

    // Kept 24 hours, then pruned: the key runs again.
    app.clock.advance_secs(24 * 3600 + 1);
    let pay = app.pay.clone();
    let pruned = tokio::task::spawn_blocking(move || pay.prune())
        .await
        .unwrap()
        .unwrap();
    assert!(pruned >= 3, "{pruned}");
    // (The access token expired meanwhile: a new one of the same grant.)
    let token = token_of(&app, &app.t, &client, ALL).await;
    let after = send(&token, "key-3", rotate).await.unwrap();
    assert_eq!(after.status(), 200);
    assert!(after.headers().get("Idempotent-Replayed").is_none());
    let after: Value = after.json().await.unwrap();
    assert_ne!(after["signingSecret"].as_str().unwrap(), secrets[0]);
}

/// A link made with `token`, paid in the sandbox with the tenant's key: its uid.
async fn paid_link(app: &TestApp, token: Option<&str>) -> String {
    let body = json!({"title": "Order", "amount": "10.00", "skipQuoteAcceptance": true});
    let req = match token {
        Some(t) => with_token(app, t, Method::POST, LINKS),
        None => app.req(Method::POST, LINKS),
    };
    let (status, link) = read(req.json(&body).send().await.unwrap()).await;
    assert_eq!(status, 201, "{link}");
    let uid = link["uid"].as_str().unwrap().to_owned();
    app.start_session(&uid, ASSET).await;
    let (status, paid) = read(
        app.req(
            Method::POST,
            &format!("/api/partner/v1/pay/sandbox/payment-links/{uid}/events"),
        )
        .json(&json!({"type": "deposit", "amount": "10.00"}))
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(status, 200, "{paid}");
    assert_eq!(paid["status"], "complete");
    uid
}

fn uids_and_types(hooks: &Receiver) -> Vec<(String, String)> {
    hooks
        .received()
        .iter()
        .map(|r| {
            let v: Value = serde_json::from_str(&r.body).unwrap();
            (
                v["paymentLink"]["uid"].as_str().unwrap_or("").to_owned(),
                v["type"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

async fn two_apps_see_only_their_own(app: TestApp) {
    let (one, two) = (Receiver::start(), Receiver::start());
    let company = Receiver::start();
    let session = app.login_owner(&app.t).await;
    set_callback(&app, &session, &company.url).await;
    let tok1 = grant_token(&app, &app.t, ALL).await;
    let tok2 = grant_token(&app, &app.t, ALL).await;
    let (_, s1) = put(&app, &tok1, json!({"url": one.url})).await;
    let secret1 = s1["signingSecret"].as_str().unwrap().to_owned();
    let (_, s2) = put(
        &app,
        &tok2,
        json!({"url": two.url, "events": ["pay.payment.status_changed"]}),
    )
    .await;
    assert!(s2["signingSecret"].is_string());

    let uid1 = paid_link(&app, Some(&tok1)).await;
    let uid2 = paid_link(&app, Some(&tok2)).await;
    let uid_key = paid_link(&app, None).await;
    app.dispatcher.drain().await.unwrap();

    // Each receiver: only its grant's links; the second only the events it named.
    let got1 = uids_and_types(&one);
    assert!(!got1.is_empty());
    assert!(got1.iter().all(|(u, _)| *u == uid1), "{got1:?}");
    assert!(
        got1.iter().any(|(_, t)| t != "pay.payment.status_changed"),
        "{got1:?}"
    );
    let got2 = uids_and_types(&two);
    assert!(!got2.is_empty());
    assert!(
        got2.iter()
            .all(|(u, t)| *u == uid2 && t == "pay.payment.status_changed"),
        "{got2:?}"
    );
    // The company callback: only the key's link.
    let got_company = uids_and_types(&company);
    assert!(!got_company.is_empty());
    assert!(
        got_company.iter().all(|(u, _)| *u == uid_key),
        "{got_company:?}"
    );
    // Signed with the grant's own secret.
    for r in one.received() {
        let sig = &r.headers["x-pay-signature"];
        pay_webhooks::verify(&secret1, sig, r.body.as_bytes(), now_secs(), 300).unwrap();
    }

    // Lists and details: each grant only its own.
    let (_, list1) = get(&app, &tok1, LINKS).await;
    let listed: Vec<&str> = list1["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["uid"].as_str().unwrap())
        .collect();
    assert_eq!(listed, vec![uid1.as_str()]);
    assert_eq!(get(&app, &tok1, &format!("{LINKS}/{uid2}")).await.0, 404);
    assert_eq!(get(&app, &tok2, &format!("{LINKS}/{uid1}")).await.0, 404);
    assert_eq!(get(&app, &tok1, &format!("{LINKS}/{uid_key}")).await.0, 404);

    // The delivery log: each grant only its own deliveries; the key sees all.
    let (status, log1) = get(&app, &tok1, LOG).await;
    assert_eq!(status, 200, "{log1}");
    let log1 = log1["data"].as_array().unwrap().clone();
    assert_eq!(log1.len(), got1.len());
    assert!(log1.iter().all(|d| d["paymentLinkUid"] == uid1.as_str()));
    let (_, log2) = get(&app, &tok2, LOG).await;
    let log2 = log2["data"].as_array().unwrap().clone();
    assert_eq!(log2.len(), got2.len());
    assert!(log2.iter().all(|d| d["paymentLinkUid"] == uid2.as_str()));
    let (_, all) = read(app.req(Method::GET, LOG).send().await.unwrap()).await;
    assert_eq!(
        all["data"].as_array().unwrap().len(),
        got1.len() + got2.len() + got_company.len()
    );
    let theirs = log2[0]["id"].as_str().unwrap();
    assert_eq!(get(&app, &tok1, &format!("{LOG}/{theirs}")).await.0, 404);
    assert_eq!(get(&app, &tok2, &format!("{LOG}/{theirs}")).await.0, 200);
    let resend = read(
        with_token(&app, &tok1, Method::POST, &format!("{LOG}/{theirs}/resend"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(resend.0, 404, "{}", resend.1);

    // Disabled: the grant's events go nowhere (not to the company callback either).
    let (before1, before_company) = (one.received().len(), company.received().len());
    let got = delete(&app, &tok1).await;
    assert_eq!(got.0, 200);
    paid_link(&app, Some(&tok1)).await;
    app.dispatcher.drain().await.unwrap();
    assert_eq!(one.received().len(), before1);
    assert_eq!(company.received().len(), before_company);

    // Another company's token: 404 on this company's link.
    let other = app.new_tenant("Other Co").await;
    let foreign = grant_token(&app, &other, ALL).await;
    assert_eq!(get(&app, &foreign, &format!("{LINKS}/{uid1}")).await.0, 404);
    assert_eq!(get(&app, &foreign, SUB).await.0, 404);
}

async fn secrets_are_sealed_at_rest(app: TestApp) {
    use pay_domain::kernel::idempotency::{
        Claim, IdempotencyKey, IdempotencyStore, IdempotentRequest,
    };
    use pay_domain::webhooks::ports::WebhookStore;

    let token = grant_token(&app, &app.t, ALL).await;
    let body = r#"{"url": "https://hooks.shop.example/pay"}"#;
    let res = with_token(&app, &token, Method::PUT, SUB)
        .header("Idempotency-Key", "sealed-1")
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 201);
    let created: Value = res.json().await.unwrap();
    let secret = created["signingSecret"].as_str().unwrap().to_owned();
    let fingerprint: String = ring::digest::digest(&ring::digest::SHA256, body.as_bytes())
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let (pay, store, tok) = (app.pay.clone(), app.store.clone(), token.clone());
    let grant = tokio::task::spawn_blocking(move || {
        let grant = pay
            .oauth()
            .authenticate_access_token(&tok, None)
            .unwrap()
            .grant_id()
            .unwrap();
        // The subscription's secret and the stored answer (which holds it) are sealed.
        let sub = store.grant_subscription(grant).unwrap().unwrap();
        let sealed = sub.secret.unwrap().sealed;
        assert!(!sealed.sealed.contains(&secret[6..]) && !sealed.key_id.is_empty());
        let request = IdempotentRequest {
            scope: format!("grant:{grant}:PUT:webhook-subscriptions/current"),
            key: IdempotencyKey::parse("sealed-1").unwrap(),
            fingerprint,
        };
        let now = pay.now();
        let Claim::Answered(answer) = store
            .claim_idempotency_key(&request, "probe", now, now)
            .unwrap()
        else {
            panic!("the answer is stored");
        };
        assert!(!answer.sealed.contains(&secret[6..]));
        assert!(!answer.sealed.contains("signingSecret"));
        grant
    })
    .await
    .unwrap();
    // Disabled: the sealed secrets are gone from the row.
    let got = delete(&app, &token).await;
    assert_eq!(got.0, 200);
    let store = app.store.clone();
    let sub =
        tokio::task::spawn_blocking(move || store.grant_subscription(grant).unwrap().unwrap())
            .await
            .unwrap();
    assert_eq!((sub.secret, sub.previous), (None, None));
}

/// A link made with a token records the grant and the grant's subscription active then: none
/// before the first PUT, the subscription while active, none again once it is disabled; an
/// API key's link records neither.
async fn links_record_the_active_subscription(app: TestApp) {
    use pay_domain::kernel::ids::{CompanyId, LinkUid};
    use pay_domain::links::ports::PaymentLinkStore;
    let token = grant_token(&app, &app.t, ALL).await;
    let hooks = Receiver::start();
    let company = CompanyId::parse(&app.t.company_id).unwrap();
    let create = |token: Option<String>| {
        let req = match &token {
            Some(t) => with_token(&app, t, Method::POST, LINKS),
            None => app.req(Method::POST, LINKS),
        };
        async move {
            let (status, link) =
                read(req.json(&json!({"amount": "1"})).send().await.unwrap()).await;
            assert_eq!(status, 201, "{link}");
            LinkUid::parse(link["uid"].as_str().unwrap()).unwrap()
        }
    };
    let stored = |uid: LinkUid| {
        let store = app.store.clone();
        async move {
            tokio::task::spawn_blocking(move || store.link(company, &uid).unwrap().unwrap())
                .await
                .unwrap()
        }
    };
    let before = stored(create(Some(token.clone())).await).await;
    assert!(before.grant_id().is_some());
    assert_eq!(before.grant_subscription_id, None);

    let (status, sub) = put(&app, &token, json!({"url": hooks.url})).await;
    assert_eq!(status, 201, "{sub}");
    let sub_id = uuid::Uuid::parse_str(sub["id"].as_str().unwrap()).unwrap();
    let during = stored(create(Some(token.clone())).await).await;
    assert_eq!(during.grant_id(), before.grant_id());
    assert_eq!(during.grant_subscription_id, Some(sub_id));
    let by_key = stored(create(None).await).await;
    assert_eq!(by_key.grant_id(), None);
    assert_eq!(by_key.grant_subscription_id, None);

    let (status, _) = delete(&app, &token).await;
    assert_eq!(status, 200);
    let after = stored(create(Some(token.clone())).await).await;
    assert_eq!(after.grant_subscription_id, None);
    // What a link recorded stays.
    assert_eq!(
        stored(during.uid.clone()).await.grant_subscription_id,
        Some(sub_id)
    );
}

on_both_backends!(
    links_record_the_active_subscription,
    secrets_are_sealed_at_rest,
    state_table,
    credentials_and_field_rules,
    idempotent_writes,
    two_apps_see_only_their_own,
);
