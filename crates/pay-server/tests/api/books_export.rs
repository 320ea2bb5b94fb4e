//! The accountant's CSV exports through real HTTP: expenses whose texts hold commas, quotes,
//! newlines and formula starts, read back by Python's `csv` module field by field (a formula
//! cell with its leading `'`); incoming payments with their link and session; the period,
//! the query's refusals, credentials, scopes and tenancy.

use std::io::Write;
use std::process::{Command, Stdio};

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{assert_error, read, TestApp};
use crate::oauth_support::access_token;
use crate::on_both_backends;

const BASE_USDC: &str = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
const ACTIVITY: &str = "/api/partner/v1/pay/bookkeeping/wallet-activity";
const OUTGOING: &str = "/api/partner/v1/pay/sandbox/wallet-activity/outgoing";
const EXPENSE: &str = "/api/partner/v1/pay/bookkeeping/expenses/from-activity";
const EXPENSES_CSV: &str = "/api/partner/v1/pay/bookkeeping/exports/expenses.csv";
const PAYMENTS_CSV: &str = "/api/partner/v1/pay/bookkeeping/exports/payments.csv";
const WIDE: &str = "from=2000-01-01T00:00:00Z&to=2100-01-01T00:00:00Z";

/// Parses a CSV body with Python's `csv` module (the body on stdin, rows back as JSON).
fn python_csv(body: &[u8]) -> Vec<Vec<String>> {
    let mut child = Command::new("python3")
        .args([
            "-c",
            "import csv, io, json, sys\n\
             text = io.TextIOWrapper(sys.stdin.buffer, encoding='utf-8', newline='')\n\
             print(json.dumps(list(csv.reader(text, strict=True))))",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3");
    child.stdin.take().unwrap().write_all(body).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "python3 failed");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// What a formula cell reads back as: the value behind a `'`.
fn guarded(v: &str) -> String {
    match v.chars().next() {
        Some('=' | '+' | '-' | '@' | '\t' | '\r') => format!("'{v}"),
        _ => v.to_owned(),
    }
}

async fn send(app: &TestApp, m: Method, path: &str, body: Value) -> Value {
    let got = read(app.req(m, path).json(&body).send().await.unwrap()).await;
    assert!(got.0.is_success(), "{path}: {}", got.1);
    got.1
}

/// An outgoing transfer at `at` with its expense: the activity and the expense.
async fn spend(
    app: &TestApp,
    t: &crate::helpers::Tenant,
    digit: char,
    at: &str,
    vendor: (&str, &str),
    texts: (&str, &str, Option<&str>),
) -> (Value, Value) {
    let transfer = json!({
        "chain": "eip155:8453", "txHash": format!("0x{}", digit.to_string().repeat(64)),
        "logIndex": 1, "asset": BASE_USDC, "amount": "42.5", "occurredAt": at,
        "toAddress": "0x8ba1f109551bD432803012645Ac136ddd64DBA72",
    });
    let a = read(
        app.as_tenant(t, Method::POST, OUTGOING)
            .json(&transfer)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(a.0, 201, "{}", a.1);
    let body = json!({
        "walletActivityEventId": a.1["id"],
        "counterparty": {"newVendor": {"email": vendor.0, "name": vendor.1}},
        "category": texts.0, "description": texts.1, "notes": texts.2,
        "fiatCurrency": "EUR", "fiatAmount": "39.90", "taxAmount": "6.37",
        "evidenceFileIds": [],
    });
    let e = read(
        app.as_tenant(t, Method::POST, EXPENSE)
            .json(&body)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(e.0, 201, "{}", e.1);
    (a.1, e.1)
}

async fn csv_get(req: reqwest::RequestBuilder) -> (u16, String, Vec<u8>) {
    let res = req.send().await.unwrap();
    let status = res.status().as_u16();
    let h = |n: &str| {
        res.headers()
            .get(n)
            .map(|v| v.to_str().unwrap().to_owned())
            .unwrap_or_default()
    };
    let heads = format!(
        "{}|{}|{}",
        h("content-type"),
        h("content-disposition"),
        h("cache-control")
    );
    (status, heads, res.bytes().await.unwrap().to_vec())
}

async fn expenses_round_trip_through_python(app: TestApp) {
    let t = app.t.clone();
    let tricky = [
        (
            '1',
            "2026-03-01T10:00:00Z",
            ("ops@hoster.example", "Hoster, \"Ltd\""),
            (
                "=SUM(A1:A9)",
                "Servers, \"prod\"\ncluster",
                Some("line one\r\nline two, \"quoted\"\n=cmd|' /C calc'!A0"),
            ),
        ),
        (
            '2',
            "2026-03-02T11:30:00.250Z",
            ("evil@vendor.example", "=HYPERLINK(\"http://x\",\"y\")"),
            ("+Travel", "@here, -dash", Some("-1")),
        ),
        (
            '3',
            "2026-03-03T09:00:00Z",
            ("office@vendor.example", "Office"),
            ("Office, \"supplies\"", "-Pens\r\nand paper", None),
        ),
    ];
    let mut made = Vec::new();
    for (digit, at, vendor, texts) in tricky {
        made.push((
            spend(&app, &t, digit, at, vendor, texts).await,
            vendor,
            texts,
        ));
    }
    // Outside the period: before `from`, and exactly at `to` (exclusive).
    spend(
        &app,
        &t,
        '4',
        "2026-02-28T23:59:59Z",
        ("x@v.example", "X"),
        ("a", "b", None),
    )
    .await;
    spend(
        &app,
        &t,
        '5',
        "2026-03-04T00:00:00Z",
        ("x@v.example", "X"),
        ("a", "b", None),
    )
    .await;
    // Another company's expense in the period never shows.
    let other = app.new_tenant("Other Co").await;
    spend(
        &app,
        &other,
        '6',
        "2026-03-02T00:00:00Z",
        ("o@o.example", "Theirs"),
        ("Theirs", "theirs", None),
    )
    .await;
    // An outgoing transfer without its expense is not an expense.
    send(
        &app,
        Method::POST,
        OUTGOING,
        json!({
            "chain": "eip155:8453", "txHash": format!("0x{}", "7".repeat(64)), "logIndex": 1,
            "asset": BASE_USDC, "amount": "1", "occurredAt": "2026-03-02T00:00:00Z",
            "toAddress": "0x8ba1f109551bD432803012645Ac136ddd64DBA72",
        }),
    )
    .await;

    let period = "from=2026-03-01T00:00:00Z&to=2026-03-04T00:00:00Z";
    let (status, heads, body) =
        csv_get(app.req(Method::GET, &format!("{EXPENSES_CSV}?{period}"))).await;
    let text = String::from_utf8(body.clone()).unwrap();
    assert_eq!(status, 200, "{text}");
    assert_eq!(
        heads,
        "text/csv; charset=utf-8|attachment; filename=\"expenses_2026-03-01_2026-03-04.csv\"|no-store"
    );
    assert!(text.starts_with("date,counterparty,counterparty_email,counterparty_address,asset,amount,fiat_currency,fiat_amount,tax,category,description,notes,tx_hash,evidence_count,expense_id,activity_key\r\n"), "{text}");
    assert!(text.ends_with("\r\n"));
    assert!(
        !text.contains("theirs") && !text.contains("Theirs"),
        "{text}"
    );
    let rows = python_csv(&body);
    assert_eq!(rows.len(), 4, "a header and three rows: {rows:?}");
    for (row, ((a, e), vendor, texts)) in rows[1..].iter().zip(&made) {
        let expected: Vec<String> = vec![
            a["occurredAt"].as_str().unwrap().to_owned(),
            guarded(vendor.1),
            vendor.0.to_owned(),
            "0x8ba1f109551bD432803012645Ac136ddd64DBA72".to_owned(),
            BASE_USDC.to_owned(),
            "42.5".to_owned(),
            "EUR".to_owned(),
            "39.90".to_owned(),
            "6.37".to_owned(),
            guarded(texts.0),
            guarded(texts.1),
            guarded(texts.2.unwrap_or("")),
            a["txHash"].as_str().unwrap().to_owned(),
            "0".to_owned(),
            e["id"].as_str().unwrap().to_owned(),
            a["key"].as_str().unwrap().to_owned(),
        ];
        assert_eq!(row, &expected);
    }
    assert!(rows[1][0].starts_with("2026-03-01T10:00:00") && rows[1][0].ends_with('Z'));
    // The other company sees only its own.
    let theirs =
        csv_get(app.as_tenant(&other, Method::GET, &format!("{EXPENSES_CSV}?{period}"))).await;
    let theirs = python_csv(&theirs.2);
    assert_eq!(theirs.len(), 2, "{theirs:?}");
    assert_eq!(theirs[1][9], "Theirs");
    // Nothing in a period: the header alone.
    let (status, _, body) = csv_get(app.req(
        Method::GET,
        &format!("{EXPENSES_CSV}?from=2025-01-01T00:00:00Z&to=2025-02-01T00:00:00Z"),
    ))
    .await;
    assert_eq!(status, 200);
    assert_eq!(python_csv(&body).len(), 1);
}

async fn payments_export_names_link_and_session(app: TestApp) {
    let link = app
        .create_link(json!({"amount": "10", "skipQuoteAcceptance": true}))
        .await;
    let uid = link["uid"].as_str().unwrap();
    let pending = app.start_session(uid, BASE_USDC).await;
    let done = send(
        &app,
        Method::POST,
        &format!("/api/partner/v1/pay/sandbox/payment-links/{uid}/events"),
        json!({"type": "deposit", "amount": "10", "eventId": "dep-1"}),
    )
    .await;
    assert_eq!(done["status"], "complete", "{done}");
    let list = read(app.req(Method::GET, ACTIVITY).send().await.unwrap()).await;
    let inc = list.1["data"][0].clone();
    assert_eq!(inc["direction"], "incoming", "{}", list.1);
    // An outgoing one is no payment.
    spend(
        &app,
        &app.t.clone(),
        '8',
        "2026-03-02T00:00:00Z",
        ("x@v.example", "X"),
        ("a", "b", None),
    )
    .await;

    let (status, heads, body) =
        csv_get(app.req(Method::GET, &format!("{PAYMENTS_CSV}?{WIDE}"))).await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    assert!(
        heads.starts_with(
            "text/csv; charset=utf-8|attachment; filename=\"payments_2000-01-01_2100-01-01.csv\""
        ),
        "{heads}"
    );
    let rows = python_csv(&body);
    assert_eq!(
        rows[0],
        [
            "date",
            "counterparty",
            "counterparty_email",
            "counterparty_address",
            "asset",
            "amount",
            "fiat_currency",
            "fiat_amount",
            "tax",
            "tx_hash",
            "evidence_count",
            "link_uid",
            "session_id",
            "activity_key"
        ]
    );
    assert_eq!(rows.len(), 2, "{rows:?}");
    let r = &rows[1];
    assert_eq!(r[0], inc["occurredAt"].as_str().unwrap());
    assert_eq!(
        r[1],
        inc["counterpartyAddress"].as_str().unwrap(),
        "no contact knows the payer"
    );
    assert_eq!(r[2], "");
    assert_eq!(r[3], inc["counterpartyAddress"].as_str().unwrap());
    assert_eq!(
        (r[4].as_str(), r[5].as_str()),
        (BASE_USDC, inc["amount"].as_str().unwrap())
    );
    let fiat = link["fiatCurrency"].as_str().unwrap_or("");
    assert_eq!(
        r[6], fiat,
        "a fiat-priced link gives its currency, else none"
    );
    assert_eq!(r[9], inc["txHash"].as_str().unwrap());
    assert_eq!(r[10], "0");
    assert_eq!(r[11], uid);
    assert_eq!(r[12], pending["id"].as_str().unwrap());
    assert_eq!(r[13], inc["key"].as_str().unwrap());
    let other = app.new_tenant("Other Co").await;
    let theirs =
        csv_get(app.as_tenant(&other, Method::GET, &format!("{PAYMENTS_CSV}?{WIDE}"))).await;
    assert_eq!(
        python_csv(&theirs.2).len(),
        1,
        "another company's payments never show"
    );
}

async fn export_refusals_credentials_and_scopes(app: TestApp) {
    let (email, password) = app.add_member(&app.t, "member").await;
    let member = app.login(&email, &password).await;
    let links = access_token(&app, "pay:payment-links:read").await;
    let reader = access_token(&app, "pay:bookkeeping:read").await;
    for base in [EXPENSES_CSV, PAYMENTS_CSV] {
        for (query, field) in [
            ("to=2026-03-01T00:00:00Z", "from"),
            ("from=2026-03-01T00:00:00Z", "to"),
            ("from=yesterday&to=2026-03-01T00:00:00Z", "from"),
            ("from=2026-03-02T00:00:00Z&to=2026-03-01T00:00:00Z", "to"),
            ("from=2026-03-01T00:00:00Z&to=2026-03-01T00:00:00Z", "to"),
            (&format!("{WIDE}&from=2026-03-01T00:00:00Z"), "from"),
        ] {
            let got = read(
                app.req(Method::GET, &format!("{base}?{query}"))
                    .send()
                    .await
                    .unwrap(),
            )
            .await;
            assert_error(&got, 400, "validation_failed", Some(field));
        }
        let got = read(
            app.req(Method::GET, &format!("{base}?{WIDE}&limit=5"))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(got.0, 400, "{}", got.1);
        assert_eq!(got.1["errorCode"], "unknown_field", "{}", got.1);

        let path = format!("{base}?{WIDE}");
        let got = read(app.anon(Method::GET, &path).send().await.unwrap()).await;
        assert_eq!(got.0, 401, "{path}: no credentials");
        let got = read(
            app.anon(Method::GET, &path)
                .header("x-svc-key-id", &app.t.key_id)
                .header("x-svc-key-secret", "mksec_wrong")
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(
            (got.0.as_u16(), got.1["error"].as_str()),
            (401, Some("Invalid pay API credentials"))
        );
        let got = read(
            app.anon(Method::GET, &path)
                .bearer_auth(&links)
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(
            (got.0.as_u16(), got.1["error"].as_str()),
            (401, Some("Invalid pay API credentials")),
            "missing scope"
        );
        let res = app
            .anon(Method::GET, &path)
            .bearer_auth(&reader)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 200);
        // A member's session reads it too.
        let res = app
            .in_session(&member, Method::GET, &path)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 200);
    }
}

on_both_backends!(
    expenses_round_trip_through_python,
    payments_export_names_link_and_session,
    export_refusals_credentials_and_scopes,
);
