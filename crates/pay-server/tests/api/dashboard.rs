//! The merchant dashboard over HTTP: the door (`/dashboard` and its redirect to the sign-in
//! page with a safe return path, and back), the security headers, the team in the path
//! (another company's or an unknown id is 404), the team switcher, the Home screen's figures
//! after a sandbox payment and an underpayment, and sign-out (CSRF checked).

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{read, Session, TestApp};
use crate::oauth_support::form;
use crate::on_both_backends;

const BASE_USDC: &str = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";

pub fn location(res: &reqwest::Response) -> String {
    res.headers()
        .get("location")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default()
}

/// The value of `name="<name>" value="..."` in a page, unescaped.
pub fn field(html: &str, name: &str) -> String {
    let marker = format!("name=\"{name}\" value=\"");
    let start = html
        .find(&marker)
        .unwrap_or_else(|| panic!("{name} in {html}"))
        + marker.len();
    let raw = &html[start..start + html[start..].find('"').unwrap()];
    raw.replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// GET `path` in the session: status, headers and page.
pub async fn page(
    app: &TestApp,
    s: &Session,
    path: &str,
) -> (u16, reqwest::header::HeaderMap, String) {
    let res = app
        .in_session_no_csrf(s, Method::GET, path)
        .send()
        .await
        .unwrap();
    let status = res.status().as_u16();
    let headers = res.headers().clone();
    (status, headers, res.text().await.unwrap())
}

/// POST a form in the session (no CSRF header: pages send the token in the form).
pub async fn post(
    app: &TestApp,
    s: &Session,
    path: &str,
    pairs: &[(&str, &str)],
) -> reqwest::Response {
    app.in_session_no_csrf(s, Method::POST, path)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form(pairs))
        .send()
        .await
        .unwrap()
}

async fn signed_out_goes_to_sign_in_and_back(app: TestApp) {
    let c = &app.t.company_id;
    let home = format!("/dashboard/{c}");
    // Not signed in: every page answers 303 to the sign-in page, which returns to it.
    for (path, back) in [
        ("/dashboard".to_owned(), "/dashboard".to_owned()),
        (home.clone(), home.clone()),
        (format!("{home}/developers"), format!("{home}/developers")),
    ] {
        let res = app.anon(Method::GET, &path).send().await.unwrap();
        assert_eq!(res.status(), 303, "{path}");
        let to = location(&res);
        let expected = format!("/signin?{}", form(&[("return_to", &back)]));
        assert_eq!(to, expected, "{path}");
    }
    let res = app
        .anon(
            Method::GET,
            &format!("/signin?{}", form(&[("return_to", &home)])),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let html = res.text().await.unwrap();
    assert_eq!(field(&html, "return_to"), home);
    // A return path off the dashboard (another site) is dropped.
    for evil in [
        "//evil.example/dashboard",
        "/dashboard//evil.example",
        "https://evil.example/dashboard",
    ] {
        let res = app
            .anon(
                Method::GET,
                &format!("/signin?{}", form(&[("return_to", evil)])),
            )
            .send()
            .await
            .unwrap();
        assert!(!res.text().await.unwrap().contains("return_to"), "{evil}");
    }
    // A wrong password keeps the e-mail typed (escaped) and says why.
    let res = app
        .anon(Method::POST, "/signin")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form(&[
            ("email", "a\"<b>@acme.example"),
            ("password", "wrong password 1"),
            ("return_to", &home),
        ]))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);
    let html = res.text().await.unwrap();
    assert!(
        html.contains("value=\"a&quot;&lt;b&gt;@acme.example\""),
        "{html}"
    );
    assert!(html.contains("Invalid e-mail or password."), "{html}");
    assert_eq!(field(&html, "return_to"), home);
    // Signed in from the page: back to the dashboard page, which is shown.
    let res = app
        .anon(Method::POST, "/signin")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form(&[
            ("email", &app.t.email),
            ("password", &app.t.password),
            ("return_to", &home),
        ]))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 303);
    assert_eq!(location(&res), home);
    let cookie = res
        .headers()
        .get("set-cookie")
        .unwrap()
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    let res = app
        .anon(Method::GET, "/dashboard")
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 303);
    assert_eq!(location(&res), home);
    let res = app
        .anon(Method::GET, &home)
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let h = res.headers();
    let csp = h["content-security-policy"].to_str().unwrap();
    assert!(
        csp.starts_with("default-src 'none'; script-src 'nonce-"),
        "{csp}"
    );
    assert!(csp.contains("form-action 'self';"), "{csp}");
    assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
    assert_eq!(h["x-content-type-options"], "nosniff");
    assert_eq!(h["cache-control"], "no-store");
    assert_eq!(h["referrer-policy"], "same-origin");
    let html = res.text().await.unwrap();
    assert!(html.contains("<h1>Home</h1>"), "{html}");
    assert!(html.contains("Acme Goods"), "{html}");
}

async fn another_team_or_an_unknown_id_is_not_found(app: TestApp) {
    let s = app.login_owner(&app.t).await;
    let other = app.new_tenant("Bob Bikes").await;
    for path in [
        format!("/dashboard/{}", other.company_id),
        format!("/dashboard/{}/developers", other.company_id),
        "/dashboard/not-a-company".to_owned(),
        format!("/dashboard/{}", uuid::Uuid::new_v4()),
    ] {
        let (status, _, html) = page(&app, &s, &path).await;
        assert_eq!(status, 404, "{path}");
        assert!(!html.contains("Bob Bikes"), "{html}");
    }
}

async fn the_switcher_lists_every_team_of_the_user(app: TestApp) {
    let other = app.new_tenant("Bob Bikes").await;
    // The Acme owner becomes a member (read-only) of Bob Bikes.
    let pay = app.pay.clone();
    let (email, company) = (app.t.email.clone(), other.company_id.clone());
    tokio::task::spawn_blocking(move || {
        let company = pay_domain::kernel::ids::CompanyId::parse(&company).unwrap();
        pay.tenancy().add_member(
            company,
            &email,
            &pay_domain::kernel::secret::Secret::new("unused password 1"),
            pay_domain::tenancy::Role::Member,
        )
    })
    .await
    .unwrap()
    .unwrap();
    let s = app.login_owner(&app.t).await;
    let (status, _, html) = page(&app, &s, &format!("/dashboard/{}", app.t.company_id)).await;
    assert_eq!(status, 200);
    assert!(
        html.contains("<select id=\"team\" name=\"company\">"),
        "{html}"
    );
    assert!(
        html.contains(&format!(
            "<option value=\"{}\" selected>Acme Goods</option>",
            app.t.company_id
        )),
        "{html}"
    );
    assert!(
        html.contains(&format!(
            "<option value=\"{}\">Bob Bikes</option>",
            other.company_id
        )),
        "{html}"
    );
    // The switcher's choice: to that team's pages, where the user is a member.
    let res = app
        .in_session_no_csrf(
            &s,
            Method::GET,
            &format!("/dashboard?company={}", other.company_id),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 303);
    assert_eq!(location(&res), format!("/dashboard/{}", other.company_id));
    let (status, _, html) = page(&app, &s, &location(&res)).await;
    assert_eq!(status, 200);
    assert!(
        html.contains("<span class=\"brand\">Bob Bikes</span>"),
        "{html}"
    );
}

pub async fn sandbox_event(app: &TestApp, uid: &str, amount: &str) -> Value {
    let got = read(
        app.req(
            Method::POST,
            &format!("/api/partner/v1/pay/sandbox/payment-links/{uid}/events"),
        )
        .json(&json!({"type": "deposit", "amount": amount}))
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(got.0, 200, "{}", got.1);
    got.1
}

/// A session of a new link in `pending` (its quote accepted): its required amount.
pub async fn pending(app: &TestApp, amount: &str) -> (String, String) {
    let link = app
        .create_link(json!({"amount": amount, "title": "Order"}))
        .await;
    let uid = link["uid"].as_str().unwrap().to_owned();
    let mut s = app.start_session(&uid, BASE_USDC).await;
    if s["status"] == "quote" {
        let got = read(
            app.anon(
                Method::POST,
                &format!(
                    "/api/public/checkout/{uid}/sessions/{}/accept",
                    s["id"].as_str().unwrap()
                ),
            )
            .send()
            .await
            .unwrap(),
        )
        .await;
        assert_eq!(got.0, 200, "{}", got.1);
        s = got.1;
    }
    (uid, s["requiredSellAmount"].as_str().unwrap().to_owned())
}

async fn home_counts_payments_and_lists_what_needs_attention(app: TestApp) {
    let s = app.login_owner(&app.t).await;
    let home = format!("/dashboard/{}", app.t.company_id);
    let (_, _, html) = page(&app, &s, &home).await;
    assert!(
        html.contains("No completed payments in the last 30 days."),
        "{html}"
    );
    assert!(html.contains("Nothing needs your attention."), "{html}");
    // Two payments of 25.00 and 10.50 USD complete; a third is paid 5 short.
    for amount in ["25.00", "10.50"] {
        let (uid, required) = pending(&app, amount).await;
        let done = sandbox_event(&app, &uid, &required).await;
        assert_eq!(done["status"], "complete", "{done}");
    }
    let (uid, _) = pending(&app, "20.00").await;
    let short = sandbox_event(&app, &uid, "1").await;
    assert_eq!(short["status"], "underpaid", "{short}");
    let (status, _, html) = page(&app, &s, &home).await;
    assert_eq!(status, 200);
    // Today's and the 30 days' figures: two payments, 35.50 USD.
    assert!(
        html.contains("<dt>Payments today</dt><dd class=\"fig\">2</dd>"),
        "{html}"
    );
    assert!(
        html.contains("<dt>Payments, last 30 days</dt><dd class=\"fig\">2</dd>"),
        "{html}"
    );
    assert!(
        html.contains(
            "<td data-label=\"Asset\">USDC (Base)</td><td data-label=\"Today\">35.50 <small>(2)</small></td>"
        ),
        "{html}"
    );
    assert!(html.contains("payments per day"), "{html}");
    assert!(
        html.contains(": 2 payments</title></rect>"),
        "the chart's bar for today: {html}"
    );
    // The underpaid session needs the merchant.
    assert!(html.contains("<h3>Underpaid payments</h3>"), "{html}");
    assert!(html.contains("20.00 USDC (Base) invoiced"), "{html}");
    assert!(!html.contains("Nothing needs your attention."), "{html}");
    // Resolved by hand: the session completes, and the figures count it at once (the daily
    // roll-up is written with the session).
    let res = post(
        &app,
        &s,
        &format!("{home}/links/{uid}/manual-resolution"),
        &[("csrf_token", &s.csrf), ("action", "complete")],
    )
    .await;
    assert_eq!(res.status(), 303);
    let (_, _, html) = page(&app, &s, &home).await;
    assert!(
        html.contains("<dt>Payments today</dt><dd class=\"fig\">3</dd>"),
        "{html}"
    );
    assert!(
        html.contains(
            "<td data-label=\"Asset\">USDC (Base)</td><td data-label=\"Today\">55.50 <small>(3)</small></td>"
        ),
        "{html}"
    );
    assert!(html.contains("Nothing needs your attention."), "{html}");
    // Another team's home knows none of it.
    let other = app.new_tenant("Bob Bikes").await;
    let so = app.login_owner(&other).await;
    let (_, _, html) = page(&app, &so, &format!("/dashboard/{}", other.company_id)).await;
    assert!(
        html.contains("No completed payments in the last 30 days."),
        "{html}"
    );
    assert!(html.contains("Nothing needs your attention."), "{html}");
}

async fn sign_out_needs_the_csrf_token(app: TestApp) {
    let s = app.login_owner(&app.t).await;
    let home = format!("/dashboard/{}", app.t.company_id);
    let (_, _, html) = page(&app, &s, &home).await;
    let csrf = field(&html, "csrf_token");
    assert_eq!(
        csrf, s.csrf,
        "the page's forms carry the session's own token"
    );
    let res = post(&app, &s, "/dashboard/signout", &[]).await;
    assert_eq!(res.status(), 403);
    // No form at all (no body, no form content type): 400, signed in or not.
    let keys = format!("{home}/developers/keys");
    for path in ["/dashboard/signout", keys.as_str()] {
        let res = app
            .in_session_no_csrf(&s, Method::POST, path)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 400, "{path}");
        let res = app.anon(Method::POST, path).send().await.unwrap();
        assert_eq!(res.status(), 400, "{path}");
        // A field the form does not have: 400 too, before the session is looked at.
        let res = app
            .anon(Method::POST, path)
            .header("content-type", "application/x-www-form-urlencoded")
            .body("csrf_token=x&extra=")
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 400, "{path}");
    }
    let res = post(&app, &s, "/dashboard/signout", &[("csrf_token", "wrong")]).await;
    assert_eq!(res.status(), 403);
    let res = app
        .in_session_no_csrf(&s, Method::POST, "/dashboard/signout")
        .header("content-type", "application/x-www-form-urlencoded")
        .header("origin", "https://evil.example")
        .body(form(&[("csrf_token", &csrf)]))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    assert_eq!(page(&app, &s, &home).await.0, 200, "still signed in");
    let res = post(&app, &s, "/dashboard/signout", &[("csrf_token", &csrf)]).await;
    assert_eq!(res.status(), 303);
    assert_eq!(location(&res), "/signin");
    assert!(res.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .starts_with("pay_session=;"));
    let res = app
        .in_session_no_csrf(&s, Method::GET, &home)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 303, "the session ended");
}

on_both_backends!(
    signed_out_goes_to_sign_in_and_back,
    another_team_or_an_unknown_id_is_not_found,
    the_switcher_lists_every_team_of_the_user,
    home_counts_payments_and_lists_what_needs_attention,
    sign_out_needs_the_csrf_token,
);
