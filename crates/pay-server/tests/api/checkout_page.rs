//! The hosted checkout page over HTTP, without a browser: every state renders within the size
//! budget with its security headers, the no-JavaScript path works through form posts answered
//! 303, nothing is loaded from another origin, and forms from another origin are refused.

use reqwest::header::HeaderMap;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::{read, TestApp};
use crate::on_both_backends;

const ETH: &str = "eip155:1/slip44:60";
const BASE_USDC: &str = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
/// The configured public origin in the test harness.
const PUBLIC_ORIGIN: &str = "https://pay.test.example";
/// The page budget: HTML with its inline style and script.
const MAX_PAGE_BYTES: usize = 60 * 1024;

/// A rendered page.
struct Page {
    status: StatusCode,
    headers: HeaderMap,
    html: String,
}

impl Page {
    fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
    }

    /// The `<h1>` text.
    fn heading(&self) -> &str {
        let start = self.html.find("<h1>").map(|i| i + 4).unwrap_or(0);
        let end = self.html[start..].find("</h1>").unwrap_or(0);
        &self.html[start..start + end]
    }

    /// Asserts what every checkout page must hold: headers, a CSP nonce matching the inline
    /// script and style, the size budget, no resource from another origin (`allowed` are the
    /// merchant's redirect links and logo).
    #[track_caller]
    fn check(&self, allowed: &[&str]) {
        assert_eq!(self.header("content-type"), "text/html; charset=utf-8");
        assert_eq!(self.header("cache-control"), "no-store");
        assert_eq!(self.header("x-content-type-options"), "nosniff");
        assert_eq!(self.header("referrer-policy"), "same-origin");
        let csp = self.header("content-security-policy");
        for part in [
            "default-src 'none'",
            "connect-src 'self'",
            "img-src 'self' data:",
            "form-action 'self'",
            "frame-ancestors 'none'",
            "base-uri 'none'",
        ] {
            assert!(csp.contains(part), "{part} in {csp}");
        }
        let nonce = csp
            .split("script-src 'nonce-")
            .nth(1)
            .and_then(|r| r.split('\'').next())
            .expect("a script nonce");
        assert!(nonce.len() >= 22, "{nonce}");
        assert!(csp.contains(&format!("style-src 'nonce-{nonce}'")), "{csp}");
        assert_eq!(self.html.matches("<script").count(), 1);
        assert!(self.html.contains(&format!("<script nonce=\"{nonce}\">")));
        assert!(self.html.contains(&format!("<style nonce=\"{nonce}\">")));
        assert!(
            self.html.len() <= MAX_PAGE_BYTES,
            "{} is {} bytes",
            self.heading(),
            self.html.len()
        );
        for r in references(&self.html) {
            let local = r.starts_with('/') && !r.starts_with("//");
            assert!(
                local || allowed.iter().any(|a| r.starts_with(a)),
                "foreign reference {r:?} on {:?}",
                self.heading()
            );
        }
    }
}

/// Every `src`, `href`, `action`, CSS `url(` and `@import` target of a page.
fn references(html: &str) -> Vec<String> {
    let mut out = Vec::new();
    for attr in ["src=\"", "href=\"", "action=\"", "url(", "@import"] {
        let mut rest = html;
        while let Some(i) = rest.find(attr) {
            rest = &rest[i + attr.len()..];
            let end = rest.find(['"', ')', ';']).unwrap_or(rest.len());
            out.push(rest[..end].trim().to_owned());
        }
    }
    out
}

async fn get(app: &TestApp, path: &str) -> Page {
    let res = app.anon(Method::GET, path).send().await.unwrap();
    let status = res.status();
    let headers = res.headers().clone();
    Page {
        status,
        headers,
        html: res.text().await.unwrap(),
    }
}

/// Percent-encodes as a browser does for `application/x-www-form-urlencoded`.
fn encode(fields: &[(&str, &str)]) -> String {
    let enc = |s: &str| {
        let mut out = String::new();
        for b in s.bytes() {
            match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'*' => {
                    out.push(b as char)
                }
                b' ' => out.push('+'),
                b => out.push_str(&format!("%{b:02X}")),
            }
        }
        out
    };
    fields
        .iter()
        .map(|(k, v)| format!("{}={}", enc(k), enc(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// A form post as a browser on the page sends it.
async fn form(app: &TestApp, path: &str, fields: &[(&str, &str)], origin: Option<&str>) -> Page {
    let mut req = app
        .anon(Method::POST, path)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(encode(fields));
    if let Some(o) = origin {
        req = req.header("origin", o);
    }
    let res = req.send().await.unwrap();
    Page {
        status: res.status(),
        headers: res.headers().clone(),
        html: res.text().await.unwrap(),
    }
}

/// Posts a form expecting 303 to the session's page; returns the `Location`.
#[track_caller]
fn see_other(p: &Page, uid: &str) -> String {
    assert_eq!(p.status, 303, "{}", p.html);
    assert_eq!(p.header("cache-control"), "no-store");
    let to = p.header("location").to_owned();
    assert!(to.starts_with(&format!("/pay/{uid}?session=")), "{to}");
    to
}

fn session_of(location: &str) -> String {
    location.split("session=").nth(1).unwrap().to_owned()
}

async fn sandbox(app: &TestApp, uid: &str, body: Value) -> Value {
    let got = read(
        app.req(
            Method::POST,
            &format!("/api/partner/v1/pay/sandbox/payment-links/{uid}/events"),
        )
        .json(&body)
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(got.0, 200, "{}", got.1);
    got.1
}

async fn session_json(app: &TestApp, uid: &str, id: &str) -> Value {
    let got = read(
        app.anon(
            Method::GET,
            &format!("/api/public/checkout/{uid}/sessions/{id}"),
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(got.0, 200, "{}", got.1);
    got.1
}

const SHOP: &[&str] = &["https://shop.example/"];

async fn shop_link(app: &TestApp, amount: &str) -> String {
    let l = app
        .create_link(json!({
            "amount": amount,
            "title": "Two mugs <b>&</b> a \"teapot\"",
            "description": "<script>alert(1)</script>",
            "successUrl": "https://shop.example/thanks?order=1",
            "failureUrl": "https://shop.example/sorry",
            "returnUrl": "https://shop.example/cart",
        }))
        .await;
    l["uid"].as_str().unwrap().to_owned()
}

/// Starts a session with `asset` through the page's form; returns the session page path.
async fn start(app: &TestApp, uid: &str, asset: &str) -> String {
    let p = form(
        app,
        &format!("/pay/{uid}/start"),
        &[("payAsset", asset)],
        Some(PUBLIC_ORIGIN),
    )
    .await;
    see_other(&p, uid)
}

async fn act(app: &TestApp, uid: &str, session: &str, action: &str) -> String {
    let p = form(
        app,
        &format!("/pay/{uid}/s/{session}/{action}"),
        &[],
        Some(PUBLIC_ORIGIN),
    )
    .await;
    see_other(&p, uid)
}

async fn the_no_js_path_through_every_state(app: TestApp) {
    let mut sizes: Vec<(String, usize)> = Vec::new();
    let uid = shop_link(&app, "10").await;

    // Choose an asset.
    let p = get(&app, &format!("/pay/{uid}")).await;
    assert_eq!(p.status, 200);
    p.check(SHOP);
    sizes.push(("choose".into(), p.html.len()));
    assert_eq!(p.heading(), "Pay Acme Goods");
    assert!(p.html.contains(&format!("action=\"/pay/{uid}/start\"")));
    assert!(p.html.contains(&format!("value=\"{ETH}\"")));
    assert!(p.html.contains("10 USDC"));
    assert!(p
        .html
        .contains("Two mugs &lt;b&gt;&amp;&lt;/b&gt; a &quot;teapot&quot;"));
    assert!(p.html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(!p.html.contains("<script>alert"));
    assert!(p.html.contains("href=\"https://shop.example/cart\""));
    // A fresh nonce on every response.
    let again = get(&app, &format!("/pay/{uid}")).await;
    assert_ne!(
        p.header("content-security-policy"),
        again.header("content-security-policy")
    );

    // Review: the quote, refresh, accept.
    let to = start(&app, &uid, BASE_USDC).await;
    let id = session_of(&to);
    let p = get(&app, &to).await;
    assert_eq!(p.status, 200);
    p.check(SHOP);
    sizes.push(("review".into(), p.html.len()));
    assert_eq!(p.heading(), "Review your payment");
    assert!(p.html.contains("10 USDC"));
    assert!(p.html.contains("data-left=\"600\""), "a 10-minute quote");
    assert!(!p.html.contains("http-equiv=\"refresh\""));
    assert_eq!(
        see_other(
            &form(&app, &format!("/pay/{uid}/s/{id}/refresh"), &[], None).await,
            &uid
        ),
        to
    );
    assert_eq!(act(&app, &uid, &id, "accept").await, to);

    // Deposit: address, exact amount, QR, countdown, no-JS refresh.
    let s = session_json(&app, &uid, &id).await;
    assert_eq!(s["status"], "pending");
    let address = s["depositAddress"].as_str().unwrap();
    let p = get(&app, &to).await;
    p.check(SHOP);
    sizes.push(("deposit".into(), p.html.len()));
    assert_eq!(p.heading(), "Send your payment");
    assert!(p.html.contains(&format!(
        "<code class=\"addr\" id=\"address\">{address}</code>"
    )));
    assert!(p
        .html
        .contains("<span class=\"mono\" id=\"amount\">10</span> USDC"));
    assert!(p.html.contains("<svg class=\"qr\" role=\"img\""));
    assert!(
        p.html.contains("data-left=\"1800\""),
        "a 30-minute deposit window"
    );
    assert!(p
        .html
        .contains("<noscript><meta http-equiv=\"refresh\" content=\"5\"></noscript>"));
    assert!(p.html.contains(&format!(
        "data-poll=\"/api/public/checkout/{uid}/sessions/{id}\""
    )));
    // Accepting twice (a double click) just shows the session as it is.
    assert_eq!(act(&app, &uid, &id, "accept").await, to);

    // Paid: success with the redirect.
    sandbox(
        &app,
        &uid,
        json!({"type": "deposit", "amount": s["requiredSellAmount"]}),
    )
    .await;
    let p = get(&app, &to).await;
    p.check(SHOP);
    sizes.push(("complete".into(), p.html.len()));
    assert_eq!(p.heading(), "Payment complete");
    assert!(p
        .html
        .contains("data-redirect=\"https://shop.example/thanks?order=1\" data-delay=\"2000\""));
    assert!(p.html.contains("<noscript><meta http-equiv=\"refresh\" content=\"3;url=https://shop.example/thanks?order=1\"></noscript>"));
    assert!(!p.html.contains("data-poll=\""));

    // Cancelled from the review step.
    let to = start(&app, &uid, ETH).await;
    let id = session_of(&to);
    act(&app, &uid, &id, "cancel").await;
    let p = get(&app, &to).await;
    p.check(SHOP);
    sizes.push(("cancelled".into(), p.html.len()));
    assert_eq!(p.heading(), "Payment cancelled");
    assert!(p.html.contains("href=\"https://shop.example/sorry\""));
    assert!(p.html.contains(&format!("href=\"/pay/{uid}\">Try again")));

    // The deposit request expires.
    let to = start(&app, &uid, ETH).await;
    act(&app, &uid, &session_of(&to), "accept").await;
    sandbox(&app, &uid, json!({"type": "expire"})).await;
    let p = get(&app, &to).await;
    p.check(SHOP);
    sizes.push(("expired".into(), p.html.len()));
    assert_eq!(p.heading(), "This payment request expired");

    // The processor fails.
    let to = start(&app, &uid, ETH).await;
    act(&app, &uid, &session_of(&to), "accept").await;
    sandbox(&app, &uid, json!({"type": "fail"})).await;
    let p = get(&app, &to).await;
    p.check(SHOP);
    sizes.push(("failed".into(), p.html.len()));
    assert_eq!(p.heading(), "Payment failed");
    assert!(p
        .html
        .contains("the processor could not complete the payment"));

    // Underpaid: what is still due; then a refund with the payer's address.
    let to = start(&app, &uid, BASE_USDC).await;
    let id = session_of(&to);
    act(&app, &uid, &id, "accept").await;
    sandbox(&app, &uid, json!({"type": "deposit", "amount": "4"})).await;
    let p = get(&app, &to).await;
    p.check(SHOP);
    sizes.push(("underpaid".into(), p.html.len()));
    assert_eq!(p.heading(), "Part of your payment arrived");
    assert!(
        p.html
            .contains("<dt>Still due</dt><dd><strong>6 USDC</strong>"),
        "{}",
        p.html
    );
    assert!(p.html.contains("<svg class=\"qr\""));
    sandbox(&app, &uid, json!({"type": "refund"})).await;
    let p = get(&app, &to).await;
    p.check(SHOP);
    sizes.push(("refund_pending".into(), p.html.len()));
    assert_eq!(p.heading(), "Your payment will be refunded");
    assert!(p
        .html
        .contains(&format!("action=\"/pay/{uid}/s/{id}/refund-address\"")));
    let bad = form(
        &app,
        &format!("/pay/{uid}/s/{id}/refund-address"),
        &[("address", "not an address!")],
        Some(PUBLIC_ORIGIN),
    )
    .await;
    assert_eq!(bad.status, 400);
    bad.check(SHOP);
    assert!(bad.html.contains("id=\"refund-error\" role=\"alert\""));
    assert!(
        bad.html.contains("must be an address on Base ("),
        "{}",
        bad.html
    );
    let back = form(
        &app,
        &format!("/pay/{uid}/s/{id}/refund-address"),
        &[("address", "0x52908400098527886E0F7030069857D2E4169EE7")],
        Some(PUBLIC_ORIGIN),
    )
    .await;
    assert_eq!(see_other(&back, &uid), to);
    let p = get(&app, &to).await;
    p.check(SHOP);
    assert!(p
        .html
        .contains("<code>0x52908400098527886E0F7030069857D2E4169EE7</code>"));
    // A second address (another tab, or someone else with the URL) is refused on the page:
    // 409, the address kept, and why.
    let again = form(
        &app,
        &format!("/pay/{uid}/s/{id}/refund-address"),
        &[("address", "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359")],
        Some(PUBLIC_ORIGIN),
    )
    .await;
    assert_eq!(again.status, 409, "{}", again.html);
    again.check(SHOP);
    assert_eq!(again.heading(), "Your payment will be refunded");
    assert!(again
        .html
        .contains("<code>0x52908400098527886E0F7030069857D2E4169EE7</code>"));
    assert!(!again
        .html
        .contains("0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359"));
    assert!(
        again.html.contains(
            "id=\"refund-error\" role=\"alert\">A refund address was already given for this payment; it cannot be changed."
        ),
        "{}",
        again.html
    );
    sandbox(&app, &uid, json!({"type": "refund"})).await;
    let p = get(&app, &to).await;
    p.check(SHOP);
    sizes.push(("refunded".into(), p.html.len()));
    assert_eq!(p.heading(), "Payment refunded");

    // Skipping the review goes straight to the deposit.
    let l = app
        .create_link(json!({"amount": "5", "skipQuoteAcceptance": true}))
        .await;
    let quick = l["uid"].as_str().unwrap();
    let to = start(&app, quick, BASE_USDC).await;
    let p = get(&app, &to).await;
    p.check(&[]);
    assert_eq!(p.heading(), "Send your payment");

    for (state, bytes) in &sizes {
        eprintln!("checkout page size: {state} {bytes} bytes");
    }
}

async fn stopped_links_show_a_clear_page(app: TestApp) {
    let uid = shop_link(&app, "10").await;
    let status = |s: &'static str| {
        let uid = uid.clone();
        let app = &app;
        async move {
            let got = read(
                app.req(
                    Method::PATCH,
                    &format!("/api/partner/v1/pay/payment-links/{uid}"),
                )
                .json(&json!({ "status": s }))
                .send()
                .await
                .unwrap(),
            )
            .await;
            assert_eq!(got.0, 200, "{}", got.1);
        }
    };
    // A quote waiting on the link when it is paused.
    let waiting = start(&app, &uid, ETH).await;
    status("paused").await;
    let p = get(&app, &format!("/pay/{uid}")).await;
    assert_eq!(p.status, 200);
    p.check(SHOP);
    eprintln!("checkout page size: paused {} bytes", p.html.len());
    assert_eq!(p.heading(), "This payment link is paused");
    assert!(!p.html.contains("<form"));
    assert!(p.html.contains("data-state=\"paused\""));
    // A start posted from a page loaded earlier: 409 with the same clear page.
    let p = form(
        &app,
        &format!("/pay/{uid}/start"),
        &[("payAsset", ETH)],
        Some(PUBLIC_ORIGIN),
    )
    .await;
    assert_eq!(p.status, 409);
    p.check(SHOP);
    assert_eq!(p.heading(), "This payment link is paused");
    assert!(p.html.contains("it takes no new payments"));
    // The waiting session ended with the pause; its page says so, without a new start.
    let p = get(&app, &waiting).await;
    p.check(SHOP);
    assert!(!p.html.contains("Try again"));
    assert!(!p.html.contains("data-poll=\""));

    status("archived").await;
    let p = get(&app, &format!("/pay/{uid}")).await;
    assert_eq!(p.status, 200);
    p.check(SHOP);
    assert_eq!(p.heading(), "This payment link is no longer available");

    let l = app
        .create_link(json!({"amount": "3", "expirationTime": "15m"}))
        .await;
    let short = l["uid"].as_str().unwrap();
    app.clock.advance_secs(16 * 60);
    let p = get(&app, &format!("/pay/{short}")).await;
    assert_eq!(p.status, 200);
    p.check(&[]);
    assert_eq!(p.heading(), "This payment link has expired");
}

/// A start posted from each of `origins` is the 403 page, and none of them started a session.
async fn starts_refused_from(app: &TestApp, uid: &str, origins: &[&str]) {
    let path = format!("/pay/{uid}/start");
    for origin in origins {
        let p = form(app, &path, &[("payAsset", ETH)], Some(origin)).await;
        assert_eq!(p.status, 403, "{origin}");
        p.check(&[]);
        assert_eq!(p.heading(), "This form came from another site");
    }
    let got = read(
        app.req(
            Method::GET,
            &format!("/api/partner/v1/pay/payment-links/{uid}"),
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(got.1["latestSession"], Value::Null);
}

async fn foreign_origins_and_bad_requests_are_refused(app: TestApp) {
    let uid = shop_link(&app, "10").await;
    let path = format!("/pay/{uid}/start");
    starts_refused_from(
        &app,
        &uid,
        &[
            "https://evil.example",
            "null",
            "https://pay.test.example.evil.example",
            "http://pay.test.example",
            "https://pay.test.example:8443",
        ],
    )
    .await;
    // The public origin, in any case, or no Origin at all, is accepted.
    let p = form(
        &app,
        &path,
        &[("payAsset", ETH)],
        Some("HTTPS://PAY.TEST.EXAMPLE"),
    )
    .await;
    let to = see_other(&p, &uid);
    let id = session_of(&to);
    let p = form(
        &app,
        &format!("/pay/{uid}/s/{id}/cancel"),
        &[],
        Some("https://evil.example"),
    )
    .await;
    assert_eq!(p.status, 403);
    assert_eq!(session_json(&app, &uid, &id).await["status"], "quote");

    // Not a form, an unknown field, no choice, an asset the link does not take.
    let p = app
        .anon(Method::POST, &path)
        .json(&json!({"payAsset": ETH}))
        .send()
        .await
        .unwrap();
    assert_eq!(p.status(), 415);
    // A form past the one body reader's cap (64 KiB): 413, with the page's own answer.
    let p = app
        .anon(Method::POST, &path)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("payAsset={}", "a".repeat(64 * 1024)))
        .send()
        .await
        .unwrap();
    assert_eq!(p.status(), 413);
    assert!(p.text().await.unwrap().contains("The form is too large"));
    for (fields, says) in [
        (vec![("payAsset", ETH), ("amount", "1")], "amount"),
        (vec![], "Choose what to pay with"),
        (
            vec![("payAsset", "eip155:1/erc20:0xnope")],
            "not an asset this link can be paid with",
        ),
    ] {
        let p = form(&app, &path, &fields, None).await;
        assert_eq!(p.status, 400, "{fields:?}");
        p.check(SHOP);
        assert!(p.html.contains(says), "{says}: {}", p.html);
        assert!(p.html.contains("role=\"alert\""));
    }
    let p = form(
        &app,
        &format!("/pay/{uid}/s/{id}/accept"),
        &[("x", "1")],
        None,
    )
    .await;
    assert_eq!(p.status, 400);

    // Unknown link and session: HTML 404s.
    let p = get(&app, "/pay/unknownlink00").await;
    assert_eq!(p.status, 404);
    p.check(&[]);
    assert_eq!(p.heading(), "Payment link not found");
    for bad in ["nope", "00000000-0000-4000-8000-000000000001"] {
        let p = get(&app, &format!("/pay/{uid}?session={bad}")).await;
        assert_eq!(p.status, 404, "{bad}");
        p.check(SHOP);
        assert_eq!(p.heading(), "Payment not found");
        let p = form(&app, &format!("/pay/{uid}/s/{bad}/accept"), &[], None).await;
        assert_eq!(p.status, 404, "{bad}");
    }
    // Another method on a page path is a 405.
    let res = app
        .anon(Method::PUT, &format!("/pay/{uid}"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 405);
}

async fn merchant_branding_reaches_the_page_and_its_policy(app: TestApp) {
    let got = read(
        app.anon(Method::POST, "/api/public/anonymous-payment-links")
            .json(&json!({
                "amount": "0.05",
                "title": "Tip jar",
                "settlement": {"priorities": [
                    {"asset": ETH, "address": "0x52908400098527886E0F7030069857D2E4169EE7"}
                ]},
                "branding": {"name": "Bob's <stall>", "theme": "dark", "logoUrl": "https://cdn.bob.example/logo.png"}
            }))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(got.0, 201, "{}", got.1);
    let uid = got.1["uid"].as_str().unwrap();
    let p = get(&app, &format!("/pay/{uid}")).await;
    assert_eq!(p.status, 200);
    p.check(&["https://cdn.bob.example/logo.png"]);
    assert!(p.html.contains("class=\"t-dark\""));
    assert!(p.html.contains("Bob&#39;s &lt;stall&gt;"));
    assert!(p
        .html
        .contains("<img src=\"https://cdn.bob.example/logo.png\""));
    assert!(p
        .header("content-security-policy")
        .contains("img-src 'self' data: https://cdn.bob.example;"));
}

/// The first screen is cached for a second per worker; a pause in this process drops it at once
/// (the links service tells the page cache through its observer port).
async fn a_paused_link_is_not_served_from_the_page_cache(app: TestApp) {
    let uid = shop_link(&app, "10").await;
    // Rendered, then served from the cache (one client: one connection, one worker).
    for _ in 0..3 {
        let p = get(&app, &format!("/pay/{uid}")).await;
        assert_eq!(p.status, 200);
        assert!(p.html.contains("data-state=\"active\""), "{}", p.html);
    }
    let res = app
        .req(
            Method::PATCH,
            &format!("/api/partner/v1/pay/payment-links/{uid}"),
        )
        .json(&json!({ "status": "paused" }))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let p = get(&app, &format!("/pay/{uid}")).await;
    assert_eq!(p.heading(), "This payment link is paused");
    assert!(p.html.contains("data-state=\"paused\""));
}

/// A page opened on the company's verified payment-link domain posts from that origin: taken.
/// Another company's verified domain, the domain over http, on another port or with a path,
/// is refused and starts or changes nothing.
async fn forms_from_the_company_verified_domain(app: TestApp) {
    app.verify_domain(&app.t.company_id, "pay.acme.example")
        .await;
    let other = app.new_tenant("Beta").await;
    app.verify_domain(&other.company_id, "pay.beta.example")
        .await;
    let uid = shop_link(&app, "10").await;
    let path = format!("/pay/{uid}/start");
    starts_refused_from(
        &app,
        &uid,
        &[
            "https://pay.beta.example",
            "http://pay.acme.example",
            "https://pay.acme.example:8443",
            "https://pay.acme.example/",
            "https://acme.example",
        ],
    )
    .await;

    let p = form(
        &app,
        &path,
        &[("payAsset", ETH)],
        Some("https://PAY.acme.example"),
    )
    .await;
    let id = session_of(&see_other(&p, &uid));
    let cancel = format!("/pay/{uid}/s/{id}/cancel");
    let p = form(&app, &cancel, &[], Some("https://pay.beta.example")).await;
    assert_eq!(p.status, 403);
    assert_eq!(session_json(&app, &uid, &id).await["status"], "quote");
    let p = form(&app, &cancel, &[], Some("https://pay.acme.example")).await;
    see_other(&p, &uid);
    assert_ne!(session_json(&app, &uid, &id).await["status"], "quote");
}

on_both_backends!(
    forms_from_the_company_verified_domain,
    a_paused_link_is_not_served_from_the_page_cache,
    the_no_js_path_through_every_state,
    stopped_links_show_a_clear_page,
    foreign_origins_and_bad_requests_are_refused,
    merchant_branding_reaches_the_page_and_its_policy,
);
