//! A short-lived cache of the two reads on every API call: the key lookup that authenticates
//! it and the company-with-settings that link creation reads. Writes made through this store
//! drop the entries they touch at once; writes made by another instance are seen once the
//! entry's time to live (about a second) has passed. Only found rows are cached, so unknown
//! keys always reach the database.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use pay_domain::kernel::ids::{CompanyId, PartnerId};
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::settings::PaySettings;
use pay_domain::tenancy::keys::StoredIntegration;
use pay_domain::tenancy::Company;

/// Entries kept per map before it is emptied (a bound, not an eviction policy: the working set
/// of a running service is its active keys and companies).
const MAX_ENTRIES: usize = 10_000;

/// The cached values with the instant each was read, and a generation that every forget moves
/// on: a reader notes the generation before it reads the database and may only store what it
/// read if no forget came in between (else a value read before a write could be stored after
/// the write dropped the entry, and be served for a whole time to live).
type Entries<K, V> = Mutex<Generation<K, V>>;
/// The generation and the map it guards.
type Generation<K, V> = (u64, HashMap<K, (Instant, V)>);

/// The read cache. `ttl` zero disables it.
#[derive(Debug)]
pub(crate) struct ReadCache {
    ttl: Duration,
    keys: Entries<String, StoredIntegration>,
    companies: Entries<CompanyId, (Company, PaySettings)>,
}

fn lock<K, V>(map: &Entries<K, V>) -> std::sync::MutexGuard<'_, Generation<K, V>> {
    map.lock().unwrap_or_else(|p| p.into_inner())
}

/// The value, when cached within the time to live, else the generation to read under.
fn get<K: std::hash::Hash + Eq, V: Clone>(
    map: &Entries<K, V>,
    key: &K,
    ttl: Duration,
) -> Result<V, u64> {
    let guard = lock(map);
    match guard.1.get(key) {
        Some((at, v)) if at.elapsed() < ttl => Ok(v.clone()),
        _ => Err(guard.0),
    }
}

/// Stores what was read under `generation`, unless something was forgotten since.
fn put<K: std::hash::Hash + Eq, V>(map: &Entries<K, V>, generation: u64, key: K, value: V) {
    let mut guard = lock(map);
    if guard.0 != generation {
        return;
    }
    if guard.1.len() >= MAX_ENTRIES {
        guard.1.clear();
    }
    guard.1.insert(key, (Instant::now(), value));
}

fn forget<K: std::hash::Hash + Eq, V>(map: &Entries<K, V>, key: Option<&K>) {
    let mut guard = lock(map);
    guard.0 = guard.0.wrapping_add(1);
    match key {
        Some(k) => {
            guard.1.remove(k);
        }
        None => guard.1.clear(),
    }
}

impl ReadCache {
    pub(crate) fn new(ttl: Duration) -> Self {
        ReadCache {
            ttl,
            keys: Mutex::new((0, HashMap::new())),
            companies: Mutex::new((0, HashMap::new())),
        }
    }

    fn enabled(&self) -> bool {
        !self.ttl.is_zero()
    }

    /// The cached key, else the generation to pass to `put_key` after reading it.
    pub(crate) fn key(&self, key_id: &str) -> Result<StoredIntegration, u64> {
        if !self.enabled() {
            return Err(0);
        }
        get(&self.keys, &key_id.to_owned(), self.ttl)
    }

    pub(crate) fn put_key(&self, generation: u64, integration: &StoredIntegration) {
        if self.enabled() {
            let id = integration.integration.key_id.as_str().to_owned();
            put(&self.keys, generation, id, integration.clone());
        }
    }

    /// Before and after enabling, disabling or deleting a key: forget every key (rare
    /// operations); a lookup that read the row before the write cannot store it afterwards.
    pub(crate) fn forget_keys(&self) {
        forget(&self.keys, None);
    }

    /// After a use was recorded: keep the cached copy's `last_used_at` current, so the
    /// once-a-minute rule does not write again on every call within the time to live.
    pub(crate) fn touched(&self, partner: PartnerId, at: Timestamp) {
        let mut guard = lock(&self.keys);
        for (_, entry) in guard.1.values_mut() {
            if entry.integration.partner_id == partner {
                entry.integration.last_used_at = Some(at);
            }
        }
    }

    /// The cached company, else the generation to pass to `put_company` after reading it.
    pub(crate) fn company(&self, company: CompanyId) -> Result<(Company, PaySettings), u64> {
        if !self.enabled() {
            return Err(0);
        }
        get(&self.companies, &company, self.ttl)
    }

    pub(crate) fn put_company(
        &self,
        generation: u64,
        company: CompanyId,
        value: &(Company, PaySettings),
    ) {
        if self.enabled() {
            put(&self.companies, generation, company, value.clone());
        }
    }

    pub(crate) fn forget_company(&self, company: CompanyId) {
        forget(&self.companies, Some(&company));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_read_before_a_forget_is_not_stored_after_it() {
        let map: Entries<u32, &str> = Mutex::new((0, HashMap::new()));
        let ttl = Duration::from_secs(60);
        // A lookup misses and notes the generation; a write forgets meanwhile (the race of a
        // key disabled during a lookup); the lookup's late put is dropped.
        let generation = get(&map, &1, ttl).unwrap_err();
        forget(&map, None);
        put(&map, generation, 1, "enabled (stale)");
        assert!(get(&map, &1, ttl).is_err());
        // A lookup that starts after the forget stores what it read.
        let generation = get(&map, &1, ttl).unwrap_err();
        put(&map, generation, 1, "disabled");
        assert_eq!(get(&map, &1, ttl), Ok("disabled"));
        // Forgetting one key moves the generation too and leaves the others.
        put(&map, generation, 2, "other");
        forget(&map, Some(&1));
        assert!(get(&map, &1, ttl).is_err());
        assert_eq!(get(&map, &2, ttl), Ok("other"));
    }
}
