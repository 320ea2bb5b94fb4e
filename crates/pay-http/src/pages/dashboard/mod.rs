//! The merchant dashboard under `/dashboard`: server-rendered askama pages on the base
//! layout, behind the one sign-in (the `pay_session` cookie of `/signin` and `/auth/login`;
//! its CSRF token in every form, checked on every POST). The team is in the path
//! (`/dashboard/{companyId}/...`): a company the user is not a member of is a 404 page, as is
//! an unknown id. Not signed in: 303 to `/signin` with the page as `return_to`. Screens: Home
//! (`home`), Payment links (`links`), Customers (`customers`), Subscriptions (`subscriptions`),
//! Developers (`developers`), Webhooks (`webhooks`), Settings (`settings`), Bookkeeping
//! (`bookkeeping`) and Team (`team`);
//! sign-out. No JavaScript.

pub mod bookkeeping;
pub mod customers;
pub mod developers;
mod flow;
pub mod home;
pub mod links;
mod screen;
pub mod settings;
pub mod subscriptions;
pub mod team;
pub mod webhooks;

use actix_web::http::{header, StatusCode};
use actix_web::{get, post, web, FromRequest, HttpRequest, HttpResponse};
use askama::Template;
use pay_domain::app::Pay;
use pay_domain::kernel::ids::CompanyId;
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::tenancy::{Denied, Permission, Principal, SignedIn, TenancyError};
use serde::Deserialize;
use utoipa::ToSchema;

use crate::edge::credentials::{blocking, session_cookie, SESSION_COOKIE};
use crate::edge::error::ApiError;
use crate::edge::form::{self, FormBody};
use crate::pages::checkout::{origin_allowed, path_prefix};
use crate::pages::layout::{html, respond, Layout, NONCE_LEN};
use crate::HttpConfig;

pub(crate) const DASHBOARD_PATH: &str = "/dashboard";

/// Whether `r` is a dashboard path the sign-in may return to: `/dashboard` or below it, path
/// characters only (no query, no `//`, no backslash, no scheme).
pub(crate) fn is_return_path(r: &str) -> bool {
    let below = r
        .strip_prefix(DASHBOARD_PATH)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'));
    below
        && !r.contains("//")
        && r.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'-' | b'_'))
}

/// A form whose only field is the session's CSRF token.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CsrfForm {
    /// The session's CSRF token (embedded in the page's forms).
    pub csrf_token: Option<String>,
}

/// A signed-in member on a page of one of their teams.
pub(crate) struct Member {
    pub signed_in: SignedIn,
    pub csrf: String,
    /// Acts on the team of the path with the user's role there.
    pub principal: Principal,
    pub can_manage: bool,
    pub teams: Vec<Team>,
}

/// One of the user's teams, for the switcher.
pub(crate) struct Team {
    pub id: String,
    pub name: String,
    pub current: bool,
}

/// Why a page is not shown.
pub(crate) enum Refused {
    /// Not signed in (or the session ended): to the sign-in page, back to `return_to`.
    SignIn(String),
    /// Unknown company, not a member, or another company's record.
    NotFound,
    /// A read-only member's change, or a missing or wrong CSRF token.
    Forbidden(&'static str),
    /// A form that could not be read.
    BadForm(String),
}

/// A tenancy refusal as a page: a read-only member's change is 403, an unknown or another
/// team's key 404, an ended session the sign-in; a fault stays an error.
pub(crate) fn refusal(e: TenancyError, back: &str) -> Result<Refused, ApiError> {
    match e {
        TenancyError::Denied(Denied::Forbidden) => Ok(Refused::Forbidden(
            "Only the team's owner or an admin can change this.",
        )),
        TenancyError::ApiKeyNotFound(_) | TenancyError::NotFound(_) => Ok(Refused::NotFound),
        TenancyError::Denied(_) => Ok(Refused::SignIn(back.to_owned())),
        other => Err(other.into()),
    }
}

/// The member behind the session cookie on `company`'s pages (blocking: store reads).
/// `back` is the page to return to after signing in.
pub(crate) fn member(
    pay: &Pay,
    token: Option<&str>,
    company: &str,
    back: &str,
) -> Result<Result<Member, Refused>, ApiError> {
    let sign_in = || Refused::SignIn(back.to_owned());
    let Some(token) = token else {
        return Ok(Err(sign_in()));
    };
    let t = pay.tenancy();
    let signed_in = match t.authenticate_sign_in(token) {
        Ok(s) => s,
        Err(TenancyError::Denied(_)) => return Ok(Err(sign_in())),
        Err(e) => return Err(e.into()),
    };
    let Ok(csrf) = t.page_csrf(&signed_in, token) else {
        return Ok(Err(sign_in()));
    };
    let Some(company) = CompanyId::parse(company) else {
        return Ok(Err(Refused::NotFound));
    };
    let principal = match t.team_principal(&signed_in, company) {
        Ok(p) => p,
        Err(TenancyError::Denied(_)) => return Ok(Err(Refused::NotFound)),
        Err(e) => return Err(e.into()),
    };
    let can_manage = matches!(
        &principal.credential,
        pay_domain::tenancy::Credential::SignIn { role, .. } if role.has(Permission::SettingsManage)
    );
    let teams = t
        .companies(&signed_in)?
        .into_iter()
        .map(|m| Team {
            current: m.company_id == company,
            id: m.company_id.to_string(),
            name: m.company_name,
        })
        .collect();
    Ok(Ok(Member {
        signed_in,
        csrf: csrf.expose().to_owned(),
        principal,
        can_manage,
        teams,
    }))
}

/// A POST's checks before its change: the form's origin is ours, the form reads, the CSRF
/// token is the session's. `Ok` is the form.
pub(crate) fn checked_form<T: serde::de::DeserializeOwned>(
    pay: &Pay,
    m: &Member,
    body: FormBody,
    csrf_of: impl Fn(&T) -> Option<&str>,
) -> Result<T, Refused> {
    let pairs = body
        .0
        .map_err(|_| Refused::BadForm("The form could not be read.".into()))?;
    let f: T = form::read_page_form(&pairs).map_err(|p| Refused::BadForm(p.page_message()))?;
    pay.tenancy()
        .check_csrf(&m.signed_in, csrf_of(&f))
        .map_err(|_| {
            Refused::Forbidden("The form's security token is wrong; reload the page and try again.")
        })?;
    Ok(f)
}

/// What every dashboard screen shows around its content: the team, the tabs, the switcher
/// and the sign-out form.
pub(crate) struct Frame<'a> {
    pub prefix: &'a str,
    /// `{prefix}/dashboard/{companyId}`: the team's pages start with it.
    pub base: String,
    pub company_name: String,
    pub teams: &'a [Team],
    pub csrf: &'a str,
    /// The screen's tab: `home`, `links`, `customers`, `subscriptions`, `developers`,
    /// `webhooks`, `settings`, `bookkeeping` or `team`.
    pub tab: &'static str,
}

impl<'a> Frame<'a> {
    pub fn new(prefix: &'a str, m: &'a Member, tab: &'static str) -> Frame<'a> {
        Frame {
            prefix,
            base: format!("{prefix}{DASHBOARD_PATH}/{}", m.principal.company_id),
            company_name: m
                .teams
                .iter()
                .find(|t| t.current)
                .map(|t| t.name.clone())
                .unwrap_or_default(),
            teams: &m.teams,
            csrf: &m.csrf,
            tab,
        }
    }
}

/// The answers every screen's GET gives besides its page (documented once for all of them).
#[derive(Debug, utoipa::IntoResponses)]
pub enum ScreenRefusals {
    /// Not signed in: to `/signin` with `return_to`.
    #[response(
        status = 303,
        description = "Not signed in: to `/signin` with `return_to`"
    )]
    SignIn,
    /// Not a team of the user's.
    #[response(
        status = 404,
        description = "Unknown company, or one the user is not a member of (HTML)",
        content_type = "text/html"
    )]
    NotFound(String),
}

/// The answers every change (a screen's mutating POST, `screen::change`) documents besides
/// its own: the sign-in, a refused change, another team's record.
#[derive(Debug, utoipa::IntoResponses)]
pub enum ChangeRefusals {
    /// Not signed in; or done, where the change answers with a redirect.
    #[response(
        status = 303,
        description = "Not signed in: to `/signin` with `return_to`; done, for a change that answers with a redirect: back to its page"
    )]
    SignIn,
    /// Not the team's owner or an admin, or a forged form.
    #[response(
        status = 403,
        description = "A member without `settings.manage`, a missing or wrong CSRF token, or another site's form (HTML)",
        content_type = "text/html"
    )]
    Forbidden(String),
    /// Not a team or a record of the user's.
    #[response(
        status = 404,
        description = "Unknown company, or a record (key, link, session, delivery, callback) that is not there or is another team's (HTML)",
        content_type = "text/html"
    )]
    NotFound(String),
}

/// What every dashboard handler starts from: the application, its configuration, the request
/// (its session cookie and `Origin`) and the team of the path (`{companyId}`, empty on a path
/// without one).
pub struct Visit {
    pub pay: web::Data<Pay>,
    pub config: web::Data<HttpConfig>,
    pub req: HttpRequest,
    pub company: String,
}

impl std::fmt::Debug for Visit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Visit")
            .field("company", &self.company)
            .finish_non_exhaustive()
    }
}

impl FromRequest for Visit {
    type Error = ApiError;
    type Future = std::future::Ready<Result<Visit, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut actix_web::dev::Payload) -> Self::Future {
        let visit = (|| {
            Some(Visit {
                pay: req.app_data::<web::Data<Pay>>()?.clone(),
                config: req.app_data::<web::Data<HttpConfig>>()?.clone(),
                req: req.clone(),
                company: req.match_info().get("companyId").unwrap_or("").to_owned(),
            })
        })();
        std::future::ready(visit.ok_or_else(|| {
            ApiError::Fault(pay_domain::Fault::new("dashboard handler without app data"))
        }))
    }
}

impl Visit {
    /// A screen's GET: the member behind the session on the team's page `back` (the path the
    /// sign-in returns to), and what `read` makes of it, off the async workers. A refusal (not
    /// signed in, not a member) is already its answer.
    pub(crate) async fn screen<T: Send + 'static>(
        &self,
        back: String,
        read: impl FnOnce(&Pay, Member) -> Result<T, ApiError> + Send + 'static,
    ) -> Result<Result<T, HttpResponse>, ApiError> {
        let token = session_token(&self.req);
        let p = self.pay.clone();
        let company = self.company.clone();
        let got = blocking(
            move || match member(&p, token.as_deref(), &company, &back)? {
                Ok(m) => read(&p, m).map(Ok),
                Err(r) => Ok(Err(r)),
            },
        )
        .await?;
        Ok(got.map_err(|r| refused(&self.pay, &self.config, r)))
    }
}

/// A page of the dashboard answered with `status`: `build` renders it with the response's
/// CSP nonce and the path prefix (the frame's links start with it).
pub(crate) fn show(
    pay: &Pay,
    config: &HttpConfig,
    status: StatusCode,
    build: impl FnOnce(&str, &str) -> String,
) -> HttpResponse {
    screen::Answer::shown(pay, config, status, build).respond(pay, config)
}

/// `2026-11-27 14:05 UTC`.
pub(crate) fn when(t: Timestamp) -> String {
    let d = t.datetime();
    format!(
        "{}-{:02}-{:02} {:02}:{:02} UTC",
        d.year(),
        u8::from(d.month()),
        d.day(),
        d.hour(),
        d.minute()
    )
}

#[derive(Template)]
#[template(path = "problem.html")]
struct ProblemPage<'a> {
    layout: Layout<'a>,
    message: &'a str,
}

pub(crate) fn see_other(to: String) -> HttpResponse {
    HttpResponse::SeeOther()
        .insert_header((header::LOCATION, to))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .finish()
}

/// The answer for a refusal: a redirect to the sign-in page, or a page saying why.
pub(crate) fn refused(pay: &Pay, config: &HttpConfig, r: Refused) -> HttpResponse {
    let (status, heading, message) = match r {
        Refused::SignIn(back) => {
            let q = url::form_urlencoded::Serializer::new(String::new())
                .append_pair("return_to", &back)
                .finish();
            return see_other(format!("{}/signin?{q}", path_prefix(&config.base_url)));
        }
        Refused::NotFound => (
            StatusCode::NOT_FOUND,
            "Not found",
            "There is nothing here, or it belongs to a team you are not a member of.".to_owned(),
        ),
        Refused::Forbidden(why) => (StatusCode::FORBIDDEN, "Not allowed", why.to_owned()),
        Refused::BadForm(why) => (StatusCode::BAD_REQUEST, "Cannot continue", why),
    };
    let nonce = pay.random_alphanumeric(NONCE_LEN);
    let body = html(&ProblemPage {
        layout: Layout::card(&nonce, heading),
        message: &message,
    });
    respond(status, &nonce, None, body)
}

/// The 400 page for a POST whose body is not the form `T` (no body, another content type, a
/// malformed encoding, an unknown or repeated field), before the session is looked at: a
/// browser's form always reads.
pub(crate) fn unreadable<T: serde::de::DeserializeOwned>(
    pay: &Pay,
    config: &HttpConfig,
    body: &FormBody,
) -> Option<HttpResponse> {
    let why = match &body.0 {
        Err(_) => "The form could not be read.".to_owned(),
        Ok(pairs) => form::read_page_form::<T>(pairs).err()?.page_message(),
    };
    Some(refused(pay, config, Refused::BadForm(why)))
}

/// The 403 page for a form another site sent (its `Origin` is not ours), else `None`.
pub(crate) fn cross_site(
    pay: &Pay,
    config: &HttpConfig,
    req: &HttpRequest,
) -> Option<HttpResponse> {
    (!origin_allowed(&config.base_url, req)).then(|| {
        refused(
            pay,
            config,
            Refused::Forbidden("This form was sent from another site."),
        )
    })
}

pub(crate) fn session_token(req: &HttpRequest) -> Option<String> {
    req.cookie(SESSION_COOKIE).map(|c| c.value().to_owned())
}

/// The dashboard's door: the team picked in the switcher (`company`), else the team the
/// session started on; not signed in, the sign-in page first.
#[utoipa::path(
    tag = "Dashboard",
    params(("company" = Option<String>, Query, description = "A team id (the switcher's choice)")),
    responses(
        (status = 303, description = "To the team's home page, or to `/signin` (with `return_to`) without a session"),
    )
)]
#[get("/dashboard")]
pub async fn dashboard(
    pay: web::Data<Pay>,
    config: web::Data<HttpConfig>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let token = session_token(&req);
    let chosen = form::decode_form(req.query_string().as_bytes())
        .ok()
        .and_then(|pairs| pairs.into_iter().find(|(n, _)| n == "company"))
        .and_then(|(_, v)| CompanyId::parse(&v));
    let p = pay.clone();
    let company = blocking(move || {
        let Some(token) = token else { return Ok(None) };
        match p.tenancy().authenticate_sign_in(&token) {
            Ok(s) => Ok(Some(chosen.unwrap_or(s.sign_in.company_id))),
            Err(TenancyError::Denied(_)) => Ok(None),
            Err(e) => Err(e.into()),
        }
    })
    .await?;
    let prefix = path_prefix(&config.base_url);
    Ok(match company {
        Some(c) => see_other(format!("{prefix}{DASHBOARD_PATH}/{c}")),
        None => refused(&pay, &config, Refused::SignIn(DASHBOARD_PATH.into())),
    })
}

/// Sign out: the session ends (its cookie cleared) and the browser goes to the sign-in page.
#[utoipa::path(
    tag = "Dashboard",
    request_body(content = CsrfForm, content_type = "application/x-www-form-urlencoded"),
    security((), ("session" = [])),
    responses(
        (status = 303, description = "Signed out (or not signed in): to `/signin`"),
        (status = 400, description = "No form, or one that cannot be read (HTML)", content_type = "text/html", body = String),
        (status = 403, description = "Missing or wrong CSRF token, or another site's form (HTML)", content_type = "text/html", body = String),
    )
)]
#[post("/dashboard/signout")]
pub async fn sign_out(
    pay: web::Data<Pay>,
    config: web::Data<HttpConfig>,
    req: HttpRequest,
    body: FormBody,
) -> Result<HttpResponse, ApiError> {
    if let Some(refused) = cross_site(&pay, &config, &req) {
        return Ok(refused);
    }
    if let Some(refused) = unreadable::<CsrfForm>(&pay, &config, &body) {
        return Ok(refused);
    }
    let token = session_token(&req);
    let p = pay.clone();
    let outcome = blocking(move || {
        let Some(token) = token else {
            return Ok(Ok(()));
        };
        let signed_in = match p.tenancy().authenticate_sign_in(&token) {
            Ok(s) => s,
            Err(TenancyError::Denied(_)) => return Ok(Ok(())),
            Err(e) => return Err(e.into()),
        };
        let f = match body
            .0
            .map_err(|_| "The form could not be read.".to_owned())
            .and_then(|pairs| form::read::<CsrfForm>(&pairs))
        {
            Ok(f) => f,
            Err(why) => return Ok(Err(Refused::BadForm(why))),
        };
        if p.tenancy()
            .check_csrf(&signed_in, f.csrf_token.as_deref())
            .is_err()
        {
            return Ok(Err(Refused::Forbidden(
                "The form's security token is wrong; reload the page and try again.",
            )));
        }
        p.tenancy().logout(&token)?;
        Ok(Ok(()))
    })
    .await?;
    if let Err(r) = outcome {
        return Ok(refused(&pay, &config, r));
    }
    let mut gone = session_cookie(&config, "");
    gone.make_removal();
    Ok(HttpResponse::SeeOther()
        .insert_header((
            header::LOCATION,
            format!("{}/signin", path_prefix(&config.base_url)),
        ))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .cookie(gone)
        .finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_dashboard_paths_are_return_paths() {
        for ok in ["/dashboard", "/dashboard/", "/dashboard/0190-ab/developers"] {
            assert!(is_return_path(ok), "{ok}");
        }
        for bad in [
            "/dashboardx",
            "//evil.example/dashboard",
            "/dashboard//evil.example",
            "/dashboard/../signin",
            "/dashboard/a?b=c",
            "/dashboard/\\evil",
            "https://evil.example/dashboard",
            "/dashboard/a\r\nSet-Cookie:x",
            "",
        ] {
            assert!(!is_return_path(bad), "{bad}");
        }
    }
}
