//! The dashboard's Payment links screens over HTTP: the list by status and search, the create
//! form (every field, as the JSON create takes it; a refused field keeps what was typed), a
//! link's page with its status moves, the request e-mail and the manual resolution of an
//! underpaid session; CSRF and origin on every form, a read-only member sees no control and
//! each change answers 403, another team's link is 404.

use pay_domain::kernel::ids::{CompanyId, LinkUid};
use pay_domain::mail::MailStore;
use reqwest::Method;
use serde_json::{json, Value};

use crate::dashboard::{field, location, page, pending, post, sandbox_event};
use crate::helpers::{read, Session, TestApp};
use crate::oauth_support::form;
use crate::on_both_backends;

const LINKS: &str = "/api/partner/v1/pay/payment-links";

fn list(app: &TestApp) -> String {
    format!("/dashboard/{}/links", app.t.company_id)
}

/// The link as the JSON API reads it.
async fn link_json(app: &TestApp, uid: &str) -> Value {
    let got = read(
        app.req(Method::GET, &format!("{LINKS}/{uid}"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(got.0, 200, "{}", got.1);
    got.1
}

/// The uids the page links to, in its order.
fn listed(html: &str, app: &TestApp) -> Vec<String> {
    let marker = format!("<a href=\"{}/", list(app));
    html.split(&marker)
        .skip(1)
        .map(|rest| rest[..rest.find('"').unwrap()].to_owned())
        .collect()
}

async fn csrf(app: &TestApp, s: &Session) -> String {
    field(&page(app, s, &list(app)).await.2, "csrf_token")
}

async fn the_list_filters_by_status_and_searches(app: TestApp) {
    let s = app.login_owner(&app.t).await;
    let mug = app
        .create_link(json!({"amount": "5", "title": "Blue Mug", "orderId": "ORD-77"}))
        .await["uid"]
        .as_str()
        .unwrap()
        .to_owned();
    let shirt = app
        .create_link(json!({"amount": "9", "title": "Shirt", "customerEmail": "mugsy@example.com"}))
        .await["uid"]
        .as_str()
        .unwrap()
        .to_owned();
    let plain = app
        .create_link(json!({"amount": "1", "description": "a mug"}))
        .await["uid"]
        .as_str()
        .unwrap()
        .to_owned();
    let paused = read(
        app.req(Method::PATCH, &format!("{LINKS}/{shirt}"))
            .json(&json!({"status": "paused"}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(paused.0, 200, "{}", paused.1);
    let (status, _, html) = page(&app, &s, &list(&app)).await;
    assert_eq!(status, 200);
    assert!(
        html.contains("aria-current=\"page\">Payment links</a>"),
        "{html}"
    );
    assert_eq!(
        listed(&html, &app),
        [plain.clone(), shirt.clone(), mug.clone()]
    );
    assert!(html.contains(">Blue Mug</a>"), "{html}");
    assert!(
        html.contains("<td data-label=\"Order id\">ORD-77</td>"),
        "{html}"
    );
    let found = |q: &'static str| {
        let app = &app;
        let s = &s;
        async move {
            let (status, _, html) = page(app, s, &format!("{}?{q}", list(app))).await;
            assert_eq!(status, 200, "{q}");
            listed(&html, app)
        }
    };
    // Title and e-mail in any case; not the description.
    assert_eq!(found("q=MUG").await, [shirt.clone(), mug.clone()]);
    assert_eq!(found("q=ord-7").await, [mug.as_str()]);
    assert_eq!(found("status=paused").await, [shirt.as_str()]);
    assert_eq!(found("status=active&q=mug").await, [mug.as_str()]);
    assert_eq!(found("status=archived").await, Vec::<String>::new());
    let (_, _, html) = page(&app, &s, &format!("{}?q=nothing%25here", list(&app))).await;
    assert!(html.contains("No payment link matches."), "{html}");
    assert!(
        html.contains("value=\"nothing%here\""),
        "the search is kept: {html}"
    );
    // Another team's list has none of them.
    let other = app.new_tenant("Bob Bikes").await;
    let so = app.login_owner(&other).await;
    let (_, _, html) = page(&app, &so, &format!("/dashboard/{}/links", other.company_id)).await;
    assert!(listed(&html, &app).is_empty(), "{html}");
    assert!(!html.contains("Blue Mug"), "{html}");
}

async fn the_form_creates_a_link_with_every_field(app: TestApp) {
    let s = app.login_owner(&app.t).await;
    let csrf = csrf(&app, &s).await;
    let res = post(
        &app,
        &s,
        &list(&app),
        &[
            ("csrf_token", &csrf),
            ("amount", "12.50"),
            ("fiat_currency", "USD"),
            ("asset", ""),
            ("currency", ""),
            ("title", "Desk lamp"),
            ("description", "Brass, with bulb"),
            ("order_id", "A-100"),
            ("customer_email", "payer@example.com"),
            ("client_id", "cust-9"),
            ("expiration_time", "72h"),
            ("fee_paid_by", "client"),
            ("invoice_pdf_url", "https://acme.example/inv/100.pdf"),
            ("return_url", "https://acme.example/back"),
            ("success_url", "https://acme.example/ok"),
            ("failure_url", "https://acme.example/ko"),
            ("metadata", "{\"orderRef\": \"A-17\"}"),
            ("skip_quote_acceptance", "on"),
        ],
    )
    .await;
    assert_eq!(res.status(), 303);
    let to = location(&res);
    let uid = to.rsplit('/').next().unwrap().to_owned();
    assert_eq!(to, format!("{}/{uid}", list(&app)));
    let l = link_json(&app, &uid).await;
    let p = &l["payload"];
    for (k, v) in [
        ("amount", "12.50"),
        ("fiatCurrency", "USD"),
        ("title", "Desk lamp"),
        ("description", "Brass, with bulb"),
        ("orderId", "A-100"),
        ("customerEmail", "payer@example.com"),
        ("clientId", "cust-9"),
        ("expirationTime", "72h"),
        ("feePaidBy", "client"),
        ("invoicePdfUrl", "https://acme.example/inv/100.pdf"),
        ("returnUrl", "https://acme.example/back"),
        ("successUrl", "https://acme.example/ok"),
        ("failureUrl", "https://acme.example/ko"),
    ] {
        assert_eq!(p[k], v, "{k}: {l}");
    }
    assert_eq!(p["metadata"], json!({"orderRef": "A-17"}));
    assert_eq!(p["skipQuoteAcceptance"], true);
    let (status, _, html) = page(&app, &s, &to).await;
    assert_eq!(status, 200);
    assert!(html.contains("<dd>Desk lamp</dd>"), "{html}");
    assert!(
        html.contains(
            "<a class=\"btn\" href=\"https://acme.example/inv/100.pdf\">Invoice (PDF)</a>"
        ),
        "{html}"
    );
    assert!(
        html.contains("<code>orderRef: &quot;A-17&quot;</code>"),
        "{html}"
    );
    assert!(
        html.contains("No payer has started a session yet."),
        "{html}"
    );
    // Refused fields: the form again, with the reason and what was typed (escaped).
    for (name, value, why) in [
        (
            "amount",
            "12.505",
            "amount must have at most 2 decimal places",
        ),
        ("customer_email", "not an e-mail", "customerEmail"),
        ("metadata", "[1]", "metadata must be a JSON object"),
        ("expiration_time", "2d", "expirationTime must be one of"),
    ] {
        let mut pairs = vec![
            ("csrf_token", csrf.as_str()),
            ("amount", "12.50"),
            ("fiat_currency", "USD"),
            ("title", "<Lamp> \"two\""),
        ];
        pairs.retain(|(n, _)| *n != name);
        pairs.push((name, value));
        let res = post(&app, &s, &list(&app), &pairs).await;
        assert_eq!(res.status(), 400, "{name}");
        let html = res.text().await.unwrap();
        assert!(
            html.contains("role=\"alert\" id=\"create-error\""),
            "{html}"
        );
        assert!(html.contains(why), "{name}: {html}");
        assert!(
            html.contains("value=\"&lt;Lamp&gt; &quot;two&quot;\""),
            "the typed title is kept: {html}"
        );
    }
    // A form with a field the create does not take is not read.
    let res = post(
        &app,
        &s,
        &list(&app),
        &[("csrf_token", &csrf), ("amount", "1"), ("colour", "red")],
    )
    .await;
    assert_eq!(res.status(), 400);
    let got = read(app.req(Method::GET, LINKS).send().await.unwrap()).await;
    assert_eq!(got.1["data"].as_array().unwrap().len(), 1, "one link made");
}

/// POST a status move on the link page; the answer.
async fn move_to(app: &TestApp, s: &Session, csrf: &str, uid: &str, to: &str) -> reqwest::Response {
    post(
        app,
        s,
        &format!("{}/{uid}/status", list(app)),
        &[("csrf_token", csrf), ("status", to)],
    )
    .await
}

async fn status_moves_are_the_domains(app: TestApp) {
    let s = app.login_owner(&app.t).await;
    let csrf = csrf(&app, &s).await;
    let uid = app.create_link(json!({"amount": "3"})).await["uid"]
        .as_str()
        .unwrap()
        .to_owned();
    let at = format!("{}/{uid}", list(&app));
    let buttons = |html: &str| {
        ["active", "paused", "archived"]
            .into_iter()
            .filter(|to| html.contains(&format!("name=\"status\" value=\"{to}\"")))
            .collect::<Vec<_>>()
    };
    let (_, _, html) = page(&app, &s, &at).await;
    assert_eq!(buttons(&html), ["paused", "archived"]);
    let res = move_to(&app, &s, &csrf, &uid, "paused").await;
    assert_eq!(res.status(), 303);
    assert_eq!(location(&res), at);
    assert_eq!(link_json(&app, &uid).await["status"], "paused");
    let (_, _, html) = page(&app, &s, &at).await;
    assert!(
        html.contains("<span class=\"badge\" id=\"link-state\">paused</span>"),
        "{html}"
    );
    assert_eq!(buttons(&html), ["active", "archived"]);
    assert!(
        html.contains("The link takes no payment now"),
        "no request mail from a paused link: {html}"
    );
    assert_eq!(move_to(&app, &s, &csrf, &uid, "active").await.status(), 303);
    assert_eq!(
        move_to(&app, &s, &csrf, &uid, "archived").await.status(),
        303
    );
    assert_eq!(link_json(&app, &uid).await["status"], "archived");
    let (_, _, html) = page(&app, &s, &at).await;
    assert!(buttons(&html).is_empty(), "nothing leaves archived: {html}");
    // A move the domain refuses: the page again with its reason, the JSON route's 409.
    let res = move_to(&app, &s, &csrf, &uid, "active").await;
    assert_eq!(res.status(), 409);
    let html = res.text().await.unwrap();
    assert!(html.contains("id=\"link-notice\""), "{html}");
    assert!(html.contains("archived"), "{html}");
    let res = move_to(&app, &s, &csrf, &uid, "gone").await;
    assert_eq!(res.status(), 400);
    assert_eq!(link_json(&app, &uid).await["status"], "archived");
}

async fn a_read_only_member_sees_and_changes_nothing(app: TestApp) {
    let (email, password) = app.add_member(&app.t, "member").await;
    let s = app.login(&email, &password).await;
    let uid = app
        .create_link(json!({"amount": "3", "customerEmail": "payer@example.com"}))
        .await["uid"]
        .as_str()
        .unwrap()
        .to_owned();
    let (status, _, html) = page(&app, &s, &list(&app)).await;
    assert_eq!(status, 200);
    assert_eq!(listed(&html, &app), [uid.as_str()]);
    assert!(!html.contains("Create link"), "{html}");
    let at = format!("{}/{uid}", list(&app));
    let (status, _, html) = page(&app, &s, &at).await;
    assert_eq!(status, 200);
    for control in ["/status\"", "/send-request-email\"", "/manual-resolution\""] {
        assert!(
            !html.contains(control),
            "{control} shown to a member: {html}"
        );
    }
    let csrf = field(&html, "csrf_token");
    let res = post(
        &app,
        &s,
        &list(&app),
        &[("csrf_token", &csrf), ("amount", "1")],
    )
    .await;
    assert_eq!(res.status(), 403);
    assert_eq!(move_to(&app, &s, &csrf, &uid, "paused").await.status(), 403);
    let res = post(
        &app,
        &s,
        &format!("{at}/send-request-email"),
        &[("csrf_token", &csrf)],
    )
    .await;
    assert_eq!(res.status(), 403);
    let res = post(
        &app,
        &s,
        &format!("{at}/manual-resolution"),
        &[("csrf_token", &csrf), ("action", "complete")],
    )
    .await;
    assert_eq!(res.status(), 403);
    assert_eq!(link_json(&app, &uid).await["status"], "active");
    let got = read(app.req(Method::GET, LINKS).send().await.unwrap()).await;
    assert_eq!(got.1["data"].as_array().unwrap().len(), 1, "nothing made");
    assert!(mails(&app, &uid).await.is_empty());
}

async fn another_teams_link_is_not_found(app: TestApp) {
    let uid = app
        .create_link(json!({"amount": "3", "title": "Acme's"}))
        .await["uid"]
        .as_str()
        .unwrap()
        .to_owned();
    let other = app.new_tenant("Bob Bikes").await;
    let so = app.login_owner(&other).await;
    let theirs = format!("/dashboard/{}/links", other.company_id);
    let (status, _, html) = page(&app, &so, &format!("{theirs}/{uid}")).await;
    assert_eq!(status, 404);
    assert!(!html.contains("Acme's"), "{html}");
    let (_, _, html) = page(&app, &so, &theirs).await;
    let csrf = field(&html, "csrf_token");
    for (path, pairs) in [
        (
            "status",
            vec![("csrf_token", csrf.as_str()), ("status", "paused")],
        ),
        (
            "send-request-email",
            vec![("csrf_token", csrf.as_str()), ("email", "x@example.com")],
        ),
        (
            "manual-resolution",
            vec![("csrf_token", csrf.as_str()), ("action", "complete")],
        ),
    ] {
        let res = post(&app, &so, &format!("{theirs}/{uid}/{path}"), &pairs).await;
        assert_eq!(res.status(), 404, "{path}");
    }
    // Acme's pages are not Bob's.
    let (status, _, _) = page(&app, &so, &list(&app)).await;
    assert_eq!(status, 404);
    let (status, _, _) = page(&app, &so, &format!("{}/{uid}", list(&app))).await;
    assert_eq!(status, 404);
    assert_eq!(link_json(&app, &uid).await["status"], "active");
}

async fn every_form_needs_csrf_and_our_origin(app: TestApp) {
    let s = app.login_owner(&app.t).await;
    let csrf = csrf(&app, &s).await;
    let uid = app.create_link(json!({"amount": "3"})).await["uid"]
        .as_str()
        .unwrap()
        .to_owned();
    let at = format!("{}/{uid}", list(&app));
    for (path, pairs) in [
        (list(&app), vec![("amount", "1")]),
        (format!("{at}/status"), vec![("status", "paused")]),
        (
            format!("{at}/send-request-email"),
            vec![("email", "x@example.com")],
        ),
        (
            format!("{at}/manual-resolution"),
            vec![("action", "complete")],
        ),
    ] {
        assert_eq!(post(&app, &s, &path, &pairs).await.status(), 403, "{path}");
        let mut wrong = pairs.clone();
        wrong.push(("csrf_token", "wrong"));
        assert_eq!(post(&app, &s, &path, &wrong).await.status(), 403, "{path}");
        let mut right = pairs.clone();
        right.push(("csrf_token", &csrf));
        let res = app
            .in_session_no_csrf(&s, Method::POST, &path)
            .header("content-type", "application/x-www-form-urlencoded")
            .header("origin", "https://evil.example")
            .body(form(&right))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 403, "{path}");
        // No form at all: 400 before the session is read (signed in or not).
        let res = app
            .in_session_no_csrf(&s, Method::POST, &path)
            .header("content-type", "application/json")
            .body("{}")
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 400, "{path}");
        let res = app.anon(Method::POST, &path).send().await.unwrap();
        assert_eq!(res.status(), 400, "{path}");
    }
    assert_eq!(link_json(&app, &uid).await["status"], "active");
    let got = read(app.req(Method::GET, LINKS).send().await.unwrap()).await;
    assert_eq!(got.1["data"].as_array().unwrap().len(), 1);
    assert!(mails(&app, &uid).await.is_empty());
    // Not signed in, a good form: to the sign-in page.
    let res = app
        .anon(Method::POST, &format!("{at}/status"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form(&[("csrf_token", &csrf), ("status", "paused")]))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 303);
    assert!(location(&res).starts_with("/signin?"), "{}", location(&res));
}

async fn an_underpaid_session_is_resolved_by_hand(app: TestApp) {
    let s = app.login_owner(&app.t).await;
    let csrf = csrf(&app, &s).await;
    let (uid, _) = pending(&app, "20.00").await;
    let short = sandbox_event(&app, &uid, "1").await;
    assert_eq!(short["status"], "underpaid", "{short}");
    let at = format!("{}/{uid}", list(&app));
    let (_, _, html) = page(&app, &s, &at).await;
    assert!(html.contains("<h3>Underpaid: your decision</h3>"), "{html}");
    assert!(html.contains("<dt>Status</dt><dd>underpaid</dd>"), "{html}");
    assert!(html.contains("<dt>Short by</dt>"), "{html}");
    assert!(
        html.contains("<strong>status_changed</strong>"),
        "the timeline: {html}"
    );
    let resolve = |action: &'static str| {
        let (app, s, csrf, at) = (&app, &s, csrf.clone(), at.clone());
        async move {
            post(
                app,
                s,
                &format!("{at}/manual-resolution"),
                &[("csrf_token", &csrf), ("action", action)],
            )
            .await
        }
    };
    assert_eq!(resolve("keep").await.status(), 400);
    let res = resolve("complete").await;
    assert_eq!(res.status(), 303);
    assert_eq!(location(&res), at);
    let l = link_json(&app, &uid).await;
    assert_eq!(l["latestSession"]["status"], "complete", "{l}");
    let (_, _, html) = page(&app, &s, &at).await;
    assert!(!html.contains("Underpaid: your decision"), "{html}");
    assert!(html.contains("<dt>Status</dt><dd>complete</dd>"), "{html}");
    // Not underpaid any more: the domain's 409, said on the page.
    let res = resolve("complete").await;
    assert_eq!(res.status(), 409);
    assert!(res.text().await.unwrap().contains("id=\"link-notice\""));
}

/// The outbox rows of one of Acme's links.
async fn mails(app: &TestApp, uid: &str) -> Vec<pay_domain::mail::OutgoingMail> {
    let store = app.store.clone();
    let company = CompanyId::parse(&app.t.company_id).unwrap();
    let uid = LinkUid::parse(uid).unwrap();
    tokio::task::spawn_blocking(move || store.link_mails(company, &uid))
        .await
        .unwrap()
        .unwrap()
}

async fn the_request_email_is_queued(app: TestApp) {
    let s = app.login_owner(&app.t).await;
    let csrf = csrf(&app, &s).await;
    let uid = app
        .create_link(json!({"amount": "3", "customerEmail": "payer@example.com"}))
        .await["uid"]
        .as_str()
        .unwrap()
        .to_owned();
    let at = format!("{}/{uid}", list(&app));
    let send = |email: &'static str| {
        let (app, s, csrf, at) = (&app, &s, csrf.clone(), at.clone());
        async move {
            post(
                app,
                s,
                &format!("{at}/send-request-email"),
                &[("csrf_token", &csrf), ("email", email)],
            )
            .await
        }
    };
    let res = send("").await;
    assert_eq!(res.status(), 303);
    assert_eq!(location(&res), at);
    let res = send("other@example.com").await;
    assert_eq!(res.status(), 303);
    let to: Vec<String> = mails(&app, &uid).await.into_iter().map(|m| m.to).collect();
    assert_eq!(to, ["other@example.com", "payer@example.com"]);
    let res = send("not an address").await;
    assert_eq!(res.status(), 400);
    let html = res.text().await.unwrap();
    assert!(html.contains("id=\"link-notice\""), "{html}");
    assert_eq!(mails(&app, &uid).await.len(), 2);
}

on_both_backends!(
    the_list_filters_by_status_and_searches,
    the_form_creates_a_link_with_every_field,
    status_moves_are_the_domains,
    a_read_only_member_sees_and_changes_nothing,
    another_teams_link_is_not_found,
    every_form_needs_csrf_and_our_origin,
    an_underpaid_session_is_resolved_by_hand,
    the_request_email_is_queued,
);
