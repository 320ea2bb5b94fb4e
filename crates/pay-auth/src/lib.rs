//! Credential adapter: the `Crypto` port with a CSPRNG, SHA-256 digests compared in constant
//! time, and argon2id password hashes. Later: OAuth codes, PKCE, DPoP and portal signatures.

use argon2::password_hash::{
    rand_core::OsRng, PasswordHash, PasswordHasher, PasswordVerifier, SaltString,
};
use argon2::Argon2;
use pay_domain::kernel::ports::Crypto;
use pay_domain::kernel::secret::SecretDigest;
use pay_domain::{Fault, PortResult};
use rand::Rng;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

const ALPHANUMERIC: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/// The production `Crypto`: OS randomness, SHA-256, argon2id with the crate's recommended
/// parameters (19 MiB, 2 passes).
pub struct AuthCrypto {
    argon: Argon2<'static>,
    /// A real hash of a random password, verified against when the user is unknown so that
    /// both paths cost the same.
    dummy_hash: String,
}

impl std::fmt::Debug for AuthCrypto {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AuthCrypto")
    }
}

impl Default for AuthCrypto {
    fn default() -> Self {
        Self::new()
    }
}

impl AuthCrypto {
    pub fn new() -> Self {
        let argon = Argon2::default();
        let salt = SaltString::generate(&mut OsRng);
        let pw = random_alphanumeric(32);
        let dummy_hash = argon
            .hash_password(pw.as_bytes(), &salt)
            .map(|h| h.to_string())
            .unwrap_or_default();
        AuthCrypto { argon, dummy_hash }
    }
}

/// From the thread-local CSPRNG (ChaCha, seeded and periodically reseeded from the OS): as
/// unpredictable as reading the OS directly, without a system call per character.
fn random_alphanumeric(len: usize) -> String {
    let mut rng = rand::thread_rng();
    (0..len)
        .map(|_| ALPHANUMERIC[rng.gen_range(0..ALPHANUMERIC.len())] as char)
        .collect()
}

/// Lower-case hex SHA-256.
pub fn sha256_hex(value: &str) -> String {
    hex::encode(Sha256::digest(value.as_bytes()))
}

impl Crypto for AuthCrypto {
    fn random_alphanumeric(&self, len: usize) -> String {
        random_alphanumeric(len)
    }

    fn new_uuid(&self) -> uuid::Uuid {
        uuid::Uuid::now_v7()
    }

    fn digest(&self, secret: &str) -> SecretDigest {
        SecretDigest(sha256_hex(secret))
    }

    fn digest_matches(&self, secret: &str, digest: &SecretDigest) -> bool {
        let actual = sha256_hex(secret);
        actual.as_bytes().ct_eq(digest.0.as_bytes()).into()
    }

    fn hash_password(&self, password: &str) -> PortResult<String> {
        let salt = SaltString::generate(&mut OsRng);
        self.argon
            .hash_password(password.as_bytes(), &salt)
            .map(|h| h.to_string())
            .map_err(|e| Fault::caused("password hashing failed", e))
    }

    fn verify_password(&self, password: &str, phc: Option<&str>) -> bool {
        let (hash, real) = match phc {
            Some(h) => (h, true),
            None => (self.dummy_hash.as_str(), false),
        };
        let Ok(parsed) = PasswordHash::new(hash) else {
            return false;
        };
        let ok = self
            .argon
            .verify_password(password.as_bytes(), &parsed)
            .is_ok();
        ok && real
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_known_answer() {
        // FIPS 180-2 "abc".
        assert_eq!(
            sha256_hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn digests_match_only_their_secret() {
        let c = AuthCrypto::new();
        let d = c.digest("mksec_one");
        assert!(c.digest_matches("mksec_one", &d));
        assert!(!c.digest_matches("mksec_two", &d));
        assert!(!c.digest_matches("", &d));
    }

    #[test]
    fn random_ids_are_alphanumeric_and_distinct() {
        let c = AuthCrypto::new();
        let a = c.random_alphanumeric(43);
        let b = c.random_alphanumeric(43);
        assert_eq!(a.len(), 43);
        assert!(a.bytes().all(|b| b.is_ascii_alphanumeric()));
        assert_ne!(a, b);
        assert_eq!(c.new_uuid().get_version_num(), 7);
    }

    #[test]
    fn passwords_hash_with_argon2id_and_verify() {
        let c = AuthCrypto::new();
        let h = c.hash_password("correct horse battery").unwrap();
        assert!(h.starts_with("$argon2id$"));
        assert!(c.verify_password("correct horse battery", Some(&h)));
        assert!(!c.verify_password("wrong horse battery", Some(&h)));
        assert!(!c.verify_password("correct horse battery", None));
        assert!(!c.verify_password("x", Some("not a phc string")));
        assert_ne!(
            h,
            c.hash_password("correct horse battery").unwrap(),
            "salted"
        );
    }
}
