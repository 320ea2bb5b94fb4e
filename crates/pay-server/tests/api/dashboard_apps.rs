//! The Developers screen's connected apps and native installations over HTTP: an owner sees a
//! granted app with its scopes and last use, revokes it (its access and refresh tokens end at
//! once: a refresh afterwards is refused) and disconnects a native installation (its tokens
//! end, its webhook endpoint still gets the late payment-status events of the links issued
//! before, signed with the retained credential); every form needs the session's CSRF token; a
//! read-only member sees the list, no control, and each revoke answers 403; another team's
//! grant is 404.

use reqwest::Method;
use serde_json::Value;

use crate::dashboard::{field, location, page, post};
use crate::helpers::{Session, TestApp};
use crate::native::{native_refresh, platform};
use crate::native_retained::{call, link, pay, plugin, received, subscribe, LINKS};
use crate::oauth_support::{code_for, exchange, register, token, App};
use crate::on_both_backends;
use crate::webhooks::Receiver;

const SCOPES: &str = "company:read pay:payment-links:read";

fn developers(company: &str) -> String {
    format!("/dashboard/{company}/developers")
}

/// The grant ids of the revoke forms on a Developers page, in page order.
fn revoke_paths(html: &str) -> Vec<String> {
    html.split("action=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .filter(|a| a.contains("/developers/apps/") && a.ends_with("/revoke"))
        .map(str::to_owned)
        .collect()
}

/// A confidential app granted `SCOPES` by `t`'s owner on `t`'s team: the app and its tokens.
async fn granted(app: &TestApp, t: &crate::helpers::Tenant) -> (App, Value) {
    let client = register(app, SCOPES, false, false).await;
    let code = code_for(app, t, &client, SCOPES).await;
    let (status, tokens, _) = exchange(app, &client, &code, None).await;
    assert_eq!(status, 200, "{tokens}");
    (client, tokens)
}

/// GET the company with a Bearer access token: the status.
async fn bearer_works(app: &TestApp, access: &Value) -> u16 {
    app.anon(Method::GET, "/api/partner/v1/pay/company")
        .header(
            "authorization",
            format!("Bearer {}", access["access_token"].as_str().unwrap()),
        )
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

async fn refresh(app: &TestApp, client: &App, tokens: &Value) -> (reqwest::StatusCode, Value) {
    let pairs = [
        ("grant_type", "refresh_token"),
        ("refresh_token", tokens["refresh_token"].as_str().unwrap()),
    ];
    let (status, body, _) = token(app, client, &pairs, None).await;
    (status, body)
}

async fn an_owner_sees_and_revokes_a_connected_app(app: TestApp) {
    let s = app.login_owner(&app.t).await;
    let dev = developers(&app.t.company_id);
    let (_, _, html) = page(&app, &s, &dev).await;
    assert!(html.contains("No app or installation"), "{html}");
    let (client, tokens) = granted(&app, &app.t).await;
    // A refresh: its tokens work, and it is the grant's last use.
    let (status, tokens) = refresh(&app, &client, &tokens).await;
    assert_eq!(status, 200, "{tokens}");
    assert_eq!(bearer_works(&app, &tokens).await, 200);

    let (status, _, html) = page(&app, &s, &dev).await;
    assert_eq!(status, 200);
    assert!(html.contains("Shop &lt;Plugin&gt;"), "escaped: {html}");
    assert!(html.contains(&client.client_id), "{html}");
    for scope in SCOPES.split(' ') {
        assert!(html.contains(&format!("<code>{scope}</code>")), "{html}");
    }
    assert!(!html.contains("pay:webhooks:write"), "{html}");
    let row = &html[html.find("id=\"apps-h\"").unwrap()..];
    assert!(!row.contains(">never<"), "last used is shown: {row}");
    assert!(row.contains("<span class=\"badge\">Active</span>"), "{row}");
    assert!(
        row.contains("aria-label=\"Revoke Shop &lt;Plugin&gt;\""),
        "{row}"
    );
    let paths = revoke_paths(&html);
    assert_eq!(paths.len(), 1, "{html}");
    let revoke = paths[0].clone();
    assert!(revoke.starts_with(&dev), "{revoke}");
    let csrf = field(&html, "csrf_token");

    // No token, a wrong one: 403, nothing revoked.
    assert_eq!(post(&app, &s, &revoke, &[]).await.status(), 403);
    let res = post(&app, &s, &revoke, &[("csrf_token", "x")]).await;
    assert_eq!(res.status(), 403);
    assert_eq!(bearer_works(&app, &tokens).await, 200);

    // Revoked: back to the screen; the access token is refused, so is a refresh.
    let res = post(&app, &s, &revoke, &[("csrf_token", &csrf)]).await;
    assert_eq!(res.status(), 303);
    assert_eq!(location(&res), dev);
    assert_eq!(bearer_works(&app, &tokens).await, 401);
    let (status, body) = refresh(&app, &client, &tokens).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error"], "invalid_grant");
    let (_, _, html) = page(&app, &s, &dev).await;
    assert!(
        revoke_paths(&html).is_empty(),
        "no control once revoked: {html}"
    );
    assert!(
        html.contains("<span class=\"badge\">Revoked</span>"),
        "{html}"
    );
    // Again: nothing changes, back to the screen.
    let res = post(&app, &s, &revoke, &[("csrf_token", &csrf)]).await;
    assert_eq!(res.status(), 303);

    // A new consent connects the app again, with new tokens only.
    let code = code_for(&app, &app.t, &client, SCOPES).await;
    let (status, fresh, _) = exchange(&app, &client, &code, None).await;
    assert_eq!(status, 200, "{fresh}");
    assert_eq!(bearer_works(&app, &fresh).await, 200);
    assert_eq!(bearer_works(&app, &tokens).await, 401);
}

async fn an_owner_disconnects_a_native_installation(app: TestApp) {
    platform(&app, "woocommerce", "Woo Pay Connector").await;
    let p = plugin(&app).await;
    let hooks = Receiver::start();
    let secret = subscribe(&app, &p, &hooks).await;
    let late = link(&app, &p).await;
    let s = app.login_owner(&app.t).await;
    let dev = developers(&app.t.company_id);
    let (_, _, html) = page(&app, &s, &dev).await;
    assert!(html.contains("Woo Pay Connector"), "{html}");
    assert!(
        html.contains("Native installation (woocommerce) on https://shop.example"),
        "{html}"
    );
    assert!(
        html.contains("aria-label=\"Disconnect Woo Pay Connector\""),
        "{html}"
    );
    assert!(html.contains("<code>pay:webhooks:write</code>"), "{html}");
    let paths = revoke_paths(&html);
    assert_eq!(paths.len(), 1, "{html}");
    let csrf = field(&html, "csrf_token");

    let res = post(&app, &s, &paths[0], &[("csrf_token", &csrf)]).await;
    assert_eq!(res.status(), 303);
    // Its tokens are dead: the API and a refresh refuse them.
    assert_eq!(call(&app, &p, Method::GET, LINKS, None).await.0, 401);
    let (status, body, _) = native_refresh(&app, &p.client_id, &p.refresh, &p.key).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error"], "invalid_grant");
    let (_, _, html) = page(&app, &s, &dev).await;
    assert!(
        html.contains("<span class=\"badge\">Disconnected</span>"),
        "{html}"
    );
    assert!(revoke_paths(&html).is_empty(), "{html}");

    // What a disconnect keeps: the late payment of a link issued before still reaches the
    // installation's endpoint, signed with the credential it had.
    pay(&app, &late).await;
    let got = received(&hooks, &secret);
    assert!(
        got.iter()
            .any(|(u, t)| *u == late && t == "pay.payment.status_changed"),
        "{got:?}"
    );
}

async fn a_read_only_member_sees_apps_and_revokes_none(app: TestApp) {
    let (_, tokens) = granted(&app, &app.t).await;
    let (email, password) = app.add_member(&app.t, "member").await;
    let member = app.login(&email, &password).await;
    let owner = app.login_owner(&app.t).await;
    let dev = developers(&app.t.company_id);
    let (status, _, html) = page(&app, &member, &dev).await;
    assert_eq!(status, 200);
    assert!(html.contains("Shop &lt;Plugin&gt;"), "listed: {html}");
    assert!(revoke_paths(&html).is_empty(), "no control: {html}");
    assert!(!html.contains(">Revoke<"), "{html}");
    assert!(html.contains("can revoke an app"), "{html}");
    let csrf = field(&html, "csrf_token");
    let (_, _, owners) = page(&app, &owner, &dev).await;
    let revoke = revoke_paths(&owners).pop().unwrap();
    let res = post(&app, &member, &revoke, &[("csrf_token", &csrf)]).await;
    assert_eq!(res.status(), 403);
    assert_eq!(bearer_works(&app, &tokens).await, 200);
}

async fn another_teams_grant_is_not_found(app: TestApp) {
    let other = app.new_tenant("Bob Bikes").await;
    let (_, theirs) = granted(&app, &other).await;
    let bob: Session = app.login_owner(&other).await;
    let (_, _, html) = page(&app, &bob, &developers(&other.company_id)).await;
    let their_path = revoke_paths(&html).pop().unwrap();
    let grant = their_path.rsplit('/').nth(1).unwrap().to_owned();

    let s = app.login_owner(&app.t).await;
    let dev = developers(&app.t.company_id);
    let (_, _, html) = page(&app, &s, &dev).await;
    let csrf = field(&html, "csrf_token");
    assert!(!html.contains(&grant), "{html}");
    for path in [
        format!("{dev}/apps/{grant}/revoke"),
        their_path.clone(),
        format!("{dev}/apps/not-a-grant/revoke"),
        format!("{dev}/apps/00000000-0000-7000-8000-000000000000/revoke"),
    ] {
        let res = post(&app, &s, &path, &[("csrf_token", &csrf)]).await;
        assert_eq!(res.status(), 404, "{path}");
    }
    assert_eq!(bearer_works(&app, &theirs).await, 200);
    let (status, _, _) = page(&app, &s, &developers(&other.company_id)).await;
    assert_eq!(status, 404);
}

on_both_backends!(
    an_owner_sees_and_revokes_a_connected_app,
    an_owner_disconnects_a_native_installation,
    a_read_only_member_sees_apps_and_revokes_none,
    another_teams_grant_is_not_found,
);
