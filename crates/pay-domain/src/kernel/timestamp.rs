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

impl fmt::Display for Timestamp {
    /// RFC 3339 in UTC with milliseconds, written without an intermediate string.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = self.0;
        write!(
            f,
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
}

impl serde::Serialize for Timestamp {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
