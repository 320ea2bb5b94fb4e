//! When the billing scheduler works on a subscription next, and its settings: read by the
//! use cases that write a subscription (`service.rs`) and by the scheduler's step
//! (`scheduler.rs`), so neither reaches into the other for them.

use time::Duration;

use crate::kernel::timestamp::Timestamp;
use crate::subscriptions::machine::OVERDUE_AFTER;
use crate::subscriptions::{next_reminder_at, Cycle, CycleStatus, Subscription};

/// The scheduler's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BillingConfig {
    /// How long before `dueAt` a cycle's invoice link is issued.
    pub invoice_lead: Duration,
    /// How long a claimed subscription stays leased (real time).
    pub lease: Duration,
    /// At most this many cycles are created per subscription in one run (a clock moved a
    /// year ahead catches up over a few runs).
    pub max_cycles_per_run: u32,
}

impl Default for BillingConfig {
    fn default() -> Self {
        BillingConfig {
            invoice_lead: Duration::days(7),
            lease: Duration::minutes(2),
            max_cycles_per_run: 16,
        }
    }
}

/// When the scheduler has work on `sub` next: the next cycle's issue time, an unpaid cycle's
/// next reminder or its overdue instant. `None` while it does not bill (paused, cancelled).
pub(crate) fn next_run(
    sub: &Subscription,
    cycles: &[Cycle],
    config: &BillingConfig,
) -> Option<Timestamp> {
    if !sub.status.bills() {
        return None;
    }
    let issue = sub
        .schedule()
        .due_at(sub.next_sequence)
        .map(|due| due.minus(config.invoice_lead));
    let scheduled = cycles
        .iter()
        .filter(|c| c.status == CycleStatus::Scheduled)
        .map(|c| c.due_at.minus(config.invoice_lead));
    let per_cycle = cycles.iter().flat_map(|c| {
        let overdue = (c.status == CycleStatus::Open).then(|| c.due_at.plus(OVERDUE_AFTER));
        [next_reminder_at(c, sub.zone), overdue]
    });
    issue
        .into_iter()
        .chain(scheduled)
        .chain(per_cycle.flatten())
        .min()
}
