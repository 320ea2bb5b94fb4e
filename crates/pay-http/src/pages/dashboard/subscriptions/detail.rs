//! A subscription's page: its fields and metadata, its customer, its cycles (each invoice a
//! payment link of the team, with its checkout) and the merchant's status moves the domain's
//! `transition` allows from its status (pause, resume, cancel; a move it refuses is not
//! offered). A move is `set_subscription_status`, the JSON PATCH's call, then 303 back; one the
//! domain refuses shows the page again with its reason and the JSON route's 409.

use actix_web::http::StatusCode;
use actix_web::{get, post, HttpResponse};
use askama::Template;
use pay_domain::app::Pay;
use pay_domain::kernel::ids::SubscriptionUid;
use pay_domain::subscriptions::{
    transition, Actor, SubscriptionStatus, SubscriptionTransition, SubscriptionView,
};
use serde::Deserialize;
use utoipa::ToSchema;

use super::{cadence_words, subscription_path};
use crate::edge::error::ApiError;
use crate::edge::form::FormBody;
use crate::pages::dashboard::flow::{self, read_refusal, refused_change, Done};
use crate::pages::dashboard::ChangeRefusals;
use crate::pages::dashboard::{show, when, Frame, Member, Refused, ScreenRefusals, Visit};
use crate::pages::layout::{html, Layout};
use crate::HttpConfig;

/// A status move: `status` is `active` (resume), `paused` or `cancelled`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SubscriptionStatusForm {
    pub csrf_token: Option<String>,
    pub status: Option<String>,
}

/// A label and its value.
struct Fact {
    name: &'static str,
    value: String,
}

/// One cycle as listed.
struct CycleRow {
    sequence: u32,
    due: String,
    amount: String,
    status: &'static str,
    link_uid: Option<String>,
    pay_url: Option<String>,
    paid: String,
}

/// A move offered: the status it moves to and the button's word.
struct Move {
    to: &'static str,
    label: &'static str,
}

#[derive(Template)]
#[template(path = "dashboard/subscription.html")]
struct SubscriptionPage<'a> {
    layout: Layout<'a>,
    frame: Frame<'a>,
    can_manage: bool,
    uid: String,
    status: &'static str,
    label: String,
    customer_uid: Option<String>,
    customer_email: String,
    facts: Vec<Fact>,
    metadata: Vec<String>,
    cycles: Vec<CycleRow>,
    moves: Vec<Move>,
    notice: Option<String>,
}

pub(crate) struct Screen {
    m: Member,
    view: SubscriptionView,
    customer_uid: Option<String>,
    pay_urls: Vec<Option<String>>,
    notice: Option<String>,
}

/// A uid of the path; one that cannot be a subscription's is another team's as far as the
/// page says.
fn uid_of(raw: &str) -> Result<SubscriptionUid, Refused> {
    SubscriptionUid::parse(raw).ok_or(Refused::NotFound)
}

/// The subscription of the path (`get_subscription`, the JSON read's call) and its customer.
fn gather(
    pay: &Pay,
    m: Member,
    raw: &str,
    notice: Option<String>,
) -> Result<Result<Screen, Refused>, ApiError> {
    let back = subscription_path(&m.principal.company_id.to_string(), raw);
    let uid = match uid_of(raw) {
        Ok(u) => u,
        Err(r) => return Ok(Err(r)),
    };
    let subs = pay.subscriptions();
    let view = match subs.get_subscription(&m.principal, &uid) {
        Ok(v) => v,
        Err(e) => return Ok(Err(read_refusal(e, &back)?)),
    };
    let customer_uid = pay
        .customers()
        .get_customer(
            &m.principal,
            pay_domain::customers::ContactRef::Id(view.subscription.contact_id),
        )
        .ok()
        .map(|c| c.uid.to_string());
    let pay_urls = view.cycles.iter().map(|c| subs.payment_url(c)).collect();
    Ok(Ok(Screen {
        m,
        view,
        customer_uid,
        pay_urls,
        notice,
    }))
}

/// The moves a merchant may make from `from`, as the domain's transition table says.
fn moves(from: SubscriptionStatus) -> Vec<Move> {
    [
        (SubscriptionStatus::Paused, "Pause"),
        (SubscriptionStatus::Active, "Resume"),
        (SubscriptionStatus::Cancelled, "Cancel"),
    ]
    .into_iter()
    .filter(|(to, _)| {
        matches!(
            transition(from, *to, Actor::Merchant),
            Ok(SubscriptionTransition::Move { .. })
        )
    })
    .map(|(to, label)| Move {
        to: to.as_str(),
        label,
    })
    .collect()
}

fn render(pay: &Pay, config: &HttpConfig, s: Screen, code: StatusCode) -> HttpResponse {
    let x = &s.view.subscription;
    let mut facts = vec![
        Fact {
            name: "Amount",
            value: format!("{} USD", x.amount_usd),
        },
        Fact {
            name: "Billed",
            value: cadence_words(x),
        },
        Fact {
            name: "Settled in",
            value: x.settlement_asset.clone(),
        },
        Fact {
            name: "Starts",
            value: when(x.start_at),
        },
        Fact {
            name: "Time zone",
            value: x.zone.name().to_owned(),
        },
    ];
    if let Some(d) = &x.description {
        facts.push(Fact {
            name: "Description",
            value: d.clone(),
        });
    }
    facts.push(Fact {
        name: "Next run",
        value: x.next_run_at.map(when).unwrap_or_else(|| "none".into()),
    });
    facts.push(Fact {
        name: "Created",
        value: when(x.created_at),
    });
    let metadata = x
        .metadata
        .iter()
        .map(|(k, v)| format!("{k}: {v}"))
        .collect();
    let cycles = s
        .view
        .cycles
        .iter()
        .zip(s.pay_urls)
        .map(|(c, url)| CycleRow {
            sequence: c.sequence,
            due: when(c.due_at),
            amount: format!("{} USD", c.amount_usd),
            status: c.status.as_str(),
            link_uid: c.payment_link_uid.as_ref().map(|u| u.to_string()),
            pay_url: url,
            paid: c.paid_at.map(when).unwrap_or_default(),
        })
        .collect();
    let m = &s.m;
    show(pay, config, code, |nonce, prefix| {
        html(&SubscriptionPage {
            layout: Layout::wide(nonce, "Subscription"),
            frame: Frame::new(prefix, m, "subscriptions"),
            can_manage: m.can_manage,
            uid: x.uid.to_string(),
            status: x.status.as_str(),
            label: x.label.clone(),
            customer_uid: s.customer_uid.clone(),
            customer_email: x.customer_email.clone(),
            facts,
            metadata,
            cycles,
            moves: moves(x.status),
            notice: s.notice.clone(),
        })
    })
}

/// A subscription of the team with its cycles (HTML).
#[utoipa::path(
    tag = "Dashboard",
    params(
        ("companyId" = String, Path, description = "The team's company id"),
        ("uid" = String, Path, description = "The subscription's `uid`"),
    ),
    security((), ("session" = [])),
    responses(
        (status = 200, description = "The subscription, its cycles and the allowed moves (HTML)", content_type = "text/html", body = String),
        ScreenRefusals,
    )
)]
#[get("/dashboard/{companyId}/subscriptions/{uid}")]
pub async fn subscription_page(v: Visit) -> Result<HttpResponse, ApiError> {
    let raw = v.req.match_info().get("uid").unwrap_or("").to_owned();
    let back = subscription_path(&v.company, &raw);
    flow::get(v, back, move |p, m| gather(p, m, &raw, None), render).await
}

/// Move the subscription: pause, resume or cancel, as the domain's transitions allow.
#[utoipa::path(
    tag = "Dashboard",
    params(
        ("companyId" = String, Path, description = "The team's company id"),
        ("uid" = String, Path, description = "The subscription's `uid`"),
    ),
    request_body(content = SubscriptionStatusForm, content_type = "application/x-www-form-urlencoded"),
    security((), ("session" = [])),
    responses(
        (status = 400, description = "A malformed form or an unknown status (HTML)", content_type = "text/html", body = String),
        ChangeRefusals,
        (status = 409, description = "A move the subscription's status does not allow: the page with the reason (HTML)", content_type = "text/html", body = String),
    )
)]
#[post("/dashboard/{companyId}/subscriptions/{uid}/status")]
pub async fn set_subscription_status(v: Visit, body: FormBody) -> Result<HttpResponse, ApiError> {
    let raw = v.req.match_info().get("uid").unwrap_or("").to_owned();
    let back = subscription_path(&v.company, &raw);
    flow::post(
        v,
        body,
        back.clone(),
        |f: &SubscriptionStatusForm| f.csrf_token.as_deref(),
        move |p, m, f| {
            let uid = match uid_of(&raw) {
                Ok(u) => u,
                Err(r) => return Ok(Done::Refused(r)),
            };
            let Some(to) = f.status.as_deref().and_then(SubscriptionStatus::parse) else {
                return Ok(Done::Refused(Refused::BadForm(
                    "status must be active, paused, overdue or cancelled".into(),
                )));
            };
            match p
                .subscriptions()
                .set_subscription_status(&m.principal, &uid, to)
            {
                Ok(_) => Ok(Done::Back(back)),
                Err(e) => refused_change(e, &back, |why| gather(p, m, &raw, Some(why))),
            }
        },
        render,
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_domains_moves_are_offered() {
        let to = |from| moves(from).into_iter().map(|m| m.to).collect::<Vec<_>>();
        assert_eq!(to(SubscriptionStatus::Active), ["paused", "cancelled"]);
        assert_eq!(to(SubscriptionStatus::Overdue), ["paused", "cancelled"]);
        assert_eq!(to(SubscriptionStatus::Paused), ["active", "cancelled"]);
        assert!(to(SubscriptionStatus::Cancelled).is_empty());
    }
}
