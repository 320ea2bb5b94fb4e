//! RFC 7638 JWK SHA-256 thumbprints: the `jkt` a token, a refresh family or a native
//! installation is bound to, and what a proof key is compared with.

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::error::ThumbprintError;
use crate::jose::b64url_encode;

/// The RFC 7638 thumbprint of a JWK: SHA-256 over the required members only (EC: crv, kty, x,
/// y; RSA: e, kty, n; OKP: crv, kty, x), in lexicographic order, without whitespace, as
/// unpadded base64url.
///
/// Other members (`kid`, `alg`, `use`...) are ignored, so decorating a key never changes its
/// identity. The values are hashed as sent, not validated: this is identity, not key checking
/// (a proof's key is validated by [`crate::verify_proof`] before it is hashed).
pub fn jwk_thumbprint(jwk: &Value) -> Result<String, ThumbprintError> {
    let jwk = jwk.as_object().ok_or(ThumbprintError::NotAnObject)?;
    let names: &[&'static str] = match jwk.get("kty").and_then(Value::as_str) {
        Some("EC") => &["crv", "kty", "x", "y"],
        Some("RSA") => &["e", "kty", "n"],
        Some("OKP") => &["crv", "kty", "x"],
        _ => return Err(ThumbprintError::UnsupportedKeyType),
    };
    let mut members = Vec::with_capacity(names.len());
    for &name in names {
        let value = jwk
            .get(name)
            .and_then(Value::as_str)
            .ok_or(ThumbprintError::MissingMember(name))?;
        members.push((name, value));
    }
    Ok(thumbprint_of(&members))
}

/// Hashes members already in RFC 7638 order. Values go through the JSON string encoder, so a
/// quote or backslash in a value cannot change the structure of the hash input.
pub(crate) fn thumbprint_of(members: &[(&str, &str)]) -> String {
    let mut input = String::from("{");
    for (i, (name, value)) in members.iter().enumerate() {
        if i > 0 {
            input.push(',');
        }
        input.push_str(&Value::from(*name).to_string());
        input.push(':');
        input.push_str(&Value::from(*value).to_string());
    }
    input.push('}');
    b64url_encode(&Sha256::digest(input.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The exact bytes RFC 7638 section 3.3 says are hashed, for an EC key.
    #[test]
    fn hash_input_is_sorted_and_compact() {
        let members = [("crv", "P-256"), ("kty", "EC"), ("x", "ab"), ("y", "cd")];
        let expected = r#"{"crv":"P-256","kty":"EC","x":"ab","y":"cd"}"#;
        assert_eq!(
            thumbprint_of(&members),
            b64url_encode(&Sha256::digest(expected.as_bytes()))
        );
    }

    #[test]
    fn refuses_what_it_cannot_hash() {
        assert_eq!(
            jwk_thumbprint(&json!("EC")),
            Err(ThumbprintError::NotAnObject)
        );
        assert_eq!(
            jwk_thumbprint(&json!({"kty": "oct", "k": "AAAA"})),
            Err(ThumbprintError::UnsupportedKeyType)
        );
        assert_eq!(
            jwk_thumbprint(&json!({"kty": "EC", "crv": "P-256", "x": "AAAA"})),
            Err(ThumbprintError::MissingMember("y"))
        );
        assert_eq!(
            jwk_thumbprint(&json!({"kty": "OKP", "crv": "Ed25519", "x": 5})),
            Err(ThumbprintError::MissingMember("x"))
        );
    }
}
