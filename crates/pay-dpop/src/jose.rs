//! The small part of JOSE a DPoP proof needs: strict compact JWS splitting, JSON objects that
//! refuse repeated members, the algorithm allowlist, public JWKs and ring signature checks.
//! Deliberately no general JOSE library: every accepted shape is listed here.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use ring::signature::{UnparsedPublicKey, ECDSA_P256_SHA256_FIXED, ED25519};
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use crate::error::ProofError;

/// The JWS algorithms a DPoP proof may use. Everything else (`none`, HS*, RS*, PS*, ES384...)
/// is refused before any key is looked at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Alg {
    /// ECDSA P-256 with SHA-256, signature as the 64-byte `r || s` (RFC 7518 section 3.4).
    Es256,
    /// Ed25519 under the RFC 8037 name `EdDSA`.
    EdDsa,
    /// Ed25519 under the fully specified name `Ed25519`, which the npm `dpop` package sends.
    Ed25519,
}

impl Alg {
    /// Only exact, case-sensitive names: JOSE algorithm names are case-sensitive.
    pub fn from_name(name: &str) -> Option<Alg> {
        match name {
            "ES256" => Some(Alg::Es256),
            "EdDSA" => Some(Alg::EdDsa),
            "Ed25519" => Some(Alg::Ed25519),
            _ => None,
        }
    }

    /// The `alg` header value, as it appeared in the proof.
    pub fn as_str(self) -> &'static str {
        match self {
            Alg::Es256 => "ES256",
            Alg::EdDsa => "EdDSA",
            Alg::Ed25519 => "Ed25519",
        }
    }

    fn is_ed25519(self) -> bool {
        matches!(self, Alg::EdDsa | Alg::Ed25519)
    }
}

/// JWK members that only private or symmetric keys have (RFC 7518 section 6).
const PRIVATE_MEMBERS: [&str; 8] = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"];

/// A validated public key from a proof's `jwk` header. The base64url strings are kept as sent
/// (they are canonical, having been decoded strictly) because the thumbprint hashes them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PublicJwk {
    P256 {
        x: String,
        y: String,
        /// SEC1 uncompressed point `04 || x || y`, the form ring verifies with.
        point: Vec<u8>,
    },
    Ed25519 {
        x: String,
        key: Vec<u8>,
    },
}

impl PublicJwk {
    /// Parses the `jwk` header for use with `alg`. Private members are looked for first, so a
    /// leaked private key is reported as such whatever else is wrong with it.
    pub(crate) fn parse(jwk: &Map<String, Value>, alg: Alg) -> Result<PublicJwk, ProofError> {
        if PRIVATE_MEMBERS.iter().any(|m| jwk.contains_key(*m)) {
            return Err(ProofError::PrivateKey);
        }
        if let Some(usage) = jwk.get("use") {
            if usage.as_str() != Some("sig") {
                return Err(ProofError::InvalidJwk);
            }
        }
        if let Some(key_alg) = jwk.get("alg") {
            let key_alg = key_alg
                .as_str()
                .and_then(Alg::from_name)
                .ok_or(ProofError::AlgorithmKeyMismatch)?;
            // EdDSA and Ed25519 name the same signature; ES256 only itself.
            if key_alg != alg && !(key_alg.is_ed25519() && alg.is_ed25519()) {
                return Err(ProofError::AlgorithmKeyMismatch);
            }
        }
        let kty = jwk.get("kty").and_then(Value::as_str);
        let crv = jwk.get("crv").and_then(Value::as_str);
        let key = match (kty, crv) {
            (Some("EC"), Some("P-256")) => {
                let x = coordinate(jwk, "x")?;
                let y = coordinate(jwk, "y")?;
                let mut point = Vec::with_capacity(65);
                point.push(0x04);
                point.extend_from_slice(&x.1);
                point.extend_from_slice(&y.1);
                PublicJwk::P256 {
                    x: x.0,
                    y: y.0,
                    point,
                }
            }
            (Some("OKP"), Some("Ed25519")) => {
                let (x, key) = coordinate(jwk, "x")?;
                PublicJwk::Ed25519 { x, key }
            }
            // A well-formed key of a type no allowed alg uses: the pairing is what is wrong.
            (Some("EC"), Some("P-384" | "P-521" | "secp256k1"))
            | (Some("OKP"), Some("Ed448"))
            | (Some("RSA"), None) => return Err(ProofError::AlgorithmKeyMismatch),
            _ => return Err(ProofError::InvalidJwk),
        };
        match (&key, alg.is_ed25519()) {
            (PublicJwk::P256 { .. }, false) | (PublicJwk::Ed25519 { .. }, true) => Ok(key),
            _ => Err(ProofError::AlgorithmKeyMismatch),
        }
    }

    /// Verifies a JWS signature over `signing_input` (`header.payload`, as received).
    pub(crate) fn verify(&self, signing_input: &[u8], signature: &[u8]) -> Result<(), ProofError> {
        // Both algorithms have 64-byte signatures; anything else is not worth handing to ring.
        if signature.len() != 64 {
            return Err(ProofError::BadSignature);
        }
        let result = match self {
            PublicJwk::P256 { point, .. } => {
                UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, point)
                    .verify(signing_input, signature)
            }
            PublicJwk::Ed25519 { key, .. } => {
                UnparsedPublicKey::new(&ED25519, key).verify(signing_input, signature)
            }
        };
        result.map_err(|_| ProofError::BadSignature)
    }

    /// The RFC 7638 hash input: required members only, in lexicographic order.
    pub(crate) fn thumbprint_members(&self) -> Vec<(&'static str, &str)> {
        match self {
            PublicJwk::P256 { x, y, .. } => {
                vec![("crv", "P-256"), ("kty", "EC"), ("x", x), ("y", y)]
            }
            PublicJwk::Ed25519 { x, .. } => vec![("crv", "Ed25519"), ("kty", "OKP"), ("x", x)],
        }
    }
}

/// A 32-byte key coordinate: a string of canonical unpadded base64url, kept with its bytes.
fn coordinate(jwk: &Map<String, Value>, name: &str) -> Result<(String, Vec<u8>), ProofError> {
    let text = jwk
        .get(name)
        .and_then(Value::as_str)
        .ok_or(ProofError::InvalidJwk)?;
    let bytes = b64url_decode(text).ok_or(ProofError::InvalidJwk)?;
    if bytes.len() != 32 {
        return Err(ProofError::InvalidJwk);
    }
    Ok((text.to_owned(), bytes))
}

/// Strict base64url: URL alphabet only, no padding, no non-zero trailing bits, so each byte
/// string has exactly one accepted spelling.
pub(crate) fn b64url_decode(text: &str) -> Option<Vec<u8>> {
    URL_SAFE_NO_PAD.decode(text).ok()
}

pub(crate) fn b64url_encode(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// A compact JWS split into its three segments, still base64url; the signing input is
/// borrowed from the header value.
#[derive(Debug)]
pub(crate) struct CompactJws<'a> {
    pub(crate) header: &'a str,
    pub(crate) payload: &'a str,
    pub(crate) signature: &'a str,
    pub(crate) signing_input: &'a str,
}

impl<'a> CompactJws<'a> {
    /// Exactly three non-empty segments. The length cap is the caller's, checked first; each
    /// segment's strict base64url and JSON are the caller's next steps (`b64url_decode`,
    /// `json_object`, `Claims::parse`).
    pub(crate) fn split(value: &'a str) -> Result<CompactJws<'a>, ProofError> {
        let mut segments = value.split('.');
        let (Some(h), Some(p), Some(s), None) = (
            segments.next(),
            segments.next(),
            segments.next(),
            segments.next(),
        ) else {
            return Err(ProofError::MalformedJws);
        };
        if h.is_empty() || p.is_empty() || s.is_empty() {
            return Err(ProofError::MalformedJws);
        }
        Ok(CompactJws {
            header: h,
            payload: p,
            signature: s,
            signing_input: &value[..h.len() + 1 + p.len()],
        })
    }
}

/// A JSON object whose members, at every depth, have unique names. RFC 7515 section 5.2
/// lets a parser refuse repeats, and refusing closes the "which `alg` did you read" gap
/// between us and whatever signed the proof.
pub(crate) fn json_object(bytes: &[u8]) -> Result<Map<String, Value>, ProofError> {
    match serde_json::from_slice::<Strict>(bytes) {
        Ok(Strict(Value::Object(map))) => Ok(map),
        _ => Err(ProofError::MalformedJson),
    }
}

/// A `serde_json::Value` whose deserializer errors on a repeated object member.
pub(crate) struct Strict(Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(StrictVisitor)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Strict;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Strict, E> {
        Ok(Strict(Value::Bool(v)))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Strict, E> {
        Ok(Strict(Value::Number(v.into())))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Strict, E> {
        Ok(Strict(Value::Number(v.into())))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Strict, E> {
        Number::from_f64(v)
            .map(|n| Strict(Value::Number(n)))
            .ok_or_else(|| E::custom("not a finite number"))
    }

    fn visit_str<E>(self, v: &str) -> Result<Strict, E> {
        Ok(Strict(Value::String(v.to_owned())))
    }

    fn visit_string<E>(self, v: String) -> Result<Strict, E> {
        Ok(Strict(Value::String(v)))
    }

    fn visit_unit<E>(self) -> Result<Strict, E> {
        Ok(Strict(Value::Null))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Strict, A::Error> {
        let mut items = Vec::new();
        while let Some(Strict(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Strict(Value::Array(items)))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Strict, A::Error> {
        let mut map = Map::new();
        while let Some(key) = access.next_key::<String>()? {
            if map.contains_key(&key) {
                return Err(de::Error::custom("repeated member name"));
            }
            let Strict(value) = access.next_value()?;
            map.insert(key, value);
        }
        Ok(Strict(Value::Object(map)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => unreachable!("the tests pass objects"),
        }
    }

    /// RFC 8037 appendix A.4: the Ed25519 JWS over "Example of Ed25519 signing", checked with
    /// the appendix A.2 public key through the same code path proofs use.
    #[test]
    fn rfc8037_a4_ed25519_signature_verifies() {
        let jws = concat!(
            "eyJhbGciOiJFZERTQSJ9.RXhhbXBsZSBvZiBFZDI1NTE5IHNpZ25pbmc.",
            "hgyY0il_MGCjP0JzlnLWG1PPOt7-09PGcvMg3AIbQR6dWbhijcNR4ki4iylGjg5BhVsPt9g7sVvpAr_MuM0KAg"
        );
        let (input, sig) = jws.rsplit_once('.').unwrap();
        let key = PublicJwk::parse(
            &object(json!({"kty": "OKP", "crv": "Ed25519",
                           "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"})),
            Alg::EdDsa,
        )
        .unwrap();
        let sig = b64url_decode(sig).unwrap();
        assert_eq!(key.verify(input.as_bytes(), &sig), Ok(()));
        assert_eq!(
            key.verify(b"Example of Ed25519 signinG", &sig),
            Err(ProofError::BadSignature)
        );
    }

    #[test]
    fn repeated_members_are_refused_at_any_depth() {
        assert!(json_object(br#"{"alg":"ES256","alg":"none"}"#).is_err());
        assert!(json_object(br#"{"jwk":{"x":"a","x":"b"}}"#).is_err());
        assert!(json_object(br#"{"a":[{"b":1,"b":2}]}"#).is_err());
        assert!(json_object(br#"{"a":[{"b":1},{"b":2}],"c":null,"d":1.5}"#).is_ok());
        assert!(json_object(br#"[1]"#).is_err());
        assert!(json_object(br#"{"a":1} x"#).is_err());
    }

    #[test]
    fn base64url_is_strict() {
        assert_eq!(b64url_decode("AQAB"), Some(vec![1, 0, 1]));
        assert_eq!(b64url_decode("AQ"), Some(vec![1]));
        assert_eq!(b64url_decode("AQ=="), None, "padding");
        assert_eq!(b64url_decode("AR"), None, "non-zero trailing bits");
        assert_eq!(b64url_decode("A+/B"), None, "standard alphabet");
        assert_eq!(b64url_decode("A"), None, "impossible length");
    }

    #[test]
    fn alg_names_are_exact() {
        for name in ["ES256", "EdDSA", "Ed25519"] {
            assert_eq!(Alg::from_name(name).map(Alg::as_str), Some(name));
        }
        for name in [
            "es256", "none", "HS256", "RS256", "PS256", "ES384", "EDDSA", "",
        ] {
            assert_eq!(Alg::from_name(name), None, "{name}");
        }
    }
}
