//! What settings need from storage.

use crate::kernel::error::PortResult;
use crate::kernel::ids::CompanyId;
use crate::kernel::timestamp::Timestamp;
use crate::settings::PaySettings;

/// Merchant settings.
pub trait SettingsStore {
    fn save_settings(
        &self,
        company: CompanyId,
        settings: &PaySettings,
        at: Timestamp,
    ) -> PortResult<()>;
}
