//! The customer portal page through real HTTP: the signed URL's refusals (403 page, nothing
//! of the customer shown), the page's content, and its forms (rename, pause, resume, cancel),
//! each bound to the signed URL by its token, with one webhook per move.

use reqwest::Method;
use serde_json::{json, Value};

use crate::customers::portal as portal_url_of;
use crate::helpers::{read, TestApp};
use crate::on_both_backends;
use crate::subscriptions::{created, monthly, sub_path, subscription_events_by};
use crate::webhooks::{set_callback, Receiver};

/// The main tenant's customer with this e-mail, as the API lists it.
async fn customer(app: &TestApp, email: &str) -> Value {
    let customers = read(
        app.req(Method::GET, "/api/partner/v1/pay/customers")
            .send()
            .await
            .unwrap(),
    )
    .await
    .1;
    customers["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["email"] == email)
        .unwrap()
        .clone()
}

/// A customer with a subscription: (its portal URL's path and query, the subscription).
async fn customer_with_subscription(app: &TestApp, email: &str) -> (String, Value) {
    let s = created(app, monthly(email)).await;
    let c = customer(app, email).await;
    let answer = portal_url_of(app, c["uid"].as_str().unwrap()).await;
    let url = answer["customer"]["urls"]["customerPortal"]
        .as_str()
        .unwrap();
    // The URL is on the public pay site; the test server answers for it.
    let path = url
        .strip_prefix("https://pay.test.example")
        .unwrap()
        .to_owned();
    (path, s)
}

async fn page(app: &TestApp, path: &str) -> (u16, String, reqwest::header::HeaderMap) {
    let res = app.anon(Method::GET, path).send().await.unwrap();
    let status = res.status().as_u16();
    let headers = res.headers().clone();
    (status, res.text().await.unwrap(), headers)
}

fn query(path: &str) -> Vec<(String, String)> {
    url::Url::parse(&format!("https://x{path}"))
        .unwrap()
        .query_pairs()
        .into_owned()
        .collect()
}

fn with_query(pairs: &[(String, String)]) -> String {
    let q = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish();
    format!("/portal?{q}")
}

/// The form token the page carries.
fn token_of(html: &str) -> String {
    let at = html.find("name=\"token\" value=\"").expect("a form token") + 20;
    html[at..at + 64].to_owned()
}

/// Posts a portal form: the URL's parameters, `token` and `extra`.
async fn post_form(
    app: &TestApp,
    action: &str,
    path: &str,
    token: &str,
    extra: (&str, &str),
) -> (u16, String, Option<String>) {
    post_form_from(app, action, path, token, extra, None).await
}

/// `post_form` with an `Origin` header.
async fn post_form_from(
    app: &TestApp,
    action: &str,
    path: &str,
    token: &str,
    extra: (&str, &str),
    origin: Option<&str>,
) -> (u16, String, Option<String>) {
    let mut pairs = query(path);
    pairs.push(("token".into(), token.into()));
    pairs.push((extra.0.into(), extra.1.into()));
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(&pairs)
        .finish();
    let mut req = app
        .anon(Method::POST, action)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body);
    if let Some(o) = origin {
        req = req.header("origin", o);
    }
    let res = req.send().await.unwrap();
    let status = res.status().as_u16();
    let location = res
        .headers()
        .get("location")
        .map(|l| l.to_str().unwrap().to_owned());
    (status, res.text().await.unwrap(), location)
}

fn status_action(uid: &str) -> String {
    format!("/portal/subscriptions/{uid}/status")
}

fn changed(s: &str, i: usize) -> String {
    let mut b = s.as_bytes().to_vec();
    b[i] = match b[i] {
        b'0' => b'1',
        c if c.is_ascii_digit() => b'0',
        b'a' => b'b',
        c if c.is_ascii_lowercase() => c.to_ascii_uppercase(),
        c if c.is_ascii_uppercase() => c.to_ascii_lowercase(),
        b'-' => b'_',
        _ => b'x',
    };
    String::from_utf8(b).unwrap()
}

async fn the_page_and_its_refusals(app: TestApp) {
    let (path, s) = customer_with_subscription(&app, "ann@example.com").await;
    let (bob_path, _) = customer_with_subscription(&app, "bob@example.com").await;
    let (status, html, headers) = page(&app, &path).await;
    assert_eq!(status, 200, "{html}");
    let csp = headers["content-security-policy"].to_str().unwrap();
    assert!(
        csp.starts_with("default-src 'none'; script-src 'nonce-"),
        "{csp}"
    );
    assert!(csp.contains("form-action 'self'"));
    assert_eq!(headers["cache-control"], "no-store");
    assert!(html.contains("ann@example.com"));
    assert!(html.contains("Pro plan"));
    assert!(!html.contains("bob@example.com"), "another customer's data");
    assert!(!html.contains("<script"));
    // No third-party origin: every absolute URL is the pay site's own.
    assert!(!html.contains("http://"));
    for (at, _) in html.match_indices("https://") {
        assert!(
            html[at..].starts_with("https://pay.test.example/"),
            "{}",
            &html[at..at + 40]
        );
    }
    let link_uid = s["cycles"][0]["paymentLinkUid"].as_str().unwrap();
    assert!(
        html.contains(&format!("href=\"https://pay.test.example/pay/{link_uid}\"")),
        "a pay button to the hosted checkout"
    );
    assert!(html.contains(&format!("id=\"sub-{}\"", s["uid"].as_str().unwrap())));

    // One character changed in each parameter, at its first, middle and last place.
    let good = query(&path);
    let mut refused = vec![];
    for (i, (name, value)) in good.iter().enumerate() {
        for at in [0, value.len() / 2, value.len() - 1] {
            let mut q = good.clone();
            q[i] = (name.clone(), changed(value, at));
            refused.push(with_query(&q));
        }
    }
    // Bob's uid with Ann's signature; Ann's URL under another company; missing or repeated
    // parameters.
    let bob_uid = query(&bob_path)
        .into_iter()
        .find(|(k, _)| k == "customer")
        .unwrap()
        .1;
    let mut q = good.clone();
    q[1].1 = bob_uid;
    refused.push(with_query(&q));
    let other = app.new_tenant("Other Co").await;
    let mut q = good.clone();
    q[0].1 = other.company_id.clone();
    refused.push(with_query(&q));
    refused.push(with_query(&good[..3]));
    let mut q = good.clone();
    q.push(good[3].clone());
    refused.push(with_query(&q));
    refused.push("/portal".into());
    for p in &refused {
        let (status, html, headers) = page(&app, p).await;
        assert_eq!(status, 403, "{p}");
        assert!(html.contains("This link is invalid or has expired"), "{p}");
        assert!(!html.contains("ann@example.com") && !html.contains("Pro plan"));
        assert!(headers["content-security-policy"]
            .to_str()
            .unwrap()
            .starts_with("default-src 'none'"));
    }
    // Expired on the company's clock (the sandbox test clock moves it 24 hours).
    let got = read(
        app.req(Method::POST, "/api/partner/v1/pay/sandbox/clock")
            .json(&json!({"advanceSeconds": 86_400}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(got.0, 200, "{}", got.1);
    let (status, html, _) = page(&app, &path).await;
    assert_eq!(status, 403);
    assert!(!html.contains("ann@example.com"));
}

async fn the_forms_rename_pause_resume_and_cancel(app: TestApp) {
    let rx = Receiver::start();
    let owner = app.login_owner(&app.t).await;
    let secret = set_callback(&app, &owner, &rx.url).await;
    let got = read(
        app.req(Method::POST, "/api/partner/v1/pay/customers")
            .json(&json!({"email": "ann@example.com", "clientId": "crm-7"}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(got.0, 201);
    let (path, s) = customer_with_subscription(&app, "ann@example.com").await;
    let (bob_path, bob_sub) = customer_with_subscription(&app, "bob@example.com").await;
    let uid = s["uid"].as_str().unwrap();
    let token = token_of(&page(&app, &path).await.1);
    let bob_token = token_of(&page(&app, &bob_path).await.1);
    assert_ne!(token, bob_token);

    // Rename: 303 back to the portal, which shows it; clientId unchanged.
    let (status, _, location) =
        post_form(&app, "/portal/name", &path, &token, ("name", "Ann Lee")).await;
    assert_eq!(status, 303);
    let location = location.unwrap();
    assert!(location.starts_with("/portal?company="), "{location}");
    assert!(location.ends_with("&done=renamed"));
    let (status, html, _) = page(&app, &location).await;
    assert_eq!(status, 200);
    assert!(html.contains("value=\"Ann Lee\""));
    assert!(html.contains("Your name was saved."));
    let ann = customer(&app, "ann@example.com").await;
    assert_eq!(ann["name"], "Ann Lee");
    assert_eq!(ann["clientId"], "crm-7");
    // clientId is not a field of the form.
    let (status, _, _) = post_form(&app, "/portal/name", &path, &token, ("clientId", "x")).await;
    assert_eq!(status, 400);

    // Tokens: none, Bob's page's, a changed one: 403, nothing changed.
    for t in ["", bob_token.as_str(), &changed(&token, 5)] {
        let (status, html, _) =
            post_form(&app, &status_action(uid), &path, t, ("status", "paused")).await;
        assert_eq!(status, 403, "{t}");
        assert!(html.contains("This link is invalid or has expired"));
    }
    // Bob's subscription from Ann's page (her own valid token): not hers.
    let (status, _, _) = post_form(
        &app,
        &status_action(bob_sub["uid"].as_str().unwrap()),
        &path,
        &token,
        ("status", "cancelled"),
    )
    .await;
    assert_eq!(status, 404);
    // Another site's form.
    let mut pairs = query(&path);
    pairs.push(("token".into(), token.clone()));
    pairs.push(("status".into(), "paused".into()));
    let res = app
        .anon(Method::POST, &status_action(uid))
        .header("content-type", "application/x-www-form-urlencoded")
        .header("origin", "https://evil.example")
        .body(
            url::form_urlencoded::Serializer::new(String::new())
                .extend_pairs(&pairs)
                .finish(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    let api = |uid: String| {
        let app = &app;
        async move {
            read(app.req(Method::GET, &sub_path(&uid)).send().await.unwrap())
                .await
                .1
        }
    };
    assert_eq!(api(uid.to_owned()).await["status"], "active");
    assert_eq!(
        api(bob_sub["uid"].as_str().unwrap().to_owned()).await["status"],
        "active"
    );

    // Pause, resume, cancel: each 303 back with what was done.
    for (to, done) in [
        ("paused", "paused"),
        ("active", "active"),
        ("cancelled", "cancelled"),
    ] {
        let (status, html, location) =
            post_form(&app, &status_action(uid), &path, &token, ("status", to)).await;
        assert_eq!(status, 303, "{to}: {html}");
        assert!(location.unwrap().ends_with(&format!("&done={done}")));
        assert_eq!(api(uid.to_owned()).await["status"], to);
    }
    let after = api(uid.to_owned()).await;
    assert_eq!(after["cycles"][0]["status"], "cancelled");
    let link = read(
        app.req(
            Method::GET,
            &format!(
                "/api/partner/v1/pay/payment-links/{}",
                after["cycles"][0]["paymentLinkUid"].as_str().unwrap()
            ),
        )
        .send()
        .await
        .unwrap(),
    )
    .await
    .1;
    assert_eq!(link["status"], "archived");
    // A stale tab (the page still offers a pause): refused, the page says so.
    let (status, html, _) = post_form(
        &app,
        &status_action(uid),
        &path,
        &token,
        ("status", "paused"),
    )
    .await;
    assert_eq!(status, 409);
    assert!(html.contains("This change is not possible"));
    // One webhook per move, with the customer's reasons.
    while app.dispatcher.run_once().await.unwrap() > 0 {}
    let expect =
        |r: &str, move_: &str, cycle: &str| (r.to_owned(), move_.to_owned(), cycle.to_owned());
    assert_eq!(
        subscription_events_by(&rx, &secret, "customer_portal"),
        vec![
            expect("customer_paused", "active -> paused", "open"),
            expect("customer_resumed", "paused -> active", "open"),
            expect("customer_cancelled", "active -> cancelled", "cancelled"),
        ]
    );
    assert!(rx
        .received()
        .iter()
        .all(|r| serde_json::from_str::<Value>(&r.body).unwrap()["subscription"]["uid"] == uid));
    // Once the URL expires, its forms are refused too.
    read(
        app.req(Method::POST, "/api/partner/v1/pay/sandbox/clock")
            .json(&json!({"advanceSeconds": 86_400}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    let (status, _, _) = post_form(&app, "/portal/name", &path, &token, ("name", "Late")).await;
    assert_eq!(status, 403);
}

/// With a verified payment-link domain the portal URL is on it, and the page's forms posted
/// from that origin are taken; another company's verified domain, the domain over http or on
/// another port, is refused and changes nothing.
async fn forms_from_the_company_verified_domain(app: TestApp) {
    app.verify_domain(&app.t.company_id, "pay.acme.example")
        .await;
    let other = app.new_tenant("Beta").await;
    app.verify_domain(&other.company_id, "pay.beta.example")
        .await;
    created(&app, monthly("ann@example.com")).await;
    let c = customer(&app, "ann@example.com").await;
    let answer = portal_url_of(&app, c["uid"].as_str().unwrap()).await;
    let url = answer["customer"]["urls"]["customerPortal"]
        .as_str()
        .unwrap();
    let path = url
        .strip_prefix("https://pay.acme.example")
        .unwrap_or_else(|| panic!("not on the verified domain: {url}"))
        .to_owned();
    let token = token_of(&page(&app, &path).await.1);
    for origin in [
        "https://pay.beta.example",
        "http://pay.acme.example",
        "https://pay.acme.example:8443",
        "https://evil.example",
    ] {
        let (status, html, _) = post_form_from(
            &app,
            "/portal/name",
            &path,
            &token,
            ("name", "Mallory"),
            Some(origin),
        )
        .await;
        assert_eq!(status, 403, "{origin}");
        assert!(html.contains("This form came from another site"), "{html}");
    }
    assert_ne!(customer(&app, "ann@example.com").await["name"], "Mallory");
    let (status, _, _) = post_form_from(
        &app,
        "/portal/name",
        &path,
        &token,
        ("name", "Ann Lee"),
        Some("https://pay.acme.example"),
    )
    .await;
    assert_eq!(status, 303);
    assert_eq!(customer(&app, "ann@example.com").await["name"], "Ann Lee");
}

on_both_backends!(
    forms_from_the_company_verified_domain,
    the_page_and_its_refusals,
    the_forms_rename_pause_resume_and_cancel,
);
