//! Valid proofs from ring-generated keys, as a real client makes them, verify and report the
//! thumbprint computed independently (tests/common: literal hash input, ring's SHA-256).
//! Also the `DPoP-Previous` key rotation built on the same checks.

mod common;

use common::{check, header, proof, proof_with_claims, proof_with_header, sign, TestKey, NOW, URI};
use pay_dpop::{
    jti_digest, jwk_thumbprint, verify_key_rotation, verify_proof, Alg, ProofError, RotationError,
    USE_DPOP_NONCE,
};
use serde_json::json;

#[test]
fn es256_proof_round_trips() {
    let key = TestKey::p256();
    let verified = verify_proof(&[&proof(&key)], &check()).unwrap();
    assert_eq!(verified.jkt, key.expected_jkt());
    assert_eq!(verified.jkt, jwk_thumbprint(&key.jwk()).unwrap());
    assert_eq!(verified.alg, Alg::Es256);
    assert_eq!(verified.alg.as_str(), "ES256");
    assert_eq!(verified.jti, "jti-4c1f9a0e2b7d");
    assert_eq!(verified.iat, NOW);
    assert_eq!(verified.htm, "POST");
    assert_eq!(verified.htu, URI);
}

#[test]
fn ed25519_proof_with_alg_eddsa_round_trips() {
    let key = TestKey::ed25519();
    let verified = verify_proof(&[&proof(&key)], &check()).unwrap();
    assert_eq!(verified.jkt, key.expected_jkt());
    assert_eq!(verified.alg, Alg::EdDsa);
}

#[test]
fn ed25519_proof_with_alg_ed25519_round_trips() {
    // What the npm `dpop` package sends for an Ed25519 key.
    let key = TestKey::ed25519();
    let proof = proof_with_header(&key, |h| h["alg"] = json!("Ed25519"));
    let verified = verify_proof(&[&proof], &check()).unwrap();
    assert_eq!(verified.jkt, key.expected_jkt());
    assert_eq!(verified.alg, Alg::Ed25519);
}

#[test]
fn a_resource_proof_with_every_binding_round_trips() {
    let key = TestKey::p256();
    let token = "at_Q2h1bmt5IHRva2Vu";
    let jkt = key.expected_jkt();
    let proof = proof_with_claims(&key, |c| {
        c["htm"] = json!("GET");
        c["htu"] = json!("https://api.pay.example/v1/payment-links");
        c["ath"] = json!(pay_dpop::access_token_hash(token));
        c["nonce"] = json!("n-1");
    });
    let check = pay_dpop::ProofCheck::new(
        "GET",
        "https://api.pay.example/v1/payment-links?limit=10",
        NOW,
    )
    .with_access_token(token)
    .with_bound_jkt(&jkt)
    .with_nonce("n-1");
    let verified = verify_proof(&[&proof], &check).unwrap();
    assert_eq!(verified.htu, "https://api.pay.example/v1/payment-links");
    assert_eq!(verified.jkt, jkt);
}

#[test]
fn extra_header_members_and_claims_are_tolerated() {
    // RFC 9449 section 4.2 allows other header parameters and claims.
    let key = TestKey::p256();
    let mut header = header(&key);
    header["kid"] = json!("device-1");
    header["jwk"]["kid"] = json!("device-1");
    header["jwk"]["alg"] = json!("ES256");
    let mut claims = common::claims();
    claims["exp"] = json!(NOW + 60);
    claims["client_id"] = json!("svc_app_123");
    let verified = verify_proof(&[&sign(&header, &claims, &key)], &check()).unwrap();
    assert_eq!(
        verified.jkt,
        key.expected_jkt(),
        "decorations do not change the thumbprint"
    );
}

#[test]
fn jti_digest_is_sha256_of_the_jti() {
    let expected = ring::digest::digest(&ring::digest::SHA256, b"jti-4c1f9a0e2b7d");
    assert_eq!(jti_digest("jti-4c1f9a0e2b7d").as_slice(), expected.as_ref());
    assert_ne!(jti_digest("a"), jti_digest("b"));
}

// --- DPoP-Previous: native key rotation -------------------------------------------------

fn with_jti(key: &TestKey, jti: &str) -> String {
    proof_with_claims(key, |c| c["jti"] = json!(jti))
}

#[test]
fn rotation_with_both_keys_verifies() {
    let (old, new) = (TestKey::p256(), TestKey::ed25519());
    let registered = old.expected_jkt();
    let (current, previous) = verify_key_rotation(
        &[&with_jti(&new, "a")],
        &[&with_jti(&old, "b")],
        &check(),
        &registered,
    )
    .unwrap();
    assert_eq!(current.jkt, new.expected_jkt());
    assert_eq!(previous.jkt, registered);
}

#[test]
fn rotation_with_a_previous_proof_by_another_key_is_refused() {
    let (old, new, stranger) = (TestKey::p256(), TestKey::p256(), TestKey::p256());
    let registered = old.expected_jkt();
    assert_eq!(
        verify_key_rotation(
            &[&with_jti(&new, "a")],
            &[&with_jti(&stranger, "b")],
            &check(),
            &registered
        ),
        Err(RotationError::Previous(ProofError::KeyNotBound))
    );
}

#[test]
fn rotation_with_a_shared_jti_is_refused() {
    let (old, new) = (TestKey::p256(), TestKey::p256());
    let registered = old.expected_jkt();
    assert_eq!(
        verify_key_rotation(&[&proof(&new)], &[&proof(&old)], &check(), &registered),
        Err(RotationError::SameJti)
    );
}

#[test]
fn rotation_needs_each_proof_valid_for_the_same_request() {
    let (old, new) = (TestKey::p256(), TestKey::p256());
    let registered = old.expected_jkt();
    let other_uri = proof_with_claims(&old, |c| {
        c["jti"] = json!("b");
        c["htu"] = json!("https://api.pay.example/oauth/native/other");
    });
    assert_eq!(
        verify_key_rotation(
            &[&with_jti(&new, "a")],
            &[&other_uri],
            &check(),
            &registered
        ),
        Err(RotationError::Previous(ProofError::UriMismatch))
    );
    assert_eq!(
        verify_key_rotation(&[], &[&with_jti(&old, "b")], &check(), &registered),
        Err(RotationError::Current(ProofError::Missing))
    );
    let err = verify_key_rotation(
        &[&with_jti(&new, "a")],
        &[&with_jti(&old, "b")],
        &check().with_nonce("n-1"),
        &registered,
    )
    .unwrap_err();
    assert_eq!(err, RotationError::Current(ProofError::NonceMissing));
    assert_eq!(err.www_authenticate_error(), USE_DPOP_NONCE);
}

#[test]
fn rotation_ignores_the_checks_bound_jkt_for_the_new_key() {
    let (old, new) = (TestKey::p256(), TestKey::p256());
    let registered = old.expected_jkt();
    // A caller passing the registered key as bound_jkt must not make the new key fail.
    let check = check().with_bound_jkt(&registered);
    assert!(verify_key_rotation(
        &[&with_jti(&new, "a")],
        &[&with_jti(&old, "b")],
        &check,
        &registered
    )
    .is_ok());
}

/// A header seen before is known by its exact text (the verifier remembers its key and
/// thumbprint), but every proof under it is still checked in full: its signature, its claims,
/// its binding. A known header with another proof's signature, a missing claim, a claim of the
/// wrong type, a repeated claim or another key's binding is refused as on first sight.
#[test]
fn a_known_header_still_checks_every_proof() {
    let key = TestKey::p256();
    let first = verify_proof(&[&proof(&key)], &check()).unwrap();
    let again = proof_with_claims(&key, |c| c["jti"] = json!("jti-second"));
    let verified = verify_proof(&[&again], &check()).unwrap();
    assert_eq!(verified.jkt, first.jkt);
    assert_eq!(verified.jkt, key.expected_jkt());
    assert_eq!(verified.jti, "jti-second");

    // The same header with the signature of another payload.
    let other = proof_with_claims(&key, |c| c["jti"] = json!("jti-third"));
    let (input, _) = again.rsplit_once('.').unwrap();
    let (_, signature) = other.rsplit_once('.').unwrap();
    let swapped = format!("{input}.{signature}");
    assert_eq!(
        verify_proof(&[&swapped], &check()),
        Err(ProofError::BadSignature)
    );
    let no_jti = proof_with_claims(&key, |c| {
        c.as_object_mut().unwrap().remove("jti");
    });
    assert_eq!(
        verify_proof(&[&no_jti], &check()),
        Err(ProofError::MissingClaim("jti"))
    );
    let iat_text = proof_with_claims(&key, |c| c["iat"] = json!(NOW.to_string()));
    assert_eq!(
        verify_proof(&[&iat_text], &check()),
        Err(ProofError::InvalidClaim("iat"))
    );
    let h = serde_json::to_string(&header(&key)).unwrap();
    let repeated = common::sign_raw(
        &h,
        &format!(r#"{{"jti":"a","jti":"b","htm":"POST","htu":"{URI}","iat":{NOW}}}"#),
        &key,
    );
    assert_eq!(
        verify_proof(&[&repeated], &check()),
        Err(ProofError::MalformedJson)
    );
    let other_key = TestKey::p256().expected_jkt();
    assert_eq!(
        verify_proof(&[&proof(&key)], &check().with_bound_jkt(&other_key)),
        Err(ProofError::KeyNotBound)
    );
    // A header whose proof never verified is not known: its next proof is judged afresh.
    let bad = TestKey::p256();
    let forged = sign(&header(&bad), &common::claims(), &key);
    assert_eq!(
        verify_proof(&[&forged], &check()),
        Err(ProofError::BadSignature)
    );
    assert!(verify_proof(&[&proof(&bad)], &check()).is_ok());
}
