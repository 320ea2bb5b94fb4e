//! `application/x-www-form-urlencoded`, read once for every route: the capped body extractor
//! (`FormBody`), the strict decoder of a body or query into (name, value) pairs
//! (`decode_form`, over the one `percent_decode`), the strict query-string reader of the API
//! (`read_query`), and the reading of those pairs by a `Deserialize` struct (`read`), so the
//! struct that documents a form is the one that reads it. A name given twice is refused
//! (RFC 6749 section 3.1: parameters MUST NOT repeat).

use std::collections::HashSet;

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpRequest};
use futures_util::future::LocalBoxFuture;
use pay_domain::FieldError;
use serde::de::DeserializeOwned;

use crate::edge::body::{self, BodyError};
use crate::edge::error::ApiError;

/// Largest form body accepted (the JSON routes' limit).
pub const MAX_FORM_BYTES: usize = body::MAX_BODY_BYTES;

const FORM_CONTENT_TYPE: &str = "application/x-www-form-urlencoded";

/// What the edge refuses before the domain sees the form.
#[derive(Debug)]
pub enum FormError {
    /// Not `application/x-www-form-urlencoded` (415).
    NotAForm,
    /// Over `MAX_FORM_BYTES` (413).
    TooLarge,
    /// Bad percent-encoding or not UTF-8 (400 `invalid_form`).
    Malformed(String),
}

/// The form's (name, value) pairs in body order, decoded strictly. Like `JsonBody`, extraction
/// never fails the request by itself: the handler checks the key and the `Origin` first.
#[derive(Debug)]
pub struct FormBody(pub Result<Vec<(String, String)>, FormError>);

impl FromRequest for FormBody {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, Self::Error>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let form = body::content_type_is(req, FORM_CONTENT_TYPE);
        let declared = body::declared_length(req);
        let mut payload = payload.take();
        Box::pin(async move { Ok(FormBody(read_body(form, declared, &mut payload).await)) })
    }
}

async fn read_body(
    form: bool,
    declared: Option<usize>,
    payload: &mut Payload,
) -> Result<Vec<(String, String)>, FormError> {
    if !form {
        return Err(FormError::NotAForm);
    }
    let body = body::read(declared, payload).await.map_err(|e| match e {
        BodyError::TooLarge => FormError::TooLarge,
        BodyError::Unreadable(why) => FormError::Malformed(why),
    })?;
    decode_form(&body)
}

/// Why a percent-encoded component was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PercentError {
    /// A `%` not followed by two hexadecimal digits.
    Escape,
    /// The decoded bytes are not UTF-8.
    Utf8,
}

/// One component of a form or query: `+` is a space and `%XY` the byte `0xXY`. A malformed
/// escape or bytes that are not UTF-8 are refused instead of silently replaced.
pub fn percent_decode(raw: &[u8]) -> Result<String, PercentError> {
    let hex = |b: u8| (b as char).to_digit(16);
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        match raw[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let (Some(hi), Some(lo)) = (
                    raw.get(i + 1).copied().and_then(hex),
                    raw.get(i + 2).copied().and_then(hex),
                ) else {
                    return Err(PercentError::Escape);
                };
                out.push((hi * 16 + lo) as u8);
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).map_err(|_| PercentError::Utf8)
}

/// `application/x-www-form-urlencoded` as the WHATWG URL standard parses it (`&`-separated,
/// empty sequences skipped, the first `=` splits, `+` is a space), except that a malformed
/// percent escape or bytes that are not UTF-8 are refused instead of silently replaced.
pub fn decode_form(body: &[u8]) -> Result<Vec<(String, String)>, FormError> {
    body.split(|b| *b == b'&')
        .filter(|seq| !seq.is_empty())
        .map(|seq| {
            let (name, value) = match seq.iter().position(|b| *b == b'=') {
                Some(i) => (&seq[..i], &seq[i + 1..]),
                None => (seq, &[][..]),
            };
            let name = percent_decode(name).map_err(|_| {
                FormError::Malformed("a field name is not valid percent-encoded UTF-8".into())
            })?;
            let value = percent_decode(value).map_err(|_| {
                FormError::Malformed(format!(
                    "the value of {name} is not valid percent-encoded UTF-8"
                ))
            })?;
            Ok((name, value))
        })
        .collect()
}

/// Reads an API route's query string strictly: only `known` parameters, each at most once
/// (400 `unknown_field` or `validation_failed` naming it), in the order given.
pub(crate) fn read_query(query: &str, known: &[&str]) -> Result<Vec<(String, String)>, ApiError> {
    let decode = |s: &str| {
        percent_decode(s.as_bytes()).map_err(|e| {
            ApiError::from(match e {
                PercentError::Escape => FieldError::new("query", "malformed percent-encoding"),
                PercentError::Utf8 => FieldError::new("query", "query must be UTF-8"),
            })
        })
    };
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let key = decode(k)?;
        let value = decode(v)?;
        if !known.contains(&key.as_str()) {
            return Err(ApiError::unknown_field(key));
        }
        if !seen.insert(key.clone()) {
            return Err(FieldError::new(&key, format!("{key} is given twice")).into());
        }
        out.push((key, value));
    }
    Ok(out)
}

/// Reads `pairs` into `T`. Unknown names are refused or ignored as `T` says
/// (`deny_unknown_fields`); an empty value counts as absent (RFC 6749 section 3.1).
pub fn read<T: DeserializeOwned>(pairs: &[(String, String)]) -> Result<T, String> {
    let mut map = serde_json::Map::new();
    for (name, value) in pairs {
        if map.contains_key(name) {
            return Err(format!("{name} is given more than once"));
        }
        if !value.is_empty() {
            map.insert(name.clone(), serde_json::Value::String(value.clone()));
        }
    }
    serde_path_to_error::deserialize(serde_json::Value::Object(map)).map_err(|e| {
        let inner = e.inner().to_string();
        let path = e.path().to_string();
        match inner.strip_prefix("missing field ") {
            Some(name) => format!("{} is required", name.trim_matches('`')),
            None if path == "." => inner,
            None => format!("{path}: {inner}"),
        }
    })
}

/// Why a page's own form was not read by its struct.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormProblem {
    /// A name the form's struct does not take.
    Unknown(String),
    /// A name given twice.
    Repeated(String),
    /// A name the struct requires, absent.
    Missing(String),
    /// Any other reason the struct gave.
    Invalid(String),
}

impl FormProblem {
    /// The sentence a page shows for it.
    pub fn page_message(&self) -> String {
        match self {
            FormProblem::Unknown(name) => {
                format!("The form has a field this page does not take: {name}.")
            }
            FormProblem::Repeated(name) => format!("The form repeats the field {name}."),
            FormProblem::Missing(name) => format!("The form lacks the field {name}."),
            FormProblem::Invalid(why) => why.clone(),
        }
    }
}

/// Reads a page's own form into `T` as posted: every name must be one `T` takes (`T` is
/// `deny_unknown_fields`), none twice, and an empty value stays the empty string (the page
/// says what it means). The struct that documents the form in the OpenAPI document is the one
/// that reads it.
pub fn read_page_form<T: DeserializeOwned>(pairs: &[(String, String)]) -> Result<T, FormProblem> {
    let mut map = serde_json::Map::new();
    for (name, value) in pairs {
        if map
            .insert(name.clone(), serde_json::Value::String(value.clone()))
            .is_some()
        {
            return Err(FormProblem::Repeated(name.clone()));
        }
    }
    serde_json::from_value(serde_json::Value::Object(map)).map_err(|e| {
        let why = e.to_string();
        let quoted = |rest: &str| rest.split('`').nth(1).unwrap_or_default().to_owned();
        if let Some(rest) = why.strip_prefix("unknown field ") {
            FormProblem::Unknown(quoted(rest))
        } else if let Some(rest) = why.strip_prefix("missing field ") {
            FormProblem::Missing(quoted(rest))
        } else {
            FormProblem::Invalid(why)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize, PartialEq)]
    struct F {
        a: String,
        b: Option<String>,
    }

    fn given(v: &[(&str, &str)]) -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn reads_refuses_repeats_and_treats_empty_as_absent() {
        let f: F = read(&given(&[("a", "1"), ("b", ""), ("c", "x")])).unwrap();
        assert_eq!(
            f,
            F {
                a: "1".into(),
                b: None
            }
        );
        assert!(read::<F>(&given(&[("a", "1"), ("a", "2")]))
            .unwrap_err()
            .contains("more than once"));
        assert_eq!(read::<F>(&given(&[])).unwrap_err(), "a is required");
    }

    fn pairs(body: &str) -> Vec<(String, String)> {
        decode_form(body.as_bytes()).unwrap()
    }

    fn owned(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn decodes_like_a_browser_encodes() {
        assert_eq!(
            pairs("amount=12.50&title=Two+mugs%21&metadata%5Bcart%5D=7&note=caf%C3%A9&empty=&bare"),
            owned(&[
                ("amount", "12.50"),
                ("title", "Two mugs!"),
                ("metadata[cart]", "7"),
                ("note", "café"),
                ("empty", ""),
                ("bare", ""),
            ])
        );
        assert_eq!(pairs(""), owned(&[]));
        assert_eq!(pairs("&&a=1&"), owned(&[("a", "1")]));
        assert_eq!(pairs("a=b=c"), owned(&[("a", "b=c")]));
        assert_eq!(pairs("a=%2B%26%3D"), owned(&[("a", "+&=")]));
        // Repeats are kept for the domain to refuse.
        assert_eq!(pairs("a=1&a=2"), owned(&[("a", "1"), ("a", "2")]));
    }

    #[test]
    fn refuses_what_a_lenient_parser_would_mangle() {
        for bad in [
            "a=%", "a=%2", "a=%zz", "a=%+1", "a=%C3", "%ff=1", "a=%C3%28",
        ] {
            assert!(
                matches!(decode_form(bad.as_bytes()), Err(FormError::Malformed(_))),
                "{bad}"
            );
        }
        assert!(decode_form(b"a=\xff").is_err());
    }

    #[test]
    fn the_query_reader_takes_known_names_once() {
        let q = read_query("a=1&b=x+y%21", &["a", "b"]).unwrap();
        assert_eq!(q, owned(&[("a", "1"), ("b", "x y!")]));
        for bad in ["c=1", "a=1&a=2", "a=%zz", "a=%+1", "a=%C3"] {
            assert!(read_query(bad, &["a", "b"]).is_err(), "{bad}");
        }
    }

    #[derive(Debug, serde::Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Page {
        a: String,
        b: Option<String>,
    }

    #[test]
    fn a_page_form_is_read_as_posted_by_its_struct() {
        let f: Page = read_page_form(&given(&[("a", ""), ("b", "")])).unwrap();
        assert_eq!(
            f,
            Page {
                a: String::new(),
                b: Some(String::new())
            }
        );
        assert_eq!(
            read_page_form::<Page>(&given(&[("a", "1"), ("c", "")])),
            Err(FormProblem::Unknown("c".into()))
        );
        assert_eq!(
            read_page_form::<Page>(&given(&[("a", "1"), ("a", "2")])),
            Err(FormProblem::Repeated("a".into()))
        );
        assert_eq!(
            read_page_form::<Page>(&given(&[("b", "1")])),
            Err(FormProblem::Missing("a".into()))
        );
        assert_eq!(
            FormProblem::Unknown("c".into()).page_message(),
            "The form has a field this page does not take: c."
        );
        assert_eq!(
            FormProblem::Repeated("a".into()).page_message(),
            "The form repeats the field a."
        );
    }
}
