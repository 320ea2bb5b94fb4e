//! PKCE (RFC 7636) with S256 only: the authorization endpoint checks the challenge it stores,
//! the token endpoint checks the verifier against it. `plain` is refused everywhere (RFC 9700
//! section 2.1.1), so an intercepted authorization request never reveals a usable verifier.

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::error::PkceError;
use crate::jose::{b64url_decode, b64url_encode};

/// The only `code_challenge_method` accepted.
pub const PKCE_METHOD_S256: &str = "S256";

/// Checks what a client sends to the authorization endpoint, before it is stored: the method
/// must be exactly `S256` (a missing method would mean `plain`), and the challenge must be the
/// 43-character unpadded base64url of a 32-byte digest, so a stored challenge can always be met
/// by some verifier and never by a guessable one.
pub fn check_challenge(challenge: &str, method: Option<&str>) -> Result<(), PkceError> {
    match method {
        None => return Err(PkceError::MissingMethod),
        Some("plain") => return Err(PkceError::PlainMethod),
        Some(PKCE_METHOD_S256) => {}
        Some(_) => return Err(PkceError::UnsupportedMethod),
    }
    check_challenge_shape(challenge)
}

/// Checks a token request's `code_verifier` against the stored S256 challenge: the verifier
/// must be 43 to 128 characters of `[A-Za-z0-9-._~]` (RFC 7636 section 4.1), and
/// base64url(SHA-256(verifier)) must equal the challenge, compared in constant time.
///
/// A code stored without a challenge must be refused by the caller before it gets here;
/// there is no "no PKCE" path through this function.
pub fn verify_pkce_s256(verifier: &str, challenge: &str) -> Result<(), PkceError> {
    check_challenge_shape(challenge)?;
    if !is_valid_verifier(verifier) {
        return Err(PkceError::InvalidVerifier);
    }
    let computed = pkce_s256_challenge(verifier);
    if bool::from(computed.as_bytes().ct_eq(challenge.as_bytes())) {
        Ok(())
    } else {
        Err(PkceError::Mismatch)
    }
}

/// base64url(SHA-256(verifier)) without padding: what a client sends as `code_challenge`.
/// Exposed for tests and tools that play the client.
pub fn pkce_s256_challenge(verifier: &str) -> String {
    b64url_encode(&Sha256::digest(verifier.as_bytes()))
}

fn check_challenge_shape(challenge: &str) -> Result<(), PkceError> {
    // Strict decoding also refuses a 43rd character with stray low bits, so each digest has
    // one spelling and the constant-time comparison of strings is a comparison of digests.
    match b64url_decode(challenge) {
        Some(digest) if challenge.len() == 43 && digest.len() == 32 => Ok(()),
        _ => Err(PkceError::InvalidChallenge),
    }
}

fn is_valid_verifier(verifier: &str) -> bool {
    (43..=128).contains(&verifier.len())
        && verifier
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
}
