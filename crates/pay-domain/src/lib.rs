//! The pure core of the payment collection service: rules, use cases and the port traits that
//! adapters implement. Nothing here performs I/O, so integrators can embed it in their own host
//! and contributors can test every rule without a database or a network.

pub mod address;
pub mod amount;
pub mod assets;
pub mod checkout;
pub mod error;
pub mod gateway;
pub mod ids;
pub mod integration;
pub mod link;
pub mod mail;
pub mod ports;
pub mod quote;
pub mod ratelimit;
pub mod secret;
pub mod service;
pub mod session;
pub mod settings;
pub mod tenancy;
pub mod testclock;
pub mod timestamp;
pub mod timezones;
pub mod validate;
pub mod webhook;

pub use error::{DomainError, DomainResult};
