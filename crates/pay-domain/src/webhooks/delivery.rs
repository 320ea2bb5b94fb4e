//! One delivery: a signed POST of one event to one callback, tried until it succeeds or the
//! retry policy gives up. Its status moves by one function, tested over the whole table.

use crate::outbox::{self, Ended, Next, Schedule};
use std::fmt;

use time::Duration;

use crate::kernel::error::{Fault, PortResult};
use crate::kernel::ids::CompanyId;
use crate::kernel::timestamp::Timestamp;

use super::event::EventKind;
use super::failure::AttemptError;
use super::target::CallbackKind;

/// The first attempt plus up to ten retries (spec: "retried up to 10 times").
pub const MAX_ATTEMPTS: u32 = 11;
/// Time between attempts.
pub const RETRY_INTERVAL: Duration = Duration::minutes(5);
/// The longest a receiver's `Retry-After` may push the next attempt.
pub const MAX_RETRY_AFTER: Duration = Duration::hours(1);
/// How long a claimed delivery stays invisible to other dispatchers; a dispatcher that dies
/// mid-attempt releases it by letting the lease run out (at-least-once delivery).
pub const CLAIM_LEASE: Duration = Duration::seconds(60);
/// The retry schedule of deliveries (the outbox's rule).
pub const SCHEDULE: Schedule = Schedule::Every {
    interval: RETRY_INTERVAL,
    max_attempts: MAX_ATTEMPTS,
    max_retry_after: MAX_RETRY_AFTER,
};
/// Most characters of a response body kept in the log.
pub const RESPONSE_EXCERPT_CHARS: usize = 1024;
/// Most bytes of a response body read.
pub const RESPONSE_READ_LIMIT: usize = 64 * 1024;
/// Delivery-log page size: default and most.
pub const LOG_LIMIT_DEFAULT: usize = 50;
pub const LOG_LIMIT_MAX: usize = 200;

/// Where a delivery is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeliveryStatus {
    /// Not tried yet.
    Pending,
    /// Tried and failed; another attempt is scheduled.
    Retrying,
    /// A 2xx answer.
    Succeeded,
    /// Every attempt failed.
    Failed,
}

impl DeliveryStatus {
    pub const ALL: [DeliveryStatus; 4] = [
        DeliveryStatus::Pending,
        DeliveryStatus::Retrying,
        DeliveryStatus::Succeeded,
        DeliveryStatus::Failed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryStatus::Pending => "pending",
            DeliveryStatus::Retrying => "retrying",
            DeliveryStatus::Succeeded => "succeeded",
            DeliveryStatus::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<DeliveryStatus> {
        DeliveryStatus::ALL.into_iter().find(|x| x.as_str() == s)
    }

    pub fn is_terminal(self) -> bool {
        matches!(self, DeliveryStatus::Succeeded | DeliveryStatus::Failed)
    }
}

impl fmt::Display for DeliveryStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a delivery exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeliveryOrigin {
    /// A state change emitted it.
    Event,
    /// A merchant resent it from the log.
    Manual,
}

impl DeliveryOrigin {
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryOrigin::Event => "event",
            DeliveryOrigin::Manual => "manual",
        }
    }

    pub fn parse(s: &str) -> Option<DeliveryOrigin> {
        match s {
            "event" => Some(DeliveryOrigin::Event),
            "manual" => Some(DeliveryOrigin::Manual),
            _ => None,
        }
    }
}

/// A delivery as stored: the exact body to send and its state.
#[derive(Clone, PartialEq, Eq)]
pub struct Delivery {
    pub id: uuid::Uuid,
    /// Deliveries of one event to its several callbacks, and manual resends of them.
    pub group_id: uuid::Uuid,
    pub company_id: CompanyId,
    pub origin: DeliveryOrigin,
    pub event: EventKind,
    pub status: DeliveryStatus,
    pub attempts: u32,
    /// When it is due (service clock); `None` once terminal.
    pub next_attempt_at: Option<Timestamp>,
    pub last_attempt_at: Option<Timestamp>,
    pub last_response_status: Option<u16>,
    pub last_error: Option<AttemptError>,
    pub payment_link_uid: Option<String>,
    pub subscription_uid: Option<String>,
    /// The OAuth grant whose subscription receives it (its link was made by that grant).
    pub grant_id: Option<uuid::Uuid>,
    /// The merchant's order id, for the log's search.
    pub order_id: Option<String>,
    pub target: CallbackKind,
    pub url: String,
    /// The raw JSON body, signed byte for byte.
    pub body: String,
    pub created_at: Timestamp,
}

impl fmt::Debug for Delivery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The body may carry customer data; the log needs only the identity.
        f.debug_struct("Delivery")
            .field("id", &self.id)
            .field("event", &self.event)
            .field("status", &self.status)
            .field("attempts", &self.attempts)
            .finish_non_exhaustive()
    }
}

/// What one attempt returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptOutcome {
    /// The HTTP status, when a response arrived.
    pub status: Option<u16>,
    pub duration_ms: u64,
    /// Why no answer came (refusal by the SSRF guard, connection, TLS, timeout), in the
    /// log's fixed words; the details are in the server log only.
    pub error: Option<AttemptError>,
    /// The start of the response body.
    pub response_excerpt: Option<String>,
    /// A `Retry-After` the receiver sent with 429 or 503.
    pub retry_after: Option<Duration>,
}

impl AttemptOutcome {
    /// Only a 2xx answer is success (a redirect is not: they are not followed).
    pub fn is_success(&self) -> bool {
        self.error.is_none() && self.status.is_some_and(|s| (200..300).contains(&s))
    }
}

/// The state after an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AfterAttempt {
    pub status: DeliveryStatus,
    pub next_attempt_at: Option<Timestamp>,
}

/// The one transition function. `attempt` is the number of the attempt just made (1-based).
/// Success ends it; a failure schedules the next attempt `RETRY_INTERVAL` later (or later
/// still when the receiver asked, up to `MAX_RETRY_AFTER`) until `MAX_ATTEMPTS` were made;
/// `no callback` (the owner's callback is gone) ends it `failed` at once.
/// A terminal delivery takes no more attempts.
pub fn after_attempt(
    current: DeliveryStatus,
    attempt: u32,
    outcome: &AttemptOutcome,
    now: Timestamp,
) -> PortResult<AfterAttempt> {
    if current.is_terminal() {
        return Err(Fault::new(format!(
            "delivery is {current}; no more attempts"
        )));
    }
    // Nowhere to send it: retrying cannot help (a resend, once a callback is set, can).
    let ended = if outcome.is_success() {
        Ended::Succeeded
    } else if outcome.error == Some(AttemptError::NoCallback) {
        Ended::Refused
    } else {
        Ended::Failed {
            retry_after: outcome.retry_after,
        }
    };
    Ok(match outbox::next(&SCHEDULE, attempt, ended, now)? {
        Next::Succeeded => AfterAttempt {
            status: DeliveryStatus::Succeeded,
            next_attempt_at: None,
        },
        Next::GaveUp => AfterAttempt {
            status: DeliveryStatus::Failed,
            next_attempt_at: None,
        },
        Next::RetryAt(at) => AfterAttempt {
            status: DeliveryStatus::Retrying,
            next_attempt_at: Some(at),
        },
    })
}

/// What the delivery log shows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeliveryFilter {
    pub payment_link_uid: Option<String>,
    pub status: Option<DeliveryStatus>,
    /// Matches the delivery id, the event name, the link uid or the order id.
    pub search: Option<String>,
    pub limit: usize,
    /// Only the deliveries of this OAuth grant (what a grant's token sees).
    pub grant: Option<uuid::Uuid>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: i64) -> Timestamp {
        Timestamp::from_unix_millis(s * 1000).unwrap()
    }

    fn ok(status: u16) -> AttemptOutcome {
        AttemptOutcome {
            status: Some(status),
            duration_ms: 3,
            error: None,
            response_excerpt: None,
            retry_after: None,
        }
    }

    fn err() -> AttemptOutcome {
        AttemptOutcome {
            status: None,
            duration_ms: 5000,
            error: Some(AttemptError::ConnectionFailed),
            response_excerpt: None,
            retry_after: None,
        }
    }

    #[test]
    fn only_2xx_without_error_is_success() {
        for s in [200, 201, 204, 299] {
            assert!(ok(s).is_success(), "{s}");
        }
        for s in [100, 199, 300, 301, 302, 304, 400, 404, 429, 500, 503] {
            assert!(!ok(s).is_success(), "{s}");
        }
        assert!(!err().is_success());
    }

    #[test]
    fn every_move_of_the_table() {
        use DeliveryStatus::*;
        let now = t(1000);
        for from in DeliveryStatus::ALL {
            for attempt in 1..=MAX_ATTEMPTS {
                let s = after_attempt(from, attempt, &ok(200), now);
                let f = after_attempt(from, attempt, &ok(500), now);
                if from.is_terminal() {
                    assert!(s.is_err() && f.is_err(), "{from} takes no attempt");
                    continue;
                }
                assert_eq!(
                    s.unwrap(),
                    AfterAttempt {
                        status: Succeeded,
                        next_attempt_at: None
                    }
                );
                let f = f.unwrap();
                if attempt < MAX_ATTEMPTS {
                    assert_eq!(f.status, Retrying, "{from} attempt {attempt}");
                    assert_eq!(f.next_attempt_at, Some(now.plus(RETRY_INTERVAL)));
                } else {
                    assert_eq!(
                        f,
                        AfterAttempt {
                            status: Failed,
                            next_attempt_at: None
                        }
                    );
                }
            }
            assert!(after_attempt(from, 0, &ok(200), now).is_err());
            assert!(after_attempt(from, MAX_ATTEMPTS + 1, &ok(200), now).is_err());
        }
    }

    #[test]
    fn no_callback_fails_at_once() {
        let gone = AttemptOutcome {
            error: Some(AttemptError::NoCallback),
            ..err()
        };
        for from in [DeliveryStatus::Pending, DeliveryStatus::Retrying] {
            for attempt in [1, 5, MAX_ATTEMPTS] {
                assert_eq!(
                    after_attempt(from, attempt, &gone, t(0)),
                    Ok(AfterAttempt {
                        status: DeliveryStatus::Failed,
                        next_attempt_at: None
                    })
                );
            }
        }
        // Any other failure is retried.
        for e in AttemptError::ALL {
            let other = AttemptOutcome {
                error: Some(e),
                ..err()
            };
            let next = after_attempt(DeliveryStatus::Pending, 1, &other, t(0)).unwrap();
            assert_eq!(
                next.status == DeliveryStatus::Failed,
                e == AttemptError::NoCallback
            );
        }
    }

    #[test]
    fn eleven_attempts_five_minutes_apart() {
        let mut status = DeliveryStatus::Pending;
        let mut now = t(0);
        let mut attempts = 0;
        while !status.is_terminal() {
            attempts += 1;
            let next = after_attempt(status, attempts, &err(), now).unwrap();
            status = next.status;
            if let Some(at) = next.next_attempt_at {
                assert_eq!(at.unix_seconds() - now.unix_seconds(), 300);
                now = at;
            }
        }
        assert_eq!((attempts, status), (11, DeliveryStatus::Failed));
        assert_eq!(now.unix_seconds(), 10 * 300, "ten retries over 50 minutes");
    }

    #[test]
    fn retry_after_is_honoured_within_the_policy() {
        let now = t(0);
        let asked = |secs: i64| AttemptOutcome {
            retry_after: Some(Duration::seconds(secs)),
            ..ok(429)
        };
        let next = |o: AttemptOutcome| {
            after_attempt(DeliveryStatus::Pending, 1, &o, now)
                .unwrap()
                .next_attempt_at
                .unwrap()
                .unix_seconds()
        };
        assert_eq!(next(asked(1)), 300, "never sooner than the interval");
        assert_eq!(next(asked(900)), 900);
        assert_eq!(next(asked(86_400)), 3600, "capped at an hour");
    }

    #[test]
    fn names_round_trip() {
        for s in DeliveryStatus::ALL {
            assert_eq!(DeliveryStatus::parse(s.as_str()), Some(s));
        }
        assert_eq!(
            DeliveryOrigin::parse("manual"),
            Some(DeliveryOrigin::Manual)
        );
        assert_eq!(DeliveryOrigin::parse("event"), Some(DeliveryOrigin::Event));
        assert_eq!(DeliveryOrigin::parse("x"), None);
    }
}

/// A signed request ready to send.
#[derive(Clone, PartialEq, Eq)]
pub struct OutboundRequest {
    pub delivery_id: uuid::Uuid,
    pub url: String,
    /// Header names in lower case, in order.
    pub headers: Vec<(String, String)>,
    pub body: String,
    /// The attempt this request is (1-based).
    pub attempt: u32,
}

impl fmt::Debug for OutboundRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OutboundRequest")
            .field("delivery_id", &self.delivery_id)
            .field("attempt", &self.attempt)
            .finish_non_exhaustive()
    }
}
