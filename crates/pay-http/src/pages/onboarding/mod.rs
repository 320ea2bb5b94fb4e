//! The merchant's side of partner onboarding: `GET /onboarding/claim/{token}` shows the
//! draft (the company, the partner, the application it connects) with a sign-up form, or one
//! button for a signed-in user (the same session as every page, its CSRF token in the form);
//! `POST /onboarding/claim/{token}` (signed in) and `POST /onboarding/claim/{token}/signup`
//! (a new account) create the company with the merchant as owner, then answer 303 to the
//! application's redirect URI with `code` and `state`, or a page saying the company is ready.
//! A claimed or expired draft, or an unknown link, is a page saying so. No JavaScript.

mod render;

use actix_web::http::{header, StatusCode};
use actix_web::{get, post, web, HttpRequest, HttpResponse};
use pay_domain::app::Pay;
use pay_domain::kernel::secret::Secret;
use pay_domain::onboarding::{ClaimRefused, ClaimView, Claimed, DraftStatus, OnboardingError};
use serde::Deserialize;
use utoipa::ToSchema;

use crate::api::onboarding::CLAIM_PATH;
use crate::edge::credentials::{blocking, session_cookie, SESSION_COOKIE};
use crate::edge::error::ApiError;
use crate::edge::form::{self, FormBody};
use crate::pages::checkout::{csp_with_form_target, path_prefix};
use crate::pages::oauth::render::problem;
use crate::HttpConfig;
use render::Offer;

const NONCE_LEN: usize = 22;

/// The claim page's form (signed in).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaimForm {
    /// The session's CSRF token.
    #[schema(min_length = 1)]
    pub csrf_token: String,
}

/// The claim page's sign-up form.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SignUpForm {
    #[schema(min_length = 1)]
    pub email: String,
    /// At least 10 characters.
    #[schema(min_length = 1)]
    pub password: String,
}

impl std::fmt::Debug for SignUpForm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SignUpForm(***)")
    }
}

/// What a handler answers.
enum Answer {
    Problem(StatusCode, &'static str, String),
    Claim(Box<ClaimView>, Option<String>),
    SignUp(Box<ClaimView>, Option<String>, Option<String>, StatusCode),
    Ready(String, String),
    Redirect(String),
}

fn problem_of(heading: &'static str, message: impl Into<String>, status: StatusCode) -> Answer {
    Answer::Problem(status, heading, message.into())
}

/// A draft that cannot be claimed, an unknown link, or a fault: its page.
fn refusal(e: OnboardingError, partner: Option<&str>) -> Result<Answer, ApiError> {
    let ask = match partner {
        Some(p) => format!("Ask {p} for a new link."),
        None => "Ask whoever sent it for a new link.".into(),
    };
    Ok(match e {
        OnboardingError::NotFound(_) => problem_of(
            "Link not found",
            "This onboarding link is not valid. Check that it was copied whole.",
            StatusCode::NOT_FOUND,
        ),
        OnboardingError::Claim(ClaimRefused::Claimed) => problem_of(
            "Link already used",
            "This company was already set up with this link; it cannot be claimed again. Sign in to reach it.",
            StatusCode::CONFLICT,
        ),
        OnboardingError::Claim(ClaimRefused::Expired) => problem_of(
            "Link expired",
            format!("This onboarding link expired. {ask}"),
            StatusCode::GONE,
        ),
        other => return Err(other.into()),
    })
}

fn claim_path(prefix: &str, token: &str) -> String {
    format!("{prefix}{CLAIM_PATH}/{token}")
}

fn signin_path(prefix: &str, token: &str) -> String {
    let back = format!("{CLAIM_PATH}/{token}");
    let q = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("return_to", &back)
        .finish();
    format!("{prefix}/signin?{q}")
}

/// The origin of a redirect URI, as a CSP source (a form answered by a redirect there).
fn origin_of(uri: &str) -> Option<String> {
    let origin = url::Url::parse(uri).ok()?.origin();
    origin.is_tuple().then(|| origin.ascii_serialization())
}

fn render(pay: &Pay, config: &HttpConfig, token: &str, answer: Answer) -> HttpResponse {
    let nonce = pay.random_alphanumeric(NONCE_LEN);
    let prefix = path_prefix(&config.base_url);
    let action = claim_path(&prefix, token);
    let signin = signin_path(&prefix, token);
    let (status, body, form_origin) = match answer {
        Answer::Redirect(to) => {
            return HttpResponse::SeeOther()
                .insert_header((header::LOCATION, to))
                .insert_header((header::CACHE_CONTROL, "no-store"))
                .finish()
        }
        Answer::Problem(status, heading, message) => {
            (status, problem(&nonce, heading, &message), None)
        }
        Answer::Ready(company, partner) => (
            StatusCode::OK,
            render::ready(&nonce, &company, &partner),
            None,
        ),
        Answer::Claim(view, csrf) => {
            let origin = view.app.as_ref().and_then(|a| origin_of(&a.redirect_uri));
            let csrf = csrf.unwrap_or_default();
            let offer = Offer::Claim {
                csrf: &csrf,
                switch: &signin,
            };
            (
                StatusCode::OK,
                render::claim(&nonce, &action, &view, offer),
                origin,
            )
        }
        Answer::SignUp(view, email, error, status) => {
            let origin = view.app.as_ref().and_then(|a| origin_of(&a.redirect_uri));
            let offer = Offer::SignUp {
                signin: &signin,
                email: email.as_deref(),
                error: error.as_deref(),
            };
            (status, render::claim(&nonce, &action, &view, offer), origin)
        }
    };
    HttpResponse::build(status)
        .insert_header((header::CONTENT_TYPE, "text/html; charset=utf-8"))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        // The claim token is in the path: never sent on to another site (`no-referrer` would
        // make the browser send `Origin: null` with the forms, which are refused).
        .insert_header((header::REFERRER_POLICY, "same-origin"))
        .insert_header((
            header::CONTENT_SECURITY_POLICY,
            csp_with_form_target(&nonce, None, form_origin.as_deref()),
        ))
        .body(body)
}

/// Where a successful claim goes: the application's redirect URI with the code and state, or
/// the page saying the company is ready.
fn claimed(c: Claimed, partner: String) -> Answer {
    match c.code {
        Some(code) => match url::Url::parse(&code.redirect_uri) {
            Ok(mut url) => {
                url.query_pairs_mut()
                    .append_pair("code", code.code.expose());
                if let Some(state) = code.state.as_deref() {
                    url.query_pairs_mut().append_pair("state", state);
                }
                Answer::Redirect(url.to_string())
            }
            Err(_) => problem_of(
                "Cannot continue",
                "The application's redirect URI is invalid.",
                StatusCode::INTERNAL_SERVER_ERROR,
            ),
        },
        None => Answer::Ready(c.company_name, partner),
    }
}

/// The 403 page for a form another site sent (its `Origin` is not ours), or `None`.
fn cross_site(
    pay: &Pay,
    config: &HttpConfig,
    req: &HttpRequest,
    token: &str,
) -> Option<HttpResponse> {
    if crate::pages::checkout::origin_allowed(&config.base_url, req) {
        return None;
    }
    let a = problem_of(
        "Cannot continue",
        "This form was sent from another site.",
        StatusCode::FORBIDDEN,
    );
    Some(render(pay, config, token, a))
}

/// The claim page of an onboarding draft (HTML): the sign-up form, or for a signed-in user one
/// button; a page saying so for an unknown, claimed or expired link.
#[utoipa::path(
    tag = "Onboarding",
    params(("token" = String, Path, description = "The claim token of the draft's `claimUrl`")),
    responses(
        (status = 200, description = "The claim page (HTML)", content_type = "text/html", body = String),
        (status = 404, description = "Unknown link (HTML)", content_type = "text/html", body = String),
        (status = 409, description = "The draft was claimed already (HTML)", content_type = "text/html", body = String),
        (status = 410, description = "The draft expired (HTML)", content_type = "text/html", body = String),
    )
)]
#[get("/onboarding/claim/{token}")]
pub async fn claim_page(
    pay: web::Data<Pay>,
    config: web::Data<HttpConfig>,
    req: HttpRequest,
    token: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let token = token.into_inner();
    let session = req.cookie(SESSION_COOKIE).map(|c| c.value().to_owned());
    let (p, t) = (pay.clone(), token.clone());
    let answer = blocking(move || {
        let view = match p.onboarding().claim_view(&t) {
            Ok(v) => v,
            Err(e) => return refusal(e, None),
        };
        match view.status {
            DraftStatus::Open => {}
            DraftStatus::Claimed => {
                return refusal(ClaimRefused::Claimed.into(), Some(&view.partner_name))
            }
            DraftStatus::Expired => {
                return refusal(ClaimRefused::Expired.into(), Some(&view.partner_name))
            }
        }
        let csrf = session.and_then(|token| {
            let s = p.tenancy().authenticate_sign_in(&token).ok()?;
            p.tenancy().page_csrf(&s, &token).ok()
        });
        Ok(match csrf {
            Some(csrf) => Answer::Claim(Box::new(view), Some(csrf.expose().to_owned())),
            None => Answer::SignUp(Box::new(view), None, None, StatusCode::OK),
        })
    })
    .await?;
    Ok(render(&pay, &config, &token, answer))
}

/// Claim the draft as the signed-in user: the company is created with them as owner; 303 to
/// the application's redirect URI with `code` and `state` when the draft has `oauth`, else
/// the page saying the company is ready.
#[utoipa::path(
    tag = "Onboarding",
    params(("token" = String, Path, description = "The claim token of the draft's `claimUrl`")),
    request_body(content = ClaimForm, content_type = "application/x-www-form-urlencoded"),
    security(("session" = [])),
    responses(
        (status = 303, description = "To the application's `redirectUri` with `code` and `state`"),
        (status = 200, description = "The company is ready (HTML)", content_type = "text/html", body = String),
        (status = 400, description = "A malformed form (HTML)", content_type = "text/html", body = String),
        (status = 401, description = "No sign-in session (HTML)", content_type = "text/html", body = String),
        (status = 403, description = "Missing or wrong CSRF token, or another site's form (HTML)", content_type = "text/html", body = String),
        (status = 404, description = "Unknown link (HTML)", content_type = "text/html", body = String),
        (status = 409, description = "The draft was claimed already (HTML)", content_type = "text/html", body = String),
        (status = 410, description = "The draft expired (HTML)", content_type = "text/html", body = String),
    )
)]
#[post("/onboarding/claim/{token}")]
pub async fn claim(
    pay: web::Data<Pay>,
    config: web::Data<HttpConfig>,
    req: HttpRequest,
    token: web::Path<String>,
    body: FormBody,
) -> Result<HttpResponse, ApiError> {
    let token = token.into_inner();
    if let Some(refused) = cross_site(&pay, &config, &req, &token) {
        return Ok(refused);
    }
    let session = req.cookie(SESSION_COOKIE).map(|c| c.value().to_owned());
    let (p, t) = (pay.clone(), token.clone());
    let answer = blocking(move || {
        // The link first: an unknown one is its page whatever the form holds.
        let partner = match p.onboarding().claim_view(&t) {
            Ok(v) => v.partner_name,
            Err(e) => return refusal(e, None),
        };
        let f = match body
            .0
            .map_err(|_| "The form could not be read.".to_owned())
            .and_then(|pairs| form::read::<ClaimForm>(&pairs))
        {
            Ok(f) => f,
            Err(why) => return Ok(problem_of("Cannot continue", why, StatusCode::BAD_REQUEST)),
        };
        let signed_in = match session.map(|s| p.tenancy().authenticate_sign_in(&s)) {
            Some(Ok(s)) => s,
            _ => {
                return Ok(problem_of(
                    "Sign in first",
                    "Your session has ended; open the link again.",
                    StatusCode::UNAUTHORIZED,
                ))
            }
        };
        if p.tenancy()
            .check_csrf(&signed_in, Some(&f.csrf_token))
            .is_err()
        {
            return Ok(problem_of(
                "Cannot continue",
                "The form's security token is wrong; open the link again.",
                StatusCode::FORBIDDEN,
            ));
        }
        match p.onboarding().claim(&t, &signed_in) {
            Ok(c) => Ok(claimed(c, partner)),
            Err(e) => refusal(e, Some(&partner)),
        }
    })
    .await?;
    Ok(render(&pay, &config, &token, answer))
}

/// Sign up on the claim page and claim the draft: the new user owns the new company and is
/// signed in (`pay_session`); then as the signed-in claim. A taken e-mail or a short password
/// shows the form again with the reason.
#[utoipa::path(
    tag = "Onboarding",
    params(("token" = String, Path, description = "The claim token of the draft's `claimUrl`")),
    request_body(content = SignUpForm, content_type = "application/x-www-form-urlencoded"),
    responses(
        (status = 303, description = "Signed up; to the application's `redirectUri` with `code` and `state`"),
        (status = 200, description = "Signed up; the company is ready (HTML)", content_type = "text/html", body = String),
        (status = 400, description = "A malformed form, an invalid or taken e-mail, a short password: the form again (HTML)", content_type = "text/html", body = String),
        (status = 403, description = "Another site's form (HTML)", content_type = "text/html", body = String),
        (status = 404, description = "Unknown link (HTML)", content_type = "text/html", body = String),
        (status = 409, description = "The draft was claimed already (HTML)", content_type = "text/html", body = String),
        (status = 410, description = "The draft expired (HTML)", content_type = "text/html", body = String),
    )
)]
#[post("/onboarding/claim/{token}/signup")]
pub async fn sign_up(
    pay: web::Data<Pay>,
    config: web::Data<HttpConfig>,
    req: HttpRequest,
    token: web::Path<String>,
    body: FormBody,
) -> Result<HttpResponse, ApiError> {
    let token = token.into_inner();
    if let Some(refused) = cross_site(&pay, &config, &req, &token) {
        return Ok(refused);
    }
    let (p, t) = (pay.clone(), token.clone());
    let (answer, session) = blocking(move || {
        // The link first: an unknown one is its page whatever the form holds.
        let view = match p.onboarding().claim_view(&t) {
            Ok(v) => v,
            Err(e) => return Ok((refusal(e, None)?, None)),
        };
        let f = match body
            .0
            .map_err(|_| "The form could not be read.".to_owned())
            .and_then(|pairs| form::read::<SignUpForm>(&pairs))
        {
            Ok(f) => f,
            Err(why) => {
                return Ok((
                    problem_of("Cannot continue", why, StatusCode::BAD_REQUEST),
                    None,
                ))
            }
        };
        let partner = view.partner_name.clone();
        match p
            .onboarding()
            .claim_with_sign_up(&t, &f.email, &Secret::new(f.password))
        {
            Ok((c, login)) => Ok((claimed(c, partner), Some(login.session_token))),
            Err(OnboardingError::Invalid(field)) => Ok((
                Answer::SignUp(
                    Box::new(view),
                    Some(f.email),
                    Some(field.message),
                    StatusCode::BAD_REQUEST,
                ),
                None,
            )),
            Err(e) => Ok((refusal(e, Some(&partner))?, None)),
        }
    })
    .await?;
    let mut res = render(&pay, &config, &token, answer);
    if let Some(token) = session {
        res.add_cookie(&session_cookie(&config, token.expose()))
            .map_err(|_| pay_domain::Fault::new("session cookie"))?;
    }
    Ok(res)
}
