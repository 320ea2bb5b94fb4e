//! Private evidence files through real HTTP, on both databases: uploads of each type, a PHP
//! script named `.pdf` refused (415), an oversize body (413), traversal names sanitised, the
//! download's headers, another company's file refused on link and download (404), a file of
//! another expense (409), the detail's evidence view and the export's count, credentials and
//! scopes, and the orphan cleanup after a day of (injected) real time.

use pay_server::files::FilesConfig;
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{assert_error, read, TestApp};
use crate::oauth_support::access_token;
use crate::on_both_backends;

const FILES: &str = "/api/partner/v1/pay/bookkeeping/files";
const OUTGOING: &str = "/api/partner/v1/pay/sandbox/wallet-activity/outgoing";
const EXPENSE: &str = "/api/partner/v1/pay/bookkeeping/expenses/from-activity";
const ACTIVITY: &str = "/api/partner/v1/pay/bookkeeping/wallet-activity";
const EXPORT: &str = "/api/partner/v1/pay/bookkeeping/exports/expenses.csv";

pub const PDF: &[u8] = b"%PDF-1.7\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n";
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x02\0\0\0";
const JPEG: &[u8] = b"\xFF\xD8\xFF\xE0\0\x10JFIF\0\x01\x01\0\0\x01\0\x01\0\0\xFF\xD9";
const WEBP: &[u8] =
    b"RIFF\x1a\0\0\0WEBPVP8L\x0d\0\0\0\x2f\0\0\0\x10\x07\x10\x11\x11\x88\x88\xfe\x07\0";

fn enc(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// Uploads `bytes` as `name` with the main tenant's key.
pub async fn upload(app: &TestApp, name: &str, bytes: &[u8]) -> (reqwest::StatusCode, Value) {
    let r = app
        .req(Method::POST, &format!("{FILES}?filename={}", enc(name)))
        .header("content-type", "application/octet-stream")
        .body(bytes.to_vec());
    read(r.send().await.unwrap()).await
}

async fn outgoing(app: &TestApp, digit: char) -> String {
    let got = read(
        app.req(Method::POST, OUTGOING)
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

fn save(activity: &str, files: &[&str]) -> Value {
    json!({
        "walletActivityEventId": activity,
        "counterparty": {"newVendor": {"email": "billing@hoster.example"}},
        "category": "Hosting",
        "description": "Servers",
        "evidenceFileIds": files,
    })
}

async fn post_save(app: &TestApp, body: Value) -> (reqwest::StatusCode, Value) {
    read(
        app.req(Method::POST, EXPENSE)
            .json(&body)
            .send()
            .await
            .unwrap(),
    )
    .await
}

fn files_dir(app: &TestApp) -> std::path::PathBuf {
    match &app.config.files {
        FilesConfig::Local(dir) => dir.clone(),
        other => panic!("test servers store files locally: {other:?}"),
    }
}

async fn uploads_by_content(app: TestApp) {
    for (name, bytes, mime, stored) in [
        ("invoice.pdf", PDF, "application/pdf", "invoice.pdf"),
        ("scan.png", PNG, "image/png", "scan.png"),
        ("photo.JPG", JPEG, "image/jpeg", "photo.JPG"),
        ("receipt", WEBP, "image/webp", "receipt.webp"),
    ] {
        let got = upload(&app, name, bytes).await;
        assert_eq!(got.0, 201, "{name}: {}", got.1);
        let f = &got.1;
        assert_eq!(f["contentType"], mime);
        assert_eq!(f["filename"], stored);
        assert_eq!(f["size"], bytes.len());
        assert_eq!(f["expenseId"], Value::Null);
        assert!(f["uploadedBy"].as_str().unwrap().starts_with("api_key:"));
        let id = f["id"].as_str().unwrap();
        assert_eq!(
            f["downloadPath"],
            format!("{FILES}/{id}/content"),
            "the download link"
        );
        // Bytes are on disk under the company, nowhere else.
        let on_disk = files_dir(&app)
            .join("evidence")
            .join(&app.t.company_id)
            .join(id);
        assert_eq!(std::fs::read(on_disk).unwrap(), bytes);
        let meta = read(
            app.req(Method::GET, &format!("{FILES}/{id}"))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!((meta.0.as_u16(), &meta.1), (200, f));
    }
    // By content, not by name or Content-Type: a PHP script named .pdf, declared a PDF.
    let php = read(
        app.req(Method::POST, &format!("{FILES}?filename=invoice.pdf"))
            .header("content-type", "application/pdf")
            .body("<?php system($_GET['c']); ?>")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&php, 415, "unsupported_file_type", Some("file"));
    assert_error(
        &upload(&app, "e.pdf", b"").await,
        415,
        "unsupported_file_type",
        Some("file"),
    );
    // Over 10 MiB: 413 (a body without a declared length is cut at the same cap by the one
    // capped reader).
    let mut big = PDF.to_vec();
    big.resize(10 * 1024 * 1024 + 1, b' ');
    assert_error(
        &upload(&app, "big.pdf", &big).await,
        413,
        "payload_too_large",
        None,
    );
    big.truncate(10 * 1024 * 1024);
    assert_eq!(upload(&app, "limit.pdf", &big).await.0, 201);
    // Names: paths, traversal, controls, leading dots; unicode kept; a default when empty.
    for (given, kept) in [
        ("../../etc/passwd", "passwd.pdf"),
        ("..\\..\\a.pdf", "a.pdf"),
        ("/abs/x.pdf", "x.pdf"),
        (".hidden.pdf", "hidden.pdf"),
        ("in\u{1}voice\n.pdf", "invoice.pdf"),
        ("Rechnung März.pdf", "Rechnung März.pdf"),
        ("", "evidence.pdf"),
    ] {
        let got = upload(&app, given, PDF).await;
        assert_eq!(got.0, 201, "{given:?}: {}", got.1);
        assert_eq!(got.1["filename"], kept, "{given:?}");
    }
    let no_name = read(
        app.req(Method::POST, FILES)
            .body(PDF.to_vec())
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(no_name.1["filename"], "evidence.pdf");
    assert_error(
        &read(
            app.req(Method::POST, &format!("{FILES}?name=x"))
                .body(PDF.to_vec())
                .send()
                .await
                .unwrap(),
        )
        .await,
        400,
        "unknown_field",
        Some("name"),
    );
}

async fn downloads_are_private_attachments(app: TestApp) {
    let f = upload(&app, "Rechnung März \"7\".pdf", PDF).await.1;
    let id = f["id"].as_str().unwrap().to_owned();
    let res = app
        .req(Method::GET, &format!("{FILES}/{id}/content"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let h = |n: &str| res.headers()[n].to_str().unwrap().to_owned();
    assert_eq!(h("content-type"), "application/pdf");
    assert_eq!(h("x-content-type-options"), "nosniff");
    assert_eq!(h("cache-control"), "private, no-store");
    assert_eq!(
        h("content-disposition"),
        "attachment; filename=\"Rechnung M_rz 7.pdf\"; filename*=UTF-8''Rechnung%20M%C3%A4rz%207.pdf"
    );
    assert_eq!(res.bytes().await.unwrap().as_ref(), PDF);
    // Without credentials, or as another company: nothing.
    let anon = read(
        app.anon(Method::GET, &format!("{FILES}/{id}/content"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(anon.0, 401);
    let other = app.new_tenant("Other Co").await;
    for path in [format!("{FILES}/{id}/content"), format!("{FILES}/{id}")] {
        let got = read(
            app.as_tenant(&other, Method::GET, &path)
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_error(&got, 404, "not_found", None);
    }
    let unknown = read(
        app.req(Method::GET, &format!("{FILES}/not-an-id/content"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&unknown, 404, "not_found", None);
    // Scopes: write uploads, read reads and cannot upload, another product's scope nothing.
    let as_grant = |token: &str, m: Method, path: &str| app.anon(m, path).bearer_auth(token);
    let reader = access_token(&app, "pay:bookkeeping:read").await;
    let got = as_grant(&reader, Method::GET, &format!("{FILES}/{id}/content"))
        .send()
        .await
        .unwrap();
    assert_eq!(got.status(), 200);
    let denied = read(
        as_grant(&reader, Method::POST, FILES)
            .body(PDF.to_vec())
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        (denied.0.as_u16(), denied.1["error"].as_str()),
        (401, Some("Invalid pay API credentials"))
    );
    let links = access_token(&app, "pay:payment-links:read").await;
    let got = read(
        as_grant(&links, Method::GET, &format!("{FILES}/{id}"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(got.0, 401, "{}", got.1);
    let writer = access_token(&app, "pay:bookkeeping:write").await;
    let up = read(
        as_grant(&writer, Method::POST, FILES)
            .body(PNG.to_vec())
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(up.0, 201, "{}", up.1);
    assert!(up.1["uploadedBy"].as_str().unwrap().starts_with("grant:"));
    // A wrong secret, and a session member without settings.manage, cannot upload.
    let wrong = read(
        app.anon(Method::POST, FILES)
            .header("x-svc-key-id", &app.t.key_id)
            .header("x-svc-key-secret", "mksec_wrong")
            .body(PDF.to_vec())
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(wrong.0, 401);
    let (email, password) = app.add_member(&app.t, "member").await;
    let member = app.login(&email, &password).await;
    let got = read(
        app.in_session(&member, Method::POST, FILES)
            .body(PDF.to_vec())
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 403, "forbidden", None);
    let got = app
        .in_session(&member, Method::GET, &format!("{FILES}/{id}/content"))
        .send()
        .await
        .unwrap();
    assert_eq!(got.status(), 200);
}

async fn expenses_link_files(app: TestApp) {
    let a = outgoing(&app, 'a').await;
    let pdf = upload(&app, "invoice.pdf", PDF).await.1;
    let png = upload(&app, "receipt.png", PNG).await.1;
    let (pdf_id, png_id) = (pdf["id"].as_str().unwrap(), png["id"].as_str().unwrap());
    // Another company's file, or an unknown id: 404 naming the entry, nothing saved.
    let other = app.new_tenant("Other Co").await;
    let theirs = read(
        app.as_tenant(&other, Method::POST, FILES)
            .body(PDF.to_vec())
            .send()
            .await
            .unwrap(),
    )
    .await
    .1;
    let theirs_id = theirs["id"].as_str().unwrap();
    let got = post_save(&app, save(&a, &[pdf_id, theirs_id])).await;
    assert_error(&got, 404, "not_found", Some("evidenceFileIds[1]"));
    let got = post_save(&app, save(&a, &["0192f0c4-1a2b-7c3d-8e4f-0123456789ab"])).await;
    assert_error(&got, 404, "not_found", Some("evidenceFileIds[0]"));
    let got = post_save(&app, save(&a, &["x"])).await;
    assert_error(&got, 400, "validation_failed", Some("evidenceFileIds[0]"));
    let many: Vec<String> = (0..21)
        .map(|i| format!("0192f0c4-1a2b-7c3d-8e4f-0123456789{i:02}"))
        .collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    let got = post_save(&app, save(&a, &many)).await;
    assert_error(&got, 400, "validation_failed", Some("evidenceFileIds"));
    let detail = read(
        app.req(Method::GET, &format!("{ACTIVITY}/{a}"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(detail.1["expense"], Value::Null);
    // Linked (an id given twice is linked once): the answer and the detail list both files
    // with metadata and download links.
    let saved = post_save(&app, save(&a, &[png_id, pdf_id, png_id])).await;
    assert_eq!(saved.0, 201, "{}", saved.1);
    let e = &saved.1;
    assert_eq!(
        e["evidenceFileIds"],
        json!([pdf_id, png_id]),
        "upload order"
    );
    let files = e["evidenceFiles"].as_array().unwrap();
    assert_eq!(files.len(), 2);
    assert_eq!(files[0]["filename"], "invoice.pdf");
    assert_eq!(files[0]["expenseId"], e["id"]);
    assert_eq!(
        files[1]["downloadPath"],
        format!("{FILES}/{png_id}/content")
    );
    let changes = e["versions"][0]["changes"].as_array().unwrap();
    assert_eq!(changes.last().unwrap()["field"], "evidenceFileIds");
    let detail = read(
        app.req(Method::GET, &format!("{ACTIVITY}/{a}"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(detail.1["expense"]["evidenceFiles"], e["evidenceFiles"]);
    // The other company can neither link nor download ours.
    let their_activity = {
        let got = read(
            app.as_tenant(&other, Method::POST, OUTGOING)
                .json(&json!({
                    "chain": "eip155:8453",
                    "txHash": format!("0x{}", "e".repeat(64)),
                    "logIndex": 0,
                    "asset": "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
                    "amount": "1",
                    "toAddress": "0x8ba1f109551bD432803012645Ac136ddd64DBA72",
                }))
                .send()
                .await
                .unwrap(),
        )
        .await;
        got.1["id"].as_str().unwrap().to_owned()
    };
    let got = read(
        app.as_tenant(&other, Method::POST, EXPENSE)
            .json(&save(&their_activity, &[pdf_id]))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 404, "not_found", Some("evidenceFileIds[0]"));
    // Another expense of ours cannot take a linked file: 409.
    let b = outgoing(&app, 'b').await;
    let got = post_save(&app, save(&b, &[pdf_id])).await;
    assert_error(
        &got,
        409,
        "evidence_file_linked",
        Some("evidenceFileIds[0]"),
    );
    // The export counts the files.
    let now = time::OffsetDateTime::now_utc();
    let fmt = |t: time::OffsetDateTime| {
        t.format(&time::format_description::well_known::Rfc3339)
            .unwrap()
    };
    let csv = app
        .req(
            Method::GET,
            &format!(
                "{EXPORT}?from={}&to={}",
                enc(&fmt(now - time::Duration::days(2))),
                enc(&fmt(now + time::Duration::days(2)))
            ),
        )
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = header.iter().position(|h| *h == "evidence_count").unwrap();
    let row: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
    assert_eq!(row[col], "2", "{csv}");
    // A re-save without the PNG unlinks it (versioned); the other expense may then take it.
    let again = post_save(&app, save(&a, &[pdf_id])).await;
    assert_eq!(again.0, 200, "{}", again.1);
    assert_eq!(again.1["evidenceFiles"].as_array().unwrap().len(), 1);
    let change = &again.1["versions"][1]["changes"];
    assert_eq!(
        change,
        &json!([{"field": "evidenceFileIds", "from": format!("{pdf_id},{png_id}"), "to": pdf_id}])
    );
    let png_now = read(
        app.req(Method::GET, &format!("{FILES}/{png_id}"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(png_now.1["expenseId"], Value::Null);
    assert_eq!(post_save(&app, save(&b, &[png_id])).await.0, 201);
}

async fn orphans_are_cleaned_after_a_day(app: TestApp) {
    let a = outgoing(&app, 'c').await;
    let kept = upload(&app, "kept.pdf", PDF).await.1;
    let orphan = upload(&app, "orphan.pdf", PDF).await.1;
    let dropped = upload(&app, "dropped.png", PNG).await.1;
    let id = |v: &Value| v["id"].as_str().unwrap().to_owned();
    assert_eq!(
        post_save(&app, save(&a, &[&id(&kept), &id(&dropped)]))
            .await
            .0,
        201
    );
    app.clock.advance_secs(3600);
    assert_eq!(post_save(&app, save(&a, &[&id(&kept)])).await.0, 200);
    let on_disk = |f: &Value| {
        files_dir(&app)
            .join("evidence")
            .join(&app.t.company_id)
            .join(id(f))
            .exists()
    };
    // 23 hours after the upload: the never-linked file is young enough to stay.
    app.clock.advance_secs(22 * 3600);
    app.pay.prune().unwrap();
    assert!(on_disk(&orphan) && on_disk(&dropped) && on_disk(&kept));
    // A day after the upload the orphan goes; the dropped file a day after it was unlinked.
    app.clock.advance_secs(3600 + 1);
    app.pay.prune().unwrap();
    assert!(!on_disk(&orphan) && on_disk(&dropped));
    let gone = read(
        app.req(Method::GET, &format!("{FILES}/{}", id(&orphan)))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&gone, 404, "not_found", None);
    app.clock.advance_secs(3600);
    app.pay.prune().unwrap();
    app.pay.prune().unwrap();
    assert!(!on_disk(&dropped) && on_disk(&kept));
    for f in [&orphan, &dropped] {
        let got = read(
            app.req(Method::GET, &format!("{FILES}/{}/content", id(f)))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_error(&got, 404, "not_found", None);
    }
    let got = app
        .req(Method::GET, &format!("{FILES}/{}/content", id(&kept)))
        .send()
        .await
        .unwrap();
    assert_eq!(got.bytes().await.unwrap().as_ref(), PDF);
}

on_both_backends!(
    uploads_by_content,
    downloads_are_private_attachments,
    expenses_link_files,
    orphans_are_cleaned_after_a_day,
);
