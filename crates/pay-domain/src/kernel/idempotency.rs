//! `Idempotency-Key` (spec, "Grant subscription notes"; docs/security.md, "Idempotency keys"): a key
//! scoped to (credential, method, route, key), claimed before the effect; the effect and its
//! stored answer commit together; a byte-identical retry replays that answer, another request
//! with the key, or one while the first still runs, is refused with 409. Records are kept at
//! least `KEEP_FOR`, then pruned by the janitor.

use time::Duration;

use crate::kernel::error::{FieldError, PortResult};
use crate::kernel::secret::SealedSecret;
use crate::kernel::timestamp::Timestamp;

/// The request header.
pub const HEADER: &str = "Idempotency-Key";
/// Longest key accepted.
pub const MAX_KEY_LEN: usize = 255;
/// How long an answer is kept for replay (at least; the janitor prunes older records).
pub const KEEP_FOR: Duration = Duration::hours(24);
/// How long a claim holds the key while its request runs (real time). A claim whose request
/// died is taken over by a byte-identical retry after this; the effect never ran, since the
/// effect and the answer commit together.
pub const CLAIM_LEASE: Duration = Duration::seconds(60);

/// A key as the client sent it: 1 to 255 printable ASCII characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotencyKey(String);

impl IdempotencyKey {
    pub fn parse(value: &str) -> Result<IdempotencyKey, FieldError> {
        let ok = !value.trim().is_empty()
            && value.len() <= MAX_KEY_LEN
            && value.bytes().all(|b| (0x20..=0x7e).contains(&b));
        if ok {
            Ok(IdempotencyKey(value.to_owned()))
        } else {
            Err(FieldError::new(
                HEADER,
                format!("{HEADER} must be 1 to {MAX_KEY_LEN} printable ASCII characters"),
            ))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The spec's two 409 answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum IdempotencyConflict {
    #[error("Idempotency-Key was already used for a different request")]
    Reused,
    #[error("a request with this Idempotency-Key is still running")]
    InFlight,
}

/// A request that carries a key: its scope (`<credential>:<METHOD>:<route>`), the key, and a
/// fingerprint of its exact bytes (SHA-256 of the raw body).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotentRequest {
    pub scope: String,
    pub key: IdempotencyKey,
    pub fingerprint: String,
}

impl IdempotentRequest {
    /// Associated data binding a sealed answer to its record.
    pub fn aad(&self) -> String {
        format!("idempotency_keys:{}:{}", self.scope, self.key.as_str())
    }
}

/// What a claim found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// The key is ours now (a new record, or a dead claim of the same request taken over),
    /// marked by this token until the answer is stored.
    Claimed { token: String },
    /// The same request was answered: its sealed answer.
    Answered(SealedSecret),
    /// The same key holds another request's fingerprint.
    Reused,
    /// The same request is still running (its claim's lease has not ended).
    InFlight,
}

/// A stored record as a claim finds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub fingerprint: String,
    pub answer: Option<SealedSecret>,
    pub lease_until: Timestamp,
}

/// What a claim does next (the one rule of every store's `claim_idempotency_key`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClaimStep {
    /// No record: insert one in flight.
    Insert,
    /// The same request's claim died (its lease ended): take it over.
    TakeOver,
    /// Decided without a write.
    Decided(Claim),
}

/// Decides a claim of `request` at `now` over the record found for its (scope, key).
pub fn claim_step(found: Option<Found>, request: &IdempotentRequest, now: Timestamp) -> ClaimStep {
    match found {
        None => ClaimStep::Insert,
        Some(f) if f.fingerprint != request.fingerprint => ClaimStep::Decided(Claim::Reused),
        Some(Found {
            answer: Some(answer),
            ..
        }) => ClaimStep::Decided(Claim::Answered(answer)),
        Some(f) if f.lease_until > now => ClaimStep::Decided(Claim::InFlight),
        Some(_) => ClaimStep::TakeOver,
    }
}

/// The answer of a claimed request, stored in the same transaction as its effect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    pub scope: String,
    pub key: String,
    /// The claim's token: a claim taken over by another request no longer completes.
    pub token: String,
    pub answer: SealedSecret,
}

/// Idempotency records.
pub trait IdempotencyStore {
    /// Atomically (concurrent claims of one key: exactly one gets `Claimed`), by `claim_step`
    /// over the record of (scope, key): `Insert` inserts one in flight with the fingerprint,
    /// `token`, `lease_until` and `now` as its creation, and returns `Claimed`; `TakeOver` sets
    /// `token` and `lease_until` by compare-and-set on the old token (`Claimed`, or `InFlight`
    /// when another took it first); `Decided` returns its claim.
    fn claim_idempotency_key(
        &self,
        request: &IdempotentRequest,
        token: &str,
        now: Timestamp,
        lease_until: Timestamp,
    ) -> PortResult<Claim>;
    /// Deletes the in-flight record of (scope, key) holding `token` (its request failed before
    /// any effect), so that a retry may run.
    fn release_idempotency_key(&self, scope: &str, key: &str, token: &str) -> PortResult<()>;
    /// Deletes records created before `before`. Returns how many went.
    fn prune_idempotency_keys(&self, before: Timestamp) -> PortResult<u64>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys() {
        for ok in [
            "a",
            "0f8fad5b-d9cb-469f-a165-70867728950e",
            &"k".repeat(255),
        ] {
            assert_eq!(IdempotencyKey::parse(ok).unwrap().as_str(), ok);
        }
        for bad in ["", "   ", &"k".repeat(256), "caf\u{e9}", "a\nb", "a\u{7f}"] {
            let e = IdempotencyKey::parse(bad).unwrap_err();
            assert_eq!(e.field, HEADER, "{bad:?}");
        }
    }
}
