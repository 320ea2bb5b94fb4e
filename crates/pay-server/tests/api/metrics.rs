//! `GET /metrics`: off by default, behind a bearer token on the public listener, or alone on a
//! listener of its own; the exposition parsed by an independent parser (the PyPI
//! `prometheus-client` package's OpenMetrics `text_string_to_metric_families`), with requests
//! counted by route template (never a raw path: no id in any label) and timed in buckets.

use std::collections::BTreeMap;
use std::sync::Arc;

use reqwest::Method;
use serde_json::json;

use crate::helpers::{assert_error, read, spawn_configured, Backend, TestApp};
use crate::on_both_backends;

pub(crate) const TOKEN: &str = "metrics-token-0123456789abcdef0123456789";
const LINK_DETAIL: &str = "/api/partner/v1/pay/payment-links/{uid}";
/// The latency buckets the server declares (seconds), `+Inf` last.
const BUCKETS: [&str; 15] = [
    "0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1.0", "2.5", "5.0",
    "10.0", "30.0", "+Inf",
];

pub(crate) async fn with_token(backend: Backend) -> Option<TestApp> {
    spawn_configured(
        backend,
        Arc::new(pay_processor::SandboxProcessor::new()),
        |c| c.metrics_token = Some(pay_domain::kernel::secret::Secret::new(TOKEN)),
    )
    .await
}

async fn with_listener_and_token(backend: Backend) -> Option<TestApp> {
    spawn_configured(
        backend,
        Arc::new(pay_processor::SandboxProcessor::new()),
        |c| {
            c.metrics_listen = Some(([127, 0, 0, 1], 0).into());
            c.metrics_token = Some(pay_domain::kernel::secret::Secret::new(TOKEN));
        },
    )
    .await
}

/// The independent parser of the exposition (tests/support/openmetrics.rs).
pub(crate) use crate::openmetrics::{parse as parse_exposition, Sample};

pub(crate) async fn scrape(
    app: &TestApp,
    base: &str,
    token: Option<&str>,
) -> (u16, String, String) {
    let mut req = app.client.get(format!("{base}/metrics"));
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let res = req.send().await.unwrap();
    let status = res.status().as_u16();
    let ctype = res
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (status, ctype, res.text().await.unwrap())
}

/// The value of the one sample named `name` whose labels include `want`.
pub(crate) fn value(samples: &[Sample], name: &str, want: &[(&str, &str)]) -> Option<f64> {
    let hits: Vec<&Sample> = samples
        .iter()
        .filter(|s| {
            s.name == name
                && want
                    .iter()
                    .all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(v))
        })
        .collect();
    assert!(
        hits.len() <= 1,
        "several samples match {name} {want:?}: {hits:?}"
    );
    hits.first().map(|s| s.value)
}

async fn off_unless_configured(app: TestApp) {
    let got = read(app.anon(Method::GET, "/metrics").send().await.unwrap()).await;
    assert_error(&got, 404, "not_found", None);
    let got = read(
        app.anon(Method::GET, "/metrics")
            .bearer_auth(TOKEN)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 404, "not_found", None);
    assert_eq!(app.metrics_port, None);
}

async fn token_gates_the_public_listener(app: TestApp) {
    for auth in [
        None,
        Some(format!("Bearer {TOKEN}x")),
        Some(format!("Bearer {}", &TOKEN[..TOKEN.len() - 1])),
        Some("Bearer ".to_owned()),
        Some(format!("Basic {TOKEN}")),
        Some(TOKEN.to_owned()),
    ] {
        let mut req = app.anon(Method::GET, "/metrics");
        if let Some(a) = &auth {
            req = req.header("authorization", a);
        }
        let res = req.send().await.unwrap();
        assert_eq!(
            res.headers()
                .get("www-authenticate")
                .map(|v| v.to_str().unwrap()),
            Some("Bearer"),
            "{auth:?}"
        );
        let got = read(res).await;
        assert_error(&got, 401, "unauthorized", None);
    }
    // The scheme is case-insensitive; another method is 405 once authenticated.
    let res = app
        .anon(Method::GET, "/metrics")
        .header("authorization", format!("bearer {TOKEN}"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let got = read(
        app.anon(Method::POST, "/metrics")
            .bearer_auth(TOKEN)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 405, "method_not_allowed", None);
}

/// Requests made, then scraped: counted by route template, method and status; timed; no id in
/// any label (nor anywhere in the text).
async fn requests_are_counted_by_route_template(app: TestApp) {
    let link = app.create_link(json!({"amount": "12.50"})).await;
    let uid = link["uid"].as_str().unwrap().to_owned();
    for _ in 0..3 {
        let got = read(
            app.req(
                Method::GET,
                &format!("/api/partner/v1/pay/payment-links/{uid}"),
            )
            .send()
            .await
            .unwrap(),
        )
        .await;
        assert_eq!(got.0, 200, "{}", got.1);
    }
    let missing = uuid::Uuid::new_v4().simple().to_string();
    // Another company's link and a wrong key: the same route template, other statuses.
    let other = app.new_tenant("Other Co").await;
    let got = read(
        app.as_tenant(
            &other,
            Method::GET,
            &format!("/api/partner/v1/pay/payment-links/{uid}"),
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(got.0, 404, "{}", got.1);
    let got = read(
        app.anon(
            Method::GET,
            &format!("/api/partner/v1/pay/payment-links/{uid}"),
        )
        .header("x-svc-key-id", &app.t.key_id)
        .header("x-svc-key-secret", "wrong")
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(got.0, 401, "{}", got.1);
    // Two paths no route matches, one with a token-like segment: one fixed label.
    for path in [format!("/nowhere/{missing}"), format!("/x/{TOKEN}")] {
        let got = read(app.anon(Method::GET, &path).send().await.unwrap()).await;
        assert_eq!(got.0, 404);
    }
    let got = read(
        app.anon(Method::from_bytes(b"BREW").unwrap(), "/healthz")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(got.0.as_u16(), 405, "{}", got.1);

    let (status, ctype, text) = scrape(&app, &app.base, Some(TOKEN)).await;
    assert_eq!(status, 200, "{text}");
    assert_eq!(
        ctype,
        "application/openmetrics-text; version=1.0.0; charset=utf-8"
    );
    for secret in [
        uid.as_str(),
        missing.as_str(),
        TOKEN,
        app.t.key_id.as_str(),
        app.t.company_id.as_str(),
        other.company_id.as_str(),
    ] {
        assert!(
            !text.contains(secret),
            "{secret} in the exposition:\n{text}"
        );
    }
    let Some(samples) = parse_exposition(&text) else {
        return;
    };
    let kinds: BTreeMap<&str, &str> = samples
        .iter()
        .map(|s| (s.family.as_str(), s.kind.as_str()))
        .collect();
    assert_eq!(
        kinds.get("pay_http_requests"),
        Some(&"counter"),
        "{kinds:?}"
    );
    assert_eq!(
        kinds.get("pay_http_request_duration_seconds"),
        Some(&"histogram"),
        "{kinds:?}"
    );
    // No label value is a raw path: every route label is a template the server declares.
    for s in &samples {
        for (k, v) in &s.labels {
            assert!(
                !v.contains(&uid) && !v.contains(&missing) && !v.contains(TOKEN),
                "{k}={v} in {s:?}"
            );
        }
        if let Some(route) = s.labels.get("route") {
            assert!(
                route == "unmatched" || !route.contains("/nowhere") && !route.contains("/x/"),
                "{s:?}"
            );
        }
    }
    let total = "pay_http_requests_total";
    let detail = [("route", LINK_DETAIL), ("method", "GET")];
    assert_eq!(
        value(&samples, total, &[detail[0], detail[1], ("status", "200")]),
        Some(3.0)
    );
    assert_eq!(
        value(&samples, total, &[detail[0], detail[1], ("status", "404")]),
        Some(1.0)
    );
    assert_eq!(
        value(&samples, total, &[detail[0], detail[1], ("status", "401")]),
        Some(1.0)
    );
    assert_eq!(
        value(
            &samples,
            total,
            &[
                ("route", "/api/partner/v1/pay/payment-links"),
                ("method", "POST"),
                ("status", "201")
            ]
        ),
        Some(1.0)
    );
    assert_eq!(
        value(
            &samples,
            total,
            &[("route", "unmatched"), ("method", "GET"), ("status", "404")]
        ),
        Some(2.0)
    );
    assert_eq!(
        value(
            &samples,
            total,
            &[
                ("route", "/healthz"),
                ("method", "other"),
                ("status", "405")
            ]
        ),
        Some(1.0)
    );
    // The histogram of the detail route: 5 requests, cumulative buckets ending at +Inf.
    let hist = "pay_http_request_duration_seconds";
    assert_eq!(
        value(&samples, &format!("{hist}_count"), &detail),
        Some(5.0)
    );
    let sum = value(&samples, &format!("{hist}_sum"), &detail).unwrap();
    assert!(sum > 0.0 && sum < 60.0, "{sum}");
    let buckets: Vec<(String, f64)> = samples
        .iter()
        .filter(|s| {
            s.name == format!("{hist}_bucket")
                && s.labels.get("route").map(String::as_str) == Some(LINK_DETAIL)
                && s.labels.get("method").map(String::as_str) == Some("GET")
        })
        .map(|s| (s.labels["le"].clone(), s.value))
        .collect();
    let les: Vec<&str> = buckets.iter().map(|(le, _)| le.as_str()).collect();
    assert_eq!(les, BUCKETS, "{buckets:?}");
    assert!(buckets.windows(2).all(|w| w[0].1 <= w[1].1), "{buckets:?}");
    assert_eq!(buckets.last().unwrap().1, 5.0);
    // A second scrape counts the first (the public listener's scrapes are requests too).
    let (_, _, text) = scrape(&app, &app.base, Some(TOKEN)).await;
    let samples = parse_exposition(&text).unwrap();
    assert_eq!(
        value(
            &samples,
            total,
            &[("route", "/metrics"), ("method", "GET"), ("status", "200")]
        ),
        Some(1.0)
    );
}

/// With a listener of its own: `/metrics` is served there only (the token still asked), the
/// public listener answers 404, and the metrics listener serves nothing else.
async fn listener_serves_metrics_alone(app: TestApp) {
    let port = app.metrics_port.expect("metrics listener");
    assert_ne!(port.to_string(), app.base.rsplit(':').next().unwrap());
    let metrics_base = format!("http://127.0.0.1:{port}");
    let got = read(
        app.anon(Method::GET, "/metrics")
            .bearer_auth(TOKEN)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 404, "not_found", None);
    let (status, _, _) = scrape(&app, &metrics_base, None).await;
    assert_eq!(status, 401);
    let (status, _, _) = scrape(&app, &metrics_base, Some("not-the-token")).await;
    assert_eq!(status, 401);
    for path in ["/healthz", "/api/partner/v1/pay/payment-links", "/"] {
        let got = read(
            app.client
                .get(format!("{metrics_base}{path}"))
                .header("x-svc-key-id", &app.t.key_id)
                .header("x-svc-key-secret", &app.t.key_secret)
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_error(&got, 404, "not_found", None);
    }
    let got = read(app.req(Method::GET, "/healthz").send().await.unwrap()).await;
    assert_eq!(got.0, 200);
    let (status, ctype, text) = scrape(&app, &metrics_base, Some(TOKEN)).await;
    assert_eq!(status, 200, "{text}");
    assert!(ctype.starts_with("application/openmetrics-text"), "{ctype}");
    let Some(samples) = parse_exposition(&text) else {
        return;
    };
    let total = "pay_http_requests_total";
    assert_eq!(
        value(
            &samples,
            total,
            &[("route", "/healthz"), ("method", "GET"), ("status", "200")]
        ),
        Some(1.0)
    );
    // The public listener's 404 for /metrics is counted; the metrics listener's requests not.
    assert_eq!(
        value(
            &samples,
            total,
            &[("route", "/metrics"), ("method", "GET"), ("status", "404")]
        ),
        Some(1.0)
    );
    assert!(
        !samples
            .iter()
            .any(|s| s.labels.get("status").map(String::as_str) == Some("401")),
        "{samples:?}"
    );
    // Nothing queued yet.
    for name in [
        "pay_webhook_outbox_pending",
        "pay_webhook_outbox_oldest_pending_age_seconds",
        "pay_webhook_circuits_open",
    ] {
        assert_eq!(value(&samples, name, &[]), Some(0.0), "{name}");
        assert!(
            samples.iter().any(|s| s.name == name && s.kind == "gauge"),
            "{name}"
        );
    }
    // A delivery queued (no dispatcher runs in the tests), then 90 s pass: depth 1, age 90 s.
    let s = app.login_owner(&app.t).await;
    crate::webhooks::set_callback(&app, &s, "https://hooks.shop.example/pay").await;
    let link = app.create_link(json!({"amount": "3"})).await;
    crate::webhooks::test_event(&app, link["uid"].as_str().unwrap()).await;
    app.clock.advance_secs(90);
    let (_, _, text) = scrape(&app, &metrics_base, Some(TOKEN)).await;
    let samples = parse_exposition(&text).unwrap();
    assert_eq!(
        value(&samples, "pay_webhook_outbox_pending", &[]),
        Some(1.0)
    );
    let age = value(
        &samples,
        "pay_webhook_outbox_oldest_pending_age_seconds",
        &[],
    )
    .unwrap();
    assert!((90.0..120.0).contains(&age), "{age}");
    assert_eq!(value(&samples, "pay_webhook_circuits_open", &[]), Some(0.0));
}

on_both_backends!(off_unless_configured);
on_both_backends!(spawn = with_token; token_gates_the_public_listener, requests_are_counted_by_route_template);
on_both_backends!(spawn = with_listener_and_token; listener_serves_metrics_alone);
