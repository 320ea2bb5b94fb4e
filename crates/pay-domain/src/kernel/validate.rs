//! Small field rules shared by several use cases. Each returns a `Validation` error naming the
//! field, so the caller learns exactly what to fix.

use serde_json::{Map, Value};

use crate::kernel::error::FieldError;

/// Most characters in any URL we store.
pub const MAX_URL_LEN: usize = 2048;
/// Most bytes of a metadata object, serialised as compact JSON.
pub const MAX_METADATA_BYTES: usize = 8 * 1024;
/// Most keys of a metadata object.
pub const MAX_METADATA_KEYS: usize = 50;

/// A string of at most `max` characters; `allow_empty` for optional free text.
pub fn text(field: &str, value: &str, max: usize, allow_empty: bool) -> Result<(), FieldError> {
    if !allow_empty && value.trim().is_empty() {
        return Err(FieldError::new(field, format!("{field} must not be empty")));
    }
    if value.chars().count() > max {
        return Err(FieldError::new(
            field,
            format!("{field} must be at most {max} characters"),
        ));
    }
    if value
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t' && c != '\r')
    {
        return Err(FieldError::new(
            field,
            format!("{field} must not contain control characters"),
        ));
    }
    if value.chars().any(crate::kernel::html::is_bidi_control) {
        return Err(FieldError::new(
            field,
            format!(
                "{field} must not contain bidirectional control characters (U+202A to U+202E, U+2066 to U+2069)"
            ),
        ));
    }
    Ok(())
}

/// An absolute `http` or `https` URL without user info, at most 2,048 characters.
pub fn http_url(field: &str, value: &str) -> Result<(), FieldError> {
    let bad = |why: &str| Err(FieldError::new(field, format!("{field} {why}")));
    if value.len() > MAX_URL_LEN {
        return bad("must be at most 2048 characters");
    }
    let rest = if let Some(r) = value.strip_prefix("https://") {
        r
    } else if let Some(r) = value.strip_prefix("http://") {
        r
    } else {
        return bad("must be an absolute http(s) URL");
    };
    if value.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return bad("must not contain spaces or control characters");
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if authority.contains('@') {
        return bad("must not contain user info");
    }
    if !is_host_port(authority) {
        return bad("must have a valid host");
    }
    Ok(())
}

fn is_host_port(authority: &str) -> bool {
    let (host, port) = if let Some(inner) = authority.strip_prefix('[') {
        // IPv6 literal: [..]:port
        match inner.split_once(']') {
            Some((h, rest)) => (h, rest.strip_prefix(':')),
            None => return false,
        }
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    if host.is_empty() || host.len() > 253 {
        return false;
    }
    if let Some(p) = port {
        if p.is_empty() || p.len() > 5 || !p.bytes().all(|b| b.is_ascii_digit()) {
            return false;
        }
        if p.parse::<u32>().map_or(true, |n| n == 0 || n > 65535) {
            return false;
        }
    }
    host.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"-._:".contains(&b))
}

/// An origin: `scheme://host[:port]` with nothing after it.
pub fn origin(field: &str, value: &str) -> Result<(), FieldError> {
    http_url(field, value)?;
    let rest = value.split_once("://").map(|(_, r)| r).unwrap_or("");
    if rest.contains(['/', '?', '#']) {
        return Err(FieldError::new(
            field,
            format!("{field} must be an origin (scheme://host[:port]) without path"),
        ));
    }
    Ok(())
}

/// A public DNS host name, as a payment-link domain: trimmed and lower-cased, two or more
/// labels of `a-z`, `0-9` and inner `-` (1 to 63 each, 253 in all), a top-level label that
/// is not all digits (no IP address), no scheme, port, path or trailing dot. Returns the
/// normalised name.
pub fn domain_name(field: &str, value: &str) -> Result<String, FieldError> {
    let name = value.trim().to_ascii_lowercase();
    let label_ok = |l: &str| {
        (1..=63).contains(&l.len())
            && l.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    let labels: Vec<&str> = name.split('.').collect();
    let ok = name.len() <= 253
        && labels.len() >= 2
        && labels.iter().all(|l| label_ok(l))
        && !labels
            .last()
            .is_some_and(|tld| tld.bytes().all(|b| b.is_ascii_digit()));
    if ok {
        Ok(name)
    } else {
        Err(FieldError::new(
            field,
            format!(
                "{field} must be a host name such as pay.example.com (no scheme, port or path)"
            ),
        ))
    }
}

/// A plausible e-mail address (one `@`, a dotted domain, no spaces), at most 254 characters.
pub fn email(field: &str, value: &str) -> Result<(), FieldError> {
    let ok = value.len() <= 254
        && !value.chars().any(|c| c.is_whitespace() || c.is_control())
        && match value.split_once('@') {
            Some((local, domain)) => {
                !local.is_empty()
                    && !domain.contains('@')
                    && domain.contains('.')
                    && !domain.starts_with('.')
                    && !domain.ends_with('.')
            }
            None => false,
        };
    if ok {
        Ok(())
    } else {
        Err(FieldError::new(
            field,
            format!("{field} must be an e-mail address"),
        ))
    }
}

/// Merchant metadata: a JSON object of at most 50 keys and 8 KB.
pub fn metadata(field: &str, value: &Map<String, Value>) -> Result<(), FieldError> {
    if value.len() > MAX_METADATA_KEYS {
        return Err(FieldError::new(
            field,
            format!("{field} must have at most {MAX_METADATA_KEYS} keys"),
        ));
    }
    let size = serde_json::to_vec(value)
        .map(|v| v.len())
        .unwrap_or(usize::MAX);
    if size > MAX_METADATA_BYTES {
        return Err(FieldError::new(
            field,
            format!("{field} must be at most 8 KB of JSON"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        for ok in [
            "https://shop.example/thanks?o=1#x",
            "http://localhost:3000/a",
            "https://[::1]:8443/",
            "https://x.example",
        ] {
            assert!(http_url("u", ok).is_ok(), "{ok}");
        }
        for bad in [
            "ftp://x.example",
            "//x.example",
            "https://",
            "https://user:pw@x.example/",
            "https://x.example/a b",
            "https://x.example:99999/",
            "https://x.example:/",
            "javascript:alert(1)",
            "https://ex ample.com",
        ] {
            assert!(http_url("u", bad).is_err(), "{bad}");
        }
        let long = format!("https://x.example/{}", "a".repeat(2048));
        assert!(http_url("u", &long).is_err());
    }

    #[test]
    fn origins() {
        assert!(origin("o", "https://shop.example").is_ok());
        assert!(origin("o", "http://localhost:3000").is_ok());
        assert!(origin("o", "https://shop.example/").is_err());
        assert!(origin("o", "https://shop.example/path").is_err());
    }

    #[test]
    fn emails() {
        assert!(email("e", "a@b.example").is_ok());
        for bad in [
            "",
            "a",
            "a@b",
            "@b.example",
            "a@@b.example",
            "a b@c.example",
            "a@.example",
        ] {
            assert!(email("e", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn texts() {
        assert!(text("t", "", 10, true).is_ok());
        assert!(text("t", " ", 10, false).is_err());
        assert!(text("t", "ééééé", 5, false).is_ok());
        assert!(text("t", "éééééé", 5, false).is_err());
        assert!(text("t", "a\u{0}b", 5, false).is_err());
        for bidi in ['\u{202A}', '\u{202E}', '\u{2066}', '\u{2069}'] {
            let e = text("name", &format!("Ann{bidi}x"), 10, false).unwrap_err();
            assert!(e.message.contains("bidirectional"), "{e:?}");
        }
        assert!(text("t", "דנה\u{200F}", 5, false).is_ok());
    }

    #[test]
    fn metadata_limits() {
        let mut m = Map::new();
        for i in 0..50 {
            m.insert(format!("k{i}"), Value::from(i));
        }
        assert!(metadata("metadata", &m).is_ok());
        m.insert("k50".into(), Value::from(1));
        assert!(metadata("metadata", &m).is_err());
        let mut big = Map::new();
        big.insert("k".into(), Value::from("x".repeat(8 * 1024)));
        assert!(metadata("metadata", &big).is_err());
        let mut edge = Map::new();
        // {"k":"..."} is 8 bytes of framing.
        edge.insert("k".into(), Value::from("x".repeat(8 * 1024 - 8)));
        assert!(metadata("metadata", &edge).is_ok());
    }
}
