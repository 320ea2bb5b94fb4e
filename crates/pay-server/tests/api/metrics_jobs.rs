//! `GET /metrics`: the mailer's attempts by outcome (`pay_mails_total`) and the background
//! jobs' rounds and lag (`pay_scheduler_runs_total`, `pay_scheduler_last_success_age_seconds`),
//! counted where the work is done (the mailer's record step, each job's round) with the
//! application's counters, and parsed by the independent parser.

use std::time::Duration;

use pay_domain::kernel::secret::Secret;
use pay_server::{billing, janitor, scheduler, Mailer};
use serde_json::json;

use crate::helpers::TestApp;
use crate::mail::{link, post, smtp_sink, PAYER};
use crate::metrics::{parse_exposition, scrape, value, with_token, Sample, TOKEN};
use crate::on_both_backends;

const MAILS: &str = "pay_mails_total";
const RUNS: &str = "pay_scheduler_runs_total";
const AGE: &str = "pay_scheduler_last_success_age_seconds";
const JOBS: [&str; 4] = [
    scheduler::EXPIRY_JOB,
    scheduler::DRAIN_JOB,
    billing::JOB,
    janitor::JOB,
];

async fn samples(app: &TestApp) -> Option<Vec<Sample>> {
    let (status, _, text) = scrape(app, &app.base, Some(TOKEN)).await;
    assert_eq!(status, 200, "{text}");
    parse_exposition(&text)
}

fn kind_of(samples: &[Sample], family: &str) -> String {
    samples
        .iter()
        .find(|s| s.family == family)
        .unwrap_or_else(|| panic!("{family} missing: {samples:?}"))
        .kind
        .clone()
}

fn mails(samples: &[Sample], outcome: &str) -> f64 {
    value(samples, MAILS, &[("outcome", outcome)]).unwrap_or_else(|| panic!("{outcome} missing"))
}

/// A mail server down for every attempt (the mail fails after its last), then one that takes
/// the next mail: 7 retrying, 1 failed, 1 sent.
async fn mails_are_counted_by_outcome(app: TestApp) {
    let Some(before) = samples(&app).await else {
        return;
    };
    assert_eq!(kind_of(&before, "pay_mails"), "counter");
    for outcome in ["sent", "retrying", "failed"] {
        assert_eq!(mails(&before, outcome), 0.0, "{outcome}");
    }

    let first = link(&app, json!({"amount": "1", "customerEmail": PAYER})).await;
    assert_eq!(post(&app, &first, None).await.0, 202);
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut config = app.config.clone();
    config.smtp_url = Some(Secret::new(format!("smtp://127.0.0.1:{closed}")));
    let down = Mailer::from_config(&config, app.pay.clone())
        .unwrap()
        .with_counters(app.counters.clone());
    for _ in 0..pay_domain::mail::MAX_ATTEMPTS {
        assert_eq!(down.drain().await.unwrap(), 1);
        app.clock.advance_secs(3 * 86_400);
    }
    assert_eq!(down.drain().await.unwrap(), 0, "no attempt left");
    let after_down = samples(&app).await.unwrap();
    assert_eq!(mails(&after_down, "retrying"), 7.0);
    assert_eq!(mails(&after_down, "failed"), 1.0);
    assert_eq!(mails(&after_down, "sent"), 0.0);

    let Some(sink) = smtp_sink::SmtpSink::start() else {
        return;
    };
    let second = link(&app, json!({"amount": "2", "customerEmail": PAYER})).await;
    assert_eq!(post(&app, &second, None).await.0, 202);
    config.smtp_url = Some(Secret::new(sink.url()));
    let up = Mailer::from_config(&config, app.pay.clone())
        .unwrap()
        .with_counters(app.counters.clone());
    assert_eq!(up.drain().await.unwrap(), 1);
    assert_eq!(sink.wait_for(1, Duration::from_secs(5)).len(), 1);
    let after = samples(&app).await.unwrap();
    assert_eq!(mails(&after, "sent"), 1.0);
    assert_eq!(mails(&after, "retrying"), 7.0);
    assert_eq!(mails(&after, "failed"), 1.0);
}

async fn one_round_of_each(app: &TestApp) {
    scheduler::run_once(&app.pay, &app.counters).await;
    scheduler::drain_once(&app.pay, &app.counters).await;
    billing::run_once(&app.pay, &app.counters).await;
    assert!(janitor::run_once(&app.pay, &app.counters).await.is_some());
}

/// Each job's rounds are counted, and the age of its last good round grows between rounds and
/// starts again at the next.
async fn job_rounds_and_lag_are_shown(app: TestApp) {
    let Some(before) = samples(&app).await else {
        return;
    };
    assert!(!before.iter().any(|s| s.name == RUNS || s.name == AGE));
    // A job started but not yet run: its age counts from its start.
    app.counters.job_started(janitor::JOB);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let started = samples(&app).await.unwrap();
    let age = value(&started, AGE, &[("job", janitor::JOB)]).unwrap();
    assert!((0.3..5.0).contains(&age), "{age}");

    // Each age now counts from that job's round, so it is within the time the rounds and the
    // scrape took (on a loaded machine that may be more than a few hundred ms), and no longer
    // from the janitor's start above, which was longer ago than that.
    let rounds_started = std::time::Instant::now();
    one_round_of_each(&app).await;
    let after = samples(&app).await.unwrap();
    let since = rounds_started.elapsed().as_secs_f64();
    assert_eq!(kind_of(&after, "pay_scheduler_runs"), "counter");
    assert_eq!(
        kind_of(&after, "pay_scheduler_last_success_age_seconds"),
        "gauge"
    );
    for job in JOBS {
        assert_eq!(
            value(&after, RUNS, &[("job", job), ("outcome", "ok")]),
            Some(1.0),
            "{job}"
        );
        assert_eq!(
            value(&after, RUNS, &[("job", job), ("outcome", "failed")]),
            None
        );
        let age = value(&after, AGE, &[("job", job)]).unwrap();
        assert!(
            (0.0..=since + 0.01).contains(&age),
            "{job} {age} (rounds {since} s)"
        );
    }

    tokio::time::sleep(Duration::from_millis(1100)).await;
    let later = samples(&app).await.unwrap();
    for job in JOBS {
        let age = value(&later, AGE, &[("job", job)]).unwrap();
        assert!((1.1..10.0).contains(&age), "{job} {age}");
    }
    scheduler::run_once(&app.pay, &app.counters).await;
    let again = samples(&app).await.unwrap();
    let job = [("job", scheduler::EXPIRY_JOB)];
    assert_eq!(value(&again, RUNS, &[job[0], ("outcome", "ok")]), Some(2.0));
    assert!(value(&again, AGE, &job).unwrap() < 1.0);
}

on_both_backends!(spawn = with_token; mails_are_counted_by_outcome, job_rounds_and_lag_are_shown);
