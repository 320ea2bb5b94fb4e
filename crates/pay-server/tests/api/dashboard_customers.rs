//! The dashboard's Customers screens over HTTP: the list and its search (name, e-mail, client
//! id; customers only), the add-or-update form (the JSON upsert's rules; a refused field
//! keeps what was typed), a customer's page with its subscriptions, and the portal link
//! (generated on demand, shown once, and it opens the portal); CSRF and origin on every form,
//! a read-only member sees no control and each change answers 403, another team's customer is
//! 404.

use reqwest::Method;
use serde_json::{json, Value};

use crate::dashboard::{field, location, page, post};
use crate::helpers::{read, Session, TestApp};
use crate::oauth_support::form;
use crate::on_both_backends;
use crate::subscriptions::{created, monthly};

const CUSTOMERS: &str = "/api/partner/v1/pay/customers";

fn list(app: &TestApp) -> String {
    format!("/dashboard/{}/customers", app.t.company_id)
}

/// The customers as the JSON API lists them.
async fn customers_json(app: &TestApp) -> Vec<Value> {
    let got = read(app.req(Method::GET, CUSTOMERS).send().await.unwrap()).await;
    assert_eq!(got.0, 200, "{}", got.1);
    got.1["data"].as_array().unwrap().clone()
}

/// Upserts a customer through the JSON API: its uid.
async fn customer(app: &TestApp, body: Value) -> String {
    let got = read(
        app.req(Method::POST, CUSTOMERS)
            .json(&body)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert!(got.0 == 201 || got.0 == 200, "{}", got.1);
    got.1["uid"].as_str().unwrap().to_owned()
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

async fn the_list_searches_customers(app: TestApp) {
    let s = app.login_owner(&app.t).await;
    let ada = customer(
        &app,
        json!({"email": "ada@example.com", "name": "Ada Lovelace", "clientId": "C-42"}),
    )
    .await;
    let bob = customer(&app, json!({"email": "bob@bikes.example"})).await;
    let (status, _, html) = page(&app, &s, &list(&app)).await;
    assert_eq!(status, 200);
    assert!(
        html.contains("aria-current=\"page\">Customers</a>"),
        "{html}"
    );
    assert_eq!(listed(&html, &app), [bob.clone(), ada.clone()]);
    assert!(html.contains(">Ada Lovelace</a>"), "{html}");
    assert!(
        html.contains("<td data-label=\"Client id\">C-42</td>"),
        "{html}"
    );
    let found = |q: &'static str| {
        let (app, s) = (&app, &s);
        async move {
            let (status, _, html) = page(app, s, &format!("{}?q={q}", list(app))).await;
            assert_eq!(status, 200, "{q}");
            listed(&html, app)
        }
    };
    assert_eq!(found("LOVELACE").await, [ada.as_str()]);
    assert_eq!(found("c-4").await, [ada.as_str()]);
    assert_eq!(found("bikes").await, [bob.as_str()]);
    assert_eq!(found("example").await.len(), 2);
    let (_, _, html) = page(&app, &s, &format!("{}?q=nobody%3Chere", list(&app))).await;
    assert!(html.contains("No customer matches."), "{html}");
    assert!(
        html.contains("value=\"nobody&lt;here\""),
        "the search is kept: {html}"
    );
    // A search the domain refuses (over 200 characters) says why.
    let long = "x".repeat(201);
    let (status, _, html) = page(&app, &s, &format!("{}?q={long}", list(&app))).await;
    assert_eq!(status, 200);
    assert!(html.contains("id=\"search-error\""), "{html}");
    // Another team's list has none of them.
    let other = app.new_tenant("Bob Bikes").await;
    let so = app.login_owner(&other).await;
    let theirs = format!("/dashboard/{}/customers", other.company_id);
    let (_, _, html) = page(&app, &so, &theirs).await;
    assert!(!html.contains("Ada"), "{html}");
    let (_, _, html) = page(&app, &so, &format!("{theirs}?q=ada")).await;
    assert!(html.contains("No customer matches."), "{html}");
}

async fn the_form_adds_and_updates_a_customer(app: TestApp) {
    let s = app.login_owner(&app.t).await;
    let csrf = csrf(&app, &s).await;
    let res = post(
        &app,
        &s,
        &list(&app),
        &[
            ("csrf_token", &csrf),
            ("email", " Grace@Example.com "),
            ("name", "Grace Hopper"),
            ("client_id", "G-1"),
            ("metadata", "{\"tier\": \"gold\"}"),
        ],
    )
    .await;
    assert_eq!(res.status(), 303);
    let to = location(&res);
    let uid = to.rsplit('/').next().unwrap().to_owned();
    assert_eq!(to, format!("{}/{uid}", list(&app)));
    let all = customers_json(&app).await;
    assert_eq!(all.len(), 1);
    assert_eq!(all[0]["uid"], uid.as_str());
    assert_eq!(all[0]["name"], "Grace Hopper");
    assert_eq!(all[0]["clientId"], "G-1");
    assert_eq!(all[0]["metadata"], json!({"tier": "gold"}));
    let (status, _, html) = page(&app, &s, &to).await;
    assert_eq!(status, 200);
    assert!(html.contains("<dd>Grace Hopper</dd>"), "{html}");
    assert!(
        html.contains("<code>tier: &quot;gold&quot;</code>"),
        "{html}"
    );
    assert!(
        html.contains("This customer has no subscription."),
        "{html}"
    );
    // The same e-mail in another case updates it: only the given field changes.
    let res = post(
        &app,
        &s,
        &list(&app),
        &[
            ("csrf_token", &csrf),
            ("email", "grace@example.com"),
            ("name", "Rear Admiral Hopper"),
        ],
    )
    .await;
    assert_eq!(res.status(), 303);
    assert_eq!(location(&res), to);
    let all = customers_json(&app).await;
    assert_eq!(all.len(), 1);
    assert_eq!(all[0]["name"], "Rear Admiral Hopper");
    assert_eq!(all[0]["clientId"], "G-1");
    // Refused fields: the form again with the reason and what was typed (escaped).
    for (name, value, why) in [
        ("email", "not an e-mail", "email"),
        ("metadata", "[1]", "metadata must be a JSON object"),
    ] {
        let mut pairs = vec![
            ("csrf_token", csrf.as_str()),
            ("email", "x@example.com"),
            ("name", "<Ann> \"two\""),
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
            html.contains("value=\"&lt;Ann&gt; &quot;two&quot;\""),
            "the typed name is kept: {html}"
        );
    }
    // A form with a field the upsert does not take is not read.
    let res = post(
        &app,
        &s,
        &list(&app),
        &[
            ("csrf_token", &csrf),
            ("email", "y@example.com"),
            ("phone", "1"),
        ],
    )
    .await;
    assert_eq!(res.status(), 400);
    assert_eq!(customers_json(&app).await.len(), 1, "nothing else made");
}

/// The portal URL's path and query on the page (the test server answers for the public
/// pay site), or `None`.
fn portal_path(html: &str) -> Option<String> {
    let marker = "<a id=\"portal-url\" href=\"";
    let start = html.find(marker)? + marker.len();
    let url = html[start..start + html[start..].find('"').unwrap()].replace("&amp;", "&");
    Some(
        url.strip_prefix("https://pay.test.example")
            .unwrap_or_else(|| panic!("{url}"))
            .to_owned(),
    )
}

async fn a_customer_page_shows_subscriptions_and_a_portal_link(app: TestApp) {
    let s = app.login_owner(&app.t).await;
    let sub = created(&app, monthly("lin@example.com")).await;
    let uid = customers_json(&app).await[0]["uid"]
        .as_str()
        .unwrap()
        .to_owned();
    let at = format!("{}/{uid}", list(&app));
    let (status, _, html) = page(&app, &s, &at).await;
    assert_eq!(status, 200);
    assert!(html.contains("<dd>lin@example.com</dd>"), "{html}");
    let sub_uid = sub["uid"].as_str().unwrap();
    assert!(
        html.contains(&format!(
            "<a href=\"/dashboard/{}/subscriptions/{sub_uid}\">Pro plan</a>",
            app.t.company_id
        )),
        "{html}"
    );
    assert!(portal_path(&html).is_none(), "no link before asked: {html}");
    let csrf = field(&html, "csrf_token");
    let res = post(&app, &s, &format!("{at}/portal"), &[("csrf_token", &csrf)]).await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["cache-control"], "no-store");
    let html = res.text().await.unwrap();
    assert!(html.contains("id=\"portal-made\""), "{html}");
    let path = portal_path(&html).expect("the portal URL");
    // It opens the customer's portal, with the subscription.
    let res = app.anon(Method::GET, &path).send().await.unwrap();
    assert_eq!(res.status(), 200, "{path}");
    assert!(res.text().await.unwrap().contains("Pro plan"));
    // Shown once: the page again has none.
    let (_, _, html) = page(&app, &s, &at).await;
    assert!(portal_path(&html).is_none(), "{html}");
    // An unknown customer id is 404 (read and portal).
    let gone = format!("{}/cus_AbCdEfGhIjKlMnOpQrStUvWx", list(&app));
    assert_eq!(page(&app, &s, &gone).await.0, 404);
    assert_eq!(
        page(&app, &s, &format!("{}/nonsense", list(&app))).await.0,
        404
    );
    let res = post(
        &app,
        &s,
        &format!("{gone}/portal"),
        &[("csrf_token", &csrf)],
    )
    .await;
    assert_eq!(res.status(), 404);
}

async fn a_read_only_member_sees_and_changes_nothing(app: TestApp) {
    let uid = customer(&app, json!({"email": "ada@example.com", "name": "Ada"})).await;
    let (email, password) = app.add_member(&app.t, "member").await;
    let s = app.login(&email, &password).await;
    let (status, _, html) = page(&app, &s, &list(&app)).await;
    assert_eq!(status, 200);
    assert_eq!(listed(&html, &app), [uid.as_str()]);
    assert!(!html.contains("Save customer"), "{html}");
    assert!(
        !html.contains(&format!("method=\"post\" action=\"{}\"", list(&app))),
        "the add form shown to a member: {html}"
    );
    let at = format!("{}/{uid}", list(&app));
    let (status, _, html) = page(&app, &s, &at).await;
    assert_eq!(status, 200);
    assert!(
        !html.contains("/portal\""),
        "the portal control shown to a member: {html}"
    );
    let csrf = field(&html, "csrf_token");
    let res = post(
        &app,
        &s,
        &list(&app),
        &[("csrf_token", &csrf), ("email", "new@example.com")],
    )
    .await;
    assert_eq!(res.status(), 403);
    let res = post(&app, &s, &format!("{at}/portal"), &[("csrf_token", &csrf)]).await;
    assert_eq!(res.status(), 403);
    assert!(portal_path(&res.text().await.unwrap()).is_none());
    assert_eq!(customers_json(&app).await.len(), 1, "nothing made");
}

async fn another_teams_customer_is_not_found(app: TestApp) {
    let uid = customer(
        &app,
        json!({"email": "ada@example.com", "name": "Ada of Acme"}),
    )
    .await;
    let other = app.new_tenant("Bob Bikes").await;
    let so = app.login_owner(&other).await;
    let theirs = format!("/dashboard/{}/customers", other.company_id);
    let (status, _, html) = page(&app, &so, &format!("{theirs}/{uid}")).await;
    assert_eq!(status, 404);
    assert!(!html.contains("Ada of Acme"), "{html}");
    let (_, _, html) = page(&app, &so, &theirs).await;
    let csrf = field(&html, "csrf_token");
    let res = post(
        &app,
        &so,
        &format!("{theirs}/{uid}/portal"),
        &[("csrf_token", &csrf)],
    )
    .await;
    assert_eq!(res.status(), 404);
    assert!(portal_path(&res.text().await.unwrap()).is_none());
    // Acme's pages are not Bob's.
    assert_eq!(page(&app, &so, &list(&app)).await.0, 404);
    assert_eq!(
        page(&app, &so, &format!("{}/{uid}", list(&app))).await.0,
        404
    );
    let res = post(
        &app,
        &so,
        &list(&app),
        &[("csrf_token", &csrf), ("email", "x@example.com")],
    )
    .await;
    assert_eq!(res.status(), 404);
    assert_eq!(customers_json(&app).await.len(), 1);
}

async fn every_form_needs_csrf_and_our_origin(app: TestApp) {
    let s = app.login_owner(&app.t).await;
    let csrf = csrf(&app, &s).await;
    let uid = customer(&app, json!({"email": "ada@example.com"})).await;
    let at = format!("{}/{uid}", list(&app));
    for (path, pairs) in [
        (list(&app), vec![("email", "new@example.com")]),
        (format!("{at}/portal"), vec![]),
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
        // Not signed in, a good form: to the sign-in page.
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
    assert_eq!(customers_json(&app).await.len(), 1, "nothing made");
    // Not signed in, the pages: to the sign-in page.
    for path in [list(&app), at] {
        let res = app.anon(Method::GET, &path).send().await.unwrap();
        assert_eq!(res.status(), 303, "{path}");
        assert!(location(&res).starts_with("/signin?return_to="), "{path}");
    }
}

on_both_backends!(
    the_list_searches_customers,
    the_form_adds_and_updates_a_customer,
    a_customer_page_shows_subscriptions_and_a_portal_link,
    a_read_only_member_sees_and_changes_nothing,
    another_teams_customer_is_not_found,
    every_form_needs_csrf_and_our_origin,
);
