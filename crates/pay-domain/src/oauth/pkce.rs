//! PKCE (RFC 7636) with S256 only, the one implementation: the authorization endpoint checks
//! the method and the challenge before the request goes further (`check_challenge`), the
//! domain refuses an unusable challenge before it stores one (`is_valid_challenge`), and the
//! token endpoint checks the verifier against it (`verify_pkce_s256`). `plain` is refused
//! everywhere (RFC 9700 section 2.1.1), so an intercepted authorization request never reveals
//! a usable verifier. Pure: SHA-256 and base64url, no I/O.

use sha2::{Digest, Sha256};

/// The only `code_challenge_method` accepted.
pub const PKCE_METHOD_S256: &str = "S256";

const B64URL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// A PKCE value refused by [`check_challenge`] or [`verify_pkce_s256`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PkceError {
    /// No `code_challenge_method`: RFC 7636 would default to `plain`, which is refused.
    #[error("code_challenge_method is required and must be S256")]
    MissingMethod,
    /// `code_challenge_method=plain`: the verifier would travel in clear (RFC 9700 2.1.1).
    #[error("code_challenge_method plain is not allowed; use S256")]
    PlainMethod,
    /// Any other method name (they are case-sensitive: `s256` is not `S256`).
    #[error("code_challenge_method must be S256")]
    UnsupportedMethod,
    /// The challenge is not 43 characters of canonical base64url (a SHA-256 digest).
    #[error("code_challenge is not a base64url SHA-256 digest")]
    InvalidChallenge,
    /// The verifier is not 43 to 128 characters of `[A-Za-z0-9-._~]` (RFC 7636 section 4.1).
    #[error("code_verifier is not 43 to 128 unreserved characters")]
    InvalidVerifier,
    /// The verifier does not hash to the stored challenge.
    #[error("code_verifier does not match the code_challenge")]
    Mismatch,
}

impl PkceError {
    /// The OAuth error code: a bad challenge or method is `invalid_request` at the
    /// authorization endpoint (RFC 7636 section 4.4.1); a verifier that does not fit the
    /// grant is `invalid_grant` at the token endpoint (section 4.6).
    pub fn oauth_error(&self) -> &'static str {
        match self {
            PkceError::MissingMethod
            | PkceError::PlainMethod
            | PkceError::UnsupportedMethod
            | PkceError::InvalidChallenge => "invalid_request",
            PkceError::InvalidVerifier | PkceError::Mismatch => "invalid_grant",
        }
    }
}

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
    if is_valid_challenge(challenge) {
        Ok(())
    } else {
        Err(PkceError::InvalidChallenge)
    }
}

/// Checks a token request's `code_verifier` against the stored S256 challenge: the challenge
/// must be well formed, the verifier 43 to 128 characters of `[A-Za-z0-9-._~]` (RFC 7636
/// section 4.1), and base64url(SHA-256(verifier)) must equal the challenge. Both are public
/// once the code is redeemed, and the challenge is a digest, so a plain comparison would leak
/// nothing useful; it is made over every byte all the same.
///
/// A code stored without a challenge must be refused by the caller before it gets here;
/// there is no "no PKCE" path through this function.
pub fn verify_pkce_s256(verifier: &str, challenge: &str) -> Result<(), PkceError> {
    if !is_valid_challenge(challenge) {
        return Err(PkceError::InvalidChallenge);
    }
    if !is_valid_verifier(verifier) {
        return Err(PkceError::InvalidVerifier);
    }
    let differs = s256_challenge(verifier)
        .bytes()
        .zip(challenge.bytes())
        .fold(0u8, |acc, (a, b)| acc | (a ^ b));
    if differs == 0 {
        Ok(())
    } else {
        Err(PkceError::Mismatch)
    }
}

/// Unpadded base64url.
pub(crate) fn b64url(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let chars = chunk.len() + 1;
        for i in 0..chars {
            out.push(B64URL[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}

/// base64url(SHA-256(verifier)): the S256 challenge of `verifier`.
pub fn s256_challenge(verifier: &str) -> String {
    b64url(&Sha256::digest(verifier.as_bytes()))
}

/// A verifier of RFC 7636 section 4.1: 43 to 128 characters of `[A-Za-z0-9-._~]`.
fn is_valid_verifier(verifier: &str) -> bool {
    (43..=128).contains(&verifier.len())
        && verifier
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
}

/// A challenge an S256 verifier can meet: 43 base64url characters whose last one carries no
/// stray bits (the one spelling of a 32-byte digest).
pub fn is_valid_challenge(challenge: &str) -> bool {
    let bytes = challenge.as_bytes();
    bytes.len() == 43
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_'))
        && B64URL
            .iter()
            .position(|c| *c == bytes[42])
            .is_some_and(|v| v & 0b11 == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc7636_appendix_b() {
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
        assert_eq!(s256_challenge(verifier), challenge);
        assert!(verify_pkce_s256(verifier, challenge).is_ok());
        assert_eq!(
            verify_pkce_s256(verifier, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cN"),
            Err(PkceError::InvalidChallenge)
        );
        assert_eq!(
            verify_pkce_s256(challenge, challenge),
            Err(PkceError::Mismatch)
        );
    }

    #[test]
    fn base64url_of_every_tail_length() {
        assert_eq!(b64url(b""), "");
        assert_eq!(b64url(b"f"), "Zg");
        assert_eq!(b64url(b"fo"), "Zm8");
        assert_eq!(b64url(b"foo"), "Zm9v");
        assert_eq!(b64url(&[0xfb, 0xff]), "-_8");
    }

    #[test]
    fn verifier_and_challenge_syntax() {
        assert!(is_valid_verifier(&"a".repeat(43)));
        assert!(is_valid_verifier(&"a~._-".repeat(26)[..128]));
        assert!(!is_valid_verifier(&"a".repeat(42)));
        assert!(!is_valid_verifier(&"a".repeat(129)));
        assert!(!is_valid_verifier(&format!("{}+", "a".repeat(43))));
        assert!(is_valid_challenge(
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        ));
        // A 43rd character with stray low bits is another spelling: refused.
        assert!(!is_valid_challenge(
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cN"
        ));
        assert!(!is_valid_challenge(
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-c"
        ));
        assert!(!is_valid_challenge(
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw+cM"
        ));
        // A plain challenge (the verifier itself) is never a valid S256 value by chance here.
        assert!(verify_pkce_s256(&"a".repeat(43), &"a".repeat(43)).is_err());
    }
}
