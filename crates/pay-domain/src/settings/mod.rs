//! Merchant settings: settlement assets, fees, tolerance, redirects and branding.

mod error;
mod model;
pub mod ports;
mod service;

pub use error::SettingsError;
pub use model::*;
pub use service::SettingsService;
