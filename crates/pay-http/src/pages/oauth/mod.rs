//! The browser side of OAuth: `GET /oauth/authorize` shows a signed-in merchant the consent
//! page (or sends them to `GET /signin` first and back after), `POST /oauth/authorize` (CSRF
//! token) answers 303 to the client's redirect URI with `code` and `state` or
//! `error=access_denied`. An unknown client or redirect URI is an error page, never a
//! redirect (RFC 6749 section 4.1.2.1); every other refusal is redirected with its `error`.
//! Pages work without JavaScript and carry the checkout's CSP with a fresh nonce.

pub mod forms;
pub mod render;

use actix_web::http::{header, StatusCode};
use actix_web::{get, post, web, HttpRequest, HttpResponse};
use pay_domain::app::Pay;
use pay_domain::kernel::ids::CompanyId;
use pay_domain::kernel::secret::Secret;
use pay_domain::oauth::{pkce, AuthorizeRequest, ConsentView, OAuthError};
use pay_domain::tenancy::{Membership, Permission, TenancyError};

use crate::edge::credentials::{blocking, session_cookie, SESSION_COOKIE};
use crate::edge::error::ApiError;
use crate::edge::form;
use crate::edge::form::{decode_form, FormBody};
use crate::pages::checkout::path_prefix;
use crate::HttpConfig;
use forms::{AuthorizeQuery, ConsentForm, SignInForm};

use crate::pages::layout::NONCE_LEN;
const AUTHORIZE_PATH: &str = "/oauth/authorize";

/// What a page handler answers.
enum Answer {
    Page(StatusCode, Box<Html>),
    Redirect(String),
}

enum Html {
    Problem(&'static str, String),
    /// The return path, the e-mail typed (after a refusal) and the refusal.
    SignIn(Option<String>, Option<String>, Option<&'static str>),
    Consent(ConsentView, Vec<Membership>, Vec<(&'static str, String)>),
}

fn problem(status: StatusCode, heading: &'static str, message: impl Into<String>) -> Answer {
    Answer::Page(status, Box::new(Html::Problem(heading, message.into())))
}

fn render(pay: &Pay, config: &HttpConfig, answer: Answer) -> HttpResponse {
    let (status, html) = match answer {
        Answer::Redirect(to) => {
            return HttpResponse::SeeOther()
                .insert_header((header::LOCATION, to))
                .insert_header((header::CACHE_CONTROL, "no-store"))
                .finish()
        }
        Answer::Page(status, html) => (status, *html),
    };
    let nonce = pay.random_alphanumeric(NONCE_LEN);
    let prefix = path_prefix(&config.base_url);
    // The consent form is answered by a redirect to the application's redirect URI.
    let form_origin = match &html {
        Html::Consent(view, ..) => redirect_origin(&view.redirect_uri),
        _ => None,
    };
    let body = match html {
        Html::Problem(heading, message) => render::problem(&nonce, heading, &message),
        Html::SignIn(return_to, email, error) => render::signin(
            &nonce,
            &format!("{prefix}/signin"),
            return_to.as_deref(),
            email.as_deref(),
            error,
        ),
        Html::Consent(view, companies, hidden) => {
            let hidden: Vec<(&str, &str)> = hidden.iter().map(|(n, v)| (*n, v.as_str())).collect();
            render::consent(
                &nonce,
                &format!("{prefix}{AUTHORIZE_PATH}"),
                &view,
                &companies,
                &hidden,
            )
        }
    };
    crate::pages::layout::respond(status, &nonce, form_origin.as_deref(), body)
}

/// The origin of a registered redirect URI (https, or http on loopback), as a CSP source.
fn redirect_origin(uri: &str) -> Option<String> {
    let origin = url::Url::parse(uri).ok()?.origin();
    origin.is_tuple().then(|| origin.ascii_serialization())
}

/// A form post may come from no `Origin` (older browsers) or exactly the configured one.
fn origin_allowed(config: &HttpConfig, req: &HttpRequest) -> bool {
    crate::pages::checkout::origin_allowed(&config.base_url, req)
}

/// `redirect_uri` with `params` added to its query (its own query kept).
fn redirect_to(redirect_uri: &str, params: &[(&str, &str)]) -> Answer {
    match url::Url::parse(redirect_uri) {
        Ok(mut url) => {
            url.query_pairs_mut().extend_pairs(params);
            Answer::Redirect(url.to_string())
        }
        Err(_) => problem(
            StatusCode::BAD_REQUEST,
            "Cannot continue",
            "redirect_uri is invalid",
        ),
    }
}

/// A refusal sent back to the client, with `state` when it is one we could echo.
fn error_redirect(req: &AuthorizeRequest, error: &str, description: &str) -> Answer {
    let mut params = vec![("error", error), ("error_description", description)];
    if let Some(state) = req.state.as_deref().filter(|s| state_echoable(s)) {
        params.push(("state", state));
    }
    redirect_to(&req.redirect_uri, &params)
}

fn state_echoable(s: &str) -> bool {
    !s.is_empty() && s.len() <= 1024 && s.bytes().all(|b| (0x20..=0x7e).contains(&b))
}

/// The request as the domain checks it, or the answer when `client_id` or `redirect_uri` is
/// missing (an error page: there is nowhere safe to redirect).
fn domain_request(q: &AuthorizeQuery) -> Result<AuthorizeRequest, Answer> {
    match (&q.client_id, &q.redirect_uri) {
        (Some(client_id), Some(redirect_uri)) => Ok(AuthorizeRequest {
            client_id: client_id.clone(),
            redirect_uri: redirect_uri.clone(),
            scope: q.scope.clone().unwrap_or_default(),
            state: q.state.clone(),
            code_challenge: q.code_challenge.clone().unwrap_or_default(),
            dpop_jkt: q.dpop_jkt.clone(),
        }),
        _ => Err(problem(
            StatusCode::BAD_REQUEST,
            "Cannot connect this app",
            "The request has no client_id or redirect_uri.",
        )),
    }
}

/// Checks the request: the domain's rules (client, redirect URI, state, challenge, scopes)
/// then the edge's (`response_type=code`, PKCE method `S256`). `Err` is the answer.
fn checked(pay: &Pay, q: &AuthorizeQuery) -> Result<(AuthorizeRequest, ConsentView), Answer> {
    let req = domain_request(q)?;
    let view = match pay.oauth().check_authorization(&req) {
        Ok(view) => view,
        Err(OAuthError::NoRedirect(n)) => {
            return Err(problem(
                StatusCode::BAD_REQUEST,
                "Cannot connect this app",
                format!("{}.", n.description),
            ))
        }
        Err(OAuthError::Refused(r)) => {
            return Err(error_redirect(&req, r.code.as_str(), r.description))
        }
        Err(_) => {
            return Err(problem(
                StatusCode::INTERNAL_SERVER_ERROR,
                "Something went wrong",
                "Please try again.",
            ))
        }
    };
    match q.response_type.as_deref() {
        Some("code") => {}
        Some(_) => {
            return Err(error_redirect(
                &req,
                "unsupported_response_type",
                "response_type must be code",
            ))
        }
        None => {
            return Err(error_redirect(
                &req,
                "invalid_request",
                "response_type is required",
            ))
        }
    }
    if let Err(e) = pkce::check_challenge(&req.code_challenge, q.code_challenge_method.as_deref()) {
        return Err(error_redirect(&req, e.oauth_error(), &e.to_string()));
    }
    Ok((req, view))
}

/// The hidden fields the consent form carries back: the request as received.
fn hidden_fields(q: &AuthorizeQuery, csrf: String) -> Vec<(&'static str, String)> {
    let mut out = vec![("response_type", "code".to_owned())];
    for (name, value) in [
        ("client_id", &q.client_id),
        ("redirect_uri", &q.redirect_uri),
        ("scope", &q.scope),
        ("state", &q.state),
        ("code_challenge", &q.code_challenge),
        ("code_challenge_method", &q.code_challenge_method),
        ("dpop_jkt", &q.dpop_jkt),
    ] {
        if let Some(v) = value {
            out.push((name, v.clone()));
        }
    }
    out.push(("csrf_token", csrf));
    out
}

/// Start an authorization (RFC 6749 section 4.1.1): the consent page for a signed-in user,
/// else a 303 to the sign-in page that comes back here.
#[utoipa::path(
    tag = "OAuth",
    params(AuthorizeQuery),
    responses(
        (status = 200, description = "The consent page (HTML)", content_type = "text/html", body = String),
        (status = 303, description = "To `/signin` without a session; to `redirect_uri` with `error` for a refused request"),
        (status = 400, description = "Unknown client or redirect URI: an error page, never a redirect", content_type = "text/html", body = String),
    )
)]
#[get("/oauth/authorize")]
pub async fn authorize_page(
    pay: web::Data<Pay>,
    config: web::Data<HttpConfig>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let query = req.query_string().to_owned();
    let parsed = decode_form(query.as_bytes())
        .map_err(|_| "The request is not a valid query string.".to_owned())
        .and_then(|pairs| form::read::<AuthorizeQuery>(&pairs));
    let session = req.cookie(SESSION_COOKIE).map(|c| c.value().to_owned());
    let prefix = path_prefix(&config.base_url);
    let p = pay.clone();
    let answer = blocking(move || {
        let q = match parsed {
            Ok(q) => q,
            Err(why) => {
                return Ok(problem(
                    StatusCode::BAD_REQUEST,
                    "Cannot connect this app",
                    why,
                ))
            }
        };
        let (_, view) = match checked(&p, &q) {
            Ok(ok) => ok,
            Err(answer) => return Ok(answer),
        };
        let signed_in = session.and_then(|token| {
            let s = p.tenancy().authenticate_sign_in(&token).ok()?;
            let csrf = p.tenancy().page_csrf(&s, &token).ok()?;
            Some((s, csrf))
        });
        let Some((signed_in, csrf)) = signed_in else {
            let back = format!("{AUTHORIZE_PATH}?{query}");
            let to = url::form_urlencoded::Serializer::new(String::new())
                .append_pair("return_to", &back)
                .finish();
            return Ok(Answer::Redirect(format!("{prefix}/signin?{to}")));
        };
        let companies: Vec<Membership> = p
            .tenancy()
            .companies(&signed_in)?
            .into_iter()
            .filter(|m| m.role.has(Permission::SettingsManage))
            .collect();
        let hidden = hidden_fields(&q, csrf.expose().to_owned());
        Ok(Answer::Page(
            StatusCode::OK,
            Box::new(Html::Consent(view, companies, hidden)),
        ))
    })
    .await?;
    Ok(render(&pay, &config, answer))
}

/// The 403 page for a form another site sent (its `Origin` is not ours), else `None`.
fn cross_site(pay: &Pay, config: &HttpConfig, req: &HttpRequest) -> Option<HttpResponse> {
    (!origin_allowed(config, req)).then(|| {
        let a = problem(
            StatusCode::FORBIDDEN,
            "Cannot continue",
            "This form was sent from another site.",
        );
        render(pay, config, a)
    })
}

/// The merchant's decision (the consent page's form): 303 to `redirect_uri` with `code` and
/// `state` on `approve`, `error=access_denied` on `deny`.
#[utoipa::path(
    tag = "OAuth",
    request_body(content = ConsentForm, content_type = "application/x-www-form-urlencoded"),
    security(("session" = [])),
    responses(
        (status = 303, description = "To `redirect_uri` with `code` and `state`, or with `error`"),
        (status = 400, description = "Unknown client or redirect URI, or a malformed form: an error page", content_type = "text/html", body = String),
        (status = 401, description = "No sign-in session: a page linking to the sign-in (HTML)", content_type = "text/html", body = String),
        (status = 403, description = "Missing or wrong CSRF token, another site's form, or a company the user may not connect", content_type = "text/html", body = String),
    )
)]
#[post("/oauth/authorize")]
pub async fn authorize_decision(
    pay: web::Data<Pay>,
    config: web::Data<HttpConfig>,
    req: HttpRequest,
    body: FormBody,
) -> Result<HttpResponse, ApiError> {
    if let Some(refused) = cross_site(&pay, &config, &req) {
        return Ok(refused);
    }
    let session = req.cookie(SESSION_COOKIE).map(|c| c.value().to_owned());
    let p = pay.clone();
    let answer = blocking(move || {
        let f = match body
            .0
            .map_err(|_| "The form could not be read.".to_owned())
            .and_then(|pairs| form::read::<ConsentForm>(&pairs))
        {
            Ok(f) => f,
            Err(why) => return Ok(problem(StatusCode::BAD_REQUEST, "Cannot continue", why)),
        };
        let signed_in = match session.map(|t| p.tenancy().authenticate_sign_in(&t)) {
            Some(Ok(s)) => s,
            _ => {
                return Ok(problem(
                    StatusCode::UNAUTHORIZED,
                    "Sign in first",
                    "Your session has ended; start again from the app.",
                ))
            }
        };
        if p.tenancy()
            .check_csrf(&signed_in, Some(&f.csrf_token))
            .is_err()
        {
            return Ok(problem(
                StatusCode::FORBIDDEN,
                "Cannot continue",
                "The form's security token is wrong; start again from the app.",
            ));
        }
        let q = f.query();
        let (areq, _) = match checked(&p, &q) {
            Ok(ok) => ok,
            Err(answer) => return Ok(answer),
        };
        if f.decision == "deny" {
            return Ok(error_redirect(
                &areq,
                "access_denied",
                "the merchant denied the request",
            ));
        }
        if f.decision != "approve" {
            return Ok(problem(
                StatusCode::BAD_REQUEST,
                "Cannot continue",
                "decision must be approve or deny.",
            ));
        }
        let Some(company) = f.company_id.as_deref().and_then(CompanyId::parse) else {
            return Ok(problem(
                StatusCode::BAD_REQUEST,
                "Cannot continue",
                "Pick a company.",
            ));
        };
        match p.oauth().authorize(&signed_in, company, &areq) {
            Ok(issued) => {
                let mut params = vec![("code", issued.code.expose())];
                if let Some(state) = issued.state.as_deref() {
                    params.push(("state", state));
                }
                Ok(redirect_to(&issued.redirect_uri, &params))
            }
            Err(OAuthError::Denied(_)) => Ok(problem(
                StatusCode::FORBIDDEN,
                "Cannot connect this company",
                "Only the company's owner or an admin can connect an app.",
            )),
            Err(OAuthError::NoRedirect(n)) => Ok(problem(
                StatusCode::BAD_REQUEST,
                "Cannot connect this app",
                n.description,
            )),
            Err(OAuthError::Refused(r)) => {
                Ok(error_redirect(&areq, r.code.as_str(), r.description))
            }
            Err(e) => Err(e.into()),
        }
    })
    .await?;
    Ok(render(&pay, &config, answer))
}

/// Where to go after signing in: only back into an authorization request, an onboarding
/// claim page or a dashboard page of ours.
pub(crate) fn safe_return(return_to: Option<&str>) -> Option<String> {
    return_to
        .filter(|r| {
            if crate::pages::dashboard::is_return_path(r) {
                return true;
            }
            let claim = r
                .strip_prefix(crate::api::onboarding::CLAIM_PATH)
                .and_then(|t| t.strip_prefix('/'))
                .is_some_and(|t| {
                    !t.is_empty() && t.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                });
            (r.starts_with("/oauth/authorize?") || claim) && !r.contains(['\r', '\n', '\\'])
        })
        .map(str::to_owned)
}

/// The sign-in page (HTML), for the consent flow and the onboarding claim page.
#[utoipa::path(
    tag = "OAuth",
    params(("return_to" = Option<String>, Query, description = "An `/oauth/authorize?...`, `/onboarding/claim/...` or `/dashboard...` address to return to")),
    responses((status = 200, description = "The sign-in form (HTML)", content_type = "text/html", body = String))
)]
#[get("/signin")]
pub async fn signin_page(
    pay: web::Data<Pay>,
    config: web::Data<HttpConfig>,
    req: HttpRequest,
) -> HttpResponse {
    let return_to = decode_form(req.query_string().as_bytes())
        .ok()
        .and_then(|pairs| {
            pairs
                .into_iter()
                .find(|(n, _)| n == "return_to")
                .map(|(_, v)| v)
        });
    let answer = Answer::Page(
        StatusCode::OK,
        Box::new(Html::SignIn(safe_return(return_to.as_deref()), None, None)),
    );
    render(&pay, &config, answer)
}

/// Sign in from the page: sets `pay_session` (the same session `POST /auth/login` starts; its
/// CSRF token belongs to it and is embedded in each form) and answers 303 back to the
/// authorization request (or a page saying so).
#[utoipa::path(
    tag = "OAuth",
    request_body(content = SignInForm, content_type = "application/x-www-form-urlencoded"),
    responses(
        (status = 303, description = "Signed in; back to `return_to`"),
        (status = 200, description = "Signed in, nowhere to return to (HTML)", content_type = "text/html", body = String),
        (status = 400, description = "A malformed form (HTML)", content_type = "text/html", body = String),
        (status = 401, description = "Wrong e-mail or password: the form again (HTML)", content_type = "text/html", body = String),
        (status = 403, description = "Another site's form (HTML)", content_type = "text/html", body = String),
        (status = 429, description = "Too many failures, for the e-mail and address or for the address across accounts (HTML)", content_type = "text/html", body = String, headers(("Retry-After" = u64, description = "Seconds to wait (the window, an upper bound)"))),
    )
)]
#[post("/signin")]
pub async fn signin(
    pay: web::Data<Pay>,
    config: web::Data<HttpConfig>,
    req: HttpRequest,
    body: FormBody,
) -> Result<HttpResponse, ApiError> {
    if let Some(refused) = cross_site(&pay, &config, &req) {
        return Ok(refused);
    }
    let addr = crate::edge::client_addr(&req);
    let f = match body
        .0
        .map_err(|_| "The form could not be read.".to_owned())
        .and_then(|pairs| form::read::<SignInForm>(&pairs))
    {
        Ok(f) => f,
        Err(why) => {
            return Ok(render(
                &pay,
                &config,
                problem(StatusCode::BAD_REQUEST, "Cannot sign in", why),
            ))
        }
    };
    let return_to = safe_return(f.return_to.as_deref());
    let p = pay.clone();
    let (email, password) = (f.email, Secret::new(f.password));
    let typed = email.clone();
    let outcome = blocking(move || Ok(p.tenancy().login(&email, &password, &addr))).await?;
    let outcome = match outcome {
        Ok(o) => o,
        Err(TenancyError::InvalidLogin(_)) => {
            let a = Answer::Page(
                StatusCode::UNAUTHORIZED,
                Box::new(Html::SignIn(
                    return_to,
                    Some(typed),
                    Some("Invalid e-mail or password."),
                )),
            );
            let mut res = render(&pay, &config, a);
            crate::edge::metrics::mark(&mut res, crate::edge::metrics::Counted::SignInFailed);
            return Ok(res);
        }
        Err(TenancyError::RateLimited(limited)) => {
            let a = problem(
                StatusCode::TOO_MANY_REQUESTS,
                "Too many attempts",
                "Wait a few minutes, then try again.",
            );
            let mut res = render(&pay, &config, a);
            res.headers_mut().insert(
                actix_web::http::header::RETRY_AFTER,
                actix_web::http::header::HeaderValue::from(limited.retry_after_secs),
            );
            return Ok(res);
        }
        Err(e) => return Err(e.into()),
    };
    let session = session_cookie(&config, outcome.session_token.expose());
    let res = match return_to {
        Some(back) => {
            let mut r = HttpResponse::SeeOther();
            r.insert_header((
                header::LOCATION,
                format!("{}{back}", path_prefix(&config.base_url)),
            ));
            r.insert_header((header::CACHE_CONTROL, "no-store"));
            r.cookie(session).finish()
        }
        None => {
            let mut r = render(
                &pay,
                &config,
                problem(
                    StatusCode::OK,
                    "Signed in",
                    "You are signed in. Go back to the app to continue.",
                ),
            );
            let _ = r.add_cookie(&session);
            r
        }
    };
    Ok(res)
}
