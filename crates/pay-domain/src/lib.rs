//! The pure core of the payment collection service: rules, use cases and the port traits that
//! adapters implement. Nothing here performs I/O, so integrators can embed it in their own host
//! and contributors can test every rule without a database or a network.
//!
//! Each feature area is a context folder with its model, its status machine, its ports and its
//! service; `kernel` holds what they all share. `docs/architecture.md` has the map.

pub mod kernel;

pub mod chains;
pub mod checkout;
pub mod links;
pub mod mail;
pub mod outbox;
pub mod sandbox;
pub mod settings;
pub mod tenancy;
pub mod webhooks;

// Rooms for the contexts the next issues add.
pub mod bookkeeping;
pub mod customers;
pub mod installations;
pub mod oauth;
pub mod onboarding;
pub mod subscriptions;

pub mod app;

#[cfg(any(test, feature = "testing"))]
pub mod testing;

pub use kernel::error::{Fault, FieldError, NotFound, PortResult, RateLimited, UnknownField};
