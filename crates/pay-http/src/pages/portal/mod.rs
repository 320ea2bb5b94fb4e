//! The customer portal at the signed URL (`/portal?company=&customer=&expires=&signature=`):
//! server-rendered like the hosted checkout (the same CSP with a fresh nonce, no third-party
//! origin, no script). A refused URL (expired, tampered, another customer's or company's) is a
//! 403 page before anything of the portal is read. The page shows the customer's
//! subscriptions with their cycles, open invoices with a pay button to the hosted checkout and
//! the paid history; its forms rename the customer and pause, resume or cancel a subscription,
//! each carrying the token bound to the signed URL, and answer 303 back to the portal.

pub mod forms;
pub mod render;

use actix_web::http::{header, StatusCode};
use actix_web::{get, post, web, HttpRequest, HttpResponse};
use pay_domain::app::Pay;
use pay_domain::customers::portal::PortalParams;
use pay_domain::kernel::ids::CompanyId;
use pay_domain::subscriptions::SubscriptionStatus;

use crate::edge::credentials::blocking;
use crate::edge::error::ApiError;
use crate::edge::form::{decode_form, read_page_form, FormBody, FormError, FormProblem};
use crate::pages::checkout::{
    field, fields, form_origin, form_problem, path_prefix, respond, FormOrigin,
};
use crate::pages::portal::forms::{PortalForm, RenameForm, StatusForm};
use render::Ctx;

const NONCE_LEN: usize = 22;
/// The signed URL's parameters (`grant` and `access` only on a URL an OAuth grant minted).
const SIGNED: [&str; 6] = [
    "company",
    "customer",
    "expires",
    "signature",
    "grant",
    "access",
];

/// Per-request rendering state.
struct Page {
    nonce: String,
    prefix: String,
}

impl Page {
    fn new(pay: &Pay) -> Page {
        Page {
            nonce: pay.random_alphanumeric(NONCE_LEN),
            prefix: path_prefix(pay.public_pay_url()),
        }
    }

    fn ctx(&self) -> Ctx<'_> {
        Ctx {
            nonce: &self.nonce,
            prefix: &self.prefix,
        }
    }

    fn respond(&self, status: StatusCode, html: String) -> HttpResponse {
        respond(status, &self.nonce, None, html)
    }

    fn problem(
        &self,
        status: StatusCode,
        heading: &str,
        message: &str,
        back: Option<&PortalParams>,
    ) -> HttpResponse {
        let back = back.map(|p| render::portal_href(&self.prefix, p));
        self.respond(
            status,
            render::problem(self.ctx(), heading, message, back.as_deref()),
        )
    }

    /// A form another site sent.
    fn foreign(&self) -> HttpResponse {
        self.problem(
            StatusCode::FORBIDDEN,
            "This form came from another site",
            "Portal forms are only accepted from the portal page itself.",
            None,
        )
    }

    fn refused(&self) -> HttpResponse {
        self.problem(
            StatusCode::FORBIDDEN,
            "This link is invalid or has expired",
            "Portal links work for 24 hours. Ask the merchant for a new link to your subscriptions.",
            None,
        )
    }

    /// The page of a refused use case: a refused URL or form token is the 403 page; anything
    /// else says what happened, with a way back to the portal.
    fn error(&self, e: &ApiError, back: &PortalParams) -> HttpResponse {
        let (status, _, message, _) = e.parts();
        match e {
            ApiError::PortalRefused(_) => self.refused(),
            // A URL whose minter may not change subscriptions (docs/subscriptions.md, Portal).
            ApiError::Denied(_) => self.problem(
                StatusCode::FORBIDDEN,
                "This link cannot change subscriptions",
                "Ask the merchant to change the subscription for you, or for a link that can.",
                Some(back),
            ),
            _ if status.is_server_error() => self.problem(
                status,
                "Something went wrong",
                "Please try again in a moment.",
                Some(back),
            ),
            ApiError::NotFound(_) => self.problem(
                status,
                "Subscription not found",
                "This subscription is not one of yours.",
                Some(back),
            ),
            ApiError::SubscriptionTransition(_) => self.problem(
                status,
                "This change is not possible",
                "The subscription changed since this page was shown. Here it is as it is now.",
                Some(back),
            ),
            _ => self.problem(status, "This did not work", &message, Some(back)),
        }
    }

    fn form_error(&self, e: &FormError) -> HttpResponse {
        let (status, heading, message) = form_problem(e);
        self.problem(status, heading, message, None)
    }

    fn back(&self, p: &PortalParams, done: &str) -> HttpResponse {
        HttpResponse::SeeOther()
            .insert_header((
                header::LOCATION,
                format!("{}&done={done}", render::portal_href(&self.prefix, p)),
            ))
            .insert_header((header::CACHE_CONTROL, "no-store"))
            .finish()
    }
}

/// The signed parameters of a query or form; `None` when one is missing.
fn signed_params(form: &[(String, String)]) -> Option<PortalParams> {
    Some(PortalParams {
        company: field(form, "company")?,
        customer: field(form, "customer")?,
        expires: field(form, "expires")?,
        signature: field(form, "signature")?,
        grant: field(form, "grant"),
        access: field(form, "access"),
    })
}

/// A posted form: the origin checked, read by its struct `F` (exactly the signed parameters,
/// `token` and its value, each once). An absent value is the empty one, as the domain then
/// says; without the signed parameters or the token nothing can be checked: refused as a bad
/// URL.
fn read_form<F: PortalForm>(
    pay: &Pay,
    page: &Page,
    req: &HttpRequest,
    body: FormBody,
) -> Result<PostedForm, Box<HttpResponse>> {
    let origin = form_origin(pay.public_pay_url(), req);
    if origin == FormOrigin::Refused {
        return Err(Box::new(page.foreign()));
    }
    let mut form = body.0.map_err(|e| Box::new(page.form_error(&e)))?;
    if !form.iter().any(|(k, _)| k == F::VALUE) {
        form.push((F::VALUE.to_owned(), String::new()));
    }
    let (params, token, value) = match read_page_form::<F>(&form) {
        Ok(f) => f.into_parts(),
        Err(FormProblem::Missing(_)) => return Err(Box::new(page.refused())),
        Err(why) => {
            return Err(Box::new(page.problem(
                StatusCode::BAD_REQUEST,
                "The form could not be read",
                &why.page_message(),
                None,
            )))
        }
    };
    Ok(PostedForm {
        origin,
        params,
        token,
        value,
    })
}

/// A portal form as `read_form` read it.
struct PostedForm {
    origin: FormOrigin,
    params: PortalParams,
    token: String,
    value: String,
}

impl PostedForm {
    /// Whether the post may proceed: from the public origin, or from the verified domain of the
    /// company the signed parameters name (an unreadable company is refused with them later).
    fn origin_allowed(&self, pay: &Pay) -> Result<bool, ApiError> {
        match CompanyId::parse(&self.params.company) {
            Some(company) => self.origin.allowed_for(pay, company),
            None => Ok(self.origin == FormOrigin::Ours),
        }
    }
}

/// The customer portal of a signed URL.
#[utoipa::path(
    tag = "Customer portal",
    params(
        ("company" = String, Query, description = "Company account id"),
        ("customer" = String, Query, description = "Customer uid"),
        ("expires" = String, Query, description = "Unix seconds; at most 24 hours ahead"),
        ("signature" = String, Query, description = "Hex HMAC-SHA256 over `v1:{company}:{customer}:{expires}`"),
        ("grant" = Option<String>, Query, description = "On a URL an OAuth grant minted (with `access`): the grant, whose own subscriptions alone the page reaches"),
        ("access" = Option<String>, Query, description = "With `grant`: `read-write`, `read`, `write` or `none`, what the page may do with those subscriptions (the minting token's subscription scopes)"),
        ("done" = Option<String>, Query, description = "Set by the page's own forms: what was just done"),
    ),
    responses(
        (status = 200, description = "The customer's subscriptions, open invoices and paid history (HTML)", content_type = "text/html", body = String),
        (status = 403, description = "Expired, tampered, another customer's or another company's URL: nothing is read (HTML)", content_type = "text/html", body = String),
    )
)]
#[get("/portal")]
pub async fn portal_page(pay: web::Data<Pay>, req: HttpRequest) -> HttpResponse {
    let page = Page::new(&pay);
    let query = decode_form(req.query_string().as_bytes())
        .ok()
        .and_then(|q| {
            let names = [
                SIGNED[0], SIGNED[1], SIGNED[2], SIGNED[3], SIGNED[4], SIGNED[5], "done",
            ];
            fields(q, &names).ok()
        });
    let Some(query) = query else {
        return page.refused();
    };
    let Some(params) = signed_params(&query) else {
        return page.refused();
    };
    let done = field(&query, "done");
    let p = pay.clone();
    let q = params.clone();
    let view = match blocking(move || Ok(p.subscriptions().portal(&q)?)).await {
        Ok(v) => v,
        Err(ApiError::PortalRefused(_)) => return page.refused(),
        Err(e) => return page.error(&e, &params),
    };
    let notice = done.as_deref().and_then(render::notice_words);
    let html = render::portal(page.ctx(), &view, &params, notice, &|c| {
        pay.subscriptions().payment_url(c)
    });
    page.respond(StatusCode::OK, html)
}

/// Renames the customer (`clientId` stays read-only); 303 back to the portal.
#[utoipa::path(
    tag = "Customer portal",
    request_body(content_type = "application/x-www-form-urlencoded", description = "The signed URL's parameters, the page's `token` and `name`", content = crate::pages::portal::forms::RenameForm),
    responses(
        (status = 303, description = "Back to the portal", headers(("Location" = String, description = "/portal?...&done=renamed"))),
        (status = 400, description = "A bad name, or a malformed form (HTML)", content_type = "text/html", body = String),
        (status = 403, description = "Refused URL or token, or another site's `Origin`; nothing is read (HTML)", content_type = "text/html", body = String),
    )
)]
#[post("/portal/name")]
pub async fn rename(pay: web::Data<Pay>, req: HttpRequest, body: FormBody) -> HttpResponse {
    let page = Page::new(&pay);
    let posted = match read_form::<RenameForm>(&pay, &page, &req, body) {
        Ok(f) => f,
        Err(res) => return *res,
    };
    let p = pay.clone();
    let params = posted.params.clone();
    let result = blocking(move || {
        if !posted.origin_allowed(&p)? {
            return Ok(false);
        }
        let access = p
            .customers()
            .open_portal_form(&posted.params, &posted.token)?;
        p.customers().rename_in_portal(&access, &posted.value)?;
        Ok(true)
    })
    .await;
    match result {
        Ok(true) => page.back(&params, "renamed"),
        Ok(false) => page.foreign(),
        Err(e) => page.error(&e, &params),
    }
}

/// Pauses, resumes or cancels one of the customer's own subscriptions (one
/// `pay.subscription.status_changed` webhook each, reason `customer_*`); 303 back.
#[utoipa::path(
    tag = "Customer portal",
    params(("uid" = String, Path, description = "The subscription's uid")),
    request_body(content_type = "application/x-www-form-urlencoded", description = "The signed URL's parameters, the page's `token` and `status` (`paused`, `active` or `cancelled`)", content = crate::pages::portal::forms::StatusForm),
    responses(
        (status = 303, description = "Back to the portal", headers(("Location" = String, description = "/portal?...&done={status}"))),
        (status = 400, description = "A malformed form or status (HTML)", content_type = "text/html", body = String),
        (status = 403, description = "Refused URL or token, another site's `Origin`, or a URL whose minter may not change subscriptions (HTML)", content_type = "text/html", body = String),
        (status = 404, description = "Not one of this customer's subscriptions, or not one the URL's grant created (HTML)", content_type = "text/html", body = String),
        (status = 409, description = "A move the subscription's status does not allow (HTML)", content_type = "text/html", body = String),
    )
)]
#[post("/portal/subscriptions/{uid}/status")]
pub async fn set_status(
    pay: web::Data<Pay>,
    req: HttpRequest,
    uid: web::Path<String>,
    body: FormBody,
) -> HttpResponse {
    let page = Page::new(&pay);
    let posted = match read_form::<StatusForm>(&pay, &page, &req, body) {
        Ok(f) => f,
        Err(res) => return *res,
    };
    let params = posted.params.clone();
    let Some(to) = SubscriptionStatus::parse(&posted.value) else {
        return page.problem(
            StatusCode::BAD_REQUEST,
            "This did not work",
            "status must be paused, active or cancelled",
            Some(&params),
        );
    };
    let p = pay.clone();
    let uid = uid.into_inner();
    let result = blocking(move || {
        if !posted.origin_allowed(&p)? {
            return Ok(false);
        }
        let uid = crate::edge::subscription_uid(&uid)?;
        p.subscriptions()
            .portal_set_status(&posted.params, &posted.token, &uid, to)?;
        Ok(true)
    })
    .await;
    match result {
        Ok(true) => page.back(&params, to.as_str()),
        Ok(false) => page.foreign(),
        Err(e) => page.error(&e, &params),
    }
}

#[cfg(test)]
mod tests;
