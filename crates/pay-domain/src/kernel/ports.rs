//! Ports every context shares: real time, randomness and digests, secrets at rest, and the
//! database's readiness. All are blocking: callers on an async runtime run them on a blocking
//! pool.

use crate::kernel::error::PortResult;
use crate::kernel::secret::SealedSecret;
use crate::kernel::secret::SecretDigest;
use crate::kernel::timestamp::Timestamp;

/// Real time (the process clock). Security windows and leases read it as it is; what a company
/// owns and schedules reads it plus that company's sandbox test clock offset
/// (`crate::sandbox::clock`). Tests control it.
pub trait Clock: Send + Sync {
    fn now(&self) -> Timestamp;
}

/// Randomness, digests and password hashing.
pub trait Crypto: Send + Sync {
    /// `len` characters from `[A-Za-z0-9]`, from a cryptographically secure generator.
    fn random_alphanumeric(&self, len: usize) -> String;
    /// A fresh time-ordered UUID (v7).
    fn new_uuid(&self) -> uuid::Uuid;
    /// Lower-case hex SHA-256 of a high-entropy secret.
    fn digest(&self, secret: &str) -> SecretDigest;
    /// Whether `secret` digests to `digest`, compared in constant time.
    fn digest_matches(&self, secret: &str, digest: &SecretDigest) -> bool;
    /// A salted, slow password hash (PHC string).
    fn hash_password(&self, password: &str) -> PortResult<String>;
    /// Verifies a password. With `None` (unknown user) it MUST spend the same effort as a real
    /// verification and return false, so response time does not reveal which e-mails exist.
    fn verify_password(&self, password: &str, phc: Option<&str>) -> bool;
}

/// Encryption of secrets at rest (AEAD). The associated data binds a sealed value to the row
/// it belongs to (`aad`: table and row id) and to the key that sealed it (the sealer adds the
/// key id and the version of its format): opening with other associated data, or after the
/// stored key id was changed, MUST fail.
pub trait SecretSealer: Send + Sync {
    fn seal(&self, secret: &crate::kernel::secret::Secret, aad: &str) -> PortResult<SealedSecret>;
    /// Fails for an unknown key id, tampered bytes or other associated data.
    fn open(&self, sealed: &SealedSecret, aad: &str) -> PortResult<crate::kernel::secret::Secret>;
    /// Whether `sealed` is in the form `seal` writes now (the current key, the current format).
    /// A value that is not still opens while its key is configured; its row is sealed again on
    /// its next write.
    fn is_current(&self, sealed: &SealedSecret) -> bool;
}

/// Readiness and housekeeping.
pub trait HealthCheck {
    /// A round trip to the database.
    fn ping(&self) -> PortResult<()>;
    /// Deletes rows that no rule reads any more: sessions that expired before
    /// `sessions_before` and rate-limit hits before `hits_before`. Returns how many rows went.
    fn prune(&self, sessions_before: Timestamp, hits_before: Timestamp) -> PortResult<u64>;
}
