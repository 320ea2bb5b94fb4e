//! What the sandbox reads of the contexts above it: the instants at which the work they
//! schedule on the company's clock (the billing scheduler) falls due, through `ClockFollower`,
//! registered when `Pay` is built, so the sandbox never depends on them. Each step of a moved
//! clock reaches that work as a domain event written with the move
//! (`DomainEvent::ClockMoved`); `run_due` runs what was due before the first step.

use crate::kernel::error::PortResult;
use crate::kernel::ids::CompanyId;
use crate::kernel::timestamp::Timestamp;

/// Work that follows a company's test clock. Advancing the clock walks it through each
/// instant a follower names, running the due work at each, so a year passes step by step
/// (a cycle issued, reminded, overdue, each at its own instant), never all at the end.
pub trait ClockFollower: Send + Sync {
    /// The earliest instant strictly after `after` (on the company's clock) at which this
    /// follower has work for `company`; `None` when it has none.
    fn next_due_after(&self, company: CompanyId, after: Timestamp)
        -> PortResult<Option<Timestamp>>;
    /// Runs the company's work that is due now on its clock (before a move; each step's work is
    /// the follower's reaction to `DomainEvent::ClockMoved`); MUST touch no other company's.
    /// `until` is where the move ends: what a later step supersedes by then (a reminder whose
    /// next stage comes before the end) is recorded, not announced.
    fn run_due(&self, company: CompanyId, until: Timestamp) -> PortResult<()>;
}
