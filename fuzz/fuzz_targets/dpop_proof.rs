//! The DPoP proof verifier (`pay_dpop::verify_proof`), three ways by the first byte:
//! 0: the input is the `DPoP` header value as sent (parse, size cap, refusals);
//! 1: the input is the claims JSON, signed with a fixed Ed25519 key under a correct header,
//!    so the claim rules run past the signature; an independent reading of the claims says
//!    when the proof must be accepted, and an accepted proof must carry exactly those claims;
//! 2: the input is the header JSON, signed with that key over valid claims: an accepted
//!    proof names that key (its thumbprint), `typ` `dpop+jwt` and no `crit`.
#![no_main]

use std::sync::OnceLock;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use libfuzzer_sys::fuzz_target;
use pay_dpop::{verify_proof, ProofCheck, ProofError, MAX_JTI_CHARS, MAX_PROOF_LEN};
use ring::signature::{Ed25519KeyPair, KeyPair as _};
use serde_json::{json, Value};

const NOW: i64 = 1_700_000_000;
const METHOD: &str = "POST";
const URI: &str = "https://api.pay.example/oauth/token";

struct Key {
    pair: Ed25519KeyPair,
    jwk: Value,
    jkt: String,
}

fn key() -> &'static Key {
    static KEY: OnceLock<Key> = OnceLock::new();
    KEY.get_or_init(|| {
        let pair = Ed25519KeyPair::from_seed_unchecked(&[7u8; 32]).expect("a 32-byte seed");
        let x = URL_SAFE_NO_PAD.encode(pair.public_key().as_ref());
        // RFC 7638 written out literally, hashed with ring: not the crate's code.
        let input = format!(r#"{{"crv":"Ed25519","kty":"OKP","x":"{x}"}}"#);
        let jkt = URL_SAFE_NO_PAD.encode(ring::digest::digest(
            &ring::digest::SHA256,
            input.as_bytes(),
        ));
        let jwk = json!({"kty": "OKP", "crv": "Ed25519", "x": x});
        Key { pair, jwk, jkt }
    })
}

fn sign(header: &[u8], claims: &[u8]) -> String {
    let input = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header),
        URL_SAFE_NO_PAD.encode(claims)
    );
    let signature = key().pair.sign(input.as_bytes());
    format!("{input}.{}", URL_SAFE_NO_PAD.encode(signature.as_ref()))
}

fn check() -> ProofCheck<'static> {
    ProofCheck::new(METHOD, URI, NOW)
}

/// What an accepted proof must hold whatever its input.
fn holds(proof: &pay_dpop::VerifiedProof) {
    assert_eq!(proof.htm, METHOD);
    assert_eq!(proof.htu, URI);
    let n = proof.jti.chars().count();
    assert!((1..=MAX_JTI_CHARS).contains(&n));
    assert!(proof.iat >= NOW - pay_dpop::DEFAULT_MAX_AGE_SECS);
    assert!(proof.iat <= NOW + pay_dpop::DEFAULT_MAX_SKEW_AHEAD_SECS);
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    match mode % 3 {
        0 => {
            let Ok(value) = std::str::from_utf8(rest) else {
                return;
            };
            let result = verify_proof(&[value], &check());
            if value.len() > MAX_PROOF_LEN {
                assert_eq!(result, Err(ProofError::TooLarge));
            }
            // Nobody but the fixed key's holder signs, and its proofs come from modes 1 and 2.
            if let Ok(proof) = result {
                holds(&proof);
            }
            assert_eq!(
                verify_proof(&[value, value], &check()),
                Err(ProofError::MultipleHeaders)
            );
        }
        1 => {
            let header = json!({"typ": "dpop+jwt", "alg": "EdDSA", "jwk": key().jwk});
            let proof = sign(header.to_string().as_bytes(), rest);
            let result = verify_proof(&[&proof], &check());
            let expected = must_accept(rest);
            if proof.len() > MAX_PROOF_LEN {
                assert_eq!(result, Err(ProofError::TooLarge));
                return;
            }
            match (&result, expected) {
                (Ok(p), Some((jti, iat))) => {
                    holds(p);
                    assert_eq!(p.jti, jti);
                    assert_eq!(p.iat, iat);
                    assert_eq!(p.jkt, key().jkt);
                }
                (Ok(p), None) => {
                    // Accepted claims an exact reading did not: only through URI normalisation
                    // (another spelling of the same URI) may that happen.
                    holds(p);
                }
                (Err(e), Some(_)) => panic!("valid claims refused: {e:?}"),
                (Err(_), None) => {}
            }
        }
        _ => {
            let claims = json!({"jti": "jti-4c1f9a0e2b7d", "htm": METHOD, "htu": URI, "iat": NOW});
            let proof = sign(rest, claims.to_string().as_bytes());
            if let Ok(p) = verify_proof(&[&proof], &check()) {
                holds(&p);
                assert_eq!(p.jkt, key().jkt, "accepted with a key it does not name");
                let header: serde_json::Map<String, Value> =
                    serde_json::from_slice(rest).expect("an accepted header is a JSON object");
                assert_eq!(header.get("typ"), Some(&json!("dpop+jwt")));
                assert!(!header.contains_key("crit"));
            }
        }
    }
});

/// The claims an exact reading accepts (jti 1 to 256 characters, `htm` the method, `htu`
/// the URI as written, integer `iat` in the window, and nothing the check does not ask for
/// is looked at): `Some((jti, iat))`.
fn must_accept(claims: &[u8]) -> Option<(String, i64)> {
    // RFC 7515 section 5.2: a repeated member name anywhere is refused.
    serde_json::from_slice::<Unique>(claims).ok()?;
    let Ok(Value::Object(map)) = serde_json::from_slice::<Value>(claims) else {
        return None;
    };
    let jti = map.get("jti")?.as_str()?;
    let n = jti.chars().count();
    if n == 0 || n > MAX_JTI_CHARS {
        return None;
    }
    if map.get("htm")?.as_str()? != METHOD || map.get("htu")?.as_str()? != URI {
        return None;
    }
    let iat = map.get("iat")?.as_i64()?;
    let window = NOW - pay_dpop::DEFAULT_MAX_AGE_SECS..=NOW + pay_dpop::DEFAULT_MAX_SKEW_AHEAD_SECS;
    window.contains(&iat).then(|| (jti.to_owned(), iat))
}

/// Deserializes any JSON value and fails on an object member named twice, at any depth.
struct Unique;

impl<'de> serde::Deserialize<'de> for Unique {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(UniqueVisitor)
    }
}

struct UniqueVisitor;

impl<'de> serde::de::Visitor<'de> for UniqueVisitor {
    type Value = Unique;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JSON")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_str<E>(self, _: &str) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_unit<E>(self) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Unique, A::Error> {
        while seq.next_element::<Unique>()?.is_some() {}
        Ok(Unique)
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Unique, A::Error> {
        let mut seen = std::collections::HashSet::new();
        while let Some(k) = map.next_key::<String>()? {
            if !seen.insert(k) {
                return Err(serde::de::Error::custom("a repeated member"));
            }
            map.next_value::<Unique>()?;
        }
        Ok(Unique)
    }
}
