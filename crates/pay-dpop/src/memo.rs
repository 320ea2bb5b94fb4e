//! What a proof's protected header says, remembered by its exact base64url text. A client
//! signs every proof with the same key, so its header segment (`typ`, `alg`, `jwk`) is the same
//! bytes each time: the header's decoding, its JSON, the key's checks and its RFC 7638
//! thumbprint are a pure function of those bytes, done once per key instead of once per proof.
//! Only a header whose proof's signature verified is remembered (an unproven key never takes a
//! place), and nothing about a proof is: its payload and signature are checked every time.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use crate::jose::{Alg, PublicJwk};

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
