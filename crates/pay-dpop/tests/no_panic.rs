//! Property tests: whatever a client puts in a `DPoP` header or JWK, the
//! verifier answers with a value, never a panic (a panic in a request handler is at best a
//! 500, at worst a poisoned lock); and no edit of a valid proof is ever accepted.

mod common;

use std::sync::OnceLock;

use common::{b64, check, TestKey};
use pay_dpop::{jwk_thumbprint, verify_proof, ProofCheck, ProofError};
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{json, Value};

const B64URL: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Strings over the base64url alphabet plus the characters a hostile segment would try.
fn segment() -> impl Strategy<Value = String> {
    let mut alphabet: Vec<char> = B64URL.iter().map(|&b| b as char).collect();
    alphabet.extend(['=', '+', '/', ' ', '%', '\u{e9}']);
    prop::collection::vec(select(alphabet), 0..200).prop_map(|chars| chars.into_iter().collect())
}

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(any::<char>(), 0..80).prop_map(|chars| chars.into_iter().collect())
}

/// A JSON value a hostile client might put in any member.
fn json_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        text().prop_map(Value::from),
        prop::collection::vec(any::<u8>(), 0..48).prop_map(|b| Value::from(b64(b))),
    ]
}

/// Headers and claims shaped like a proof, with every member drawn from plausible values.
fn proof_parts() -> impl Strategy<Value = (Value, Value)> {
    let header = (
        select(vec!["dpop+jwt", "JWT", ""]),
        select(vec!["ES256", "EdDSA", "Ed25519", "none", "HS256", "RS256"]),
        select(vec!["EC", "OKP", "RSA", "oct"]),
        select(vec!["P-256", "Ed25519", "P-384"]),
        json_value(),
        json_value(),
        any::<bool>(),
    )
        .prop_map(|(typ, alg, kty, crv, x, y, private)| {
            let mut jwk = json!({"kty": kty, "crv": crv, "x": x, "y": y});
            if private {
                jwk["d"] = json!("AQAB");
            }
            json!({"typ": typ, "alg": alg, "jwk": jwk})
        });
    let claims = (json_value(), json_value(), json_value(), json_value(), json_value())
        .prop_map(|(jti, htm, htu, iat, ath)| {
            json!({"jti": jti, "htm": htm, "htu": htu, "iat": iat, "ath": ath})
        });
    (header, claims)
}

fn key() -> &'static TestKey {
    static KEY: OnceLock<TestKey> = OnceLock::new();
    KEY.get_or_init(TestKey::ed25519)
}

fn valid_proof() -> &'static str {
    static PROOF: OnceLock<String> = OnceLock::new();
    PROOF.get_or_init(|| common::proof(key()))
}

/// URI-shaped strings, so the `htu` parser sees many near-misses rather than only noise.
fn uri_like() -> impl Strategy<Value = String> {
    let alphabet: Vec<char> = "aZ09-._~:/?#[]@%!$&'()*+,;= \u{e9}".chars().collect();
    (
        select(vec!["https://", "http://", "HTTPS://", "ftp://", "//", ""]),
        prop::collection::vec(select(alphabet), 0..40),
    )
        .prop_map(|(scheme, rest)| format!("{scheme}{}", rest.into_iter().collect::<String>()))
}

proptest! {
    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        let value = String::from_utf8_lossy(&bytes);
        prop_assert!(verify_proof(&[&value], &check()).is_err());
        prop_assert_eq!(
            verify_proof(&[&value, &value], &check()),
            Err(ProofError::MultipleHeaders)
        );
    }

    #[test]
    fn random_three_segment_strings_never_panic(h in segment(), p in segment(), s in segment()) {
        let value = format!("{h}.{p}.{s}");
        prop_assert!(verify_proof(&[&value], &check()).is_err());
    }

    #[test]
    fn random_proof_shaped_json_never_panics(
        (header, claims) in proof_parts(),
        signature in prop::collection::vec(any::<u8>(), 0..100),
    ) {
        let value = format!(
            "{}.{}.{}",
            b64(header.to_string()),
            b64(claims.to_string()),
            b64(signature)
        );
        prop_assert!(verify_proof(&[&value], &check()).is_err());
    }

    #[test]
    fn signed_random_claims_never_panic(
        (_, mut claims) in proof_parts(),
        htu in uri_like(),
        target in uri_like(),
        method in text(),
        now in any::<i64>(),
    ) {
        // A real signature, so the claim checks are reached with hostile values.
        claims["htu"] = json!(htu);
        let proof = common::sign(&common::header(key()), &claims, key());
        let _ = verify_proof(&[&proof], &ProofCheck::new(&method, &target, now));
        let _ = verify_proof(&[&proof], &ProofCheck::new(common::METHOD, &target, common::NOW));
        let _ = verify_proof(&[valid_proof()], &ProofCheck::new(&method, &target, now));
    }

    #[test]
    fn no_single_character_edit_of_a_valid_proof_is_accepted(
        index in any::<prop::sample::Index>(),
        replacement in select(B64URL.to_vec()),
    ) {
        let original = valid_proof().as_bytes();
        let index = index.index(original.len());
        prop_assume!(original[index] != replacement && original[index] != b'.');
        let mut edited = original.to_vec();
        edited[index] = replacement;
        let edited = String::from_utf8(edited).unwrap();
        prop_assert!(verify_proof(&[&edited], &check()).is_err());
    }

    #[test]
    fn thumbprints_never_panic(
        member in json_value(),
        kty in select(vec!["EC", "RSA", "OKP", "oct"]),
    ) {
        let m = &member;
        let jwk = json!({"kty": kty, "crv": m, "x": m, "y": m, "n": m, "e": m});
        let _ = jwk_thumbprint(&jwk);
        let _ = jwk_thumbprint(&member);
    }
}
