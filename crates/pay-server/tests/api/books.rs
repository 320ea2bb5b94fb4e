//! Bookkeeping through real HTTP: wallet activity (a settled payment's incoming transfer, the
//! sandbox's outgoing one), `createBookkeepingExpenseFromActivity` (one expense per outgoing
//! transfer, also under 20 concurrent saves, every save versioned), contact roles and search,
//! credentials, scopes and tenancy.

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{assert_error, read, TestApp};
use crate::oauth_support::access_token;
use crate::on_both_backends;

const BASE_USDC: &str = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
const ACTIVITY: &str = "/api/partner/v1/pay/bookkeeping/wallet-activity";
const OUTGOING: &str = "/api/partner/v1/pay/sandbox/wallet-activity/outgoing";
const EXPENSE: &str = "/api/partner/v1/pay/bookkeeping/expenses/from-activity";
const SEARCH: &str = "/api/partner/v1/pay/contacts/search";
const VENDOR_WALLET: &str = "0x8ba1f109551bD432803012645Ac136ddd64DBA72";

fn transfer(hash_digit: char, amount: &str) -> Value {
    json!({
        "chain": "eip155:8453",
        "txHash": format!("0x{}", hash_digit.to_string().repeat(64)),
        "logIndex": 2,
        "asset": BASE_USDC,
        "amount": amount,
        "toAddress": VENDOR_WALLET,
    })
}

async fn send(
    app: &TestApp,
    m: Method,
    path: &str,
    body: Option<Value>,
) -> (reqwest::StatusCode, Value) {
    let mut r = app.req(m, path);
    if let Some(b) = body {
        r = r.json(&b);
    }
    read(r.send().await.unwrap()).await
}

/// Records an outgoing transfer of the main tenant (201 expected): the activity.
async fn outgoing(app: &TestApp, hash_digit: char) -> Value {
    let got = send(
        app,
        Method::POST,
        OUTGOING,
        Some(transfer(hash_digit, "125.5")),
    )
    .await;
    assert_eq!(got.0, 201, "{}", got.1);
    got.1
}

fn expense_body(by: (&str, &str), description: &str) -> Value {
    json!({
        by.0: by.1,
        "counterparty": {"newVendor": {"email": "billing@hoster.example", "name": "Hoster"}},
        "category": "Hosting",
        "description": description,
        "fiatCurrency": "EUR",
        "fiatAmount": "115.20",
        "taxAmount": "18.39",
        "evidenceFileIds": [],
    })
}

async fn incoming_and_outgoing_activity(app: TestApp) {
    // A payment completes: its settlement is an incoming activity linked to the session.
    let link = app
        .create_link(json!({"amount": "10", "skipQuoteAcceptance": true}))
        .await;
    let uid = link["uid"].as_str().unwrap();
    let pending = app.start_session(uid, BASE_USDC).await;
    assert_eq!(pending["status"], "pending", "{pending}");
    let done = send(
        &app,
        Method::POST,
        &format!("/api/partner/v1/pay/sandbox/payment-links/{uid}/events"),
        Some(json!({"type": "deposit", "amount": "10", "eventId": "dep-1"})),
    )
    .await;
    assert_eq!(done.1["status"], "complete", "{}", done.1);
    let list = send(&app, Method::GET, ACTIVITY, None).await;
    assert_eq!(list.0, 200, "{}", list.1);
    let items = list.1["data"].as_array().unwrap().clone();
    assert_eq!(items.len(), 1, "{}", list.1);
    let inc = &items[0];
    assert_eq!(inc["direction"], "incoming");
    assert_eq!(inc["paymentSessionId"], pending["id"]);
    assert_eq!(inc["asset"], BASE_USDC);
    assert_eq!(inc["amount"], pending["expectedBuyAmount"]);
    assert_eq!(inc["chain"], "eip155:8453");
    assert_eq!(inc["walletAddress"], pending["destinationAddress"]);
    let key = inc["key"].as_str().unwrap();
    assert_eq!(
        key,
        format!("eip155:8453:{}:0", inc["txHash"].as_str().unwrap())
    );
    // The processor event again: nothing new.
    let again = send(
        &app,
        Method::POST,
        &format!("/api/partner/v1/pay/sandbox/payment-links/{uid}/events"),
        Some(json!({"type": "deposit", "amount": "10", "eventId": "dep-1"})),
    )
    .await;
    assert_eq!(again.0, 200, "{}", again.1);
    let list = send(&app, Method::GET, ACTIVITY, None).await;
    assert_eq!(list.1["data"].as_array().unwrap().len(), 1);

    // The sandbox reports an outgoing transfer once: the same key again is the stored one.
    app.clock.advance_secs(60);
    let out = outgoing(&app, 'a').await;
    assert_eq!(out["direction"], "outgoing");
    assert_eq!(out["amount"], "125.5");
    assert_eq!(out["counterpartyAddress"], VENDOR_WALLET);
    assert_eq!(out["key"], format!("eip155:8453:0x{}:2", "a".repeat(64)));
    let same = send(&app, Method::POST, OUTGOING, Some(transfer('a', "125.5"))).await;
    assert_eq!(same.0, 200, "{}", same.1);
    assert_eq!(same.1["id"], out["id"]);
    // The upper-case spelling of the hash is the same movement.
    let upper = send(
        &app,
        Method::POST,
        OUTGOING,
        Some(json!({
            "chain": "eip155:8453", "txHash": format!("0x{}", "A".repeat(64)), "logIndex": 2,
            "asset": BASE_USDC, "amount": "125.5", "toAddress": VENDOR_WALLET,
        })),
    )
    .await;
    assert_eq!((upper.0.as_u16(), &upper.1["id"]), (200, &out["id"]));

    // Filters.
    let ids = |v: &Value| -> Vec<String> {
        v["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["id"].as_str().unwrap().to_owned())
            .collect()
    };
    let newest = send(&app, Method::GET, ACTIVITY, None).await;
    assert_eq!(
        ids(&newest.1),
        [out["id"].as_str().unwrap(), inc["id"].as_str().unwrap()]
    );
    let outs = send(
        &app,
        Method::GET,
        &format!("{ACTIVITY}?direction=outgoing"),
        None,
    )
    .await;
    assert_eq!(ids(&outs.1), [out["id"].as_str().unwrap()]);
    let open = send(
        &app,
        Method::GET,
        &format!("{ACTIVITY}?hasExpense=false"),
        None,
    )
    .await;
    assert_eq!(ids(&open.1), [out["id"].as_str().unwrap()]);
    let done = send(
        &app,
        Method::GET,
        &format!("{ACTIVITY}?hasExpense=true"),
        None,
    )
    .await;
    assert!(ids(&done.1).is_empty());
    let period = format!(
        "{ACTIVITY}?from={}&asset={}",
        out["occurredAt"].as_str().unwrap().replace(':', "%3A"),
        BASE_USDC.replace(':', "%3A").replace('/', "%2F")
    );
    let late = send(&app, Method::GET, &period, None).await;
    assert_eq!(ids(&late.1), [out["id"].as_str().unwrap()], "{}", late.1);
    let bad = send(
        &app,
        Method::GET,
        &format!("{ACTIVITY}?direction=sideways"),
        None,
    )
    .await;
    assert_error(&bad, 400, "validation_failed", Some("direction"));
    let unknown = send(&app, Method::GET, &format!("{ACTIVITY}?limit=5"), None).await;
    assert_error(&unknown, 400, "unknown_field", Some("limit"));

    // Detail by id and by key.
    let by_key = send(&app, Method::GET, &format!("{ACTIVITY}/{key}"), None).await;
    assert_eq!(by_key.0, 200, "{}", by_key.1);
    assert_eq!(by_key.1["id"], inc["id"]);
    assert_eq!(by_key.1["expense"], Value::Null);

    // Strict input on the sandbox route.
    let mut extra = transfer('b', "1");
    extra["memo"] = json!("x");
    let got = send(&app, Method::POST, OUTGOING, Some(extra)).await;
    assert_error(&got, 400, "unknown_field", Some("memo"));
    let got = send(
        &app,
        Method::POST,
        OUTGOING,
        Some(transfer('b', "0.0000001")),
    )
    .await;
    assert_error(&got, 400, "validation_failed", Some("amount"));

    // Another company sees none of it.
    let other = app.new_tenant("Other Co").await;
    let theirs = read(
        app.as_tenant(&other, Method::GET, ACTIVITY)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(theirs.1["data"], json!([]));
    let got = read(
        app.as_tenant(
            &other,
            Method::GET,
            &format!("{ACTIVITY}/{}", out["id"].as_str().unwrap()),
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_error(&got, 404, "not_found", None);
}

async fn one_expense_per_outgoing_transfer(app: TestApp) {
    let out = outgoing(&app, 'c').await;
    let id = out["id"].as_str().unwrap();
    let key = out["key"].as_str().unwrap();
    let created = send(
        &app,
        Method::POST,
        EXPENSE,
        Some(expense_body(("walletActivityEventId", id), "Servers")),
    )
    .await;
    assert_eq!(created.0, 201, "{}", created.1);
    let e = &created.1;
    assert_eq!(e["walletActivityEventId"], id);
    assert_eq!(e["counterparty"]["role"], "vendor");
    assert_eq!(e["counterparty"]["name"], "Hoster");
    assert_eq!(
        (e["fiatAmount"].as_str(), e["taxAmount"].as_str()),
        (Some("115.20"), Some("18.39"))
    );
    assert_eq!(e["version"], 1);
    assert_eq!(e["evidenceFileIds"], json!([]));
    let v1 = &e["versions"][0];
    assert!(
        v1["savedBy"].as_str().unwrap().starts_with("api_key:"),
        "{v1}"
    );
    assert_eq!(
        v1["changes"].as_array().unwrap().len(),
        6,
        "every given field from nothing (no notes)"
    );

    // Again by key with the vendor as an existing contact: the same expense, updated.
    app.clock.advance_secs(10);
    let vendor = e["counterparty"]["id"].as_str().unwrap();
    let updated = send(
        &app,
        Method::POST,
        EXPENSE,
        Some(json!({
            "walletActivityEventKey": key,
            "counterparty": {"contactId": vendor},
            "category": "Hosting",
            "description": "Servers, November",
            "notes": "Paid late",
        })),
    )
    .await;
    assert_eq!(updated.0, 200, "{}", updated.1);
    let u = &updated.1;
    assert_eq!(u["id"], e["id"]);
    assert_eq!(u["version"], 2);
    assert_eq!(u["fiatAmount"], Value::Null);
    let v2 = &u["versions"][1];
    let changed: Vec<&str> = v2["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["field"].as_str().unwrap())
        .collect();
    assert_eq!(
        changed,
        [
            "description",
            "notes",
            "fiatCurrency",
            "fiatAmount",
            "taxAmount"
        ]
    );
    assert_eq!(
        v2["changes"][0],
        json!({"field": "description", "from": "Servers", "to": "Servers, November"})
    );
    assert!(v2["savedAt"].as_str().unwrap() > v1["savedAt"].as_str().unwrap());

    // The detail: the expense, its history, and the vendor suggested by its known wallet.
    let detail = send(&app, Method::GET, &format!("{ACTIVITY}/{id}"), None).await;
    assert_eq!(detail.1["hasExpense"], true);
    assert_eq!(detail.1["expense"]["versions"].as_array().unwrap().len(), 2);
    assert_eq!(detail.1["suggestedCounterparties"][0]["id"], vendor);
    // A new transfer to the same address is suggested the same vendor.
    let next = outgoing(&app, 'd').await;
    let detail = send(
        &app,
        Method::GET,
        &format!("{ACTIVITY}/{}", next["id"].as_str().unwrap()),
        None,
    )
    .await;
    assert_eq!(
        detail.1["suggestedCounterparties"][0]["id"], vendor,
        "{}",
        detail.1
    );
    assert_eq!(detail.1["expense"], Value::Null);

    // Refusals: both references, none, a file entry that is no id (linking files:
    // books_files.rs), an incoming activity, unknown ids and contacts.
    let mut both = expense_body(("walletActivityEventId", id), "x");
    both["walletActivityEventKey"] = json!(key);
    let got = send(&app, Method::POST, EXPENSE, Some(both)).await;
    assert_error(
        &got,
        400,
        "validation_failed",
        Some("walletActivityEventId"),
    );
    let mut files = expense_body(("walletActivityEventId", id), "x");
    files["evidenceFileIds"] = json!(["file_1"]);
    let got = send(&app, Method::POST, EXPENSE, Some(files)).await;
    assert_error(&got, 400, "validation_failed", Some("evidenceFileIds[0]"));
    let mut unknown = expense_body(("walletActivityEventId", id), "x");
    unknown["amount"] = json!("1");
    let got = send(&app, Method::POST, EXPENSE, Some(unknown)).await;
    assert_error(&got, 400, "unknown_field", Some("amount"));
    let mut nobody = expense_body(("walletActivityEventId", id), "x");
    nobody["counterparty"] = json!({"contactId": "cus_AAAAAAAAAAAAAAAAAAAAAAAA"});
    let got = send(&app, Method::POST, EXPENSE, Some(nobody)).await;
    assert_error(&got, 404, "not_found", None);
    let link = app
        .create_link(json!({"amount": "10", "skipQuoteAcceptance": true}))
        .await;
    let uid = link["uid"].as_str().unwrap();
    app.start_session(uid, BASE_USDC).await;
    send(
        &app,
        Method::POST,
        &format!("/api/partner/v1/pay/sandbox/payment-links/{uid}/events"),
        Some(json!({"type": "deposit", "amount": "10"})),
    )
    .await;
    let incoming = send(
        &app,
        Method::GET,
        &format!("{ACTIVITY}?direction=incoming"),
        None,
    )
    .await;
    let inc_id = incoming.1["data"][0]["id"].as_str().unwrap().to_owned();
    let got = send(
        &app,
        Method::POST,
        EXPENSE,
        Some(expense_body(("walletActivityEventId", &inc_id), "x")),
    )
    .await;
    assert_error(&got, 404, "not_found", None);
    let other = app.new_tenant("Other Co").await;
    let got = read(
        app.as_tenant(&other, Method::POST, EXPENSE)
            .json(&expense_body(("walletActivityEventKey", key), "theirs"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 404, "not_found", None);
    let after = send(&app, Method::GET, &format!("{ACTIVITY}/{id}"), None).await;
    assert_eq!(
        after.1["expense"]["version"], 2,
        "nothing refused was saved"
    );

    // Roles: the vendor's e-mail upserted as a customer makes one contact with both roles,
    // found by name, e-mail, clientId and wallet address.
    let cust = send(
        &app,
        Method::POST,
        "/api/partner/v1/pay/customers",
        Some(json!({"email": "Billing@Hoster.example", "clientId": "HOST-7"})),
    )
    .await;
    assert_eq!(
        (cust.0.as_u16(), &cust.1["id"]),
        (200, &json!(vendor)),
        "{}",
        cust.1
    );
    for q in [
        "hoster",
        "BILLING@",
        "host-7",
        &VENDOR_WALLET.to_lowercase(),
    ] {
        let got = send(
            &app,
            Method::GET,
            &format!("{SEARCH}?q={q}&role=vendor"),
            None,
        )
        .await;
        assert_eq!(got.0, 200, "{}", got.1);
        assert_eq!(got.1["data"].as_array().unwrap().len(), 1, "{q}: {}", got.1);
        assert_eq!(got.1["data"][0]["role"], "both");
        assert_eq!(got.1["data"][0]["walletAddresses"], json!([VENDOR_WALLET]));
    }
    let none = send(&app, Method::GET, &format!("{SEARCH}?q=%25"), None).await;
    assert_eq!(
        none.1["data"],
        json!([]),
        "a LIKE wildcard is a plain character"
    );
    let got = send(&app, Method::GET, &format!("{SEARCH}?q=a&role=both"), None).await;
    assert_error(&got, 400, "validation_failed", Some("role"));
    let theirs = read(
        app.as_tenant(&other, Method::GET, &format!("{SEARCH}?q=hoster"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(theirs.1["data"], json!([]));
}

async fn concurrent_saves_make_one_expense(app: TestApp) {
    let out = outgoing(&app, 'e').await;
    let id = out["id"].as_str().unwrap().to_owned();
    let key = out["key"].as_str().unwrap().to_owned();
    let saves = (0..20).map(|i| {
        let by = if i % 2 == 0 {
            ("walletActivityEventId", id.clone())
        } else {
            ("walletActivityEventKey", key.clone())
        };
        let body = expense_body((by.0, &by.1), &format!("save {i}"));
        let req = app.req(Method::POST, EXPENSE).json(&body);
        async move { read(req.send().await.unwrap()).await }
    });
    let results = futures_util::future::join_all(saves).await;
    let created = results.iter().filter(|r| r.0 == 201).count();
    assert!(
        results.iter().all(|r| r.0 == 201 || r.0 == 200),
        "{results:?}"
    );
    assert_eq!(created, 1, "exactly one save creates");
    let detail = send(&app, Method::GET, &format!("{ACTIVITY}/{id}"), None).await;
    let e = &detail.1["expense"];
    assert_eq!(e["version"], 20, "{e}");
    let versions = e["versions"].as_array().unwrap();
    assert_eq!(versions.len(), 20);
    let mut seen = std::collections::BTreeSet::new();
    let mut previous: Option<String> = None;
    for (n, v) in versions.iter().enumerate() {
        assert_eq!(v["version"], n as i64 + 1);
        let d = v["changes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["field"] == "description")
            .expect("each save changes the description");
        assert_eq!(
            d["from"].as_str().map(str::to_owned),
            previous,
            "the history is a chain"
        );
        let to = d["to"].as_str().unwrap().to_owned();
        assert!(seen.insert(to.clone()), "each save once");
        previous = Some(to);
    }
    assert_eq!(seen.len(), 20);
    assert_eq!(
        e["description"].as_str().map(str::to_owned),
        previous,
        "the last write's fields"
    );
    // Every save answered with the expense as it left it.
    let mut answered: Vec<i64> = results
        .iter()
        .map(|r| r.1["version"].as_i64().unwrap())
        .collect();
    answered.sort();
    assert_eq!(answered.last(), Some(&20));
    let list = send(
        &app,
        Method::GET,
        &format!("{ACTIVITY}?hasExpense=true"),
        None,
    )
    .await;
    assert_eq!(list.1["data"].as_array().unwrap().len(), 1);
}

async fn credentials_and_scopes(app: TestApp) {
    let out = outgoing(&app, 'f').await;
    let id = out["id"].as_str().unwrap();
    let body = expense_body(("walletActivityEventId", id), "Servers");
    let detail = format!("{ACTIVITY}/{id}");
    let routes: Vec<(Method, String, Option<Value>)> = vec![
        (Method::GET, ACTIVITY.to_owned(), None),
        (Method::GET, detail.clone(), None),
        (Method::GET, format!("{SEARCH}?q=a"), None),
        (Method::POST, OUTGOING.to_owned(), Some(transfer('9', "1"))),
        (Method::POST, EXPENSE.to_owned(), Some(body.clone())),
    ];
    for (m, path, b) in &routes {
        let mut r = app.anon(m.clone(), path);
        if let Some(b) = b {
            r = r.json(b);
        }
        let got = read(r.send().await.unwrap()).await;
        assert_eq!(got.0, 401, "{m} {path}: no credentials");
        let mut r = app
            .anon(m.clone(), path)
            .header("x-svc-key-id", &app.t.key_id)
            .header("x-svc-key-secret", "mksec_wrong");
        if let Some(b) = b {
            r = r.json(b);
        }
        let got = read(r.send().await.unwrap()).await;
        assert_eq!(
            (got.0.as_u16(), got.1["error"].as_str()),
            (401, Some("Invalid pay API credentials")),
            "{m} {path}: wrong secret"
        );
    }
    // A member without settings.manage reads in a session and cannot write (403).
    let (email, password) = app.add_member(&app.t, "member").await;
    let member = app.login(&email, &password).await;
    for (m, path, b) in &routes {
        let mut r = app.in_session(&member, m.clone(), path);
        if let Some(b) = b {
            r = r.json(b);
        }
        let got = read(r.send().await.unwrap()).await;
        if *m == Method::GET {
            assert_eq!(got.0, 200, "{m} {path}: {}", got.1);
        } else {
            assert_error(&got, 403, "forbidden", None);
        }
    }
    // OAuth: another product's scope reads none of it; the customers read scope searches
    // contacts only; the bookkeeping read scope reads and cannot write; write saves.
    let refused = |got: &(reqwest::StatusCode, Value)| {
        (got.0.as_u16(), got.1["error"].as_str().map(str::to_owned))
            == (401, Some("Invalid pay API credentials".to_owned()))
    };
    let as_grant = |token: &str, m: &Method, path: &str, b: &Option<Value>| {
        let mut r = app.anon(m.clone(), path).bearer_auth(token);
        if let Some(b) = b {
            r = r.json(b);
        }
        r
    };
    let links = access_token(&app, "pay:payment-links:read").await;
    for (m, path, b) in &routes {
        let got = read(as_grant(&links, m, path, b).send().await.unwrap()).await;
        assert!(refused(&got), "{m} {path}: {}", got.1);
    }
    let customers = access_token(&app, "pay:customers:read").await;
    let got = read(
        as_grant(&customers, &Method::GET, &format!("{SEARCH}?q=a"), &None)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(got.0, 200, "{}", got.1);
    let got = read(
        as_grant(&customers, &Method::GET, ACTIVITY, &None)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert!(refused(&got), "{}", got.1);
    let reader = access_token(&app, "pay:bookkeeping:read").await;
    for (m, path, b) in &routes {
        let got = read(as_grant(&reader, m, path, b).send().await.unwrap()).await;
        if *m == Method::GET {
            assert_eq!(got.0, 200, "{m} {path}: {}", got.1);
        } else {
            assert!(refused(&got), "{m} {path}: {}", got.1);
        }
    }
    let writer = access_token(&app, "pay:bookkeeping:write").await;
    let got = read(
        as_grant(&writer, &Method::POST, EXPENSE, &Some(body))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(got.0, 201, "{}", got.1);
    assert!(got.1["versions"][0]["savedBy"]
        .as_str()
        .unwrap()
        .starts_with("grant:"));
}

on_both_backends!(
    incoming_and_outgoing_activity,
    one_expense_per_outgoing_transfer,
    concurrent_saves_make_one_expense,
    credentials_and_scopes,
);
