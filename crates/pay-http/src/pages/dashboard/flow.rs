//! The request flow of the Customers and Subscriptions screens: a GET reads the screen's data
//! through the domain (`read`) and renders it; a POST checks the form's origin and shape, then
//! the member and the CSRF token, then does its domain call (`work`), which ends in a redirect
//! back, the screen again (with a notice, a shown result or a refused form) or a refusal.

use actix_web::http::StatusCode;
use actix_web::HttpResponse;
use pay_domain::app::Pay;

use super::links::{outcome, Outcome};
use super::screen::{member_form, pre_checks};
use super::{blocking, refused, see_other, session_token, Member, Refused, Visit};
use crate::edge::error::ApiError;
use crate::edge::form::FormBody;
use crate::pages::checkout::path_prefix;
use crate::HttpConfig;

/// How a screen is rendered from what its work gathered, answered with a status.
pub(crate) type Render<S> = fn(&Pay, &HttpConfig, S, StatusCode) -> HttpResponse;

/// What a POST's work ends with.
pub(crate) enum Done<S> {
    /// 303 to this path (under the prefix).
    Back(String),
    /// The screen again, answered with this status.
    Shown(S, StatusCode),
    Refused(Refused),
}

/// A domain refusal of a read: a page refusal, or (a refused field) the screen's own status
/// and message for the caller to show.
pub(crate) fn read_refusal(e: impl Into<ApiError>, back: &str) -> Result<Refused, ApiError> {
    Ok(match outcome(e, back)? {
        Outcome::Refused(r) => r,
        Outcome::Shown(..) => Refused::NotFound,
    })
}

/// A screen's GET: the member on the page `back`, `read` (blocking), rendered with 200.
pub(crate) async fn get<S: Send + 'static>(
    v: Visit,
    back: String,
    read: impl FnOnce(&Pay, Member) -> Result<Result<S, Refused>, ApiError> + Send + 'static,
    render: Render<S>,
) -> Result<HttpResponse, ApiError> {
    let got = v.screen(back, read).await?;
    Ok(match got {
        Ok(Ok(s)) => render(&v.pay, &v.config, s, StatusCode::OK),
        Ok(Err(r)) => refused(&v.pay, &v.config, r),
        Err(answer) => answer,
    })
}

/// A screen's POST of the form `T` on the page `back`: origin and body first (403, 400),
/// then the member and the CSRF token, then `work` (blocking).
pub(crate) async fn post<T, S, W>(
    v: Visit,
    body: FormBody,
    back: String,
    csrf_of: fn(&T) -> Option<&str>,
    work: W,
    render: Render<S>,
) -> Result<HttpResponse, ApiError>
where
    T: serde::de::DeserializeOwned + 'static,
    S: Send + 'static,
    W: FnOnce(&Pay, Member, T) -> Result<Done<S>, ApiError> + Send + 'static,
{
    if let Some(answer) = pre_checks::<T>(&v.pay, &v.config, &v.req, &body) {
        return Ok(answer);
    }
    let token = session_token(&v.req);
    let company = v.company.clone();
    let p = v.pay.clone();
    let done = blocking(move || {
        match member_form::<T>(&p, token.as_deref(), &company, &back, body, csrf_of)? {
            Ok((m, f)) => work(&p, m, f),
            Err(r) => Ok(Done::Refused(r)),
        }
    })
    .await?;
    Ok(match done {
        Done::Back(to) => see_other(format!("{}{to}", path_prefix(&v.config.base_url))),
        Done::Shown(s, code) => render(&v.pay, &v.config, s, code),
        Done::Refused(r) => refused(&v.pay, &v.config, r),
    })
}

/// A domain refusal of a change: a page refusal, or the screen again (`again`, given the
/// reason) with the JSON route's status.
pub(crate) fn refused_change<S>(
    e: impl Into<ApiError>,
    back: &str,
    again: impl FnOnce(String) -> Result<Result<S, Refused>, ApiError>,
) -> Result<Done<S>, ApiError> {
    Ok(match outcome(e, back)? {
        Outcome::Refused(r) => Done::Refused(r),
        Outcome::Shown(code, why) => match again(why)? {
            Ok(s) => Done::Shown(s, code),
            Err(r) => Done::Refused(r),
        },
    })
}

/// A form's text field: trimmed, empty is absent.
pub(crate) fn given(v: &Option<String>) -> Option<String> {
    v.as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// A form's metadata field: empty is absent, else it must read as a JSON object.
pub(crate) fn metadata_of(
    v: &Option<String>,
) -> Result<Option<serde_json::Map<String, serde_json::Value>>, pay_domain::FieldError> {
    match given(v) {
        None => Ok(None),
        Some(text) => serde_json::from_str(&text).map(Some).map_err(|_| {
            pay_domain::FieldError::new(
                "metadata",
                "metadata must be a JSON object such as {\"plan\": \"pro\"}",
            )
        }),
    }
}
