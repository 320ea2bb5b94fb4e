//! What every context's service shares: real time, randomness and digests, the sealer of
//! secrets at rest, the asset catalogue, the public checkout origin and the rate limits.

use std::sync::Arc;

use crate::kernel::assets::AssetCatalogue;
use crate::kernel::error::{Fault, PortResult, RateLimited};
use crate::kernel::idempotency::IdempotencyStore;
use crate::kernel::ports::{Clock, Crypto, SecretSealer};
use crate::kernel::ratelimit::{self, Limit, RateLimitStore, RateLimits};
use crate::kernel::secret::Secret;
use crate::kernel::timestamp::Timestamp;

/// Length of random secret parts (base62; 43 characters carry about 256 bits).
pub const SECRET_LEN: usize = 43;

/// The shared ports and settings every service holds a (cheap) clone of.
#[derive(Clone)]
pub struct Kernel {
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) crypto: Arc<dyn Crypto>,
    pub(crate) sealer: Arc<dyn SecretSealer>,
    pub(crate) assets: Arc<AssetCatalogue>,
    /// `{public_pay_url}`: where hosted checkout pages live.
    pub(crate) public_pay_url: Arc<str>,
    /// What each rate-limited entry point allows.
    pub(crate) limits: RateLimits,
    pub(crate) hits: Arc<dyn RateLimitStore + Send + Sync>,
    /// The outbox of domain events: deciding contexts write into it, reacting ones consume.
    pub(crate) events: crate::kernel::events::Events,
    /// The records of keyed creates (`kernel::keyed`).
    pub(crate) idempotency: Arc<dyn IdempotencyStore + Send + Sync>,
}

impl std::fmt::Debug for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kernel")
            .field("public_pay_url", &self.public_pay_url)
            .finish_non_exhaustive()
    }
}

/// What a `Kernel` is built from: the ports every context shares and the operator's settings
/// they all read.
pub struct KernelParts {
    /// Real time of the process (tests stand in for it).
    pub clock: Arc<dyn Clock>,
    pub crypto: Arc<dyn Crypto>,
    pub sealer: Arc<dyn SecretSealer>,
    /// Where the rate-limit hits are counted.
    pub rate_limits: Arc<dyn RateLimitStore + Send + Sync>,
    pub assets: AssetCatalogue,
    /// `{public_pay_url}`: where hosted checkout pages live.
    pub public_pay_url: String,
    /// What each rate-limited entry point allows.
    pub limits: RateLimits,
    /// The outbox of domain events (what one context decided and others react to).
    pub events: Arc<dyn crate::kernel::events::EventStore + Send + Sync>,
    /// The idempotency records of keyed creates (one table with the grant subscription's).
    pub idempotency: Arc<dyn IdempotencyStore + Send + Sync>,
}

impl std::fmt::Debug for KernelParts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelParts")
            .field("public_pay_url", &self.public_pay_url)
            .finish_non_exhaustive()
    }
}

impl Kernel {
    /// The shared part every service is built with (each takes a clone: one reference count
    /// per port).
    pub fn new(parts: KernelParts) -> Kernel {
        Kernel {
            clock: parts.clock,
            crypto: parts.crypto,
            sealer: parts.sealer,
            assets: Arc::new(parts.assets),
            public_pay_url: parts.public_pay_url.into(),
            limits: parts.limits,
            hits: parts.rate_limits,
            events: crate::kernel::events::Events::new(parts.events),
            idempotency: parts.idempotency,
        }
    }

    /// The outbox of domain events: a host subscribes the reacting services it builds
    /// (`Events::subscribe`) and runs `Events::drain` in a background loop.
    pub fn events(&self) -> &crate::kernel::events::Events {
        &self.events
    }

    /// `{public_pay_url}`: where hosted checkout pages live.
    pub fn public_pay_url(&self) -> &str {
        &self.public_pay_url
    }

    /// Real time: for security windows (throttles, rate limits, sign-in sessions), leases and
    /// what no company schedules. A company's own clock is `TenancyService::company_now`.
    pub(crate) fn now(&self) -> Timestamp {
        self.clock.now()
    }

    /// Counts one hit of `key` (digested: never stored raw) against `limit`, on real time;
    /// `RateLimited` when the bucket is full. The count and the decision are one atomic store
    /// call, so a burst cannot pass together.
    pub(crate) fn throttle<E: From<Fault> + From<RateLimited>>(
        &self,
        key: &str,
        limit: &Limit,
    ) -> Result<(), E> {
        let counted = self
            .hits
            .hit(&self.bucket(key), self.now(), limit.window, limit.max)?;
        Ok(ratelimit::check(counted, limit)?)
    }

    /// `throttle` with the hit counted at `at` (to be forgotten at that instant again).
    pub(crate) fn throttle_at<E: From<Fault> + From<RateLimited>>(
        &self,
        key: &str,
        limit: &Limit,
        at: Timestamp,
    ) -> Result<(), E> {
        let counted = self
            .hits
            .hit(&self.bucket(key), at, limit.window, limit.max)?;
        Ok(ratelimit::check(counted, limit)?)
    }

    /// Forgets the one hit of `key` counted at `at` (an attempt that succeeded).
    pub(crate) fn forget_throttle_hit(&self, key: &str, at: Timestamp) -> PortResult<()> {
        self.hits.forget_hit(&self.bucket(key), at)
    }

    /// Forgets the hits of `key` (a successful login clears its failures).
    pub(crate) fn clear_throttle(&self, key: &str) -> PortResult<()> {
        self.hits.clear_hits(&self.bucket(key))
    }

    fn bucket(&self, key: &str) -> String {
        self.crypto.digest(key).0
    }

    /// `prefix` and a fresh random secret part.
    pub(crate) fn new_secret(&self, prefix: &str) -> Secret {
        Secret::new(format!(
            "{prefix}{}",
            self.crypto.random_alphanumeric(SECRET_LEN)
        ))
    }

    /// A fresh public id of `len` characters that `parse` must accept.
    pub(crate) fn new_public_id<T>(
        &self,
        len: usize,
        parse: impl FnOnce(&str) -> Option<T>,
    ) -> PortResult<T> {
        parse(&self.crypto.random_alphanumeric(len))
            .ok_or_else(|| Fault::new("bad id from the random generator"))
    }
}
