//! A company's security reset (`pay-server admin security-reset`, run here through the same
//! domain call): an official native installation's access token, refresh token and stored
//! token-request answer all end, the members' sign-ins end, the API keys are disabled, another
//! company's installation is untouched, and what a disconnect keeps is kept: the retained
//! credential still signs the late payment-status event of a link issued before.

use pay_domain::kernel::ids::CompanyId;
use pay_domain::oauth::SecurityReset;
use pay_domain::tenancy::ports::IntegrationStore;
use reqwest::Method;

use crate::helpers::TestApp;
use crate::native::{create_link, installed, native_code, native_exchange, native_refresh};
use crate::native::{platform, CALLBACK, NATIVE_SCOPES};
use crate::native_recovery::{answer_held, assert_oauth_error, keyed, refresh_pairs};
use crate::native_retained::{call, link, pay, plugin, received, subscribe, Plugin, LINKS};
use crate::oauth_support::*;
use crate::on_both_backends;
use crate::webhooks::Receiver;

/// `admin security-reset --company <id>`'s domain call.
async fn reset(app: &TestApp, company: &str) -> Option<SecurityReset> {
    let pay = app.pay.clone();
    let company = CompanyId::parse(company).unwrap();
    tokio::task::spawn_blocking(move || pay.installations().security_reset(company))
        .await
        .unwrap()
        .unwrap()
}

/// The consent page of `client_id` with the cookies `cookies`: its status and `Location`.
async fn consent_page(app: &TestApp, client_id: &str, cookies: &str) -> (u16, String) {
    let query = form(&[
        ("response_type", "code"),
        ("client_id", client_id),
        ("redirect_uri", CALLBACK),
        ("scope", NATIVE_SCOPES),
        ("state", "st"),
        ("code_challenge", CHALLENGE),
        ("code_challenge_method", "S256"),
    ]);
    let res = app
        .anon(Method::GET, &format!("/oauth/authorize?{query}"))
        .header("cookie", cookies)
        .send()
        .await
        .unwrap();
    let location = res
        .headers()
        .get("location")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (res.status().as_u16(), location)
}

async fn a_security_reset_ends_every_access_of_the_company(app: TestApp) {
    platform(&app, "woocommerce", "Woo Pay Connector").await;
    let one = plugin(&app).await;
    // A keyed refresh: its answer is stored for a retry.
    let first_refresh = one.refresh.clone();
    let got = keyed(
        &app,
        &app.base,
        &one.client_id,
        &refresh_pairs(&first_refresh),
        &one.key,
        Some("k-reset"),
    )
    .await
    .unwrap();
    assert_eq!(got.0, 200, "{}", got.1);
    let one = Plugin {
        access: got.1["access_token"].as_str().unwrap().to_owned(),
        refresh: got.1["refresh_token"].as_str().unwrap().to_owned(),
        ..one
    };
    assert!(answer_held(&app, &one.client_id, "k-reset").await);
    // Its grant subscription, and a link issued before the reset.
    let hooks = Receiver::start();
    let secret = subscribe(&app, &one, &hooks).await;
    let late = link(&app, &one).await;
    assert_eq!(call(&app, &one, Method::GET, LINKS, None).await.0, 200);

    // Another company's installation.
    let other = app.new_tenant("Other Shop").await;
    let key2 = DpopKey::generate();
    let (_, client2) = installed(&app, &key2).await;
    let client2 = client2["client_id"].as_str().unwrap();
    let code = native_code(&app, &other, client2).await;
    let (status, tokens2, _) = native_exchange(&app, client2, &code, &key2).await;
    assert_eq!(status, 200, "{tokens2}");
    let access2 = tokens2["access_token"].as_str().unwrap();
    let other_session = app.login_owner(&other).await;

    // The owner is signed in: the consent page renders.
    let s = app.login_owner(&app.t).await;
    let cookies = format!("pay_session={}", s.cookie);
    assert_eq!(consent_page(&app, &one.client_id, &cookies).await.0, 200);

    let done = reset(&app, &app.t.company_id).await.unwrap();
    assert_eq!(done.grants_revoked, 1, "{done:?}");
    assert_eq!(done.native_grants.len(), 1, "{done:?}");
    assert!(done.sign_ins_ended >= 1, "{done:?}");
    assert_eq!(done.api_keys_disabled, 1, "{done:?}");

    // The access token, the refresh token and the keyed retry are all refused.
    assert_eq!(call(&app, &one, Method::GET, LINKS, None).await.0, 401);
    let got = native_refresh(&app, &one.client_id, &one.refresh, &one.key).await;
    assert_oauth_error(&got, 400, "invalid_grant");
    assert!(!answer_held(&app, &one.client_id, "k-reset").await);
    let got = keyed(
        &app,
        &app.base,
        &one.client_id,
        &refresh_pairs(&first_refresh),
        &one.key,
        Some("k-reset"),
    )
    .await
    .unwrap();
    assert_oauth_error(&got, 400, "invalid_grant");
    // The sign-in is gone: the consent page sends to the sign-in page.
    let (status, to) = consent_page(&app, &one.client_id, &cookies).await;
    assert_eq!(status, 303);
    assert!(to.starts_with("/signin?return_to="), "{to}");
    // The API key is disabled.
    let res = app.req(Method::GET, LINKS).send().await.unwrap();
    assert_eq!(res.status(), 401);

    // The other company: its installation and its owner's sign-in work on.
    assert_eq!(create_link(&app, &key2, access2).await, 201);
    let other_cookies = format!("pay_session={}", other_session.cookie);
    assert_eq!(consent_page(&app, client2, &other_cookies).await.0, 200);

    // The owner re-enables the key (it was kept, disabled); the late payment of the link
    // issued before still reaches the installation, signed with its retained credential.
    let store = app.store.clone();
    let company = CompanyId::parse(&app.t.company_id).unwrap();
    tokio::task::spawn_blocking(move || {
        let key = store.integrations(company).unwrap().remove(0);
        assert!(!key.enabled);
        store
            .set_integration_enabled(company, key.partner_id, true)
            .unwrap()
            .unwrap();
    })
    .await
    .unwrap();
    pay(&app, &late).await;
    let got = received(&hooks, &secret);
    assert!(
        got.iter()
            .any(|(u, t)| *u == late && t == "pay.payment.status_changed"),
        "{got:?}"
    );
    // And the installation's tokens stay dead.
    assert_eq!(call(&app, &one, Method::GET, LINKS, None).await.0, 401);

    // Run again: nothing more to revoke or end; an unknown company is said to be unknown.
    let again = reset(&app, &app.t.company_id).await.unwrap();
    assert_eq!((again.grants_revoked, again.sign_ins_ended), (0, 0));
    assert!(reset(&app, &uuid::Uuid::now_v7().to_string())
        .await
        .is_none());
}

on_both_backends!(a_security_reset_ends_every_access_of_the_company);
