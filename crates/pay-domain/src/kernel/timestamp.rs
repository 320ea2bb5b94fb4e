//! Instants as the API shows them: RFC 3339, UTC, milliseconds (`2026-11-22T06:07:20.123Z`).

use std::fmt;
use time::{Duration, OffsetDateTime, UtcOffset};

/// A UTC instant with millisecond precision (finer parts are dropped on creation so that what
/// is stored, compared and printed is the same value on every backend).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(OffsetDateTime);

impl Timestamp {
    pub fn from_unix_millis(ms: i64) -> Option<Self> {
        let dt = OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000).ok()?;
        Some(Timestamp(dt))
    }

    /// The last millisecond of year 9999: the expiry of what never expires by itself
    /// (ends only by revocation), still an ordinary instant for storage and comparison.
    pub fn end_of_time() -> Self {
        Self::from_datetime(time::PrimitiveDateTime::MAX.assume_utc())
    }

    pub fn from_datetime(dt: OffsetDateTime) -> Self {
        let ms = (dt.unix_timestamp_nanos() / 1_000_000) as i64;
        // In range by construction: `dt` was a valid instant.
        Self::from_unix_millis(ms).unwrap_or(Timestamp(dt.to_offset(UtcOffset::UTC)))
    }

    pub fn unix_millis(self) -> i64 {
        (self.0.unix_timestamp_nanos() / 1_000_000) as i64
    }

    pub fn unix_seconds(self) -> i64 {
        self.0.unix_timestamp()
    }

    pub fn datetime(self) -> OffsetDateTime {
        self.0
    }

    pub fn plus(self, d: Duration) -> Self {
        Timestamp(self.0.saturating_add(d))
    }

    pub fn minus(self, d: Duration) -> Self {
        Timestamp(self.0.saturating_sub(d))
    }

    /// `2026-11-22T06:07:20.123Z`.
    pub fn to_rfc3339(self) -> String {
        self.to_string()
    }
}

impl Timestamp {
    /// The general form, field by field with `write!` (years before 0 or after 9999 too).
    fn write_padded(self, w: &mut impl fmt::Write) -> fmt::Result {
        let d = self.0;
        write!(
            w,
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
            d.year(),
            u8::from(d.month()),
            d.day(),
            d.hour(),
            d.minute(),
            d.second(),
            d.millisecond()
        )
    }

    /// `YYYY-MM-DDTHH:MM:SS.mmmZ` as 24 ASCII bytes, for years 0 to 9999 (every instant the API
    /// meets); `None` outside them. Written digit by digit: lists print three of these per row,
    /// and `write!` with seven padded integers cost ten times as much.
    fn rfc3339_bytes(self) -> Option<[u8; 24]> {
        let d = self.0;
        let (year, month, day) = d.to_calendar_date();
        let year = u16::try_from(year).ok().filter(|y| *y <= 9999)?;
        let (hour, minute, second, milli) = d.to_hms_milli();
        let mut b = *b"0000-00-00T00:00:00.000Z";
        for (range, value) in [
            (0..4, u32::from(year)),
            (5..7, u32::from(u8::from(month))),
            (8..10, u32::from(day)),
            (11..13, u32::from(hour)),
            (14..16, u32::from(minute)),
            (17..19, u32::from(second)),
            (20..23, u32::from(milli)),
        ] {
            let mut v = value;
            for slot in b[range].iter_mut().rev() {
                *slot = b'0' + (v % 10) as u8;
                v /= 10;
            }
        }
        Some(b)
    }
}

impl fmt::Display for Timestamp {
    /// RFC 3339 in UTC with milliseconds, written without an intermediate string.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(b) = self.rfc3339_bytes() {
            return f.write_str(std::str::from_utf8(&b).map_err(|_| fmt::Error)?);
        }
        self.write_padded(f)
    }
}

impl serde::Serialize for Timestamp {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.rfc3339_bytes() {
            Some(b) => s.serialize_str(std::str::from_utf8(&b).map_err(serde::ser::Error::custom)?),
            None => s.collect_str(self),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The digit-by-digit form is exactly what the general form (`write!` with padded fields) prints, from the
    /// epoch to year 9999 and around every boundary of a field (and JSON says the same).
    #[test]
    fn the_fast_form_is_the_padded_form() {
        let padded = |t: Timestamp| {
            let mut s = String::new();
            t.write_padded(&mut s).unwrap();
            s
        };
        let last = Timestamp::from_unix_millis(253_402_300_799_999).unwrap();
        assert_eq!(last.to_string(), "9999-12-31T23:59:59.999Z");
        let mut ms: i64 = -62_167_219_200_000; // 0000-01-01T00:00:00.000Z
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut checked = 0;
        while ms <= last.unix_millis() {
            for edge in [ms, ms + 999, ms + 59_999, ms + 86_399_999] {
                let Some(t) = Timestamp::from_unix_millis(edge) else {
                    continue;
                };
                assert_eq!(t.to_string(), padded(t), "{edge}");
                assert_eq!(
                    serde_json::to_string(&t).unwrap(),
                    format!("\"{}\"", padded(t))
                );
                checked += 1;
            }
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            ms += 97 * 86_400_000 + (seed >> 40) as i64;
        }
        assert!(checked > 4_000, "{checked}");
        let before = Timestamp::from_unix_millis(-62_167_219_200_001).unwrap();
        assert_eq!(before.to_string(), padded(before));
        assert!(before.to_string().starts_with("-001-12-31T23:59:59.999Z"));
    }

    #[test]
    fn prints_rfc3339_with_millis_in_utc() {
        let t = Timestamp::from_unix_millis(1_795_327_640_123).unwrap();
        assert_eq!(t.to_rfc3339(), "2026-11-22T06:07:20.123Z");
        assert_eq!(t.unix_millis(), 1_795_327_640_123);
    }

    #[test]
    fn drops_sub_millisecond_parts() {
        let dt = OffsetDateTime::from_unix_timestamp_nanos(1_000_999_999).unwrap();
        assert_eq!(Timestamp::from_datetime(dt).unix_millis(), 1_000);
    }
}
