//! What a proof's protected header says, remembered by its exact base64url text. A client
//! signs every proof with the same key, so its header segment (`typ`, `alg`, `jwk`) is the same
//! bytes each time: the header's decoding, its JSON, the key's checks and its RFC 7638
//! thumbprint are a pure function of those bytes, done once per key instead of once per proof.
//! Only a header whose proof's signature verified is remembered (an unproven key never takes a
//! place), and nothing about a proof is: its payload and signature are checked every time.
//!
//! A P-256 key that keeps signing proofs bound to a token ([`HOT_USES`] of them) also gets a
//! table of its multiples (`es256`), which makes each later signature check about half as
//! costly; at most `es256::MAX_TABLES` exist at once, and a key's table goes with its entry.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::error::ProofError;
use crate::es256::KeyTable;
use crate::jose::{Alg, PublicJwk};

/// Proofs bound to a token that a P-256 key signs before it gets a table (the table costs
/// about as much as 50 checks without it), and again every so many if none could be built.
pub(crate) const HOT_USES: u32 = 64;

/// Headers remembered before the memo is emptied: a bound, not an eviction policy (one entry
/// per client key in use).
const MAX_ENTRIES: usize = 4096;

/// A header that passed every rule of `verify_proof`: its algorithm, its public key and the
/// key's thumbprint.
#[derive(Debug)]
pub(crate) struct KnownKey {
    pub(crate) alg: Alg,
    pub(crate) key: PublicJwk,
    pub(crate) jkt: String,
    /// Proofs by this key that passed every check for a token bound to it.
    bound_uses: AtomicU32,
    table: OnceLock<KeyTable>,
}

impl KnownKey {
    pub(crate) fn new(alg: Alg, key: PublicJwk, jkt: String) -> KnownKey {
        KnownKey {
            alg,
            key,
            jkt,
            bound_uses: AtomicU32::new(0),
            table: OnceLock::new(),
        }
    }

    /// Verifies a JWS signature over `signing_input` with this key: by its table when it has
    /// one, else by ring.
    pub(crate) fn verify(&self, signing_input: &[u8], signature: &[u8]) -> Result<(), ProofError> {
        match self.table.get() {
            Some(table) if table.verify(signing_input, signature) => Ok(()),
            Some(_) => Err(ProofError::BadSignature),
            None => self.key.verify(signing_input, signature),
        }
    }

    /// Counts a proof by this key that passed every check for a token bound to it; the
    /// [`HOT_USES`]th (and every further one as many later, while it has none) builds the
    /// key's table.
    pub(crate) fn bound_use(&self) {
        let uses = self
            .bound_uses
            .fetch_add(1, Ordering::Relaxed)
            .wrapping_add(1);
        if !uses.is_multiple_of(HOT_USES) || self.table.get().is_some() {
            return;
        }
        if let PublicJwk::P256 { point, .. } = &self.key {
            if let Some(table) = KeyTable::build(&point[1..33], &point[33..65]) {
                // Another thread may have set one meanwhile: this one then goes.
                let _ = self.table.set(table);
            }
        }
    }

    #[cfg(test)]
    pub(crate) fn has_table(&self) -> bool {
        self.table.get().is_some()
    }
}

type Memo = Mutex<HashMap<Box<str>, Arc<KnownKey>>>;

fn memo() -> &'static Memo {
    static MEMO: OnceLock<Memo> = OnceLock::new();
    MEMO.get_or_init(Memo::default)
}

fn lock() -> std::sync::MutexGuard<'static, HashMap<Box<str>, Arc<KnownKey>>> {
    memo().lock().unwrap_or_else(|p| p.into_inner())
}

/// The key of a header segment seen before with a valid signature.
pub(crate) fn get(header_segment: &str) -> Option<Arc<KnownKey>> {
    lock().get(header_segment).cloned()
}

/// Remembers `key` for `header_segment` (call only once a signature by it verified).
pub(crate) fn put(header_segment: &str, key: Arc<KnownKey>) {
    let mut memo = lock();
    if memo.len() >= MAX_ENTRIES {
        memo.clear();
    }
    memo.insert(header_segment.into(), key);
}
