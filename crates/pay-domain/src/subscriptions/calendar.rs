//! The calendar of recurring billing: when cycle `n` of a subscription falls due. Pure: a start
//! instant, an IANA zone and an interval in, instants out; no clock, no store, no error type of
//! the crate.
//!
//! # Rules
//!
//! - **From the start, never from the previous cycle.** Cycle `n` is the start's local date
//!   moved by `n` whole intervals, so month-end clamping never drifts: a monthly subscription
//!   started on Jan 31 falls due on Feb 28 (Feb 29 in a leap year), then Mar 31, Apr 30, ...
//! - **Clamped to the month's end.** When the start day does not exist in the target month the
//!   cycle falls on that month's last day (Aug 31 every 6 months: Feb 28/29, then Aug 31; a
//!   yearly Feb 29 start: Feb 28 in common years, Feb 29 again in leap years).
//! - **Local wall time of the subscription's zone.** Dates are counted in the zone, and every
//!   cycle keeps the local time of day of the start (to the millisecond), whatever the offset
//!   of that day. A local time is turned back into an instant as RFC 5545 and Temporal's
//!   `"compatible"` disambiguation do:
//!   - a local time that does not exist (spring-forward gap) moves forward by the gap's length:
//!     02:30 on the US spring-forward day is 03:30 EDT (the instant `02:30` would be under the
//!     offset in force before the gap);
//!   - a local time that exists twice (fall-back overlap) is the **earlier** instant (the one
//!     under the offset in force before the transition).
//! - **Cycle 0 is the start itself** (the contract: "cycle 0 is due at `startAt`"), even when
//!   the start is the later reading of an overlap. Later cycles re-read the start's local time
//!   and are resolved afresh by the two rules above: the offset of the start is not carried.
//!   A start instant never lies in a gap, so the kept time of day is what the start instant
//!   reads in the zone: a start sent as `02:30-05:00` on the US spring-forward day is the
//!   instant 07:30Z, which reads 03:30 EDT, and later cycles fall at 03:30 local.
//!
//! # Cadence, unit and count (spec: Subscription; contract: "Subscriptions and customers")
//!
//! | cadence         | billingIntervalUnit | billingIntervalCount                        |
//! |-----------------|---------------------|---------------------------------------------|
//! | `weekly`        | `week`              | 1..=24, 1 when absent (every `count` weeks) |
//! | `biweekly`      | `week`              | 2 (implied; a given count must be 2)        |
//! | `monthly`       | `month`             | 1 (implied; a given count must be 1)        |
//! | `custom_months` | `month`             | 1..=24, required                            |
//! | `yearly`        | `year`              | 1 (implied; a given count must be 1)        |
//!
//! The contract calls the count "implied by the other cadences" than `custom_months`; `weekly`
//! still takes one (decision): the Subscription object has `week` as a unit with a count, so
//! "every 3 weeks" is a schedule the spec can show; without a count, `weekly` is every week. A
//! count that contradicts an implied one (`monthly` with 3) is refused, not ignored, so a
//! request never silently bills on another rhythm than it wrote.
//!
//! A year is twelve months for clamping purposes, so `custom_months` 12 and `yearly` give the
//! same dates. The cadence is kept as given (it is a display value): `weekly` every 2 weeks
//! stays `weekly`, it is not rewritten to `biweekly`.
//!
//! # Range
//!
//! A cycle whose instant the [`Timestamp`] type cannot hold (past year 9999) has no due date:
//! [`due_at`] returns `None` for it rather than saturating, so a caller can never store a
//! wrong date. Zone rules come from the tz tables bundled in `chrono-tz`; past the last
//! transition those tables list (2099 for zones with ongoing DST) the last offset applies.

use std::fmt;

use chrono::{
    DateTime, Datelike, Days, FixedOffset, MappedLocalTime, Months, NaiveDate, NaiveDateTime,
    Offset, TimeDelta, TimeZone,
};
use chrono_tz::{GapInfo, Tz};

use crate::kernel::timestamp::Timestamp;

/// The smallest `billingIntervalCount` accepted.
pub const MIN_INTERVAL_COUNT: u8 = 1;
/// The largest `billingIntervalCount` accepted (contract: 1..24).
pub const MAX_INTERVAL_COUNT: u8 = 24;

/// The spec's display cadence of a subscription.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cadence {
    Weekly,
    Biweekly,
    Monthly,
    CustomMonths,
    Yearly,
}

impl Cadence {
    pub const ALL: [Cadence; 5] = [
        Cadence::Weekly,
        Cadence::Biweekly,
        Cadence::Monthly,
        Cadence::CustomMonths,
        Cadence::Yearly,
    ];

    /// The wire name (`"custom_months"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Cadence::Weekly => "weekly",
            Cadence::Biweekly => "biweekly",
            Cadence::Monthly => "monthly",
            Cadence::CustomMonths => "custom_months",
            Cadence::Yearly => "yearly",
        }
    }

    /// Reads a wire name, exactly (case-sensitive). `None` for anything else: the caller knows
    /// which field it read and reports it, so no error type is needed here.
    pub fn parse(s: &str) -> Option<Cadence> {
        Cadence::ALL.into_iter().find(|c| c.as_str() == s)
    }

    /// The unit of its interval (`billingIntervalUnit`).
    pub fn unit(self) -> IntervalUnit {
        match self {
            Cadence::Weekly | Cadence::Biweekly => IntervalUnit::Week,
            Cadence::Monthly | Cadence::CustomMonths => IntervalUnit::Month,
            Cadence::Yearly => IntervalUnit::Year,
        }
    }

    /// The count a cadence fixes, `None` when the count is the caller's choice.
    fn implied_count(self) -> Option<u8> {
        match self {
            Cadence::Biweekly => Some(2),
            Cadence::Monthly | Cadence::Yearly => Some(1),
            Cadence::Weekly | Cadence::CustomMonths => None,
        }
    }
}

impl fmt::Display for Cadence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The spec's `billingIntervalUnit`: always derived from the cadence, never chosen apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IntervalUnit {
    Week,
    Month,
    Year,
}

impl IntervalUnit {
    /// The wire name (`"week"`).
    pub fn as_str(self) -> &'static str {
        match self {
            IntervalUnit::Week => "week",
            IntervalUnit::Month => "month",
            IntervalUnit::Year => "year",
        }
    }
}

/// Why a cadence and a count do not make an interval (contract: `billingIntervalCount` is
/// required 1..24 for `custom_months`, implied by the other cadences; `weekly` also takes one).
/// Its own enum, not the crate's error type, so that the HTTP edge maps it where it maps the
/// other validation failures of the create body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum IntervalError {
    #[error("billingIntervalCount must be between 1 and 24, got {0}")]
    CountOutOfRange(i64),
    #[error("billingIntervalCount is required for cadence custom_months")]
    CountRequired,
    #[error("billingIntervalCount {count} contradicts cadence {cadence}, which implies {implied}")]
    CountContradictsCadence {
        cadence: Cadence,
        count: u8,
        implied: u8,
    },
}

/// A valid cadence with its unit and count: only [`Interval::new`] makes one, so a count
/// outside 1..=24 or one that contradicts its cadence cannot be represented.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Interval {
    cadence: Cadence,
    count: u8,
}

impl Interval {
    /// The interval of `cadence` with the request's `billingIntervalCount`, if any (see the
    /// module's table). The count is an `i64` so that a zero or negative number from the wire
    /// gets the same refusal as 25.
    pub fn new(cadence: Cadence, count: Option<i64>) -> Result<Interval, IntervalError> {
        let given = match count {
            None => None,
            Some(c) => Some(
                u8::try_from(c)
                    .ok()
                    .filter(|c| (MIN_INTERVAL_COUNT..=MAX_INTERVAL_COUNT).contains(c))
                    .ok_or(IntervalError::CountOutOfRange(c))?,
            ),
        };
        let count = match (cadence.implied_count(), given) {
            (Some(implied), None) => implied,
            (Some(implied), Some(count)) if count == implied => count,
            (Some(implied), Some(count)) => {
                return Err(IntervalError::CountContradictsCadence {
                    cadence,
                    count,
                    implied,
                })
            }
            (None, Some(count)) => count,
            (None, None) if cadence == Cadence::Weekly => 1,
            (None, None) => return Err(IntervalError::CountRequired),
        };
        Ok(Interval { cadence, count })
    }

    pub fn cadence(self) -> Cadence {
        self.cadence
    }

    /// `billingIntervalUnit`.
    pub fn unit(self) -> IntervalUnit {
        self.cadence.unit()
    }

    /// `billingIntervalCount`: units between two cycles, 1..=24.
    pub fn count(self) -> u8 {
        self.count
    }

    /// The local date of cycle `n` of a start on `date`: `n` intervals on, clamped to the end
    /// of the month (chrono's `checked_add_months` keeps the day or takes the month's last).
    /// `None` past chrono's calendar.
    fn advance(self, date: NaiveDate, n: u32) -> Option<NaiveDate> {
        let count = u32::from(self.count);
        match self.unit() {
            IntervalUnit::Week => {
                date.checked_add_days(Days::new(u64::from(n) * 7 * u64::from(count)))
            }
            IntervalUnit::Month => date.checked_add_months(Months::new(n.checked_mul(count)?)),
            IntervalUnit::Year => date.checked_add_months(Months::new(n.checked_mul(12 * count)?)),
        }
    }

    /// Whole intervals between the local dates `from` and `to` (`from <= to` or 0), give or
    /// take one: a starting guess for a search, never the answer.
    fn approx_cycles_between(self, from: NaiveDate, to: NaiveDate) -> u32 {
        let count = i64::from(self.count);
        let n = match self.unit() {
            IntervalUnit::Week => to.signed_duration_since(from).num_days() / (7 * count),
            IntervalUnit::Month | IntervalUnit::Year => {
                let months = (i64::from(to.year()) - i64::from(from.year())) * 12
                    + i64::from(to.month())
                    - i64::from(from.month());
                let per_cycle = if self.unit() == IntervalUnit::Year {
                    12 * count
                } else {
                    count
                };
                months / per_cycle
            }
        };
        u32::try_from(n.max(0)).unwrap_or(u32::MAX)
    }
}

/// The due instant of cycle `n` (`sequence`, from 0) of a subscription that starts at `start`
/// in `zone` and repeats every `interval`: the start's local date moved by `n` intervals and
/// clamped to the month's end, at the start's local time of day, read in `zone` (gap: forward
/// by the gap's length; overlap: the earlier instant). Cycle 0 is `start`. The module's rustdoc
/// has the rules in full.
///
/// `None` only when the cycle lies beyond the range a [`Timestamp`] holds (after year 9999):
/// there is no honest instant to give, and a saturated one would be a wrong due date.
pub fn due_at(start: Timestamp, zone: Tz, interval: Interval, n: u32) -> Option<Timestamp> {
    if n == 0 {
        return Some(start);
    }
    let local = local_reading(start, zone)?;
    let date = interval.advance(local.date(), n)?;
    resolve(zone, date.and_time(local.time()))
}

/// A subscription's calendar: its start, zone and interval together, for the questions a
/// scheduler asks ("which cycles fall due in this window?") without walking from cycle 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    start: Timestamp,
    zone: Tz,
    interval: Interval,
}

impl Schedule {
    pub fn new(start: Timestamp, zone: Tz, interval: Interval) -> Schedule {
        Schedule {
            start,
            zone,
            interval,
        }
    }

    pub fn start(&self) -> Timestamp {
        self.start
    }

    pub fn zone(&self) -> Tz {
        self.zone
    }

    pub fn interval(&self) -> Interval {
        self.interval
    }

    /// [`due_at`] of this schedule.
    pub fn due_at(&self, n: u32) -> Option<Timestamp> {
        due_at(self.start, self.zone, self.interval, n)
    }

    /// The first cycle due at or after `t` (0 when `t` is not after the start). Found from an
    /// estimate by calendar arithmetic and corrected by a step or two, so it costs the same for
    /// cycle 3 and cycle 3 000. `None` when that cycle is beyond the range of [`Timestamp`].
    pub fn first_cycle_at_or_after(&self, t: Timestamp) -> Option<u32> {
        if t <= self.start {
            return Some(0);
        }
        let mut n = match (
            local_reading(self.start, self.zone),
            local_reading(t, self.zone),
        ) {
            (Some(s), Some(l)) => self.interval.approx_cycles_between(s.date(), l.date()),
            _ => 0,
        };
        // Due instants strictly increase with `n` (cycles are at least a week apart in local
        // time, more than any gap or overlap shifts them), so stepping is a correct search.
        while n > 0 && self.due_at(n - 1).is_none_or(|d| d >= t) {
            n -= 1;
        }
        loop {
            match self.due_at(n)? {
                due if due < t => n = n.checked_add(1)?,
                _ => return Some(n),
            }
        }
    }

    /// The cycles due in `[from, to)`, in order, as `(sequence, dueAt)`. Half-open, so that a
    /// scheduler reading consecutive windows `[a, b)`, `[b, c)` sees every cycle exactly once.
    /// Empty when `to <= from`; ends at the last cycle a [`Timestamp`] can hold.
    pub fn due_between(
        &self,
        from: Timestamp,
        to: Timestamp,
    ) -> impl Iterator<Item = (u32, Timestamp)> {
        let schedule = *self;
        let first = if from < to {
            self.first_cycle_at_or_after(from)
        } else {
            None
        };
        first
            .into_iter()
            .flat_map(move |first| {
                (first..=u32::MAX).map_while(move |n| schedule.due_at(n).map(|due| (n, due)))
            })
            .take_while(move |&(_, due)| due < to)
    }
}

/// The wall-clock reading of `t` in `zone`. `None` only outside chrono's calendar, which a
/// [`Timestamp`] of the default `time` range never is.
fn local_reading(t: Timestamp, zone: Tz) -> Option<NaiveDateTime> {
    let utc = DateTime::from_timestamp_millis(t.unix_millis())?;
    Some(utc.with_timezone(&zone).naive_local())
}

/// The instant of the local wall time `local` in `zone`: the only one; the earlier of two in
/// an overlap; in a gap, `local` read with the offset in force before the gap, which lands
/// the gap's length later on the clock (02:30 in a one-hour gap reads 03:30).
fn resolve(zone: Tz, local: NaiveDateTime) -> Option<Timestamp> {
    let instant = match zone.offset_from_local_datetime(&local) {
        MappedLocalTime::Single(offset) => local.checked_sub_offset(offset.fix())?,
        MappedLocalTime::Ambiguous(a, b) => {
            let a = local.checked_sub_offset(a.fix())?;
            let b = local.checked_sub_offset(b.fix())?;
            a.min(b)
        }
        MappedLocalTime::None => local.checked_sub_offset(offset_before_gap(zone, local))?,
    };
    Timestamp::from_unix_millis(instant.and_utc().timestamp_millis())
}

/// The offset in force just before the gap that swallows `local`.
fn offset_before_gap(zone: Tz, local: NaiveDateTime) -> FixedOffset {
    match GapInfo::new(&local, &zone).and_then(|gap| gap.begin) {
        Some((_, before)) => before.fix(),
        // The tables always know where a gap begins; should one not, the offset a day before
        // (read as if `local` were UTC) is the one before any gap of less than a day.
        None => {
            let day_before = local
                .checked_sub_signed(TimeDelta::days(1))
                .unwrap_or(local);
            zone.offset_from_utc_datetime(&day_before).fix()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cadence_names_round_trip() {
        for c in Cadence::ALL {
            assert_eq!(Cadence::parse(c.as_str()), Some(c));
            assert_eq!(c.to_string(), c.as_str());
        }
        assert_eq!(Cadence::parse("Monthly"), None);
        assert_eq!(Cadence::parse("daily"), None);
    }

    #[test]
    fn gap_resolution_reads_the_offset_before_the_gap() {
        let ny: Tz = "America/New_York".parse().unwrap();
        let local = NaiveDate::from_ymd_opt(2026, 3, 8)
            .unwrap()
            .and_hms_opt(2, 30, 0)
            .unwrap();
        assert_eq!(offset_before_gap(ny, local).local_minus_utc(), -5 * 3600);
        assert_eq!(
            resolve(ny, local).unwrap().to_rfc3339(),
            "2026-03-08T07:30:00.000Z"
        );
    }
}
