//! Rate limits: what each public or costly entry point allows per bucket, on real time
//! (a company's test clock never moves them). The operator may change each one; the defaults
//! are the contract's where it gives one.

use time::Duration;

use crate::kernel::error::{PortResult, RateLimited};
use crate::kernel::timestamp::Timestamp;

/// At most `max` hits per `window` in one bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    pub max: u64,
    pub window: Duration,
}

impl Limit {
    pub const fn per(max: u64, window: Duration) -> Limit {
        Limit { max, window }
    }

    /// Reads `N/SECONDS` (e.g. `30/60`): N from 1, a window from 1 second to a day.
    pub fn parse(v: &str) -> Option<Limit> {
        let (max, secs) = v.trim().split_once('/')?;
        let max: u64 = max.trim().parse().ok().filter(|n| *n >= 1)?;
        let secs: i64 = secs
            .trim()
            .parse()
            .ok()
            .filter(|s| (1..=86_400).contains(s))?;
        Some(Limit::per(max, Duration::seconds(secs)))
    }

    /// The refusal: 429 with `Retry-After` the window (an upper bound).
    pub fn refused(&self) -> RateLimited {
        RateLimited {
            retry_after_secs: self.window.whole_seconds().unsigned_abs(),
        }
    }
}

/// Every limit the service applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimits {
    /// Login attempts per e-mail and client address (contract: 10 failures per 15 minutes;
    /// a successful login clears the bucket).
    pub login: Limit,
    /// Failed sign-ins per client address, across accounts (a success is not counted), beside
    /// the per-account limit: one address cannot try passwords on many accounts.
    pub login_per_address: Limit,
    /// Anonymous links per client address (contract: 30 per minute).
    pub anonymous_links: Limit,
    /// Payment starts on the public checkout per client address.
    pub checkout_starts: Limit,
    /// Gateway form posts per form key (protects the merchant's link list).
    pub gateway_per_form: Limit,
    /// Gateway form posts per client address.
    pub gateway_per_address: Limit,
    /// `send-request-email` per link.
    pub request_email_per_link: Limit,
    /// Mails of every kind (payment requests, subscription reminders) per recipient address
    /// (any case), across links and companies: one cap, so no kind of mail can flood an
    /// outside address.
    pub mail_per_recipient: Limit,
}

impl Default for RateLimits {
    fn default() -> Self {
        RateLimits {
            login: Limit::per(10, Duration::minutes(15)),
            login_per_address: Limit::per(20, Duration::minutes(15)),
            anonymous_links: Limit::per(30, Duration::minutes(1)),
            checkout_starts: Limit::per(60, Duration::minutes(1)),
            gateway_per_form: Limit::per(120, Duration::minutes(1)),
            gateway_per_address: Limit::per(10, Duration::minutes(1)),
            request_email_per_link: Limit::per(5, Duration::hours(1)),
            mail_per_recipient: Limit::per(10, Duration::days(1)),
        }
    }
}

impl RateLimits {
    /// The longest window: hits older than this are never read again.
    pub fn longest_window(&self) -> Duration {
        [
            self.login,
            self.login_per_address,
            self.anonymous_links,
            self.checkout_starts,
            self.gateway_per_form,
            self.gateway_per_address,
            self.request_email_per_link,
            self.mail_per_recipient,
        ]
        .iter()
        .map(|l| l.window)
        .max()
        .unwrap_or(Duration::ZERO)
    }
}

/// A bucket's refusal as a result.
pub fn check(counted: bool, limit: &Limit) -> Result<(), RateLimited> {
    if counted {
        Ok(())
    } else {
        Err(limit.refused())
    }
}

/// Rate limits: sliding windows of hits per bucket, on real time.
pub trait RateLimitStore {
    /// Counts one hit in `bucket` (a digest, never a raw address or e-mail) at `at` if fewer
    /// than `limit` of the bucket's hits lie at or after `at - window`. Returns whether it was counted (false: refused, nothing written). The
    /// count and the decision MUST be atomic: concurrent hits of one bucket never pass
    /// `limit` together (a lock per bucket, or a single writer).
    fn hit(
        &self,
        bucket: &str,
        at: Timestamp,
        window: time::Duration,
        limit: u64,
    ) -> PortResult<bool>;
    /// Forgets the bucket's hits (a successful login clears its failures).
    fn clear_hits(&self, bucket: &str) -> PortResult<()>;
    /// Forgets one hit of the bucket counted at `at`, if there is one (an attempt counted
    /// before it was checked turned out a success, which the bucket does not count).
    fn forget_hit(&self, bucket: &str, at: Timestamp) -> PortResult<()>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_read_as_count_per_seconds() {
        assert_eq!(
            Limit::parse("30/60"),
            Some(Limit::per(30, Duration::minutes(1)))
        );
        assert_eq!(
            Limit::parse(" 5 / 3600 "),
            Some(Limit::per(5, Duration::hours(1)))
        );
        for bad in [
            "", "30", "0/60", "30/0", "30/86401", "-1/60", "a/60", "30/x", "30/60/1",
        ] {
            assert_eq!(Limit::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_refusal_says_when_to_come_back() {
        let l = Limit::per(10, Duration::minutes(15));
        assert!(matches!(
            l.refused(),
            RateLimited {
                retry_after_secs: 900
            }
        ));
        assert!(check(true, &l).is_ok());
        assert!(check(false, &l).is_err());
    }

    #[test]
    fn the_longest_window_bounds_what_is_kept() {
        assert_eq!(RateLimits::default().longest_window(), Duration::days(1));
    }
}
