//! Installations use cases over their own ports.

use std::sync::Arc;

use crate::installations::error::{InstallationError, PlatformExists};
use crate::installations::model::{is_platform_id, NativePlatform, NewPlatform, NATIVE_SCOPES};
use crate::installations::ports::InstallationPorts;
use crate::kernel::error::FieldError;
use crate::kernel::service::Kernel;

type Result<T, E = InstallationError> = std::result::Result<T, E>;

/// Native platform templates (and, on them, installations).
#[derive(Clone)]
pub struct InstallationService {
    k: Kernel,
    store: Arc<dyn InstallationPorts>,
}

impl std::fmt::Debug for InstallationService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InstallationService")
            .finish_non_exhaustive()
    }
}

impl InstallationService {
    /// The installations context over its own store alone.
    pub fn new(k: Kernel, store: Arc<dyn InstallationPorts>) -> InstallationService {
        InstallationService { k, store }
    }

    /// Creates a platform template (`pay-server admin create-native-platform`) with the
    /// official native scopes. An existing identifier is `PlatformExists`: a template is never
    /// changed, so installations keep the branding their merchants approved.
    pub fn create_platform(&self, input: NewPlatform) -> Result<NativePlatform> {
        input.validate()?;
        let platform = NativePlatform {
            platform: input.platform,
            name: input.name.trim().to_owned(),
            icon_url: input.icon_url,
            support_url: input.support_url,
            scopes: NATIVE_SCOPES.to_vec(),
            created_at: self.k.now(),
        };
        if !self.store.insert_platform(&platform)? {
            return Err(PlatformExists.into());
        }
        Ok(platform)
    }

    /// The template a registration names; an unknown (or malformed) one is `Invalid` on
    /// `platform`.
    pub fn platform(&self, platform: &str) -> Result<NativePlatform> {
        let unknown = || FieldError::new("platform", "unknown platform");
        if !is_platform_id(platform) {
            return Err(unknown().into());
        }
        Ok(self.store.platform(platform)?.ok_or_else(unknown)?)
    }
}
