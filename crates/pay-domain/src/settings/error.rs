//! What the settings use cases refuse.

use crate::kernel::assets::AssetRefusal;
use crate::kernel::error::{Fault, FieldError};
use crate::tenancy::Denied;

crate::context_error! {
    /// What reading or patching the settings can return.
    pub enum SettingsError {
        Invalid(FieldError),
        Asset(AssetRefusal),
        Denied(Denied),
        Fault(Fault),
    }
}
