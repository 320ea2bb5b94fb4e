//! Form fields into a request struct: the (name, value) pairs of a strictly decoded
//! `application/x-www-form-urlencoded` body or query (`pages::gateway::decode_form`) are read
//! by a `Deserialize` struct, so the struct that documents a form is the one that reads it.
//! A name given twice is refused (RFC 6749 section 3.1: parameters MUST NOT repeat).

use serde::de::DeserializeOwned;

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

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize, PartialEq)]
    struct F {
        a: String,
        b: Option<String>,
    }

    fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn reads_refuses_repeats_and_treats_empty_as_absent() {
        let f: F = read(&pairs(&[("a", "1"), ("b", ""), ("c", "x")])).unwrap();
        assert_eq!(
            f,
            F {
                a: "1".into(),
                b: None
            }
        );
        assert!(read::<F>(&pairs(&[("a", "1"), ("a", "2")]))
            .unwrap_err()
            .contains("more than once"));
        assert_eq!(read::<F>(&pairs(&[])).unwrap_err(), "a is required");
    }
}
