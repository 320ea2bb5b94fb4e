//! The dashboard's Developers screen: the team's API keys (name, key id, status, created,
//! last used), and for owners and admins the create form (the secret shown once, in the
//! answer to the create, never again), disable or enable, and delete. A member without
//! `settings.manage` sees no control, and each of these POSTs answers them 403 (the tenancy
//! service refuses); another team's key is 404.

use actix_web::http::StatusCode;
use actix_web::{get, post, web, HttpRequest, HttpResponse};
use askama::Template;
use pay_domain::app::Pay;
use pay_domain::kernel::ids::PartnerId;
use pay_domain::tenancy::keys::{Integration, NewIntegrationInput, APP_SLUG};
use pay_domain::tenancy::TenancyError;
use serde::Deserialize;
use utoipa::ToSchema;

use super::{
    blocking, checked_form, cross_site, member, refusal, refused, session_token, show, unreadable,
    when, CsrfForm, Frame, Member, Refused, ScreenRefusals, Visit, DASHBOARD_PATH,
};
use crate::edge::error::ApiError;
use crate::edge::form::FormBody;
use crate::pages::checkout::path_prefix;
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
    created: Option<Created>,
    error: Option<String>,
    name: String,
    origins: String,
}

/// What a handler shows: the screen (with a new key or a refused form), or a refusal.
enum Shown {
    Screen {
        m: Box<Member>,
        keys: Vec<Integration>,
        created: Option<Created>,
        refused_form: Option<(String, String, String)>,
        status: StatusCode,
    },
    Refused(Refused),
    /// Done: 303 to this path (under the prefix).
    Back(String),
}

fn render(pay: &Pay, config: &HttpConfig, shown: Shown) -> HttpResponse {
    let (m, keys, created, refused_form, status) = match shown {
        Shown::Refused(r) => return refused(pay, config, r),
        Shown::Back(to) => {
            return super::see_other(format!("{}{to}", path_prefix(&config.base_url)))
        }
        Shown::Screen {
            m,
            keys,
            created,
            refused_form,
            status,
        } => (m, keys, created, refused_form, status),
    };
    let (error, name, origins) = match refused_form {
        Some((e, n, o)) => (Some(e), n, o),
        None => (None, String::new(), String::new()),
    };
    show(pay, config, status, |nonce, prefix| {
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
            created,
            error,
            name,
            origins,
        })
    })
}

fn page_path(company: &str) -> String {
    format!("{DASHBOARD_PATH}/{company}/developers")
}

/// The screen of `m`'s team with its keys.
fn screen_of(
    pay: &Pay,
    m: Member,
    created: Option<Created>,
    refused_form: Option<(String, String, String)>,
    status: StatusCode,
) -> Result<Shown, ApiError> {
    let keys = match pay
        .tenancy()
        .list_integrations(&m.signed_in, m.principal.company_id)
    {
        Ok(k) => k,
        Err(e) => {
            return Ok(Shown::Refused(refusal(
                e,
                &page_path(&m.principal.company_id.to_string()),
            )?))
        }
    };
    Ok(Shown::Screen {
        m: Box::new(m),
        keys,
        created,
        refused_form,
        status,
    })
}

/// The team's Developers screen (HTML).
#[utoipa::path(
    tag = "Dashboard",
    params(("companyId" = String, Path, description = "The team's company id")),
    security((), ("session" = [])),
    responses(
        (status = 200, description = "The API keys (HTML)", content_type = "text/html", body = String),
        ScreenRefusals,
    )
)]
#[get("/dashboard/{companyId}/developers")]
pub async fn developers_page(v: Visit) -> Result<HttpResponse, ApiError> {
    let shown = v
        .screen(page_path(&v.company), |p, m| {
            screen_of(p, m, None, None, StatusCode::OK)
        })
        .await?;
    Ok(match shown {
        Ok(shown) => render(&v.pay, &v.config, shown),
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
        (status = 303, description = "Not signed in: to `/signin` with `return_to`"),
        (status = 400, description = "A malformed form, or a refused name or origin: the form again (HTML)", content_type = "text/html", body = String),
        (status = 403, description = "A member without `settings.manage`, a missing or wrong CSRF token, or another site's form (HTML)", content_type = "text/html", body = String),
        (status = 404, description = "Unknown company, or one the user is not a member of (HTML)", content_type = "text/html", body = String),
    )
)]
#[post("/dashboard/{companyId}/developers/keys")]
pub async fn create_key(
    pay: web::Data<Pay>,
    config: web::Data<HttpConfig>,
    req: HttpRequest,
    company: web::Path<String>,
    body: FormBody,
) -> Result<HttpResponse, ApiError> {
    if let Some(refused) = cross_site(&pay, &config, &req) {
        return Ok(refused);
    }
    if let Some(refused) = unreadable::<CreateKeyForm>(&pay, &config, &body) {
        return Ok(refused);
    }
    let company = company.into_inner();
    let token = session_token(&req);
    let p = pay.clone();
    let shown = blocking(move || {
        let back = page_path(&company);
        let m = match member(&p, token.as_deref(), &company, &back)? {
            Ok(m) => m,
            Err(r) => return Ok(Shown::Refused(r)),
        };
        let f = match checked_form::<CreateKeyForm>(&p, &m, body, |f| f.csrf_token.as_deref()) {
            Ok(f) => f,
            Err(r) => return Ok(Shown::Refused(r)),
        };
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
                screen_of(&p, m, Some(created), None, StatusCode::CREATED)
            }
            Err(TenancyError::Invalid(field)) => {
                let why = field.message;
                screen_of(
                    &p,
                    m,
                    None,
                    Some((why, name, origins)),
                    StatusCode::BAD_REQUEST,
                )
            }
            Err(e) => Ok(Shown::Refused(refusal(e, &back)?)),
        }
    })
    .await?;
    Ok(render(&pay, &config, shown))
}

/// A key change (disable, enable, delete) by an owner or admin: 303 back to the screen.
fn change_key(
    p: &Pay,
    token: Option<String>,
    company: &str,
    key: &str,
    body: FormBody,
    change: impl FnOnce(&Pay, &Member, PartnerId) -> Result<(), TenancyError>,
) -> Result<Shown, ApiError> {
    let back = page_path(company);
    let m = match member(p, token.as_deref(), company, &back)? {
        Ok(m) => m,
        Err(r) => return Ok(Shown::Refused(r)),
    };
    if let Err(r) = checked_form::<CsrfForm>(p, &m, body, |f| f.csrf_token.as_deref()) {
        return Ok(Shown::Refused(r));
    }
    let Some(partner) = uuid::Uuid::parse_str(key).ok().map(PartnerId) else {
        return Ok(Shown::Refused(Refused::NotFound));
    };
    match change(p, &m, partner) {
        Ok(()) => Ok(Shown::Back(back)),
        Err(e) => Ok(Shown::Refused(refusal(e, &back)?)),
    }
}

/// Disable (`disable`) or enable (`enable`) an API key.
#[utoipa::path(
    tag = "Dashboard",
    params(
        ("companyId" = String, Path, description = "The team's company id"),
        ("partnerId" = String, Path, description = "The key's partner id"),
        ("action" = String, Path, description = "`disable` or `enable`"),
    ),
    request_body(content = CsrfForm, content_type = "application/x-www-form-urlencoded"),
    security((), ("session" = [])),
    responses(
        (status = 303, description = "Done: back to the Developers screen; not signed in: to `/signin`"),
        (status = 400, description = "No form, or one that cannot be read (HTML)", content_type = "text/html", body = String),
        (status = 403, description = "A member without `settings.manage`, a missing or wrong CSRF token, or another site's form (HTML)", content_type = "text/html", body = String),
        (status = 404, description = "Unknown company, key or action, or another team's (HTML)", content_type = "text/html", body = String),
    )
)]
#[post("/dashboard/{companyId}/developers/keys/{partnerId}/{action}")]
pub async fn set_key_enabled(
    pay: web::Data<Pay>,
    config: web::Data<HttpConfig>,
    req: HttpRequest,
    path: web::Path<(String, String, String)>,
    body: FormBody,
) -> Result<HttpResponse, ApiError> {
    if let Some(refused) = cross_site(&pay, &config, &req) {
        return Ok(refused);
    }
    if let Some(refused) = unreadable::<CsrfForm>(&pay, &config, &body) {
        return Ok(refused);
    }
    let (company, key, action) = path.into_inner();
    let enabled = match action.as_str() {
        "enable" => true,
        "disable" => false,
        "delete" => return delete(pay, config, req, company, key, body).await,
        _ => return Ok(refused(&pay, &config, Refused::NotFound)),
    };
    let token = session_token(&req);
    let p = pay.clone();
    let shown = blocking(move || {
        change_key(&p, token, &company, &key, body, |p, m, partner| {
            p.tenancy()
                .set_integration_enabled(&m.signed_in, m.principal.company_id, partner, enabled)
                .map(drop)
        })
    })
    .await?;
    Ok(render(&pay, &config, shown))
}

async fn delete(
    pay: web::Data<Pay>,
    config: web::Data<HttpConfig>,
    req: HttpRequest,
    company: String,
    key: String,
    body: FormBody,
) -> Result<HttpResponse, ApiError> {
    let token = session_token(&req);
    let p = pay.clone();
    let shown = blocking(move || {
        change_key(&p, token, &company, &key, body, |p, m, partner| {
            p.tenancy()
                .delete_integration(&m.signed_in, m.principal.company_id, partner)
        })
    })
    .await?;
    Ok(render(&pay, &config, shown))
}
