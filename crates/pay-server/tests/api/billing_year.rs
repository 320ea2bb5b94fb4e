//! Acceptance: a simulated year of recurring billing through real HTTP, driven by the company's
//! sandbox test clock (`POST /sandbox/clock` walks through each due instant). A monthly
//! subscription started Jan 31 issues 12 cycles on the clamped dates; paying each through the
//! sandbox on its due date but one, paid ten days late, gives exactly one overdue and one
//! back-to-active `pay.subscription.status_changed` webhook; a paused subscription issues
//! nothing; cancelling it archives its open cycle link.

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{read, TestApp};
use crate::links::millis;
use crate::on_both_backends;
use crate::subscriptions::{created, monthly, patch, pay, sub_path};
use crate::webhooks::{set_callback, verified_bodies, Receiver};

const CLOCK: &str = "/api/partner/v1/pay/sandbox/clock";
const DAY_MS: i64 = 24 * 3_600_000;
/// The longest single move the clock takes.
const MAX_STEP_SECS: i64 = 366 * 24 * 3600;

/// The 12 due instants from Jan 31 11:00 in Berlin: the 31st clamped to each month's end,
/// 11:00 local across the DST changes.
const DUES: [&str; 12] = [
    "2027-01-31T10:00:00Z",
    "2027-02-28T10:00:00Z",
    "2027-03-31T09:00:00Z",
    "2027-04-30T09:00:00Z",
    "2027-05-31T09:00:00Z",
    "2027-06-30T09:00:00Z",
    "2027-07-31T09:00:00Z",
    "2027-08-31T09:00:00Z",
    "2027-09-30T09:00:00Z",
    "2027-10-31T10:00:00Z",
    "2027-11-30T10:00:00Z",
    "2027-12-31T10:00:00Z",
];

fn ms(rfc3339: &str) -> i64 {
    millis(rfc3339)
}

fn at(v: &Value) -> i64 {
    millis(v.as_str().unwrap())
}

async fn get(app: &TestApp, path: &str) -> Value {
    let got = read(app.req(Method::GET, path).send().await.unwrap()).await;
    assert_eq!(got.0, 200, "{path}: {}", got.1);
    got.1
}

/// Moves the company's clock to `target` (ms), in moves of at most a year.
async fn advance_to(app: &TestApp, target: i64) {
    let now = at(&get(app, CLOCK).await["now"]);
    let mut secs = (target - now + 999) / 1000;
    while secs > 0 {
        let step = secs.min(MAX_STEP_SECS);
        let got = read(
            app.req(Method::POST, CLOCK)
                .json(&json!({ "advanceSeconds": step }))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(got.0, 200, "{}", got.1);
        secs -= step;
    }
}

/// (reason, previous -> next, cycle sequence) of the subscription webhooks each subscription
/// received, in order, every signature checked; payment webhooks are left out.
fn status_changes(rx: &Receiver, secret: &str, uid: &str) -> Vec<(String, String, u64)> {
    verified_bodies(rx, secret)
        .into_iter()
        .filter_map(|(_, b)| {
            (b["type"] == "pay.subscription.status_changed" && b["subscription"]["uid"] == uid)
                .then(|| {
                    assert_eq!(b["subscription"]["status"], b["data"]["nextStatus"]);
                    (
                        b["data"]["reason"].as_str().unwrap().to_owned(),
                        format!(
                            "{} -> {}",
                            b["data"]["previousStatus"].as_str().unwrap(),
                            b["data"]["nextStatus"].as_str().unwrap()
                        ),
                        b["cycle"]["sequence"].as_u64().unwrap(),
                    )
                })
        })
        .collect()
}

async fn a_simulated_year_through_the_test_clock(app: TestApp) {
    let rx = Receiver::start();
    let owner = app.login_owner(&app.t).await;
    let secret = set_callback(&app, &owner, &rx.url).await;
    let start = DUES[0];
    let mut body = monthly("ann@example.com");
    body["startAt"] = json!(start);
    let sub = created(&app, body).await;
    let uid = sub["uid"].as_str().unwrap().to_owned();
    let mut body = monthly("carol@example.com");
    body["startAt"] = json!(start);
    let paused = created(&app, body).await;
    let paused_uid = paused["uid"].as_str().unwrap().to_owned();
    assert_eq!(patch(&app, &paused_uid, "paused").await.0, 200);

    for (seq, due) in DUES.iter().enumerate() {
        advance_to(&app, ms(due)).await;
        let s = get(&app, &sub_path(&uid)).await;
        let cycles = s["cycles"].as_array().unwrap();
        assert_eq!(
            cycles.len(),
            seq + 1,
            "cycle {seq} issued a week ahead: {s}"
        );
        let c = &cycles[seq];
        assert_eq!(c["sequence"], seq);
        assert_eq!(at(&c["dueAt"]), ms(due), "{c}");
        assert_eq!(c["status"], "open", "{c}");
        let link = c["paymentLinkUid"].as_str().unwrap().to_owned();
        if seq == 3 {
            // Left unpaid for ten days: overdue from a day after due.
            advance_to(&app, ms(due) + 10 * DAY_MS).await;
            let s = get(&app, &sub_path(&uid)).await;
            assert_eq!(s["status"], "overdue", "{s}");
            assert_eq!(s["cycles"][3]["status"], "overdue");
        }
        let paid = pay(&app, &link, None).await;
        assert_eq!(paid["status"], "complete", "{paid}");
    }
    advance_to(&app, ms(DUES[11]) + DAY_MS).await;

    let s = get(&app, &sub_path(&uid)).await;
    assert_eq!(s["status"], "active", "{s}");
    let cycles = s["cycles"].as_array().unwrap();
    let dues: Vec<i64> = cycles.iter().map(|c| at(&c["dueAt"])).collect();
    assert_eq!(dues, DUES.map(ms), "12 cycles on the clamped dates");
    assert!(
        cycles
            .iter()
            .all(|c| c["status"] == "paid" && c["paidAt"].is_string()),
        "{s}"
    );
    let links: std::collections::HashSet<&str> = cycles
        .iter()
        .map(|c| c["paymentLinkUid"].as_str().unwrap())
        .collect();
    assert_eq!(links.len(), 12, "one invoice link per cycle");

    // The paused one issued nothing; cancelling it cancels cycle 0 and archives its link.
    let p = get(&app, &sub_path(&paused_uid)).await;
    assert_eq!(p["status"], "paused");
    assert_eq!(p["cycles"].as_array().unwrap().len(), 1, "{p}");
    let open_link = p["cycles"][0]["paymentLinkUid"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(patch(&app, &paused_uid, "cancelled").await.0, 200);
    let p = get(&app, &sub_path(&paused_uid)).await;
    assert_eq!(p["cycles"][0]["status"], "cancelled");
    let link = get(
        &app,
        &format!("/api/partner/v1/pay/payment-links/{open_link}"),
    )
    .await;
    assert_eq!(link["status"], "archived");

    // Exactly the expected webhooks, once each.
    while app.dispatcher.run_once().await.unwrap() > 0 {}
    assert_eq!(
        status_changes(&rx, &secret, &uid),
        vec![
            (
                "cycle_one_day_overdue".to_owned(),
                "active -> overdue".to_owned(),
                3
            ),
            (
                "overdue_cycles_paid".to_owned(),
                "overdue -> active".to_owned(),
                3
            ),
        ]
    );
    assert_eq!(
        status_changes(&rx, &secret, &paused_uid),
        vec![
            (
                "merchant_paused".to_owned(),
                "active -> paused".to_owned(),
                0
            ),
            (
                "merchant_cancelled".to_owned(),
                "paused -> cancelled".to_owned(),
                0
            ),
        ]
    );
}

on_both_backends!(a_simulated_year_through_the_test_clock);
