//! What the installations context needs from storage.

use crate::installations::model::NativePlatform;
use crate::kernel::error::PortResult;

/// Platform templates: written once, never changed.
pub trait PlatformStore {
    /// Inserts; `false` (and nothing written) when the platform identifier exists already.
    fn insert_platform(&self, platform: &NativePlatform) -> PortResult<bool>;
    fn platform(&self, platform: &str) -> PortResult<Option<NativePlatform>>;
}

/// Every port of the installations context.
pub trait InstallationPorts: PlatformStore + Send + Sync {}

impl<T: PlatformStore + Send + Sync> InstallationPorts for T {}
