//! Sandbox test clocks, one per company (the contract's "Two clocks").
//!
//! Real time protects: login throttles, rate limits, sign-in sessions, CSRF tokens, claim
//! leases, signature timestamps (and later DPoP `iat`/`jti` windows) always read the process
//! clock as it is. What a company owns and schedules - link, quote and session expiry, retries
//! falling due (later: cycles, overdue, portal URL and token expiry) - reads the company's
//! clock: real time plus its offset. An offset only grows, so moving a clock can only make that
//! company's own things due sooner, never anyone else's, and never a security window. A
//! company's now is `crate::tenancy::company_now`.

use crate::kernel::error::FieldError;

/// The longest single move: a year.
pub const MAX_ADVANCE_SECS: i64 = 366 * 24 * 3600;
/// The furthest a company's clock may run ahead of real time: ten years.
pub const MAX_OFFSET_MS: i64 = 10 * MAX_ADVANCE_SECS * 1000;

/// Reads an advance: whole seconds from 1 to a year, as milliseconds.
pub fn advance_ms(seconds: i64) -> Result<i64, FieldError> {
    if !(1..=MAX_ADVANCE_SECS).contains(&seconds) {
        return Err(FieldError::new(
            "advanceSeconds",
            format!("advanceSeconds is a whole number from 1 to {MAX_ADVANCE_SECS}"),
        ));
    }
    Ok(seconds * 1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advances_are_one_second_to_a_year() {
        assert_eq!(advance_ms(1).unwrap(), 1000);
        assert_eq!(
            advance_ms(MAX_ADVANCE_SECS).unwrap(),
            MAX_ADVANCE_SECS * 1000
        );
        for bad in [0, -1, MAX_ADVANCE_SECS + 1] {
            let e = advance_ms(bad).unwrap_err();
            assert!(
                matches!(&e, FieldError { field, .. } if field == "advanceSeconds"),
                "{bad}: {e:?}"
            );
        }
    }
}
