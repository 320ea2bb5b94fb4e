//! The events API over real HTTP: a receiver that was down pages through what it missed
//! (`starting_after`, `type`, `created[gte|lt]`, `delivered`) and reconciles from the
//! envelopes the webhooks carry; strict query; credentials, scope and tenancy; each OAuth
//! grant sees only its own links' events; the pruning job forgets events past the retention.

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{assert_error, read, Backend, Tenant, TestApp};
use crate::oauth_support::{code_for, exchange, register};
use crate::on_both_backends;
use crate::webhooks::{set_callback, test_event, Receiver};

const EVENTS: &str = "/api/partner/v1/pay/events";
const LOG: &str = "/api/partner/v1/pay/webhook-requests";
const ASSET: &str = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";

/// A Bearer access token of a new application's grant on `t`'s company.
async fn grant_token(app: &TestApp, t: &Tenant, scopes: &str) -> String {
    let client = register(app, scopes, false, false).await;
    let code = code_for(app, t, &client, scopes).await;
    let (status, body, _) = exchange(app, &client, &code, None).await;
    assert_eq!(status, 200, "{body}");
    body["access_token"].as_str().unwrap().to_owned()
}

fn with_token(app: &TestApp, token: &str, method: Method, path: &str) -> reqwest::RequestBuilder {
    app.anon(method, path).bearer_auth(token)
}

async fn get(rb: reqwest::RequestBuilder) -> (reqwest::StatusCode, Value) {
    read(rb.send().await.unwrap()).await
}

/// The main tenant's key: GET `EVENTS{query}`, 200 expected.
async fn events(app: &TestApp, query: &str) -> Value {
    let got = get(app.req(Method::GET, &format!("{EVENTS}{query}"))).await;
    assert_eq!(got.0, 200, "{query}: {}", got.1);
    got.1
}

fn ids(page: &Value) -> Vec<String> {
    page["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_owned())
        .collect()
}

/// A link made with `token` (or the tenant's key), paid in the sandbox: its uid.
async fn paid_link(app: &TestApp, token: Option<&str>) -> String {
    let path = "/api/partner/v1/pay/payment-links";
    let body = json!({"title": "Order", "amount": "10.00", "skipQuoteAcceptance": true});
    let req = match token {
        Some(t) => with_token(app, t, Method::POST, path),
        None => app.req(Method::POST, path),
    };
    let (status, link) = read(req.json(&body).send().await.unwrap()).await;
    assert_eq!(status, 201, "{link}");
    let uid = link["uid"].as_str().unwrap().to_owned();
    app.start_session(&uid, ASSET).await;
    let (status, paid) = get(app
        .req(
            Method::POST,
            &format!("/api/partner/v1/pay/sandbox/payment-links/{uid}/events"),
        )
        .json(&json!({"type": "deposit", "amount": "10.00"})))
    .await;
    assert_eq!(status, 200, "{paid}");
    uid
}

/// Every event of the main tenant, newest first, read `limit` at a time.
async fn all_pages(app: &TestApp, limit: usize, filter: &str) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    loop {
        let after = out
            .last()
            .map(|e| format!("&starting_after={}", e["id"].as_str().unwrap()))
            .unwrap_or_default();
        let page = events(app, &format!("?limit={limit}{filter}{after}")).await;
        let data = page["data"].as_array().unwrap().clone();
        assert!(data.len() <= limit);
        out.extend(data);
        if page["hasMore"] == false {
            return out;
        }
    }
}

async fn a_receiver_that_was_down_catches_up(app: TestApp) {
    let rx = Receiver::start();
    let s = app.login_owner(&app.t).await;
    set_callback(&app, &s, &rx.url).await;
    // The receiver is down: every attempt of this round fails.
    rx.always(503, 1000);
    let uid = paid_link(&app, None).await;
    let link = app.create_link(json!({"amount": "1"})).await;
    let test_uid = link["uid"].as_str().unwrap().to_owned();
    // A minute later, a test event: the newest.
    app.clock.advance_secs(60);
    test_event(&app, &test_uid).await;
    app.dispatcher.drain().await.unwrap();
    assert!(!rx.received().is_empty());

    // Everything is in the log, newest first, none delivered.
    let all = events(&app, "?limit=100").await;
    assert_eq!(all["hasMore"], false);
    let list = all["data"].as_array().unwrap().clone();
    assert!(list.len() >= 3, "{all}");
    assert_eq!(list[0]["type"], "pay.webhook.test");
    for pair in list.windows(2) {
        assert!(pair[0]["createdAt"].as_str() >= pair[1]["createdAt"].as_str());
    }
    let deliveries = get(app.req(Method::GET, &format!("{LOG}?limit=200")))
        .await
        .1;
    for e in &list {
        assert_eq!(e["delivered"], false, "{e}");
        let env = &e["envelope"];
        assert_eq!(env["type"], e["type"]);
        assert_eq!(env["createdAt"], e["createdAt"]);
        assert_eq!(env["deliveryId"], e["deliveryIds"][0], "{e}");
        // Its deliveries are the log's deliveries of its group.
        let group: Vec<&Value> = deliveries["data"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["groupId"] == e["id"])
            .map(|d| &d["id"])
            .collect();
        assert_eq!(group.len(), e["deliveryIds"].as_array().unwrap().len());
    }
    let payment: Vec<&Value> = list
        .iter()
        .filter(|e| e["type"] != "pay.webhook.test")
        .collect();
    assert!(payment
        .iter()
        .all(|e| e["envelope"]["paymentLink"]["uid"] == uid.as_str()
            && e["paymentLinkUid"] == uid.as_str()));
    // The envelope is what the webhook carried.
    let sent: Vec<Value> = rx
        .received()
        .iter()
        .map(|r| serde_json::from_str(&r.body).unwrap())
        .collect();
    for e in &list {
        assert!(sent.contains(&e["envelope"]), "{e}");
    }
    // One event, as the list shows it.
    let id = list[1]["id"].as_str().unwrap();
    let one = events(&app, &format!("/{id}")).await;
    assert_eq!(one, list[1]);

    // Paging: pages of 2 add up to the whole list, in order.
    let paged = all_pages(&app, 2, "").await;
    assert_eq!(paged, list);
    let first = events(&app, "?limit=1").await;
    assert_eq!(first["hasMore"], true);
    assert_eq!(ids(&first), vec![list[0]["id"].as_str().unwrap()]);

    // Type filters: one type, or several comma-separated.
    let status_changed = events(&app, "?type=pay.payment.status_changed").await;
    let got = status_changed["data"].as_array().unwrap();
    assert!(!got.is_empty());
    assert!(got
        .iter()
        .all(|e| e["type"] == "pay.payment.status_changed"));
    let two = all_pages(
        &app,
        100,
        "&type=pay.webhook.test,pay.payment.status_changed",
    )
    .await;
    let want: Vec<&Value> = list
        .iter()
        .filter(|e| e["type"] == "pay.webhook.test" || e["type"] == "pay.payment.status_changed")
        .collect();
    assert_eq!(two.iter().collect::<Vec<_>>(), want);
    assert!(
        events(&app, "?type=pay.subscription.status_changed").await["data"]
            .as_array()
            .unwrap()
            .is_empty()
    );

    // Creation range: [gte, lt); the test event is a minute newer than the payment's.
    let newest = list[0]["createdAt"].as_str().unwrap();
    let at_newest = events(&app, &format!("?created%5Bgte%5D={newest}&limit=100")).await;
    assert_eq!(ids(&at_newest), vec![list[0]["id"].as_str().unwrap()]);
    let before = events(&app, &format!("?created[lt]={newest}&limit=100")).await;
    assert_eq!(before["data"].as_array().unwrap(), &list[1..]);
    let oldest = list.last().unwrap()["createdAt"].as_str().unwrap();
    let none = events(
        &app,
        &format!("?created[gte]={newest}&created[lt]={oldest}"),
    )
    .await;
    assert_eq!(none["data"], json!([]));

    // The receiver is back: the retries five minutes later succeed.
    rx.answers.lock().unwrap().clear();
    app.clock.advance_secs(301);
    app.dispatcher.drain().await.unwrap();
    let missed = events(&app, "?delivered=false").await;
    assert!(missed["data"].as_array().unwrap().is_empty(), "{missed}");
    let done = all_pages(&app, 100, "&delivered=true").await;
    assert_eq!(done.len(), list.len());
    assert!(done.iter().all(|e| e["delivered"] == true));
}

/// Reads every event of the main tenant that `delivered=false` lists, then resends nothing:
/// the detail of a delivered one still answers, a manual resend joins its event.
async fn a_resend_joins_its_event(app: TestApp) {
    let rx = Receiver::start();
    let s = app.login_owner(&app.t).await;
    set_callback(&app, &s, &rx.url).await;
    let link = app.create_link(json!({"amount": "1"})).await;
    let d = test_event(&app, link["uid"].as_str().unwrap()).await;
    let event = d["groupId"].as_str().unwrap().to_owned();
    let got = get(app.req(
        Method::POST,
        &format!("{LOG}/{}/resend", d["id"].as_str().unwrap()),
    ))
    .await;
    assert_eq!(got.0, 202, "{}", got.1);
    let e = events(&app, &format!("/{event}")).await;
    assert_eq!(e["deliveryIds"], json!([d["id"], got.1["id"]]));
    assert_eq!(e["delivered"], false);
    app.dispatcher.drain().await.unwrap();
    let e = events(&app, &format!("/{event}")).await;
    assert_eq!(e["delivered"], true);
    // The manual resend is no new event.
    assert_eq!(ids(&events(&app, "").await), vec![event]);
}

async fn the_query_is_read_strictly(app: TestApp) {
    let rx = Receiver::start();
    let s = app.login_owner(&app.t).await;
    set_callback(&app, &s, &rx.url).await;
    let other = app.new_tenant("Other Co").await;
    let other_s = app.login_owner(&other).await;
    crate::webhooks::put_callback_of(&app, &other.company_id, &other_s, &rx.url).await;
    let link = app
        .as_tenant(&other, Method::POST, "/api/partner/v1/pay/payment-links")
        .json(&json!({"amount": "1"}))
        .send()
        .await
        .unwrap();
    let link: Value = link.json().await.unwrap();
    let theirs = crate::webhooks::test_event_as(&app, &other, link["uid"].as_str().unwrap()).await
        ["groupId"]
        .as_str()
        .unwrap()
        .to_owned();
    let app_ref = &app;
    let refused = move |query: &'static str| async move { get(app_req(app_ref, query)).await };
    fn app_req(app: &TestApp, query: &str) -> reqwest::RequestBuilder {
        app.req(Method::GET, &format!("{EVENTS}?{query}"))
    }
    assert_error(
        &refused("since=1").await,
        400,
        "unknown_field",
        Some("since"),
    );
    assert_error(
        &refused("Limit=1").await,
        400,
        "unknown_field",
        Some("Limit"),
    );
    for bad in [
        "limit=0",
        "limit=101",
        "limit=ten",
        "limit=",
        "limit=1&limit=2",
    ] {
        assert_error(&refused(bad).await, 400, "validation_failed", Some("limit"));
    }
    assert_eq!(events(&app, "?limit=100").await["data"], json!([]));
    for bad in ["starting_after=abc", "starting_after="] {
        assert_error(
            &refused(bad).await,
            400,
            "validation_failed",
            Some("starting_after"),
        );
    }
    // An id that is no event of this company's: refused, not an empty page.
    let unknown = format!("starting_after={}", uuid::Uuid::now_v7());
    assert_error(
        &get(app_req(&app, &unknown)).await,
        400,
        "validation_failed",
        Some("starting_after"),
    );
    assert_error(
        &get(app_req(&app, &format!("starting_after={theirs}"))).await,
        400,
        "validation_failed",
        Some("starting_after"),
    );
    for bad in [
        "type=status_changed",
        "type=pay.payment.nope",
        "type=pay.webhook.test,,",
    ] {
        assert_error(&refused(bad).await, 400, "validation_failed", Some("type"));
    }
    assert_error(
        &refused("created%5Bgte%5D=yesterday").await,
        400,
        "validation_failed",
        Some("created[gte]"),
    );
    assert_error(
        &refused("created[lt]=2026-11-27").await,
        400,
        "validation_failed",
        Some("created[lt]"),
    );
    assert_error(
        &refused("delivered=no").await,
        400,
        "validation_failed",
        Some("delivered"),
    );
    assert_error(
        &refused("q=%zz").await,
        400,
        "validation_failed",
        Some("query"),
    );
}

async fn credentials_scope_and_tenancy(app: TestApp) {
    let rx = Receiver::start();
    let s = app.login_owner(&app.t).await;
    set_callback(&app, &s, &rx.url).await;
    let link = app.create_link(json!({"amount": "1"})).await;
    let event = test_event(&app, link["uid"].as_str().unwrap()).await["groupId"]
        .as_str()
        .unwrap()
        .to_owned();
    let one = format!("{EVENTS}/{event}");
    // A token without `pay:webhooks:read` (the spec: a missing scope is a 401).
    let narrow = grant_token(&app, &app.t, "pay:payment-links:read").await;
    let (email, pw) = app.add_member(&app.t, "member").await;
    let member = app.login(&email, &pw).await;
    for path in [EVENTS, one.as_str()] {
        assert_error(
            &get(app.anon(Method::GET, path)).await,
            401,
            "unauthorized",
            None,
        );
        let wrong = app
            .anon(Method::GET, path)
            .header("x-svc-key-id", &app.t.key_id)
            .header(
                "x-svc-key-secret",
                "mksec_wrongwrongwrongwrongwrongwrongwrongwrong",
            );
        assert_error(&get(wrong).await, 401, "invalid_credentials", None);
        let got = get(with_token(&app, &narrow, Method::GET, path)).await;
        assert_error(&got, 401, "invalid_credentials", None);
        // A member's session reads the company's events.
        let got = get(app.in_session(&member, Method::GET, path)).await;
        assert_eq!(got.0, 200, "{}", got.1);
    }
    let listed = get(app.in_session(&s, Method::GET, EVENTS)).await.1;
    assert_eq!(ids(&listed), vec![event.clone()]);
    // Another company's key: the event is not found, its list is empty.
    let other = app.new_tenant("Other Co").await;
    let got = get(app.as_tenant(&other, Method::GET, &one)).await;
    assert_error(&got, 404, "not_found", None);
    let theirs = get(app.as_tenant(&other, Method::GET, EVENTS)).await;
    assert_eq!(theirs.1, json!({"data": [], "hasMore": false}));
    // Not an id: not found.
    let got = get(app.req(Method::GET, &format!("{EVENTS}/not-an-id"))).await;
    assert_error(&got, 404, "not_found", None);
}

async fn each_grant_sees_its_own_links_events(app: TestApp) {
    const ALL: &str =
        "pay:payment-links:read pay:payment-links:write pay:webhooks:read pay:webhooks:write";
    let (one, two, company) = (Receiver::start(), Receiver::start(), Receiver::start());
    let s = app.login_owner(&app.t).await;
    set_callback(&app, &s, &company.url).await;
    let tok1 = grant_token(&app, &app.t, ALL).await;
    let tok2 = grant_token(&app, &app.t, ALL).await;
    for (tok, rx) in [(&tok1, &one), (&tok2, &two)] {
        let got = get(with_token(
            &app,
            tok,
            Method::PUT,
            "/api/partner/v1/pay/webhook-subscriptions/current",
        )
        .json(&json!({"url": rx.url})))
        .await;
        assert_eq!(got.0, 201, "{}", got.1);
    }
    let uid1 = paid_link(&app, Some(&tok1)).await;
    let uid2 = paid_link(&app, Some(&tok2)).await;
    let uid_key = paid_link(&app, None).await;

    let page = |tok: String| {
        let app = &app;
        async move {
            let got = get(with_token(
                app,
                &tok,
                Method::GET,
                &format!("{EVENTS}?limit=100"),
            ))
            .await;
            assert_eq!(got.0, 200, "{}", got.1);
            got.1["data"].as_array().unwrap().clone()
        }
    };
    let (mine1, mine2) = (page(tok1.clone()).await, page(tok2.clone()).await);
    assert!(!mine1.is_empty() && !mine2.is_empty());
    assert!(mine1.iter().all(|e| e["paymentLinkUid"] == uid1.as_str()));
    assert!(mine2.iter().all(|e| e["paymentLinkUid"] == uid2.as_str()));
    let all = events(&app, "?limit=100").await["data"]
        .as_array()
        .unwrap()
        .clone();
    let keys: Vec<&Value> = all
        .iter()
        .filter(|e| e["paymentLinkUid"] == uid_key.as_str())
        .collect();
    assert!(!keys.is_empty());
    assert_eq!(all.len(), mine1.len() + mine2.len() + keys.len());
    // The other grant's event, or the company's own: not found, and no cursor.
    let (theirs, company_own) = (
        mine2[0]["id"].as_str().unwrap(),
        keys[0]["id"].as_str().unwrap(),
    );
    for id in [theirs, company_own] {
        let got = get(with_token(
            &app,
            &tok1,
            Method::GET,
            &format!("{EVENTS}/{id}"),
        ))
        .await;
        assert_error(&got, 404, "not_found", None);
        let got = get(with_token(
            &app,
            &tok1,
            Method::GET,
            &format!("{EVENTS}?starting_after={id}"),
        ))
        .await;
        assert_error(&got, 400, "validation_failed", Some("starting_after"));
    }
    let own = mine1[0]["id"].as_str().unwrap();
    let got = get(with_token(
        &app,
        &tok1,
        Method::GET,
        &format!("{EVENTS}/{own}"),
    ))
    .await;
    assert_eq!(got.1, mine1[0]);
}

/// A server keeping events 7 days.
async fn spawn_week(backend: Backend) -> Option<TestApp> {
    crate::helpers::spawn_configured(
        backend,
        std::sync::Arc::new(pay_processor::SandboxProcessor::new()),
        |c| c.events_retention = time::Duration::days(7),
    )
    .await
}

async fn the_pruning_job_forgets_events_past_the_retention(app: TestApp) {
    let rx = Receiver::start();
    let s = app.login_owner(&app.t).await;
    set_callback(&app, &s, &rx.url).await;
    let link = app.create_link(json!({"amount": "1"})).await;
    let uid = link["uid"].as_str().unwrap().to_owned();
    let old = test_event(&app, &uid).await;
    app.clock.advance_secs(6 * 86_400);
    let newer = test_event(&app, &uid).await;
    app.pay.prune().unwrap();
    assert_eq!(ids(&events(&app, "").await).len(), 2, "both within 7 days");
    // A day and a half later the first is older than 7 days: pruned; the second is kept.
    app.clock.advance_secs(36 * 3600);
    app.pay.prune().unwrap();
    assert_eq!(
        ids(&events(&app, "").await),
        vec![newer["groupId"].as_str().unwrap()]
    );
    let gone = format!("{EVENTS}/{}", old["groupId"].as_str().unwrap());
    assert_error(
        &get(app.req(Method::GET, &gone)).await,
        404,
        "not_found",
        None,
    );
    // Its delivery stays in the delivery log.
    let d = get(app.req(
        Method::GET,
        &format!("{LOG}/{}", old["id"].as_str().unwrap()),
    ))
    .await;
    assert_eq!(d.0, 200, "{}", d.1);
}

on_both_backends!(
    a_receiver_that_was_down_catches_up,
    a_resend_joins_its_event,
    the_query_is_read_strictly,
    credentials_scope_and_tenancy,
    each_grant_sees_its_own_links_events,
);

on_both_backends!(spawn = spawn_week; the_pruning_job_forgets_events_past_the_retention);
