//! Strict JSON over HTTP: a key given twice in one object, at any depth, is `invalid_json`
//! (a parser in front of the service could read the other value: last-wins is a
//! parser-differential risk), and nothing is written.

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{assert_error, read, TestApp};
use crate::on_both_backends;

const LINKS: &str = "/api/partner/v1/pay/payment-links";
const ANONYMOUS: &str = "/api/public/anonymous-payment-links";
const SETTINGS: &str = "/api/partner/v1/pay/settings";
const ETH: &str = "eip155:1/slip44:60";
const ADDRESS: &str = "0x52908400098527886E0F7030069857D2E4169EE7";

/// A raw JSON text (serde_json cannot produce a duplicate key).
async fn send(
    app: &TestApp,
    method: Method,
    path: &str,
    raw: &str,
) -> (reqwest::StatusCode, Value) {
    read(
        app.req(method, path)
            .header("content-type", "application/json")
            .body(raw.to_owned())
            .send()
            .await
            .unwrap(),
    )
    .await
}

async fn duplicate_keys_are_refused_at_every_depth(app: TestApp) {
    let cases = [
        // The review's case: last-wins would create a link for 9999.
        (LINKS, r#"{"amount":"1","amount":"9999"}"#),
        // Across types.
        (LINKS, r#"{"amount":"1","amount":9999}"#),
        (LINKS, r#"{"amount":"1","title":null,"title":"x"}"#),
        // Inside free-form metadata, one and several levels down.
        (
            LINKS,
            r#"{"amount":"1","metadata":{"order":"1","order":"2"}}"#,
        ),
        (
            LINKS,
            r#"{"amount":"1","metadata":{"a":{"b":[{"c":1},{"c":1,"c":2}]}}}"#,
        ),
    ];
    for (path, raw) in cases {
        let got = send(&app, Method::POST, path, raw).await;
        assert_error(&got, 400, "invalid_json", None);
        assert!(
            got.1["error"].as_str().unwrap().contains("duplicate"),
            "{raw}: {}",
            got.1
        );
    }
    let anonymous = [
        format!(
            r#"{{"amount":"1","settlement":{{"priorities":[{{"asset":"{ETH}","address":"{ADDRESS}","address":"0xattacker"}}]}}}}"#
        ),
        format!(
            r#"{{"amount":"1","settlement":{{"priorities":[],"priorities":[{{"asset":"{ETH}","address":"{ADDRESS}"}}]}}}}"#
        ),
        format!(
            r#"{{"amount":"1","settlement":{{"priorities":[{{"asset":"{ETH}","address":"{ADDRESS}"}}]}},"branding":{{"name":"a","name":"b"}}}}"#
        ),
    ];
    for raw in &anonymous {
        let got = read(
            app.anon(Method::POST, ANONYMOUS)
                .header("content-type", "application/json")
                .body(raw.clone())
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_error(&got, 400, "invalid_json", None);
    }
    // The same body without the repeat is fine: the refusal is the duplicate, nothing else.
    let ok = read(
        app.anon(Method::POST, ANONYMOUS)
            .header("content-type", "application/json")
            .body(format!(
                r#"{{"amount":"1","settlement":{{"priorities":[{{"asset":"{ETH}","address":"{ADDRESS}"}}]}},"branding":{{"name":"a"}}}}"#
            ))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(ok.0, 201, "{}", ok.1);

    let got = send(
        &app,
        Method::PUT,
        SETTINGS,
        r#"{"feePaidBy":"client","feePaidBy":"merchant"}"#,
    )
    .await;
    assert_error(&got, 400, "invalid_json", None);
    let link = app
        .create_link(json!({"amount": "1", "customerEmail": "payer@example.com"}))
        .await;
    let uid = link["uid"].as_str().unwrap();
    let got = send(
        &app,
        Method::POST,
        &format!("{LINKS}/{uid}/send-request-email"),
        r#"{"email":"payer@example.com","email":"other@example.com"}"#,
    )
    .await;
    assert_error(&got, 400, "invalid_json", None);
    let got = send(
        &app,
        Method::PATCH,
        &format!("{LINKS}/{uid}"),
        r#"{"status":"paused","status":"archived"}"#,
    )
    .await;
    assert_error(&got, 400, "invalid_json", None);

    // A key may repeat in different objects.
    let got = send(
        &app,
        Method::POST,
        LINKS,
        r#"{"amount":"1","metadata":{"amount":"2","nested":{"amount":"3"}}}"#,
    )
    .await;
    assert_eq!(got.0, 201, "{}", got.1);
    assert_eq!(got.1["payload"]["amount"], "1");

    // Nothing else was written: two links (the two above), settings untouched, link active.
    let (_, list) = read(app.req(Method::GET, LINKS).send().await.unwrap()).await;
    assert_eq!(list["data"].as_array().unwrap().len(), 2, "{list}");
    let (_, settings) = read(app.req(Method::GET, SETTINGS).send().await.unwrap()).await;
    assert_eq!(settings["feePaidBy"], "merchant");
    let (_, detail) = read(
        app.req(Method::GET, &format!("{LINKS}/{uid}"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(detail["status"], "active");
}

async fn credentials_come_before_a_duplicate_key(app: TestApp) {
    let got = read(
        app.anon(Method::PUT, SETTINGS)
            .header("content-type", "application/json")
            .body(r#"{"feePaidBy":"client","feePaidBy":"merchant"}"#)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 401, "unauthorized", None);
}

on_both_backends!(
    duplicate_keys_are_refused_at_every_depth,
    credentials_come_before_a_duplicate_key,
);
