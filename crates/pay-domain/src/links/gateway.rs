//! The gateway form: a merchant's HTML form posts straight from the customer's browser to
//! `/gateway/pay/{payKeyId}`. This module holds its pure rules - the form fields and how they
//! become a `CreateLinkInput`, and the origin match - plus the store port that finds an
//! integration by its public form key. The use case is `Pay::create_link_from_form`.

use std::collections::BTreeSet;
use std::net::Ipv6Addr;

use serde_json::{Map, Value};

use crate::kernel::error::{FieldError, PortResult, UnknownField};
use crate::kernel::ids::FormKeyId;
use crate::links::CreateLinkInput;
use crate::links::LinkError;
use crate::tenancy::keys::Integration;

/// Looks integrations up by their public form key.
pub trait FormKeyStore {
    /// The integration whose `form_key_id` is `key`, across companies, enabled or not (the
    /// caller decides); `None` when there is none. `form_key_id` is unique, so there is at most
    /// one. MUST read the current row (no cache), so a key disabled on any instance stops
    /// taking forms at once.
    fn integration_by_form_key(&self, key: &FormKeyId) -> PortResult<Option<Integration>>;
}

/// The plain fields the form takes, besides `metadata[<key>]`. A subset of the JSON create
/// body, named the same.
pub const GATEWAY_FORM_FIELDS: &[&str] = &[
    "amount",
    "currency",
    "asset",
    "title",
    "description",
    "orderId",
    "customerEmail",
    "clientId",
    "successUrl",
    "failureUrl",
    "returnUrl",
];

/// `metadata[<key>]` -> `Some(key)`; any other name -> `None`. A malformed metadata name
/// (empty key, brackets inside) is a validation error naming it.
fn metadata_key(name: &str) -> Result<Option<&str>, FieldError> {
    let Some(rest) = name.strip_prefix("metadata[") else {
        return Ok(None);
    };
    match rest.strip_suffix(']') {
        Some(key) if !key.is_empty() && !key.contains(['[', ']']) => Ok(Some(key)),
        _ => Err(FieldError::new(
            name,
            "metadata fields are named metadata[<key>] with a non-empty key without brackets",
        )),
    }
}

fn is_known(name: &str) -> Result<bool, FieldError> {
    Ok(GATEWAY_FORM_FIELDS.contains(&name) || metadata_key(name)?.is_some())
}

/// Turns the form's (name, value) pairs, in body order, into the link input the JSON route
/// would build; the link rules themselves run later in `CreateLinkInput::into_payload`, so both
/// routes validate identically.
///
/// - An unknown name is `UnknownField` (the first one in body order), before anything else.
/// - A name given twice is a validation error naming it (a form has no arrays).
/// - An empty value of a plain field means "not given" (browsers submit blank inputs as
///   empty strings); `amount` is required, so an empty one is "amount is required".
/// - `metadata[<key>]=<value>` pairs build the metadata object, values as strings (empty kept).
pub fn read_form(fields: Vec<(String, String)>) -> Result<CreateLinkInput, LinkError> {
    for (name, _) in &fields {
        if !is_known(name)? {
            return Err(UnknownField {
                field: name.clone(),
            }
            .into());
        }
    }
    let mut seen = BTreeSet::new();
    let mut input = CreateLinkInput::default();
    let mut amount = None;
    let mut metadata = Map::new();
    for (name, value) in fields {
        if !seen.insert(name.clone()) {
            return Err(FieldError::new(&name, format!("{name} is given more than once")).into());
        }
        if let Some(key) = metadata_key(&name)? {
            metadata.insert(key.to_owned(), Value::String(value));
            continue;
        }
        let slot = match name.as_str() {
            "amount" => &mut amount,
            "currency" => &mut input.currency,
            "asset" => &mut input.asset,
            "title" => &mut input.title,
            "description" => &mut input.description,
            "orderId" => &mut input.order_id,
            "customerEmail" => &mut input.customer_email,
            "clientId" => &mut input.client_id,
            "successUrl" => &mut input.success_url,
            "failureUrl" => &mut input.failure_url,
            "returnUrl" => &mut input.return_url,
            _ => return Err(UnknownField { field: name }.into()),
        };
        *slot = (!value.is_empty()).then_some(value);
    }
    input.amount = amount.ok_or_else(|| FieldError::new("amount", "amount is required"))?;
    if !metadata.is_empty() {
        input.metadata = Some(metadata);
    }
    Ok(input)
}

/// An origin as browsers compare them: scheme and host lower-cased, the scheme's default port
/// made explicit, IPv6 literals in their canonical text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OriginKey {
    scheme: &'static str,
    host: String,
    port: u16,
}

impl OriginKey {
    /// Parses `scheme://host[:port]` (http or https, nothing after the authority, no user
    /// info). Anything else - `null` included, which browsers send from sandboxed or
    /// privacy-restricted contexts - is `None`.
    pub fn parse(s: &str) -> Option<OriginKey> {
        let (scheme, rest) = s.split_once("://")?;
        let (scheme, default_port) = if scheme.eq_ignore_ascii_case("https") {
            ("https", 443)
        } else if scheme.eq_ignore_ascii_case("http") {
            ("http", 80)
        } else {
            return None;
        };
        if rest.is_empty()
            || rest.contains(['/', '?', '#', '@', '\\'])
            || rest.chars().any(|c| c.is_whitespace() || c.is_control())
        {
            return None;
        }
        let (host, port) = if let Some(inner) = rest.strip_prefix('[') {
            let (literal, after) = inner.split_once(']')?;
            let ip: Ipv6Addr = literal.parse().ok()?;
            let port = match after {
                "" => None,
                p => Some(p.strip_prefix(':')?),
            };
            (format!("[{ip}]"), port)
        } else {
            let (host, port) = match rest.split_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (rest, None),
            };
            if host.is_empty()
                || !host
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-._".contains(&b))
            {
                return None;
            }
            (host.to_ascii_lowercase(), port)
        };
        let port = match port {
            None => default_port,
            Some(p) if !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()) => {
                match p.parse::<u16>() {
                    Ok(0) | Err(_) => return None,
                    Ok(n) => n,
                }
            }
            Some(_) => return None,
        };
        Some(OriginKey { scheme, host, port })
    }
}

/// Whether the browser's `Origin` is one of the integration's `allowedOrigins` (same scheme,
/// host and port). No header, `null`, or an empty allow-list: refused.
pub fn origin_allowed(origin: Option<&str>, allowed: &[String]) -> bool {
    let Some(origin) = origin.and_then(OriginKey::parse) else {
        return false;
    };
    allowed
        .iter()
        .filter_map(|a| OriginKey::parse(a))
        .any(|a| a == origin)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn err(r: Result<CreateLinkInput, LinkError>) -> LinkError {
        r.expect_err("expected an error")
    }

    #[test]
    fn every_field_lands_where_the_json_route_puts_it() {
        let input = read_form(pairs(&[
            ("amount", "12.50"),
            ("currency", "USDC"),
            ("asset", "a"),
            ("title", "Order 42"),
            ("description", "Two mugs"),
            ("orderId", "42"),
            ("customerEmail", "payer@example.com"),
            ("clientId", "cus_1"),
            ("successUrl", "https://shop.example/ok"),
            ("failureUrl", "https://shop.example/fail"),
            ("returnUrl", "https://shop.example/back"),
            ("metadata[cart]", "7"),
            ("metadata[note]", ""),
        ]))
        .unwrap();
        let mut metadata = Map::new();
        metadata.insert("cart".into(), Value::from("7"));
        metadata.insert("note".into(), Value::from(""));
        assert_eq!(
            input,
            CreateLinkInput {
                title: Some("Order 42".into()),
                description: Some("Two mugs".into()),
                amount: "12.50".into(),
                currency: Some("USDC".into()),
                asset: Some("a".into()),
                order_id: Some("42".into()),
                customer_email: Some("payer@example.com".into()),
                client_id: Some("cus_1".into()),
                return_url: Some("https://shop.example/back".into()),
                success_url: Some("https://shop.example/ok".into()),
                failure_url: Some("https://shop.example/fail".into()),
                metadata: Some(metadata),
                ..Default::default()
            }
        );
    }

    #[test]
    fn blank_plain_fields_are_not_given() {
        let input = read_form(pairs(&[("amount", "5"), ("title", ""), ("currency", "")])).unwrap();
        assert_eq!(input.title, None);
        assert_eq!(input.currency, None);
        assert_eq!(input.metadata, None);
        // Whitespace is a value, and the link rules refuse it like the JSON route does.
        assert_eq!(
            read_form(pairs(&[("amount", "5"), ("title", " ")]))
                .unwrap()
                .title
                .as_deref(),
            Some(" ")
        );
    }

    #[test]
    fn amount_is_required() {
        for form in [pairs(&[("title", "x")]), pairs(&[("amount", "")])] {
            assert_eq!(
                err(read_form(form)),
                FieldError::new("amount", "amount is required").into()
            );
        }
    }

    #[test]
    fn unknown_names_are_refused_first_in_body_order() {
        // JSON-only fields, server-owned fields, bare `metadata`, case variants.
        for name in [
            "fiatCurrency",
            "expirationTime",
            "merchantName",
            "metadata",
            "Amount",
            "metadata.x",
            "",
        ] {
            assert_eq!(
                err(read_form(pairs(&[("amount", "1"), (name, "x")]))),
                UnknownField { field: name.into() }.into(),
                "{name:?}"
            );
        }
        // Before a repeated field and before a missing amount.
        assert_eq!(
            err(read_form(pairs(&[
                ("title", "a"),
                ("title", "b"),
                ("zzz", "1"),
                ("yyy", "1")
            ]))),
            LinkError::from(UnknownField {
                field: "zzz".into()
            })
        );
    }

    #[test]
    fn repeated_names_are_refused() {
        for name in ["amount", "title", "metadata[k]"] {
            let r = read_form(pairs(&[("amount", "1"), (name, "2"), (name, "3")]));
            match err(r) {
                LinkError::Invalid(FieldError { field, .. }) => assert_eq!(field, name),
                other => panic!("{other:?}"),
            }
        }
        // A blank repeat is still a repeat.
        assert!(read_form(pairs(&[("amount", "1"), ("title", ""), ("title", "")])).is_err());
    }

    #[test]
    fn malformed_metadata_names_name_themselves() {
        for name in ["metadata[]", "metadata[a][b]", "metadata[a", "metadata[a]b"] {
            match err(read_form(pairs(&[("amount", "1"), (name, "x")]))) {
                LinkError::Invalid(FieldError { field, .. }) => assert_eq!(field, name),
                other => panic!("{name}: {other:?}"),
            }
        }
    }

    #[test]
    fn origins_compare_by_scheme_host_and_port() {
        let allowed = vec![
            "https://Shop.Example".to_owned(),
            "http://localhost:3000".to_owned(),
            "https://[::1]:8443".to_owned(),
            "https://pay.example:443".to_owned(),
        ];
        for ok in [
            "https://shop.example",
            "https://shop.example:443",
            "HTTPS://SHOP.EXAMPLE",
            "http://localhost:3000",
            "https://[0:0::1]:8443",
            "https://pay.example",
        ] {
            assert!(origin_allowed(Some(ok), &allowed), "{ok}");
        }
        for bad in [
            "http://shop.example",
            "https://shop.example:8443",
            "https://evil.shop.example",
            "https://shop.example.evil.example",
            "https://shop.example/",
            "https://shop.example/path",
            "https://user@shop.example",
            "http://localhost:3001",
            "http://localhost",
            "https://[::1]",
            "null",
            "",
            "shop.example",
            "https://shop.example:0",
            "https://shop.example:99999",
            "https://shop.example:",
            "https://shop.example:+443",
        ] {
            assert!(!origin_allowed(Some(bad), &allowed), "{bad}");
        }
        assert!(!origin_allowed(None, &allowed));
        assert!(!origin_allowed(Some("https://shop.example"), &[]));
    }
}
