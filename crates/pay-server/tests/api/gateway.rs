//! The gateway form over HTTP: a browser-style form post with the integration's public form key
//! answers 303 to the hosted checkout; every refusal is an HTML page with the right status.

use pay_domain::tenancy::ports::IntegrationStore;
use reqwest::header::{CACHE_CONTROL, CONTENT_TYPE, LOCATION};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::{read, Tenant, TestApp};
use crate::on_both_backends;

const SHOP: &str = "https://shop.example";
const FORM: &str = "application/x-www-form-urlencoded";
const LINKS: &str = "/api/partner/v1/pay/payment-links";

/// An integration made for the form: its public form key and its own API key pair.
struct FormKey {
    form_key: String,
    key_id: String,
    key_secret: String,
    partner_id: String,
}

async fn form_integration(app: &TestApp, t: &Tenant) -> FormKey {
    let s = app.login_owner(t).await;
    let got = read(
        app.in_session(
            &s,
            Method::POST,
            &format!("/api/partner/v1/companies/{}/integrations", t.company_id),
        )
        .json(&json!({"name": "Shop form", "appSlug": "pay",
                      "allowedOrigins": [SHOP, "http://localhost:3000"]}))
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(got.0, 201, "{}", got.1);
    let i = &got.1["integration"];
    FormKey {
        form_key: i["form_key_id"].as_str().unwrap().to_owned(),
        key_id: i["key_id"].as_str().unwrap().to_owned(),
        key_secret: i["keySecret"].as_str().unwrap().to_owned(),
        partner_id: i["partner_id"].as_str().unwrap().to_owned(),
    }
}

/// Percent-encodes as a browser does for `application/x-www-form-urlencoded`.
fn enc(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'*' | b'-' | b'.' | b'_' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            b => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

fn body(fields: &[(&str, &str)]) -> String {
    fields
        .iter()
        .map(|(k, v)| format!("{}={}", enc(k), enc(v)))
        .collect::<Vec<_>>()
        .join("&")
}

fn gateway(form_key: &str) -> String {
    format!("/gateway/pay/{form_key}")
}

/// A form post as a browser sends it, from `origin` (none when `None`).
async fn submit(
    app: &TestApp,
    form_key: &str,
    origin: Option<&str>,
    fields: &[(&str, &str)],
) -> reqwest::Response {
    let mut req = app
        .anon(Method::POST, &gateway(form_key))
        .header(CONTENT_TYPE, FORM)
        .body(body(fields));
    if let Some(o) = origin {
        req = req.header("origin", o);
    }
    req.send().await.unwrap()
}

/// An HTML error page: status, content type, and the page's text.
struct Page {
    status: StatusCode,
    html: String,
}

impl Page {
    async fn of(res: reqwest::Response) -> Page {
        let status = res.status();
        assert_eq!(
            res.headers()[CONTENT_TYPE],
            "text/html; charset=utf-8",
            "status {status}"
        );
        assert_eq!(res.headers()[CACHE_CONTROL], "no-store");
        assert!(res.headers().contains_key("content-security-policy"));
        let html = res.text().await.unwrap();
        assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
        assert!(html.contains("<html lang=\"en\""), "{html}");
        assert!(html.contains("<h1>"), "{html}");
        // Self-contained: nothing loaded from elsewhere.
        for external in ["<script", "<link", "src=", "href="] {
            assert!(!html.contains(external), "{external} in {html}");
        }
        Page { status, html }
    }

    #[track_caller]
    fn assert(&self, status: u16, code: &str, field: Option<&str>) {
        assert_eq!(self.status.as_u16(), status, "{}", self.html);
        assert!(
            self.html.contains(&format!("data-error-code=\"{code}\"")),
            "code {code}: {}",
            self.html
        );
        match field {
            Some(f) => assert!(
                self.html.contains(&format!("data-field=\"{f}\""))
                    && self.html.contains(&format!("<code>{f}</code>")),
                "field {f}: {}",
                self.html
            ),
            None => assert!(!self.html.contains("data-field="), "{}", self.html),
        }
    }
}

async fn detail(app: &TestApp, t: &Tenant, uid: &str) -> (StatusCode, Value) {
    read(
        app.as_tenant(t, Method::GET, &format!("{LINKS}/{uid}"))
            .send()
            .await
            .unwrap(),
    )
    .await
}

/// The uid at the end of a checkout URL.
fn uid_of(location: &str) -> String {
    location
        .strip_prefix("https://pay.test.example/pay/")
        .unwrap_or_else(|| panic!("not a checkout URL: {location}"))
        .to_owned()
}

async fn a_form_post_redirects_to_checkout(app: TestApp) {
    let k = form_integration(&app, &app.t).await;
    let res = submit(
        &app,
        &k.form_key,
        Some(SHOP),
        &[
            ("amount", "12.50"),
            ("title", "Order 42 – two mugs"),
            ("description", "Blue & white <glazed>"),
            ("orderId", "42"),
            ("customerEmail", "payer@example.com"),
            ("clientId", "cus_1"),
            ("successUrl", "https://shop.example/ok?o=42"),
            ("failureUrl", "https://shop.example/fail"),
            ("returnUrl", "https://shop.example/back"),
            ("currency", "USDC"),
            ("metadata[cart]", "7"),
            ("metadata[note]", "gift wrap"),
            ("metadata[empty]", ""),
        ],
    )
    .await;
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    assert_eq!(res.headers()[CACHE_CONTROL], "no-store");
    let location = res.headers()[LOCATION].to_str().unwrap().to_owned();
    let uid = uid_of(&location);

    // The link exists with the fields, in the integration's company, made by its key.
    let (status, link) = detail(&app, &app.t, &uid).await;
    assert_eq!(status, 200, "{link}");
    assert_eq!(link["publicUrl"], location);
    assert_eq!(link["status"], "active");
    let p = &link["payload"];
    assert_eq!(p["amount"], "12.50");
    assert_eq!(p["title"], "Order 42 – two mugs");
    assert_eq!(p["description"], "Blue & white <glazed>");
    assert_eq!(p["orderId"], "42");
    assert_eq!(p["customerEmail"], "payer@example.com");
    assert_eq!(p["clientId"], "cus_1");
    assert_eq!(p["successUrl"], "https://shop.example/ok?o=42");
    assert_eq!(p["failureUrl"], "https://shop.example/fail");
    assert_eq!(p["returnUrl"], "https://shop.example/back");
    assert_eq!(p["currency"], "USDC");
    assert_eq!(
        p["metadata"],
        json!({"cart": "7", "note": "gift wrap", "empty": ""})
    );
    // Server-owned fields injected as on the JSON route.
    assert_eq!(p["merchantName"], "Acme Goods");
    assert_eq!(p["runtimeMode"], "merchant_target_net_v2");
    assert_eq!(p["expirationTime"], "24h");

    // The same fields through the JSON route with the integration's key: the same payload.
    let got = read(
        app.anon(Method::POST, LINKS)
            .header("x-svc-key-id", &k.key_id)
            .header("x-svc-key-secret", &k.key_secret)
            .json(&json!({
                "amount": "12.50", "title": "Order 42 – two mugs",
                "description": "Blue & white <glazed>", "orderId": "42",
                "customerEmail": "payer@example.com", "clientId": "cus_1",
                "successUrl": "https://shop.example/ok?o=42",
                "failureUrl": "https://shop.example/fail",
                "returnUrl": "https://shop.example/back", "currency": "USDC",
                "metadata": {"cart": "7", "note": "gift wrap", "empty": ""}
            }))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(got.0, 201, "{}", got.1);
    assert_eq!(got.1["payload"], link["payload"]);

    // The form post counts as a use of the integration.
    let s = app.login_owner(&app.t).await;
    let list = read(
        app.in_session(
            &s,
            Method::GET,
            &format!(
                "/api/partner/v1/companies/{}/integrations",
                app.t.company_id
            ),
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    let mine = list.1["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["partner_id"] == k.partner_id.as_str())
        .unwrap();
    assert!(mine["lastUsedAt"].is_string(), "{mine}");

    // Another origin of the list, and the checkout URL of a minimal form.
    let res = submit(
        &app,
        &k.form_key,
        Some("http://localhost:3000"),
        &[("amount", "1"), ("title", ""), ("customerEmail", "")],
    )
    .await;
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    let uid = uid_of(res.headers()[LOCATION].to_str().unwrap());
    let (_, link) = detail(&app, &app.t, &uid).await;
    assert!(link["payload"].get("title").is_none(), "blank is not given");
    assert!(link["payload"].get("customerEmail").is_none());
}

async fn origin_must_be_allowed(app: TestApp) {
    let k = form_integration(&app, &app.t).await;
    let ok = [("amount", "5")];
    for origin in [
        Some("https://evil.example"),
        Some("http://shop.example"),
        Some("https://shop.example:8443"),
        Some("null"),
        None,
    ] {
        let page = Page::of(submit(&app, &k.form_key, origin, &ok).await).await;
        page.assert(403, "forbidden", None);
    }
    // The page names the refused origin, escaped.
    let page = Page::of(submit(&app, &k.form_key, Some("https://a<b>.example"), &ok).await).await;
    page.assert(403, "forbidden", None);
    assert!(
        page.html.contains("https://a&lt;b&gt;.example"),
        "{}",
        page.html
    );
    // Refused before the body is read: a bad body still gets the 403.
    let res = app
        .anon(Method::POST, &gateway(&k.form_key))
        .header("origin", "https://evil.example")
        .header(CONTENT_TYPE, "application/json")
        .body("{}")
        .send()
        .await
        .unwrap();
    Page::of(res).await.assert(403, "forbidden", None);
    // The bootstrap key has no allowed origins: it takes no forms.
    let store = app.store.clone();
    let company = pay_domain::kernel::ids::CompanyId::parse(&app.t.company_id).unwrap();
    let bootstrap_form_key = tokio::task::spawn_blocking(move || {
        store
            .integrations(company)
            .unwrap()
            .into_iter()
            .find(|i| i.allowed_origins.is_empty())
            .unwrap()
            .form_key_id
            .to_string()
    })
    .await
    .unwrap();
    Page::of(submit(&app, &bootstrap_form_key, Some(SHOP), &ok).await)
        .await
        .assert(403, "forbidden", None);
    // Nothing was created.
    let (_, list) = read(app.req(Method::GET, LINKS).send().await.unwrap()).await;
    assert_eq!(list["data"], json!([]));
}

/// A page without its per-response CSP nonce (the one part that differs between answers).
fn without_nonce(html: &str) -> String {
    let mut out = String::new();
    let mut rest = html;
    while let Some(i) = rest.find("nonce=\"") {
        out.push_str(&rest[..i]);
        rest = &rest[i + 7..];
        rest = rest.find('"').map_or("", |j| &rest[j + 1..]);
    }
    out + rest
}

async fn unknown_and_disabled_keys_look_the_same(app: TestApp) {
    let k = form_integration(&app, &app.t).await;
    let unknown = Page::of(
        submit(
            &app,
            "pk_pay_ZZZZZZZZZZZZZZZZZZZZZZZZ",
            Some(SHOP),
            &[("amount", "5")],
        )
        .await,
    )
    .await;
    unknown.assert(404, "not_found", None);
    for key in ["pk_pay_short", "nothing", &k.key_id] {
        let page = Page::of(submit(&app, key, Some(SHOP), &[("amount", "5")]).await).await;
        page.assert(404, "not_found", None);
        assert_eq!(without_nonce(&page.html), without_nonce(&unknown.html));
    }
    // Disable the integration: the same page, byte for byte.
    let s = app.login_owner(&app.t).await;
    let res = app
        .in_session(
            &s,
            Method::PATCH,
            &format!(
                "/api/partner/v1/companies/{}/integrations/{}",
                app.t.company_id, k.partner_id
            ),
        )
        .json(&json!({"enabled": false}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let disabled = Page::of(submit(&app, &k.form_key, Some(SHOP), &[("amount", "5")]).await).await;
    assert_eq!(disabled.status, unknown.status);
    assert_eq!(without_nonce(&disabled.html), without_nonce(&unknown.html));
    // A key is checked before anything else: no origin and no form, still the 404.
    let res = app
        .anon(Method::POST, &gateway(&k.form_key))
        .header(CONTENT_TYPE, "text/plain")
        .body("amount=5")
        .send()
        .await
        .unwrap();
    assert_eq!(
        without_nonce(&Page::of(res).await.html),
        without_nonce(&unknown.html)
    );
}

/// Form fields, and the code and field of the page they get.
type Case<'a> = (&'a [(&'a str, &'a str)], &'a str, Option<&'a str>);

async fn field_errors_are_pages_naming_the_field(app: TestApp) {
    let k = form_integration(&app, &app.t).await;
    let cases: &[Case] = &[
        (&[("amount", "12.5.0")], "validation_failed", Some("amount")),
        (
            &[("amount", "1.1234567")],
            "validation_failed",
            Some("amount"),
        ),
        (&[("amount", "-1")], "validation_failed", Some("amount")),
        (&[("amount", "007")], "validation_failed", Some("amount")),
        (&[("amount", "")], "validation_failed", Some("amount")),
        (
            &[("title", "no amount")],
            "validation_failed",
            Some("amount"),
        ),
        (
            &[("amount", "5"), ("customerEmail", "nope")],
            "validation_failed",
            Some("customerEmail"),
        ),
        (
            &[("amount", "5"), ("successUrl", "javascript:alert(1)")],
            "validation_failed",
            Some("successUrl"),
        ),
        (
            &[("amount", "5"), ("amount", "6")],
            "validation_failed",
            Some("amount"),
        ),
        (
            &[("amount", "5"), ("fiatCurrency", "USD")],
            "unknown_field",
            Some("fiatCurrency"),
        ),
        (
            &[("amount", "5"), ("merchantName", "Evil")],
            "unknown_field",
            Some("merchantName"),
        ),
        (
            &[("amount", "5"), ("asset", "eip155:1/erc20:0xnope")],
            "invalid_destination_asset",
            Some("asset"),
        ),
    ];
    for (fields, code, field) in cases {
        let page = Page::of(submit(&app, &k.form_key, Some(SHOP), fields).await).await;
        page.assert(400, code, *field);
    }
    // Metadata limits of the JSON route: at most 50 keys.
    let names: Vec<String> = (0..51).map(|i| format!("metadata[k{i}]")).collect();
    let mut fields: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "v")).collect();
    fields.push(("amount", "5"));
    Page::of(submit(&app, &k.form_key, Some(SHOP), &fields).await)
        .await
        .assert(400, "validation_failed", Some("metadata"));
    // A hostile field name comes back escaped.
    let page = Page::of(
        submit(
            &app,
            &k.form_key,
            Some(SHOP),
            &[("amount", "5"), ("<script>alert(1)</script>", "x")],
        )
        .await,
    )
    .await;
    assert_eq!(page.status, 400);
    assert!(page.html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    // Nothing was created.
    let (_, list) = read(app.req(Method::GET, LINKS).send().await.unwrap()).await;
    assert_eq!(list["data"], json!([]));
}

async fn only_urlencoded_forms_of_bounded_size(app: TestApp) {
    let k = form_integration(&app, &app.t).await;
    let post = |content_type: &'static str, body: Vec<u8>| {
        app.anon(Method::POST, &gateway(&k.form_key))
            .header("origin", SHOP)
            .header(CONTENT_TYPE, content_type)
            .body(body)
            .send()
    };
    for ct in [
        "application/json",
        "multipart/form-data; boundary=x",
        "text/plain",
    ] {
        let page = Page::of(post(ct, b"amount=5".to_vec()).await.unwrap()).await;
        page.assert(415, "unsupported_media_type", None);
    }
    let res = app
        .anon(Method::POST, &gateway(&k.form_key))
        .header("origin", SHOP)
        .body("amount=5")
        .send()
        .await
        .unwrap();
    Page::of(res)
        .await
        .assert(415, "unsupported_media_type", None);
    // A charset parameter is fine.
    let res = post(
        "application/x-www-form-urlencoded; charset=UTF-8",
        b"amount=5".to_vec(),
    )
    .await
    .unwrap();
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    // Over 64 KiB.
    let big = format!("amount=5&description={}", "a".repeat(64 * 1024));
    Page::of(post(FORM, big.into_bytes()).await.unwrap())
        .await
        .assert(413, "payload_too_large", None);
    // Broken percent-encoding and Latin-1 bytes are refused, not mangled.
    for bad in [
        &b"amount=5&title=%E9t%E9"[..],
        b"amount=5&title=%zz",
        b"amount=5&t\xe9=1",
    ] {
        Page::of(post(FORM, bad.to_vec()).await.unwrap())
            .await
            .assert(400, "invalid_form", None);
    }
    // Another method on the path.
    let res = app
        .anon(Method::GET, &gateway(&k.form_key))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 405);
}

async fn form_links_belong_to_the_integrations_company(app: TestApp) {
    let k = form_integration(&app, &app.t).await;
    let other = app.new_tenant("Other Shop").await;
    let res = submit(&app, &k.form_key, Some(SHOP), &[("amount", "5")]).await;
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    let uid = uid_of(res.headers()[LOCATION].to_str().unwrap());
    // The company's other key sees it in its list and detail ...
    let (status, _) = detail(&app, &app.t, &uid).await;
    assert_eq!(status, 200);
    let (_, list) = read(app.req(Method::GET, LINKS).send().await.unwrap()).await;
    assert_eq!(list["data"][0]["uid"], uid.as_str());
    // ... another company's key does not.
    let (status, body) = detail(&app, &other, &uid).await;
    assert_eq!(status, 404, "{body}");
    assert_eq!(body["errorCode"], "not_found");
    let (_, list) = read(
        app.as_tenant(&other, Method::GET, LINKS)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(list["data"], json!([]));
    // And another company's form key creates in that company, not in ours.
    let theirs = form_integration(&app, &other).await;
    let res = submit(&app, &theirs.form_key, Some(SHOP), &[("amount", "6")]).await;
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    let their_uid = uid_of(res.headers()[LOCATION].to_str().unwrap());
    assert_eq!(detail(&app, &app.t, &their_uid).await.0, 404);
    assert_eq!(detail(&app, &other, &their_uid).await.0, 200);
}

on_both_backends!(
    a_form_post_redirects_to_checkout,
    origin_must_be_allowed,
    unknown_and_disabled_keys_look_the_same,
    field_errors_are_pages_naming_the_field,
    only_urlencoded_forms_of_bounded_size,
    form_links_belong_to_the_integrations_company,
);
