//! A JSON object body whose numbers keep the text the client wrote. `json::JsonBody` reads
//! numbers through serde_json's `f64` (its `Number` keeps no text), which is fine for counts but
//! not for the settings' decimals: `99.999999999999999999` read as a float is `100`. This body is
//! read under the same rules (`application/json`, 64 KiB, one object, the same parser, so every
//! refusal of `json::parse_object` holds here too) and also keeps the raw text of each top-level
//! number, turned into a plain decimal without a float: an exponent is applied to the digits
//! (`1.25e-7` -> `0.000000125`). Ranges, precision and `-0` stay domain rules.

use std::collections::HashMap;

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpRequest};
use futures_util::future::LocalBoxFuture;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::edge::error::ApiError;
use crate::edge::json::{from_object, is_json_content_type, parse_object, read_bytes};

/// The largest exponent applied (`1e40` already has more integer digits than any decimal we
/// keep, `1e-40` more places): beyond it the number cannot be kept exactly.
const MAX_EXPONENT: i64 = 40;

/// A body's object and the raw text of its top-level numbers, by field name.
pub type ObjectWithNumbers = (Map<String, Value>, HashMap<String, String>);

/// The parsed object plus the exact text of its top-level numbers. Like `JsonBody`, extraction
/// never fails the request by itself, so the handler checks credentials first.
#[derive(Debug)]
pub struct ExactJsonBody(pub Result<ObjectWithNumbers, ApiError>);

impl ExactJsonBody {
    /// The body as the route's request struct (`json::from_object`: unknown fields, types),
    /// with the exact text of its top-level numbers beside it.
    pub fn read<T: DeserializeOwned>(self) -> Result<(T, ExactNumbers), ApiError> {
        let (map, numbers) = self.0?;
        Ok((from_object(map)?, ExactNumbers(numbers)))
    }
}

impl FromRequest for ExactJsonBody {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, Self::Error>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let json = is_json_content_type(req);
        let declared = crate::edge::body::declared_length(req);
        let mut payload = payload.take();
        Box::pin(async move { Ok(ExactJsonBody(read(json, declared, &mut payload).await)) })
    }
}

async fn read(
    json: bool,
    declared: Option<usize>,
    payload: &mut Payload,
) -> Result<ObjectWithNumbers, ApiError> {
    let body = read_bytes(json, declared, payload).await?;
    let map = parse_object(&body)?;
    Ok((map, number_texts(&body)?))
}

/// The raw text of every top-level member that is a number. Only called on a body
/// `parse_object` accepted, so it is one valid JSON object.
fn number_texts(body: &[u8]) -> Result<HashMap<String, String>, ApiError> {
    let raw: HashMap<String, Box<RawValue>> = serde_json::from_slice(body)
        .map_err(|e| ApiError::InvalidJson(format!("request body is not valid JSON: {e}")))?;
    Ok(raw
        .into_iter()
        .filter(|(_, v)| {
            v.get()
                .starts_with(|c: char| c == '-' || c.is_ascii_digit())
        })
        .map(|(k, v)| (k, v.get().to_owned()))
        .collect())
}

/// The exact text of a body's top-level numbers, by field name.
#[derive(Debug)]
pub struct ExactNumbers(HashMap<String, String>);

impl ExactNumbers {
    /// The number the client sent in `field` as a plain decimal, digit for digit; `None` when
    /// the field is absent (its request struct already refused a non-number there).
    pub fn get(&self, field: &str) -> Result<Option<String>, ApiError> {
        let Some(raw) = self.0.get(field) else {
            return Ok(None);
        };
        plain_decimal(raw).map(Some).ok_or_else(|| {
            ApiError::invalid(
                field,
                format!("{field} cannot be kept exactly (its exponent is out of range)"),
            )
        })
    }
}

/// A JSON number's text as a plain decimal, digit for digit: without an exponent it is returned
/// as written (`0.50` stays `0.50`, `-0` stays `-0` for the domain to refuse); with one, the
/// point moves (`1.25e-7` -> `0.000000125`, `1.5E2` -> `150`, `-0e3` -> `-0`). `None` when the
/// exponent is beyond `MAX_EXPONENT` or the text is not a JSON number.
pub fn plain_decimal(raw: &str) -> Option<String> {
    let (negative, body) = match raw.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, raw),
    };
    let (mantissa, exponent) = match body.split_once(['e', 'E']) {
        Some((m, e)) => (m, Some(e)),
        None => (body, None),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if int.is_empty()
        || !digits(int)
        || !digits(frac)
        || (mantissa.contains('.') && frac.is_empty())
    {
        return None;
    }
    let Some(exponent) = exponent else {
        return Some(raw.to_owned());
    };
    let unsigned = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
    if unsigned.is_empty() || !digits(unsigned) || unsigned.len() > 4 {
        return None;
    }
    let magnitude: i64 = unsigned.parse().ok()?;
    if magnitude > MAX_EXPONENT {
        return None;
    }
    let shift = if exponent.starts_with('-') {
        -magnitude
    } else {
        magnitude
    };
    // The digits with the point after `point` of them.
    let all = format!("{int}{frac}");
    let point = i64::try_from(int.len()).ok()? + shift;
    let (int_part, frac_part) = if point <= 0 {
        let zeros = usize::try_from(-point).ok()?;
        (String::from("0"), format!("{}{all}", "0".repeat(zeros)))
    } else {
        let point = usize::try_from(point).ok()?;
        if point >= all.len() {
            (
                format!("{all}{}", "0".repeat(point - all.len())),
                String::new(),
            )
        } else {
            (all[..point].to_owned(), all[point..].to_owned())
        }
    };
    let int_part = match int_part.trim_start_matches('0') {
        "" => "0",
        kept => kept,
    };
    let sign = if negative { "-" } else { "" };
    Some(if frac_part.is_empty() {
        format!("{sign}{int_part}")
    } else {
        format!("{sign}{int_part}.{frac_part}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_without_an_exponent_are_kept_as_written() {
        for s in [
            "0",
            "1",
            "-1",
            "0.50",
            "-0",
            "-0.0",
            "99.999999999999999999",
            "123456789012345678.5",
        ] {
            assert_eq!(plain_decimal(s).as_deref(), Some(s));
        }
    }

    #[test]
    fn exponents_move_the_point_exactly() {
        for (raw, plain) in [
            ("1.25e-7", "0.000000125"),
            ("1.5E2", "150"),
            ("1.5e+1", "15"),
            ("1.50e1", "15.0"),
            ("0.5e1", "5"),
            ("12e-1", "1.2"),
            ("1e0", "1"),
            ("-0e3", "-0"),
            ("0e-2", "0.00"),
            ("-2.5e-1", "-0.25"),
            ("1e40", "10000000000000000000000000000000000000000"),
        ] {
            assert_eq!(plain_decimal(raw).as_deref(), Some(plain), "{raw}");
        }
    }

    #[test]
    fn huge_exponents_and_non_numbers_are_none() {
        for raw in [
            "1e41", "1e-41", "1e99999", "", "-", "1.", ".5", "1e", "1e+", "abc", "1x",
        ] {
            assert_eq!(plain_decimal(raw), None, "{raw:?}");
        }
    }

    #[test]
    fn top_level_number_texts_are_kept() {
        let body = br#"{"a": 0.10, "b": "0.10", "c": -0, "d": {"e": 1}, "f": [1], "g": 1e-7}"#;
        let n = number_texts(body).unwrap();
        assert_eq!(n.len(), 3);
        assert_eq!(n["a"], "0.10");
        assert_eq!(n["c"], "-0");
        assert_eq!(n["g"], "1e-7");
    }
}
