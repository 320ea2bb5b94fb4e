//! `GET /metrics`: the counters of events beyond the request counts, present from the first
//! scrape (at 0) and moving when their event happens: webhook attempts by outcome and attempt
//! number, DPoP proofs refused as replays, sign-ins refused. Parsed by the independent parser.

use reqwest::Method;
use serde_json::json;

use crate::helpers::{read, TestApp};
use crate::metrics::{parse_exposition, scrape, value, with_token, Sample, TOKEN};
use crate::oauth_support::*;
use crate::on_both_backends;
use crate::webhooks::{set_callback, test_event, Receiver};

const LINKS: &str = "/api/partner/v1/pay/payment-links";
const RW: &str = "pay:payment-links:read pay:payment-links:write";
const ATTEMPTS: &str = "pay_webhook_attempts_total";
const REPLAYS: &str = "pay_dpop_replays_refused_total";
const SIGNIN: &str = "pay_signin_failures_total";

async fn samples(app: &TestApp) -> Option<Vec<Sample>> {
    let (status, _, text) = scrape(app, &app.base, Some(TOKEN)).await;
    assert_eq!(status, 200, "{text}");
    parse_exposition(&text)
}

fn counter(samples: &[Sample], name: &str) -> f64 {
    let family = name.strip_suffix("_total").unwrap();
    assert!(
        samples
            .iter()
            .any(|s| s.family == family && s.kind == "counter"),
        "{family} is not a counter"
    );
    value(samples, name, &[]).unwrap_or_else(|| panic!("{name} missing"))
}

async fn events_are_counted(app: TestApp) {
    let Some(before) = samples(&app).await else {
        return;
    };
    // Present at 0 before anything happened (the attempts' family has no series yet).
    assert_eq!(counter(&before, REPLAYS), 0.0);
    assert_eq!(counter(&before, SIGNIN), 0.0);
    assert!(!before.iter().any(|s| s.name == ATTEMPTS), "{before:?}");

    // Two sign-ins refused (a wrong password, an unknown e-mail), one accepted.
    for (email, password) in [
        (app.t.email.as_str(), "not-the-password"),
        ("nobody@example.com", "whatever-password"),
    ] {
        let got = read(
            app.anon(Method::POST, "/auth/login")
                .json(&json!({"email": email, "password": password}))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(got.0, 401, "{}", got.1);
    }
    let s = app.login_owner(&app.t).await;

    // A DPoP proof used twice: the second is refused as a replay; another refusal is not one.
    let client = register(&app, RW, false, false).await;
    let key = DpopKey::generate();
    let code = code_for(&app, &app.t, &client, RW).await;
    let (status, t, _) = exchange(&app, &client, &code, Some(&key)).await;
    assert_eq!(status, 200, "{t}");
    let access = t["access_token"].as_str().unwrap().to_owned();
    let proof = key.proof("GET", &htu(&app, LINKS), Some(&access));
    let send = |proof: String| {
        app.anon(Method::GET, LINKS)
            .header("authorization", format!("DPoP {access}"))
            .header("DPoP", proof)
            .send()
    };
    assert_eq!(send(proof.clone()).await.unwrap().status(), 200);
    assert_eq!(send(proof).await.unwrap().status(), 401);
    let other = DpopKey::generate().proof("GET", &htu(&app, LINKS), Some(&access));
    assert_eq!(send(other).await.unwrap().status(), 401);

    // A webhook refused once (500), then delivered on its second attempt.
    let rx = Receiver::start();
    rx.always(500, 1);
    set_callback(&app, &s, &rx.url).await;
    let link = app.create_link(json!({"amount": "3"})).await;
    test_event(&app, link["uid"].as_str().unwrap()).await;
    assert_eq!(app.dispatcher.run_once().await.unwrap(), 1);
    app.clock.advance_secs(3600);
    assert_eq!(app.dispatcher.run_once().await.unwrap(), 1);
    assert_eq!(rx.received().len(), 2);

    let after = samples(&app).await.unwrap();
    assert_eq!(counter(&after, REPLAYS), 1.0);
    assert_eq!(counter(&after, SIGNIN), 2.0);
    assert!(
        after
            .iter()
            .any(|s| s.family == "pay_webhook_attempts" && s.kind == "counter"),
        "{after:?}"
    );
    // The pool: its configured size, and no more connections open than that.
    let pool = |state: &str| value(&after, "pay_db_pool_connections", &[("state", state)]);
    assert_eq!(pool("max"), Some(f64::from(app.config.pool_size)));
    let (in_use, idle) = (pool("in_use").unwrap(), pool("idle").unwrap());
    assert!(
        in_use + idle <= f64::from(app.config.pool_size),
        "{in_use} {idle}"
    );
    assert!(in_use + idle >= 1.0, "{in_use} {idle}");
    assert!(after
        .iter()
        .any(|s| s.family == "pay_db_pool_connections" && s.kind == "gauge"));
    let attempts = |outcome: &str, attempt: &str| {
        value(
            &after,
            ATTEMPTS,
            &[("outcome", outcome), ("attempt", attempt)],
        )
    };
    assert_eq!(attempts("http_error", "1"), Some(1.0));
    assert_eq!(attempts("delivered", "2"), Some(1.0));
    assert_eq!(attempts("delivered", "1"), None);
}

on_both_backends!(spawn = with_token; events_are_counted);
