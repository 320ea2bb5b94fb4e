//! PKCE S256 (RFC 7636) as the domain checks it at the token endpoint: the verifier's syntax
//! and base64url(SHA-256(verifier)) against the stored challenge. The edge already checked
//! the challenge's syntax at the authorization endpoint (`pay_dpop::check_challenge`); the
//! same rules are repeated here so the domain never stores or meets an unusable challenge.

use sha2::{Digest, Sha256};

const B64URL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

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
pub fn is_valid_verifier(verifier: &str) -> bool {
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

/// Whether `verifier` is well formed and meets `challenge`. Both are public once the code is
/// redeemed, and the challenge is a digest, so a plain comparison leaks nothing useful; it is
/// made over every byte all the same.
pub fn verifier_matches(verifier: &str, challenge: &str) -> bool {
    if !is_valid_verifier(verifier) || !is_valid_challenge(challenge) {
        return false;
    }
    let computed = s256_challenge(verifier);
    computed
        .bytes()
        .zip(challenge.bytes())
        .fold(0u8, |acc, (a, b)| acc | (a ^ b))
        == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc7636_appendix_b() {
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
        assert_eq!(s256_challenge(verifier), challenge);
        assert!(verifier_matches(verifier, challenge));
        assert!(!verifier_matches(
            verifier,
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cN"
        ));
        assert!(!verifier_matches(challenge, challenge));
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
        assert!(!verifier_matches(&"a".repeat(43), &"a".repeat(43)));
    }
}
