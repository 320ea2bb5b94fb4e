//! The dashboard's Team screen: the team's members, their e-mail, role and since when, read
//! through the tenancy service (any member may read them). Members are added by the operator
//! (`pay-server admin add-member`): the domain has no invitation or role change yet, so the
//! screen has no control.

use actix_web::http::StatusCode;
use actix_web::{get, web, HttpRequest, HttpResponse};
use askama::Template;
use pay_domain::app::Pay;
use pay_domain::tenancy::Role;

use super::screen::{nonce, Answer};
use super::{blocking, member, refusal, session_token, when, Frame, DASHBOARD_PATH};
use crate::edge::error::ApiError;
use crate::pages::checkout::path_prefix;
use crate::pages::layout::Layout;
use crate::HttpConfig;

/// One member as listed.
struct MemberRow {
    email: String,
    role: &'static str,
    rights: &'static str,
    since: String,
    you: bool,
}

#[derive(Template)]
#[template(path = "dashboard/team.html")]
struct TeamPage<'a> {
    layout: Layout<'a>,
    frame: Frame<'a>,
    members: Vec<MemberRow>,
}

fn role_words(role: Role) -> (&'static str, &'static str) {
    match role {
        Role::Owner => ("Owner", "Changes settings, keys and webhooks"),
        Role::Admin => ("Admin", "Changes settings, keys and webhooks"),
        Role::Member => ("Member", "Reads everything, changes nothing"),
    }
}

/// The team's members (HTML).
#[utoipa::path(
    tag = "Dashboard",
    params(("companyId" = String, Path, description = "The team's company id")),
    security((), ("session" = [])),
    responses(
        (status = 200, description = "The members and their roles (HTML)", content_type = "text/html", body = String),
        (status = 303, description = "Not signed in: to `/signin` with `return_to`"),
        (status = 404, description = "Unknown company, or one the user is not a member of (HTML)", content_type = "text/html", body = String),
    )
)]
#[get("/dashboard/{companyId}/team")]
pub async fn team_page(
    pay: web::Data<Pay>,
    config: web::Data<HttpConfig>,
    req: HttpRequest,
    company: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let company = company.into_inner();
    let token = session_token(&req);
    let (p, c) = (pay.clone(), config.clone());
    let answer = blocking(move || {
        let back = format!("{DASHBOARD_PATH}/{company}/team");
        let m = match member(&p, token.as_deref(), &company, &back)? {
            Ok(m) => m,
            Err(r) => return Ok(Answer::Refused(r)),
        };
        let list = match p.tenancy().members(&m.signed_in, m.principal.company_id) {
            Ok(l) => l,
            Err(e) => return Ok(Answer::Refused(refusal(e, &back)?)),
        };
        let me = m.signed_in.sign_in.user_id;
        let members = list
            .into_iter()
            .map(|t| {
                let (role, rights) = role_words(t.role);
                MemberRow {
                    email: t.email,
                    role,
                    rights,
                    since: when(t.since),
                    you: t.user_id == me,
                }
            })
            .collect();
        let prefix = path_prefix(&c.base_url);
        let n = nonce(&p);
        let page = TeamPage {
            layout: Layout::wide(&n, "Team"),
            frame: Frame::new(&prefix, &m, "team"),
            members,
        };
        Ok(Answer::page(StatusCode::OK, n.clone(), &page))
    })
    .await?;
    Ok(answer.respond(&pay, &config))
}
