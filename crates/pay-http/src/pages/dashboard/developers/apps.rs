//! The Developers screen's connected apps and native installations: each grant of the team
//! (application, scopes, approved, last used, status) and, for owners and admins, its revoke
//! (a connected app) or disconnect (a native installation) control. Both go through one
//! domain call, `InstallationService::disconnect`: the grant and all its token families end
//! in one transaction, and a native installation keeps what its disconnect keeps. A member
//! without `settings.manage` sees no control and the POST answers 403; another team's grant
//! is 404.

use actix_web::{post, HttpResponse};
use pay_domain::app::Pay;
use pay_domain::kernel::ids::{CompanyId, GrantId};
use pay_domain::oauth::ConnectedApp;
use pay_domain::tenancy::{SignedIn, TenancyError};

use super::page_path;
use crate::edge::error::ApiError;
use crate::edge::form::FormBody;
use crate::pages::dashboard::screen::{change, Answer};
use crate::pages::dashboard::{refusal, when, ChangeRefusals, CsrfForm, Refused, Visit};

/// One grant as listed.
pub(super) struct AppRow {
    pub grant_id: String,
    pub name: String,
    pub client_id: String,
    /// A native installation: its site URL, and its name when it gave one.
    pub site: Option<(String, Option<String>)>,
    pub platform: String,
    pub scopes: Vec<&'static str>,
    pub approved: String,
    pub last_used: String,
    /// `Some(when)` once revoked or disconnected.
    pub revoked: Option<String>,
}

impl AppRow {
    fn of(a: ConnectedApp) -> AppRow {
        AppRow {
            grant_id: a.grant.id.to_string(),
            name: a.name,
            client_id: a.client_id.to_string(),
            platform: a
                .site
                .as_ref()
                .map(|s| s.platform.clone())
                .unwrap_or_default(),
            site: a.site.map(|s| (s.site_url, s.site_name)),
            scopes: a.grant.scopes.iter().map(|s| s.as_str()).collect(),
            approved: when(a.grant.created_at),
            last_used: a.last_used_at.map(when).unwrap_or_else(|| "never".into()),
            revoked: a.grant.revoked_at.map(when),
        }
    }
}

/// The team's grants as rows (any member may read them).
pub(super) fn rows(
    pay: &Pay,
    signed_in: &SignedIn,
    company: CompanyId,
) -> Result<Vec<AppRow>, TenancyError> {
    Ok(pay
        .oauth()
        .connected_apps(signed_in, company)?
        .into_iter()
        .map(AppRow::of)
        .collect())
}

/// Revoke a connected app, or disconnect a native installation: its grant and every token of
/// it end at once (a refresh afterwards is refused); a native installation's webhook
/// subscription is kept only for the late events of the links issued before. An already
/// revoked grant: back to the screen, nothing changed.
#[utoipa::path(
    tag = "Dashboard",
    params(
        ("companyId" = String, Path, description = "The team's company id"),
        ("grantId" = String, Path, description = "The grant's id, as the Developers screen lists it"),
    ),
    request_body(content = CsrfForm, content_type = "application/x-www-form-urlencoded"),
    security((), ("session" = [])),
    responses(
        (status = 400, description = "No form, or one that cannot be read (HTML)", content_type = "text/html", body = String),
        ChangeRefusals,
    )
)]
#[post("/dashboard/{companyId}/developers/apps/{grantId}/revoke")]
pub async fn revoke_app(v: Visit, body: FormBody) -> Result<HttpResponse, ApiError> {
    let grant = v.req.match_info().get("grantId").unwrap_or("").to_owned();
    let back = page_path(&v.company);
    change(
        v,
        body,
        back.clone(),
        |f: &CsrfForm| f.csrf_token.as_deref(),
        move |p, _, m, _| {
            let Some(grant) = GrantId::parse(&grant) else {
                return Ok(Answer::Refused(Refused::NotFound));
            };
            match p
                .installations()
                .disconnect(&m.signed_in, m.principal.company_id, grant)
            {
                Ok(_) => Ok(Answer::Back(back)),
                Err(e) => Ok(Answer::Refused(refusal(e, &back)?)),
            }
        },
    )
    .await
}
