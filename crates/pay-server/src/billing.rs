//! The billing scheduler in the background: every second, the subscriptions whose next work
//! has come (on their company's clock) are claimed in batches and run (cycles issued their
//! invoice link `PAY_BILLING_LEAD_SECS` before due, reminders queued, overdue moves). Safe on
//! every instance at once: the claim is a lease in the database (`FOR UPDATE SKIP LOCKED` on
//! PostgreSQL), and each cycle is created once (unique sequence) and opened by compare-and-set.
//! A process stopped mid-run leaves its lease to run out; another run takes the work over.

use std::time::Duration;

use pay_domain::app::Pay;
use pay_domain::subscriptions::BillingRun;
use pay_http::edge::metrics::Counters;

/// The billing scheduler's job name in `GET /metrics`.
pub const JOB: &str = "billing";

/// How often the due subscriptions are looked for.
pub const EVERY: Duration = Duration::from_secs(1);
/// Subscriptions claimed per step (one lease each). Each claim is a committed transaction, so
/// the batch sets how many commits a sweep pays: at 256 a sweep over 1,000 due rows of 100,000
/// runs at about 4x a bare read of those rows, at 64 at 7-9x (`cargo bench --bench billing`,
/// bench/README.md). A step of 256 runs well inside the two-minute lease.
pub const BATCH: usize = 256;

/// One round: steps until fewer than a batch were due, counted in `counters` (`failed` when a
/// step or a subscription's run failed). Returns what the round did in all.
pub async fn run_once(pay: &Pay, counters: &Counters) -> BillingRun {
    let mut total = BillingRun::default();
    let mut ok = true;
    loop {
        let p = pay.clone();
        let Some(run) = crate::background_step("billing step", move || {
            p.subscriptions().run_due_billing(BATCH)
        })
        .await
        else {
            ok = false;
            break;
        };
        ok &= run.failures.is_empty();
        for e in &run.failures {
            tracing::warn!(error = %pay_domain::kernel::error::chain(e), "billing run of a subscription failed; retried when its lease runs out");
        }
        let full = run.claimed >= BATCH;
        total.claimed += run.claimed;
        total.cycles_issued += run.cycles_issued;
        total.reminders_queued += run.reminders_queued;
        total.status_moves += run.status_moves;
        total.failures.extend(run.failures);
        if !full {
            break;
        }
    }
    counters.job_ran(JOB, ok);
    total
}

/// Runs until the process stops, counting its rounds in `counters`.
pub async fn run(pay: Pay, counters: Counters) {
    tracing::info!("billing scheduler running");
    counters.job_started(JOB);
    loop {
        tokio::time::sleep(EVERY).await;
        let round = run_once(&pay, &counters).await;
        if round.cycles_issued + round.reminders_queued + round.status_moves > 0 {
            tracing::info!(
                subscriptions = round.claimed,
                cycles_issued = round.cycles_issued,
                reminders_queued = round.reminders_queued,
                status_moves = round.status_moves,
                "billing round"
            );
        }
    }
}
