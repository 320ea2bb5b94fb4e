//! Native commerce-platform installations, on top of OAuth grants. Built so far: the platform
//! templates an operator creates (`pay-server admin create-native-platform`), each with its
//! immutable branding (name, icon, support link) and the official native scopes; a plugin's
//! registration names one, and an unknown platform is refused (400); the registration body's
//! field rules (`registration`).

mod error;
mod model;
pub mod ports;
pub mod registration;
mod service;

pub use error::{InstallationError, PlatformExists};
pub use model::{
    is_platform_id, NativePlatform, NewPlatform, MAX_PLATFORM_LEN, MAX_PLATFORM_NAME_LEN,
    NATIVE_SCOPES,
};
pub use service::InstallationService;
