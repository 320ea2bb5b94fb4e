//! Settings' store port.

use diesel::prelude::*;
use pay_domain::kernel::ids::CompanyId;
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::settings::ports::SettingsStore;
use pay_domain::settings::PaySettings;
use pay_domain::PortResult;

use crate::rows::NewSettingsRow;
use crate::schema::pay_settings;
use crate::DieselStore;

impl SettingsStore for DieselStore {
    fn save_settings(
        &self,
        company: CompanyId,
        settings: &PaySettings,
        at: Timestamp,
    ) -> PortResult<()> {
        let row = NewSettingsRow::new(company, settings, at);
        // Forget before and after: a read that raced the write may have cached the old row;
        // at worst it lives for one time to live, as for a write by another instance.
        self.cache.forget_company(company);
        let saved = self.write("save settings", |conn| {
            let changed = diesel::update(pay_settings::table.find(company.to_string()))
                .set(&row)
                .execute(conn)?;
            // Every company gets settings at creation; this only heals a company without them
            // (the foreign key still refuses an unknown company).
            if changed == 0 {
                diesel::insert_into(pay_settings::table)
                    .values(&row)
                    .execute(conn)?;
            }
            Ok(())
        });
        self.cache.forget_company(company);
        saved
    }
}
