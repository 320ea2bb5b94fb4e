//! Merchant settings: settlement assets, fees, tolerance, redirects and branding.

mod model;
pub mod ports;

pub use model::*;
