//! The expiry work in the background: every second, the quotes, deposit requests and sessions
//! of expired or stopped links that fell due are moved (each move writes its events into the
//! outbox). Safe on every instance at once: each move is a compare-and-set.

use std::time::Duration;

use pay_domain::app::Pay;
use pay_domain::checkout::DUE_BATCH;

/// How often the due work runs.
pub const EVERY: Duration = Duration::from_secs(1);

/// One round: everything due now, in batches. Returns how many sessions moved.
pub async fn run_once(pay: &Pay) -> usize {
    let mut moved = 0;
    loop {
        let p = pay.clone();
        let Some(report) =
            crate::background_step("expiry work", move || p.checkout().run_due_work(DUE_BATCH))
                .await
        else {
            return moved;
        };
        for (session, e) in &report.failed {
            tracing::warn!(%session, error = %pay_domain::kernel::error::chain(e), "expiry move failed; retried next round");
        }
        moved += report.moved;
        if report.moved < DUE_BATCH {
            return moved;
        }
    }
}

/// Runs until the process stops.
pub async fn run(pay: Pay) {
    loop {
        tokio::time::sleep(EVERY).await;
        let moved = run_once(&pay).await;
        if moved > 0 {
            tracing::info!(moved, "expired payment sessions");
        }
    }
}
