//! Webhook safety over HTTP: callback URLs refused when saved (the spellings that reach
//! internal addresses), signing secrets sealed before the key id was bound into the
//! associated data still opening, then moving to the current form, a delivery log that
//! names failures in a few fixed words (no resolved address, no connect-error kind), and
//! retries and resends that go to the callback as it is when they are sent.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use pay_domain::kernel::ids::CompanyId;
use pay_domain::kernel::secret::SealedSecret;
use pay_domain::webhooks::ports::WebhookStore;
use pay_domain::webhooks::{CallbackKind, CompanyCallback};
use reqwest::Method;
use serde_json::json;

use crate::helpers::{assert_error, read, spawn_configured, Backend, TestApp};
use crate::on_both_backends;
use crate::webhooks::{now_secs, put_callback_of, set_callback, test_event, Receiver};

/// The delivery as the log's detail route shows it.
async fn logged(app: &TestApp, id: &str) -> serde_json::Value {
    crate::webhooks::logged_as(app, &app.t, id).await
}

/// Saves the main tenant's payment callback (the first save or a change).
async fn put_callback(app: &TestApp, s: &crate::helpers::Session, url: &str) {
    put_callback_of(app, &app.t.company_id, s, url).await;
}

/// A dispatcher over the app's service with its own transport settings.
fn dispatcher(app: &TestApp, config: pay_webhooks::TransportConfig) -> pay_server::Dispatcher {
    pay_server::Dispatcher::new(
        app.pay.clone(),
        pay_webhooks::HttpTransport::new(config).unwrap(),
    )
}

/// A server that refuses private webhook targets, as production does (the default test
/// server allows them).
async fn spawn_public_targets_only(backend: Backend) -> Option<TestApp> {
    spawn_configured(
        backend,
        std::sync::Arc::new(pay_processor::SandboxProcessor::new()),
        |c| c.allow_private_targets = false,
    )
    .await
}

async fn internal_spellings_are_refused_when_a_callback_is_saved(app: TestApp) {
    let s = app.login_owner(&app.t).await;
    let company = &app.t.company_id;
    for route in ["payment-callback", "legacy-callback"] {
        let path = format!("/api/partner/v1/companies/{company}/{route}");
        for url in [
            "https://127.0.0.1../hook",
            "https://127.0.0.1./hook",
            "https://localhost./hook",
            "https://localhost../hook",
            "https://hooks..shop.example/pay",
            "https://[::ffff:0:127.0.0.1]/hook",
            "https://[::ffff:0:a9fe:a9fe]/latest/meta-data",
            "https://[64:ff9b:1::a00:1]/hook",
            "https://[64:ff9b:1:7f00:1::]/hook",
        ] {
            let got = read(
                app.in_session(&s, Method::PUT, &path)
                    .json(&json!({ "url": url }))
                    .send()
                    .await
                    .unwrap(),
            )
            .await;
            assert_error(&got, 400, "validation_failed", Some("url"));
        }
        // Nothing was saved.
        let got = read(app.in_session(&s, Method::GET, &path).send().await.unwrap()).await;
        assert_eq!(got.1["url"], serde_json::Value::Null, "{route}: {}", got.1);
        // The fully qualified spelling of a public name is fine.
        let got = read(
            app.in_session(&s, Method::PUT, &path)
                .json(&json!({ "url": "https://hooks.shop.example./pay" }))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(got.0, 200, "{route}: {}", got.1);
        assert_eq!(got.1["url"], "https://hooks.shop.example./pay");
    }
}

/// A developer pointing the callback at a receiver on their machine is told how (README,
/// "Receiving the webhooks on this machine").
async fn a_local_receiver_refused_says_how_to_allow_it(app: TestApp) {
    let s = app.login_owner(&app.t).await;
    let path = format!(
        "/api/partner/v1/companies/{}/payment-callback",
        app.t.company_id
    );
    for url in ["http://127.0.0.1:9000/hooks", "https://localhost/hooks"] {
        let got = read(
            app.in_session(&s, Method::PUT, &path)
                .json(&json!({ "url": url }))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_error(&got, 400, "validation_failed", Some("url"));
        let message = got.1["error"].as_str().unwrap();
        assert!(
            message.contains("PAY_WEBHOOK_ALLOW_PRIVATE_TARGETS=true"),
            "{url}: {message}"
        );
    }
    // A malformed host is not about private targets.
    let got = read(
        app.in_session(&s, Method::PUT, &path)
            .json(&json!({ "url": "https://hooks..shop.example/pay" }))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert!(!got.1["error"].as_str().unwrap().contains("PAY_WEBHOOK"));
}

on_both_backends!(spawn = spawn_public_targets_only;
    internal_spellings_are_refused_when_a_callback_is_saved,
    a_local_receiver_refused_says_how_to_allow_it,
);

/// The stored payment callback of the main tenant.
async fn stored_callback(app: &TestApp) -> CompanyCallback {
    let store = app.store.clone();
    let company = CompanyId::parse(&app.t.company_id).unwrap();
    tokio::task::spawn_blocking(move || {
        store
            .company_callback(company, CallbackKind::CompanyPayment)
            .unwrap()
            .unwrap()
    })
    .await
    .unwrap()
}

/// `secret` sealed as the sealer did before the key id was bound in: base64 of nonce and
/// ciphertext, the row's associated data alone, under the test server's key.
fn sealed_the_old_way(app: &TestApp, secret: &str, key_id: &str) -> SealedSecret {
    let key = STANDARD
        .decode(app.config.encryption_key.as_deref().unwrap())
        .unwrap();
    let cipher = XChaCha20Poly1305::new_from_slice(&key).unwrap();
    let nonce = [9u8; 24];
    let company = CompanyId::parse(&app.t.company_id).unwrap();
    let aad = CompanyCallback::aad(company, CallbackKind::CompanyPayment);
    let ct = cipher
        .encrypt(
            XNonce::from_slice(&nonce),
            Payload {
                msg: secret.as_bytes(),
                aad: aad.as_bytes(),
            },
        )
        .unwrap();
    let mut raw = nonce.to_vec();
    raw.extend_from_slice(&ct);
    SealedSecret {
        key_id: key_id.to_owned(),
        sealed: STANDARD.encode(raw),
    }
}

/// Sends one test event about `uid` and returns what the receiver got for it.
async fn one_delivery(app: &TestApp, rx: &Receiver, uid: &str) -> crate::webhooks::Received {
    let before = rx.received().len();
    test_event(app, uid).await;
    assert_eq!(app.dispatcher.run_once().await.unwrap(), 1);
    let got = rx.received();
    assert_eq!(got.len(), before + 1);
    got[before].clone()
}

async fn secrets_sealed_before_the_upgrade_still_sign_and_move_to_the_current_form(app: TestApp) {
    let rx = Receiver::start();
    let s = app.login_owner(&app.t).await;
    let secret = set_callback(&app, &s, &rx.url).await;
    let link = app.create_link(json!({"amount": "1"})).await;
    let uid = link["uid"].as_str().unwrap();
    let fresh = stored_callback(&app).await;
    assert!(
        fresh.secret.sealed.sealed.starts_with("v2:"),
        "new seals bind the key id"
    );
    // The row as the previous version wrote it.
    let old_form = sealed_the_old_way(&app, &secret, &fresh.secret.sealed.key_id);
    let upgraded = CompanyCallback {
        secret: pay_domain::webhooks::StoredSigningSecret {
            sealed: old_form.clone(),
            ..fresh.secret.clone()
        },
        version: fresh.version + 1,
        ..fresh
    };
    let store = app.store.clone();
    let row = upgraded.clone();
    assert!(
        tokio::task::spawn_blocking(move || store.save_company_callback(&row))
            .await
            .unwrap()
            .unwrap()
    );
    // It opens and signs.
    let r = one_delivery(&app, &rx, uid).await;
    pay_webhooks::verify(
        &secret,
        &r.headers["x-pay-signature"],
        r.body.as_bytes(),
        now_secs(),
        300,
    )
    .expect("signed with the secret sealed the old way");
    // The next save writes it in the current form, and it is still the same secret.
    let got = read(
        app.in_session(
            &s,
            Method::PUT,
            &format!(
                "/api/partner/v1/companies/{}/payment-callback",
                app.t.company_id
            ),
        )
        .json(&json!({ "url": format!("{}/v2", rx.url) }))
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(got.0, 200, "{}", got.1);
    assert!(got.1.get("signingSecret").is_none(), "no new secret");
    let resealed = stored_callback(&app).await;
    assert!(resealed.secret.sealed.sealed.starts_with("v2:"));
    assert_ne!(resealed.secret.sealed, old_form);
    assert_eq!(resealed.secret.last4, upgraded.secret.last4);
    let r = one_delivery(&app, &rx, uid).await;
    pay_webhooks::verify(
        &secret,
        &r.headers["x-pay-signature"],
        r.body.as_bytes(),
        now_secs(),
        300,
    )
    .expect("the same secret after sealing again");
}

async fn the_delivery_log_names_failures_in_fixed_words(app: TestApp) {
    let s = app.login_owner(&app.t).await;
    let link = app.create_link(json!({"amount": "1"})).await;
    let uid = link["uid"].as_str().unwrap();
    // A port nothing listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let closed_port = closed.local_addr().unwrap().port();
    drop(closed);
    // A port that accepts connections (the kernel's backlog) and never answers.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_port = silent.local_addr().unwrap().port();

    // 1. A name that resolves to loopback, tried by a dispatcher that refuses private targets
    //    (production): the resolver refuses it.
    put_callback(&app, &s, &format!("https://localhost:{closed_port}/hooks")).await;
    let refused = test_event(&app, uid).await;
    let strict = dispatcher(&app, pay_webhooks::TransportConfig::default());
    assert_eq!(strict.run_once().await.unwrap(), 1);
    // 2. A closed port.
    put_callback(&app, &s, &format!("http://127.0.0.1:{closed_port}/hooks")).await;
    let closed = test_event(&app, uid).await;
    assert_eq!(app.dispatcher.run_once().await.unwrap(), 1);
    // 3. A receiver that never answers (a short total timeout for the test).
    put_callback(&app, &s, &format!("http://127.0.0.1:{silent_port}/hooks")).await;
    let silent_one = test_event(&app, uid).await;
    let impatient = dispatcher(
        &app,
        pay_webhooks::TransportConfig {
            allow_private: true,
            total_timeout: std::time::Duration::from_millis(300),
            ..pay_webhooks::TransportConfig::default()
        },
    );
    assert_eq!(impatient.run_once().await.unwrap(), 1);
    drop(silent);
    // 4. An answer that is not 2xx: its status, and no error.
    let rx = Receiver::start();
    rx.always(500, 1);
    put_callback(&app, &s, &rx.url).await;
    let answered = test_event(&app, uid).await;
    assert_eq!(app.dispatcher.run_once().await.unwrap(), 1);

    for (d, expected) in [
        (&refused, Some("refused target")),
        (&closed, Some("connection failed")),
        (&silent_one, Some("timed out")),
        (&answered, None),
    ] {
        let e = logged(&app, d["id"].as_str().unwrap()).await;
        assert_eq!(
            (e["status"].as_str(), e["attempts"].as_u64()),
            (Some("retrying"), Some(1)),
            "{e}"
        );
        assert_eq!(e["lastError"].as_str(), expected, "{e}");
        assert_eq!(e["attemptHistory"][0]["error"].as_str(), expected, "{e}");
        // The list shows the same words.
        let list = read(
            app.req(
                Method::GET,
                &format!(
                    "/api/partner/v1/pay/webhook-requests?search={}",
                    d["id"].as_str().unwrap()
                ),
            )
            .send()
            .await
            .unwrap(),
        )
        .await;
        assert_eq!(list.1["data"][0]["lastError"].as_str(), expected);
    }
    assert_eq!(
        logged(&app, answered["id"].as_str().unwrap()).await["lastResponseStatus"],
        500
    );
}

async fn retries_and_resends_go_to_the_current_callback(app: TestApp) {
    let s = app.login_owner(&app.t).await;
    let (old_rx, new_rx, newest_rx) = (Receiver::start(), Receiver::start(), Receiver::start());
    let old_secret = set_callback(&app, &s, &old_rx.url).await;
    let link = app.create_link(json!({"amount": "1"})).await;
    old_rx.always(500, 1);
    let d = test_event(&app, link["uid"].as_str().unwrap()).await;
    let id = d["id"].as_str().unwrap().to_owned();
    assert_eq!(d["url"], old_rx.url.as_str());
    assert_eq!(app.dispatcher.run_once().await.unwrap(), 1);
    assert_eq!(old_rx.received().len(), 1, "the first attempt failed there");

    // The merchant moves the callback and regenerates its secret; a day later the previous
    // secret no longer signs.
    put_callback(&app, &s, &new_rx.url).await;
    let rotated = read(
        app.in_session(
            &s,
            Method::POST,
            &format!(
                "/api/partner/v1/companies/{}/payment-callback/rotate-secret",
                app.t.company_id
            ),
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(rotated.0, 200, "{}", rotated.1);
    let new_secret = rotated.1["signingSecret"].as_str().unwrap().to_owned();
    app.clock.advance_secs(25 * 3600);
    assert_eq!(app.dispatcher.run_once().await.unwrap(), 1);

    // The retry went to the new receiver, signed with the new secret only.
    assert_eq!(old_rx.received().len(), 1, "nothing more to the old URL");
    let got = new_rx.received();
    assert_eq!(got.len(), 1);
    let r = &got[0];
    assert_eq!(r.headers["x-pay-delivery-id"], id);
    assert_eq!(r.headers["x-pay-attempt"], "2");
    let sig = &r.headers["x-pay-signature"];
    pay_webhooks::verify(&new_secret, sig, r.body.as_bytes(), now_secs(), 300)
        .expect("signed with the current secret");
    assert!(pay_webhooks::verify(&old_secret, sig, r.body.as_bytes(), now_secs(), 300).is_err());
    // The log says where it went.
    let e = logged(&app, &id).await;
    assert_eq!(
        (e["status"].as_str(), e["url"].as_str()),
        (Some("succeeded"), Some(new_rx.url.as_str())),
        "{e}"
    );

    // Moved again (signed in afresh: a day has passed), then resent by hand: the resend goes
    // to the newest URL.
    let s = app.login_owner(&app.t).await;
    put_callback(&app, &s, &newest_rx.url).await;
    let resent = read(
        app.req(
            Method::POST,
            &format!("/api/partner/v1/pay/webhook-requests/{id}/resend"),
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(resent.0, 202, "{}", resent.1);
    assert_eq!(resent.1["url"], newest_rx.url.as_str());
    assert_eq!(app.dispatcher.run_once().await.unwrap(), 1);
    assert_eq!(new_rx.received().len(), 1);
    let got = newest_rx.received();
    assert_eq!(got.len(), 1);
    let r = &got[0];
    assert_eq!(r.headers["x-pay-delivery-origin"], "manual");
    assert_eq!(
        r.headers["x-pay-delivery-id"],
        resent.1["id"].as_str().unwrap()
    );
    pay_webhooks::verify(
        &new_secret,
        &r.headers["x-pay-signature"],
        r.body.as_bytes(),
        now_secs(),
        300,
    )
    .expect("signed with the current secret");
    let e = logged(&app, resent.1["id"].as_str().unwrap()).await;
    assert_eq!(
        (e["status"].as_str(), e["url"].as_str()),
        (Some("succeeded"), Some(newest_rx.url.as_str()))
    );
    // The original's log entry still says where it went.
    assert_eq!(logged(&app, &id).await["url"], new_rx.url.as_str());
}

on_both_backends!(
    secrets_sealed_before_the_upgrade_still_sign_and_move_to_the_current_form,
    the_delivery_log_names_failures_in_fixed_words,
    retries_and_resends_go_to_the_current_callback,
);
