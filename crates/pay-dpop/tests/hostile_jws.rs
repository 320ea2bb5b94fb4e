//! Hostile proofs, part one: the envelope, the header and the key. Each test bends one thing
//! of an otherwise valid proof, signed for real, so the refusal is due to that one thing.

mod common;

use common::{b64, check, claims, header, proof, proof_with_header, sign, sign_raw, TestKey};
use pay_dpop::{verify_proof, ProofError, MAX_PROOF_LEN};
use serde_json::{json, Value};

fn verify(proof: &str) -> Result<pay_dpop::VerifiedProof, ProofError> {
    verify_proof(&[proof], &check())
}

#[test]
fn baseline_proofs_verify() {
    for key in [TestKey::p256(), TestKey::ed25519()] {
        assert!(verify(&proof(&key)).is_ok());
    }
}

#[test]
fn zero_dpop_headers_are_refused() {
    assert_eq!(verify_proof(&[], &check()), Err(ProofError::Missing));
}

#[test]
fn two_dpop_headers_are_refused_even_when_both_are_valid() {
    let key = TestKey::p256();
    let (a, b) = (proof(&key), proof(&key));
    assert_eq!(
        verify_proof(&[&a, &b], &check()),
        Err(ProofError::MultipleHeaders)
    );
    assert_eq!(
        verify_proof(&[&a, &a], &check()),
        Err(ProofError::MultipleHeaders)
    );
}

#[test]
fn alg_none_is_refused() {
    let key = TestKey::p256();
    let mut header = header(&key);
    header["alg"] = json!("none");
    // The classic unsigned form, with an empty signature segment...
    let unsigned = format!("{}.{}.", b64(header.to_string()), b64(claims().to_string()));
    assert_eq!(verify(&unsigned), Err(ProofError::MalformedJws));
    // ...and with a real signature attached, which changes nothing.
    assert_eq!(
        verify(&sign(&header, &claims(), &key)),
        Err(ProofError::UnsupportedAlgorithm)
    );
}

#[test]
fn hs256_keyed_with_the_public_key_is_refused() {
    // Algorithm confusion: an HMAC "signature" keyed with public key bytes anyone knows.
    let key = TestKey::p256();
    let mut header = header(&key);
    header["alg"] = json!("HS256");
    let input = format!("{}.{}", b64(header.to_string()), b64(claims().to_string()));
    let hmac_key = ring::hmac::Key::new(
        ring::hmac::HMAC_SHA256,
        header["jwk"]["x"].as_str().unwrap().as_bytes(),
    );
    let tag = ring::hmac::sign(&hmac_key, input.as_bytes());
    let forged = format!("{input}.{}", b64(tag));
    assert_eq!(verify(&forged), Err(ProofError::UnsupportedAlgorithm));
}

#[test]
fn other_algorithms_are_refused() {
    let key = TestKey::p256();
    for alg in [
        json!("RS256"),
        json!("PS256"),
        json!("ES384"),
        json!("es256"),
        json!(null),
        json!(256),
    ] {
        let proof = proof_with_header(&key, |h| h["alg"] = alg.clone());
        assert_eq!(
            verify(&proof),
            Err(ProofError::UnsupportedAlgorithm),
            "{alg}"
        );
    }
    let proof = proof_with_header(&key, |h| {
        h.as_object_mut().unwrap().remove("alg");
    });
    assert_eq!(verify(&proof), Err(ProofError::UnsupportedAlgorithm));
}

#[test]
fn wrong_typ_is_refused() {
    let key = TestKey::p256();
    for typ in [
        json!("JWT"),
        json!("DPoP+JWT"),
        json!("application/dpop+jwt"),
        json!(""),
        json!(1),
    ] {
        let proof = proof_with_header(&key, |h| h["typ"] = typ.clone());
        assert_eq!(verify(&proof), Err(ProofError::WrongType), "{typ}");
    }
    let proof = proof_with_header(&key, |h| {
        h.as_object_mut().unwrap().remove("typ");
    });
    assert_eq!(verify(&proof), Err(ProofError::WrongType));
}

#[test]
fn private_jwk_is_refused() {
    let key = TestKey::p256();
    let proof = proof_with_header(&key, |h| h["jwk"]["d"] = json!(b64([7u8; 32])));
    assert_eq!(verify(&proof), Err(ProofError::PrivateKey));
    // Every private or symmetric member, on both key types.
    for key in [TestKey::p256(), TestKey::ed25519()] {
        for member in ["d", "p", "q", "dp", "dq", "qi", "oth", "k"] {
            let proof = proof_with_header(&key, |h| h["jwk"][member] = json!("AQAB"));
            assert_eq!(verify(&proof), Err(ProofError::PrivateKey), "{member}");
        }
    }
}

#[test]
fn p256_jwk_with_a_31_byte_coordinate_is_refused() {
    let key = TestKey::p256();
    for (member, len) in [("x", 31), ("y", 31), ("x", 33), ("y", 0)] {
        let proof = proof_with_header(&key, |h| h["jwk"][member] = json!(b64(vec![1u8; len])));
        assert_eq!(
            verify(&proof),
            Err(ProofError::InvalidJwk),
            "{member} {len}"
        );
    }
    // A 32-byte coordinate spelled with padding or the standard alphabet is not base64url.
    let padded = proof_with_header(&key, |h| {
        let x = h["jwk"]["x"].as_str().unwrap().to_owned();
        h["jwk"]["x"] = json!(format!("{x}="));
    });
    assert_eq!(verify(&padded), Err(ProofError::InvalidJwk));
}

#[test]
fn ed25519_jwk_with_a_wrong_length_is_refused() {
    let key = TestKey::ed25519();
    for len in [31, 33, 64] {
        let proof = proof_with_header(&key, |h| h["jwk"]["x"] = json!(b64(vec![9u8; len])));
        assert_eq!(verify(&proof), Err(ProofError::InvalidJwk), "{len}");
    }
}

#[test]
fn kty_and_crv_that_disagree_are_refused() {
    let ec = TestKey::p256();
    let proof = proof_with_header(&ec, |h| h["jwk"]["kty"] = json!("OKP"));
    assert_eq!(verify(&proof), Err(ProofError::InvalidJwk));
    let ed = TestKey::ed25519();
    let proof = proof_with_header(&ed, |h| h["jwk"]["kty"] = json!("EC"));
    assert_eq!(verify(&proof), Err(ProofError::InvalidJwk));
    for jwk in [
        json!({"kty": "oct"}),
        json!({"crv": "P-256"}),
        json!({}),
        json!("key"),
        json!(null),
    ] {
        let proof = proof_with_header(&ec, |h| h["jwk"] = jwk.clone());
        let expected = if jwk.is_object() {
            ProofError::InvalidJwk
        } else {
            ProofError::MissingJwk
        };
        assert_eq!(verify(&proof), Err(expected), "{jwk}");
    }
}

#[test]
fn alg_and_key_that_disagree_are_refused() {
    // ES256 naming an Ed25519 key, signed by that key.
    let ed = TestKey::ed25519();
    let proof = proof_with_header(&ed, |h| h["alg"] = json!("ES256"));
    assert_eq!(verify(&proof), Err(ProofError::AlgorithmKeyMismatch));
    // EdDSA and Ed25519 naming a P-256 key.
    let ec = TestKey::p256();
    for alg in ["EdDSA", "Ed25519"] {
        let proof = proof_with_header(&ec, |h| h["alg"] = json!(alg));
        assert_eq!(
            verify(&proof),
            Err(ProofError::AlgorithmKeyMismatch),
            "{alg}"
        );
    }
    // A P-384 key with ES256, and a jwk whose own alg says something else.
    let proof = proof_with_header(&ec, |h| h["jwk"]["crv"] = json!("P-384"));
    assert_eq!(verify(&proof), Err(ProofError::AlgorithmKeyMismatch));
    let proof = proof_with_header(&ec, |h| h["jwk"]["alg"] = json!("ES384"));
    assert_eq!(verify(&proof), Err(ProofError::AlgorithmKeyMismatch));
    // But a jwk alg naming the same signature is fine, Ed25519 under either name.
    let proof = proof_with_header(&ed, |h| h["jwk"]["alg"] = json!("Ed25519"));
    assert!(verify(&proof).is_ok());
}

#[test]
fn jwk_for_encryption_is_refused() {
    let key = TestKey::p256();
    let proof = proof_with_header(&key, |h| h["jwk"]["use"] = json!("enc"));
    assert_eq!(verify(&proof), Err(ProofError::InvalidJwk));
    let proof = proof_with_header(&key, |h| h["jwk"]["use"] = json!("sig"));
    assert!(verify(&proof).is_ok());
}

#[test]
fn missing_jwk_is_refused() {
    let key = TestKey::p256();
    let proof = proof_with_header(&key, |h| {
        h.as_object_mut().unwrap().remove("jwk");
    });
    assert_eq!(verify(&proof), Err(ProofError::MissingJwk));
}

#[test]
fn crit_header_is_refused() {
    let key = TestKey::p256();
    let proof = proof_with_header(&key, |h| {
        h["crit"] = json!(["exp"]);
        h["exp"] = json!(1);
    });
    assert_eq!(verify(&proof), Err(ProofError::CriticalHeader));
}

/// Decodes the signature segment, flips one bit of one byte, re-encodes.
fn flip_signature_byte(proof: &str, index: usize) -> String {
    let (input, signature) = proof.rsplit_once('.').unwrap();
    let mut signature = common::unb64(signature);
    signature[index] ^= 0x01;
    format!("{input}.{}", b64(signature))
}

#[test]
fn bad_signature_one_byte_flipped_is_refused() {
    for key in [TestKey::p256(), TestKey::ed25519()] {
        let proof = proof(&key);
        for index in [0, 31, 32, 63] {
            assert_eq!(
                verify(&flip_signature_byte(&proof, index)),
                Err(ProofError::BadSignature),
                "byte {index}"
            );
        }
    }
}

#[test]
fn signature_of_another_key_is_refused() {
    // The header names key A; key B signed.
    let (a, b) = (TestKey::p256(), TestKey::p256());
    let forged = sign(&header(&a), &claims(), &b);
    assert_eq!(verify(&forged), Err(ProofError::BadSignature));
    let (a, b) = (TestKey::ed25519(), TestKey::ed25519());
    let forged = sign(&header(&a), &claims(), &b);
    assert_eq!(verify(&forged), Err(ProofError::BadSignature));
}

#[test]
fn edited_claims_under_the_old_signature_are_refused() {
    let key = TestKey::p256();
    let original = proof(&key);
    let (h, rest) = original.split_once('.').unwrap();
    let (_, signature) = rest.split_once('.').unwrap();
    let mut claims = claims();
    claims["htm"] = json!("DELETE");
    let edited = format!("{h}.{}.{signature}", b64(claims.to_string()));
    let delete = pay_dpop::ProofCheck::new("DELETE", common::URI, common::NOW);
    assert_eq!(
        verify_proof(&[&edited], &delete),
        Err(ProofError::BadSignature)
    );
}

#[test]
fn signatures_of_the_wrong_length_are_refused() {
    let key = TestKey::p256();
    let proof = proof(&key);
    let (input, signature) = proof.rsplit_once('.').unwrap();
    let signature = common::unb64(signature);
    // DER instead of r||s would be about 70 bytes; truncated or extended must not pass.
    let long = [signature.clone(), vec![0]].concat();
    for sig in [&signature[..63], &long[..]] {
        let bent = format!("{input}.{}", b64(sig));
        assert_eq!(verify(&bent), Err(ProofError::BadSignature));
    }
}

#[test]
fn oversized_proof_is_refused_before_parsing() {
    let key = TestKey::p256();
    let big = common::proof_with_claims(&key, |c| c["pad"] = json!("a".repeat(MAX_PROOF_LEN)));
    assert!(big.len() > MAX_PROOF_LEN);
    assert_eq!(verify(&big), Err(ProofError::TooLarge));
    // Garbage over the cap is refused as too large, not parsed.
    assert_eq!(
        verify(&"x".repeat(MAX_PROOF_LEN + 1)),
        Err(ProofError::TooLarge)
    );
    // Just under the cap still verifies: the cap is a bound, not a guess at real sizes.
    let base = common::proof_with_claims(&key, |c| c["pad"] = json!("")).len();
    let room = (MAX_PROOF_LEN - base) * 3 / 4 - 2;
    let fits = common::proof_with_claims(&key, |c| c["pad"] = json!("a".repeat(room)));
    assert!(fits.len() <= MAX_PROOF_LEN, "{}", fits.len());
    assert!(verify(&fits).is_ok());
}

#[test]
fn not_three_base64url_segments_is_refused() {
    let key = TestKey::p256();
    let good = proof(&key);
    let (h, rest) = good.split_once('.').unwrap();
    let (p, s) = rest.split_once('.').unwrap();
    for bad in [
        String::new(),
        h.to_owned(),
        format!("{h}.{p}"),
        format!("{h}.{p}.{s}.{s}"),
        format!("{h}.{p}.{s}."),
        format!(".{p}.{s}"),
        format!("{h}..{s}"),
        format!("{h}=.{p}.{s}"),
        format!("{h}.{p}.{s}="),
        format!("{h}.{p}.{s}=="),
        format!("{h}.{p}.+{}", &s[1..]),
        format!(" {good}"),
        format!("{good}\n"),
        format!("{h}.{p} .{s}"),
    ] {
        assert_eq!(verify(&bad), Err(ProofError::MalformedJws), "{bad:?}");
    }
}

#[test]
fn header_or_payload_that_is_not_a_json_object_is_refused() {
    let key = TestKey::p256();
    let header = header(&key).to_string();
    let claims = claims().to_string();
    for (h, c) in [
        ("[1]", claims.as_str()),
        ("not json", claims.as_str()),
        (header.as_str(), "\"claims\""),
        (header.as_str(), "{\"jti\":"),
        (header.as_str(), " "),
    ] {
        assert_eq!(
            verify(&sign_raw(h, c, &key)),
            Err(ProofError::MalformedJson),
            "{h} {c}"
        );
    }
}

#[test]
fn repeated_header_or_claim_members_are_refused() {
    let key = TestKey::p256();
    let jwk = key.jwk().to_string();
    let claims = claims().to_string();
    // A second alg: which one did the signer mean?
    let header = format!(r#"{{"typ":"dpop+jwt","alg":"ES256","alg":"none","jwk":{jwk}}}"#);
    assert_eq!(
        verify(&sign_raw(&header, &claims, &key)),
        Err(ProofError::MalformedJson)
    );
    // A second htu in the claims.
    let header = common::header(&key).to_string();
    let claims = claims.replacen('{', r#"{"htu":"https://evil.example/oauth/token","#, 1);
    assert_eq!(
        verify(&sign_raw(&header, &claims, &key)),
        Err(ProofError::MalformedJson)
    );
}

#[test]
fn the_signature_covers_the_bytes_as_sent() {
    // Whitespace and member order are the client's business; the signing input is the
    // received text, so an unusual but valid spelling verifies.
    let key = TestKey::ed25519();
    let jwk = key.jwk();
    let header = format!(
        concat!(
            r#"{{ "jwk" : {{"x":"{}", "crv":"Ed25519","kty":"OKP"}},"#,
            "\n",
            r#" "alg":"EdDSA", "typ":"dpop+jwt" }}"#
        ),
        jwk["x"].as_str().unwrap()
    );
    let claims: Value = claims();
    let proof = sign_raw(&header, &format!(" {claims} "), &key);
    assert_eq!(verify(&proof).unwrap().jkt, key.expected_jkt());
}
