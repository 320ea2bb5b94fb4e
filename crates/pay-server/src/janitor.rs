//! Housekeeping in the background: every few minutes, forget expired sessions and the login
//! failures and rate-limit hits that no window counts any more, so those tables stay small,
//! and delete evidence files no expense has linked for a day, domain events done a day ago and
//! logged webhook events past `PAY_EVENTS_RETENTION_DAYS` (`Pay::prune`). Safe to run on every instance at once (deletes of rows no rule reads; an
//! orphan file is claimed by compare-and-set before its bytes go).

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
    }
}
