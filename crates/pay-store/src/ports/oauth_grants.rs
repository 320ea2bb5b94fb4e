//! `OAuthStore::company_grants` on `DieselStore` (both backends): a company's grants through
//! the `(company_id, application_id)` index, their applications and native installations by
//! key, and each grant's last use, the newest `created_at` of its refresh tokens, as one
//! seek of the `(grant_id, created_at)` index (migration `oauth_grant_last_used`), never a
//! scan of the token table.

use diesel::prelude::*;
use pay_domain::kernel::ids::{ClientId, CompanyId};
use pay_domain::oauth::{ConnectedApp, Grant, InstalledSite};
use pay_domain::{Fault, PortResult};

use crate::rows::oauth::GrantRow;
use crate::rows::{corrupt, opt_instant};
use crate::schema::{
    native_installations as installs, oauth_applications as apps, oauth_grants as grants,
    oauth_refresh_tokens as refresh,
};
use crate::DieselStore;

/// What the database answered, decoded after the connection is back in the pool.
struct Read {
    grants: Vec<(GrantRow, Option<i64>)>,
    /// `(id, name, client_id)`.
    apps: Vec<(String, String, String)>,
    /// `(application_id, platform, site_url, site_name)`.
    sites: Vec<(String, String, String, Option<String>)>,
}

pub(crate) fn company_grants(
    store: &DieselStore,
    company: CompanyId,
) -> PortResult<Vec<ConnectedApp>> {
    let company = company.to_string();
    let read = store.run("company oauth grants", |conn| {
        let rows: Vec<GrantRow> = grants::table
            .filter(grants::company_id.eq(&company))
            .select(GrantRow::as_select())
            .load(conn)?;
        let mut with_use = Vec::with_capacity(rows.len());
        for row in rows {
            let last: Option<i64> = refresh::table
                .filter(refresh::grant_id.eq(row.id()))
                .order(refresh::created_at.desc())
                .select(refresh::created_at)
                .first(conn)
                .optional()?;
            with_use.push((row, last));
        }
        let app_ids: Vec<String> = with_use
            .iter()
            .map(|(g, _)| g.application_id().to_owned())
            .collect();
        let apps = apps::table
            .filter(apps::id.eq_any(&app_ids))
            .select((apps::id, apps::name, apps::client_id))
            .load(conn)?;
        let sites = installs::table
            .filter(installs::application_id.eq_any(&app_ids))
            .select((
                installs::application_id,
                installs::platform,
                installs::site_url,
                installs::site_name,
            ))
            .load(conn)?;
        Ok(Read {
            grants: with_use,
            apps,
            sites,
        })
    })?;
    let mut out = Vec::with_capacity(read.grants.len());
    for (row, last) in read.grants {
        let grant = Grant::try_from(row)?;
        let app_id = grant.application_id.to_string();
        let (_, name, client_id) = read
            .apps
            .iter()
            .find(|a| a.0 == app_id)
            .ok_or_else(|| Fault::new("foreign key: oauth application"))?;
        let site =
            read.sites
                .iter()
                .find(|s| s.0 == app_id)
                .map(|(_, platform, site_url, site_name)| InstalledSite {
                    platform: platform.clone(),
                    site_url: site_url.clone(),
                    site_name: site_name.clone(),
                });
        out.push(ConnectedApp {
            name: name.clone(),
            client_id: ClientId::parse(client_id)
                .ok_or_else(|| corrupt("oauth_applications.client_id"))?,
            last_used_at: opt_instant(last, "oauth_refresh_tokens.created_at")?,
            site,
            grant,
        });
    }
    out.sort_by_key(|a| std::cmp::Reverse((a.grant.created_at, a.grant.id)));
    Ok(out)
}
