//! Housekeeping in the background: every few minutes, forget expired sessions and the login
//! failures and rate-limit hits that no window counts any more, so those tables stay small,
//! and delete evidence files no expense has linked for a day (`Pay::prune`); then record the
//! incoming wallet activity of completed sessions that have none (`Pay::reconcile`).
//! Safe to run on every instance at once (deletes of rows no rule reads; an orphan file is
//! claimed by compare-and-set before its bytes go; an activity is recorded once per key).

use std::time::Duration;

use pay_domain::app::Pay;

/// How often the janitor runs.
pub const EVERY: Duration = Duration::from_secs(600);

/// Runs until the process stops.
pub async fn run(pay: Pay) {
    loop {
        tokio::time::sleep(EVERY).await;
        let p = pay.clone();
        match crate::background_step("pruning", move || p.prune()).await {
            Some(0) | None => {}
            Some(rows) => tracing::info!(rows, "pruned expired rows"),
        }
        let p = pay.clone();
        match crate::background_step("reconciling", move || p.reconcile()).await {
            Some(0) | None => {}
            Some(records) => tracing::warn!(
                records,
                "recorded settlements a crash or a failed write had left out"
            ),
        }
    }
}
