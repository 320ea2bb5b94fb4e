//! Settings use cases: read and patch the merchant's settings, and list the settlement assets.

use std::sync::Arc;

use crate::kernel::assets::DestinationAsset;
use crate::kernel::service::Kernel;
use crate::settings::ports::SettingsStore;
use crate::settings::SettingsError;
use crate::settings::{PaySettings, SettingsPatch};
use crate::tenancy::TenancyService;
use crate::tenancy::{Principal, Scope};

/// The merchant's settings, over the settings port only.
#[derive(Clone)]
pub struct SettingsService {
    k: Kernel,
    tenancy: TenancyService,
    store: Arc<dyn SettingsStore + Send + Sync>,
}

impl std::fmt::Debug for SettingsService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SettingsService").finish_non_exhaustive()
    }
}

impl SettingsService {
    /// The company's pay settings, over their store; `tenancy` reads the company they belong to.
    pub fn new(
        k: Kernel,
        tenancy: TenancyService,
        store: Arc<dyn SettingsStore + Send + Sync>,
    ) -> SettingsService {
        SettingsService { k, tenancy, store }
    }

    /// An asset of the catalogue by its identifier.
    pub fn asset(&self, id: &str) -> Option<&DestinationAsset> {
        self.k.assets.get(id)
    }

    pub fn settings(&self, p: &Principal) -> Result<PaySettings, SettingsError> {
        p.authorize(Scope::SettingsRead)?;
        Ok(self.tenancy.company_with_settings(p.company_id)?.1)
    }

    pub fn update_settings(
        &self,
        p: &Principal,
        patch: SettingsPatch,
    ) -> Result<PaySettings, SettingsError> {
        p.authorize(Scope::SettingsWrite)?;
        let current = self.tenancy.company_with_settings(p.company_id)?.1;
        let next = patch.apply(&current, &self.k.assets)?;
        if next != current {
            self.store
                .save_settings(p.company_id, &next, self.k.now())?;
        }
        Ok(next)
    }

    /// The enabled settlement assets, each with whether it is the company's default.
    pub fn destination_assets(
        &self,
        p: &Principal,
    ) -> Result<Vec<(DestinationAsset, bool)>, SettingsError> {
        p.authorize(Scope::PaymentLinksRead)?;
        let default = self
            .tenancy
            .company_with_settings(p.company_id)?
            .1
            .default_destination_asset;
        Ok(self
            .k
            .assets
            .all()
            .iter()
            .map(|a| {
                (
                    a.clone(),
                    default.as_deref() == Some(a.asset_identifier.as_str()),
                )
            })
            .collect())
    }
}
