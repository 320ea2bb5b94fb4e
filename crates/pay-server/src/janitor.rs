//! Housekeeping in the background: every few minutes, forget expired sessions and the login
//! failures and rate-limit hits that no window counts any more, so those tables stay small.
//! Safe to run on every instance at once (deletes of rows no rule reads).

use std::time::Duration;

use pay_domain::app::Pay;

/// How often the janitor runs.
pub const EVERY: Duration = Duration::from_secs(600);

/// Runs until the process stops.
pub async fn run(pay: Pay) {
    loop {
        tokio::time::sleep(EVERY).await;
        let p = pay.clone();
        match tokio::task::spawn_blocking(move || p.prune()).await {
            Ok(Ok(0)) => {}
            Ok(Ok(rows)) => tracing::info!(rows, "pruned expired rows"),
            Ok(Err(e)) => {
                tracing::warn!(error = %pay_domain::kernel::error::chain(&e), "pruning failed")
            }
            Err(e) => {
                tracing::warn!(error = %pay_domain::kernel::error::chain(&e), "pruning failed")
            }
        }
    }
}
