//! The subscription calendar against hand-computed tables: every cadence, month-end clamping,
//! DST gaps and overlaps in four zones (expected instants worked out from the zones' rules and
//! written as RFC 3339 literals), the scheduler window helpers, and properties over random
//! starts.

use chrono::{DateTime, Datelike, Days, MappedLocalTime, NaiveDate, NaiveDateTime, TimeZone};
use chrono_tz::Tz;
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::subscriptions::calendar::{
    due_at, Cadence, Interval, IntervalError, IntervalUnit, Schedule,
};
use proptest::prelude::*;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use Cadence::{Biweekly, CustomMonths, Monthly, Weekly, Yearly};

fn ts(rfc3339: &str) -> Timestamp {
    Timestamp::from_datetime(OffsetDateTime::parse(rfc3339, &Rfc3339).unwrap())
}

fn zone(name: &str) -> Tz {
    name.parse().unwrap()
}

fn interval(cadence: Cadence, count: Option<i64>) -> Interval {
    Interval::new(cadence, count).unwrap()
}

fn schedule(zone_name: &str, start: &str, cadence: Cadence, count: Option<i64>) -> Schedule {
    Schedule::new(ts(start), zone(zone_name), interval(cadence, count))
}

/// Runs a table. `@ <zone> <start> <cadence>[*<count>]` opens a schedule (the start in RFC 3339
/// with the local offset, as a client sends it); each following `<n> <expected dueAt>` row is a
/// cycle of it. `#` starts a comment.
fn check(table: &str) {
    let mut schedule = None;
    for (i, line) in table.lines().enumerate() {
        let words: Vec<&str> = line.split('#').next().unwrap().split_whitespace().collect();
        match words[..] {
            [] => {}
            ["@", zone_name, start, cadence] => {
                let (cadence, count) = match cadence.split_once('*') {
                    Some((c, count)) => (c, Some(count.parse().unwrap())),
                    None => (cadence, None),
                };
                let every = interval(Cadence::parse(cadence).unwrap(), count);
                schedule = Some((line, Schedule::new(ts(start), zone(zone_name), every)));
            }
            [n, expected] => {
                let (header, s) = schedule.expect("a row before any `@` line");
                let got = s.due_at(n.parse().unwrap()).map(Timestamp::to_rfc3339);
                assert_eq!(
                    got.as_deref(),
                    Some(expected),
                    "line {i}: {header} / {line}"
                );
            }
            _ => panic!("line {i}: cannot read {line:?}"),
        }
    }
}

#[test]
fn every_cadence() {
    check(
        "
        @ UTC 2026-01-15T10:00:00Z weekly
        0   2026-01-15T10:00:00.000Z
        1   2026-01-22T10:00:00.000Z
        2   2026-01-29T10:00:00.000Z
        52  2027-01-14T10:00:00.000Z
        @ UTC 2026-01-15T10:00:00Z weekly*3
        1   2026-02-05T10:00:00.000Z
        2   2026-02-26T10:00:00.000Z
        @ UTC 2026-01-15T10:00:00Z weekly*24
        1   2026-07-02T10:00:00.000Z
        @ UTC 2026-01-15T10:00:00Z biweekly
        1   2026-01-29T10:00:00.000Z
        2   2026-02-12T10:00:00.000Z
        26  2027-01-14T10:00:00.000Z
        @ UTC 2026-01-15T10:00:00Z monthly
        1   2026-02-15T10:00:00.000Z
        11  2026-12-15T10:00:00.000Z
        12  2027-01-15T10:00:00.000Z
        @ UTC 2026-01-15T10:00:00Z custom_months*3
        1   2026-04-15T10:00:00.000Z
        4   2027-01-15T10:00:00.000Z
        @ UTC 2026-01-15T10:00:00Z custom_months*24
        1   2028-01-15T10:00:00.000Z
        @ UTC 2026-01-15T10:00:00Z yearly
        1   2027-01-15T10:00:00.000Z
        10  2036-01-15T10:00:00.000Z
        ",
    );
}

#[test]
fn custom_months_1_and_12_are_monthly_and_yearly() {
    let (start, berlin) = (ts("2024-02-29T23:30:00+01:00"), zone("Europe/Berlin"));
    for n in 0..120 {
        let monthly = due_at(start, berlin, interval(Monthly, None), n);
        assert_eq!(
            due_at(start, berlin, interval(CustomMonths, Some(1)), n),
            monthly
        );
        let yearly = due_at(start, berlin, interval(Yearly, None), n);
        assert_eq!(
            due_at(start, berlin, interval(CustomMonths, Some(12)), n),
            yearly
        );
    }
}

#[test]
fn month_end_clamping() {
    check(
        "
        # Jan 31 monthly through a common year (2027) into a leap year (2028).
        @ UTC 2027-01-31T10:00:00Z monthly
        0   2027-01-31T10:00:00.000Z
        1   2027-02-28T10:00:00.000Z
        2   2027-03-31T10:00:00.000Z
        3   2027-04-30T10:00:00.000Z
        4   2027-05-31T10:00:00.000Z
        5   2027-06-30T10:00:00.000Z
        6   2027-07-31T10:00:00.000Z
        7   2027-08-31T10:00:00.000Z
        8   2027-09-30T10:00:00.000Z
        9   2027-10-31T10:00:00.000Z
        10  2027-11-30T10:00:00.000Z
        11  2027-12-31T10:00:00.000Z
        12  2028-01-31T10:00:00.000Z
        13  2028-02-29T10:00:00.000Z
        14  2028-03-31T10:00:00.000Z
        15  2028-04-30T10:00:00.000Z

        # The local date counts, not the UTC one: Jan 31 23:30 EST is Feb 1 in UTC.
        @ America/New_York 2027-01-31T23:30:00-05:00 monthly
        0   2027-02-01T04:30:00.000Z
        1   2027-03-01T04:30:00.000Z   # Feb 28 23:30 EST
        2   2027-04-01T03:30:00.000Z   # Mar 31 23:30 EDT
        3   2027-05-01T03:30:00.000Z   # Apr 30 23:30 EDT
        13  2028-03-01T04:30:00.000Z   # Feb 29 23:30 EST

        # Aug 31 every 6 months: Feb 29 in leap years, Feb 28 otherwise, back to Aug 31.
        @ UTC 2027-08-31T10:00:00Z custom_months*6
        1   2028-02-29T10:00:00.000Z
        2   2028-08-31T10:00:00.000Z
        3   2029-02-28T10:00:00.000Z
        4   2029-08-31T10:00:00.000Z
        5   2030-02-28T10:00:00.000Z
        6   2030-08-31T10:00:00.000Z
        7   2031-02-28T10:00:00.000Z
        8   2031-08-31T10:00:00.000Z
        9   2032-02-29T10:00:00.000Z

        # Feb 29 yearly over 8 years.
        @ UTC 2024-02-29T10:00:00Z yearly
        1   2025-02-28T10:00:00.000Z
        2   2026-02-28T10:00:00.000Z
        3   2027-02-28T10:00:00.000Z
        4   2028-02-29T10:00:00.000Z
        5   2029-02-28T10:00:00.000Z
        6   2030-02-28T10:00:00.000Z
        7   2031-02-28T10:00:00.000Z
        8   2032-02-29T10:00:00.000Z

        # 2100 is not a leap year, 2104 is.
        @ UTC 2096-02-29T00:00:00Z yearly
        4   2100-02-28T00:00:00.000Z
        8   2104-02-29T00:00:00.000Z

        # Feb 29 every 24 months.
        @ UTC 2024-02-29T10:00:00Z custom_months*24
        1   2026-02-28T10:00:00.000Z
        2   2028-02-29T10:00:00.000Z

        # The 30th and the 29th across February, common and leap.
        @ UTC 2027-01-30T10:00:00Z monthly
        1   2027-02-28T10:00:00.000Z
        2   2027-03-30T10:00:00.000Z
        3   2027-04-30T10:00:00.000Z
        @ UTC 2028-01-30T10:00:00Z monthly
        1   2028-02-29T10:00:00.000Z
        2   2028-03-30T10:00:00.000Z
        @ UTC 2027-01-29T10:00:00Z monthly
        1   2027-02-28T10:00:00.000Z
        2   2027-03-29T10:00:00.000Z

        # Weeks never clamp.
        @ UTC 2027-01-31T10:00:00Z weekly
        4   2027-02-28T10:00:00.000Z
        5   2027-03-07T10:00:00.000Z
        ",
    );
}

/// New York 2026: 02:00 EST -> 03:00 EDT on Mar 8 (07:00Z), 02:00 EDT -> 01:00 EST on Nov 1
/// (06:00Z); 2027: Mar 14 and Nov 7.
#[test]
fn dst_new_york() {
    check(
        "
        # 02:30 local weekly; cycle 1 is 02:30 on the spring-forward day.
        @ America/New_York 2026-03-01T02:30:00-05:00 weekly
        0   2026-03-01T07:30:00.000Z
        1   2026-03-08T07:30:00.000Z   # 02:30 is missing: 03:30 EDT
        2   2026-03-15T06:30:00.000Z   # 02:30 EDT

        # A start sent as 02:30-05:00 on the spring-forward day is the instant 07:30Z, which
        # reads 03:30 EDT: 03:30 is the time of day kept.
        @ America/New_York 2026-03-08T02:30:00-05:00 weekly
        0   2026-03-08T07:30:00.000Z
        1   2026-03-15T07:30:00.000Z   # 03:30 EDT
        @ America/New_York 2026-03-08T02:30:00-05:00 yearly
        1   2027-03-08T08:30:00.000Z   # 03:30 EST: DST starts on Mar 14 in 2027

        # Monthly into the gap and out of it.
        @ America/New_York 2026-02-08T02:30:00-05:00 monthly
        1   2026-03-08T07:30:00.000Z   # 02:30 is missing: 03:30 EDT
        2   2026-04-08T06:30:00.000Z   # 02:30 EDT

        # Monthly into the overlap: 01:30 on Nov 1 is both EDT and EST; the earlier is EDT.
        @ America/New_York 2026-10-01T01:30:00-04:00 monthly
        0   2026-10-01T05:30:00.000Z
        1   2026-11-01T05:30:00.000Z   # 01:30 EDT, not 06:30Z (EST)
        2   2026-12-01T06:30:00.000Z   # 01:30 EST

        # A start at the later 01:30 (EST) stays cycle 0; its offset is not carried: the next
        # overlap (Nov 7 2027, cycle 53) takes the earlier 01:30 again.
        @ America/New_York 2026-11-01T06:30:00Z weekly
        0   2026-11-01T06:30:00.000Z   # 01:30 EST
        1   2026-11-08T06:30:00.000Z   # 01:30 EST
        53  2027-11-07T05:30:00.000Z   # 01:30 EDT
        @ America/New_York 2026-11-01T06:30:00Z yearly
        1   2027-11-01T05:30:00.000Z   # 01:30 EDT: 2027 falls back on Nov 7
        ",
    );
}

/// Berlin 2026: 02:00 CET -> 03:00 CEST on Mar 29 (01:00Z), 03:00 CEST -> 02:00 CET on Oct 25
/// (01:00Z).
#[test]
fn dst_berlin() {
    check(
        "
        # Clamped to Feb 28, then 02:30 on the spring-forward day.
        @ Europe/Berlin 2026-01-29T02:30:00+01:00 monthly
        0   2026-01-29T01:30:00.000Z
        1   2026-02-28T01:30:00.000Z   # 02:30 CET
        2   2026-03-29T01:30:00.000Z   # 02:30 is missing: 03:30 CEST
        3   2026-04-29T00:30:00.000Z   # 02:30 CEST

        # Weekly into the overlap: 02:30 on Oct 25 is both CEST and CET; the earlier is CEST.
        @ Europe/Berlin 2026-10-18T02:30:00+02:00 weekly
        1   2026-10-25T00:30:00.000Z   # 02:30 CEST, not 01:30Z (CET)
        2   2026-11-01T01:30:00.000Z   # 02:30 CET

        # A 02:30 start sent on the spring-forward day reads 03:30 CEST.
        @ Europe/Berlin 2026-03-29T02:30:00+01:00 weekly
        0   2026-03-29T01:30:00.000Z
        1   2026-04-05T01:30:00.000Z   # 03:30 CEST
        ",
    );
}

/// Lord Howe: +10:30 standard, +11 in summer, a 30-minute shift. 2026: 02:00 +11 -> 01:30
/// +10:30 on Apr 5 (Apr 4 15:00Z); 02:00 +10:30 -> 02:30 +11 on Oct 4 (Oct 3 15:30Z).
#[test]
fn dst_lord_howe() {
    check(
        "
        # 02:15 weekly; on Oct 4, 02:00-02:30 is missing.
        @ Australia/Lord_Howe 2026-09-27T02:15:00+10:30 weekly
        0   2026-09-26T15:45:00.000Z
        1   2026-10-03T15:45:00.000Z   # 02:15 is missing: 02:45 +11
        2   2026-10-10T15:15:00.000Z   # 02:15 +11

        # 01:45 weekly; on Apr 5, 01:30-02:00 happens twice.
        @ Australia/Lord_Howe 2026-03-29T01:45:00+11:00 weekly
        0   2026-03-28T14:45:00.000Z
        1   2026-04-04T14:45:00.000Z   # 01:45 +11, not 15:15Z (+10:30)
        2   2026-04-11T15:15:00.000Z   # 01:45 +10:30

        # 02:15 sent with the standard offset on the spring-forward day reads 02:45 +11.
        @ Australia/Lord_Howe 2026-10-04T02:15:00+10:30 monthly
        0   2026-10-03T15:45:00.000Z
        1   2026-11-03T15:45:00.000Z   # 02:45 +11
        ",
    );
}

/// Kolkata: +05:30 all year, no DST.
#[test]
fn no_dst_kolkata() {
    check(
        "
        # Milliseconds are kept.
        @ Asia/Kolkata 2026-01-31T09:00:00.123+05:30 monthly
        0   2026-01-31T03:30:00.123Z
        1   2026-02-28T03:30:00.123Z
        2   2026-03-31T03:30:00.123Z
        3   2026-04-30T03:30:00.123Z

        # 02:30 local on the US spring-forward day is an ordinary time here.
        @ Asia/Kolkata 2026-03-08T02:30:00+05:30 weekly
        0   2026-03-07T21:00:00.000Z
        1   2026-03-14T21:00:00.000Z

        # Jan 31 00:15 local is Jan 30 in UTC: the local date is the one clamped.
        @ Asia/Kolkata 2026-01-31T00:15:00+05:30 monthly
        1   2026-02-27T18:45:00.000Z   # Feb 28 00:15
        2   2026-03-30T18:45:00.000Z   # Mar 31 00:15
        3   2026-04-29T18:45:00.000Z   # Apr 30 00:15
        ",
    );
}

#[test]
fn cycles_past_year_9999_have_no_due_date() {
    let (start, utc) = (ts("2026-01-15T10:00:00Z"), zone("UTC"));
    let yearly = interval(Yearly, None);
    assert_eq!(
        due_at(start, utc, yearly, 7973).map(Timestamp::to_rfc3339),
        Some("9999-01-15T10:00:00.000Z".to_owned())
    );
    assert_eq!(due_at(start, utc, yearly, 7974), None);
    assert_eq!(
        due_at(start, utc, interval(Weekly, Some(24)), u32::MAX),
        None
    );
    assert_eq!(
        due_at(start, utc, interval(CustomMonths, Some(24)), u32::MAX),
        None
    );
}

type UnitAndCount = (IntervalUnit, u8);

#[test]
fn interval_from_cadence_and_count() {
    use IntervalError::*;
    let table: &[(Cadence, Option<i64>, Result<UnitAndCount, IntervalError>)] = &[
        (Weekly, None, Ok((IntervalUnit::Week, 1))),
        (Weekly, Some(1), Ok((IntervalUnit::Week, 1))),
        (Weekly, Some(24), Ok((IntervalUnit::Week, 24))),
        (Biweekly, None, Ok((IntervalUnit::Week, 2))),
        (Biweekly, Some(2), Ok((IntervalUnit::Week, 2))),
        (Monthly, None, Ok((IntervalUnit::Month, 1))),
        (Monthly, Some(1), Ok((IntervalUnit::Month, 1))),
        (CustomMonths, Some(1), Ok((IntervalUnit::Month, 1))),
        (CustomMonths, Some(24), Ok((IntervalUnit::Month, 24))),
        (Yearly, None, Ok((IntervalUnit::Year, 1))),
        (Yearly, Some(1), Ok((IntervalUnit::Year, 1))),
        (CustomMonths, None, Err(CountRequired)),
        (CustomMonths, Some(0), Err(CountOutOfRange(0))),
        (CustomMonths, Some(25), Err(CountOutOfRange(25))),
        (CustomMonths, Some(-1), Err(CountOutOfRange(-1))),
        (CustomMonths, Some(256), Err(CountOutOfRange(256))),
        (Weekly, Some(0), Err(CountOutOfRange(0))),
        (Weekly, Some(25), Err(CountOutOfRange(25))),
        (Monthly, Some(30), Err(CountOutOfRange(30))),
        (Biweekly, Some(1), Err(contradicts(Biweekly, 1, 2))),
        (Monthly, Some(3), Err(contradicts(Monthly, 3, 1))),
        (Yearly, Some(2), Err(contradicts(Yearly, 2, 1))),
    ];
    for &(cadence, count, expected) in table {
        let got = Interval::new(cadence, count).map(|i| (i.unit(), i.count()));
        assert_eq!(got, expected, "{cadence} {count:?}");
        if let Ok(i) = Interval::new(cadence, count) {
            assert_eq!(i.cadence(), cadence);
        }
    }
    assert_eq!(
        Interval::new(Monthly, Some(3)).unwrap_err().to_string(),
        "billingIntervalCount 3 contradicts cadence monthly, which implies 1"
    );
    let units: Vec<&str> = Cadence::ALL.map(|c| c.unit().as_str()).to_vec();
    assert_eq!(units, ["week", "week", "month", "month", "year"]);
}

fn contradicts(cadence: Cadence, count: u8, implied: u8) -> IntervalError {
    IntervalError::CountContradictsCadence {
        cadence,
        count,
        implied,
    }
}

#[test]
fn first_cycle_at_or_after_needs_no_walk_from_zero() {
    let schedules = [
        schedule("UTC", "2026-01-01T00:00:00Z", Weekly, None),
        schedule(
            "America/New_York",
            "2026-01-31T23:30:00-05:00",
            Monthly,
            None,
        ),
        schedule(
            "America/New_York",
            "2026-03-01T02:30:00-05:00",
            Weekly,
            None,
        ),
        schedule(
            "Australia/Lord_Howe",
            "2024-02-29T01:45:00+11:00",
            CustomMonths,
            Some(7),
        ),
    ];
    let ms = time::Duration::milliseconds(1);
    for s in schedules {
        assert_eq!(s.first_cycle_at_or_after(s.start().minus(ms)), Some(0));
        assert_eq!(s.first_cycle_at_or_after(s.start()), Some(0));
        assert_eq!(s.first_cycle_at_or_after(s.start().plus(ms)), Some(1));
        for n in [1, 2, 12, 53, 365, 1000, 3001] {
            let Some(due) = s.due_at(n) else { continue };
            assert_eq!(s.first_cycle_at_or_after(due.minus(ms)), Some(n));
            assert_eq!(s.first_cycle_at_or_after(due), Some(n));
            assert_eq!(s.first_cycle_at_or_after(due.plus(ms)), Some(n + 1));
        }
    }
    let yearly = schedule("UTC", "2026-01-15T10:00:00Z", Yearly, None);
    assert_eq!(
        yearly.first_cycle_at_or_after(ts("9999-01-15T10:00:00Z")),
        Some(7973)
    );
    assert_eq!(
        yearly.first_cycle_at_or_after(ts("9999-01-15T10:00:01Z")),
        None
    );
}

#[test]
fn due_between_is_half_open_and_starts_late() {
    let weekly = schedule("UTC", "2026-01-01T00:00:00Z", Weekly, None);
    let window = |from: &str, to: &str, s: &Schedule| -> Vec<(u32, String)> {
        s.due_between(ts(from), ts(to))
            .map(|(n, t)| (n, t.to_rfc3339()))
            .collect()
    };
    assert_eq!(
        window("2026-01-08T00:00:00Z", "2026-01-22T00:00:00Z", &weekly),
        [
            (1, "2026-01-08T00:00:00.000Z".to_owned()),
            (2, "2026-01-15T00:00:00.000Z".to_owned())
        ]
    );
    assert!(window("2026-01-22T00:00:00Z", "2026-01-22T00:00:00Z", &weekly).is_empty());
    assert!(window("2026-02-01T00:00:00Z", "2026-01-01T00:00:00Z", &weekly).is_empty());
    assert!(window("2025-01-01T00:00:00Z", "2026-01-01T00:00:00Z", &weekly).is_empty());
    // Consecutive windows see every cycle once.
    let (a, b, c) = (
        ts("2025-12-01T00:00:00Z"),
        ts("2026-03-05T12:00:00Z"),
        ts("2026-07-01T00:00:00Z"),
    );
    let split: Vec<_> = weekly
        .due_between(a, b)
        .chain(weekly.due_between(b, c))
        .collect();
    let whole: Vec<_> = weekly.due_between(a, c).collect();
    assert_eq!(split, whole);
    assert_eq!(whole.first().map(|&(n, _)| n), Some(0));
    assert_eq!(whole.len(), 26); // Jan 1 to Jun 25
                                 // Five centuries in: the window finds cycle 6000 straight away.
    let monthly = schedule("UTC", "2026-01-31T10:00:00Z", Monthly, None);
    assert_eq!(
        window("2526-01-01T00:00:00Z", "2526-04-01T00:00:00Z", &monthly),
        [
            (6000, "2526-01-31T10:00:00.000Z".to_owned()),
            (6001, "2526-02-28T10:00:00.000Z".to_owned()),
            (6002, "2526-03-31T10:00:00.000Z".to_owned()),
        ]
    );
}

// --- Properties over random starts ------------------------------------------------------------

/// Zones with DST rules of every shape whose gaps never cross midnight (so a shifted cycle
/// keeps its date): none, one hour, 30 minutes, at 00:00 (Santiago), odd offsets.
const ZONES: &[&str] = &[
    "UTC",
    "America/New_York",
    "Europe/Berlin",
    "Europe/London",
    "Australia/Lord_Howe",
    "Australia/Adelaide",
    "Asia/Kolkata",
    "Asia/Kathmandu",
    "America/Santiago",
    "America/St_Johns",
    "Pacific/Chatham",
];

fn days_in_month(year: i32, month: u32) -> u32 {
    match month {
        4 | 6 | 9 | 11 => 30,
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        _ => 31,
    }
}

/// The oracle, written apart from the implementation: `n` intervals after `start`, the start
/// day clamped to the target month's length.
fn expected_date(start: NaiveDate, every: Interval, n: u32) -> NaiveDate {
    let months_per = match every.unit() {
        IntervalUnit::Week => {
            return start + Days::new(7 * u64::from(every.count()) * u64::from(n));
        }
        IntervalUnit::Month => i64::from(every.count()),
        IntervalUnit::Year => 12 * i64::from(every.count()),
    };
    let month0 = i64::from(start.month0()) + months_per * i64::from(n);
    let year = start.year() + i32::try_from(month0 / 12).unwrap();
    let month = u32::try_from(month0 % 12).unwrap() + 1;
    let day = start.day().min(days_in_month(year, month));
    NaiveDate::from_ymd_opt(year, month, day).unwrap()
}

fn local(t: Timestamp, zone: Tz) -> NaiveDateTime {
    DateTime::from_timestamp_millis(t.unix_millis())
        .unwrap()
        .with_timezone(&zone)
        .naive_local()
}

fn any_interval() -> impl Strategy<Value = Interval> {
    (0usize..5, 1i64..=24).prop_map(|(c, count)| {
        let cadence = Cadence::ALL[c];
        let count = matches!(cadence, Weekly | CustomMonths).then_some(count);
        interval(cadence, count)
    })
}

proptest! {
    #[test]
    fn cycles_keep_the_clamped_start_day_and_the_time_of_day(
        z in 0..ZONES.len(),
        // 1990-01-01 to 2060-01-01, any millisecond.
        start_ms in 631_152_000_000i64..2_840_140_800_000,
        every in any_interval(),
        n in 0u32..600,
    ) {
        let (zone, start) = (zone(ZONES[z]), Timestamp::from_unix_millis(start_ms).unwrap());
        let due = due_at(start, zone, every, n).unwrap();
        let start_local = local(start, zone);
        let wanted = expected_date(start_local.date(), every, n).and_time(start_local.time());
        let got = local(due, zone);
        prop_assert_eq!(got.date(), wanted.date());
        if n == 0 {
            prop_assert_eq!(due, start);
        } else {
            match zone.from_local_datetime(&wanted) {
                // A missing time moves forward by the gap (at most an hour in these zones).
                MappedLocalTime::None => {
                    let shift = got - wanted;
                    prop_assert!(shift > chrono::TimeDelta::zero());
                    prop_assert!(shift <= chrono::TimeDelta::hours(1));
                }
                // Otherwise the same wall time, and the earlier instant when there are two.
                found => {
                    prop_assert_eq!(got, wanted);
                    let earliest = found.earliest().unwrap().timestamp_millis();
                    prop_assert_eq!(due.unix_millis(), earliest);
                }
            }
        }
    }

    #[test]
    fn due_at_strictly_increases_and_is_found_again(
        z in 0..ZONES.len(),
        start_ms in 631_152_000_000i64..2_840_140_800_000,
        every in any_interval(),
        n in 0u32..600,
    ) {
        let (zone, start) = (zone(ZONES[z]), Timestamp::from_unix_millis(start_ms).unwrap());
        let schedule = Schedule::new(start, zone, every);
        let (this, next) = (schedule.due_at(n).unwrap(), schedule.due_at(n + 1).unwrap());
        prop_assert!(this < next);
        prop_assert_eq!(schedule.first_cycle_at_or_after(this), Some(n));
        let after = this.plus(time::Duration::milliseconds(1));
        prop_assert_eq!(schedule.first_cycle_at_or_after(after), Some(n + 1));
    }
}
