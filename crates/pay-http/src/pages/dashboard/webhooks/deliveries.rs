//! One delivery of the log: its request (the URL and the exact body, signed byte for byte),
//! every attempt with its answer (status, duration, error, the start of the response body),
//! and resend (a new delivery of the same event, origin `manual`). Another team's delivery,
//! or an id that names none, is 404.

use actix_web::http::StatusCode;
use actix_web::{get, post, web, HttpRequest, HttpResponse};
use askama::Template;
use pay_domain::app::Pay;

use super::view::last_answer;
use super::{page_path, refusal};
use crate::edge::error::ApiError;
use crate::edge::form::FormBody;
use crate::pages::checkout::path_prefix;
use crate::pages::dashboard::screen::{change, nonce, Answer};
use crate::pages::dashboard::{
    blocking, member, session_token, when, ChangeRefusals, CsrfForm, Frame, Refused, Visit,
};
use crate::pages::layout::Layout;
use crate::HttpConfig;

/// One attempt as shown.
struct AttemptRow {
    number: u32,
    at: String,
    answer: String,
    duration_ms: u64,
    excerpt: Option<String>,
}

#[derive(Template)]
#[template(path = "dashboard/webhook_delivery.html")]
struct DeliveryPage<'a> {
    layout: Layout<'a>,
    frame: Frame<'a>,
    can_manage: bool,
    id: String,
    event: String,
    origin: &'static str,
    status: &'static str,
    url: String,
    body: String,
    link: String,
    created: String,
    next: String,
    attempts: Vec<AttemptRow>,
}

/// One delivery with its request and attempts (HTML).
#[utoipa::path(
    tag = "Dashboard",
    params(
        ("companyId" = String, Path, description = "The team's company id"),
        ("deliveryId" = String, Path, description = "The delivery's id"),
    ),
    security((), ("session" = [])),
    responses(
        (status = 200, description = "The delivery, its request and its attempts (HTML)", content_type = "text/html", body = String),
        (status = 303, description = "Not signed in: to `/signin` with `return_to`"),
        (status = 404, description = "Unknown company or delivery, or another team's (HTML)", content_type = "text/html", body = String),
    )
)]
#[get("/dashboard/{companyId}/webhooks/deliveries/{deliveryId}")]
pub async fn delivery_page(
    pay: web::Data<Pay>,
    config: web::Data<HttpConfig>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, ApiError> {
    let (company, delivery) = path.into_inner();
    let token = session_token(&req);
    let (p, c) = (pay.clone(), config.clone());
    let answer = blocking(move || {
        let back = format!("{}/deliveries/{delivery}", page_path(&company));
        let m = match member(&p, token.as_deref(), &company, &back)? {
            Ok(m) => m,
            Err(r) => return Ok(Answer::Refused(r)),
        };
        let Ok(id) = crate::edge::delivery_id(&delivery) else {
            return Ok(Answer::Refused(Refused::NotFound));
        };
        let (d, attempts) = match p.webhooks().delivery(&m.principal, id) {
            Ok(found) => found,
            Err(e) => return Ok(Answer::Refused(refusal(e, &back)?)),
        };
        let prefix = path_prefix(&c.base_url);
        let n = nonce(&p);
        let page = DeliveryPage {
            layout: Layout::wide(&n, "Webhook delivery"),
            frame: Frame::new(&prefix, &m, "webhooks"),
            can_manage: m.can_manage,
            id: d.id.to_string(),
            event: d.event.type_name(),
            origin: d.origin.as_str(),
            status: d.status.as_str(),
            next: match d.next_attempt_at {
                Some(t) if !d.status.is_terminal() => when(t),
                _ => "none".into(),
            },
            url: d.url,
            body: d.body,
            link: d
                .payment_link_uid
                .or(d.subscription_uid)
                .unwrap_or_default(),
            created: when(d.created_at),
            attempts: attempts
                .into_iter()
                .map(|a| AttemptRow {
                    number: a.number,
                    at: when(a.at),
                    answer: last_answer(a.outcome.status, a.outcome.error.map(|e| e.as_str())),
                    duration_ms: a.outcome.duration_ms,
                    excerpt: a.outcome.response_excerpt,
                })
                .collect(),
        };
        Ok(Answer::page(StatusCode::OK, n.clone(), &page))
    })
    .await?;
    Ok(answer.respond(&pay, &config))
}

/// Resend a delivery (a new one of the same event, due now): back to the log, where it is
/// the newest.
#[utoipa::path(
    tag = "Dashboard",
    params(
        ("companyId" = String, Path, description = "The team's company id"),
        ("deliveryId" = String, Path, description = "The delivery's id"),
    ),
    request_body(content = CsrfForm, content_type = "application/x-www-form-urlencoded"),
    security((), ("session" = [])),
    responses(
        (status = 400, description = "No form, or one that cannot be read (HTML)", content_type = "text/html", body = String),
        ChangeRefusals,
    )
)]
#[post("/dashboard/{companyId}/webhooks/deliveries/{deliveryId}/resend")]
pub async fn resend(v: Visit, body: FormBody) -> Result<HttpResponse, ApiError> {
    let delivery = v
        .req
        .match_info()
        .get("deliveryId")
        .unwrap_or("")
        .to_owned();
    let back = page_path(&v.company);
    change(
        v,
        body,
        back,
        |f: &CsrfForm| f.csrf_token.as_deref(),
        move |p, _, m, _| {
            let back = page_path(&m.principal.company_id.to_string());
            let Ok(id) = crate::edge::delivery_id(&delivery) else {
                return Ok(Answer::Refused(Refused::NotFound));
            };
            match p.webhooks().resend_delivery(&m.principal, id) {
                Ok(_) => Ok(Answer::Back(back)),
                Err(e) => Ok(Answer::Refused(refusal(e, &back)?)),
            }
        },
    )
    .await
}
