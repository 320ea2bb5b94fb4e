//! Native platform template rows.

use diesel::prelude::*;
use pay_domain::installations::NativePlatform;
use pay_domain::{Fault, PortResult};

use super::instant;
use super::oauth::{scopes, scopes_text};
use crate::conn::MultiBackend;
use crate::schema::native_platforms;

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
