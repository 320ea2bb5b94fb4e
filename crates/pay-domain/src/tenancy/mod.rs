//! Tenancy: users, companies and memberships, signed-in (browser) sessions, and API keys.

mod error;
pub mod keys;
mod model;
mod pay_settings;
pub mod ports;
mod service;

pub use error::{ApiKeyNotFound, Denied, InvalidLogin, TenancyError};
pub use model::*;
pub use pay_settings::{FeePayer, PaySettings, ProductStatus};
pub use service::{
    BootstrapOutcome, LoginOutcome, SignedIn, TenancyService, MIN_PASSWORD_LEN, SIGN_IN_TTL,
};
