//! Strict JSON input: `application/json` only, at most 64 KiB, one object with no repeated key
//! at any depth, read into the route's request struct (unknown fields refused, each field of
//! its JSON type, the field at fault named by its path). Range and format rules are the
//! domain's; this module only turns JSON into typed Rust values.

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpRequest};
use futures_util::future::LocalBoxFuture;
use serde::de::{DeserializeOwned, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::edge::body;
use crate::edge::error::ApiError;

/// Largest JSON body accepted.
pub const MAX_JSON_BYTES: usize = body::MAX_BODY_BYTES;

/// A JSON object body, read strictly. Extraction never fails the request by itself: the
/// handler authenticates first and only then looks at the body, so an unauthenticated caller
/// always gets the 401.
#[derive(Debug)]
pub struct JsonBody(pub Result<Map<String, Value>, ApiError>);

impl JsonBody {
    /// The body as the route's request struct (see `from_object`).
    pub fn read<T: DeserializeOwned>(self) -> Result<T, ApiError> {
        from_object(self.0?)
    }
}

pub(crate) fn is_json_content_type(req: &HttpRequest) -> bool {
    body::content_type_is(req, "application/json")
}

impl FromRequest for JsonBody {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, Self::Error>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let bytes = json_bytes(req, payload);
        Box::pin(async move { Ok(JsonBody(bytes.await.and_then(|b| parse_object(&b)))) })
    }
}

/// The bytes of a JSON body as `read_bytes` takes them (an extractor that needs them exactly,
/// an idempotent retry's fingerprint, say, parses them itself with `parse_object`).
pub(crate) fn json_bytes(
    req: &HttpRequest,
    payload: &mut Payload,
) -> LocalBoxFuture<'static, Result<Vec<u8>, ApiError>> {
    let json = is_json_content_type(req);
    let declared = body::declared_length(req);
    let mut payload = payload.take();
    Box::pin(async move { read_bytes(json, declared, &mut payload).await })
}

/// A JSON body's bytes: `application/json` only, at most `MAX_JSON_BYTES` (the one capped
/// reader, `edge::body`).
pub(crate) async fn read_bytes(
    json: bool,
    declared: Option<usize>,
    payload: &mut Payload,
) -> Result<Vec<u8>, ApiError> {
    if !json {
        return Err(ApiError::UnsupportedMediaType);
    }
    body::read(declared, payload).await.map_err(ApiError::from)
}

/// Parses a body that must be one JSON object. A key given twice in one object, at any depth,
/// is refused: last-wins (serde_json's) and first-wins parsers would read different values.
pub fn parse_object(body: &[u8]) -> Result<Map<String, Value>, ApiError> {
    let mut de = serde_json::Deserializer::from_slice(body);
    let parsed = UniqueKeys {
        path: String::new(),
    }
    .deserialize(&mut de)
    .and_then(|v| de.end().map(|()| v));
    match parsed {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(ApiError::InvalidJson(
            "request body must be a JSON object".into(),
        )),
        Err(e) => Err(ApiError::InvalidJson(format!(
            "request body is not valid JSON: {e}"
        ))),
    }
}

/// Builds a `Value` like serde_json does, refusing a repeated key in any object; `path` names
/// the object for the message (`metadata.a`, `settlement.priorities[0]`).
struct UniqueKeys {
    path: String,
}

impl UniqueKeys {
    fn child(&self, key: &str) -> UniqueKeys {
        let path = if self.path.is_empty() {
            key.to_owned()
        } else {
            format!("{}.{key}", self.path)
        };
        UniqueKeys { path }
    }
}

impl<'de> DeserializeSeed<'de> for UniqueKeys {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for UniqueKeys {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(UniqueKeys {
            path: format!("{}[{}]", self.path, items.len()),
        })? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if out.contains_key(&key) {
                let at = if self.path.is_empty() {
                    String::new()
                } else {
                    format!(" in {}", self.path)
                };
                return Err(serde::de::Error::custom(format_args!(
                    "duplicate key {key:?}{at}"
                )));
            }
            let value = map.next_value_seed(self.child(&key))?;
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

/// Reads a JSON object into the route's request struct (`#[serde(deny_unknown_fields)]`), so the
/// struct that documents the body is the one that reads it. A body that does not fit is
/// refused naming the field by its path: an unknown one as `unknown_field`, a missing or
/// mistyped one as `validation_failed`.
pub fn from_object<T: DeserializeOwned>(map: Map<String, Value>) -> Result<T, ApiError> {
    serde_path_to_error::deserialize(Value::Object(map)).map_err(|e| {
        let path = e.path().to_string();
        shape_error(
            if path == "." { "" } else { &path },
            &e.into_inner().to_string(),
        )
    })
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_owned()
    } else {
        format!("{path}.{name}")
    }
}

/// The name between the first pair of backticks of a serde message.
fn quoted(message: &str) -> Option<&str> {
    let rest = message.split_once('`')?.1;
    Some(rest.split_once('`')?.0)
}

/// Turns serde's message for the value at `path` into the API's error. serde words these
/// messages itself (`unknown field `x`, expected ...`, `missing field `x``, `invalid type:
/// ..., expected a string`); the field deserializers below word theirs as `must be ...`.
fn shape_error(path: &str, message: &str) -> ApiError {
    let invalid =
        |field: &str, want: &str| ApiError::invalid(field, format!("{field} must be {want}"));
    if message.starts_with("unknown field") {
        // The path already ends with the unknown key.
        return ApiError::unknown_field(path);
    }
    if let Some(name) = message
        .strip_prefix("missing field ")
        .and_then(|_| quoted(message))
    {
        let field = join(path, name);
        return ApiError::invalid(&field, format!("{field} is required"));
    }
    if let Some(want) = message.strip_prefix("must be ") {
        return invalid(path, want);
    }
    let expected = message
        .rsplit_once(", expected ")
        .map(|(_, e)| e)
        .unwrap_or("");
    let want = match expected {
        "a string" => "a string",
        "a boolean" => "true or false",
        "a sequence" => "an array",
        "a map" => "a JSON object",
        e if e.starts_with("struct ") => "a JSON object",
        e if e.starts_with("a JSON number") || e.starts_with('i') || e.starts_with('u') => {
            "a number"
        }
        _ => "of another type",
    };
    invalid(path, want)
}

/// For `#[serde(default, deserialize_with = "crate::edge::json::non_null")]`: an optional field that
/// is not nullable (absent is `None`; `null` is refused).
pub fn non_null<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}

/// For `#[serde(default, deserialize_with = "crate::edge::json::nullable")]` in a partial update:
/// absent is `None`, `null` is `Some(None)` (clear the field).
pub fn nullable<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

/// The shortest exact text of a JSON number (`1`, `-0.5`, `0.25`).
pub fn number_text(n: &serde_json::Number) -> String {
    if let Some(i) = n.as_i64() {
        return i.to_string();
    }
    if let Some(u) = n.as_u64() {
        return u.to_string();
    }
    // A float: Rust prints the shortest text that round-trips; expand any exponent.
    let f = n.as_f64().unwrap_or(f64::NAN);
    let s = format!("{f}");
    if s.contains(['e', 'E']) {
        format!("{f:.18}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_owned()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    struct Inner {
        asset: String,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    struct Body {
        amount: String,
        #[serde(default)]
        title: Option<String>,
        #[serde(default, deserialize_with = "non_null")]
        hold: Option<bool>,
        #[serde(default, deserialize_with = "nullable")]
        url: Option<Option<String>>,
        #[serde(default)]
        items: Option<Vec<Inner>>,
        #[serde(default, deserialize_with = "non_null")]
        percent: Option<serde_json::Number>,
    }

    fn read(v: Value) -> Result<Body, ApiError> {
        match v {
            Value::Object(m) => from_object(m),
            _ => unreachable!(),
        }
    }

    #[track_caller]
    fn refused(v: Value) -> (&'static str, Option<String>, String) {
        let (_, code, message, field) = read(v).unwrap_err().parts();
        (code, field, message)
    }

    #[test]
    fn fields_are_read_by_the_struct() {
        let b = read(
            json!({"amount": "1", "title": null, "hold": true, "url": null,
                            "items": [{"asset": "a"}], "percent": -0.5}),
        )
        .unwrap();
        assert_eq!(b.amount, "1");
        assert_eq!(b.title, None);
        assert_eq!(b.hold, Some(true));
        assert_eq!(b.url, Some(None));
        assert_eq!(b.items.unwrap()[0].asset, "a");
        assert_eq!(number_text(&b.percent.unwrap()), "-0.5");
        let b = read(json!({"amount": "1", "url": "https://x.example"})).unwrap();
        assert_eq!(b.url, Some(Some("https://x.example".into())));
        assert_eq!((b.hold, b.percent), (None, None));
    }

    #[test]
    fn refusals_name_the_field_by_its_path() {
        let cases = [
            (
                json!({"amount": "1", "amout": "2"}),
                "unknown_field",
                "amout",
                "unknown field amout",
            ),
            (
                json!({"amount": "1", "items": [{"asset": "a"}, {"asset": "b", "chain": 1}]}),
                "unknown_field",
                "items[1].chain",
                "unknown field items[1].chain",
            ),
            (
                json!({}),
                "validation_failed",
                "amount",
                "amount is required",
            ),
            (
                json!({"amount": "1", "items": [{}]}),
                "validation_failed",
                "items[0].asset",
                "items[0].asset is required",
            ),
            (
                json!({"amount": 5}),
                "validation_failed",
                "amount",
                "amount must be a string",
            ),
            (
                json!({"amount": null}),
                "validation_failed",
                "amount",
                "amount must be a string",
            ),
            (
                json!({"amount": "1", "hold": "yes"}),
                "validation_failed",
                "hold",
                "hold must be true or false",
            ),
            (
                json!({"amount": "1", "hold": null}),
                "validation_failed",
                "hold",
                "hold must be true or false",
            ),
            (
                json!({"amount": "1", "items": {}}),
                "validation_failed",
                "items",
                "items must be an array",
            ),
            (
                json!({"amount": "1", "items": ["a"]}),
                "validation_failed",
                "items[0]",
                "items[0] must be a JSON object",
            ),
            (
                json!({"amount": "1", "percent": "1"}),
                "validation_failed",
                "percent",
                "percent must be a number",
            ),
            (
                json!({"amount": "1", "url": 3}),
                "validation_failed",
                "url",
                "url must be a string",
            ),
        ];
        for (body, code, field, message) in cases {
            let text = body.to_string();
            assert_eq!(
                refused(body),
                (code, Some(field.to_owned()), message.to_owned()),
                "{text}"
            );
        }
    }

    #[test]
    fn numbers_keep_their_exact_text() {
        for (v, t) in [
            (json!(1), "1"),
            (json!(-0.5), "-0.5"),
            (json!(0.25), "0.25"),
            (json!(1e-7), "0.0000001"),
        ] {
            let Value::Number(n) = v else { unreachable!() };
            assert_eq!(number_text(&n), t);
        }
    }

    #[test]
    fn duplicate_keys_are_refused_at_every_depth() {
        for bad in [
            r#"{"a":1,"a":1}"#,
            r#"{"a":{"b":1,"b":2}}"#,
            r#"{"a":[{"b":1},{"c":[{"d":1,"d":null}]}]}"#,
            r#"{"a":1,"\u0061":2}"#,
        ] {
            let e = parse_object(bad.as_bytes()).unwrap_err();
            assert!(
                matches!(&e, ApiError::InvalidJson(m) if m.contains("duplicate key")),
                "{bad}: {e:?}"
            );
        }
        let e = parse_object(br#"{"a":[{"c":[{"d":1,"d":null}]}]}"#).unwrap_err();
        assert!(e.to_string().contains("\"d\" in a[0].c[0]"), "{e}");
        // Keys may repeat across objects; values keep their JSON types and order.
        let m = parse_object(br#"{"b":{"a":1},"a":[1.5,-2,"x",null,true]}"#).unwrap();
        assert_eq!(
            Value::Object(m).to_string(),
            r#"{"b":{"a":1},"a":[1.5,-2,"x",null,true]}"#
        );
        assert!(parse_object(br#"{"a":1} {"a":2}"#).is_err());
    }

    #[test]
    fn bodies_must_be_objects() {
        assert!(parse_object(b"[]").is_err());
        assert!(parse_object(b"{").is_err());
        assert!(parse_object(b"{}").is_ok());
    }
}
