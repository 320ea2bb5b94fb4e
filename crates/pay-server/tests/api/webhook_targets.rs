//! Where deliveries go and what the log says about them: callback URLs refused when saved (the
//! spellings that reach internal addresses).

use reqwest::Method;
use serde_json::json;

use crate::helpers::{assert_error, read, spawn_configured, Backend, TestApp};

/// Runs each named `async fn(TestApp)` on both backends against a server that refuses private
/// webhook targets, as production does (the default test server allows them).
macro_rules! on_both_backends_public_targets_only {
    ($($f:ident),* $(,)?) => {$(
        mod $f {
            #[actix_rt::test]
            async fn sqlite() {
                if let Some(app) = super::spawn_public_targets_only(super::Backend::Sqlite).await {
                    super::$f(app).await;
                }
            }
            #[actix_rt::test]
            async fn postgres() {
                if let Some(app) = super::spawn_public_targets_only(super::Backend::Postgres).await {
                    super::$f(app).await;
                }
            }
        }
    )*};
}

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

on_both_backends_public_targets_only!(internal_spellings_are_refused_when_a_callback_is_saved);
