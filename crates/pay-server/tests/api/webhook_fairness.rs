//! One merchant's broken receiver does not hold up another's deliveries, and is not hammered:
//! a receiver that never answers holds its endpoint's share of sends (32) and no more, while
//! another company's deliveries go out past its queue; an endpoint failing everything for an
//! hour is paused (recorded with the endpoint, its deliveries left untried, other companies'
//! still sent), and resumes by itself with one probe once the pause ends.

use std::io::Read;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use pay_domain::kernel::ids::CompanyId;
use pay_domain::webhooks::{CircuitState, ENDPOINT_IN_FLIGHT};
use reqwest::Method;
use serde_json::json;

use crate::helpers::{read, Tenant, TestApp};
use crate::on_both_backends;
use crate::webhooks::{
    logged_as, put_callback_of, set_callback, test_event, test_event_as, Receiver,
};

on_both_backends!(
    a_hanging_endpoint_holds_its_share_and_no_more,
    an_endpoint_failing_for_an_hour_is_paused_and_resumes_by_itself,
);

/// A second company with a link and its payment callback at `url`; returns it and the link.
async fn other_company(app: &TestApp, url: &str) -> (Tenant, String) {
    let b = app.new_tenant("Other Shop").await;
    let s = app.login_owner(&b).await;
    put_callback_of(app, &b.company_id, &s, url).await;
    let link = read(
        app.as_tenant(&b, Method::POST, "/api/partner/v1/pay/payment-links")
            .json(&json!({"amount": "3"}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(link.0, 201, "{}", link.1);
    let uid = link.1["uid"].as_str().unwrap().to_owned();
    (b, uid)
}

/// The process clock's now.
fn now(app: &TestApp) -> pay_domain::kernel::timestamp::Timestamp {
    pay_domain::kernel::ports::Clock::now(&*app.clock)
}

/// A TCP endpoint that accepts connections, reads what comes and never answers; counts the
/// connections.
struct Silent {
    url: String,
    connections: Arc<AtomicUsize>,
}

impl Silent {
    fn start() -> Silent {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!(
            "http://127.0.0.1:{}/hooks",
            listener.local_addr().unwrap().port()
        );
        let connections = Arc::new(AtomicUsize::new(0));
        let count = connections.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                count.fetch_add(1, Ordering::SeqCst);
                std::thread::spawn(move || {
                    let mut buf = [0u8; 4096];
                    while matches!(stream.read(&mut buf), Ok(n) if n > 0) {}
                });
            }
        });
        Silent { url, connections }
    }
}

async fn a_hanging_endpoint_holds_its_share_and_no_more(app: TestApp) {
    // The main tenant's receiver never answers; 50 of its deliveries are queued first.
    let silent = Silent::start();
    let s = app.login_owner(&app.t).await;
    set_callback(&app, &s, &silent.url).await;
    let link = app.create_link(json!({"amount": "1"})).await;
    let uid = link["uid"].as_str().unwrap();
    let mut stuck = Vec::new();
    for _ in 0..50 {
        stuck.push(test_event(&app, uid).await);
    }
    // Another company's 10, queued after them, to a receiver that answers at once.
    let rx = Receiver::start();
    let (b, b_uid) = other_company(&app, &rx.url).await;
    let mut fine = Vec::new();
    for _ in 0..10 {
        fine.push(test_event_as(&app, &b, &b_uid).await);
    }
    // A dispatcher whose sends wait 20 s for an answer: long past this test's checks.
    let dispatcher = pay_server::Dispatcher::new(
        app.pay.clone(),
        pay_webhooks::HttpTransport::new(pay_webhooks::TransportConfig {
            allow_private: true,
            total_timeout: Duration::from_secs(20),
            ..pay_webhooks::TransportConfig::default()
        })
        .unwrap(),
    );
    let running = actix_rt::spawn(dispatcher.run());
    // The other company's deliveries all arrive and are recorded while the hanging ones wait.
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let mut done = 0;
        for d in &fine {
            let e = logged_as(&app, &b, d["id"].as_str().unwrap()).await;
            done += usize::from(e["status"] == "succeeded");
        }
        if done == fine.len() {
            break;
        }
        assert!(Instant::now() < deadline, "{done} of 10 delivered");
        actix_rt::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(rx.received().len(), 10);
    // One queued later, the hanging endpoint still full: the dispatcher looks past it again
    // within its spread pause (320 ms at most; the bound leaves room for a slow machine), not
    // when a hanging send ends.
    let late = test_event_as(&app, &b, &b_uid).await;
    let queued = Instant::now();
    loop {
        let e = logged_as(&app, &b, late["id"].as_str().unwrap()).await;
        if e["status"] == "succeeded" {
            break;
        }
        assert!(queued.elapsed() < Duration::from_secs(3), "{e}");
        actix_rt::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(rx.received().len(), 11);
    // The hanging endpoint got its share of connections, no more, and none of its deliveries
    // has an outcome yet.
    actix_rt::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        silent.connections.load(Ordering::SeqCst),
        ENDPOINT_IN_FLIGHT
    );
    for d in &stuck {
        let e = logged_as(&app, &app.t, d["id"].as_str().unwrap()).await;
        assert_eq!(
            (e["status"].as_str(), e["attempts"].as_u64()),
            (Some("pending"), Some(0)),
            "{e}"
        );
    }
    running.abort();
}

async fn an_endpoint_failing_for_an_hour_is_paused_and_resumes_by_itself(app: TestApp) {
    let rx = Receiver::start();
    let s = app.login_owner(&app.t).await;
    set_callback(&app, &s, &rx.url).await;
    let link = app.create_link(json!({"amount": "1"})).await;
    let uid = link["uid"].as_str().unwrap();
    let mut queued = Vec::new();
    for _ in 0..12 {
        queued.push(test_event(&app, uid).await);
    }
    let company = CompanyId::parse(&app.t.company_id).unwrap();
    let circuits = |app: &TestApp| app.pay.webhooks().endpoint_circuits(company).unwrap();
    // Every attempt fails for an hour (the process clock moves; retries fall due each time).
    rx.always(500, 24);
    assert_eq!(app.dispatcher.run_once().await.unwrap(), 12);
    let c = &circuits(&app)[0];
    assert_eq!((c.failures, c.pauses), (12, 0));
    assert_eq!(c.endpoint.url, rx.url);
    app.clock.advance_secs(3600);
    assert_eq!(app.dispatcher.run_once().await.unwrap(), 12);
    assert_eq!(rx.received().len(), 24);
    // Paused and recorded: five minutes, from now.
    let c = circuits(&app)[0].clone();
    assert_eq!((c.failures, c.pauses), (24, 1));
    assert_eq!(c.state(now(&app)), CircuitState::Open);
    let resumes = c.paused_until.unwrap();
    assert_eq!(resumes, now(&app).plus(time::Duration::minutes(5)));
    // Nothing of it is tried while paused, not even a new event; its retries are not used up.
    let fresh = test_event(&app, uid).await;
    app.clock.advance_secs(299);
    assert_eq!(app.dispatcher.run_once().await.unwrap(), 0);
    assert_eq!(rx.received().len(), 24);
    let e = logged_as(&app, &app.t, fresh["id"].as_str().unwrap()).await;
    assert_eq!(
        (e["status"].as_str(), e["attempts"].as_u64()),
        (Some("pending"), Some(0))
    );
    let e = logged_as(&app, &app.t, queued[0]["id"].as_str().unwrap()).await;
    assert_eq!(
        (e["status"].as_str(), e["attempts"].as_u64()),
        (Some("retrying"), Some(2))
    );
    // Another company's deliveries go out meanwhile.
    let other_rx = Receiver::start();
    let (b, b_uid) = other_company(&app, &other_rx.url).await;
    test_event_as(&app, &b, &b_uid).await;
    assert_eq!(app.dispatcher.run_once().await.unwrap(), 1);
    assert_eq!(other_rx.received().len(), 1);
    // The pause ends: one probe. The receiver is back: closed, and the rest go out.
    app.clock.advance_secs(1);
    assert_eq!(app.dispatcher.run_once().await.unwrap(), 1);
    assert_eq!(rx.received().len(), 25);
    assert!(circuits(&app).is_empty());
    assert_eq!(app.dispatcher.run_once().await.unwrap(), 12);
    let e = logged_as(&app, &app.t, queued[0]["id"].as_str().unwrap()).await;
    assert_eq!(e["status"].as_str(), Some("succeeded"), "{e}");
}
