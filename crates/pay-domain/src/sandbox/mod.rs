//! The sandbox: each company's test clock, and the processor events a developer sends by hand.

pub mod clock;
mod service;

pub use service::{SandboxEvent, SandboxService, MAX_EVENT_ID_LEN};
