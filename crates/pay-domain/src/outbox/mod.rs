//! The outbox every external effect goes through (webhook deliveries, e-mails, the coming
//! scheduler): a row per effect, claimed on a real-time lease (the store's claim: oldest due
//! first, leased until `lease_until`, concurrent claimers never share a row; the conformance
//! suites check it), retried on a schedule, each attempt recorded by compare-and-set. This
//! module holds the one rule that decides what follows an attempt; each outbox names its
//! schedule and maps its own statuses onto the verdict.

use time::Duration;

use crate::kernel::error::{Fault, PortResult};
use crate::kernel::timestamp::Timestamp;

/// When attempts after a failure go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Schedule {
    /// At most `max_attempts`, `interval` apart; a receiver's own `Retry-After` is obeyed
    /// within `[interval, max_retry_after]`.
    Every {
        interval: Duration,
        max_attempts: u32,
        max_retry_after: Duration,
    },
    /// Attempt `n` failed: the next one goes `delays[n - 1]` later; after the last delay,
    /// none (so `delays.len() + 1` attempts in all).
    Delays(&'static [Duration]),
}

impl Schedule {
    /// How many attempts the schedule makes at most.
    pub fn max_attempts(&self) -> u32 {
        match self {
            Schedule::Every { max_attempts, .. } => *max_attempts,
            Schedule::Delays(delays) => delays.len() as u32 + 1,
        }
    }
}

/// How one attempt ended, as the outbox sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// Done: the effect happened.
    Succeeded,
    /// Refused for good (trying again cannot help).
    Refused,
    /// Failed for now; the receiver may have said when to come back.
    Failed { retry_after: Option<Duration> },
}

/// What follows an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    Succeeded,
    /// No more attempts: refused, or the schedule ran out.
    GaveUp,
    /// The next attempt falls due then.
    RetryAt(Timestamp),
}

/// The one rule: `attempt` (1-based) of an effect that was still live ended as `ended` at
/// `now` (the owner's clock). An attempt number outside the schedule is a caller's bug.
pub fn next(schedule: &Schedule, attempt: u32, ended: Ended, now: Timestamp) -> PortResult<Next> {
    if attempt == 0 || attempt > schedule.max_attempts() {
        return Err(Fault::new(format!("attempt {attempt} out of range")));
    }
    let wait = match ended {
        Ended::Succeeded => return Ok(Next::Succeeded),
        Ended::Refused => return Ok(Next::GaveUp),
        Ended::Failed { retry_after } => match schedule {
            Schedule::Every {
                interval,
                max_attempts,
                max_retry_after,
            } => {
                if attempt >= *max_attempts {
                    return Ok(Next::GaveUp);
                }
                match retry_after {
                    Some(asked) => asked.clamp(*interval, *max_retry_after),
                    None => *interval,
                }
            }
            Schedule::Delays(delays) => match delays.get(attempt as usize - 1) {
                Some(d) => *d,
                None => return Ok(Next::GaveUp),
            },
        },
    };
    Ok(Next::RetryAt(now.plus(wait)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const EVERY: Schedule = Schedule::Every {
        interval: Duration::minutes(5),
        max_attempts: 3,
        max_retry_after: Duration::hours(1),
    };
    const DELAYS: Schedule = Schedule::Delays(&[Duration::minutes(1), Duration::minutes(10)]);

    fn t(s: i64) -> Timestamp {
        Timestamp::from_unix_millis(1_795_327_640_000 + s * 1000).unwrap()
    }

    #[test]
    fn success_and_refusal_end_at_once() {
        for s in [EVERY, DELAYS] {
            assert_eq!(
                next(&s, 1, Ended::Succeeded, t(0)).unwrap(),
                Next::Succeeded
            );
            assert_eq!(next(&s, 1, Ended::Refused, t(0)).unwrap(), Next::GaveUp);
        }
    }

    #[test]
    fn a_fixed_interval_obeys_retry_after_within_its_bounds_until_the_last_attempt() {
        let failed = |retry_after| Ended::Failed { retry_after };
        assert_eq!(
            next(&EVERY, 1, failed(None), t(0)).unwrap(),
            Next::RetryAt(t(300))
        );
        assert_eq!(
            next(&EVERY, 1, failed(Some(Duration::seconds(1))), t(0)).unwrap(),
            Next::RetryAt(t(300))
        );
        assert_eq!(
            next(&EVERY, 2, failed(Some(Duration::minutes(20))), t(0)).unwrap(),
            Next::RetryAt(t(1200))
        );
        assert_eq!(
            next(&EVERY, 2, failed(Some(Duration::days(1))), t(0)).unwrap(),
            Next::RetryAt(t(3600))
        );
        assert_eq!(next(&EVERY, 3, failed(None), t(0)).unwrap(), Next::GaveUp);
    }

    #[test]
    fn a_delay_table_is_walked_then_gives_up() {
        let failed = Ended::Failed { retry_after: None };
        assert_eq!(DELAYS.max_attempts(), 3);
        assert_eq!(
            next(&DELAYS, 1, failed, t(0)).unwrap(),
            Next::RetryAt(t(60))
        );
        assert_eq!(
            next(&DELAYS, 2, failed, t(0)).unwrap(),
            Next::RetryAt(t(600))
        );
        assert_eq!(next(&DELAYS, 3, failed, t(0)).unwrap(), Next::GaveUp);
    }

    #[test]
    fn attempts_outside_the_schedule_are_refused() {
        for s in [EVERY, DELAYS] {
            assert!(next(&s, 0, Ended::Succeeded, t(0)).is_err());
            assert!(next(&s, 4, Ended::Succeeded, t(0)).is_err());
        }
    }
}
