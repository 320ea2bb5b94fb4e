//! A short-lived cache of the two reads on every API call: the key lookup that authenticates
//! it and the company-with-settings that link creation reads. Writes made through this store
//! drop the entries they touch at once; writes made by another instance are seen once the
//! entry's time to live (about a second) has passed. Only found rows are cached, so unknown
//! keys always reach the database.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use pay_domain::ids::{CompanyId, PartnerId};
use pay_domain::integration::StoredIntegration;
use pay_domain::settings::PaySettings;
use pay_domain::tenancy::Company;
use pay_domain::timestamp::Timestamp;

/// Entries kept per map before it is emptied (a bound, not an eviction policy: the working set
/// of a running service is its active keys and companies).
const MAX_ENTRIES: usize = 10_000;

/// A cached value with the instant it was read.
type Entries<K, V> = Mutex<HashMap<K, (Instant, V)>>;

/// The read cache. `ttl` zero disables it.
#[derive(Debug)]
pub(crate) struct ReadCache {
    ttl: Duration,
    keys: Entries<String, StoredIntegration>,
    companies: Entries<CompanyId, (Company, PaySettings)>,
}

fn get<K: std::hash::Hash + Eq, V: Clone>(
    map: &Entries<K, V>,
    key: &K,
    ttl: Duration,
) -> Option<V> {
    let map = map.lock().unwrap_or_else(|p| p.into_inner());
    match map.get(key) {
        Some((at, v)) if at.elapsed() < ttl => Some(v.clone()),
        _ => None,
    }
}

fn put<K: std::hash::Hash + Eq, V>(map: &Entries<K, V>, key: K, value: V) {
    let mut map = map.lock().unwrap_or_else(|p| p.into_inner());
    if map.len() >= MAX_ENTRIES {
        map.clear();
    }
    map.insert(key, (Instant::now(), value));
}

impl ReadCache {
    pub(crate) fn new(ttl: Duration) -> Self {
        ReadCache {
            ttl,
            keys: Mutex::new(HashMap::new()),
            companies: Mutex::new(HashMap::new()),
        }
    }

    fn enabled(&self) -> bool {
        !self.ttl.is_zero()
    }

    pub(crate) fn key(&self, key_id: &str) -> Option<StoredIntegration> {
        if !self.enabled() {
            return None;
        }
        get(&self.keys, &key_id.to_owned(), self.ttl)
    }

    pub(crate) fn put_key(&self, integration: &StoredIntegration) {
        if self.enabled() {
            let id = integration.integration.key_id.as_str().to_owned();
            put(&self.keys, id, integration.clone());
        }
    }

    /// After enabling, disabling or deleting a key: forget every key (rare operations).
    pub(crate) fn forget_keys(&self) {
        self.keys.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }

    /// After a use was recorded: keep the cached copy's `last_used_at` current, so the
    /// once-a-minute rule does not write again on every call within the time to live.
    pub(crate) fn touched(&self, partner: PartnerId, at: Timestamp) {
        let mut map = self.keys.lock().unwrap_or_else(|p| p.into_inner());
        for (_, entry) in map.values_mut() {
            if entry.integration.partner_id == partner {
                entry.integration.last_used_at = Some(at);
            }
        }
    }

    pub(crate) fn company(&self, company: CompanyId) -> Option<(Company, PaySettings)> {
        if !self.enabled() {
            return None;
        }
        get(&self.companies, &company, self.ttl)
    }

    pub(crate) fn put_company(&self, company: CompanyId, value: &(Company, PaySettings)) {
        if self.enabled() {
            put(&self.companies, company, value.clone());
        }
    }

    pub(crate) fn forget_company(&self, company: CompanyId) {
        self.companies
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&company);
    }
}
