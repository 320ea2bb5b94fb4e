//! Strict JSON input: `application/json` only, at most 64 KiB, an object, no unknown fields,
//! and each field of the JSON type the route expects. Range and format rules are the domain's;
//! this module only turns JSON into typed Rust values, naming the field at fault.

use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::{FromRequest, HttpRequest};
use futures_util::future::LocalBoxFuture;
use futures_util::StreamExt;
use pay_domain::DomainError;
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::error::ApiError;

/// Largest JSON body accepted.
pub const MAX_JSON_BYTES: usize = 64 * 1024;

/// A JSON object body, read strictly. Extraction never fails the request by itself: the
/// handler authenticates first and only then looks at the body, so an unauthenticated caller
/// always gets the 401.
#[derive(Debug)]
pub struct JsonBody(pub Result<Map<String, Value>, ApiError>);

impl JsonBody {
    /// The object, with only the `allowed` fields.
    pub fn fields(self, allowed: &[&str]) -> Result<Fields, ApiError> {
        Fields::new(self.0?, allowed)
    }
}

fn is_json_content_type(req: &HttpRequest) -> bool {
    req.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            let essence = v.split(';').next().unwrap_or("").trim();
            essence.eq_ignore_ascii_case("application/json")
        })
        .unwrap_or(false)
}

impl FromRequest for JsonBody {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, Self::Error>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let json = is_json_content_type(req);
        let declared = req
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<usize>().ok());
        let mut payload = payload.take();
        Box::pin(async move { Ok(JsonBody(read(json, declared, &mut payload).await)) })
    }
}

async fn read(
    json: bool,
    declared: Option<usize>,
    payload: &mut Payload,
) -> Result<Map<String, Value>, ApiError> {
    if !json {
        return Err(ApiError::UnsupportedMediaType);
    }
    if declared.is_some_and(|n| n > MAX_JSON_BYTES) {
        return Err(ApiError::PayloadTooLarge(MAX_JSON_BYTES));
    }
    let mut body = Vec::with_capacity(declared.unwrap_or(1024).min(MAX_JSON_BYTES));
    while let Some(chunk) = payload.next().await {
        let chunk =
            chunk.map_err(|e| ApiError::InvalidJson(format!("could not read body: {e}")))?;
        if body.len() + chunk.len() > MAX_JSON_BYTES {
            return Err(ApiError::PayloadTooLarge(MAX_JSON_BYTES));
        }
        body.extend_from_slice(&chunk);
    }
    parse_object(&body)
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

fn type_error(field: &str, want: &str) -> ApiError {
    ApiError::Domain(DomainError::validation(
        field,
        format!("{field} must be {want}"),
    ))
}

/// Typed, field-naming access to a JSON object.
#[derive(Debug)]
pub struct Fields {
    map: Map<String, Value>,
}

impl Fields {
    /// Refuses the first field (in document order) that the route does not take.
    pub fn new(map: Map<String, Value>, allowed: &[&str]) -> Result<Fields, ApiError> {
        if let Some(k) = map.keys().find(|k| !allowed.contains(&k.as_str())) {
            return Err(ApiError::UnknownField(k.clone()));
        }
        Ok(Fields { map })
    }

    /// Whether the field is present (even as `null`).
    pub fn has(&self, field: &str) -> bool {
        self.map.contains_key(field)
    }

    /// The raw value of a field, for nested objects read by the caller.
    pub fn opt_value(&mut self, field: &str) -> Option<Value> {
        self.map.remove(field)
    }

    /// An optional string; absent or `null` is `None`.
    pub fn opt_string(&mut self, field: &str) -> Result<Option<String>, ApiError> {
        match self.map.remove(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(type_error(field, "a string")),
        }
    }

    /// A required string.
    pub fn string(&mut self, field: &str) -> Result<String, ApiError> {
        self.opt_string(field)?.ok_or_else(|| {
            ApiError::Domain(DomainError::validation(
                field,
                format!("{field} is required"),
            ))
        })
    }

    /// An optional boolean; absent or `null` is `None`.
    pub fn opt_bool(&mut self, field: &str) -> Result<Option<bool>, ApiError> {
        match self.map.remove(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(b)),
            Some(_) => Err(type_error(field, "true or false")),
        }
    }

    /// A required boolean.
    pub fn bool(&mut self, field: &str) -> Result<bool, ApiError> {
        self.opt_bool(field)?.ok_or_else(|| {
            ApiError::Domain(DomainError::validation(
                field,
                format!("{field} is required"),
            ))
        })
    }

    /// An optional JSON number, as its decimal text (`null` is refused: the field is not
    /// nullable).
    pub fn opt_number_text(&mut self, field: &str) -> Result<Option<String>, ApiError> {
        match self.map.remove(field) {
            None => Ok(None),
            Some(Value::Number(n)) => Ok(Some(number_text(&n))),
            Some(_) => Err(type_error(field, "a number")),
        }
    }

    /// A non-nullable field given as `null` is an error; absent is `None`.
    pub fn opt_nonnull_string(&mut self, field: &str) -> Result<Option<String>, ApiError> {
        match self.map.remove(field) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(type_error(field, "a string")),
        }
    }

    /// Like `opt_bool` but `null` is refused.
    pub fn opt_nonnull_bool(&mut self, field: &str) -> Result<Option<bool>, ApiError> {
        match self.map.remove(field) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(b)),
            Some(_) => Err(type_error(field, "true or false")),
        }
    }

    /// A nullable string in a partial update: absent `None`, `null` `Some(None)`.
    pub fn patch_nullable_string(
        &mut self,
        field: &str,
    ) -> Result<Option<Option<String>>, ApiError> {
        match self.map.remove(field) {
            None => Ok(None),
            Some(Value::Null) => Ok(Some(None)),
            Some(Value::String(s)) => Ok(Some(Some(s))),
            Some(_) => Err(type_error(field, "a string or null")),
        }
    }

    /// An optional JSON object; absent or `null` is `None`.
    pub fn opt_object(&mut self, field: &str) -> Result<Option<Map<String, Value>>, ApiError> {
        match self.map.remove(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Object(m)) => Ok(Some(m)),
            Some(_) => Err(type_error(field, "a JSON object")),
        }
    }

    /// An optional array of strings; absent or `null` is `None`.
    pub fn opt_string_array(&mut self, field: &str) -> Result<Option<Vec<String>>, ApiError> {
        match self.map.remove(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Array(items)) => items
                .into_iter()
                .enumerate()
                .map(|(i, v)| match v {
                    Value::String(s) => Ok(s),
                    _ => Err(type_error(&format!("{field}[{i}]"), "a string")),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(_) => Err(type_error(field, "an array of strings")),
        }
    }
}

/// The shortest exact text of a JSON number (`1`, `-0.5`, `0.25`).
fn number_text(n: &serde_json::Number) -> String {
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

    fn fields(v: Value, allowed: &[&str]) -> Result<Fields, ApiError> {
        match v {
            Value::Object(m) => Fields::new(m, allowed),
            _ => unreachable!(),
        }
    }

    #[test]
    fn unknown_fields_are_named() {
        let e = fields(json!({"amount": "1", "amout": "2"}), &["amount"]).unwrap_err();
        assert!(matches!(e, ApiError::UnknownField(f) if f == "amout"));
    }

    #[test]
    fn types_are_checked_per_field() {
        let mut f = fields(
            json!({"a": 1, "b": "x", "c": [1], "d": null}),
            &["a", "b", "c", "d"],
        )
        .unwrap();
        assert!(f.opt_string("a").is_err());
        assert!(f.opt_bool("b").is_err());
        assert!(f.opt_string_array("c").is_err());
        assert_eq!(f.patch_nullable_string("d").unwrap(), Some(None));
    }

    #[test]
    fn numbers_keep_their_exact_text() {
        for (v, t) in [
            (json!(1), "1"),
            (json!(-0.5), "-0.5"),
            (json!(0.25), "0.25"),
            (json!(1e-7), "0.0000001"),
        ] {
            let mut f = fields(json!({ "n": v }), &["n"]).unwrap();
            assert_eq!(f.opt_number_text("n").unwrap().unwrap(), t);
        }
    }

    #[test]
    fn duplicate_keys_are_refused_at_every_depth() {
        for bad in [
            r#"{"a":1,"a":1}"#,
            r#"{"a":{"b":1,"b":2}}"#,
            r#"{"a":[{"b":1},{"c":[{"d":1,"d":null}]}]}"#,
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
