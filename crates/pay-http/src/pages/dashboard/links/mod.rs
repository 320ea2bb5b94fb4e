//! The dashboard's Payment links screens: the list (`list`: the 200 newest, by status and a
//! search over order id, title and customer e-mail; the create form with every field of the
//! create payload) and a link's detail (`detail`: status moves, the latest session with its
//! settlement, the timeline, metadata, the invoice, the request e-mail and the manual
//! resolution of an underpaid session). Every read and change is the domain call of the JSON
//! route (`pay.links()`, `pay.checkout()`, `pay.mail()`); a refusal of the domain is shown
//! as the JSON route's status: a read-only member's change 403, another team's link 404, a
//! refused field or move the screen again with the reason.

pub mod detail;
pub mod list;

use actix_web::http::StatusCode;
use pay_domain::kernel::ids::LinkUid;

use super::{Refused, DASHBOARD_PATH};
use crate::edge::error::ApiError;

/// `/dashboard/{company}/links`.
fn list_path(company: &str) -> String {
    format!("{DASHBOARD_PATH}/{company}/links")
}

/// `/dashboard/{company}/links/{uid}`.
fn link_path(company: &str, uid: &str) -> String {
    format!("{}/{uid}", list_path(company))
}

/// A uid of the path; one that cannot be a link's is another team's as far as the page says.
fn uid_of(raw: &str) -> Result<LinkUid, Refused> {
    LinkUid::parse(raw).ok_or(Refused::NotFound)
}

/// How a screen shows a refusal of the domain: the JSON route's status, and its message
/// beside the form (`Shown`), unless it is one of the page refusals.
pub(crate) enum Outcome {
    Shown(StatusCode, String),
    Refused(Refused),
}

/// A domain refusal as the page shows it: 401 is the sign-in again (`back`), 403 the
/// read-only member's page, 404 another team's link; a fault stays an error; anything else
/// (a refused field, a move the link cannot make, a link not taking mail) is said on the
/// screen with the status the JSON route gives.
pub(crate) fn outcome(e: impl Into<ApiError>, back: &str) -> Result<Outcome, ApiError> {
    let e = e.into();
    let (status, _, message, _) = e.parts();
    Ok(match status {
        StatusCode::UNAUTHORIZED => Outcome::Refused(Refused::SignIn(back.to_owned())),
        StatusCode::FORBIDDEN => Outcome::Refused(Refused::Forbidden(
            "Only the team's owner or an admin can change this.",
        )),
        StatusCode::NOT_FOUND => Outcome::Refused(Refused::NotFound),
        s if s.is_server_error() => return Err(e),
        s => Outcome::Shown(s, message),
    })
}
