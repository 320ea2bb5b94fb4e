//! `PlatformStore` on `DieselStore`: a template is inserted once (the primary key refuses a
//! second one, which writes nothing) and read by its identifier.

use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use pay_domain::installations::ports::PlatformStore;
use pay_domain::installations::NativePlatform;
use pay_domain::PortResult;

use crate::rows::installations::{NewPlatformRow, PlatformRow};
use crate::schema::native_platforms;
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
