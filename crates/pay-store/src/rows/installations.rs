//! Native platform template and installation rows.

use diesel::prelude::*;
use pay_domain::installations::{Installation, NativePlatform};
use pay_domain::kernel::ids::{ApplicationId, ClientId};
use pay_domain::{Fault, PortResult};

use super::oauth::{scopes, scopes_text};
use super::{id, instant};
use crate::conn::MultiBackend;
use crate::schema::{native_installations, native_platforms};

#[derive(Queryable, Selectable)]
#[diesel(table_name = native_platforms, check_for_backend(MultiBackend))]
pub(crate) struct PlatformRow {
    platform: String,
    name: String,
    icon_url: Option<String>,
    support_url: Option<String>,
    scopes: String,
    created_at: i64,
}

impl TryFrom<PlatformRow> for NativePlatform {
    type Error = Fault;

    fn try_from(r: PlatformRow) -> PortResult<NativePlatform> {
        Ok(NativePlatform {
            scopes: scopes(&r.scopes, "native_platforms.scopes")?,
            created_at: instant(r.created_at, "native_platforms.created_at")?,
            platform: r.platform,
            name: r.name,
            icon_url: r.icon_url,
            support_url: r.support_url,
        })
    }
}

#[derive(Insertable)]
#[diesel(table_name = native_platforms)]
pub(crate) struct NewPlatformRow<'a> {
    platform: &'a str,
    name: &'a str,
    icon_url: Option<&'a str>,
    support_url: Option<&'a str>,
    scopes: String,
    created_at: i64,
}

impl<'a> From<&'a NativePlatform> for NewPlatformRow<'a> {
    fn from(p: &'a NativePlatform) -> Self {
        NewPlatformRow {
            platform: &p.platform,
            name: &p.name,
            icon_url: p.icon_url.as_deref(),
            support_url: p.support_url.as_deref(),
            scopes: scopes_text(&p.scopes),
            created_at: p.created_at.unix_millis(),
        }
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = native_installations, check_for_backend(MultiBackend))]
pub(crate) struct InstallationRow {
    registration_id: String,
    platform: String,
    application_id: String,
    site_url: String,
    redirect_uri: String,
    platform_version: Option<String>,
    plugin_version: Option<String>,
    site_name: Option<String>,
    created_at: i64,
    updated_at: i64,
}

impl InstallationRow {
    /// The installation, with the client id of its application (read in the same query).
    pub(crate) fn into_installation(self, client_id: ClientId) -> PortResult<Installation> {
        Ok(Installation {
            application_id: id(
                &self.application_id,
                ApplicationId::parse,
                "native_installations.application_id",
            )?,
            client_id,
            created_at: instant(self.created_at, "native_installations.created_at")?,
            updated_at: instant(self.updated_at, "native_installations.updated_at")?,
            registration_id: self.registration_id,
            platform: self.platform,
            site_url: self.site_url,
            redirect_uri: self.redirect_uri,
            platform_version: self.platform_version,
            plugin_version: self.plugin_version,
            site_name: self.site_name,
        })
    }
}

#[derive(Insertable)]
#[diesel(table_name = native_installations)]
pub(crate) struct NewInstallationRow<'a> {
    registration_id: &'a str,
    platform: &'a str,
    application_id: String,
    site_url: &'a str,
    redirect_uri: &'a str,
    platform_version: Option<&'a str>,
    plugin_version: Option<&'a str>,
    site_name: Option<&'a str>,
    created_at: i64,
    updated_at: i64,
}

impl<'a> From<&'a Installation> for NewInstallationRow<'a> {
    fn from(i: &'a Installation) -> Self {
        NewInstallationRow {
            registration_id: &i.registration_id,
            platform: &i.platform,
            application_id: i.application_id.to_string(),
            site_url: &i.site_url,
            redirect_uri: &i.redirect_uri,
            platform_version: i.platform_version.as_deref(),
            plugin_version: i.plugin_version.as_deref(),
            site_name: i.site_name.as_deref(),
            created_at: i.created_at.unix_millis(),
            updated_at: i.updated_at.unix_millis(),
        }
    }
}
