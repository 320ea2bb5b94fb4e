//! Housekeeping in the background: every few minutes, forget expired sessions and the login
//! failures and rate-limit hits that no window counts any more, so those tables stay small,
//! and delete evidence files no expense has linked for a day, domain events done a day ago and
//! logged webhook events past `PAY_EVENTS_RETENTION_DAYS` (`Pay::prune`). Safe to run on every instance at once (deletes of rows no rule reads; an
//! orphan file is claimed by compare-and-set before its bytes go).

use std::time::Duration;

use pay_domain::app::Pay;
use pay_http::edge::metrics::Counters;

/// How often the janitor runs.
pub const EVERY: Duration = Duration::from_secs(600);
/// The janitor's job name in `GET /metrics`.
pub const JOB: &str = "janitor";

/// One round, counted in `counters`: the rows pruned (None: the prune failed, logged).
pub async fn run_once(pay: &Pay, counters: &Counters) -> Option<u64> {
    let p = pay.clone();
    let rows = crate::background_step("pruning", move || p.prune()).await;
    counters.job_ran(JOB, rows.is_some());
    rows
}

/// Runs until the process stops, counting its rounds in `counters`.
pub async fn run(pay: Pay, counters: Counters) {
    counters.job_started(JOB);
    loop {
        tokio::time::sleep(EVERY).await;
        match run_once(&pay, &counters).await {
            Some(0) | None => {}
            Some(rows) => tracing::info!(rows, "pruned expired rows"),
        }
    }
}
