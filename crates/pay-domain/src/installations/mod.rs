//! Native commerce-platform installations, on top of OAuth grants: the platform templates an
//! operator creates (`pay-server admin create-native-platform`), each with its immutable
//! branding (name, icon, support link) and the official native scopes; a plugin's
//! registration (`registration` holds the body's field rules) proves its DPoP key and gets a
//! public, DPoP-bound application bound to that key; a key change proves the registered key
//! too (`DPoP-Previous`) and waits for consent (`oauth::RegisteredKey`).

mod error;
mod model;
pub mod ports;
pub mod registration;
mod service;

pub use error::{InstallationError, PlatformExists, RegistrationConflict};
pub use model::{
    is_platform_id, Installation, NativeClient, NativePlatform, NewPlatform, MAX_PLATFORM_LEN,
    MAX_PLATFORM_NAME_LEN, NATIVE_SCOPES,
};
pub use service::InstallationService;
