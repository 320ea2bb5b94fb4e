//! The in-memory store: native platform templates.

use super::MemStore;
use crate::installations::ports::PlatformStore;
use crate::installations::NativePlatform;
use crate::kernel::error::PortResult;

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
