//! The page's forms without JavaScript: start a session, and accept, cancel, refresh or give the refund address of one; each answers 303 to the session's page, or the page again with the message.

use super::*;
use crate::edge::form::{read_page_form, FormProblem};
use crate::pages::checkout::forms::{EmptyForm, RefundAddressForm, StartForm};

/// No-JavaScript start: `payAsset` from the form; 303 to the new session's page.
#[utoipa::path(
    tag = "Hosted checkout",
    params(("uid" = String, Path, description = "Public link identifier")),
    request_body(content_type = "application/x-www-form-urlencoded", description = "`payAsset`: an asset identifier of the link's pay assets", content = crate::pages::checkout::forms::StartForm),
    responses(
        (status = 303, description = "To the new session's page", headers(("Location" = String, description = "/pay/{uid}?session={id}"))),
        (status = 400, description = "The choice again with the message (HTML)", content_type = "text/html", body = String),
        (status = 403, description = "`Origin` other than the public origin or the company's verified domain (HTML)", content_type = "text/html", body = String),
        (status = 404, description = "Unknown link (HTML)", content_type = "text/html", body = String),
        (status = 409, description = "Paused, archived or expired link, or a payment under way on it (`payment_in_progress`, `link_already_paid`): the clear page (HTML)", content_type = "text/html", body = String),
        (status = 429, description = "Too many starts from this address (HTML)", content_type = "text/html", body = String),
    )
)]
#[post("/pay/{uid}/start")]
pub async fn start(
    pay: web::Data<Pay>,
    req: HttpRequest,
    uid: web::Path<String>,
    body: FormBody,
) -> HttpResponse {
    let page = Page::new(&pay);
    let origin = form_origin(pay.public_pay_url(), &req);
    if origin == FormOrigin::Refused {
        return page.foreign_origin();
    }
    let form = match body.0 {
        Ok(f) => f,
        Err(e) => return page.form_error(&e),
    };
    let uid = uid.into_inner();
    let addr = crate::edge::client_addr(&req);
    let remembered = remembered(&req);
    let p = pay.clone();
    let result = blocking(move || {
        let uid = link_uid(&uid)?;
        let view = p.checkout().checkout_view(&uid)?;
        if !origin.allowed_for(&p, view.link.company_id)? {
            return Ok(None);
        }
        let asset = match read_page_form::<StartForm>(&form) {
            Ok(f) => Some(f.pay_asset).filter(|a| !a.is_empty()),
            Err(FormProblem::Missing(_)) => None,
            Err(why) => return Ok(Some((view, Err(why.page_message())))),
        };
        let Some(asset) = asset else {
            return Ok(Some((view, Err("Choose what to pay with.".to_owned()))));
        };
        let started = p
            .checkout()
            .start_session(&uid, &asset, &addr)
            .map_err(ApiError::from);
        Ok(Some((view, Ok(started))))
    })
    .await;
    let (view, started) = match result {
        Ok(Some(r)) => r,
        Ok(None) => return page.foreign_origin(),
        Err(e) => return page.error(&e, None),
    };
    match started {
        Err(why) => page.screen(
            StatusCode::BAD_REQUEST,
            &view,
            &Screen::Choose { error: Some(&why) },
        ),
        Ok(Ok(s)) => {
            let uid = view.link.uid.to_string();
            let mut res = see_other(format!("{}/pay/{uid}?session={}", page.prefix, s.id));
            let _ = res.add_cookie(&payment_cookie(&pay, &uid, &s.id.to_string()));
            res
        }
        Ok(Err(ApiError::UnderWay(u))) => under_way_page(
            &page,
            &view,
            &u,
            remembered.as_deref(),
            StatusCode::CONFLICT,
        ),
        Ok(Err(e)) => action_error(&page, &view, &e, None),
    }
}

/// How a refused action shows: a link that stopped taking payments gets its clear page (409);
/// a session that already moved on is simply shown as it is now (303); a bad payAsset is the
/// choice again with the message (400).
pub(super) fn action_error(
    page: &Page,
    view: &CheckoutView,
    e: &ApiError,
    session: Option<&str>,
) -> HttpResponse {
    match e {
        ApiError::NotActive(_) | ApiError::AlreadyPaid(_) => {
            let message = e.to_string();
            page.screen(
                StatusCode::CONFLICT,
                view,
                &Screen::Inactive {
                    message: Some(&message),
                },
            )
        }
        ApiError::SessionTransition(_) => {
            match session.and_then(|id| session_page(&page.prefix, &view.link.uid.to_string(), id))
            {
                Some(to) => see_other(to),
                None => page.error(e, Some(view)),
            }
        }
        ApiError::Invalid(FieldError { message, .. }) if session.is_none() => page.screen(
            StatusCode::BAD_REQUEST,
            view,
            &Screen::Choose {
                error: Some(message),
            },
        ),
        _ => page.error(e, Some(view)),
    }
}

#[derive(Debug, Clone, Copy)]
pub(super) enum Action {
    Accept,
    Cancel,
    Refresh,
    RefundAddress,
}

pub(super) async fn session_action(
    pay: web::Data<Pay>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
    body: FormBody,
    action: Action,
) -> HttpResponse {
    let page = Page::new(&pay);
    let origin = form_origin(pay.public_pay_url(), &req);
    if origin == FormOrigin::Refused {
        return page.foreign_origin();
    }
    let form = match body.0 {
        Ok(f) => f,
        Err(e) => return page.form_error(&e),
    };
    let (uid, id) = path.into_inner();
    let p = pay.clone();
    let sid = id.clone();
    let result = blocking(move || {
        let uid = link_uid(&uid)?;
        let view = p.checkout().checkout_view(&uid)?;
        if !origin.allowed_for(&p, view.link.company_id)? {
            return Ok(None);
        }
        // The refund form's one field; the others take none. An absent address is the empty
        // one, which the domain refuses with its reason.
        let read = match action {
            Action::RefundAddress => match read_page_form::<RefundAddressForm>(&form) {
                Ok(f) => Ok(f.address),
                Err(FormProblem::Missing(_)) => Ok(String::new()),
                Err(why) => Err(why),
            },
            _ => read_page_form::<EmptyForm>(&form).map(|_| String::new()),
        };
        let address = match read {
            Ok(a) => a,
            Err(why) => return Ok(Some((view, Err(why.page_message())))),
        };
        let sid = session_id(&sid);
        let done = sid
            .map_err(CheckoutError::from)
            .and_then(|sid| match action {
                Action::Accept => p.checkout().accept_session(&uid, sid),
                Action::Cancel => p.checkout().cancel_session(&uid, sid),
                Action::Refresh => p.checkout().refresh_quote(&uid, sid),
                Action::RefundAddress => p.checkout().submit_refund_address(&uid, sid, &address),
            });
        // A refused refund address is shown on the session's own page, beside the form.
        let current = match (&done, sid) {
            (Err(CheckoutError::Invalid(_) | CheckoutError::RefundAddressSet(_)), Ok(sid)) => {
                p.checkout().checkout_session(&uid, sid).ok()
            }
            _ => None,
        };
        Ok(Some((view, Ok((done.map_err(ApiError::from), current)))))
    })
    .await;
    let (view, outcome) = match result {
        Ok(Some(r)) => r,
        Ok(None) => return page.foreign_origin(),
        Err(e) => return page.error(&e, None),
    };
    match outcome {
        Err(why) => page.problem(
            StatusCode::BAD_REQUEST,
            "The form could not be used",
            &why,
            Some(&view),
        ),
        Ok((Ok(s), _)) => see_other(format!(
            "{}/pay/{}?session={}",
            page.prefix, view.link.uid, s.id
        )),
        Ok((Err(e), Some(current))) => {
            let (status, _, message, _) = e.parts();
            page.session(status, &pay, &view, &current, Some(&message))
        }
        Ok((Err(e), _)) => action_error(&page, &view, &e, Some(&id)),
    }
}

/// No-JavaScript accept of the quote; 303 to the session's page.
#[utoipa::path(
    tag = "Hosted checkout",
    params(
        ("uid" = String, Path, description = "Public link identifier"),
        ("sessionId" = String, Path, description = "Session id"),
    ),
    request_body(content_type = "application/x-www-form-urlencoded", description = "The page's form: accept the quote", content = crate::pages::checkout::forms::EmptyForm),
    responses(
        (status = 303, description = "To the session's page, showing its state now", headers(("Location" = String, description = "/pay/{uid}?session={sessionId}"))),
        (status = 400, description = "A bad form or value (HTML)", content_type = "text/html", body = String),
        (status = 403, description = "`Origin` other than the public origin or the company's verified domain (HTML)", content_type = "text/html", body = String),
        (status = 404, description = "Unknown link or session (HTML)", content_type = "text/html", body = String),
    )
)]
#[post("/pay/{uid}/s/{sessionId}/accept")]
pub async fn accept(
    pay: web::Data<Pay>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
    body: FormBody,
) -> HttpResponse {
    session_action(pay, req, path, body, Action::Accept).await
}

/// No-JavaScript cancel; 303 to the session's page.
#[utoipa::path(
    tag = "Hosted checkout",
    params(
        ("uid" = String, Path, description = "Public link identifier"),
        ("sessionId" = String, Path, description = "Session id"),
    ),
    request_body(content_type = "application/x-www-form-urlencoded", description = "The page's form: cancel", content = crate::pages::checkout::forms::EmptyForm),
    responses(
        (status = 303, description = "To the session's page, showing its state now", headers(("Location" = String, description = "/pay/{uid}?session={sessionId}"))),
        (status = 400, description = "A bad form or value (HTML)", content_type = "text/html", body = String),
        (status = 403, description = "`Origin` other than the public origin or the company's verified domain (HTML)", content_type = "text/html", body = String),
        (status = 404, description = "Unknown link or session (HTML)", content_type = "text/html", body = String),
    )
)]
#[post("/pay/{uid}/s/{sessionId}/cancel")]
pub async fn cancel(
    pay: web::Data<Pay>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
    body: FormBody,
) -> HttpResponse {
    session_action(pay, req, path, body, Action::Cancel).await
}

/// No-JavaScript quote refresh; 303 to the session's page.
#[utoipa::path(
    tag = "Hosted checkout",
    params(
        ("uid" = String, Path, description = "Public link identifier"),
        ("sessionId" = String, Path, description = "Session id"),
    ),
    request_body(content_type = "application/x-www-form-urlencoded", description = "The page's form: refresh the quote", content = crate::pages::checkout::forms::EmptyForm),
    responses(
        (status = 303, description = "To the session's page, showing its state now", headers(("Location" = String, description = "/pay/{uid}?session={sessionId}"))),
        (status = 400, description = "A bad form or value (HTML)", content_type = "text/html", body = String),
        (status = 403, description = "`Origin` other than the public origin or the company's verified domain (HTML)", content_type = "text/html", body = String),
        (status = 404, description = "Unknown link or session (HTML)", content_type = "text/html", body = String),
    )
)]
#[post("/pay/{uid}/s/{sessionId}/refresh")]
pub async fn refresh(
    pay: web::Data<Pay>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
    body: FormBody,
) -> HttpResponse {
    session_action(pay, req, path, body, Action::Refresh).await
}

/// No-JavaScript refund address (`address`); 303 to the session's page.
#[utoipa::path(
    tag = "Hosted checkout",
    params(
        ("uid" = String, Path, description = "Public link identifier"),
        ("sessionId" = String, Path, description = "Session id"),
    ),
    request_body(content_type = "application/x-www-form-urlencoded", description = "The page's form: give the refund address (`address`)", content = crate::pages::checkout::forms::RefundAddressForm),
    responses(
        (status = 303, description = "To the session's page, showing its state now", headers(("Location" = String, description = "/pay/{uid}?session={sessionId}"))),
        (status = 400, description = "A bad form or value (HTML)", content_type = "text/html", body = String),
        (status = 403, description = "`Origin` other than the public origin or the company's verified domain (HTML)", content_type = "text/html", body = String),
        (status = 404, description = "Unknown link or session (HTML)", content_type = "text/html", body = String),
        (status = 409, description = "An address was already given: the session's page with the one kept and why (HTML)", content_type = "text/html", body = String),
    )
)]
#[post("/pay/{uid}/s/{sessionId}/refund-address")]
pub async fn refund_address(
    pay: web::Data<Pay>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
    body: FormBody,
) -> HttpResponse {
    session_action(pay, req, path, body, Action::RefundAddress).await
}
