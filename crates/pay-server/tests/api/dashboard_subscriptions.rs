//! The dashboard's Subscriptions screens over HTTP: the list by status and search (label,
//! customer e-mail), the create form (every field of the JSON create; a refused field keeps
//! what was typed), a subscription's page with its cycles and the merchant's moves (pause,
//! resume, cancel: only the moves the domain allows are offered, and a refused one is the
//! JSON route's 409 with the reason); CSRF and origin on every form, a read-only member sees
//! no control and each change answers 403, another team's subscription is 404.

use reqwest::Method;
use serde_json::{json, Value};

use crate::dashboard::{field, location, page, post};
use crate::helpers::{read, Session, TestApp};
use crate::oauth_support::form;
use crate::on_both_backends;
use crate::subscriptions::{created, monthly, patch, sub_path, SUBSCRIPTIONS};
use crate::webhooks::now_secs;

fn list(app: &TestApp) -> String {
    format!("/dashboard/{}/subscriptions", app.t.company_id)
}

/// The subscription as the JSON API reads it.
async fn sub_json(app: &TestApp, uid: &str) -> Value {
    let got = read(app.req(Method::GET, &sub_path(uid)).send().await.unwrap()).await;
    assert_eq!(got.0, 200, "{}", got.1);
    got.1
}

async fn count(app: &TestApp) -> usize {
    let got = read(app.req(Method::GET, SUBSCRIPTIONS).send().await.unwrap()).await;
    got.1["data"].as_array().unwrap().len()
}

/// The subscription uids the page links to, in its order.
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

fn uid(v: &Value) -> String {
    v["uid"].as_str().unwrap().to_owned()
}

async fn the_list_filters_by_status_and_searches(app: TestApp) {
    let s = app.login_owner(&app.t).await;
    let ann = uid(&created(&app, monthly("ann@example.com")).await);
    let mut body = monthly("bob@bikes.example");
    body["label"] = json!("Team seats");
    let bob = uid(&created(&app, body).await);
    assert_eq!(patch(&app, &bob, "paused").await.0, 200);
    let (status, _, html) = page(&app, &s, &list(&app)).await;
    assert_eq!(status, 200);
    assert!(
        html.contains("aria-current=\"page\">Subscriptions</a>"),
        "{html}"
    );
    assert_eq!(listed(&html, &app), [bob.clone(), ann.clone()]);
    assert!(html.contains(">Pro plan</a>"), "{html}");
    assert!(
        html.contains("<td data-label=\"Customer\">ann@example.com</td>"),
        "{html}"
    );
    let found = |q: &'static str| {
        let (app, s) = (&app, &s);
        async move {
            let (status, _, html) = page(app, s, &format!("{}?{q}", list(app))).await;
            assert_eq!(status, 200, "{q}");
            listed(&html, app)
        }
    };
    assert_eq!(found("q=PRO").await, [ann.as_str()]);
    assert_eq!(found("q=bikes").await, [bob.as_str()]);
    assert_eq!(found("status=paused").await, [bob.as_str()]);
    assert_eq!(found("status=active&q=example").await, [ann.as_str()]);
    assert!(found("status=cancelled").await.is_empty());
    let (_, _, html) = page(&app, &s, &format!("{}?q=none%3C", list(&app))).await;
    assert!(html.contains("No subscription matches."), "{html}");
    assert!(
        html.contains("value=\"none&lt;\""),
        "the search is kept: {html}"
    );
    // Another team's list has none of them.
    let other = app.new_tenant("Bob Bikes").await;
    let so = app.login_owner(&other).await;
    let (_, _, html) = page(
        &app,
        &so,
        &format!("/dashboard/{}/subscriptions", other.company_id),
    )
    .await;
    assert!(html.contains("No subscription."), "{html}");
    assert!(!html.contains("Pro plan"), "{html}");
}

async fn the_form_creates_a_subscription_with_every_field(app: TestApp) {
    let s = app.login_owner(&app.t).await;
    let csrf = csrf(&app, &s).await;
    let start = time::OffsetDateTime::from_unix_timestamp(now_secs() + 3 * 86_400)
        .unwrap()
        .replace_nanosecond(0)
        .unwrap()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap();
    let res = post(
        &app,
        &s,
        &list(&app),
        &[
            ("csrf_token", &csrf),
            ("customer_email", "grace@example.com"),
            ("label", "Quarterly box"),
            ("amount_usd", "29.50"),
            ("cadence", "custom_months"),
            ("billing_interval_count", "3"),
            ("timezone", "Europe/Berlin"),
            ("start_at", &start),
            (
                "settlement_asset",
                "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
            ),
            ("description", "Tea, every quarter"),
            ("metadata", "{\"plan\": \"tea\"}"),
        ],
    )
    .await;
    assert_eq!(res.status(), 303);
    let to = location(&res);
    let sub = to.rsplit('/').next().unwrap().to_owned();
    assert_eq!(to, format!("{}/{sub}", list(&app)));
    let j = sub_json(&app, &sub).await;
    for (k, v) in [
        ("customerEmail", "grace@example.com"),
        ("label", "Quarterly box"),
        ("amountUsd", "29.50"),
        ("cadence", "custom_months"),
        ("timezone", "Europe/Berlin"),
        ("description", "Tea, every quarter"),
        (
            "settlementAsset",
            "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
        ),
    ] {
        assert_eq!(j[k], v, "{k}: {j}");
    }
    assert_eq!(j["billingIntervalCount"], 3);
    assert_eq!(j["metadata"], json!({"plan": "tea"}));
    assert_eq!(
        crate::links::millis(j["startAt"].as_str().unwrap()),
        crate::links::millis(&start)
    );
    let (status, _, html) = page(&app, &s, &to).await;
    assert_eq!(status, 200);
    assert!(html.contains("Quarterly box"), "{html}");
    assert!(
        html.contains("<dd class=\"wrap\">every 3 months</dd>"),
        "{html}"
    );
    assert!(
        html.contains("<code class=\"wrap\">plan: &quot;tea&quot;</code>"),
        "{html}"
    );
    // Refused fields: the form again with the reason and what was typed (escaped).
    for (name, value, why) in [
        ("amount_usd", "1.234", "amountUsd"),
        ("cadence", "daily", "cadence must be one of"),
        (
            "billing_interval_count",
            "two",
            "billingIntervalCount must be a whole number",
        ),
        (
            "timezone",
            "Mars/Olympus",
            "timezone must be a supported IANA zone",
        ),
        ("customer_email", "nobody", "customerEmail"),
        ("metadata", "[1]", "metadata must be a JSON object"),
        ("start_at", "tomorrow", "startAt"),
    ] {
        let mut pairs = vec![
            ("csrf_token", csrf.as_str()),
            ("customer_email", "x@example.com"),
            ("label", "<Box> \"two\""),
            ("amount_usd", "5"),
            ("cadence", "monthly"),
            ("timezone", "UTC"),
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
            html.contains("value=\"&lt;Box&gt; &quot;two&quot;\""),
            "the typed label is kept: {html}"
        );
    }
    // A form with a field the create does not take is not read.
    let res = post(
        &app,
        &s,
        &list(&app),
        &[("csrf_token", &csrf), ("label", "x"), ("colour", "red")],
    )
    .await;
    assert_eq!(res.status(), 400);
    assert_eq!(count(&app).await, 1, "one subscription made");
}

/// POST a status move on the subscription's page; the answer.
async fn move_to(app: &TestApp, s: &Session, csrf: &str, sub: &str, to: &str) -> reqwest::Response {
    post(
        app,
        s,
        &format!("{}/{sub}/status", list(app)),
        &[("csrf_token", csrf), ("status", to)],
    )
    .await
}

async fn the_page_shows_cycles_and_the_domains_moves(app: TestApp) {
    let s = app.login_owner(&app.t).await;
    let csrf = csrf(&app, &s).await;
    let made = created(&app, monthly("ann@example.com")).await;
    let sub = uid(&made);
    let at = format!("{}/{sub}", list(&app));
    let buttons = |html: &str| {
        ["active", "paused", "cancelled"]
            .into_iter()
            .filter(|to| html.contains(&format!("name=\"status\" value=\"{to}\"")))
            .collect::<Vec<_>>()
    };
    let (status, _, html) = page(&app, &s, &at).await;
    assert_eq!(status, 200);
    assert!(
        html.contains("aria-current=\"page\">Subscriptions</a>"),
        "{html}"
    );
    assert!(
        html.contains("<span class=\"badge\" id=\"sub-state\">active</span>"),
        "{html}"
    );
    // Cycle 0 with its invoice link (the link's page) and checkout.
    let link = made["cycles"][0]["paymentLinkUid"].as_str().unwrap();
    assert!(
        html.contains(&format!(
            "<a href=\"/dashboard/{}/links/{link}\">Payment link</a>",
            app.t.company_id
        )),
        "{html}"
    );
    assert!(html.contains("<td data-label=\"Cycle\">0</td>"), "{html}");
    assert!(html.contains(">open</span>"), "{html}");
    // Its customer's page is linked.
    assert!(
        html.contains(&format!("/dashboard/{}/customers/cus_", app.t.company_id)),
        "{html}"
    );
    assert_eq!(buttons(&html), ["paused", "cancelled"]);
    let res = move_to(&app, &s, &csrf, &sub, "paused").await;
    assert_eq!(res.status(), 303);
    assert_eq!(location(&res), at);
    assert_eq!(sub_json(&app, &sub).await["status"], "paused");
    let (_, _, html) = page(&app, &s, &at).await;
    assert!(html.contains("id=\"sub-state\">paused</span>"), "{html}");
    assert_eq!(buttons(&html), ["active", "cancelled"]);
    let res = move_to(&app, &s, &csrf, &sub, "active").await;
    assert_eq!(res.status(), 303);
    assert_eq!(sub_json(&app, &sub).await["status"], "active");
    // Overdue is the scheduler's move alone: the domain's 409, said on the page.
    let res = move_to(&app, &s, &csrf, &sub, "overdue").await;
    assert_eq!(res.status(), 409);
    let html = res.text().await.unwrap();
    assert!(html.contains("id=\"subscription-notice\""), "{html}");
    assert!(html.contains("active to overdue"), "{html}");
    let res = move_to(&app, &s, &csrf, &sub, "cancelled").await;
    assert_eq!(res.status(), 303);
    let j = sub_json(&app, &sub).await;
    assert_eq!(j["status"], "cancelled");
    assert_eq!(j["cycles"][0]["status"], "cancelled", "{j}");
    let (_, _, html) = page(&app, &s, &at).await;
    assert!(
        buttons(&html).is_empty(),
        "nothing leaves cancelled: {html}"
    );
    assert!(html.contains("cannot change any more"), "{html}");
    // A move the domain refuses: the page with its reason, the JSON route's 409.
    let res = move_to(&app, &s, &csrf, &sub, "active").await;
    assert_eq!(res.status(), 409);
    assert!(res.text().await.unwrap().contains("cancelled to active"));
    assert_eq!(move_to(&app, &s, &csrf, &sub, "gone").await.status(), 400);
    assert_eq!(sub_json(&app, &sub).await["status"], "cancelled");
    // An unknown subscription is 404.
    let gone = format!("{}/sub_AbCdEfGhIjKlMnOpQrStUvWx", list(&app));
    assert_eq!(page(&app, &s, &gone).await.0, 404);
    assert_eq!(
        page(&app, &s, &format!("{}/nonsense", list(&app))).await.0,
        404
    );
    let res = move_to(&app, &s, &csrf, "sub_AbCdEfGhIjKlMnOpQrStUvWx", "paused").await;
    assert_eq!(res.status(), 404);
}

async fn a_read_only_member_sees_and_changes_nothing(app: TestApp) {
    let sub = uid(&created(&app, monthly("ann@example.com")).await);
    let (email, password) = app.add_member(&app.t, "member").await;
    let s = app.login(&email, &password).await;
    let (status, _, html) = page(&app, &s, &list(&app)).await;
    assert_eq!(status, 200);
    assert_eq!(listed(&html, &app), [sub.as_str()]);
    assert!(!html.contains("Create subscription"), "{html}");
    let at = format!("{}/{sub}", list(&app));
    let (status, _, html) = page(&app, &s, &at).await;
    assert_eq!(status, 200);
    assert!(
        !html.contains("/status\""),
        "a move shown to a member: {html}"
    );
    let csrf = field(&html, "csrf_token");
    let res = post(
        &app,
        &s,
        &list(&app),
        &[
            ("csrf_token", &csrf),
            ("customer_email", "x@example.com"),
            ("label", "x"),
            ("amount_usd", "5"),
            ("cadence", "monthly"),
            ("timezone", "UTC"),
        ],
    )
    .await;
    assert_eq!(res.status(), 403);
    for to in ["paused", "cancelled"] {
        assert_eq!(
            move_to(&app, &s, &csrf, &sub, to).await.status(),
            403,
            "{to}"
        );
    }
    assert_eq!(sub_json(&app, &sub).await["status"], "active");
    assert_eq!(count(&app).await, 1, "nothing made");
}

async fn another_teams_subscription_is_not_found(app: TestApp) {
    let mut body = monthly("ann@example.com");
    body["label"] = json!("Acme's plan");
    let sub = uid(&created(&app, body).await);
    let other = app.new_tenant("Bob Bikes").await;
    let so = app.login_owner(&other).await;
    let theirs = format!("/dashboard/{}/subscriptions", other.company_id);
    let (status, _, html) = page(&app, &so, &format!("{theirs}/{sub}")).await;
    assert_eq!(status, 404);
    assert!(!html.contains("Acme's plan"), "{html}");
    let (_, _, html) = page(&app, &so, &theirs).await;
    let csrf = field(&html, "csrf_token");
    let res = post(
        &app,
        &so,
        &format!("{theirs}/{sub}/status"),
        &[("csrf_token", &csrf), ("status", "cancelled")],
    )
    .await;
    assert_eq!(res.status(), 404);
    // Acme's pages are not Bob's.
    assert_eq!(page(&app, &so, &list(&app)).await.0, 404);
    assert_eq!(
        page(&app, &so, &format!("{}/{sub}", list(&app))).await.0,
        404
    );
    assert_eq!(sub_json(&app, &sub).await["status"], "active");
}

async fn every_form_needs_csrf_and_our_origin(app: TestApp) {
    let s = app.login_owner(&app.t).await;
    let csrf = csrf(&app, &s).await;
    let sub = uid(&created(&app, monthly("ann@example.com")).await);
    let at = format!("{}/{sub}", list(&app));
    let create = vec![
        ("customer_email", "x@example.com"),
        ("label", "x"),
        ("amount_usd", "5"),
        ("cadence", "monthly"),
        ("timezone", "UTC"),
    ];
    for (path, pairs) in [
        (list(&app), create),
        (format!("{at}/status"), vec![("status", "paused")]),
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
        let res = app
            .anon(Method::POST, &path)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form(&right))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 303, "{path}");
        assert!(location(&res).starts_with("/signin?"), "{}", location(&res));
    }
    assert_eq!(sub_json(&app, &sub).await["status"], "active");
    assert_eq!(count(&app).await, 1, "nothing made");
    for path in [list(&app), at] {
        let res = app.anon(Method::GET, &path).send().await.unwrap();
        assert_eq!(res.status(), 303, "{path}");
        assert!(location(&res).starts_with("/signin?return_to="), "{path}");
    }
}

on_both_backends!(
    the_list_filters_by_status_and_searches,
    the_form_creates_a_subscription_with_every_field,
    the_page_shows_cycles_and_the_domains_moves,
    a_read_only_member_sees_and_changes_nothing,
    another_teams_subscription_is_not_found,
    every_form_needs_csrf_and_our_origin,
);
