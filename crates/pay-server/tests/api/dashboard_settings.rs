//! The dashboard's Settings screen over HTTP: an owner saves every PaySettings field (read
//! back through the JSON API, decimals as typed); a refused field (out of range, a bad URL,
//! an unknown asset) shows the form again with the reason and every typed value, 400, and
//! changes nothing; the EVM settlement wallet is set by its xpub and shows its first
//! addresses (the JSON API's), a private key is refused and never shown. Every form needs
//! the session's CSRF token, our origin and a form body; a read-only member reads the
//! settings with no form and each POST answers 403; another team's screen is 404.

use reqwest::Method;
use serde_json::Value;

use crate::dashboard::{field, page, post};
use crate::helpers::{read, TestApp};
use crate::oauth_support::form;
use crate::on_both_backends;

const BASE_USDC: &str = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
const XPUB: &str = "xpub6Ce9NcJvTk36xtLSrJLZqE7wtgA5deCeYs7rSQtreh4cj6ByPtrg9sD7V2FNFLPnf8heNP3FGkeV9qwfzvZNSd54JoNXVsXFYSYwHsnJxqP";
const XPRV: &str = "xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHi";

async fn settings(app: &TestApp) -> Value {
    let got = read(
        app.req(Method::GET, "/api/partner/v1/pay/settings")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(got.0, 200, "{}", got.1);
    got.1
}

/// A whole settings form, with `changes` over the values below.
fn settings_form<'a>(csrf: &'a str, changes: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut pairs = vec![
        ("csrf_token", csrf),
        ("status", "paused"),
        ("defaultDestinationAsset", BASE_USDC),
        ("feePaidBy", "client"),
        ("skipQuoteAcceptance", "true"),
        ("merchantSurchargePercent", "0.50"),
        ("returnRedirectUrl", "https://shop.example/back"),
        ("successRedirectUrl", "https://shop.example/thanks"),
        ("failureRedirectUrl", ""),
        ("underpaymentPercentEnabled", "true"),
        ("underpaymentPercentThreshold", "2.5"),
        ("underpaymentFixedThreshold", "0.75"),
    ];
    for (name, value) in changes {
        match pairs.iter_mut().find(|(n, _)| n == name) {
            Some(p) => p.1 = value,
            None => pairs.push((name, value)),
        }
    }
    pairs
}

async fn an_owner_saves_every_setting_and_a_refused_field_keeps_the_form(app: TestApp) {
    let s = app.login_owner(&app.t).await;
    let path = format!("/dashboard/{}/settings", app.t.company_id);
    let (status, _, html) = page(&app, &s, &path).await;
    assert_eq!(status, 200);
    assert!(html.contains("<h1>Settings</h1>"), "{html}");
    let csrf = field(&html, "csrf_token");
    let before = settings(&app).await;
    assert_eq!(
        field(&html, "merchantSurchargePercent")
            .parse::<f64>()
            .unwrap(),
        before["merchantSurchargePercent"].as_f64().unwrap()
    );

    // Without the token, from another site, or with no form: refused, nothing changed.
    let mut no_token = settings_form(&csrf, &[]);
    no_token.remove(0);
    assert_eq!(post(&app, &s, &path, &no_token).await.status(), 403);
    let res = app
        .in_session_no_csrf(&s, Method::POST, &path)
        .header("content-type", "application/x-www-form-urlencoded")
        .header("origin", "https://evil.example")
        .body(form(&settings_form(&csrf, &[])))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    let res = app
        .in_session_no_csrf(&s, Method::POST, &path)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 400);
    assert_eq!(settings(&app).await, before);

    // Saved: every field, decimals as typed; an unticked box is off, a blank URL none.
    let res = post(&app, &s, &path, &settings_form(&csrf, &[])).await;
    assert_eq!(res.status(), 200);
    assert!(res
        .text()
        .await
        .unwrap()
        .contains("The settings are saved."));
    let after = settings(&app).await;
    assert_eq!(after["status"], "paused");
    assert_eq!(after["defaultDestinationAsset"], BASE_USDC);
    assert_eq!(after["feePaidBy"], "client");
    assert_eq!(after["skipQuoteAcceptance"], true);
    // The decimals as typed: the raw JSON keeps their digits.
    let raw = app
        .req(Method::GET, "/api/partner/v1/pay/settings")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for exact in [
        "\"merchantSurchargePercent\":0.50",
        "\"underpaymentPercentThreshold\":2.5",
        "\"underpaymentFixedThreshold\":0.75",
    ] {
        assert!(raw.contains(exact), "{exact} in {raw}");
    }
    assert_eq!(after["returnRedirectUrl"], "https://shop.example/back");
    assert_eq!(after["successRedirectUrl"], "https://shop.example/thanks");
    assert_eq!(after["failureRedirectUrl"], Value::Null);
    assert_eq!(after["underpaymentPercentEnabled"], true);
    assert_eq!(after["underpaymentFixedEnabled"], false);
    let (_, _, html) = page(&app, &s, &path).await;
    assert_eq!(field(&html, "merchantSurchargePercent"), "0.50");
    assert!(
        html.contains("name=\"skipQuoteAcceptance\" value=\"true\" checked"),
        "{html}"
    );
    assert!(
        html.contains(&format!("<option value=\"{BASE_USDC}\" selected>")),
        "{html}"
    );

    // Refused fields: the reason, every typed value, nothing saved.
    for (name, value, why) in [
        (
            "merchantSurchargePercent",
            "1.5",
            "merchantSurchargePercent must be a number from -1 to 1",
        ),
        (
            "underpaymentPercentThreshold",
            "101",
            "underpaymentPercentThreshold must be a number from 0 to 100",
        ),
        (
            "underpaymentFixedThreshold",
            "-1",
            "underpaymentFixedThreshold must be a number of at least 0",
        ),
        ("successRedirectUrl", "not a url", "successRedirectUrl"),
        (
            "defaultDestinationAsset",
            "eip155:1/erc20:0xnope",
            "is not an enabled destination asset",
        ),
        (
            "feePaidBy",
            "nobody",
            "feePaidBy must be client or merchant",
        ),
    ] {
        let pairs = settings_form(
            &csrf,
            &[
                (name, value),
                ("returnRedirectUrl", "https://shop.example/typed"),
            ],
        );
        let res = post(&app, &s, &path, &pairs).await;
        assert_eq!(res.status(), 400, "{name}");
        let html = res.text().await.unwrap();
        assert!(html.contains("id=\"settings-error\""), "{name}: {html}");
        assert!(html.contains(why), "{name}: {why} in {html}");
        assert!(
            html.contains("value=\"https://shop.example/typed\""),
            "{name}: {html}"
        );
        assert!(
            html.contains(&format!("name=\"{name}\"")) && html.contains("aria-invalid=\"true\""),
            "{name}: {html}"
        );
        if name != "defaultDestinationAsset" && name != "feePaidBy" {
            assert_eq!(field(&html, name), value, "{name}");
        }
        assert_eq!(settings(&app).await, after, "{name}: nothing saved");
    }
}

async fn the_wallet_is_set_by_its_xpub_and_shows_its_first_addresses(app: TestApp) {
    let s = app.login_owner(&app.t).await;
    let path = format!("/dashboard/{}/settings", app.t.company_id);
    let (_, _, html) = page(&app, &s, &path).await;
    assert!(html.contains("No wallet yet"), "{html}");
    let csrf = field(&html, "csrf_token");
    let wallet = format!("{path}/wallet");
    assert_eq!(
        post(&app, &s, &wallet, &[("xpub", XPUB)]).await.status(),
        403
    );
    // A private key is refused and never shown back; neither is garbage kept.
    for (typed, why) in [
        (XPRV, "this is an extended private key"),
        ("xpub-nonsense", "not an extended public key"),
    ] {
        let res = post(&app, &s, &wallet, &[("xpub", typed), ("csrf_token", &csrf)]).await;
        assert_eq!(res.status(), 400, "{typed}");
        let html = res.text().await.unwrap();
        assert!(html.contains(why), "{why} in {html}");
        assert!(!html.contains(typed), "the refused key is not echoed");
    }
    let res = post(&app, &s, &wallet, &[("xpub", XPUB), ("csrf_token", &csrf)]).await;
    assert_eq!(res.status(), 200);
    let html = res.text().await.unwrap();
    let got = read(
        app.req(Method::GET, "/api/partner/v1/pay/settlement-wallets/evm")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(got.0, 200, "{}", got.1);
    let addresses = got.1["firstAddresses"].as_array().unwrap();
    assert_eq!(addresses.len(), 3);
    for a in addresses {
        let a = a.as_str().unwrap();
        assert!(
            html.contains(&format!("<li><code>{a}</code></li>")),
            "{a} in {html}"
        );
    }
    assert!(html.contains(XPUB), "{html}");
    let (_, _, again) = page(&app, &s, &path).await;
    assert!(again.contains(addresses[0].as_str().unwrap()), "{again}");
}

async fn a_read_only_member_reads_the_settings_and_changes_nothing(app: TestApp) {
    let (email, password) = app.add_member(&app.t, "member").await;
    let s = app.login(&email, &password).await;
    let path = format!("/dashboard/{}/settings", app.t.company_id);
    let (status, _, html) = page(&app, &s, &path).await;
    assert_eq!(status, 200);
    assert!(html.contains("id=\"settings-list\""), "{html}");
    assert!(
        html.contains("<dt>Fee paid by</dt><dd>merchant</dd>"),
        "{html}"
    );
    let save = format!("action=\"{path}\"");
    let wallet = format!("action=\"{path}/wallet\"");
    for control in [save.as_str(), wallet.as_str(), "Save settings"] {
        assert!(
            !html.contains(control),
            "{control} shown to a member: {html}"
        );
    }
    let csrf = field(&html, "csrf_token");
    let before = settings(&app).await;
    let res = post(&app, &s, &path, &settings_form(&csrf, &[])).await;
    assert_eq!(res.status(), 403);
    let res = post(
        &app,
        &s,
        &format!("{path}/wallet"),
        &[("xpub", XPUB), ("csrf_token", &csrf)],
    )
    .await;
    assert_eq!(res.status(), 403);
    assert_eq!(settings(&app).await, before);
    let got = app
        .req(Method::GET, "/api/partner/v1/pay/settlement-wallets/evm")
        .send()
        .await
        .unwrap();
    assert_eq!(got.status(), 404, "no wallet set");
}

async fn another_teams_settings_are_not_found(app: TestApp) {
    let s = app.login_owner(&app.t).await;
    let other = app.new_tenant("Bob Bikes").await;
    let (_, _, html) = page(
        &app,
        &s,
        &format!("/dashboard/{}/settings", app.t.company_id),
    )
    .await;
    let csrf = field(&html, "csrf_token");
    let bob = format!("/dashboard/{}/settings", other.company_id);
    assert_eq!(page(&app, &s, &bob).await.0, 404);
    let res = post(&app, &s, &bob, &settings_form(&csrf, &[])).await;
    assert_eq!(res.status(), 404);
    let res = post(
        &app,
        &s,
        &format!("{bob}/wallet"),
        &[("xpub", XPUB), ("csrf_token", &csrf)],
    )
    .await;
    assert_eq!(res.status(), 404);
    let theirs = read(
        app.as_tenant(&other, Method::GET, "/api/partner/v1/pay/settings")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(theirs.1["status"], "active", "unchanged");
}

on_both_backends!(
    an_owner_saves_every_setting_and_a_refused_field_keeps_the_form,
    the_wallet_is_set_by_its_xpub_and_shows_its_first_addresses,
    a_read_only_member_reads_the_settings_and_changes_nothing,
    another_teams_settings_are_not_found,
);
