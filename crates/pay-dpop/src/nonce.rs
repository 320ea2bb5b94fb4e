//! Server-issued DPoP nonces (RFC 9449 sections 8 and 9) without state: a nonce is the number
//! of a time window and an HMAC-SHA256 tag of it under the server's key, so every instance
//! sharing the key issues and accepts the same nonces, and nothing is stored. The nonce of the
//! current window is sent; it and the previous window's are accepted, so a nonce lives one to
//! two windows.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use ring::hmac;

/// How long one nonce is the one sent, in seconds.
pub const NONCE_WINDOW_SECS: i64 = 300;

/// The tag's bytes kept in a nonce (128 bits).
const TAG_LEN: usize = 16;

/// Issues and recognises nonces with one key (derive it for this use alone).
pub struct NonceIssuer {
    key: hmac::Key,
}

impl std::fmt::Debug for NonceIssuer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NonceIssuer(***)")
    }
}

impl NonceIssuer {
    /// An issuer over `key` (at least 32 bytes of secret, used for nothing else).
    pub fn new(key: &[u8]) -> NonceIssuer {
        NonceIssuer {
            key: hmac::Key::new(hmac::HMAC_SHA256, key),
        }
    }

    fn for_window(&self, window: i64) -> String {
        let id = window.to_be_bytes();
        let tag = hmac::sign(&self.key, &id);
        let mut bytes = id.to_vec();
        bytes.extend_from_slice(&tag.as_ref()[..TAG_LEN]);
        URL_SAFE_NO_PAD.encode(bytes)
    }

    /// The nonce to send at `now_unix`.
    pub fn current(&self, now_unix: i64) -> String {
        self.for_window(now_unix.div_euclid(NONCE_WINDOW_SECS))
    }

    /// The nonces accepted at `now_unix`: the current one and the previous window's.
    pub fn accepted(&self, now_unix: i64) -> [String; 2] {
        let window = now_unix.div_euclid(NONCE_WINDOW_SECS);
        [self.for_window(window), self.for_window(window - 1)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: i64 = 1_800_000_000;

    #[test]
    fn one_nonce_per_window_accepted_for_two() {
        let issuer = NonceIssuer::new(&[7; 32]);
        let n = issuer.current(T);
        assert_eq!(n.len(), 32, "{n}");
        assert!(n
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
        let start = T - T.rem_euclid(NONCE_WINDOW_SECS);
        assert_eq!(issuer.current(start), n);
        assert_eq!(issuer.current(start + NONCE_WINDOW_SECS - 1), n);
        let next = issuer.current(start + NONCE_WINDOW_SECS);
        assert_ne!(next, n);
        assert_eq!(
            issuer.accepted(start + NONCE_WINDOW_SECS),
            [next, n.clone()]
        );
        assert!(!issuer.accepted(start + 2 * NONCE_WINDOW_SECS).contains(&n));
    }

    #[test]
    fn another_key_another_nonce() {
        let a = NonceIssuer::new(&[7; 32]);
        assert_eq!(
            a.current(T),
            NonceIssuer::new(&[7; 32]).current(T),
            "stateless"
        );
        assert_ne!(a.current(T), NonceIssuer::new(&[8; 32]).current(T));
        assert_eq!(format!("{a:?}"), "NonceIssuer(***)");
    }
}
