//! The expiry work in the background: every second, the quotes, deposit requests and sessions
//! of expired or stopped links that fell due are moved (each move writes its events into the
//! outbox), and the domain events a crash left between a deciding write and its reactions are
//! replayed (`Pay::drain_events`). Safe on every instance at once: each move is a
//! compare-and-set, each event claim a lease, each reaction deduplicated by event id.

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

/// One round of the event drain. Returns how many events it replayed.
pub async fn drain_once(pay: &Pay) -> usize {
    let p = pay.clone();
    let Some(report) = crate::background_step("event drain", move || p.drain_events()).await else {
        return 0;
    };
    for (event, e) in &report.failed {
        tracing::warn!(%event, error = %pay_domain::kernel::error::chain(e), "a domain event's reaction failed; retried when its lease ends");
    }
    report.replayed
}

/// Runs until the process stops.
pub async fn run(pay: Pay) {
    loop {
        tokio::time::sleep(EVERY).await;
        let moved = run_once(&pay).await;
        if moved > 0 {
            tracing::info!(moved, "expired payment sessions");
        }
        let replayed = drain_once(&pay).await;
        if replayed > 0 {
            tracing::warn!(
                replayed,
                "replayed domain events a crash or a failed reaction had left"
            );
        }
    }
}
