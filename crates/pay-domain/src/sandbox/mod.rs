//! The sandbox: each company's test clock, and the processor events a developer sends by hand.

pub mod clock;
