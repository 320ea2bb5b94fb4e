//! Short text columns (ids, kinds, statuses) read without a heap allocation: a row of 200
//! links would otherwise allocate and free a `String` for each, only to parse it.

use diesel::deserialize::{self, FromSql, FromSqlRow};
use diesel::pg::{Pg, PgValue};
use diesel::sql_types::Text;
use diesel::sqlite::{Sqlite, SqliteValue};

use crate::conn::MultiBackend;

/// A text column of at most [`ShortText::CAP`] bytes (a hyphenated UUID is 36), kept inline.
/// A longer value fails the row's read, as any corrupt column does.
#[derive(Clone, Copy, FromSqlRow)]
pub(crate) struct ShortText {
    len: u8,
    buf: [u8; ShortText::CAP],
}

impl ShortText {
    pub(crate) const CAP: usize = 40;

    fn new(s: &str) -> deserialize::Result<Self> {
        if s.len() > Self::CAP {
            return Err(format!("a short text column holds {} bytes", s.len()).into());
        }
        let mut buf = [0; Self::CAP];
        buf[..s.len()].copy_from_slice(s.as_bytes());
        Ok(ShortText {
            len: s.len() as u8,
            buf,
        })
    }

    pub(crate) fn as_str(&self) -> &str {
        // Copied from a `&str` whole: always UTF-8.
        std::str::from_utf8(&self.buf[..usize::from(self.len)]).unwrap_or_default()
    }
}

impl std::ops::Deref for ShortText {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl FromSql<Text, Pg> for ShortText {
    fn from_sql(value: PgValue<'_>) -> deserialize::Result<Self> {
        ShortText::new(std::str::from_utf8(value.as_bytes())?)
    }
}

impl FromSql<Text, Sqlite> for ShortText {
    fn from_sql(mut value: SqliteValue<'_, '_, '_>) -> deserialize::Result<Self> {
        ShortText::new(value.read_text())
    }
}

impl FromSql<Text, MultiBackend> for ShortText {
    fn from_sql(
        value: <MultiBackend as diesel::backend::Backend>::RawValue<'_>,
    ) -> deserialize::Result<Self> {
        value.from_sql::<Self, Text>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_up_to_cap_bytes_and_refuses_more() {
        let uuid = "0192f0c4-1a2b-7c3d-8e4f-0123456789ab";
        assert_eq!(ShortText::new(uuid).unwrap().as_str(), uuid);
        assert_eq!(ShortText::new("").unwrap().as_str(), "");
        assert_eq!(ShortText::new("ä€").unwrap().as_str(), "ä€");
        let full = "x".repeat(ShortText::CAP);
        assert_eq!(ShortText::new(&full).unwrap().as_str(), full);
        assert!(ShortText::new(&"x".repeat(ShortText::CAP + 1)).is_err());
    }
}
