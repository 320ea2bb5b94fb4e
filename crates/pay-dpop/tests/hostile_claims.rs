//! Hostile proofs, part two: the claims and what they are compared with (method, URI, time,
//! access token, key binding, nonce). Every proof here carries a valid signature.

mod common;

use common::{check, proof, proof_with_claims, TestKey, METHOD, NOW, URI};
use pay_dpop::{
    access_token_hash, verify_proof, ProofCheck, ProofError, VerifiedProof, INVALID_DPOP_PROOF,
    MAX_JTI_CHARS, USE_DPOP_NONCE,
};
use serde_json::json;

fn verify_with(proof: &str, check: &ProofCheck) -> Result<VerifiedProof, ProofError> {
    verify_proof(&[proof], check)
}

fn with_htu(key: &TestKey, htu: &str) -> String {
    proof_with_claims(key, |c| c["htu"] = json!(htu))
}

#[test]
fn wrong_htm_is_refused() {
    let key = TestKey::p256();
    let proof = proof(&key);
    let get = ProofCheck::new("GET", URI, NOW);
    assert_eq!(verify_with(&proof, &get), Err(ProofError::MethodMismatch));
    // Methods are case-sensitive (RFC 9110 section 9.1).
    let lower = proof_with_claims(&key, |c| c["htm"] = json!("post"));
    assert_eq!(
        verify_with(&lower, &check()),
        Err(ProofError::MethodMismatch)
    );
}

#[test]
fn htu_with_another_host_is_refused() {
    let key = TestKey::p256();
    for htu in [
        "https://evil.example/oauth/token",
        "https://api.pay.example.evil.example/oauth/token",
        "https://pay.example/oauth/token",
    ] {
        assert_eq!(
            verify_with(&with_htu(&key, htu), &check()),
            Err(ProofError::UriMismatch),
            "{htu}"
        );
    }
}

#[test]
fn htu_with_another_port_or_scheme_is_refused() {
    let key = TestKey::p256();
    for htu in [
        "https://api.pay.example:8443/oauth/token",
        "https://api.pay.example:80/oauth/token",
        "http://api.pay.example/oauth/token",
        "http://api.pay.example:443/oauth/token",
    ] {
        assert_eq!(
            verify_with(&with_htu(&key, htu), &check()),
            Err(ProofError::UriMismatch),
            "{htu}"
        );
    }
}

#[test]
fn htu_with_another_path_is_refused() {
    let key = TestKey::p256();
    for htu in [
        "https://api.pay.example/oauth/token/",
        "https://api.pay.example/oauth/Token",
        "https://api.pay.example/oauth",
        "https://api.pay.example/",
        "https://api.pay.example/oauth/../oauth/token",
        "https://api.pay.example/oauth/%74oken",
    ] {
        assert_eq!(
            verify_with(&with_htu(&key, htu), &check()),
            Err(ProofError::UriMismatch),
            "{htu}"
        );
    }
}

#[test]
fn htu_that_is_not_an_absolute_http_uri_is_refused() {
    let key = TestKey::p256();
    for htu in [
        "/oauth/token",
        "api.pay.example/oauth/token",
        "https://user@api.pay.example/oauth/token",
        "",
    ] {
        assert_eq!(
            verify_with(&with_htu(&key, htu), &check()),
            Err(ProofError::UriMismatch),
            "{htu}"
        );
    }
}

#[test]
fn query_and_fragment_are_ignored_on_both_sides() {
    let key = TestKey::p256();
    // The request has a query; the proof, as RFC 9449 asks, has none.
    let with_query = ProofCheck::new(METHOD, "https://api.pay.example/oauth/token?state=1#x", NOW);
    let verified = verify_with(&proof(&key), &with_query).unwrap();
    assert_eq!(verified.htu, URI);
    // The proof keeps a query or fragment: section 4.3 says to ignore them, so do we.
    for htu in [
        "https://api.pay.example/oauth/token?a=b",
        "https://api.pay.example/oauth/token#f",
    ] {
        let verified = verify_with(&with_htu(&key, htu), &check()).unwrap();
        assert_eq!(verified.htu, URI, "the replay key holds no query");
    }
    // But a query never hides a path difference.
    let other = with_htu(&key, "https://api.pay.example/oauth/revoke?/oauth/token");
    assert_eq!(verify_with(&other, &check()), Err(ProofError::UriMismatch));
}

#[test]
fn htu_case_and_default_port_are_normalised() {
    let key = TestKey::p256();
    for htu in [
        "HTTPS://API.PAY.EXAMPLE/oauth/token",
        "https://api.pay.example:443/oauth/token",
    ] {
        let verified = verify_with(&with_htu(&key, htu), &check()).unwrap();
        assert_eq!(verified.htu, URI, "{htu}");
    }
    let local = ProofCheck::new(METHOD, "http://localhost:8080/oauth/token", NOW);
    let proof = with_htu(&key, "http://LOCALHOST:8080/oauth/token");
    assert!(verify_with(&proof, &local).is_ok());
}

#[test]
fn a_target_uri_the_server_cannot_compare_is_reported_as_such() {
    let proof = proof(&TestKey::p256());
    for target in ["/oauth/token", "", "ftp://api.pay.example/oauth/token"] {
        let check = ProofCheck::new(METHOD, target, NOW);
        assert_eq!(
            verify_with(&proof, &check),
            Err(ProofError::InvalidTargetUri),
            "{target}"
        );
    }
}

fn with_iat(key: &TestKey, iat: i64) -> String {
    proof_with_claims(key, |c| c["iat"] = json!(iat))
}

#[test]
fn iat_301_seconds_old_is_refused_and_300_accepted() {
    let key = TestKey::p256();
    assert_eq!(
        verify_with(&with_iat(&key, NOW - 301), &check()),
        Err(ProofError::IssuedTooLongAgo)
    );
    assert_eq!(
        verify_with(&with_iat(&key, NOW - 300), &check())
            .unwrap()
            .iat,
        NOW - 300
    );
}

#[test]
fn iat_11_seconds_ahead_is_refused_and_10_accepted() {
    let key = TestKey::p256();
    assert_eq!(
        verify_with(&with_iat(&key, NOW + 11), &check()),
        Err(ProofError::IssuedInTheFuture)
    );
    assert_eq!(
        verify_with(&with_iat(&key, NOW + 10), &check())
            .unwrap()
            .iat,
        NOW + 10
    );
}

#[test]
fn the_time_window_is_configurable_and_cannot_overflow() {
    let key = TestKey::p256();
    let narrow = ProofCheck {
        max_age_secs: 60,
        max_skew_ahead_secs: 0,
        ..check()
    };
    assert_eq!(
        verify_with(&with_iat(&key, NOW - 61), &narrow),
        Err(ProofError::IssuedTooLongAgo)
    );
    assert_eq!(
        verify_with(&with_iat(&key, NOW + 1), &narrow),
        Err(ProofError::IssuedInTheFuture)
    );
    assert!(verify_with(&with_iat(&key, NOW), &narrow).is_ok());
    for iat in [i64::MIN, i64::MAX] {
        assert!(verify_with(&with_iat(&key, iat), &check()).is_err());
    }
    let extreme = ProofCheck {
        now_unix: i64::MIN,
        max_age_secs: i64::MAX,
        ..check()
    };
    assert!(verify_with(&with_iat(&key, i64::MAX), &extreme).is_err());
}

#[test]
fn non_integer_iat_is_refused() {
    let key = TestKey::p256();
    for iat in [
        json!(1_700_000_000.5),
        json!(1.7e9),
        json!("1700000000"),
        json!(null),
        json!(u64::MAX),
    ] {
        let proof = proof_with_claims(&key, |c| c["iat"] = iat.clone());
        assert_eq!(
            verify_with(&proof, &check()),
            Err(ProofError::InvalidClaim("iat")),
            "{iat}"
        );
    }
}

#[test]
fn missing_required_claims_are_refused() {
    let key = TestKey::p256();
    for name in ["jti", "htm", "htu", "iat"] {
        let proof = proof_with_claims(&key, |c| {
            c.as_object_mut().unwrap().remove(name);
        });
        assert_eq!(
            verify_with(&proof, &check()),
            Err(ProofError::MissingClaim(name))
        );
    }
    for name in ["jti", "htm", "htu"] {
        let proof = proof_with_claims(&key, |c| c[name] = json!(42));
        assert_eq!(
            verify_with(&proof, &check()),
            Err(ProofError::InvalidClaim(name))
        );
    }
}

#[test]
fn jti_too_long_or_empty_is_refused() {
    let key = TestKey::p256();
    for jti in [
        String::new(),
        "j".repeat(MAX_JTI_CHARS + 1),
        "é".repeat(MAX_JTI_CHARS + 1),
    ] {
        let proof = proof_with_claims(&key, |c| c["jti"] = json!(jti));
        assert_eq!(verify_with(&proof, &check()), Err(ProofError::JtiLength));
    }
    // The bounds count characters: 256 of them pass, even multi-byte ones.
    for jti in [
        "j".repeat(MAX_JTI_CHARS),
        "é".repeat(MAX_JTI_CHARS),
        "j".to_owned(),
    ] {
        let proof = proof_with_claims(&key, |c| c["jti"] = json!(jti));
        assert_eq!(verify_with(&proof, &check()).unwrap().jti, jti);
    }
}

const TOKEN: &str = "at_5mB2Qk1vXc9Zr7Lw";

#[test]
fn wrong_ath_is_refused() {
    let key = TestKey::p256();
    let with_token = check().with_access_token(TOKEN);
    let other = proof_with_claims(&key, |c| c["ath"] = json!(access_token_hash("at_other")));
    assert_eq!(
        verify_with(&other, &with_token),
        Err(ProofError::AccessTokenHashMismatch)
    );
    // The token itself, or its hash padded or in hex, is not the hash.
    for ath in [TOKEN.to_owned(), format!("{}=", access_token_hash(TOKEN))] {
        let proof = proof_with_claims(&key, |c| c["ath"] = json!(ath));
        assert_eq!(
            verify_with(&proof, &with_token),
            Err(ProofError::AccessTokenHashMismatch)
        );
    }
    let proof = proof_with_claims(&key, |c| c["ath"] = json!(7));
    assert_eq!(
        verify_with(&proof, &with_token),
        Err(ProofError::InvalidClaim("ath"))
    );
    let right = proof_with_claims(&key, |c| c["ath"] = json!(access_token_hash(TOKEN)));
    assert!(verify_with(&right, &with_token).is_ok());
}

#[test]
fn missing_ath_when_a_token_is_given_is_refused() {
    let key = TestKey::p256();
    assert_eq!(
        verify_with(&proof(&key), &check().with_access_token(TOKEN)),
        Err(ProofError::MissingAccessTokenHash)
    );
}

#[test]
fn key_that_is_not_the_bound_jkt_is_refused() {
    let (bound, other) = (TestKey::p256(), TestKey::ed25519());
    let jkt = bound.expected_jkt();
    let check = check().with_bound_jkt(&jkt);
    assert_eq!(
        verify_with(&proof(&other), &check),
        Err(ProofError::KeyNotBound)
    );
    assert_eq!(verify_with(&proof(&bound), &check).unwrap().jkt, jkt);
}

#[test]
fn missing_nonce_asks_for_one() {
    let key = TestKey::p256();
    let err = verify_with(&proof(&key), &check().with_nonce("n-8c2f")).unwrap_err();
    assert_eq!(err, ProofError::NonceMissing);
    assert_eq!(err.www_authenticate_error(), USE_DPOP_NONCE);
}

#[test]
fn wrong_nonce_asks_for_the_current_one() {
    let key = TestKey::p256();
    let check = check().with_nonce("n-8c2f");
    let stale = proof_with_claims(&key, |c| c["nonce"] = json!("n-7b1e"));
    let err = verify_with(&stale, &check).unwrap_err();
    assert_eq!(err, ProofError::NonceMismatch);
    assert_eq!(err.www_authenticate_error(), USE_DPOP_NONCE);
    let fresh = proof_with_claims(&key, |c| c["nonce"] = json!("n-8c2f"));
    assert!(verify_with(&fresh, &check).is_ok());
    // An unexpected nonce is ignored: the server did not ask for one.
    assert!(verify_with(&stale, &common::check()).is_ok());
}

#[test]
fn the_previous_nonce_passes_too_and_no_third() {
    let key = TestKey::p256();
    let check = check().with_nonces("n-new", "n-old");
    for nonce in ["n-new", "n-old"] {
        let p = proof_with_claims(&key, |c| c["nonce"] = json!(nonce));
        assert!(verify_with(&p, &check).is_ok(), "{nonce}");
    }
    let older = proof_with_claims(&key, |c| c["nonce"] = json!("n-older"));
    assert_eq!(
        verify_with(&older, &check).unwrap_err(),
        ProofError::NonceMismatch
    );
    assert_eq!(
        verify_with(&proof(&key), &check).unwrap_err(),
        ProofError::NonceMissing
    );
}

#[test]
fn nonce_is_only_blamed_when_everything_else_passes() {
    // A proof that is wrong in another way too must not invite a pointless retry.
    let key = TestKey::p256();
    let check = ProofCheck::new("GET", URI, NOW).with_nonce("n-8c2f");
    let err = verify_with(&proof(&key), &check).unwrap_err();
    assert_eq!(err, ProofError::MethodMismatch);
    assert_eq!(err.www_authenticate_error(), INVALID_DPOP_PROOF);
}

#[test]
fn every_other_refusal_is_invalid_dpop_proof_and_names_no_value() {
    let all = [
        ProofError::Missing,
        ProofError::MultipleHeaders,
        ProofError::TooLarge,
        ProofError::MalformedJws,
        ProofError::MalformedJson,
        ProofError::WrongType,
        ProofError::UnsupportedAlgorithm,
        ProofError::CriticalHeader,
        ProofError::MissingJwk,
        ProofError::PrivateKey,
        ProofError::InvalidJwk,
        ProofError::AlgorithmKeyMismatch,
        ProofError::BadSignature,
        ProofError::MissingClaim("jti"),
        ProofError::InvalidClaim("iat"),
        ProofError::JtiLength,
        ProofError::MethodMismatch,
        ProofError::UriMismatch,
        ProofError::InvalidTargetUri,
        ProofError::IssuedTooLongAgo,
        ProofError::IssuedInTheFuture,
        ProofError::MissingAccessTokenHash,
        ProofError::AccessTokenHashMismatch,
        ProofError::KeyNotBound,
    ];
    for err in &all {
        assert_eq!(err.www_authenticate_error(), INVALID_DPOP_PROOF, "{err:?}");
    }
    for err in all
        .iter()
        .chain(&[ProofError::NonceMissing, ProofError::NonceMismatch])
    {
        // Safe inside a quoted error_description, and short.
        let text = err.to_string();
        assert!(!text.contains(['"', '\\']) && text.len() < 100, "{text}");
    }
}
