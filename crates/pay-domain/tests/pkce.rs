//! PKCE S256 (RFC 7636) as the authorization and token endpoints use it: only S256, verifier
//! syntax at its exact bounds, challenge syntax, and the comparison itself; whatever a client
//! sends, an answer and never a panic.

use pay_domain::oauth::pkce::{
    check_challenge, s256_challenge as pkce_s256_challenge, verify_pkce_s256, PkceError,
};
use proptest::prelude::*;

const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

#[test]
fn s256_challenge_is_accepted() {
    assert_eq!(check_challenge(CHALLENGE, Some("S256")), Ok(()));
}

#[test]
fn plain_or_missing_method_is_refused() {
    assert_eq!(
        check_challenge(CHALLENGE, None),
        Err(PkceError::MissingMethod)
    );
    assert_eq!(
        check_challenge(CHALLENGE, Some("plain")),
        Err(PkceError::PlainMethod)
    );
    for method in ["s256", "S384", "", "S256 "] {
        assert_eq!(
            check_challenge(CHALLENGE, Some(method)),
            Err(PkceError::UnsupportedMethod),
            "{method:?}"
        );
    }
}

#[test]
fn challenge_that_is_not_a_base64url_digest_is_refused() {
    let padded = format!("{CHALLENGE}=");
    let standard = CHALLENGE.replace('-', "+");
    for challenge in [
        "",
        &CHALLENGE[..42],
        &padded,
        &standard,
        // Same length, non-canonical final character (low bits set).
        "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cN",
    ] {
        assert_eq!(
            check_challenge(challenge, Some("S256")),
            Err(PkceError::InvalidChallenge),
            "{challenge:?}"
        );
        assert_eq!(
            verify_pkce_s256(VERIFIER, challenge),
            Err(PkceError::InvalidChallenge),
            "{challenge:?}"
        );
    }
    let long = format!("{CHALLENGE}AAAA");
    assert_eq!(
        check_challenge(&long, Some("S256")),
        Err(PkceError::InvalidChallenge)
    );
}

#[test]
fn wrong_verifier_is_refused() {
    let wrong = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXl";
    assert_eq!(verify_pkce_s256(wrong, CHALLENGE), Err(PkceError::Mismatch));
    // The challenge presented as the verifier (a plain-method downgrade) does not match.
    assert_eq!(
        verify_pkce_s256(CHALLENGE, CHALLENGE),
        Err(PkceError::Mismatch)
    );
}

#[test]
fn verifier_length_bounds_are_43_and_128() {
    for len in [43, 128] {
        let verifier = "a".repeat(len);
        let challenge = pkce_s256_challenge(&verifier);
        assert_eq!(verify_pkce_s256(&verifier, &challenge), Ok(()), "{len}");
    }
    for len in [0, 42, 129] {
        let verifier = "a".repeat(len);
        let challenge = pkce_s256_challenge(&verifier);
        assert_eq!(
            verify_pkce_s256(&verifier, &challenge),
            Err(PkceError::InvalidVerifier),
            "{len}"
        );
    }
}

#[test]
fn verifier_outside_the_unreserved_set_is_refused() {
    let base = "a".repeat(50);
    for bad in ['+', '/', '=', ' ', '%', '\u{e9}', '\n'] {
        let verifier = format!("{base}{bad}");
        let challenge = pkce_s256_challenge(&verifier);
        assert_eq!(
            verify_pkce_s256(&verifier, &challenge),
            Err(PkceError::InvalidVerifier),
            "{bad:?}"
        );
    }
    let all = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~";
    assert_eq!(verify_pkce_s256(all, &pkce_s256_challenge(all)), Ok(()));
}

#[test]
fn errors_map_to_the_oauth_codes_of_their_endpoint() {
    for err in [
        PkceError::MissingMethod,
        PkceError::PlainMethod,
        PkceError::UnsupportedMethod,
        PkceError::InvalidChallenge,
    ] {
        assert_eq!(err.oauth_error(), "invalid_request", "{err:?}");
    }
    for err in [PkceError::InvalidVerifier, PkceError::Mismatch] {
        assert_eq!(err.oauth_error(), "invalid_grant", "{err:?}");
    }
}

#[test]
fn rfc7636_appendix_b() {
    assert_eq!(pkce_s256_challenge(VERIFIER), CHALLENGE);
    assert_eq!(verify_pkce_s256(VERIFIER, CHALLENGE), Ok(()));
}

proptest! {
    #[test]
    fn any_input_gets_an_answer(a in any::<String>(), b in any::<String>(), method in any::<String>()) {
        let _ = verify_pkce_s256(&a, &b);
        let _ = check_challenge(&a, Some(&method));
    }
}
