//! The in-memory store: native platform templates and installations.

use super::{unique_violation, MemStore};
use crate::installations::ports::{InstallationStore, PlatformStore};
use crate::installations::{Installation, NativePlatform};
use crate::kernel::error::{Fault, PortResult};
use crate::kernel::timestamp::Timestamp;
use crate::oauth::StoredApplication;

impl PlatformStore for MemStore {
    fn insert_platform(&self, platform: &NativePlatform) -> PortResult<bool> {
        self.count_call("insert_platform");
        let mut t = self.write();
        if t.native_platforms
            .iter()
            .any(|p| p.platform == platform.platform)
        {
            return Ok(false);
        }
        t.native_platforms.push(platform.clone());
        Ok(true)
    }

    fn platform(&self, platform: &str) -> PortResult<Option<NativePlatform>> {
        self.count_call("platform");
        Ok(self
            .tables()
            .native_platforms
            .iter()
            .find(|p| p.platform == platform)
            .cloned())
    }
}

impl InstallationStore for MemStore {
    fn insert_installation(
        &self,
        installation: &Installation,
        app: &StoredApplication,
    ) -> PortResult<bool> {
        self.count_call("insert_installation");
        let mut t = self.write();
        if t.native_installations
            .iter()
            .any(|i| i.registration_id == installation.registration_id)
        {
            return Ok(false);
        }
        if installation.application_id != app.app.id {
            return Err(Fault::new("foreign key: application"));
        }
        if t.oauth
            .applications
            .iter()
            .any(|a| a.app.id == app.app.id || a.app.client_id == app.app.client_id)
        {
            return Err(unique_violation("oauth_applications.client_id"));
        }
        t.oauth.applications.push(app.clone());
        t.native_installations.push(installation.clone());
        Ok(true)
    }

    fn installation(
        &self,
        registration_id: &str,
    ) -> PortResult<Option<(Installation, StoredApplication)>> {
        self.count_call("installation");
        let t = self.tables();
        let Some(i) = t
            .native_installations
            .iter()
            .find(|i| i.registration_id == registration_id)
        else {
            return Ok(None);
        };
        let app = t
            .oauth
            .applications
            .iter()
            .find(|a| a.app.id == i.application_id)
            .ok_or_else(|| Fault::new("foreign key: application"))?;
        Ok(Some((i.clone(), app.clone())))
    }

    fn update_installation_metadata(
        &self,
        installation: &Installation,
        at: Timestamp,
    ) -> PortResult<()> {
        self.count_call("update_installation_metadata");
        let mut t = self.write();
        if let Some(i) = t
            .native_installations
            .iter_mut()
            .find(|i| i.registration_id == installation.registration_id)
        {
            i.platform_version = installation.platform_version.clone();
            i.plugin_version = installation.plugin_version.clone();
            i.site_name = installation.site_name.clone();
            i.updated_at = at;
        }
        Ok(())
    }
}
