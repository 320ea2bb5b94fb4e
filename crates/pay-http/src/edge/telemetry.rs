//! A tracing span per request carrying a request id, so every log line of the request (on the
//! event loop or the blocking pool) names it. The id is echoed as `x-request-id`. Only the
//! method, path and status are logged: never headers, cookies, query strings or bodies, and a
//! path's secret segment (an onboarding claim token) is masked.

use std::time::Instant;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::middleware::Next;
use tracing::Instrument;

pub const REQUEST_ID_HEADER: &str = "x-request-id";

/// A caller-supplied id is kept when it is short and plain; otherwise a fresh one is made.
fn request_id(req: &ServiceRequest) -> String {
    req.headers()
        .get(REQUEST_ID_HEADER)
        .and_then(|v| v.to_str().ok())
        .filter(|v| {
            !v.is_empty()
                && v.len() <= 64
                && v.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
        .map(str::to_owned)
        .unwrap_or_else(|| uuid::Uuid::new_v4().simple().to_string())
}

/// The path as logged: an onboarding claim page's token (a bearer secret) becomes `***`.
fn logged_path(path: &str) -> std::borrow::Cow<'_, str> {
    const CLAIM: &str = "/onboarding/claim/";
    match path.find(CLAIM) {
        Some(i) => {
            let start = i + CLAIM.len();
            let rest = &path[start..];
            let end = rest.find('/').map_or(path.len(), |j| start + j);
            format!("{}***{}", &path[..start], &path[end..]).into()
        }
        None => path.into(),
    }
}

pub async fn request_span(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let id = request_id(&req);
    let span = tracing::info_span!(
        "request",
        request_id = %id,
        method = %req.method(),
        path = %logged_path(req.path())
    );
    let start = Instant::now();
    let mut res = next.call(req).instrument(span.clone()).await?;
    if let Ok(v) = HeaderValue::from_str(&id) {
        res.headers_mut()
            .insert(HeaderName::from_static(REQUEST_ID_HEADER), v);
    }
    let status = res.status().as_u16();
    let elapsed_us = start.elapsed().as_micros() as u64;
    span.in_scope(|| tracing::info!(status, elapsed_us, "request finished"));
    Ok(res)
}

#[cfg(test)]
mod tests {
    use super::logged_path;

    #[test]
    fn claim_tokens_are_masked_in_logged_paths() {
        let token = format!("obc_{}", "a".repeat(43));
        assert_eq!(
            logged_path(&format!("/onboarding/claim/{token}")),
            "/onboarding/claim/***"
        );
        assert_eq!(
            logged_path(&format!("/pay/v1/onboarding/claim/{token}/signup")),
            "/pay/v1/onboarding/claim/***/signup"
        );
        assert_eq!(logged_path("/pay/abc"), "/pay/abc");
    }
}
