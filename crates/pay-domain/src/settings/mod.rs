//! Merchant settings: settlement assets, fees, tolerance, redirects and branding.

mod model;
pub mod ports;
mod service;

pub use model::*;
pub use service::SettingsService;
