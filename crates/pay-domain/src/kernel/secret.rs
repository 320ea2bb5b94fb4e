//! Values that must never reach a log: their `Debug` prints `***`.

use std::fmt;

/// A secret string (API-key secret, password, session token, CSRF token).
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The only way to read the value; call sites are easy to audit.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// Lower-case hex SHA-256 digest of a high-entropy secret, as stored.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretDigest(pub String);

impl fmt::Debug for SecretDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SecretDigest(***)")
    }
}

/// A secret encrypted at rest (webhook signing secrets, stored idempotent answers): the key id that sealed it and the sealed bytes (base64 of
/// nonce and ciphertext). Opening needs the same associated data it was sealed with.
#[derive(Clone, PartialEq, Eq)]
pub struct SealedSecret {
    pub key_id: String,
    pub sealed: String,
}

impl fmt::Debug for SealedSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SealedSecret")
            .field("key_id", &self.key_id)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_the_value() {
        let s = Secret::new("mksec_topsecret");
        assert_eq!(format!("{s:?}"), "***");
        assert!(!format!("{:?}", SecretDigest("abcd".into())).contains("abcd"));
    }
}
