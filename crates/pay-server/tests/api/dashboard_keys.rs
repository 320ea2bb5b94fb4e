//! The dashboard's Developers screen over HTTP: an owner creates an API key (its secret in the
//! answer once, never on the screen again, and it authenticates), disables, enables and
//! deletes it; every form needs the session's CSRF token and our origin; a read-only member
//! sees no control and each change answers 403; another team's key is 404.

use reqwest::Method;
use serde_json::Value;

use crate::dashboard::{field, page, post};
use crate::helpers::{read, Session, TestApp};
use crate::on_both_backends;

/// The page's text between `start` and the next `end`.
fn between<'a>(html: &'a str, start: &str, end: &str) -> &'a str {
    let from = html
        .find(start)
        .unwrap_or_else(|| panic!("{start} in {html}"))
        + start.len();
    &html[from..from + html[from..].find(end).unwrap()]
}

/// GET the company with a key pair: the status.
async fn key_works(app: &TestApp, key_id: &str, secret: &str) -> u16 {
    app.anon(Method::GET, "/api/partner/v1/pay/company")
        .header("x-svc-key-id", key_id)
        .header("x-svc-key-secret", secret)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

/// The company's keys as the JSON API lists them (in a session of the owner).
async fn keys(app: &TestApp, s: &Session, company: &str) -> Vec<Value> {
    let got = read(
        app.in_session(
            s,
            Method::GET,
            &format!("/api/partner/v1/companies/{company}/integrations"),
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(got.0, 200, "{}", got.1);
    got.1["data"].as_array().cloned().unwrap()
}

fn partner_of(keys: &[Value], key_id: &str) -> String {
    keys.iter()
        .find(|k| k["key_id"] == key_id)
        .unwrap_or_else(|| panic!("{key_id} in {keys:?}"))["partner_id"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn an_owner_creates_sees_once_disables_and_deletes_a_key(app: TestApp) {
    let s = app.login_owner(&app.t).await;
    let dev = format!("/dashboard/{}/developers", app.t.company_id);
    let (status, _, html) = page(&app, &s, &dev).await;
    assert_eq!(status, 200);
    assert!(html.contains("<h1>Developers</h1>"), "{html}");
    assert!(
        html.contains(&app.t.key_id),
        "the bootstrap key is listed: {html}"
    );
    let csrf = field(&html, "csrf_token");
    let create = format!("{dev}/keys");

    // Without the token, with a wrong one, or from another site: 403, nothing created.
    let before = keys(&app, &s, &app.t.company_id).await.len();
    let res = post(&app, &s, &create, &[("name", "No token")]).await;
    assert_eq!(res.status(), 403);
    let res = post(
        &app,
        &s,
        &create,
        &[("name", "Bad token"), ("csrf_token", "x")],
    )
    .await;
    assert_eq!(res.status(), 403);
    let res = app
        .in_session_no_csrf(&s, Method::POST, &create)
        .header("content-type", "application/x-www-form-urlencoded")
        .header("origin", "https://evil.example")
        .body(crate::oauth_support::form(&[
            ("name", "Evil"),
            ("csrf_token", &csrf),
        ]))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    assert_eq!(keys(&app, &s, &app.t.company_id).await.len(), before);

    // A refused name: the form again with the reason and the origins typed.
    let res = post(
        &app,
        &s,
        &create,
        &[
            ("name", ""),
            ("allowed_origins", "https://shop.example"),
            ("csrf_token", &csrf),
        ],
    )
    .await;
    assert_eq!(res.status(), 400);
    let html = res.text().await.unwrap();
    assert!(html.contains("role=\"alert\""), "{html}");
    assert!(html.contains(">https://shop.example</textarea>"), "{html}");

    // Created: the secret once, and it authenticates.
    let res = post(
        &app,
        &s,
        &create,
        &[
            ("name", "Shop <backend>"),
            ("allowed_origins", "https://shop.example"),
            ("csrf_token", &csrf),
        ],
    )
    .await;
    assert_eq!(res.status(), 201);
    assert_eq!(res.headers()["cache-control"], "no-store");
    let html = res.text().await.unwrap();
    let key_id = between(&html, "<code class=\"secret\" id=\"new-key-id\">", "<").to_owned();
    let secret = between(&html, "<code class=\"secret\" id=\"new-key-secret\">", "<").to_owned();
    assert!(key_id.starts_with("mk_pay_"), "{key_id}");
    assert!(secret.starts_with("mksec_"), "{secret}");
    assert!(html.contains("Shop &lt;backend&gt;"), "escaped: {html}");
    assert_eq!(key_works(&app, &key_id, &secret).await, 200);
    // Never again: the screen lists the key, not its secret.
    let (_, _, html) = page(&app, &s, &dev).await;
    assert!(html.contains(&key_id), "{html}");
    assert!(!html.contains(&secret), "the secret is shown once");
    assert!(!html.contains("mksec_"), "{html}");

    // Disable: the key stops working; enable: it works again; delete: gone.
    let partner = partner_of(&keys(&app, &s, &app.t.company_id).await, &key_id);
    let key = format!("{dev}/keys/{partner}");
    let res = post(&app, &s, &format!("{key}/disable"), &[]).await;
    assert_eq!(res.status(), 403, "no token");
    let res = post(
        &app,
        &s,
        &format!("{key}/disable"),
        &[("csrf_token", &csrf)],
    )
    .await;
    assert_eq!(res.status(), 303);
    assert_eq!(crate::dashboard::location(&res), dev);
    assert_eq!(key_works(&app, &key_id, &secret).await, 401);
    let (_, _, html) = page(&app, &s, &dev).await;
    assert!(
        html.contains("aria-label=\"Enable Shop &lt;backend&gt;\""),
        "{html}"
    );
    let res = post(&app, &s, &format!("{key}/enable"), &[("csrf_token", &csrf)]).await;
    assert_eq!(res.status(), 303);
    assert_eq!(key_works(&app, &key_id, &secret).await, 200);
    let res = post(&app, &s, &format!("{key}/rename"), &[("csrf_token", &csrf)]).await;
    assert_eq!(res.status(), 404, "unknown action");
    let res = post(&app, &s, &format!("{key}/delete"), &[("csrf_token", &csrf)]).await;
    assert_eq!(res.status(), 303);
    assert_eq!(key_works(&app, &key_id, &secret).await, 401);
    let (_, _, html) = page(&app, &s, &dev).await;
    assert!(!html.contains(&key_id), "{html}");
    let res = post(&app, &s, &format!("{key}/delete"), &[("csrf_token", &csrf)]).await;
    assert_eq!(res.status(), 404, "deleted already");
}

async fn a_read_only_member_sees_no_control_and_changes_nothing(app: TestApp) {
    let (email, password) = app.add_member(&app.t, "member").await;
    let s = app.login(&email, &password).await;
    let owner = app.login_owner(&app.t).await;
    let dev = format!("/dashboard/{}/developers", app.t.company_id);
    let (status, _, html) = page(&app, &s, &dev).await;
    assert_eq!(status, 200);
    assert!(
        html.contains(&app.t.key_id),
        "the member sees the keys: {html}"
    );
    for control in [
        "/developers/keys\"",
        "/disable\"",
        "/delete\"",
        "Create key",
    ] {
        assert!(
            !html.contains(control),
            "{control} shown to a member: {html}"
        );
    }
    let csrf = field(&html, "csrf_token");
    let partner = partner_of(&keys(&app, &owner, &app.t.company_id).await, &app.t.key_id);
    let res = post(
        &app,
        &s,
        &format!("{dev}/keys"),
        &[("name", "Mine"), ("csrf_token", &csrf)],
    )
    .await;
    assert_eq!(res.status(), 403);
    for action in ["disable", "enable", "delete"] {
        let res = post(
            &app,
            &s,
            &format!("{dev}/keys/{partner}/{action}"),
            &[("csrf_token", &csrf)],
        )
        .await;
        assert_eq!(res.status(), 403, "{action}");
    }
    assert_eq!(key_works(&app, &app.t.key_id, &app.t.key_secret).await, 200);
    assert_eq!(keys(&app, &owner, &app.t.company_id).await.len(), 1);
}

async fn another_teams_key_is_not_found(app: TestApp) {
    let s = app.login_owner(&app.t).await;
    let other = app.new_tenant("Bob Bikes").await;
    let so = app.login_owner(&other).await;
    let theirs = partner_of(&keys(&app, &so, &other.company_id).await, &other.key_id);
    let (_, _, html) = page(
        &app,
        &s,
        &format!("/dashboard/{}/developers", app.t.company_id),
    )
    .await;
    let csrf = field(&html, "csrf_token");
    // Their key under our team's path, and anything under their team's path: 404.
    let ours = app.t.company_id.clone();
    let bob = other.company_id.clone();
    for (path, pairs) in [
        (
            format!("/dashboard/{ours}/developers/keys/{theirs}/disable"),
            vec![],
        ),
        (
            format!("/dashboard/{ours}/developers/keys/{theirs}/delete"),
            vec![],
        ),
        (
            format!("/dashboard/{bob}/developers/keys/{theirs}/disable"),
            vec![],
        ),
        (
            format!("/dashboard/{bob}/developers/keys"),
            vec![("name", "x")],
        ),
        (
            format!("/dashboard/{ours}/developers/keys/not-a-key/delete"),
            vec![],
        ),
    ] {
        let mut pairs = pairs;
        pairs.push(("csrf_token", csrf.as_str()));
        let res = post(&app, &s, &path, &pairs).await;
        assert_eq!(res.status(), 404, "{path}");
    }
    assert_eq!(key_works(&app, &other.key_id, &other.key_secret).await, 200);
}

on_both_backends!(
    an_owner_creates_sees_once_disables_and_deletes_a_key,
    a_read_only_member_sees_no_control_and_changes_nothing,
    another_teams_key_is_not_found,
);
