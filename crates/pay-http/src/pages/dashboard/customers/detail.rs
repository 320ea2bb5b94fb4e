//! A customer's page: its fields and metadata, its subscriptions (the team's 200 newest that
//! bill it) and, for owners and admins, the portal link: `portal_link`, the JSON portal
//! route's call, generated on demand and shown once in the answer (the URL lets its holder
//! pause and cancel the customer's subscriptions, so it is never stored nor shown again).

use actix_web::http::StatusCode;
use actix_web::{get, post, HttpResponse};
use askama::Template;
use pay_domain::app::Pay;
use pay_domain::customers::{Contact, ContactRef};

use super::customer_path;
use crate::edge::error::ApiError;
use crate::edge::form::FormBody;
use crate::pages::dashboard::flow::{self, read_refusal, refused_change, Done};
use crate::pages::dashboard::ChangeRefusals;
use crate::pages::dashboard::{
    show, when, CsrfForm, Frame, Member, Refused, ScreenRefusals, Visit,
};
use crate::pages::layout::{html, Layout};
use crate::HttpConfig;

/// A label and its value.
struct Fact {
    name: &'static str,
    value: String,
}

/// One of the customer's subscriptions as listed.
struct SubRow {
    uid: String,
    label: String,
    status: &'static str,
    amount: String,
    cadence: &'static str,
}

/// A portal link just generated.
pub(crate) struct Portal {
    url: String,
    expires: String,
}

#[derive(Template)]
#[template(path = "dashboard/customer.html")]
struct CustomerPage<'a> {
    layout: Layout<'a>,
    frame: Frame<'a>,
    can_manage: bool,
    uid: String,
    facts: Vec<Fact>,
    metadata: Vec<String>,
    subscriptions: Vec<SubRow>,
    portal: Option<Portal>,
    notice: Option<String>,
}

pub(crate) struct Screen {
    m: Member,
    contact: Contact,
    subscriptions: Vec<SubRow>,
    portal: Option<Portal>,
    notice: Option<String>,
}

/// The customer of the path (`get_customer`, the JSON read's call) and its subscriptions.
fn gather(
    pay: &Pay,
    m: Member,
    raw: &str,
    portal: Option<Portal>,
    notice: Option<String>,
) -> Result<Result<Screen, Refused>, ApiError> {
    let back = customer_path(&m.principal.company_id.to_string(), raw);
    let Some(by) = ContactRef::parse(raw) else {
        return Ok(Err(Refused::NotFound));
    };
    let contact = match pay.customers().get_customer(&m.principal, by) {
        Ok(c) => c,
        Err(e) => return Ok(Err(read_refusal(e, &back)?)),
    };
    let subscriptions = match pay.subscriptions().list_subscriptions(&m.principal) {
        Ok(all) => all
            .into_iter()
            .map(|v| v.subscription)
            .filter(|s| s.contact_id == contact.id)
            .map(|s| SubRow {
                uid: s.uid.to_string(),
                label: s.label,
                status: s.status.as_str(),
                amount: format!("{} USD", s.amount_usd),
                cadence: s.interval.cadence().as_str(),
            })
            .collect(),
        Err(e) => return Ok(Err(read_refusal(e, &back)?)),
    };
    Ok(Ok(Screen {
        m,
        contact,
        subscriptions,
        portal,
        notice,
    }))
}

fn render(pay: &Pay, config: &HttpConfig, s: Screen, code: StatusCode) -> HttpResponse {
    let c = &s.contact;
    let mut facts = vec![Fact {
        name: "E-mail",
        value: c.email.clone(),
    }];
    if let Some(n) = &c.name {
        facts.push(Fact {
            name: "Name",
            value: n.clone(),
        });
    }
    if let Some(id) = &c.client_id {
        facts.push(Fact {
            name: "Client id",
            value: id.clone(),
        });
    }
    facts.extend([
        Fact {
            name: "Customer id",
            value: c.uid.to_string(),
        },
        Fact {
            name: "Created",
            value: when(c.created_at),
        },
        Fact {
            name: "Updated",
            value: when(c.updated_at),
        },
    ]);
    let metadata = c
        .metadata
        .iter()
        .map(|(k, v)| format!("{k}: {v}"))
        .collect();
    let m = &s.m;
    show(pay, config, code, |nonce, prefix| {
        html(&CustomerPage {
            layout: Layout::wide(nonce, "Customer"),
            frame: Frame::new(prefix, m, "customers"),
            can_manage: m.can_manage,
            uid: c.uid.to_string(),
            facts,
            metadata,
            subscriptions: s.subscriptions,
            portal: s.portal,
            notice: s.notice,
        })
    })
}

/// A customer of the team (HTML).
#[utoipa::path(
    tag = "Dashboard",
    params(
        ("companyId" = String, Path, description = "The team's company id"),
        ("customerId" = String, Path, description = "The customer's `uid` (or `id`)"),
    ),
    security((), ("session" = [])),
    responses(
        (status = 200, description = "The customer, its subscriptions and the portal-link control (HTML)", content_type = "text/html", body = String),
        ScreenRefusals,
    )
)]
#[get("/dashboard/{companyId}/customers/{customerId}")]
pub async fn customer_page(v: Visit) -> Result<HttpResponse, ApiError> {
    let raw = v
        .req
        .match_info()
        .get("customerId")
        .unwrap_or("")
        .to_owned();
    let back = customer_path(&v.company, &raw);
    flow::get(v, back, move |p, m| gather(p, m, &raw, None, None), render).await
}

/// Generate the customer's signed portal link (valid 24 hours): the page with the URL,
/// shown this once.
#[utoipa::path(
    tag = "Dashboard",
    params(
        ("companyId" = String, Path, description = "The team's company id"),
        ("customerId" = String, Path, description = "The customer's `uid` (or `id`)"),
    ),
    request_body(content = CsrfForm, content_type = "application/x-www-form-urlencoded"),
    security((), ("session" = [])),
    responses(
        (status = 200, description = "The customer's page with the portal URL and its expiry, shown once (HTML)", content_type = "text/html", body = String),
        (status = 400, description = "A malformed form (HTML)", content_type = "text/html", body = String),
        ChangeRefusals,
    )
)]
#[post("/dashboard/{companyId}/customers/{customerId}/portal")]
pub async fn portal_link(v: Visit, body: FormBody) -> Result<HttpResponse, ApiError> {
    let raw = v
        .req
        .match_info()
        .get("customerId")
        .unwrap_or("")
        .to_owned();
    let back = customer_path(&v.company, &raw);
    flow::post(
        v,
        body,
        back.clone(),
        |f: &CsrfForm| f.csrf_token.as_deref(),
        move |p, m, _f| {
            let Some(by) = ContactRef::parse(&raw) else {
                return Ok(Done::Refused(Refused::NotFound));
            };
            match p.customers().portal_link(&m.principal, by) {
                Ok(link) => {
                    let portal = Portal {
                        url: link.url,
                        expires: when(link.expires_at),
                    };
                    Ok(match gather(p, m, &raw, Some(portal), None)? {
                        Ok(s) => Done::Shown(s, StatusCode::OK),
                        Err(r) => Done::Refused(r),
                    })
                }
                Err(e) => refused_change(e, &back, |why| gather(p, m, &raw, None, Some(why))),
            }
        },
        render,
    )
    .await
}
