//! `Idempotency-Key` on the creates (payment links, subscriptions, customers, request mails,
//! expense saves), one driver for all: a byte-identical retry gets the first answer with
//! `Idempotent-Replayed: true` and creates nothing; another body with the key is 409
//! `idempotency_key_reused`; a claim still running is 409 `idempotency_key_in_flight` (held
//! in the store, and eight at once); the key is the credential's own (another API key of the
//! company, another company's); a refused request leaves it free; a bad key is 400.

use std::future::Future;
use std::pin::Pin;

use pay_domain::kernel::idempotency::{
    Claim, IdempotencyKey, IdempotencyStore, IdempotentRequest, CLAIM_LEASE,
};
use reqwest::Method;
use serde_json::json;

use crate::helpers::{assert_error, read, Tenant, TestApp};
use crate::on_both_backends;

on_both_backends!(
    payment_links,
    request_mails,
    subscriptions,
    customers,
    expenses
);

/// A second API key of the tenant's company (its partner id, for the scope).
async fn second_key(app: &TestApp, t: &Tenant) -> (Tenant, String) {
    let s = app.login_owner(t).await;
    let got = read(
        app.in_session(
            &s,
            Method::POST,
            &format!("/api/partner/v1/companies/{}/integrations", t.company_id),
        )
        .json(&json!({"name": "Second", "appSlug": "pay", "allowedOrigins": []}))
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(got.0, 201, "{}", got.1);
    let i = &got.1["integration"];
    let key = Tenant {
        key_id: i["key_id"].as_str().unwrap().to_owned(),
        key_secret: i["keySecret"].as_str().unwrap().to_owned(),
        ..t.clone()
    };
    (key, i["partner_id"].as_str().unwrap().to_owned())
}

fn sha256_hex(body: &str) -> String {
    ring::digest::digest(&ring::digest::SHA256, body.as_bytes())
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

type Count<'a> = Box<dyn Fn(Tenant) -> Pin<Box<dyn Future<Output = usize> + 'a>> + 'a>;

/// One create route under test.
struct Create<'a> {
    path: String,
    /// The route of the idempotency scope (`key:<partner>:POST:<route>`).
    route: String,
    body: String,
    /// Another valid body.
    other: String,
    /// A third valid body, that creates (sent by eight at once).
    burst: String,
    /// A body the route refuses (400, `field`).
    refused: (String, &'static str),
    /// The status of a fresh run.
    status: u16,
    /// The status of the same body run again without replay (another credential).
    again: u16,
    /// Whether that run creates another entity (an upsert updates the first).
    again_creates: bool,
    /// How many of the entities the route creates the company has.
    count: Count<'a>,
}

async fn send(
    app: &TestApp,
    t: &Tenant,
    path: &str,
    key: Option<&str>,
    body: &str,
) -> reqwest::Response {
    let mut rb = app
        .as_tenant(t, Method::POST, path)
        .header("content-type", "application/json")
        .body(body.to_owned());
    if let Some(key) = key {
        rb = rb.header("Idempotency-Key", key);
    }
    rb.send().await.unwrap()
}

fn replayed(res: &reqwest::Response) -> bool {
    match res.headers().get("Idempotent-Replayed") {
        Some(v) => {
            assert_eq!(v, "true");
            true
        }
        None => false,
    }
}

async fn keyed_create_rules(app: &TestApp, c: Create<'_>) {
    let t = app.t.clone();
    let (second, second_partner) = second_key(app, &t).await;
    let before = (c.count)(t.clone()).await;

    // The first run, then a byte-identical retry: the same status and body, replayed, and
    // nothing created twice.
    let first = send(app, &t, &c.path, Some("order-1"), &c.body).await;
    assert_eq!(first.status(), c.status);
    assert!(!replayed(&first));
    let first_body = first.text().await.unwrap();
    assert_eq!((c.count)(t.clone()).await, before + 1);
    for _ in 0..2 {
        let again = send(app, &t, &c.path, Some("order-1"), &c.body).await;
        assert_eq!(again.status(), c.status);
        assert!(replayed(&again));
        assert_eq!(
            again.headers().get("content-type").unwrap(),
            "application/json"
        );
        assert_eq!(again.text().await.unwrap(), first_body);
    }
    assert_eq!((c.count)(t.clone()).await, before + 1);

    // Another body with the key (even the same JSON spaced otherwise): 409, nothing made.
    for body in [c.other.as_str(), &format!(" {}", c.body)] {
        let got = read(send(app, &t, &c.path, Some("order-1"), body).await).await;
        assert_error(&got, 409, "idempotency_key_reused", None);
    }
    assert_eq!((c.count)(t.clone()).await, before + 1);

    // Another API key of the company: its own key space; so is another company's.
    let theirs = send(app, &second, &c.path, Some("order-1"), &c.body).await;
    assert_eq!(theirs.status(), c.again);
    assert!(!replayed(&theirs));
    let theirs = theirs.text().await.unwrap();
    let made = before + 1 + usize::from(c.again_creates);
    assert_eq!((c.count)(t.clone()).await, made);
    let replay = send(app, &second, &c.path, Some("order-1"), &c.body).await;
    assert!(replayed(&replay));
    assert_eq!(replay.text().await.unwrap(), theirs);

    // A refused request leaves its key free.
    let (refused, field) = &c.refused;
    let got = read(send(app, &t, &c.path, Some("order-2"), refused).await).await;
    assert_error(&got, 400, "validation_failed", Some(field));
    let ok = send(app, &t, &c.path, Some("order-2"), &c.other).await;
    assert!(ok.status().is_success(), "{}", ok.status());
    assert!(!replayed(&ok));

    // While a request with the key runs: 409 in flight (a claim held in the store, as a
    // running request holds it), for the same body only.
    let (store, scope) = (
        app.store.clone(),
        format!("key:{second_partner}:POST:{}", c.route),
    );
    let (now, fingerprint) = (app.pay.now(), sha256_hex(&c.body));
    let held = tokio::task::spawn_blocking(move || {
        let request = IdempotentRequest {
            scope,
            key: IdempotencyKey::parse("held").unwrap(),
            fingerprint,
        };
        store
            .claim_idempotency_key(&request, "running", now, now.plus(CLAIM_LEASE))
            .unwrap()
    })
    .await
    .unwrap();
    assert_eq!(
        held,
        Claim::Claimed {
            token: "running".into()
        }
    );
    let got = read(send(app, &second, &c.path, Some("held"), &c.body).await).await;
    assert_error(&got, 409, "idempotency_key_in_flight", None);
    let got = read(send(app, &second, &c.path, Some("held"), &c.other).await).await;
    assert_error(&got, 409, "idempotency_key_reused", None);

    // Eight at once with one key: one runs; the others are told it is in flight or get its
    // answer replayed. One entity more.
    let before = (c.count)(t.clone()).await;
    let answers = futures_util::future::join_all(
        (0..8).map(|_| send(app, &t, &c.path, Some("burst"), &c.burst)),
    )
    .await;
    let mut fresh = 0;
    for res in answers {
        let again = replayed(&res);
        let (status, v) = read(res).await;
        match status.as_u16() {
            409 => assert_eq!(v["errorCode"], "idempotency_key_in_flight", "{v}"),
            s if s == c.status => fresh += usize::from(!again),
            other => panic!("{other}: {v}"),
        }
    }
    assert_eq!(fresh, 1);
    assert_eq!((c.count)(t.clone()).await, before + 1);

    // A bad key: 400 on the header, nothing made.
    for bad in ["k".repeat(256), " ".into(), String::new()] {
        let got = read(send(app, &t, &c.path, Some(&bad), &c.body).await).await;
        assert_error(&got, 400, "validation_failed", Some("Idempotency-Key"));
    }
    let twice = app
        .as_tenant(&t, Method::POST, &c.path)
        .header("content-type", "application/json")
        .header("Idempotency-Key", "a")
        .header("Idempotency-Key", "b")
        .body(c.body.clone())
        .send()
        .await
        .unwrap();
    let got = read(twice).await;
    assert_error(&got, 400, "validation_failed", Some("Idempotency-Key"));
    // Without the key the route creates as before.
    let unkeyed = send(app, &t, &c.path, None, &c.body).await;
    assert!(!replayed(&unkeyed));
    assert_eq!(unkeyed.status(), c.again);
}

/// How many entries the list at `path` gives the tenant.
fn count_listed<'a>(app: &'a TestApp, path: &'static str) -> Count<'a> {
    Box::new(move |t: Tenant| {
        Box::pin(async move {
            let got = read(app.as_tenant(&t, Method::GET, path).send().await.unwrap()).await;
            assert_eq!(got.0, 200);
            got.1["data"].as_array().unwrap().len()
        })
    })
}

fn count_links(app: &TestApp) -> Count<'_> {
    count_listed(app, "/api/partner/v1/pay/payment-links")
}

async fn payment_links(app: TestApp) {
    let path = "/api/partner/v1/pay/payment-links".to_owned();
    keyed_create_rules(
        &app,
        Create {
            path: path.clone(),
            route: "payment-links".into(),
            body: r#"{"amount": "12.50", "fiatCurrency": "USD", "orderId": "42"}"#.into(),
            other: r#"{"amount": "13.00", "fiatCurrency": "USD"}"#.into(),
            burst: r#"{"amount": "14.00", "fiatCurrency": "USD"}"#.into(),
            refused: (
                r#"{"amount": "-1", "fiatCurrency": "USD"}"#.into(),
                "amount",
            ),
            status: 201,
            again: 201,
            again_creates: true,
            count: count_links(&app),
        },
    )
    .await;
    // Another company's key with the same key and body: its own link, in its company.
    let other = app.new_tenant("Other Co").await;
    let body = r#"{"amount": "12.50", "fiatCurrency": "USD", "orderId": "42"}"#;
    let res = send(&app, &other, &path, Some("order-1"), body).await;
    assert_eq!(res.status(), 201);
    assert!(!replayed(&res));
    assert_eq!(count_links(&app)(other.clone()).await, 1);
    // Without a credential (an anonymous link) there is nothing to scope a key by.
    let got = read(
        app.anon(Method::POST, &path)
            .header("Idempotency-Key", "order-1")
            .json(&json!({}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 400, "validation_failed", Some("Idempotency-Key"));
}

async fn request_mails(app: TestApp) {
    use pay_domain::kernel::ids::{CompanyId, LinkUid};
    use pay_domain::mail::MailStore;
    let link = app
        .create_link(json!({"amount": "12.50", "fiatCurrency": "USD"}))
        .await;
    let uid = link["uid"].as_str().unwrap().to_owned();
    let route = format!("payment-links/{uid}/send-request-email");
    let (store, link_uid) = (app.store.clone(), LinkUid::parse(&uid).unwrap());
    let count: Count<'_> = Box::new(move |t: Tenant| {
        let (store, link_uid) = (store.clone(), link_uid.clone());
        Box::pin(async move {
            let company = CompanyId::parse(&t.company_id).unwrap();
            tokio::task::spawn_blocking(move || store.link_mails(company, &link_uid).unwrap().len())
                .await
                .unwrap()
        })
    });
    keyed_create_rules(
        &app,
        Create {
            path: format!("/api/partner/v1/pay/{route}"),
            route,
            body: r#"{"email": "payer@example.com"}"#.into(),
            other: r#"{"email": "other@example.com"}"#.into(),
            burst: r#"{"email": "burst@example.com"}"#.into(),
            refused: (r#"{"email": "not-an-address"}"#.into(), "email"),
            status: 202,
            again: 202,
            again_creates: true,
            count,
        },
    )
    .await;
    // The key is scoped to the link: the same key and body for another link sends its own.
    let second = app
        .create_link(json!({"amount": "1.00", "fiatCurrency": "USD"}))
        .await;
    let path = format!(
        "/api/partner/v1/pay/payment-links/{}/send-request-email",
        second["uid"].as_str().unwrap()
    );
    let res = send(
        &app,
        &app.t,
        &path,
        Some("order-1"),
        r#"{"email": "payer@example.com"}"#,
    )
    .await;
    assert_eq!(res.status(), 202);
    assert!(!replayed(&res));
    // Another company's link is 404 whatever the key, and leaves it free.
    let other = app.new_tenant("Other Co").await;
    let theirs = read(
        send(
            &app,
            &other,
            &format!("/api/partner/v1/pay/payment-links/{uid}/send-request-email"),
            Some("order-9"),
            "{}",
        )
        .await,
    )
    .await;
    assert_eq!(theirs.0, 404, "{}", theirs.1);
}

async fn subscriptions(app: TestApp) {
    let body = |email: &str| {
        format!(
            r#"{{"customerEmail": "{email}", "label": "Pro plan", "amountUsd": "10.00", "cadence": "monthly", "timezone": "Europe/Berlin"}}"#
        )
    };
    keyed_create_rules(
        &app,
        Create {
            path: "/api/partner/v1/pay/subscriptions".into(),
            route: "subscriptions".into(),
            body: body("ann@example.com"),
            other: body("bob@example.com"),
            burst: body("cat@example.com"),
            refused: (body("nope"), "customerEmail"),
            status: 201,
            again: 201,
            again_creates: true,
            count: count_listed(&app, "/api/partner/v1/pay/subscriptions"),
        },
    )
    .await;
    // Each subscription issued its one cycle invoice: a replay issued none.
    let subs = count_listed(&app, "/api/partner/v1/pay/subscriptions")(app.t.clone()).await;
    assert_eq!(count_links(&app)(app.t.clone()).await, subs);
}

async fn customers(app: TestApp) {
    keyed_create_rules(
        &app,
        Create {
            path: "/api/partner/v1/pay/customers".into(),
            route: "customers".into(),
            body: r#"{"email": "ann@example.com", "name": "Ann"}"#.into(),
            other: r#"{"email": "bob@example.com"}"#.into(),
            burst: r#"{"email": "cat@example.com"}"#.into(),
            refused: (r#"{"email": "nope"}"#.into(), "email"),
            status: 201,
            // The same body again (another key, or none) updates the customer it made.
            again: 200,
            again_creates: false,
            count: count_listed(&app, "/api/partner/v1/pay/customers"),
        },
    )
    .await;
    // A replay is the first answer, even once the customer changed since.
    let renamed = send(
        &app,
        &app.t,
        "/api/partner/v1/pay/customers",
        None,
        r#"{"email": "ann@example.com", "name": "Ann B."}"#,
    )
    .await;
    assert_eq!(renamed.status(), 200);
    let replay = send(
        &app,
        &app.t,
        "/api/partner/v1/pay/customers",
        Some("order-1"),
        r#"{"email": "ann@example.com", "name": "Ann"}"#,
    )
    .await;
    assert_eq!(replay.status(), 201);
    assert!(replayed(&replay));
    let v: serde_json::Value = replay.json().await.unwrap();
    assert_eq!(v["name"], "Ann");
}

/// An outgoing transfer of the main tenant: its activity id.
async fn outgoing(app: &TestApp, digit: char) -> String {
    let got = read(
        app.req(
            Method::POST,
            "/api/partner/v1/pay/sandbox/wallet-activity/outgoing",
        )
        .json(&json!({
            "chain": "eip155:8453",
            "txHash": format!("0x{}", digit.to_string().repeat(64)),
            "logIndex": 0,
            "asset": "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
            "amount": "42",
            "toAddress": "0x8ba1f109551bD432803012645Ac136ddd64DBA72",
        }))
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(got.0, 201, "{}", got.1);
    got.1["id"].as_str().unwrap().to_owned()
}

fn expense_body(activity: &str, description: &str, files: &[&str]) -> String {
    json!({
        "walletActivityEventId": activity,
        "counterparty": {"newVendor": {"email": "billing@hoster.example", "name": "Hoster"}},
        "category": "Hosting",
        "description": description,
        "fiatCurrency": "EUR",
        "fiatAmount": "115.20",
        "evidenceFileIds": files,
    })
    .to_string()
}

async fn activity_detail(app: &TestApp, t: &Tenant, id: &str) -> serde_json::Value {
    let got = read(
        app.as_tenant(
            t,
            Method::GET,
            &format!("/api/partner/v1/pay/bookkeeping/wallet-activity/{id}"),
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(got.0, 200, "{}", got.1);
    got.1
}

async fn expenses(app: TestApp) {
    let path = "/api/partner/v1/pay/bookkeeping/expenses/from-activity";
    let (a, b, c) = (
        outgoing(&app, 'a').await,
        outgoing(&app, 'b').await,
        outgoing(&app, 'c').await,
    );
    // What a save makes: a version (every save is one, a replay none).
    let ids = [a.clone(), b.clone(), c.clone()];
    let app_ref = &app;
    let count: Count<'_> = Box::new(move |t: Tenant| {
        let (ids, app) = (ids.clone(), app_ref);
        Box::pin(async move {
            let mut versions = 0;
            for id in &ids {
                let d = activity_detail(app, &t, id).await;
                versions += d["expense"]["versions"].as_array().map_or(0, Vec::len);
            }
            versions
        })
    });
    keyed_create_rules(
        &app,
        Create {
            path: path.into(),
            route: "bookkeeping/expenses/from-activity".into(),
            body: expense_body(&a, "Servers", &[]),
            other: expense_body(&b, "Domains", &[]),
            burst: expense_body(&c, "Backups", &[]),
            refused: (expense_body(&a, "x", &["file_1"]), "evidenceFileIds[0]"),
            status: 201,
            // The same body again (another key, or none) saves a version of the one expense.
            again: 200,
            again_creates: true,
            count,
        },
    )
    .await;

    // The answer stored before the commit is what the expense reads back as, evidence
    // files included.
    let d = outgoing(&app, 'd').await;
    let file = crate::books_files::upload(&app, "invoice.pdf", crate::books_files::PDF).await;
    assert_eq!(file.0, 201, "{}", file.1);
    let file_id = file.1["id"].as_str().unwrap().to_owned();
    let body = expense_body(&d, "Servers", &[&file_id]);
    let res = send(&app, &app.t, path, Some("with-file"), &body).await;
    assert_eq!(res.status(), 201);
    let saved: serde_json::Value = res.json().await.unwrap();
    assert_eq!(activity_detail(&app, &app.t, &d).await["expense"], saved);
    let replay = send(&app, &app.t, path, Some("with-file"), &body).await;
    assert!(replayed(&replay));
    assert_eq!(replay.json::<serde_json::Value>().await.unwrap(), saved);
    // ... and so is an update's (the versions so far and the new one).
    let update = expense_body(&d, "Servers and backups", &[&file_id]);
    let res = send(&app, &app.t, path, Some("update"), &update).await;
    assert_eq!(res.status(), 200);
    let saved: serde_json::Value = res.json().await.unwrap();
    assert_eq!(saved["versions"].as_array().unwrap().len(), 2);
    assert_eq!(activity_detail(&app, &app.t, &d).await["expense"], saved);
}
