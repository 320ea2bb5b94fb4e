//! The hosted checkout page at a link's `publicUrl` (`/pay/{uid}`): server-rendered HTML for
//! payers, built on the same use cases as the JSON Checkout API. It works without JavaScript:
//! every action is an HTML form posted to a page route that answers 303 to
//! `/pay/{uid}?session={id}`; the inline script only polls the session, runs countdowns, copies
//! and redirects. Each response carries a strict CSP whose nonce admits the one inline style and
//! script.

pub mod cache;
pub mod forms;
pub mod qr;
pub mod render;

use actix_web::http::{header, StatusCode};
use actix_web::{get, post, web, HttpRequest, HttpResponse};
use pay_domain::app::Pay;
use pay_domain::checkout::CheckoutView;
use pay_domain::checkout::{CheckoutError, PaymentSession};
use pay_domain::kernel::error::{FieldError, NotFound};
use pay_domain::kernel::ids::{CompanyId, LinkUid, PaymentSessionId};

use crate::edge::credentials::blocking;
use crate::edge::error::ApiError;
use crate::edge::form::{decode_form, FormBody, FormError};
use crate::edge::{link_uid, session_id};
use render::{Ctx, Problem, Screen};

/// Length of the per-response CSP nonce (alphanumeric, about 131 bits).
const NONCE_LEN: usize = 22;
/// Remembers, per link (its path), the session this browser paid with, so that opening the
/// link again shows that payment (what is still due) instead of a new start; a browser
/// without it is told a payment is under way and shown nothing of it.
const PAYMENT_COOKIE: &str = "pay_payment";
/// How long a browser remembers its payment of a link.
const PAYMENT_COOKIE_DAYS: i64 = 30;

/// The payment cookie of the link `uid` naming `session`: HttpOnly, SameSite=Lax, on the
/// link's path only, `Secure` when the public pay URL is https.
fn payment_cookie(pay: &Pay, uid: &str, session: &str) -> actix_web::cookie::Cookie<'static> {
    actix_web::cookie::Cookie::build(PAYMENT_COOKIE, session.to_owned())
        .path(format!("{}/pay/{uid}", path_prefix(pay.public_pay_url())))
        .http_only(true)
        .same_site(actix_web::cookie::SameSite::Lax)
        .secure(pay.public_pay_url().starts_with("https://"))
        .max_age(actix_web::cookie::time::Duration::days(PAYMENT_COOKIE_DAYS))
        .finish()
}

/// The session this browser remembers for the link it asked for, if any.
fn remembered(req: &HttpRequest) -> Option<String> {
    req.cookie(PAYMENT_COOKIE).map(|c| c.value().to_owned())
}

/// The page of a payment under way on the link (`PaymentUnderWay`): this browser's own is
/// shown (303 to it); any other browser gets the clear page without it.
fn under_way_page(
    page: &Page,
    view: &CheckoutView,
    u: &pay_domain::checkout::PaymentUnderWay,
    remembered: Option<&str>,
    status: StatusCode,
) -> HttpResponse {
    let id = u.session.to_string();
    if remembered == Some(id.as_str()) {
        if let Some(to) = session_page(&page.prefix, &view.link.uid.to_string(), &id) {
            return see_other(to);
        }
    }
    page.screen(
        status,
        view,
        &Screen::UnderWay {
            paid: u.is_paid(),
            message: None,
        },
    )
}

/// The origin (`scheme://host[:port]`) of the public pay URL: the only `Origin` a page form
/// may come from.
pub fn public_origin(public_pay_url: &str) -> Option<String> {
    let url = url::Url::parse(public_pay_url).ok()?;
    url.host_str()?;
    Some(url.origin().ascii_serialization())
}

/// The path of the public pay URL without its trailing slash (`""` at the root): the page
/// links its forms and the script its API calls under it, so a service behind a path prefix
/// still works.
pub fn path_prefix(public_pay_url: &str) -> String {
    url::Url::parse(public_pay_url)
        .map(|u| u.path().trim_end_matches('/').to_owned())
        .unwrap_or_default()
}

/// Whether a form post may proceed: no `Origin` (older browsers, non-browser clients) or
/// exactly the public origin. `null`, several values or another site's origin are refused.
pub(crate) fn origin_allowed(public_pay_url: &str, req: &HttpRequest) -> bool {
    matches!(form_origin(public_pay_url, req), FormOrigin::Ours)
}

/// A form post's `Origin`, sorted before anything is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FormOrigin {
    /// None sent (older browsers, non-browser clients) or exactly the public origin.
    Ours,
    /// `https://{host}` of another host: allowed only for a page of a company whose verified
    /// payment-link domain `host` is.
    OtherHost(String),
    /// `null`, several values, an unreadable value, or any other origin.
    Refused,
}

pub(crate) fn form_origin(public_pay_url: &str, req: &HttpRequest) -> FormOrigin {
    let mut all = req.headers().get_all(header::ORIGIN);
    let Some(first) = all.next() else {
        return FormOrigin::Ours;
    };
    if all.next().is_some() {
        return FormOrigin::Refused;
    }
    let Ok(given) = first.to_str() else {
        return FormOrigin::Refused;
    };
    if public_origin(public_pay_url).is_some_and(|p| given.eq_ignore_ascii_case(&p)) {
        return FormOrigin::Ours;
    }
    // A verified domain is served over https on the default port, at its root.
    match url::Url::parse(given) {
        Ok(u)
            if u.scheme() == "https"
                && u.port().is_none()
                && u.origin().ascii_serialization().eq_ignore_ascii_case(given) =>
        {
            match u.host() {
                Some(url::Host::Domain(h)) => FormOrigin::OtherHost(h.to_ascii_lowercase()),
                _ => FormOrigin::Refused,
            }
        }
        _ => FormOrigin::Refused,
    }
}

impl FormOrigin {
    /// Whether a post to a page of `company` may proceed: a store read only for another host.
    pub(crate) fn allowed_for(&self, pay: &Pay, company: CompanyId) -> Result<bool, ApiError> {
        match self {
            FormOrigin::Ours => Ok(true),
            FormOrigin::Refused => Ok(false),
            FormOrigin::OtherHost(host) => Ok(pay.tenancy().pays_on(company, host)?),
        }
    }
}

/// The Content-Security-Policy of a page: nothing but the nonce'd inline style and script,
/// same-origin fetches and form posts, images from here, `data:` and the logo's origin.
pub fn csp(nonce: &str, logo_origin: Option<&str>) -> String {
    csp_with_form_target(nonce, logo_origin, None)
}

/// `csp`, with form posts also allowed to end at `form_origin`: browsers apply `form-action`
/// to the redirects a post answers with too, so the OAuth consent form, answered by 303 to the
/// application's redirect URI, needs that URI's origin.
pub fn csp_with_form_target(
    nonce: &str,
    logo_origin: Option<&str>,
    form_origin: Option<&str>,
) -> String {
    let logo = logo_origin.map(|o| format!(" {o}")).unwrap_or_default();
    let form = form_origin.map(|o| format!(" {o}")).unwrap_or_default();
    format!(
        "default-src 'none'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; \
         img-src 'self' data:{logo}; connect-src 'self'; form-action 'self'{form}; \
         frame-ancestors 'none'; base-uri 'none'"
    )
}

/// What a page says about a form it could not read: status, heading and message (the
/// checkout's and the portal's pages).
pub(crate) fn form_problem(e: &FormError) -> (StatusCode, &'static str, &str) {
    match e {
        FormError::NotAForm => (
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "This is not a form submission",
            "Send the form as application/x-www-form-urlencoded.",
        ),
        FormError::TooLarge => (
            StatusCode::PAYLOAD_TOO_LARGE,
            "The form is too large",
            "The form body is larger than this page accepts.",
        ),
        FormError::Malformed(why) => (StatusCode::BAD_REQUEST, "The form could not be read", why),
    }
}

/// A rendered page with its security headers (the checkout's and the portal's).
pub(crate) fn respond(
    status: StatusCode,
    nonce: &str,
    logo_origin: Option<&str>,
    html: String,
) -> HttpResponse {
    HttpResponse::build(status)
        .insert_header((header::CONTENT_TYPE, "text/html; charset=utf-8"))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        // `same-origin`, not `no-referrer`: nothing reaches other origins either way, but under
        // `no-referrer` browsers send `Origin: null` with the page's own form posts, and the
        // origin check below could not tell them from another site's.
        .insert_header((header::REFERRER_POLICY, "same-origin"))
        .insert_header((header::CONTENT_SECURITY_POLICY, csp(nonce, logo_origin)))
        .body(html)
}

/// Per-request rendering state.
struct Page {
    nonce: String,
    prefix: String,
    now: pay_domain::kernel::timestamp::Timestamp,
}

impl Page {
    fn new(pay: &Pay) -> Page {
        Self::with_nonce(pay, pay.random_alphanumeric(NONCE_LEN))
    }

    fn with_nonce(pay: &Pay, nonce: String) -> Page {
        Page {
            nonce,
            prefix: path_prefix(pay.public_pay_url()),
            now: pay.now(),
        }
    }

    /// A screen's HTML and its logo origin, for the micro-cache.
    fn render(&self, view: &CheckoutView, screen: &Screen<'_>) -> (String, Option<String>) {
        let origin = view.logo_url.as_deref().and_then(render::logo_origin);
        let logo = origin.as_ref().and(view.logo_url.as_deref());
        (
            render::page(self.ctx(Some(view)), view, screen, logo),
            origin,
        )
    }

    /// Countdowns read the link's company clock (the view's); pages without a link, real time.
    fn ctx(&self, view: Option<&CheckoutView>) -> Ctx<'_> {
        Ctx {
            nonce: &self.nonce,
            prefix: &self.prefix,
            now: view.map_or(self.now, |v| v.now),
        }
    }

    fn screen(&self, status: StatusCode, view: &CheckoutView, screen: &Screen<'_>) -> HttpResponse {
        let origin = view.logo_url.as_deref().and_then(render::logo_origin);
        let logo = origin.as_ref().and(view.logo_url.as_deref());
        let html = render::page(self.ctx(Some(view)), view, screen, logo);
        respond(status, &self.nonce, origin.as_deref(), html)
    }

    /// A session's page, its pay asset looked up in the catalogue.
    fn session(
        &self,
        status: StatusCode,
        pay: &Pay,
        view: &CheckoutView,
        session: &PaymentSession,
        error: Option<&str>,
    ) -> HttpResponse {
        let screen = Screen::Session {
            session,
            asset: pay.settings().asset(&session.selected_sell_asset),
            error,
            confirmations: pay
                .checkout()
                .required_confirmations(&session.selected_sell_asset),
        };
        self.screen(status, view, &screen)
    }

    fn problem(
        &self,
        status: StatusCode,
        heading: &str,
        message: &str,
        view: Option<&CheckoutView>,
    ) -> HttpResponse {
        let html = render::problem(self.ctx(view), &Problem { heading, message }, view);
        respond(status, &self.nonce, None, html)
    }

    /// The page for an error of the domain or the edge.
    fn error(&self, e: &ApiError, view: Option<&CheckoutView>) -> HttpResponse {
        let (status, _, message, _) = e.parts();
        match e {
            ApiError::NotFound(NotFound { kind }) if *kind == "Payment session" => self
                .problem(
                    status,
                    "Payment not found",
                    "This payment does not exist or belongs to another link.",
                    view,
                ),
            ApiError::NotFound(_) => self.problem(
                status,
                "Payment link not found",
                "Check the link you were given, or ask the merchant for a new one.",
                None,
            ),
            ApiError::StartBlocked(_) => self.problem(
                status,
                "Payments are not possible right now",
                "The merchant cannot receive this payment at the moment. Please try again later or contact them.",
                view,
            ),
            _ if status.is_server_error() => self.problem(
                status,
                "Something went wrong",
                "Please try again in a moment.",
                view,
            ),
            _ => self.problem(status, "This did not work", &message, view),
        }
    }

    fn form_error(&self, e: &FormError) -> HttpResponse {
        let (status, heading, message) = form_problem(e);
        self.problem(status, heading, message, None)
    }

    fn foreign_origin(&self) -> HttpResponse {
        self.problem(
            StatusCode::FORBIDDEN,
            "This form came from another site",
            "Payment forms are only accepted from this payment page. Open the payment link again and use the page itself.",
            None,
        )
    }
}

fn see_other(location: String) -> HttpResponse {
    HttpResponse::SeeOther()
        .insert_header((header::LOCATION, location))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .finish()
}

/// `{prefix}/pay/{uid}?session={id}`, from ids the domain accepted.
fn session_page(prefix: &str, uid: &str, session: &str) -> Option<String> {
    let uid = LinkUid::parse(uid)?;
    let id = PaymentSessionId::parse(session)?;
    Some(format!("{prefix}/pay/{uid}?session={id}"))
}

/// The value of `session` in the query string, if any.
fn session_param(req: &HttpRequest) -> Option<String> {
    decode_form(req.query_string().as_bytes())
        .ok()?
        .into_iter()
        .find(|(k, _)| k == "session")
        .map(|(_, v)| v)
}

/// Exactly the named fields, each at most once; anything else is refused by name.
pub(crate) fn fields(
    form: Vec<(String, String)>,
    allowed: &[&str],
) -> Result<Vec<(String, String)>, String> {
    let mut seen: Vec<&str> = Vec::new();
    for (k, _) in &form {
        if !allowed.contains(&k.as_str()) {
            return Err(format!(
                "The form has a field this page does not take: {k}."
            ));
        }
        if seen.contains(&k.as_str()) {
            return Err(format!("The form repeats the field {k}."));
        }
        seen.push(k);
    }
    Ok(form)
}

pub(crate) fn field(form: &[(String, String)], name: &str) -> Option<String> {
    form.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
}

/// The hosted checkout: choose an asset, or `?session=` one payer's session in any state.
#[utoipa::path(
    tag = "Hosted checkout",
    params(
        ("uid" = String, Path, description = "Public link identifier"),
        ("session" = Option<String>, Query, description = "A payer's session to show"),
    ),
    responses(
        (status = 200, description = "The page: choose an asset, a session in any state, or a clear page for a paused, archived or expired link, or for a link holding a payment under way (another browser's, or a one-time link already paid)", content_type = "text/html", body = String),
        (status = 303, description = "Without `session`: to this browser's own payment under way on the link (remembered by the `pay_payment` cookie), what is still due shown there", headers(("Location" = String, description = "/pay/{uid}?session={id}"))),
        (status = 404, description = "Unknown link or session (HTML page)", content_type = "text/html", body = String),
    )
)]
#[get("/pay/{uid}")]
pub async fn checkout_page(
    pay: web::Data<Pay>,
    cache: web::Data<cache::PageCache>,
    links_epoch: web::Data<cache::LinkEpoch>,
    req: HttpRequest,
    uid: web::Path<String>,
) -> HttpResponse {
    let uid = uid.into_inner();
    let session = session_param(&req);
    let remembered = remembered(&req);
    // A browser that paid through the link may be shown its payment: never the shared screen.
    if session.is_none() && remembered.is_none() {
        let nonce = pay.random_alphanumeric(NONCE_LEN);
        let now = std::time::Instant::now();
        if let Some(hit) = cache.get(&uid, &nonce, now, links_epoch.get()) {
            return respond(hit.status, &nonce, hit.logo_origin.as_deref(), hit.html);
        }
    }
    let page = Page::new(&pay);
    let epoch = links_epoch.get();
    let p = pay.clone();
    let key = uid.clone();
    let result = blocking(move || {
        let uid = link_uid(&uid)?;
        let view = p.checkout().checkout_view(&uid)?;
        let under_way = match session {
            None => p.checkout().payment_under_way(&uid)?,
            Some(_) => None,
        };
        let s = session.map(|id| {
            let id = session_id(&id)?;
            Ok(p.checkout().checkout_session(&uid, id)?)
        });
        Ok((view, s, under_way))
    })
    .await;
    let (view, session, under_way) = match result {
        Ok(found) => found,
        Err(e) => return page.error(&e, None),
    };
    match session {
        Some(Ok(s)) => {
            // Whoever holds the session's page is its payer: this browser remembers it.
            let mut res = page.session(StatusCode::OK, &pay, &view, &s, None);
            let _ = res.add_cookie(&payment_cookie(&pay, &key, &s.id.to_string()));
            res
        }
        Some(Err(e)) => page.error(&e, Some(&view)),
        None => {
            if let Some(u) = under_way {
                return under_way_page(&page, &view, &u, remembered.as_deref(), StatusCode::OK);
            }
            let screen = if view.state.takes_payments() {
                Screen::Choose { error: None }
            } else {
                Screen::Inactive { message: None }
            };
            // Rendered once with the cache's marker for the nonce, served with this one.
            let template = Page::with_nonce(&pay, cache.marker.clone());
            let (html, origin) = template.render(&view, &screen);
            let mut until = std::time::Instant::now() + cache::TTL;
            if let Some(expires) = view.link.expires_at {
                let left = expires.unix_millis() - view.now.unix_millis();
                let left = std::time::Duration::from_millis(u64::try_from(left).unwrap_or(0));
                until = until.min(std::time::Instant::now() + left);
            }
            let body = html.replace(&cache.marker, &page.nonce);
            cache.put(
                key,
                cache::Rendered {
                    status: StatusCode::OK,
                    html,
                    logo_origin: origin.clone(),
                    until,
                    epoch,
                },
            );
            respond(StatusCode::OK, &page.nonce, origin.as_deref(), body)
        }
    }
}

mod actions;
#[cfg(test)]
mod tests;
pub use actions::*;
