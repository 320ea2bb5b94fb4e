//! The port contracts every store implementation must keep, as cases that take a fresh, empty
//! store: compare-and-set writes, per-link event numbers, claim leases, one-time claims and
//! atomic rate limits. The in-memory store runs them (`tests/conformance.rs` of pay-domain), so
//! does `pay-store` on SQLite and PostgreSQL; an integrator implementing a port runs the same.

pub mod bookkeeping;
pub mod checkout;
pub mod events;
pub mod evidence;
pub mod files;
pub mod fixtures;
pub mod grant_webhooks;
pub mod installations;
pub mod keyed;
pub mod links;
pub mod mail;
pub mod oauth;
pub mod oauth_instances;
pub mod oauth_recovery;
pub mod onboarding;
pub mod ratelimit;
pub mod reactions;
pub mod subscriptions;
pub mod tenancy;
pub mod webhooks;
