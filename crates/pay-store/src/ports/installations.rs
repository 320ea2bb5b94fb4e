//! `PlatformStore` and `InstallationStore` on `DieselStore`: a template is inserted once (the
//! primary key refuses a second one, which writes nothing) and read by its identifier; an
//! installation is inserted with its OAuth application in one transaction, likewise once.

use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use pay_domain::installations::ports::{InstallationStore, PlatformStore};
use pay_domain::installations::{Installation, NativePlatform};
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::oauth::StoredApplication;
use pay_domain::PortResult;

use crate::conn::write_transaction;
use crate::ports::oauth::ApplicationValues;
use crate::rows::installations::{
    InstallationRow, NewInstallationRow, NewPlatformRow, PlatformRow,
};
use crate::rows::oauth::ApplicationRow;
use crate::schema::{native_installations, native_platforms, oauth_applications as apps};
use crate::DieselStore;

impl PlatformStore for DieselStore {
    fn insert_platform(&self, platform: &NativePlatform) -> PortResult<bool> {
        let row = NewPlatformRow::from(platform);
        self.write("insert native platform", |conn| match diesel::insert_into(
            native_platforms::table,
        )
        .values(&row)
        .execute(conn)
        {
            Ok(_) => Ok(true),
            Err(DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, _)) => Ok(false),
            Err(e) => Err(e),
        })
    }

    fn platform(&self, platform: &str) -> PortResult<Option<NativePlatform>> {
        self.run("read native platform", |conn| {
            native_platforms::table
                .filter(native_platforms::platform.eq(platform))
                .select(PlatformRow::as_select())
                .first(conn)
                .optional()
        })?
        .map(NativePlatform::try_from)
        .transpose()
    }
}

impl InstallationStore for DieselStore {
    fn insert_installation(
        &self,
        installation: &Installation,
        app: &StoredApplication,
    ) -> PortResult<bool> {
        let values = ApplicationValues::of(app)?;
        let row = NewInstallationRow::from(installation);
        self.write("insert native installation", |conn| {
            let outcome = write_transaction(conn, |conn| {
                values.insert(conn, app)?;
                diesel::insert_into(native_installations::table)
                    .values(&row)
                    .execute(conn)
            });
            match outcome {
                Ok(_) => Ok(true),
                Err(DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, _)) => {
                    // Either the registration id (another registration won) or, never in
                    // practice, the random client id: tell them apart by reading.
                    let taken = native_installations::table
                        .find(&installation.registration_id)
                        .count()
                        .get_result::<i64>(conn)?;
                    if taken == 1 {
                        Ok(false)
                    } else {
                        Err(DieselError::RollbackTransaction)
                    }
                }
                Err(e) => Err(e),
            }
        })
    }

    fn installation(
        &self,
        registration_id: &str,
    ) -> PortResult<Option<(Installation, StoredApplication)>> {
        let row = self.run("read native installation", |conn| {
            native_installations::table
                .inner_join(apps::table)
                .filter(native_installations::registration_id.eq(registration_id))
                .select((InstallationRow::as_select(), ApplicationRow::as_select()))
                .first(conn)
                .optional()
        })?;
        row.map(|(i, a)| {
            let app = StoredApplication::try_from(a)?;
            Ok((i.into_installation(app.app.client_id.clone())?, app))
        })
        .transpose()
    }

    fn update_installation_metadata(
        &self,
        installation: &Installation,
        at: Timestamp,
    ) -> PortResult<()> {
        let i = installation;
        self.write("update native installation", |conn| {
            diesel::update(native_installations::table.find(&i.registration_id))
                .set((
                    native_installations::platform_version.eq(i.platform_version.as_deref()),
                    native_installations::plugin_version.eq(i.plugin_version.as_deref()),
                    native_installations::site_name.eq(i.site_name.as_deref()),
                    native_installations::updated_at.eq(at.unix_millis()),
                ))
                .execute(conn)
                .map(|_| ())
        })
    }
}
