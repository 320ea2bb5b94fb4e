//! The expiry work in the background: every second, the quotes, deposit requests and sessions
//! of expired or stopped links that fell due are moved (each move writes its events into the
//! outbox), and the domain events a crash left between a deciding write and its reactions are
//! replayed (`Pay::drain_events`). Safe on every instance at once: each move is a
//! compare-and-set, each event claim a lease, each reaction deduplicated by event id.

use std::time::Duration;

use pay_domain::app::Pay;
use pay_domain::checkout::DUE_BATCH;
use pay_http::edge::metrics::Counters;

/// The expiry work's job name in `GET /metrics`.
pub const EXPIRY_JOB: &str = "expiry";
/// The event drain's job name in `GET /metrics`.
pub const DRAIN_JOB: &str = "event_drain";

/// How often the due work runs.
pub const EVERY: Duration = Duration::from_secs(1);

/// One round: everything due now, in batches, counted in `counters` (a round with a failed
/// step or move is `failed`). Returns how many sessions moved.
pub async fn run_once(pay: &Pay, counters: &Counters) -> usize {
    let mut moved = 0;
    let mut ok = true;
    let moved = loop {
        let p = pay.clone();
        let Some(report) =
            crate::background_step("expiry work", move || p.checkout().run_due_work(DUE_BATCH))
                .await
        else {
            ok = false;
            break moved;
        };
        ok &= report.failed.is_empty();
        for (session, e) in &report.failed {
            tracing::warn!(%session, error = %pay_domain::kernel::error::chain(e), "expiry move failed; retried next round");
        }
        moved += report.moved;
        if report.moved < DUE_BATCH {
            break moved;
        }
    };
    counters.job_ran(EXPIRY_JOB, ok);
    moved
}

/// One round of the event drain, counted in `counters`. Returns how many events it replayed.
pub async fn drain_once(pay: &Pay, counters: &Counters) -> usize {
    let p = pay.clone();
    let Some(report) = crate::background_step("event drain", move || p.drain_events()).await else {
        counters.job_ran(DRAIN_JOB, false);
        return 0;
    };
    counters.job_ran(DRAIN_JOB, report.failed.is_empty());
    for (event, e) in &report.failed {
        tracing::warn!(%event, error = %pay_domain::kernel::error::chain(e), "a domain event's reaction failed; retried when its lease ends");
    }
    report.replayed
}

/// Runs until the process stops, counting its rounds in `counters`.
pub async fn run(pay: Pay, counters: Counters) {
    counters.job_started(EXPIRY_JOB);
    counters.job_started(DRAIN_JOB);
    loop {
        tokio::time::sleep(EVERY).await;
        let moved = run_once(&pay, &counters).await;
        if moved > 0 {
            tracing::info!(moved, "expired payment sessions");
        }
        let replayed = drain_once(&pay, &counters).await;
        if replayed > 0 {
            tracing::warn!(
                replayed,
                "replayed domain events a crash or a failed reaction had left"
            );
        }
    }
}
