//! No mail flood (docs/security.md): every mail to a recipient, of any kind, counts against one
//! per-recipient cap on real time (`PAY_RATE_LIMIT_MAIL_PER_RECIPIENT`), and a moved test
//! clock sends at most the one reminder of each cycle that is due when the move ends, never
//! the ones it walked past. Run with the real default limits.

use std::collections::BTreeMap;

use pay_domain::kernel::ratelimit::RateLimits;
use pay_domain::mail::{MailKind, OutgoingMail};
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{assert_error, read, spawn_limited, Backend, TestApp};
use crate::subscriptions::created;

const CLOCK: &str = "/api/partner/v1/pay/sandbox/clock";
const DAY_S: i64 = 24 * 3600;

/// Every mail queued so far (no SMTP in these tests: they all wait in the outbox).
async fn mails_to(app: &TestApp, to: &str) -> Vec<OutgoingMail> {
    let pay = app.pay.clone();
    let to = to.to_owned();
    tokio::task::spawn_blocking(move || {
        pay.mail()
            .pending_mails_after(None, 100_000)
            .unwrap()
            .into_iter()
            .filter(|m| m.to.eq_ignore_ascii_case(&to))
            .collect()
    })
    .await
    .unwrap()
}

async fn advance(app: &TestApp, secs: i64) {
    let got = read(
        app.req(Method::POST, CLOCK)
            .json(&json!({ "advanceSeconds": secs }))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(got.0, 200, "{}", got.1);
}

fn weekly(email: &str, label: &str) -> Value {
    json!({
        "customerEmail": email,
        "label": label,
        "amountUsd": "5.00",
        "cadence": "weekly",
        "timezone": "UTC",
    })
}

/// Reminder mails per invoice link.
fn per_cycle(mails: &[OutgoingMail]) -> BTreeMap<String, usize> {
    let mut n = BTreeMap::new();
    for m in mails {
        assert_eq!(m.kind, MailKind::SubscriptionReminder);
        *n.entry(m.link_uid.to_string()).or_default() += 1;
    }
    n
}

async fn a_clock_jump_sends_one_reminder_per_cycle_and_the_cap_holds(app: TestApp) {
    let cap = RateLimits::default().mail_per_recipient.max as usize;
    // Ten days: cycle 1 (issued at once, a week's lead) passes all three of its reminder
    // instants on the way; only the one due when the move ends (overdue) goes out.
    created(&app, weekly("ann@outside.example", "Weekly")).await;
    advance(&app, 10 * DAY_S).await;
    let mails = mails_to(&app, "ann@outside.example").await;
    let counts = per_cycle(&mails);
    assert!(!counts.is_empty(), "a reminder is due");
    assert!(
        counts.values().all(|n| *n == 1),
        "one reminder per cycle: {counts:?}"
    );
    assert!(
        mails
            .iter()
            .all(|m| m.subject.starts_with("Payment overdue")),
        "only the reminder due now: {:?}",
        mails.iter().map(|m| &m.subject).collect::<Vec<_>>()
    );

    // A year with an attacker-chosen label to an outside address: at most the cap.
    created(
        &app,
        weekly("victim@outside.example", "Click https://evil.example now"),
    )
    .await;
    advance(&app, 365 * DAY_S).await;
    let mails = mails_to(&app, "victim@outside.example").await;
    assert!(
        !mails.is_empty() && mails.len() <= cap,
        "{} mails queued to one recipient (cap {cap})",
        mails.len()
    );
    assert!(per_cycle(&mails).values().all(|n| *n == 1));
    // The cap is one across every kind of mail: a payment request to that recipient now
    // counts against it too (real time: the moved clock gives no new day).
    let link = app.create_link(json!({"amount": "10"})).await;
    let mut refused = false;
    for _ in 0..=cap {
        let res = app
            .req(
                Method::POST,
                &format!(
                    "/api/partner/v1/pay/payment-links/{}/send-request-email",
                    link["uid"].as_str().unwrap()
                ),
            )
            .json(&json!({"email": "Victim@Outside.example"}))
            .send()
            .await
            .unwrap();
        if res.status() == 429 {
            assert_error(&read(res).await, 429, "rate_limited", None);
            refused = true;
            break;
        }
        assert_eq!(res.status(), 202);
    }
    assert!(
        refused,
        "the request e-mail route shares the recipient's cap"
    );
    assert!(mails_to(&app, "victim@outside.example").await.len() <= cap);
}

mod a_clock_jump_sends_one_reminder_per_cycle_and_the_cap_holds {
    use super::*;

    #[actix_rt::test]
    async fn sqlite() {
        let limits = RateLimits::default();
        if let Some(app) = spawn_limited(Backend::Sqlite, limits).await {
            super::a_clock_jump_sends_one_reminder_per_cycle_and_the_cap_holds(app).await;
        }
    }

    #[actix_rt::test]
    async fn postgres() {
        let limits = RateLimits::default();
        if let Some(app) = spawn_limited(Backend::Postgres, limits).await {
            super::a_clock_jump_sends_one_reminder_per_cycle_and_the_cap_holds(app).await;
        }
    }
}
