//! A link's page: its fields and metadata, the status moves the domain allows from its status
//! (`transition`), the latest session with its settlement, the timeline, the invoice button
//! when `invoicePdfUrl` is set, the request e-mail, and the manual resolution of an underpaid
//! session. Each change is the JSON route's domain call (`set_link_status`,
//! `send_request_email`, `resolve_underpayment`), then 303 back to the page; a move or mail the
//! domain refuses shows the page again with its reason and the JSON route's status.

use actix_web::http::StatusCode;
use actix_web::{get, post, HttpResponse};
use askama::Template;
use pay_domain::app::Pay;
use pay_domain::checkout::machine::SessionStatus;
use pay_domain::checkout::{LinkDetail, Resolution};
use pay_domain::links::{transition, LinkState, LinkStatus, LinkTransition};
use serde::Deserialize;
use utoipa::ToSchema;

use super::{link_path, outcome, uid_of, Outcome};
use crate::edge::error::ApiError;
use crate::edge::form::FormBody;
use crate::pages::dashboard::screen::{self, Answer};
use crate::pages::dashboard::{
    when, ChangeRefusals, Frame, Member, Refused, ScreenRefusals, Visit,
};
use crate::pages::layout::{html, Layout};

/// A status move: `status` is `active`, `paused` or `archived`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkStatusForm {
    pub csrf_token: Option<String>,
    pub status: Option<String>,
}

/// The request e-mail: to `email`, or (empty) to the link's customer e-mail.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RequestEmailForm {
    pub csrf_token: Option<String>,
    pub email: Option<String>,
}

/// The decision on an underpaid session: `action` is `complete` or `refund`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ResolutionForm {
    pub csrf_token: Option<String>,
    pub action: Option<String>,
}

/// A label and its value.
struct Fact {
    name: &'static str,
    value: String,
}

/// One timeline entry as shown.
struct Entry {
    kind: &'static str,
    at: String,
    facts: String,
}

/// A status move offered: the status it moves to and the button's word.
struct Move {
    to: &'static str,
    label: &'static str,
}

#[derive(Template)]
#[template(path = "dashboard/link.html")]
struct LinkPage<'a> {
    layout: Layout<'a>,
    frame: Frame<'a>,
    can_manage: bool,
    uid: String,
    public_url: String,
    state: &'static str,
    facts: Vec<Fact>,
    metadata: Vec<Fact>,
    invoice: Option<String>,
    moves: Vec<Move>,
    session: Option<Vec<Fact>>,
    underpaid: bool,
    timeline: Vec<Entry>,
    takes_mail: bool,
    notice: Option<String>,
}

/// The page's data, read through the checkout's `link_detail` (the JSON detail's call).
struct Screen {
    m: Member,
    detail: LinkDetail,
    base: String,
    now: pay_domain::kernel::timestamp::Timestamp,
    notice: Option<String>,
}

fn gather(
    pay: &Pay,
    m: Member,
    uid: &str,
    notice: Option<String>,
) -> Result<Result<Screen, Refused>, ApiError> {
    let uid = match uid_of(uid) {
        Ok(u) => u,
        Err(r) => return Ok(Err(r)),
    };
    let back = link_path(&m.principal.company_id.to_string(), uid.as_str());
    let detail = match pay.checkout().link_detail(&m.principal, &uid) {
        Ok(d) => d,
        Err(e) => {
            return Ok(Err(match outcome(e, &back)? {
                Outcome::Refused(r) => r,
                Outcome::Shown(..) => Refused::NotFound,
            }))
        }
    };
    let (base, now) = pay.tenancy().pay_base_and_now(m.principal.company_id)?;
    Ok(Ok(Screen {
        m,
        detail,
        base,
        now,
        notice,
    }))
}

fn opt(name: &'static str, v: &Option<String>) -> Option<Fact> {
    v.as_ref().map(|value| Fact {
        name,
        value: value.clone(),
    })
}

fn render(pay: &Pay, config: &crate::HttpConfig, s: Screen, code: StatusCode) -> Answer {
    let l = &s.detail.link;
    let p = &l.payload;
    let mut facts = vec![Fact {
        name: "Amount",
        value: format!(
            "{} {}",
            p.amount.as_str(),
            p.fiat_currency.as_deref().unwrap_or(&p.currency)
        ),
    }];
    facts.push(Fact {
        name: "Paid in",
        value: format!("{} ({})", p.currency, p.asset),
    });
    facts.extend(
        [
            opt("Title", &p.title),
            opt("Description", &p.description),
            opt("Order id", &p.order_id),
            opt("Customer e-mail", &p.customer_email),
            opt("Client id", &p.client_id),
            p.fee_paid_by.map(|f| Fact {
                name: "Fee paid by",
                value: f.as_str().to_owned(),
            }),
            p.skip_quote_acceptance.map(|b| Fact {
                name: "Skip quote acceptance",
                value: if b { "yes" } else { "no" }.to_owned(),
            }),
            opt("Return URL", &p.return_url),
            opt("Success URL", &p.success_url),
            opt("Failure URL", &p.failure_url),
        ]
        .into_iter()
        .flatten(),
    );
    facts.push(Fact {
        name: "Expires",
        value: l.expires_at.map(when).unwrap_or_else(|| "never".into()),
    });
    facts.push(Fact {
        name: "Created",
        value: when(l.created_at),
    });
    let metadata = p
        .metadata
        .iter()
        .flatten()
        .map(|(k, v)| Fact {
            name: "",
            value: format!("{k}: {v}"),
        })
        .collect();
    let moves = [
        (LinkStatus::Active, "Activate"),
        (LinkStatus::Paused, "Pause"),
        (LinkStatus::Archived, "Archive"),
    ]
    .into_iter()
    .filter(|(to, _)| matches!(transition(l.status, *to), Ok(LinkTransition::Move { .. })))
    .map(|(to, label)| Move {
        to: to.as_str(),
        label,
    })
    .collect();
    let session = s.detail.latest_session.as_ref().map(|x| {
        let st = &x.settlement;
        let dec = |name: &'static str, d: &Option<pay_domain::kernel::amount::Decimal>| {
            d.map(|d| Fact {
                name,
                value: d.to_string(),
            })
        };
        let mut f = vec![
            Fact {
                name: "Session",
                value: x.id.to_string(),
            },
            Fact {
                name: "Status",
                value: x.status.as_str().to_owned(),
            },
            Fact {
                name: "Invoiced",
                value: format!("{} {}", x.invoice_amount.as_str(), x.invoice_asset),
            },
            Fact {
                name: "To pay",
                value: format!("{} {}", x.required_sell_amount, x.selected_sell_asset),
            },
        ];
        f.extend(
            [
                dec("Received", &st.received_amount),
                dec("Overpaid by", &st.overpaid_by),
                dec("Short within tolerance", &st.short_within_tolerance),
                dec("Short by", &st.short_by),
                dec("Late", &st.late_amount),
                opt("Deposit address", &x.deposit_address),
            ]
            .into_iter()
            .flatten(),
        );
        f.push(Fact {
            name: "Updated",
            value: when(x.updated_at),
        });
        f
    });
    let underpaid = s
        .detail
        .latest_session
        .as_ref()
        .is_some_and(|x| x.status == SessionStatus::Underpaid);
    let state = LinkState::of(l, s.now);
    let m = &s.m;
    Answer::shown(pay, config, code, |nonce, prefix| {
        html(&LinkPage {
            layout: Layout::wide(nonce, "Payment link"),
            frame: Frame::new(prefix, m, "links"),
            can_manage: m.can_manage,
            uid: l.uid.to_string(),
            public_url: l.public_url(&s.base),
            state: state.as_str(),
            facts,
            metadata,
            invoice: p.invoice_pdf_url.clone(),
            moves,
            session,
            underpaid,
            timeline: s
                .detail
                .timeline
                .iter()
                .map(|e| Entry {
                    kind: e.kind.as_str(),
                    at: when(e.created_at),
                    facts: serde_json::to_string(&e.facts).unwrap_or_default(),
                })
                .collect(),
            takes_mail: state.takes_payments(),
            notice: s.notice.clone(),
        })
    })
}

/// A payment link of the team (HTML).
#[utoipa::path(
    tag = "Dashboard",
    params(
        ("companyId" = String, Path, description = "The team's company id"),
        ("uid" = String, Path, description = "The link's public identifier"),
    ),
    security((), ("session" = [])),
    responses(
        (status = 200, description = "The link, its latest session and timeline (HTML)", content_type = "text/html", body = String),
        ScreenRefusals,
    )
)]
#[get("/dashboard/{companyId}/links/{uid}")]
pub async fn link_page(v: Visit) -> Result<HttpResponse, ApiError> {
    let uid = v.req.match_info().get("uid").unwrap_or("").to_owned();
    let c = v.config.clone();
    let got = v
        .screen(link_path(&v.company, &uid), move |p, m| {
            Ok(match gather(p, m, &uid, None)? {
                Ok(s) => render(p, &c, s, StatusCode::OK),
                Err(r) => Answer::Refused(r),
            })
        })
        .await?;
    Ok(match got {
        Ok(answer) => answer.respond(&v.pay, &v.config),
        Err(answer) => answer,
    })
}

/// A change of the link (`screen::change`): the domain call `change` on the link of the
/// path, then 303 back to the page, or the page with the domain's reason.
async fn change_link<T: serde::de::DeserializeOwned + Send + 'static>(
    v: Visit,
    body: FormBody,
    csrf_of: fn(&T) -> Option<&str>,
    change: impl FnOnce(&Pay, &Member, &pay_domain::kernel::ids::LinkUid, T) -> Result<(), ApiError>
        + Send
        + 'static,
) -> Result<HttpResponse, ApiError> {
    let raw_uid = v.req.match_info().get("uid").unwrap_or("").to_owned();
    let back = link_path(&v.company, &raw_uid);
    screen::change(v, body, back.clone(), csrf_of, move |p, c, m, f| {
        let uid = match uid_of(&raw_uid) {
            Ok(u) => u,
            Err(r) => return Ok(Answer::Refused(r)),
        };
        let why = match change(p, &m, &uid, f) {
            Ok(()) => return Ok(Answer::Back(back)),
            Err(e) => e,
        };
        Ok(match outcome(why, &back)? {
            Outcome::Refused(r) => Answer::Refused(r),
            Outcome::Shown(code, why) => match gather(p, m, &raw_uid, Some(why))? {
                Ok(s) => render(p, c, s, code),
                Err(r) => Answer::Refused(r),
            },
        })
    })
    .await
}

/// Move the link: pause, activate or archive, as the domain's transitions allow.
#[utoipa::path(
    tag = "Dashboard",
    params(
        ("companyId" = String, Path, description = "The team's company id"),
        ("uid" = String, Path, description = "The link's public identifier"),
    ),
    request_body(content = LinkStatusForm, content_type = "application/x-www-form-urlencoded"),
    security((), ("session" = [])),
    responses(
        (status = 400, description = "A malformed form or an unknown status (HTML)", content_type = "text/html", body = String),
        ChangeRefusals,
        (status = 409, description = "A move the link's status does not allow: the page with the reason (HTML)", content_type = "text/html", body = String),
    )
)]
#[post("/dashboard/{companyId}/links/{uid}/status")]
pub async fn set_link_status(v: Visit, body: FormBody) -> Result<HttpResponse, ApiError> {
    change_link::<LinkStatusForm>(
        v,
        body,
        |f| f.csrf_token.as_deref(),
        |p, m, uid, f| {
            let to = LinkStatus::parse(f.status.as_deref().unwrap_or("")).ok_or_else(|| {
                pay_domain::FieldError::new("status", "status must be active, paused or archived")
            })?;
            p.links().set_link_status(&m.principal, uid, to)?;
            Ok(())
        },
    )
    .await
}

/// Send the link's payment request by e-mail (queued in the outbox, as the JSON route does).
#[utoipa::path(
    tag = "Dashboard",
    params(
        ("companyId" = String, Path, description = "The team's company id"),
        ("uid" = String, Path, description = "The link's public identifier"),
    ),
    request_body(content = RequestEmailForm, content_type = "application/x-www-form-urlencoded"),
    security((), ("session" = [])),
    responses(
        (status = 400, description = "A malformed form, a refused address, or no address at all: the page with the reason (HTML)", content_type = "text/html", body = String),
        ChangeRefusals,
        (status = 409, description = "The link takes no payment now (paused, archived or expired): the page with the reason (HTML)", content_type = "text/html", body = String),
        (status = 429, description = "Too many request mails for this link or address: the page with the reason (HTML)", content_type = "text/html", body = String),
    )
)]
#[post("/dashboard/{companyId}/links/{uid}/send-request-email")]
pub async fn send_request_email(v: Visit, body: FormBody) -> Result<HttpResponse, ApiError> {
    change_link::<RequestEmailForm>(
        v,
        body,
        |f| f.csrf_token.as_deref(),
        |p, m, uid, f| {
            let email = f
                .email
                .map(|e| e.trim().to_owned())
                .filter(|e| !e.is_empty());
            p.mail().send_request_email(&m.principal, uid, email)?;
            Ok(())
        },
    )
    .await
}

/// Resolve the link's underpaid session: `complete` keeps what arrived, `refund` asks the
/// payer for a refund address.
#[utoipa::path(
    tag = "Dashboard",
    params(
        ("companyId" = String, Path, description = "The team's company id"),
        ("uid" = String, Path, description = "The link's public identifier"),
    ),
    request_body(content = ResolutionForm, content_type = "application/x-www-form-urlencoded"),
    security((), ("session" = [])),
    responses(
        (status = 400, description = "A malformed form or an unknown action (HTML)", content_type = "text/html", body = String),
        ChangeRefusals,
        (status = 409, description = "The latest session is not underpaid: the page with the reason (HTML)", content_type = "text/html", body = String),
    )
)]
#[post("/dashboard/{companyId}/links/{uid}/manual-resolution")]
pub async fn resolve(v: Visit, body: FormBody) -> Result<HttpResponse, ApiError> {
    change_link::<ResolutionForm>(
        v,
        body,
        |f| f.csrf_token.as_deref(),
        |p, m, uid, f| {
            let r = Resolution::parse(f.action.as_deref().unwrap_or(""))?;
            p.checkout().resolve_underpayment(&m.principal, uid, r)?;
            Ok(())
        },
    )
    .await
}
