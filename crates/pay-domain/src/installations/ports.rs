//! What the installations context needs from storage.

use crate::installations::model::{Installation, NativePlatform};
use crate::kernel::error::PortResult;
use crate::kernel::timestamp::Timestamp;
use crate::oauth::StoredApplication;

/// Platform templates: written once, never changed.
pub trait PlatformStore {
    /// Inserts; `false` (and nothing written) when the platform identifier exists already.
    fn insert_platform(&self, platform: &NativePlatform) -> PortResult<bool>;
    fn platform(&self, platform: &str) -> PortResult<Option<NativePlatform>>;
}

/// Installations, each with the OAuth application made for it.
pub trait InstallationStore {
    /// Inserts the installation and its application (`installation.application_id` is
    /// `app.app.id`) in ONE transaction: both or neither. `false`, and nothing written, when
    /// an installation with its `registration_id` exists; of any number of concurrent calls
    /// with one `registration_id`, exactly one returns true.
    fn insert_installation(
        &self,
        installation: &Installation,
        app: &StoredApplication,
    ) -> PortResult<bool>;
    /// The installation registered under `registration_id`, with its application as stored
    /// now (its key included).
    fn installation(
        &self,
        registration_id: &str,
    ) -> PortResult<Option<(Installation, StoredApplication)>>;
    /// Sets the support metadata (`platform_version`, `plugin_version`, `site_name`) to those
    /// of `installation` and `updated_at` to `at`; nothing else changes.
    fn update_installation_metadata(
        &self,
        installation: &Installation,
        at: Timestamp,
    ) -> PortResult<()>;
}

/// Every port of the installations context.
pub trait InstallationPorts: PlatformStore + InstallationStore + Send + Sync {}

impl<T: PlatformStore + InstallationStore + Send + Sync> InstallationPorts for T {}
