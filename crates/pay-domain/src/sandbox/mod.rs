//! The sandbox: each company's test clock, and the processor events a developer sends by hand.

pub mod clock;
mod error;
pub mod ports;
mod service;

pub use error::SandboxError;
pub use service::{SandboxEvent, SandboxService, MAX_EVENT_ID_LEN};
