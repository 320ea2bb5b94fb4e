//! What the dashboard's handlers answer, made in their blocking closure: a rendered screen, a
//! refusal, or a redirect back; the member of a POST once its form's origin, body and CSRF
//! token are checked; and `change`, the one shape of every mutating POST (its refusals
//! documented once, `ChangeRefusals`).

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse};
use askama::Template;
use pay_domain::app::Pay;
use pay_domain::tenancy::Denied;

use super::{
    blocking, checked_form, cross_site, member, refused, session_token, unreadable, Member,
    Refused, Visit,
};
use crate::edge::error::ApiError;
use crate::edge::form::FormBody;
use crate::pages::checkout::path_prefix;
use crate::pages::layout::{html, respond, NONCE_LEN};
use crate::HttpConfig;

/// A handler's answer, built off the event loop.
pub(crate) enum Answer {
    /// A screen: its status, its CSP nonce and its HTML.
    Page(StatusCode, String, String),
    Refused(Refused),
    /// Done: 303 to this path (under the prefix).
    Back(String),
}

impl Answer {
    /// `page` rendered with `nonce` (the one its layout carries).
    pub fn page(status: StatusCode, nonce: String, page: &impl Template) -> Answer {
        Answer::Page(status, nonce, html(page))
    }

    /// A screen answered with `status`: `build` renders it with a fresh CSP nonce and the
    /// path prefix (the frame's links start with it).
    pub fn shown(
        pay: &Pay,
        config: &HttpConfig,
        status: StatusCode,
        build: impl FnOnce(&str, &str) -> String,
    ) -> Answer {
        let prefix = path_prefix(&config.base_url);
        let n = nonce(pay);
        let body = build(&n, &prefix);
        Answer::Page(status, n, body)
    }

    pub fn respond(self, pay: &Pay, config: &HttpConfig) -> HttpResponse {
        match self {
            Answer::Page(status, nonce, body) => respond(status, &nonce, None, body),
            Answer::Refused(r) => refused(pay, config, r),
            Answer::Back(to) => super::see_other(format!("{}{to}", path_prefix(&config.base_url))),
        }
    }
}

/// A fresh CSP nonce for a page.
pub(crate) fn nonce(pay: &Pay) -> String {
    pay.random_alphanumeric(NONCE_LEN)
}

/// A domain refusal as a page: a read-only member's change is 403, an ended session the
/// sign-in page (back to `back`).
pub(crate) fn denied(d: Denied, back: &str) -> Refused {
    match d {
        Denied::Forbidden => {
            Refused::Forbidden("Only the team's owner or an admin can change this.")
        }
        _ => Refused::SignIn(back.to_owned()),
    }
}

/// The checks of every mutating POST before the blocking work: another site's form is 403,
/// a body that is not the form `T` 400.
pub(crate) fn pre_checks<T: serde::de::DeserializeOwned>(
    pay: &Pay,
    config: &HttpConfig,
    req: &HttpRequest,
    body: &FormBody,
) -> Option<HttpResponse> {
    cross_site(pay, config, req).or_else(|| unreadable::<T>(pay, config, body))
}

/// The member of `company` behind `token` with their form `T`, its CSRF token checked
/// (blocking); `Err` is the refusal to answer.
pub(crate) fn member_form<T: serde::de::DeserializeOwned>(
    pay: &Pay,
    token: Option<&str>,
    company: &str,
    back: &str,
    body: FormBody,
    csrf_of: impl Fn(&T) -> Option<&str>,
) -> Result<Result<(Member, T), Refused>, ApiError> {
    let m = match member(pay, token, company, back)? {
        Ok(m) => m,
        Err(r) => return Ok(Err(r)),
    };
    Ok(checked_form::<T>(pay, &m, body, csrf_of).map(|f| (m, f)))
}

/// A mutating POST of a screen of the visit's team (`back`: the page the sign-in returns to):
/// another site's form 403 and a body that is not the form `T` 400 first, then the member
/// and their form (CSRF token checked), then `act` (blocking) on them. Its refusals are
/// `ChangeRefusals`, documented once for every such route.
pub(crate) async fn change<T, F>(
    v: Visit,
    body: FormBody,
    back: String,
    csrf_of: fn(&T) -> Option<&str>,
    act: F,
) -> Result<HttpResponse, ApiError>
where
    T: serde::de::DeserializeOwned + 'static,
    F: FnOnce(&Pay, &HttpConfig, Member, T) -> Result<Answer, ApiError> + Send + 'static,
{
    if let Some(refused) = pre_checks::<T>(&v.pay, &v.config, &v.req, &body) {
        return Ok(refused);
    }
    let token = session_token(&v.req);
    let (p, c, company) = (v.pay.clone(), v.config.clone(), v.company);
    let answer = blocking(move || {
        match member_form::<T>(&p, token.as_deref(), &company, &back, body, csrf_of)? {
            Ok((m, f)) => act(&p, &c, m, f),
            Err(r) => Ok(Answer::Refused(r)),
        }
    })
    .await?;
    Ok(answer.respond(&v.pay, &v.config))
}
