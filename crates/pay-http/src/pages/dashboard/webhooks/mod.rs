//! The dashboard's Webhooks screen: the company payment callback (its URL saved, its signing
//! secret rotated; a secret appears once, in the answer that issued it, never again), the
//! health of the team's endpoints (the circuit that pauses a failing one), a test event, and
//! the delivery log with the JSON log's filters (`limit`, `paymentLinkUid`, `deliveryStatus`,
//! `search`, read by the same reader); each delivery's page (`deliveries`) has its request,
//! every attempt's answer, and resend. The same webhook service calls as the JSON routes.
//! The callback is an owner's or admin's: a read-only member sees the log and the endpoints'
//! health, no control, and each POST answers them 403.

pub mod deliveries;
mod view;

use actix_web::http::StatusCode;
use actix_web::{get, post, web, HttpRequest, HttpResponse};
use pay_domain::app::Pay;
use pay_domain::webhooks::{CallbackKind, WebhookError};
use serde::Deserialize;
use utoipa::ToSchema;

use super::screen::{change, denied, Answer};
use super::{
    blocking, member, session_token, ChangeRefusals, CsrfForm, Refused, Visit, DASHBOARD_PATH,
};
use crate::edge::error::ApiError;
use crate::edge::form::FormBody;
use crate::HttpConfig;
use view::{screen, Extras};

/// The callback form.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CallbackForm {
    pub csrf_token: Option<String>,
    /// The company payment callback: https, no user info, a public address.
    pub url: Option<String>,
}

/// The test-event form.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TestEventForm {
    pub csrf_token: Option<String>,
    /// One of the team's payment links: the event is about it.
    pub payment_link_uid: Option<String>,
}

pub(crate) fn page_path(company: &str) -> String {
    format!("{DASHBOARD_PATH}/{company}/webhooks")
}

/// A webhook refusal as a page; a field's refusal is the caller's to show on its form.
pub(crate) fn refusal(e: WebhookError, back: &str) -> Result<Refused, ApiError> {
    match e {
        WebhookError::Denied(d) => Ok(denied(d, back)),
        WebhookError::NotFound(_) => Ok(Refused::NotFound),
        WebhookError::Invalid(f) => Ok(Refused::BadForm(f.message)),
        other => Err(other.into()),
    }
}

/// The team's Webhooks screen (HTML); the query filters the delivery log as the JSON log's.
#[utoipa::path(
    tag = "Dashboard",
    params(
        ("companyId" = String, Path, description = "The team's company id"),
        ("limit" = Option<String>, Query, description = "1 to 200, default 50 (another value: the screen with the reason, 400, once signed in)"),
        ("paymentLinkUid" = Option<String>, Query),
        ("deliveryStatus" = Option<String>, Query, description = "`pending`, `retrying`, `succeeded` or `failed` (another value: the screen with the reason, 400, once signed in)"),
        ("search" = Option<String>, Query, description = "A delivery id, event name, link uid or order id"),
    ),
    security((), ("session" = [])),
    responses(
        (status = 200, description = "The callback, the endpoints' health and the delivery log (HTML)", content_type = "text/html", body = String),
        (status = 303, description = "Not signed in: to `/signin` with `return_to`"),
        (status = 400, description = "A refused filter: the screen with the reason (HTML)", content_type = "text/html", body = String),
        (status = 404, description = "Unknown company, or one the user is not a member of (HTML)", content_type = "text/html", body = String),
    )
)]
#[get("/dashboard/{companyId}/webhooks")]
pub async fn webhooks_page(
    pay: web::Data<Pay>,
    config: web::Data<HttpConfig>,
    req: HttpRequest,
    company: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let company = company.into_inner();
    let token = session_token(&req);
    let query = req.query_string().to_owned();
    let (p, c) = (pay.clone(), config.clone());
    let answer =
        blocking(
            move || match member(&p, token.as_deref(), &company, &page_path(&company))? {
                Ok(m) => screen(&p, &c, &m, &query, Extras::default(), StatusCode::OK),
                Err(r) => Ok(Answer::Refused(r)),
            },
        )
        .await?;
    Ok(answer.respond(&pay, &config))
}

/// Save the company payment callback URL. The first save issues the signing secret, shown on
/// the answer this once; a refused URL shows the form again with the reason and the URL.
#[utoipa::path(
    tag = "Dashboard",
    params(("companyId" = String, Path, description = "The team's company id")),
    request_body(content = CallbackForm, content_type = "application/x-www-form-urlencoded"),
    security((), ("session" = [])),
    responses(
        (status = 200, description = "Saved: the screen (with the signing secret, shown once, on the first save) (HTML)", content_type = "text/html", body = String),
        (status = 400, description = "No form, one that cannot be read, or a refused URL: the form again (HTML)", content_type = "text/html", body = String),
        ChangeRefusals,
    )
)]
#[post("/dashboard/{companyId}/webhooks/callback")]
pub async fn save_callback(v: Visit, body: FormBody) -> Result<HttpResponse, ApiError> {
    let back = page_path(&v.company);
    change(
        v,
        body,
        back,
        |f: &CallbackForm| f.csrf_token.as_deref(),
        |p, c, m, f| {
            let url = f.url.unwrap_or_default().trim().to_owned();
            let back = page_path(&m.principal.company_id.to_string());
            let saved = p.webhooks().put_company_callback(
                &m.signed_in,
                m.principal.company_id,
                CallbackKind::CompanyPayment,
                &url,
            );
            let extras = match saved {
                Ok((_, secret)) => Extras {
                    secret: secret.map(|s| s.expose().to_owned()),
                    notice: Some("The callback URL is saved.".into()),
                    ..Extras::default()
                },
                Err(WebhookError::Invalid(field)) => Extras {
                    url_value: Some(url),
                    url_error: Some(field.message),
                    ..Extras::default()
                },
                Err(e) => return Ok(Answer::Refused(refusal(e, &back)?)),
            };
            let status = if extras.url_error.is_some() {
                StatusCode::BAD_REQUEST
            } else {
                StatusCode::OK
            };
            screen(p, c, &m, "", extras, status)
        },
    )
    .await
}

/// Issue a new signing secret for the company payment callback, shown on the answer this
/// once; the previous one keeps signing beside it for 24 hours.
#[utoipa::path(
    tag = "Dashboard",
    params(("companyId" = String, Path, description = "The team's company id")),
    request_body(content = CsrfForm, content_type = "application/x-www-form-urlencoded"),
    security((), ("session" = [])),
    responses(
        (status = 200, description = "The screen with the new secret, shown once (HTML)", content_type = "text/html", body = String),
        (status = 400, description = "No form, or one that cannot be read (HTML)", content_type = "text/html", body = String),
        ChangeRefusals,
    )
)]
#[post("/dashboard/{companyId}/webhooks/rotate-secret")]
pub async fn rotate_secret(v: Visit, body: FormBody) -> Result<HttpResponse, ApiError> {
    let back = page_path(&v.company);
    change(
        v,
        body,
        back,
        |f: &CsrfForm| f.csrf_token.as_deref(), |p, c, m, _| {
        let back = page_path(&m.principal.company_id.to_string());
        match p.webhooks().rotate_company_callback_secret(
            &m.signed_in,
            m.principal.company_id,
            CallbackKind::CompanyPayment,
        ) {
            Ok((_, secret)) => {
                let extras = Extras {
                    secret: Some(secret.expose().to_owned()),
                    notice: Some(
                        "A new signing secret is issued; the previous one keeps signing beside it for 24 hours."
                            .into(),
                    ),
                    ..Extras::default()
                };
                screen(p, c, &m, "", extras, StatusCode::OK)
            }
            Err(e) => Ok(Answer::Refused(refusal(e, &back)?)),
        }
    })
    .await
}

/// Queue a `pay.webhook.test` event about one of the team's links to its callback.
#[utoipa::path(
    tag = "Dashboard",
    params(("companyId" = String, Path, description = "The team's company id")),
    request_body(content = TestEventForm, content_type = "application/x-www-form-urlencoded"),
    security((), ("session" = [])),
    responses(
        (status = 202, description = "Queued: the screen, the test delivery in the log (HTML)", content_type = "text/html", body = String),
        (status = 400, description = "No form, one that cannot be read, or no callback set: the form again (HTML)", content_type = "text/html", body = String),
        ChangeRefusals,
    )
)]
#[post("/dashboard/{companyId}/webhooks/test")]
pub async fn test_event(v: Visit, body: FormBody) -> Result<HttpResponse, ApiError> {
    let back = page_path(&v.company);
    change(
        v,
        body,
        back,
        |f: &TestEventForm| f.csrf_token.as_deref(),
        |p, c, m, f| {
            let back = page_path(&m.principal.company_id.to_string());
            let typed = f.payment_link_uid.unwrap_or_default().trim().to_owned();
            let Ok(uid) = crate::edge::link_uid(&typed) else {
                return Ok(Answer::Refused(Refused::NotFound));
            };
            let (extras, status) = match p.webhooks().send_test_event(&m.principal, &uid) {
                Ok(sent) => (
                    Extras {
                        notice: Some(format!(
                            "A test event is queued ({} deliver{}).",
                            sent.len(),
                            if sent.len() == 1 { "y" } else { "ies" }
                        )),
                        ..Extras::default()
                    },
                    StatusCode::ACCEPTED,
                ),
                Err(WebhookError::Invalid(field)) => (
                    Extras {
                        test_link: typed,
                        test_error: Some(field.message),
                        ..Extras::default()
                    },
                    StatusCode::BAD_REQUEST,
                ),
                Err(e) => return Ok(Answer::Refused(refusal(e, &back)?)),
            };
            screen(p, c, &m, "", extras, status)
        },
    )
    .await
}
