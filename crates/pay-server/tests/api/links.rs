//! Payment links over HTTP: create rules, list, detail, status moves, tenancy.

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{assert_error, read, TestApp};
use crate::on_both_backends;

const LINKS: &str = "/api/partner/v1/pay/payment-links";
const BASE_USDC: &str = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
const ETH_USDT: &str = "eip155:1/erc20:0xdAC17F958D2ee523a2206206994597C13D831ec7";

pub fn millis(ts: &str) -> i64 {
    let dt =
        time::OffsetDateTime::parse(ts, &time::format_description::well_known::Rfc3339).unwrap();
    (dt.unix_timestamp_nanos() / 1_000_000) as i64
}

fn is_rfc3339_millis_utc(ts: &str) -> bool {
    ts.len() == 24 && ts.ends_with('Z') && ts.as_bytes()[19] == b'.' && millis(ts) > 0
}

async fn post(app: &TestApp, body: Value) -> (reqwest::StatusCode, Value) {
    read(
        app.req(Method::POST, LINKS)
            .json(&body)
            .send()
            .await
            .unwrap(),
    )
    .await
}

async fn create_happy_path(app: TestApp) {
    let link = app
        .create_link(json!({
            "title": "Order 42",
            "description": "Two mugs",
            "amount": "12.50",
            "fiatCurrency": "USD",
            "orderId": "42",
            "customerEmail": "payer@example.com",
            "clientId": "cus_1",
            "successUrl": "https://shop.example/ok",
            "failureUrl": "https://shop.example/fail",
            "returnUrl": "https://shop.example/back",
            "invoicePdfUrl": "https://shop.example/inv.pdf",
            "feePaidBy": "client",
            "skipQuoteAcceptance": true,
            "metadata": {"cart": [1, 2], "note": "gift"}
        }))
        .await;
    assert_eq!(link["status"], "active");
    assert_eq!(link["id"].as_str().unwrap().len(), 36);
    let uid = link["uid"].as_str().unwrap();
    assert_eq!(uid.len(), 22);
    assert_eq!(
        link["publicUrl"],
        format!("https://pay.test.example/pay/{uid}")
    );
    let p = &link["payload"];
    assert_eq!(p["amount"], "12.50", "echoed exactly");
    assert_eq!(p["title"], "Order 42");
    assert_eq!(p["currency"], "USDC");
    assert_eq!(p["asset"], BASE_USDC);
    assert_eq!(p["fiatCurrency"], "USD");
    assert_eq!(p["feePaidBy"], "client");
    assert_eq!(p["skipQuoteAcceptance"], true);
    assert_eq!(p["metadata"], json!({"cart": [1, 2], "note": "gift"}));
    assert_eq!(p["runtimeMode"], "merchant_target_net_v2");
    assert_eq!(p["billingVersion"], "v2");
    assert_eq!(p["merchantName"], "Acme Goods");
    assert_eq!(p["merchantPaymentLinkTheme"], "system");
    assert_eq!(p["expirationTime"], "24h");
    let created = link["created_at"].as_str().unwrap();
    assert!(is_rfc3339_millis_utc(created), "{created}");
    assert_eq!(link["updated_at"], link["created_at"]);
    let expires = link["expires_at"].as_str().unwrap();
    assert_eq!(millis(expires) - millis(created), 24 * 3600 * 1000);
}

async fn create_minimal_uses_defaults(app: TestApp) {
    let link = app.create_link(json!({"amount": "1"})).await;
    let p = &link["payload"];
    assert_eq!(p["asset"], BASE_USDC);
    assert!(p.get("title").is_none());
    assert!(p.get("feePaidBy").is_none(), "no override unless given");
    assert!(p.get("skipQuoteAcceptance").is_none());
}

async fn expiration_times(app: TestApp) {
    for (e, ms) in [
        ("15m", 900_000i64),
        ("1h", 3_600_000),
        ("12h", 43_200_000),
        ("72h", 259_200_000),
    ] {
        let link = app
            .create_link(json!({"amount": "1", "expirationTime": e}))
            .await;
        let d = millis(link["expires_at"].as_str().unwrap())
            - millis(link["created_at"].as_str().unwrap());
        assert_eq!(d, ms, "{e}");
    }
    let never = app
        .create_link(json!({"amount": "1", "expirationTime": "never"}))
        .await;
    assert_eq!(never["expires_at"], Value::Null);
}

async fn create_validation_rules(app: TestApp) {
    let big_meta: serde_json::Map<String, Value> = [("k".to_string(), json!("x".repeat(8200)))]
        .into_iter()
        .collect();
    let many_keys: serde_json::Map<String, Value> =
        (0..51).map(|i| (format!("k{i}"), json!(i))).collect();
    let cases: Vec<(Value, &str)> = vec![
        (json!({}), "amount"),
        (json!({"amount": 12.5}), "amount"),
        (json!({"amount": null}), "amount"),
        (json!({"amount": "0"}), "amount"),
        (json!({"amount": "-1"}), "amount"),
        (json!({"amount": "1e3"}), "amount"),
        (json!({"amount": "1.1234567"}), "amount"),
        (json!({"amount": "10.001", "fiatCurrency": "USD"}), "amount"),
        (json!({"amount": "1", "title": "t".repeat(201)}), "title"),
        (json!({"amount": "1", "title": 5}), "title"),
        (
            json!({"amount": "1", "description": "d".repeat(2001)}),
            "description",
        ),
        (
            json!({"amount": "1", "orderId": "o".repeat(201)}),
            "orderId",
        ),
        (
            json!({"amount": "1", "customerEmail": "not-an-email"}),
            "customerEmail",
        ),
        (
            json!({"amount": "1", "successUrl": "ftp://x.example"}),
            "successUrl",
        ),
        (
            json!({"amount": "1", "failureUrl": "/relative"}),
            "failureUrl",
        ),
        (
            json!({"amount": "1", "returnUrl": "https://u:p@x.example/"}),
            "returnUrl",
        ),
        (
            json!({"amount": "1", "invoicePdfUrl": format!("https://x.example/{}", "a".repeat(2048))}),
            "invoicePdfUrl",
        ),
        (
            json!({"amount": "1", "expirationTime": "2h"}),
            "expirationTime",
        ),
        (json!({"amount": "1", "feePaidBy": "nobody"}), "feePaidBy"),
        (
            json!({"amount": "1", "fiatCurrency": "XXX"}),
            "fiatCurrency",
        ),
        (
            json!({"amount": "1", "skipQuoteAcceptance": "yes"}),
            "skipQuoteAcceptance",
        ),
        (json!({"amount": "1", "metadata": [1]}), "metadata"),
        (json!({"amount": "1", "metadata": big_meta}), "metadata"),
        (json!({"amount": "1", "metadata": many_keys}), "metadata"),
        (
            json!({"amount": "1", "asset": ETH_USDT, "currency": "USDC"}),
            "currency",
        ),
    ];
    for (body, field) in cases {
        let got = post(&app, body.clone()).await;
        assert_error(&got, 400, "validation_failed", Some(field));
    }
    // Nothing was created by any of them.
    let list = read(app.req(Method::GET, LINKS).send().await.unwrap()).await;
    assert_eq!(list.1["data"].as_array().unwrap().len(), 0);
}

/// Amounts are written without leading zeros wherever one is read: the partner create, the
/// anonymous create, the gateway form and the sandbox deposit all refuse `"007"` on `amount`.
async fn amounts_refuse_leading_zeros(app: TestApp) {
    for bad in ["007", "00.5", "01"] {
        let got = post(&app, json!({ "amount": bad })).await;
        assert_error(&got, 400, "validation_failed", Some("amount"));
        assert!(
            got.1["error"]
                .as_str()
                .unwrap()
                .contains("must not start with a zero"),
            "{bad}: {}",
            got.1
        );
        let anonymous = json!({
            "amount": bad,
            "settlement": {"priorities": [{
                "asset": "eip155:1/slip44:60",
                "address": "0x52908400098527886E0F7030069857D2E4169EE7"
            }]}
        });
        let got = read(
            app.anon(Method::POST, "/api/public/anonymous-payment-links")
                .json(&anonymous)
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_error(&got, 400, "validation_failed", Some("amount"));
    }
    // "0.5" stays the way to write half, echoed as given.
    let half = post(&app, json!({"amount": "0.5", "skipQuoteAcceptance": true})).await;
    assert_eq!(half.0, 201, "{}", half.1);
    assert_eq!(half.1["payload"]["amount"], "0.5");
    // A sandbox deposit's amount follows the same rule.
    let uid = half.1["uid"].as_str().unwrap().to_owned();
    app.start_session(
        &uid,
        "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
    )
    .await;
    let events = format!("/api/partner/v1/pay/sandbox/payment-links/{uid}/events");
    for bad in ["007", "00.5", "-0"] {
        let got = read(
            app.req(Method::POST, &events)
                .json(&json!({"type": "deposit", "amount": bad}))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_error(&got, 400, "validation_failed", Some("amount"));
    }
    let got = read(
        app.req(Method::POST, &events)
            .json(&json!({"type": "deposit", "amount": "0.5"}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(got.0, 200, "{}", got.1);
    assert_eq!(got.1["status"], "complete");
    // Nothing but the "0.5" link was created.
    let list = read(app.req(Method::GET, LINKS).send().await.unwrap()).await;
    assert_eq!(list.1["data"].as_array().unwrap().len(), 1);
}

async fn create_refuses_unknown_and_server_owned_fields(app: TestApp) {
    for field in [
        "amout",
        "runtimeMode",
        "billingVersion",
        "merchantName",
        "merchantLogoUrl",
        "status",
        "companyId",
    ] {
        let got = post(&app, json!({"amount": "1", field: "x"})).await;
        assert_error(&got, 400, "unknown_field", Some(field));
    }
}

async fn create_refuses_bad_bodies(app: TestApp) {
    let send = |body: &'static str, ct: Option<&'static str>| {
        let mut rb = app.req(Method::POST, LINKS).body(body);
        if let Some(ct) = ct {
            rb = rb.header("content-type", ct);
        }
        rb.send()
    };
    assert_error(
        &read(send("{", Some("application/json")).await.unwrap()).await,
        400,
        "invalid_json",
        None,
    );
    assert_error(
        &read(send("[1]", Some("application/json")).await.unwrap()).await,
        400,
        "invalid_json",
        None,
    );
    assert_error(
        &read(send("\"x\"", Some("application/json")).await.unwrap()).await,
        400,
        "invalid_json",
        None,
    );
    assert_error(
        &read(
            send("{\"amount\":\"1\"}", Some("text/plain"))
                .await
                .unwrap(),
        )
        .await,
        415,
        "unsupported_media_type",
        None,
    );
    assert_error(
        &read(send("{\"amount\":\"1\"}", None).await.unwrap()).await,
        415,
        "unsupported_media_type",
        None,
    );
    // With charset: fine.
    let ok = read(
        send(
            "{\"amount\":\"1\"}",
            Some("application/json; charset=utf-8"),
        )
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(ok.0, 201);
    let huge = format!(
        "{{\"amount\":\"1\",\"description\":\"{}\"}}",
        "x".repeat(70 * 1024)
    );
    let got = read(
        app.req(Method::POST, LINKS)
            .header("content-type", "application/json")
            .body(huge)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 413, "payload_too_large", None);
}

async fn asset_resolution(app: TestApp) {
    let got = post(
        &app,
        json!({"amount": "1", "asset": "eip155:1/erc20:0xdead"}),
    )
    .await;
    assert_error(&got, 400, "invalid_destination_asset", Some("asset"));
    let got = post(&app, json!({"amount": "1", "currency": "DOGE"})).await;
    assert_error(&got, 400, "invalid_destination_asset", Some("currency"));
    // USDT exists on two chains and the default (USDC on Base) does not settle it.
    let got = post(&app, json!({"amount": "1", "currency": "USDT"})).await;
    assert_error(&got, 400, "ambiguous_currency", Some("currency"));
    // USDC is on four chains, but the default is a USDC.
    let l = app
        .create_link(json!({"amount": "1", "currency": "USDC"}))
        .await;
    assert_eq!(l["payload"]["asset"], BASE_USDC);
    // A unique symbol, with the asset's 18 decimals.
    let l = app
        .create_link(json!({"amount": "0.000000000000000001", "currency": "ETH"}))
        .await;
    assert_eq!(l["payload"]["asset"], "eip155:1/slip44:60");
    assert_eq!(l["payload"]["amount"], "0.000000000000000001");
    let l = app
        .create_link(json!({"amount": "2", "asset": ETH_USDT}))
        .await;
    assert_eq!(l["payload"]["currency"], "USDT");
    // Without a default and without asset or currency.
    let r = read(
        app.req(Method::PUT, "/api/partner/v1/pay/settings")
            .json(&json!({"defaultDestinationAsset": null}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(r.0, 200);
    let got = post(&app, json!({"amount": "1"})).await;
    assert_error(&got, 400, "missing_destination_asset", None);
    let got = post(&app, json!({"amount": "1", "currency": "USDC"})).await;
    assert_error(&got, 400, "ambiguous_currency", Some("currency"));
}

async fn list_newest_first_capped_at_200(app: TestApp) {
    let empty = read(app.req(Method::GET, LINKS).send().await.unwrap()).await;
    assert_eq!(empty.0, 200);
    assert_eq!(empty.1, json!({"data": []}));
    // 203 links straight through the use case (HTTP create is covered above).
    let pay = app.pay.clone();
    let (kid, ksec) = (app.t.key_id.clone(), app.t.key_secret.clone());
    let uids: Vec<String> = tokio::task::spawn_blocking(move || {
        let p = pay
            .tenancy()
            .authenticate_api_key(Some(&kid), Some(&ksec))
            .unwrap();
        (0..203)
            .map(|i| {
                let input = pay_domain::links::CreateLinkInput {
                    amount: format!("{}.00", i + 1),
                    ..Default::default()
                };
                pay.links().create_link(&p, input).unwrap().uid.to_string()
            })
            .collect()
    })
    .await
    .unwrap();
    let list = read(app.req(Method::GET, LINKS).send().await.unwrap()).await;
    assert_eq!(list.0, 200);
    let data = list.1["data"].as_array().unwrap();
    assert_eq!(data.len(), 200);
    let got: Vec<&str> = data.iter().map(|l| l["uid"].as_str().unwrap()).collect();
    let want: Vec<&str> = uids.iter().rev().take(200).map(String::as_str).collect();
    assert_eq!(got, want, "newest first, the three oldest dropped");
    assert!(data.iter().all(|l| l["publicUrl"]
        .as_str()
        .unwrap()
        .ends_with(l["uid"].as_str().unwrap())));
}

async fn list_and_detail_are_company_scoped(app: TestApp) {
    let mine = app.create_link(json!({"amount": "1"})).await;
    let other = app.new_tenant("Other Co").await;
    let theirs = read(
        app.as_tenant(&other, Method::POST, LINKS)
            .json(&json!({"amount": "2"}))
            .send()
            .await
            .unwrap(),
    )
    .await
    .1;
    let list = read(app.req(Method::GET, LINKS).send().await.unwrap())
        .await
        .1;
    let uids: Vec<&str> = list["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["uid"].as_str().unwrap())
        .collect();
    assert_eq!(uids, vec![mine["uid"].as_str().unwrap()]);
    let path = format!("{LINKS}/{}", theirs["uid"].as_str().unwrap());
    assert_error(
        &read(app.req(Method::GET, &path).send().await.unwrap()).await,
        404,
        "not_found",
        None,
    );
    let got = read(
        app.req(Method::PATCH, &path)
            .json(&json!({"status": "paused"}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 404, "not_found", None);
    // Untouched for its owner.
    let theirs_now = read(
        app.as_tenant(&other, Method::GET, &path)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(theirs_now.1["status"], "active");
}

async fn detail_has_session_and_timeline(app: TestApp) {
    let link = app
        .create_link(json!({"amount": "3.5", "title": "Detail"}))
        .await;
    let path = format!("{LINKS}/{}", link["uid"].as_str().unwrap());
    let got = read(app.req(Method::GET, &path).send().await.unwrap()).await;
    assert_eq!(got.0, 200);
    assert_eq!(got.1["latestSession"], Value::Null);
    assert_eq!(got.1["timeline"], json!([]));
    assert_eq!(got.1["uid"], link["uid"]);
    assert_eq!(got.1["payload"], link["payload"]);
    assert_eq!(got.1["publicUrl"], link["publicUrl"]);
    for missing in [
        "AAAAAAAAAAAAAAAAAAAAAA",
        "short",
        "has-dash-xxxxxxxxxxxxxxx",
    ] {
        let got = read(
            app.req(Method::GET, &format!("{LINKS}/{missing}"))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_error(&got, 404, "not_found", None);
    }
}

async fn status_transitions(app: TestApp) {
    let link = app.create_link(json!({"amount": "1"})).await;
    let path = format!("{LINKS}/{}", link["uid"].as_str().unwrap());
    let patch = |status: &'static str| {
        app.req(Method::PATCH, &path)
            .json(&json!({ "status": status }))
            .send()
    };
    // Allowed moves and no-ops, in an order that visits each.
    for (to, expect) in [
        ("active", "active"),
        ("paused", "paused"),
        ("paused", "paused"),
        ("active", "active"),
        ("paused", "paused"),
        ("archived", "archived"),
        ("archived", "archived"),
    ] {
        let got = read(patch(to).await.unwrap()).await;
        assert_eq!(got.0, 200, "{to}: {}", got.1);
        assert_eq!(got.1["status"], expect);
        assert_eq!(got.1["publicUrl"], link["publicUrl"]);
    }
    // Nothing leaves archived.
    for to in ["active", "paused"] {
        let got = read(patch(to).await.unwrap()).await;
        assert_error(&got, 409, "invalid_status_transition", Some("status"));
    }
    let detail = read(app.req(Method::GET, &path).send().await.unwrap())
        .await
        .1;
    assert_eq!(detail["status"], "archived");
    assert!(
        millis(detail["updated_at"].as_str().unwrap())
            >= millis(detail["created_at"].as_str().unwrap())
    );
    // Active straight to archived.
    let l2 = app.create_link(json!({"amount": "1"})).await;
    let p2 = format!("{LINKS}/{}", l2["uid"].as_str().unwrap());
    let got = read(
        app.req(Method::PATCH, &p2)
            .json(&json!({"status": "archived"}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(got.1["status"], "archived");
}

async fn status_body_rules(app: TestApp) {
    let link = app.create_link(json!({"amount": "1"})).await;
    let path = format!("{LINKS}/{}", link["uid"].as_str().unwrap());
    let send = |b: Value| app.req(Method::PATCH, &path).json(&b).send();
    assert_error(
        &read(send(json!({"status": "deleted"})).await.unwrap()).await,
        400,
        "validation_failed",
        Some("status"),
    );
    assert_error(
        &read(send(json!({"status": 1})).await.unwrap()).await,
        400,
        "validation_failed",
        Some("status"),
    );
    assert_error(
        &read(send(json!({})).await.unwrap()).await,
        400,
        "validation_failed",
        Some("status"),
    );
    assert_error(
        &read(
            send(json!({"status": "paused", "title": "x"}))
                .await
                .unwrap(),
        )
        .await,
        400,
        "unknown_field",
        Some("title"),
    );
    let still = read(app.req(Method::GET, &path).send().await.unwrap())
        .await
        .1;
    assert_eq!(still["status"], "active");
}

/// With a verified payment-link domain, every `publicUrl` the API answers for the company's
/// links (create, list, detail, status change) is on it, old links included; another company
/// stays on the public payment site.
async fn public_url_on_the_verified_domain(app: TestApp) {
    let old = app.create_link(json!({"amount": "1"})).await;
    let old_uid = old["uid"].as_str().unwrap().to_owned();
    assert_eq!(
        old["publicUrl"],
        format!("https://pay.test.example/pay/{old_uid}")
    );
    app.verify_domain(&app.t.company_id, "pay.acme.example")
        .await;
    let on_domain = |uid: &str| format!("https://pay.acme.example/pay/{uid}");

    let new = app.create_link(json!({"amount": "2"})).await;
    let uid = new["uid"].as_str().unwrap().to_owned();
    assert_eq!(new["publicUrl"], on_domain(&uid));
    let list = read(
        app.req(Method::GET, "/api/partner/v1/pay/payment-links")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(list.0, 200);
    let data = list.1["data"].as_array().unwrap();
    assert_eq!(data.len(), 2);
    for l in data {
        assert_eq!(l["publicUrl"], on_domain(l["uid"].as_str().unwrap()), "{l}");
    }
    let detail = read(
        app.req(
            Method::GET,
            &format!("/api/partner/v1/pay/payment-links/{old_uid}"),
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(detail.0, 200);
    assert_eq!(detail.1["publicUrl"], on_domain(&old_uid));
    let paused = read(
        app.req(
            Method::PATCH,
            &format!("/api/partner/v1/pay/payment-links/{uid}"),
        )
        .json(&json!({"status": "paused"}))
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(paused.0, 200, "{}", paused.1);
    assert_eq!(paused.1["publicUrl"], on_domain(&uid));

    let other = app.new_tenant("Beta").await;
    let theirs = read(
        app.as_tenant(&other, Method::POST, "/api/partner/v1/pay/payment-links")
            .json(&json!({"amount": "3"}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(theirs.0, 201);
    assert_eq!(
        theirs.1["publicUrl"],
        format!(
            "https://pay.test.example/pay/{}",
            theirs.1["uid"].as_str().unwrap()
        )
    );
}

on_both_backends!(
    public_url_on_the_verified_domain,
    create_happy_path,
    create_minimal_uses_defaults,
    expiration_times,
    create_validation_rules,
    amounts_refuse_leading_zeros,
    create_refuses_unknown_and_server_owned_fields,
    create_refuses_bad_bodies,
    asset_resolution,
    list_newest_first_capped_at_200,
    list_and_detail_are_company_scoped,
    detail_has_session_and_timeline,
    status_transitions,
    status_body_rules,
);
