//! The dashboard's Bookkeeping screens over HTTP: the wallet activity (a sandbox payment and
//! an outgoing transfer, the filters), the CSV exports for the team of the path (the same
//! bytes as the JSON export routes), an activity's page with the counterparty search and the
//! expense form as `multipart/form-data` with its evidence upload (saved through the JSON
//! save's call: vendor, fields, files, versions; a refused file or field keeps what was
//! typed; the upload's cap and sniffed types), the file download; a read-only member sees no
//! form and each change answers 403 (another team and CSRF: `dashboard_bookkeeping_access.rs`).

use reqwest::Method;
use serde_json::{json, Value};

use crate::books_files::PDF;
use crate::dashboard::{field, location, page, pending, sandbox_event};
use crate::helpers::{read, Session, TestApp};
use crate::on_both_backends;

const BASE_USDC: &str = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
const OUTGOING: &str = "/api/partner/v1/pay/sandbox/wallet-activity/outgoing";
const ACTIVITY: &str = "/api/partner/v1/pay/bookkeeping/wallet-activity";
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x02\0\0\0";
pub const BOUNDARY: &str = "----books7MA4YWxkTrZu0gW";

pub fn screen(app: &TestApp) -> String {
    format!("/dashboard/{}/bookkeeping", app.t.company_id)
}

pub fn activity_page(app: &TestApp, id: &str) -> String {
    format!("{}/activity/{id}", screen(app))
}

/// An outgoing transfer of the company (sandbox): the activity.
pub async fn outgoing(app: &TestApp, digit: char) -> Value {
    let got = read(
        app.req(Method::POST, OUTGOING)
            .json(&json!({
                "chain": "eip155:8453", "txHash": format!("0x{}", digit.to_string().repeat(64)),
                "logIndex": 2, "asset": BASE_USDC, "amount": "125.5",
                "toAddress": "0x8ba1f109551bD432803012645Ac136ddd64DBA72",
            }))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(got.0, 201, "{}", got.1);
    got.1
}

/// The activity as the JSON detail gives it.
pub async fn detail(app: &TestApp, id: &str) -> Value {
    let got = read(
        app.req(Method::GET, &format!("{ACTIVITY}/{id}"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(got.0, 200, "{}", got.1);
    got.1
}

/// A multipart body: text fields, then files as (field, name, bytes).
pub fn multipart(fields: &[(&str, &str)], files: &[(&str, &str, &[u8])]) -> Vec<u8> {
    let mut b = Vec::new();
    for (k, v) in fields {
        b.extend_from_slice(
            format!("--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{k}\"\r\n\r\n{v}\r\n")
                .as_bytes(),
        );
    }
    for (k, name, bytes) in files {
        b.extend_from_slice(
            format!(
                "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{k}\"; filename=\"{name}\"\r\nContent-Type: application/octet-stream\r\n\r\n"
            )
            .as_bytes(),
        );
        b.extend_from_slice(bytes);
        b.extend_from_slice(b"\r\n");
    }
    b.extend_from_slice(format!("--{BOUNDARY}--\r\n").as_bytes());
    b
}

pub async fn post_multipart(
    app: &TestApp,
    s: &Session,
    path: &str,
    body: Vec<u8>,
) -> reqwest::Response {
    app.in_session_no_csrf(s, Method::POST, path)
        .header(
            "content-type",
            format!("multipart/form-data; boundary={BOUNDARY}"),
        )
        .body(body)
        .send()
        .await
        .unwrap()
}

/// The expense form's fields for a new vendor.
pub fn vendor_form(csrf: &str) -> Vec<(&str, &str)> {
    vec![
        ("csrf_token", csrf),
        ("contact_id", "new"),
        ("vendor_email", "billing@hoster.example"),
        ("vendor_name", "Hoster"),
        ("vendor_client_id", ""),
        ("category", "Hosting"),
        ("description", "Servers, \"prod\""),
        ("notes", "=1+1"),
        ("fiat_currency", "eur"),
        ("fiat_amount", "115.20"),
        ("tax_amount", "18.39"),
    ]
}

fn today() -> String {
    time::OffsetDateTime::now_utc().date().to_string()
}

async fn the_screen_lists_activity_and_exports_the_csv(app: TestApp) {
    let s = app.login_owner(&app.t).await;
    let (uid, amount) = pending(&app, "25").await;
    assert_eq!(
        sandbox_event(&app, &uid, &amount).await["status"],
        "complete"
    );
    let out = outgoing(&app, '5').await;
    let (status, _, html) = page(&app, &s, &screen(&app)).await;
    assert_eq!(status, 200);
    assert!(
        html.contains("aria-current=\"page\">Bookkeeping</a>"),
        "{html}"
    );
    assert!(
        html.contains("<td data-label=\"Direction\">Incoming</td>"),
        "{html}"
    );
    assert!(
        html.contains("<td data-label=\"Direction\">Outgoing</td>"),
        "{html}"
    );
    assert!(html.contains("125.5 USDC (Base)"), "{html}");
    let explain = format!(
        "<a href=\"{}\">Explain it</a>",
        activity_page(&app, out["id"].as_str().unwrap())
    );
    assert!(html.contains(&explain), "{html}");
    // The filters: outgoing without an expense; incoming only.
    let (_, _, html) = page(&app, &s, &format!("{}?expense=missing", screen(&app))).await;
    assert!(html.contains(&explain), "{html}");
    assert!(!html.contains(">Incoming</td>"), "{html}");
    let (_, _, html) = page(&app, &s, &format!("{}?direction=incoming", screen(&app))).await;
    assert!(!html.contains(">Outgoing</td>"), "{html}");
    assert!(html.contains(">Incoming</td>"), "{html}");
    // The export form, and the export: the JSON route's bytes for the same period.
    assert!(
        html.contains(&format!("action=\"{}/export\"", screen(&app))),
        "{html}"
    );
    let day = today();
    let export = |kind: &'static str| {
        let (app, s, day) = (&app, &s, day.clone());
        async move {
            let res = app
                .in_session_no_csrf(
                    s,
                    Method::GET,
                    &format!("{}/export?kind={kind}&from={day}&to={day}", screen(app)),
                )
                .send()
                .await
                .unwrap();
            assert_eq!(res.status(), 200, "{kind}");
            assert_eq!(res.headers()["content-type"], "text/csv; charset=utf-8");
            let next = time::OffsetDateTime::now_utc().date().next_day().unwrap();
            assert_eq!(
                res.headers()["content-disposition"],
                format!("attachment; filename=\"{kind}_{day}_{next}.csv\"").as_str()
            );
            let body = res.text().await.unwrap();
            let api = app
                .req(
                    Method::GET,
                    &format!(
                        "/api/partner/v1/pay/bookkeeping/exports/{kind}.csv?from={day}T00:00:00Z&to={next}T00:00:00Z"
                    ),
                )
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap();
            assert_eq!(body, api, "{kind}");
            body
        }
    };
    let payments = export("payments").await;
    let lines: Vec<&str> = payments.split("\r\n").filter(|l| !l.is_empty()).collect();
    assert_eq!(lines.len(), 2, "the header and the payment: {payments}");
    assert!(lines[0].starts_with("date,counterparty,"), "{payments}");
    assert!(
        lines[1].contains(&uid),
        "the link paid in the sandbox: {payments}"
    );
    let expenses = export("expenses").await;
    assert_eq!(
        expenses.lines().count(),
        1,
        "none explained yet: {expenses}"
    );
    // A query that does not read is the 400 page.
    for q in [
        "kind=refunds&from=2026-11-01&to=2026-11-02",
        "kind=payments&from=2026-11-02&to=2026-11-01",
        "kind=payments&from=yesterday&to=2026-11-01",
        "kind=payments&from=2026-11-01",
        "kind=payments&from=2026-11-01&to=2026-11-02&limit=1",
    ] {
        let (status, _, _) = page(&app, &s, &format!("{}/export?{q}", screen(&app))).await;
        assert_eq!(status, 400, "{q}");
    }
}

async fn the_form_saves_an_expense_with_its_evidence(app: TestApp) {
    let s = app.login_owner(&app.t).await;
    let out = outgoing(&app, '6').await;
    let id = out["id"].as_str().unwrap();
    let at = activity_page(&app, id);
    let (status, _, html) = page(&app, &s, &at).await;
    assert_eq!(status, 200);
    assert!(html.contains("id=\"no-expense\""), "{html}");
    assert!(html.contains("enctype=\"multipart/form-data\""), "{html}");
    let csrf = field(&html, "csrf_token");
    let (_, _, html) = page(&app, &s, &format!("{at}?q=hoster")).await;
    assert!(html.contains("No contact matches."), "{html}");
    // A new vendor and a PDF.
    let res = post_multipart(
        &app,
        &s,
        &format!("{at}/expense"),
        multipart(
            &vendor_form(&csrf),
            &[("evidence", "../hoster-2026-11.pdf", PDF)],
        ),
    )
    .await;
    assert_eq!(res.status(), 303, "{}", res.text().await.unwrap());
    assert_eq!(location(&res), at);
    let d = detail(&app, id).await;
    let e = &d["expense"];
    assert_eq!(e["version"], 1, "{d}");
    assert_eq!(e["counterparty"]["email"], "billing@hoster.example");
    assert_eq!(e["counterparty"]["name"], "Hoster");
    assert_eq!(
        (&e["category"], &e["description"], &e["notes"]),
        (
            &json!("Hosting"),
            &json!("Servers, \"prod\""),
            &json!("=1+1")
        )
    );
    assert_eq!(
        (&e["fiatCurrency"], &e["fiatAmount"], &e["taxAmount"]),
        (&json!("EUR"), &json!("115.20"), &json!("18.39"))
    );
    let files = e["evidenceFiles"].as_array().unwrap();
    assert_eq!(files.len(), 1, "{d}");
    assert_eq!(files[0]["filename"], "hoster-2026-11.pdf");
    assert_eq!(files[0]["contentType"], "application/pdf");
    let pdf_id = files[0]["id"].as_str().unwrap().to_owned();
    // The page shows it, and the file downloads through the dashboard.
    let (_, _, html) = page(&app, &s, &at).await;
    assert!(html.contains("id=\"expense-saved\""), "{html}");
    let href = format!("{}/files/{pdf_id}", screen(&app));
    assert!(
        html.contains(&format!("<a href=\"{href}\">hoster-2026-11.pdf</a>")),
        "{html}"
    );
    let res = app
        .in_session_no_csrf(&s, Method::GET, &href)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["content-type"], "application/pdf");
    assert_eq!(res.headers()["x-content-type-options"], "nosniff");
    assert!(res.headers()["content-disposition"]
        .to_str()
        .unwrap()
        .starts_with("attachment; filename=\"hoster-2026-11.pdf\""));
    assert_eq!(res.bytes().await.unwrap().as_ref(), PDF);
    // The search finds the vendor; a re-save picks it, drops the PDF and adds a PNG.
    let (_, _, html) = page(&app, &s, &format!("{at}?q=HOSTER")).await;
    assert!(
        html.contains("<td data-label=\"E-mail\">billing@hoster.example</td>"),
        "{html}"
    );
    let vendor = e["counterparty"]["uid"].as_str().unwrap().to_owned();
    assert!(
        html.contains(&format!("<option value=\"{vendor}\" selected>")),
        "{html}"
    );
    let res = post_multipart(
        &app,
        &s,
        &format!("{at}/expense"),
        multipart(
            &[
                ("csrf_token", &csrf),
                ("contact_id", &vendor),
                ("category", "Hosting"),
                ("description", "Servers"),
                ("remove_evidence", &pdf_id),
            ],
            &[("evidence", "scan.png", PNG)],
        ),
    )
    .await;
    assert_eq!(res.status(), 303);
    let d = detail(&app, id).await;
    let e = &d["expense"];
    assert_eq!(e["version"], 2, "{d}");
    assert_eq!(e["notes"], Value::Null, "a save sets every field");
    let files = e["evidenceFiles"].as_array().unwrap();
    assert_eq!(files.len(), 1, "{d}");
    assert_eq!(files[0]["contentType"], "image/png");
    // No file chosen keeps the linked ones.
    let res = post_multipart(
        &app,
        &s,
        &format!("{at}/expense"),
        multipart(
            &[
                ("csrf_token", &csrf),
                ("contact_id", &vendor),
                ("category", "Hosting"),
                ("description", "Servers"),
            ],
            &[("evidence", "", b"")],
        ),
    )
    .await;
    assert_eq!(res.status(), 303);
    assert_eq!(
        detail(&app, id).await["expense"]["evidenceFiles"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    // Refusals: the form again with the reason and what was typed (escaped), nothing saved.
    let php = b"<?php system($_GET['c']); ?>";
    for (fields, files, status, why) in [
        (
            vendor_form(&csrf),
            vec![("evidence", "invoice.pdf", &php[..])],
            415,
            "PDF, PNG, JPEG or WebP",
        ),
        (
            vendor_form(&csrf)
                .into_iter()
                .filter(|(k, _)| *k != "category")
                .chain([("category", "")])
                .collect(),
            vec![],
            400,
            "category",
        ),
        (
            vendor_form(&csrf)
                .into_iter()
                .filter(|(k, _)| *k != "fiat_currency")
                .chain([("fiat_currency", "XYZ")])
                .collect(),
            vec![],
            400,
            "fiatCurrency",
        ),
    ] {
        let res = post_multipart(
            &app,
            &s,
            &format!("{at}/expense"),
            multipart(&fields, &files),
        )
        .await;
        assert_eq!(res.status(), status, "{why}");
        let html = res.text().await.unwrap();
        assert!(html.contains("id=\"expense-error\""), "{why}: {html}");
        assert!(html.contains(why), "{why}: {html}");
        assert!(
            html.contains("value=\"Servers, &quot;prod&quot;\""),
            "{why}: {html}"
        );
    }
    // Not read: an unknown field, a file in a text field, a file over 10 MiB.
    for (fields, files, status) in [
        (
            vec![("csrf_token", csrf.as_str()), ("phone", "1")],
            vec![],
            400,
        ),
        (
            vec![("csrf_token", csrf.as_str())],
            vec![("notes", "a.pdf", PDF)],
            400,
        ),
    ] {
        let res = post_multipart(
            &app,
            &s,
            &format!("{at}/expense"),
            multipart(&fields, &files),
        )
        .await;
        assert_eq!(res.status(), status);
    }
    let big = vec![b'%'; 10 * 1024 * 1024 + 1];
    let res = post_multipart(
        &app,
        &s,
        &format!("{at}/expense"),
        multipart(&vendor_form(&csrf), &[("evidence", "big.pdf", &big)]),
    )
    .await;
    assert_eq!(res.status(), 413);
    assert_eq!(
        detail(&app, id).await["expense"]["version"],
        3,
        "nothing else saved"
    );
    // An incoming activity has no form, and its expense is not found.
    let (uid, amount) = pending(&app, "5").await;
    sandbox_event(&app, &uid, &amount).await;
    let list = read(
        app.req(Method::GET, &format!("{ACTIVITY}?direction=incoming"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    let inc = list.1["data"][0]["id"].as_str().unwrap().to_owned();
    let (status, _, html) = page(&app, &s, &activity_page(&app, &inc)).await;
    assert_eq!(status, 200);
    assert!(!html.contains("/expense\""), "{html}");
    let res = post_multipart(
        &app,
        &s,
        &format!("{}/expense", activity_page(&app, &inc)),
        multipart(&vendor_form(&csrf), &[]),
    )
    .await;
    assert_eq!(res.status(), 404);
}

async fn a_read_only_member_sees_and_changes_nothing(app: TestApp) {
    let out = outgoing(&app, '7').await;
    let id = out["id"].as_str().unwrap();
    let (email, password) = app.add_member(&app.t, "member").await;
    let s = app.login(&email, &password).await;
    let (status, _, html) = page(&app, &s, &screen(&app)).await;
    assert_eq!(status, 200);
    assert!(html.contains(">Outgoing</td>"), "{html}");
    let at = activity_page(&app, id);
    let (status, _, html) = page(&app, &s, &at).await;
    assert_eq!(status, 200);
    assert!(!html.contains("Save expense"), "{html}");
    assert!(
        !html.contains("/expense\""),
        "the form shown to a member: {html}"
    );
    let csrf = field(&html, "csrf_token");
    let res = post_multipart(
        &app,
        &s,
        &format!("{at}/expense"),
        multipart(&vendor_form(&csrf), &[("evidence", "a.pdf", PDF)]),
    )
    .await;
    assert_eq!(res.status(), 403);
    assert_eq!(
        detail(&app, id).await["expense"],
        Value::Null,
        "nothing saved"
    );
    // Reads are every member's: the export too.
    let day = today();
    let (status, _, _) = page(
        &app,
        &s,
        &format!("{}/export?kind=expenses&from={day}&to={day}", screen(&app)),
    )
    .await;
    assert_eq!(status, 200);
}

on_both_backends!(
    the_screen_lists_activity_and_exports_the_csv,
    the_form_saves_an_expense_with_its_evidence,
    a_read_only_member_sees_and_changes_nothing,
);
