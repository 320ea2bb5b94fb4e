//! Settings (partial PUT) and destination assets.

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{assert_error, read, TestApp};
use crate::on_both_backends;

const SETTINGS: &str = "/api/partner/v1/pay/settings";
const ASSETS: &str = "/api/partner/v1/pay/destination-assets";
const BASE_USDC: &str = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
const ETH: &str = "eip155:1/slip44:60";

fn defaults() -> Value {
    json!({
        "status": "active",
        "defaultDestinationAsset": BASE_USDC,
        "feePaidBy": "merchant",
        "skipQuoteAcceptance": false,
        "merchantSurchargePercent": 0,
        "returnRedirectUrl": null,
        "successRedirectUrl": null,
        "failureRedirectUrl": null,
        "underpaymentPercentEnabled": false,
        "underpaymentPercentThreshold": 0,
        "underpaymentFixedEnabled": false,
        "underpaymentFixedThreshold": 0
    })
}

async fn put(app: &TestApp, body: Value) -> (reqwest::StatusCode, Value) {
    read(
        app.req(Method::PUT, SETTINGS)
            .json(&body)
            .send()
            .await
            .unwrap(),
    )
    .await
}

async fn get_returns_defaults(app: TestApp) {
    let got = read(app.req(Method::GET, SETTINGS).send().await.unwrap()).await;
    assert_eq!(got.0, 200);
    assert_eq!(got.1, defaults());
}

async fn put_is_partial_and_persists(app: TestApp) {
    let got = put(
        &app,
        json!({"merchantSurchargePercent": -0.5, "successRedirectUrl": "https://shop.example/ok"}),
    )
    .await;
    assert_eq!(got.0, 200, "{}", got.1);
    let mut want = defaults();
    want["merchantSurchargePercent"] = json!(-0.5);
    want["successRedirectUrl"] = json!("https://shop.example/ok");
    assert_eq!(got.1, want);
    let got = put(
        &app,
        json!({
            "status": "paused",
            "defaultDestinationAsset": ETH,
            "feePaidBy": "client",
            "skipQuoteAcceptance": true,
            "returnRedirectUrl": "https://shop.example/back",
            "failureRedirectUrl": "https://shop.example/fail",
            "underpaymentPercentEnabled": true,
            "underpaymentPercentThreshold": 2.5,
            "underpaymentFixedEnabled": true,
            "underpaymentFixedThreshold": 1
        }),
    )
    .await;
    assert_eq!(got.0, 200, "{}", got.1);
    let all = json!({
        "status": "paused",
        "defaultDestinationAsset": ETH,
        "feePaidBy": "client",
        "skipQuoteAcceptance": true,
        "merchantSurchargePercent": -0.5,
        "returnRedirectUrl": "https://shop.example/back",
        "successRedirectUrl": "https://shop.example/ok",
        "failureRedirectUrl": "https://shop.example/fail",
        "underpaymentPercentEnabled": true,
        "underpaymentPercentThreshold": 2.5,
        "underpaymentFixedEnabled": true,
        "underpaymentFixedThreshold": 1
    });
    assert_eq!(got.1, all);
    assert_eq!(
        read(app.req(Method::GET, SETTINGS).send().await.unwrap())
            .await
            .1,
        all,
        "persisted"
    );
    // null clears nullable fields; an empty body changes nothing.
    let got = put(
        &app,
        json!({"successRedirectUrl": null, "defaultDestinationAsset": null}),
    )
    .await;
    assert_eq!(got.1["successRedirectUrl"], Value::Null);
    assert_eq!(got.1["defaultDestinationAsset"], Value::Null);
    let before = read(app.req(Method::GET, SETTINGS).send().await.unwrap())
        .await
        .1;
    assert_eq!(put(&app, json!({})).await.1, before);
    // The new default drives link creation.
    put(&app, json!({"defaultDestinationAsset": ETH})).await;
    let link = app.create_link(json!({"amount": "0.5"})).await;
    assert_eq!(link["payload"]["asset"], ETH);
}

async fn put_validation(app: TestApp) {
    let cases: Vec<(Value, u16, &str, &str)> = vec![
        (
            json!({"merchantSurchargePercent": 1.5}),
            400,
            "validation_failed",
            "merchantSurchargePercent",
        ),
        (
            json!({"merchantSurchargePercent": -1.01}),
            400,
            "validation_failed",
            "merchantSurchargePercent",
        ),
        (
            json!({"merchantSurchargePercent": "0.5"}),
            400,
            "validation_failed",
            "merchantSurchargePercent",
        ),
        (
            json!({"merchantSurchargePercent": null}),
            400,
            "validation_failed",
            "merchantSurchargePercent",
        ),
        (
            json!({"underpaymentPercentThreshold": 101}),
            400,
            "validation_failed",
            "underpaymentPercentThreshold",
        ),
        (
            json!({"underpaymentPercentThreshold": -1}),
            400,
            "validation_failed",
            "underpaymentPercentThreshold",
        ),
        (
            json!({"underpaymentFixedThreshold": -0.01}),
            400,
            "validation_failed",
            "underpaymentFixedThreshold",
        ),
        (
            json!({"status": "archived"}),
            400,
            "validation_failed",
            "status",
        ),
        (json!({"status": null}), 400, "validation_failed", "status"),
        (
            json!({"feePaidBy": "nobody"}),
            400,
            "validation_failed",
            "feePaidBy",
        ),
        (
            json!({"skipQuoteAcceptance": "true"}),
            400,
            "validation_failed",
            "skipQuoteAcceptance",
        ),
        (
            json!({"underpaymentFixedEnabled": null}),
            400,
            "validation_failed",
            "underpaymentFixedEnabled",
        ),
        (
            json!({"successRedirectUrl": "not a url"}),
            400,
            "validation_failed",
            "successRedirectUrl",
        ),
        (
            json!({"returnRedirectUrl": 5}),
            400,
            "validation_failed",
            "returnRedirectUrl",
        ),
        (
            json!({"defaultDestinationAsset": "eip155:1/erc20:0xdead"}),
            400,
            "invalid_destination_asset",
            "defaultDestinationAsset",
        ),
        (json!({"surcharge": 1}), 400, "unknown_field", "surcharge"),
    ];
    for (body, status, code, field) in cases {
        assert_error(&put(&app, body).await, status, code, Some(field));
    }
    // Edges are inclusive.
    for v in [json!(1), json!(-1)] {
        assert_eq!(
            put(&app, json!({"merchantSurchargePercent": v})).await.0,
            200
        );
    }
    assert_eq!(
        put(&app, json!({"underpaymentPercentThreshold": 100}))
            .await
            .0,
        200
    );
    // A failed PUT changed nothing.
    let now = read(app.req(Method::GET, SETTINGS).send().await.unwrap())
        .await
        .1;
    assert_eq!(now["feePaidBy"], "merchant");
    assert_eq!(now["status"], "active");
}

/// A PUT of a raw JSON text: the answer's status and its raw text (a parsed `Value` would read
/// its numbers as floats and hide what the server wrote).
async fn put_raw(app: &TestApp, body: &str) -> (reqwest::StatusCode, String) {
    let res = app
        .req(Method::PUT, SETTINGS)
        .header("content-type", "application/json")
        .body(body.to_owned())
        .send()
        .await
        .unwrap();
    (res.status(), res.text().await.unwrap())
}

async fn get_raw(app: &TestApp) -> String {
    let res = app.req(Method::GET, SETTINGS).send().await.unwrap();
    assert_eq!(res.status(), 200);
    res.text().await.unwrap()
}

/// Settings numbers are exact: what the client wrote is stored and echoed digit for digit (no
/// float in between), a value that cannot be kept exactly is a 400, and `-0` is refused.
async fn numbers_are_exact_and_never_negative_zero(app: TestApp) {
    let exact = r#"{"merchantSurchargePercent": 0.123456789012345678,
        "underpaymentPercentThreshold": 99.999999999999999999,
        "underpaymentFixedThreshold": 123456789012345678.5}"#;
    let (status, text) = put_raw(&app, exact).await;
    assert_eq!(status, 200, "{text}");
    for echoed in [
        r#""merchantSurchargePercent":0.123456789012345678"#,
        r#""underpaymentPercentThreshold":99.999999999999999999"#,
        r#""underpaymentFixedThreshold":123456789012345678.5"#,
    ] {
        assert!(text.contains(echoed), "{echoed} in {text}");
        assert!(get_raw(&app).await.contains(echoed), "{echoed} persisted");
    }
    // The written scale is kept; an exponent is read exactly and written out.
    let (status, text) = put_raw(
        &app,
        r#"{"merchantSurchargePercent": 0.50, "underpaymentFixedThreshold": 1.25e-7}"#,
    )
    .await;
    assert_eq!(status, 200, "{text}");
    assert!(
        text.contains(r#""merchantSurchargePercent":0.50"#),
        "{text}"
    );
    assert!(
        text.contains(r#""underpaymentFixedThreshold":0.000000125"#),
        "{text}"
    );
    let before = get_raw(&app).await;
    // More decimal places than can be kept is refused, not rounded.
    for body in [
        r#"{"merchantSurchargePercent": 0.1234567890123456789}"#,
        r#"{"underpaymentFixedThreshold": 1e-19}"#,
    ] {
        let (status, text) = put_raw(&app, body).await;
        assert_eq!(status, 400, "{body}: {text}");
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["errorCode"], "validation_failed", "{text}");
        assert!(
            v["error"]
                .as_str()
                .unwrap()
                .contains("cannot be kept exactly"),
            "{text}"
        );
    }
    // Negative zero, in every spelling, on every number field.
    for field in [
        "merchantSurchargePercent",
        "underpaymentPercentThreshold",
        "underpaymentFixedThreshold",
    ] {
        for zero in ["-0", "-0.0", "-0e3", "-0.000"] {
            let body = format!(r#"{{"{field}": {zero}}}"#);
            let (status, text) = put_raw(&app, &body).await;
            let v: Value = serde_json::from_str(&text).unwrap();
            assert_error(&(status, v.clone()), 400, "validation_failed", Some(field));
            assert_eq!(
                v["error"],
                format!("{field} must not be -0 (zero has no sign)")
            );
        }
    }
    assert_eq!(get_raw(&app).await, before, "refused PUTs changed nothing");
    // Plain zero stays fine.
    let (status, text) = put_raw(&app, r#"{"merchantSurchargePercent": 0}"#).await;
    assert_eq!(status, 200, "{text}");
    assert!(text.contains(r#""merchantSurchargePercent":0,"#), "{text}");
}

async fn settings_are_company_scoped(app: TestApp) {
    let other = app.new_tenant("Other Co").await;
    put(&app, json!({"feePaidBy": "client", "status": "paused"})).await;
    let theirs = read(
        app.as_tenant(&other, Method::GET, SETTINGS)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(theirs.1, defaults());
}

async fn destination_assets_mark_the_default(app: TestApp) {
    let got = read(app.req(Method::GET, ASSETS).send().await.unwrap()).await;
    assert_eq!(got.0, 200);
    let data = got.1["data"].as_array().unwrap();
    assert_eq!(data.len(), 9);
    let defaults: Vec<&Value> = data.iter().filter(|a| a["isDefault"] == true).collect();
    assert_eq!(defaults.len(), 1);
    assert_eq!(
        *defaults[0],
        json!({
            "assetIdentifier": BASE_USDC,
            "chainCode": "base",
            "chainName": "Base",
            "symbol": "USDC",
            "name": "USD Coin",
            "decimals": 6,
            "isDefault": true
        })
    );
    let symbols: Vec<&str> = data.iter().map(|a| a["symbol"].as_str().unwrap()).collect();
    for s in ["USDC", "USDT", "ETH", "BTC", "SOL"] {
        assert!(symbols.contains(&s), "{s}");
    }
    put(&app, json!({"defaultDestinationAsset": ETH})).await;
    let got = read(app.req(Method::GET, ASSETS).send().await.unwrap())
        .await
        .1;
    let default: Vec<&str> = got["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["isDefault"] == true)
        .map(|a| a["assetIdentifier"].as_str().unwrap())
        .collect();
    assert_eq!(default, vec![ETH]);
    put(&app, json!({"defaultDestinationAsset": null})).await;
    let got = read(app.req(Method::GET, ASSETS).send().await.unwrap())
        .await
        .1;
    assert!(got["data"]
        .as_array()
        .unwrap()
        .iter()
        .all(|a| a["isDefault"] == false));
}

on_both_backends!(
    get_returns_defaults,
    put_is_partial_and_persists,
    put_validation,
    numbers_are_exact_and_never_negative_zero,
    settings_are_company_scoped,
    destination_assets_mark_the_default,
);
