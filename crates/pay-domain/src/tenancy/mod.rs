//! Tenancy: users, companies and memberships, signed-in (browser) sessions, and API keys.

pub mod keys;
mod model;
pub mod ports;

pub use model::*;
