//! A portal URL never does more than the credential that minted it (docs/subscriptions.md,
//! Portal): minting needs `pay:customers:write`; a URL minted by an OAuth grant shows only
//! the subscriptions (and their invoices) of that grant, and only with
//! `pay:subscriptions:read`; its pause, resume and cancel forms work only with
//! `pay:subscriptions:write`; and it holds no more than the grant approves when it is opened.
//! Every combination of the four customer and subscription scopes is tried.

use reqwest::Method;
use serde_json::{json, Value};

use crate::customers::portal_path;
use crate::helpers::{read, TestApp};
use crate::oauth_support::{code_for, exchange, register, App};
use crate::on_both_backends;
use crate::subscriptions::{created, monthly, sub_path, SUBSCRIPTIONS};

const SCOPES: [&str; 4] = [
    "pay:customers:read",
    "pay:customers:write",
    "pay:subscriptions:read",
    "pay:subscriptions:write",
];

/// A Bearer token of `client` approved (again) by the main tenant's owner for `scope`: the
/// grant of the company and application then approves exactly `scope`.
async fn approve(app: &TestApp, client: &App, scope: &str) -> String {
    let code = code_for(app, &app.t, client, scope).await;
    let (status, t, _) = exchange(app, client, &code, None).await;
    assert_eq!(status, 200, "{t}");
    t["access_token"].as_str().unwrap().to_owned()
}

async fn bearer(
    app: &TestApp,
    token: &str,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut req = app
        .anon(method, path)
        .header("authorization", format!("Bearer {token}"));
    if let Some(b) = body {
        req = req.json(&b);
    }
    let (s, v) = read(req.send().await.unwrap()).await;
    (s.as_u16(), v)
}

/// The path and query of a portal URL (the test server answers for the public pay site).
fn path_of(answer: &Value) -> String {
    answer["customer"]["urls"]["customerPortal"]
        .as_str()
        .unwrap()
        .strip_prefix("https://pay.test.example")
        .unwrap()
        .to_owned()
}

async fn page(app: &TestApp, path: &str) -> (u16, String) {
    let res = app.anon(Method::GET, path).send().await.unwrap();
    (res.status().as_u16(), res.text().await.unwrap())
}

fn token_of(html: &str) -> String {
    let at = html.find("name=\"token\" value=\"").expect("a form token") + 20;
    html[at..at + 64].to_owned()
}

/// Posts the cancel form of subscription `uid` with the page's parameters and token.
async fn cancel_from(app: &TestApp, path: &str, token: &str, uid: &str) -> u16 {
    let mut pairs: Vec<(String, String)> = url::Url::parse(&format!("https://x{path}"))
        .unwrap()
        .query_pairs()
        .into_owned()
        .collect();
    pairs.push(("token".into(), token.into()));
    pairs.push(("status".into(), "cancelled".into()));
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(&pairs)
        .finish();
    app.anon(Method::POST, &format!("/portal/subscriptions/{uid}/status"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

async fn status_of(app: &TestApp, uid: &str) -> String {
    let (s, v) = read(app.req(Method::GET, &sub_path(uid)).send().await.unwrap()).await;
    assert_eq!(s, 200, "{v}");
    v["status"].as_str().unwrap().to_owned()
}

async fn every_scope_combination_mints_no_more_than_it_may(app: TestApp) {
    for mask in 0u8..16 {
        let held: Vec<&str> = SCOPES
            .iter()
            .enumerate()
            .filter(|(i, _)| mask & (1 << i) != 0)
            .map(|(_, s)| *s)
            .collect();
        let has = |s: &str| held.contains(&s);
        let what = format!("scopes {held:?}");
        let email = format!("c{mask}@example.com");
        // The customer's subscription made with the company's API key, and one made by the
        // grant while it held every scope.
        let by_key = created(&app, plan(&email, "Key plan")).await;
        let client = register(
            &app,
            &format!("company:read {}", SCOPES.join(" ")),
            false,
            false,
        )
        .await;
        let full = approve(&app, &client, &format!("company:read {}", SCOPES.join(" "))).await;
        let (s, by_grant) = bearer(
            &app,
            &full,
            Method::POST,
            SUBSCRIPTIONS,
            Some(plan(&email, "Grant plan")),
        )
        .await;
        assert_eq!(s, 201, "{by_grant}");
        let customer = {
            let (s, list) = bearer(
                &app,
                &full,
                Method::GET,
                "/api/partner/v1/pay/customers",
                None,
            )
            .await;
            assert_eq!(s, 200, "{list}");
            list["data"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["email"] == email.as_str())
                .unwrap()["uid"]
                .as_str()
                .unwrap()
                .to_owned()
        };
        // A URL minted while the grant approved everything...
        let (s, earlier) = bearer(&app, &full, Method::POST, &portal_path(&customer), None).await;
        assert_eq!(s, 200, "{earlier}");
        // ...then the merchant approves only `held` (the grant now holds exactly that).
        let scope = format!("company:read {}", held.join(" "));
        let token = approve(&app, &client, scope.trim()).await;
        let (s, minted) = bearer(&app, &token, Method::POST, &portal_path(&customer), None).await;
        if !has("pay:customers:write") {
            assert_eq!(s, 401, "{what}: {minted}");
            // The URL minted earlier holds no more than the grant holds now: nothing of the
            // subscriptions, no form that changes them (its rename needs customers:write too).
            let (st, html) = page(&app, &path_of(&earlier)).await;
            assert_eq!(st, 403, "{what}: {}", &html[..html.len().min(200)]);
            continue;
        }
        assert_eq!(s, 200, "{what}: {minted}");
        for path in [path_of(&minted), path_of(&earlier)] {
            let (st, html) = page(&app, &path).await;
            assert_eq!(
                st,
                200,
                "{what}: {}",
                &html[html.len().saturating_sub(400)..]
            );
            let key_sub = by_key["uid"].as_str().unwrap();
            let key_link = by_key["cycles"][0]["paymentLinkUid"].as_str().unwrap();
            let grant_sub = by_grant["uid"].as_str().unwrap();
            let grant_link = by_grant["cycles"][0]["paymentLinkUid"].as_str().unwrap();
            // Never what the grant did not create.
            assert!(!html.contains("Key plan"), "{what}");
            assert!(!html.contains(key_sub), "{what}");
            assert!(!html.contains(key_link), "{what}");
            // The grant's own, with the subscriptions scopes.
            let reads = has("pay:subscriptions:read");
            assert_eq!(html.contains("Grant plan"), reads, "{what}");
            assert_eq!(html.contains(grant_link), reads, "{what}");
            let forms = html.contains(&format!("/portal/subscriptions/{grant_sub}/status"));
            assert_eq!(forms, reads && has("pay:subscriptions:write"), "{what}");
            // Cancelling the key's subscription is refused whatever the page shows.
            let token = token_of(&html);
            assert!(
                [403, 404].contains(&cancel_from(&app, &path, &token, key_sub).await),
                "{what}"
            );
            assert_eq!(status_of(&app, key_sub).await, "active", "{what}");
        }
        // The grant's own subscription is cancelled only with pay:subscriptions:write.
        let path = path_of(&minted);
        let (_, html) = page(&app, &path).await;
        let grant_sub = by_grant["uid"].as_str().unwrap();
        let got = cancel_from(&app, &path, &token_of(&html), grant_sub).await;
        if has("pay:subscriptions:write") {
            assert_eq!(got, 303, "{what}");
            assert_eq!(status_of(&app, grant_sub).await, "cancelled", "{what}");
        } else {
            assert_eq!(got, 403, "{what}");
            assert_eq!(status_of(&app, grant_sub).await, "active", "{what}");
        }
    }
}

/// A monthly subscription of the customer `email` labelled `label`.
fn plan(email: &str, label: &str) -> Value {
    let mut body = monthly(email);
    body["label"] = json!(label);
    body
}

on_both_backends!(every_scope_combination_mints_no_more_than_it_may);
