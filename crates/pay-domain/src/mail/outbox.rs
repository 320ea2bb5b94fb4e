//! The mail outbox's rules: the retry schedule, the status machine after an attempt, and the
//! masking of transport errors.

use time::Duration;

use crate::kernel::error::{Fault, PortResult};
use crate::kernel::timestamp::Timestamp;
use crate::mail::*;
use crate::outbox::{self, Ended, Next, Schedule};

/// The wait after failed attempt `n` (index `n - 1`) before attempt `n + 1`: growing, so a
/// short outage of the mail server costs minutes and a long one is ridden out for about eight
/// hours (the sum) before the mail is given up.
pub const RETRY_DELAYS: [Duration; (MAX_ATTEMPTS - 1) as usize] = [
    Duration::minutes(1),
    Duration::minutes(5),
    Duration::minutes(15),
    Duration::minutes(30),
    Duration::hours(1),
    Duration::hours(2),
    Duration::hours(4),
];

/// The retry schedule of mails (the outbox's rule).
pub const SCHEDULE: Schedule = Schedule::Delays(&RETRY_DELAYS);

/// How long a claimed mail stays invisible to other mailers. A mailer that dies mid-send
/// releases it by letting the lease run out, and the mail is tried again (at least once).
pub const CLAIM_LEASE: Duration = Duration::minutes(2);

/// The wait after failed attempt `attempt` (1-based); `None` when it was the last one.
pub fn retry_delay(attempt: u32) -> Option<Duration> {
    if attempt == 0 {
        return None;
    }
    RETRY_DELAYS.get(attempt as usize - 1).copied()
}

/// The moves the status machine makes: a pending mail is retried, sent or given up; nothing
/// leaves a terminal status.
pub fn can_move(from: MailStatus, to: MailStatus) -> bool {
    use MailStatus::*;
    match (from, to) {
        (Pending, Pending) | (Pending, Sent) | (Pending, Failed) => true,
        (Sent, _) | (Failed, _) => false,
    }
}

/// The one transition function. `attempt` is the number of the attempt just made (1-based).
/// Acceptance ends it as sent; a permanent refusal ends it as failed at once; a transient
/// failure schedules the next attempt after `retry_delay(attempt)` until `MAX_ATTEMPTS` were
/// made. A terminal mail takes no more attempts.
pub fn after_attempt(
    current: MailStatus,
    attempt: u32,
    outcome: &SendOutcome,
    now: Timestamp,
) -> PortResult<AfterMailAttempt> {
    if current.is_terminal() {
        return Err(Fault::new(format!("mail is {current}; no more attempts")));
    }
    let (ended, error) = match outcome {
        SendOutcome::Sent => (Ended::Succeeded, None),
        SendOutcome::Permanent(e) => (Ended::Refused, Some(e.clone())),
        SendOutcome::Transient(e) => (Ended::Failed { retry_after: None }, Some(e.clone())),
    };
    Ok(match outbox::next(&SCHEDULE, attempt, ended, now)? {
        Next::Succeeded => AfterMailAttempt {
            status: MailStatus::Sent,
            next_attempt_at: None,
            last_error: None,
            sent_at: Some(now),
        },
        Next::GaveUp => AfterMailAttempt {
            status: MailStatus::Failed,
            next_attempt_at: None,
            last_error: error,
            sent_at: None,
        },
        Next::RetryAt(at) => AfterMailAttempt {
            status: MailStatus::Pending,
            next_attempt_at: Some(at),
            last_error: error,
            sent_at: None,
        },
    })
}

/// A transport error as the row keeps it: the recipient's address masked (SMTP servers quote
/// it in refusals, and rows and logs must not carry it), at most `MAX_ERROR_CHARS`.
pub fn redact_error(error: &str, address: &str) -> String {
    let masked = if address.is_empty() {
        error.to_owned()
    } else if address.is_ascii() {
        replace_ascii_case_insensitive(error, address, "<recipient>")
    } else {
        error.replace(address, "<recipient>")
    };
    match masked.char_indices().nth(MAX_ERROR_CHARS) {
        Some((end, _)) => masked[..end].to_owned(),
        None => masked,
    }
}

/// `needle` is ASCII, so a match starts and ends on character boundaries of `haystack`.
fn replace_ascii_case_insensitive(haystack: &str, needle: &str, with: &str) -> String {
    let (h, n) = (haystack.as_bytes(), needle.as_bytes());
    let mut out = String::with_capacity(haystack.len());
    let (mut i, mut copied) = (0, 0);
    while i + n.len() <= h.len() {
        if h[i..i + n.len()].eq_ignore_ascii_case(n) {
            out.push_str(&haystack[copied..i]);
            out.push_str(with);
            i += n.len();
            copied = i;
        } else {
            i += 1;
        }
    }
    out.push_str(&haystack[copied..]);
    out
}

/// Most characters of a transport error kept on the row.
pub const MAX_ERROR_CHARS: usize = 500;
