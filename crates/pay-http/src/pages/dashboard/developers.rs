//! The dashboard's Developers screen: the team's API keys (name, key id, status, created,
//! last used), and for owners and admins the create form (the secret shown once, in the
//! answer to the create, never again), disable or enable, and delete; then the team's
//! connected apps and native installations with their revoke or disconnect (`apps`). A
//! member without `settings.manage` sees no control, and each of these POSTs answers them
//! 403 (the tenancy service refuses); another team's key or grant is 404.

pub mod apps;

use actix_web::http::StatusCode;
use actix_web::{get, post, HttpResponse};
use askama::Template;
use pay_domain::app::Pay;
use pay_domain::kernel::ids::PartnerId;
use pay_domain::tenancy::keys::{NewIntegrationInput, APP_SLUG};
use pay_domain::tenancy::TenancyError;
use serde::Deserialize;
use utoipa::ToSchema;

use super::screen::{change, pre_checks, Answer};
use super::{
    refusal, refused, when, ChangeRefusals, CsrfForm, Frame, Member, Refused, ScreenRefusals,
    Visit, DASHBOARD_PATH,
};
use crate::edge::error::ApiError;
use crate::edge::form::FormBody;
use crate::pages::layout::{html, Layout};
use crate::HttpConfig;

/// The create-key form.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateKeyForm {
    pub csrf_token: Option<String>,
    /// 1 to 100 characters.
    pub name: Option<String>,
    /// Browser origins allowed to use the key's gateway form, separated by spaces or lines.
    pub allowed_origins: Option<String>,
}

/// One key as listed.
struct KeyRow {
    partner_id: String,
    name: String,
    key_id: String,
    enabled: bool,
    created: String,
    last_used: String,
    origins: String,
}

/// A key just created: shown once.
struct Created {
    key_id: String,
    secret: String,
}

#[derive(Template)]
#[template(path = "dashboard/developers.html")]
struct DevelopersPage<'a> {
    layout: Layout<'a>,
    frame: Frame<'a>,
    can_manage: bool,
    keys: Vec<KeyRow>,
    apps: Vec<apps::AppRow>,
    created: Option<Created>,
    error: Option<String>,
    name: String,
    origins: String,
}

fn page_path(company: &str) -> String {
    format!("{DASHBOARD_PATH}/{company}/developers")
}

/// The screen of `m`'s team with its keys (with a new key, or a refused form: its reason,
/// the typed name and origins), answered with `status`.
fn screen_of(
    pay: &Pay,
    config: &HttpConfig,
    m: Member,
    created: Option<Created>,
    refused_form: Option<(String, String, String)>,
    status: StatusCode,
) -> Result<Answer, ApiError> {
    let listed = pay
        .tenancy()
        .list_integrations(&m.signed_in, m.principal.company_id)
        .and_then(|k| Ok((k, apps::rows(pay, &m.signed_in, m.principal.company_id)?)));
    let (keys, apps) = match listed {
        Ok(both) => both,
        Err(e) => {
            let back = page_path(&m.principal.company_id.to_string());
            return Ok(Answer::Refused(refusal(e, &back)?));
        }
    };
    let (error, name, origins) = match refused_form {
        Some((e, n, o)) => (Some(e), n, o),
        None => (None, String::new(), String::new()),
    };
    Ok(Answer::shown(pay, config, status, |nonce, prefix| {
        html(&DevelopersPage {
            layout: Layout::wide(nonce, "Developers"),
            frame: Frame::new(prefix, &m, "developers"),
            can_manage: m.can_manage,
            keys: keys
                .into_iter()
                .map(|k| KeyRow {
                    partner_id: k.partner_id.to_string(),
                    name: k.name,
                    key_id: k.key_id.to_string(),
                    enabled: k.enabled,
                    created: when(k.created_at),
                    last_used: k.last_used_at.map(when).unwrap_or_else(|| "never".into()),
                    origins: k.allowed_origins.join(" "),
                })
                .collect(),
            apps,
            created,
            error,
            name,
            origins,
        })
    }))
}

/// The team's Developers screen (HTML).
#[utoipa::path(
    tag = "Dashboard",
    params(("companyId" = String, Path, description = "The team's company id")),
    security((), ("session" = [])),
    responses(
        (status = 200, description = "The API keys, connected apps and native installations (HTML)", content_type = "text/html", body = String),
        ScreenRefusals,
    )
)]
#[get("/dashboard/{companyId}/developers")]
pub async fn developers_page(v: Visit) -> Result<HttpResponse, ApiError> {
    let c = v.config.clone();
    let shown = v
        .screen(page_path(&v.company), move |p, m| {
            screen_of(p, &c, m, None, None, StatusCode::OK)
        })
        .await?;
    Ok(match shown {
        Ok(answer) => answer.respond(&v.pay, &v.config),
        Err(refused) => refused,
    })
}

/// Create an API key: the screen with its secret, shown this once. A refused name or origin
/// shows the form again with the reason and what was typed.
#[utoipa::path(
    tag = "Dashboard",
    params(("companyId" = String, Path, description = "The team's company id")),
    request_body(content = CreateKeyForm, content_type = "application/x-www-form-urlencoded"),
    security((), ("session" = [])),
    responses(
        (status = 201, description = "Created: the screen with the key's secret, shown once (HTML)", content_type = "text/html", body = String),
        (status = 400, description = "A malformed form, or a refused name or origin: the form again (HTML)", content_type = "text/html", body = String),
        ChangeRefusals,
    )
)]
#[post("/dashboard/{companyId}/developers/keys")]
pub async fn create_key(v: Visit, body: FormBody) -> Result<HttpResponse, ApiError> {
    let back = page_path(&v.company);
    change(
        v,
        body,
        back.clone(),
        |f: &CreateKeyForm| f.csrf_token.as_deref(),
        move |p, c, m, f| {
            let name = f.name.unwrap_or_default();
            let origins = f.allowed_origins.unwrap_or_default();
            let input = NewIntegrationInput {
                name: name.trim().to_owned(),
                app_slug: APP_SLUG.to_owned(),
                allowed_origins: origins.split_whitespace().map(str::to_owned).collect(),
            };
            let company_id = m.principal.company_id;
            match p
                .tenancy()
                .create_integration(&m.signed_in, company_id, input)
            {
                Ok((key, secret)) => {
                    let created = Created {
                        key_id: key.key_id.to_string(),
                        secret: secret.expose().to_owned(),
                    };
                    screen_of(p, c, m, Some(created), None, StatusCode::CREATED)
                }
                Err(TenancyError::Invalid(field)) => screen_of(
                    p,
                    c,
                    m,
                    None,
                    Some((field.message, name, origins)),
                    StatusCode::BAD_REQUEST,
                ),
                Err(e) => Ok(Answer::Refused(refusal(e, &back)?)),
            }
        },
    )
    .await
}

/// Disable (`disable`), enable (`enable`) or delete (`delete`) an API key.
#[utoipa::path(
    tag = "Dashboard",
    params(
        ("companyId" = String, Path, description = "The team's company id"),
        ("partnerId" = String, Path, description = "The key's partner id"),
        ("action" = String, Path, description = "`disable`, `enable` or `delete`; any other value is 404"),
    ),
    request_body(content = CsrfForm, content_type = "application/x-www-form-urlencoded"),
    security((), ("session" = [])),
    responses(
        (status = 400, description = "No form, or one that cannot be read (HTML)", content_type = "text/html", body = String),
        ChangeRefusals,
    )
)]
#[post("/dashboard/{companyId}/developers/keys/{partnerId}/{action}")]
pub async fn set_key_enabled(v: Visit, body: FormBody) -> Result<HttpResponse, ApiError> {
    let key = v.req.match_info().get("partnerId").unwrap_or("").to_owned();
    // `None`: delete.
    let enabled = match v.req.match_info().get("action").unwrap_or("") {
        "enable" => Some(true),
        "disable" => Some(false),
        "delete" => None,
        _ => {
            return Ok(pre_checks::<CsrfForm>(&v.pay, &v.config, &v.req, &body)
                .unwrap_or_else(|| refused(&v.pay, &v.config, Refused::NotFound)))
        }
    };
    let back = page_path(&v.company);
    change(
        v,
        body,
        back.clone(),
        |f: &CsrfForm| f.csrf_token.as_deref(),
        move |p, _, m, _| {
            let Some(partner) = uuid::Uuid::parse_str(&key).ok().map(PartnerId) else {
                return Ok(Answer::Refused(Refused::NotFound));
            };
            let (t, company) = (p.tenancy(), m.principal.company_id);
            let done = match enabled {
                Some(on) => t
                    .set_integration_enabled(&m.signed_in, company, partner, on)
                    .map(drop),
                None => t.delete_integration(&m.signed_in, company, partner),
            };
            match done {
                Ok(()) => Ok(Answer::Back(back)),
                Err(e) => Ok(Answer::Refused(refusal(e, &back)?)),
            }
        },
    )
    .await
}
