//! The counters of events outside the request path (webhook attempts, mails, background
//! jobs' rounds) and of marked responses (DPoP replays, refused sign-ins).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use actix_web::HttpResponse;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::{Registry, Unit};

use pay_domain::mail::MailStatus;
use pay_domain::webhooks::{AttemptError, AttemptOutcome, MAX_ATTEMPTS};

/// Webhook attempts' labels: the outcome (`delivered`: a 2xx answer; `http_error`: another
/// answer; else why no answer came) and the attempt's number (1 to `MAX_ATTEMPTS`).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DeliveryLabels {
    outcome: &'static str,
    attempt: u32,
}

fn outcome_label(o: &AttemptOutcome) -> &'static str {
    match o.error {
        None if o.is_success() => "delivered",
        None => "http_error",
        Some(AttemptError::RefusedTarget) => "refused_target",
        Some(AttemptError::ConnectionFailed) => "connection_failed",
        Some(AttemptError::TlsFailed) => "tls_failed",
        Some(AttemptError::TimedOut) => "timed_out",
        Some(AttemptError::NoCallback) => "no_callback",
        Some(AttemptError::Internal) => "internal_error",
    }
}

/// What a response tells the metrics middleware to count (`mark`): set by the error mapping
/// and the sign-in page, read by `observe`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counted {
    /// A DPoP proof refused because its `jti` was used before.
    DpopReplay,
    /// A sign-in refused for a wrong e-mail or password (API login, sign-in page, claim).
    SignInFailed,
}

/// Marks `res` to be counted as `c` by the metrics middleware.
pub fn mark(res: &mut HttpResponse, c: Counted) {
    res.extensions_mut().insert(c);
}

/// A mail attempt's outcome: `sent`, `retrying` (not sent, tried again later) or `failed` (not
/// sent, no attempt left).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct MailLabels {
    outcome: &'static str,
}

fn mail_label(status: MailStatus) -> &'static str {
    match status {
        MailStatus::Sent => "sent",
        MailStatus::Pending => "retrying",
        MailStatus::Failed => "failed",
    }
}

/// A background job's round: the job, and `ok` (every step done) or `failed` (a step failed,
/// its work is retried next round).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct JobLabels {
    job: &'static str,
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct JobLabel {
    job: &'static str,
}

/// When each background job last finished a round with every step done (or started, before
/// its first such round): its age is encoded at each scrape.
#[derive(Debug, Default)]
struct JobTimes(Mutex<BTreeMap<&'static str, Instant>>);

impl Collector for JobTimes {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let times = self.0.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let mut family = encoder.encode_descriptor(
            "pay_scheduler_last_success_age",
            "Time since a background job last finished a round with every step done (since it \
             started, before its first)",
            Some(&Unit::Seconds),
            MetricType::Gauge,
        )?;
        for (job, at) in times {
            ConstGauge::new(at.elapsed().as_secs_f64())
                .encode(family.encode_family(&JobLabel { job })?)?;
        }
        Ok(())
    }
}

/// The counters of events outside the request path (the webhook dispatcher's attempts, the
/// mailer's sends, the background jobs' rounds) and of marked responses. Made by the
/// composition root, shared (a clone counts into the same series) with the adapters that
/// report, and registered by `Metrics::new`.
#[derive(Debug, Clone, Default)]
pub struct Counters {
    deliveries: Family<DeliveryLabels, Counter>,
    mails: Family<MailLabels, Counter>,
    job_runs: Family<JobLabels, Counter>,
    job_times: Arc<JobTimes>,
    dpop_replays: Counter,
    signin_failures: Counter,
}

impl Counters {
    /// One webhook attempt made: its outcome, and `attempts_before` made earlier.
    pub fn delivery_attempt(&self, outcome: &AttemptOutcome, attempts_before: u32) {
        let attempt = attempts_before.saturating_add(1).min(MAX_ATTEMPTS);
        self.deliveries
            .get_or_create(&DeliveryLabels {
                outcome: outcome_label(outcome),
                attempt,
            })
            .inc();
    }

    /// One mail attempt recorded, with the mail's status after it.
    pub fn mail_attempt(&self, status_after: MailStatus) {
        self.mails
            .get_or_create(&MailLabels {
                outcome: mail_label(status_after),
            })
            .inc();
    }

    /// A background job's loop started: its age counts from now until its first good round.
    pub fn job_started(&self, job: &'static str) {
        let mut times = self.job_times.0.lock().unwrap_or_else(|e| e.into_inner());
        times.entry(job).or_insert_with(Instant::now);
    }

    /// A background job finished a round; `ok`: every step of it was done.
    pub fn job_ran(&self, job: &'static str, ok: bool) {
        let outcome = if ok { "ok" } else { "failed" };
        self.job_runs
            .get_or_create(&JobLabels { job, outcome })
            .inc();
        if ok {
            let mut times = self.job_times.0.lock().unwrap_or_else(|e| e.into_inner());
            times.insert(job, Instant::now());
        }
    }

    pub(super) fn count(&self, c: Counted) {
        match c {
            Counted::DpopReplay => self.dpop_replays.inc(),
            Counted::SignInFailed => self.signin_failures.inc(),
        };
    }

    pub(super) fn register(&self, registry: &mut Registry) {
        registry.register(
            "pay_webhook_attempts",
            "Webhook attempts made, by outcome and attempt number",
            self.deliveries.clone(),
        );
        // Every outcome from the first scrape on, at 0 until it happens.
        for status in MailStatus::ALL {
            drop(self.mails.get_or_create(&MailLabels {
                outcome: mail_label(status),
            }));
        }
        registry.register(
            "pay_mails",
            "Mail attempts made, by outcome: sent, retrying (tried again later), failed (no \
             attempt left)",
            self.mails.clone(),
        );
        registry.register(
            "pay_scheduler_runs",
            "Background job rounds (expiry, event_drain, billing, janitor), by outcome",
            self.job_runs.clone(),
        );
        registry.register_collector(Box::new(self.job_times.clone()));
        registry.register(
            "pay_dpop_replays_refused",
            "DPoP proofs refused because their jti was used before",
            self.dpop_replays.clone(),
        );
        registry.register(
            "pay_signin_failures",
            "Sign-ins refused for a wrong e-mail or password",
            self.signin_failures.clone(),
        );
    }
}
