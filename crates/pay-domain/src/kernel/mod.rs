//! What every context shares: ids, exact amounts, the asset catalogue, time, secrets, input
//! validation, chain addresses, rate limits, the error kinds and the ports for real time,
//! randomness and secrets at rest.

pub mod address;
pub mod amount;
pub mod assets;
pub mod error;
pub mod events;
pub mod hex;
pub mod html;
pub mod idempotency;
pub mod ids;
pub mod keyed;
pub mod observers;
pub mod ports;
pub mod ratelimit;
pub mod secret;
pub mod service;
pub mod timestamp;
pub mod timezones;
pub mod validate;
