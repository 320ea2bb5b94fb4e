//! The one capped body reader. Every body the service reads (JSON objects, the optional JSON of
//! `send-request-email`, the gateway's and the checkout page's forms) comes through `read`: a
//! declared `Content-Length` over the cap is refused before anything is read, and a body that
//! grows past it while streaming is refused as soon as it does.

use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::HttpRequest;
use futures_util::StreamExt;

/// Largest body accepted on any route (JSON and forms alike).
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// Why a body could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BodyError {
    /// Longer than `MAX_BODY_BYTES` (declared or read).
    TooLarge,
    /// The connection failed while the body was read.
    Unreadable(String),
}

/// The body length a request declares (`Content-Length`), when it declares a readable one.
pub fn declared_length(req: &HttpRequest) -> Option<usize> {
    req.headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok())
}

/// Whether the request's `Content-Type` is `essence` (parameters such as `charset` aside,
/// compared without case).
pub fn content_type_is(req: &HttpRequest, essence: &str) -> bool {
    req.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            let given = v.split(';').next().unwrap_or("").trim();
            given.eq_ignore_ascii_case(essence)
        })
        .unwrap_or(false)
}

/// Reads the whole body, at most `MAX_BODY_BYTES`.
pub async fn read(declared: Option<usize>, payload: &mut Payload) -> Result<Vec<u8>, BodyError> {
    read_capped(declared, payload, MAX_BODY_BYTES).await
}

/// Reads the whole body, at most `cap` bytes (`TooLarge` past it: the evidence upload's own
/// limit; every other body takes `MAX_BODY_BYTES`).
pub async fn read_capped(
    declared: Option<usize>,
    payload: &mut Payload,
    cap: usize,
) -> Result<Vec<u8>, BodyError> {
    if declared.is_some_and(|n| n > cap) {
        return Err(BodyError::TooLarge);
    }
    let mut body = Vec::with_capacity(declared.unwrap_or(1024).min(cap));
    while let Some(chunk) = payload.next().await {
        let chunk =
            chunk.map_err(|e| BodyError::Unreadable(format!("could not read body: {e}")))?;
        if body.len() + chunk.len() > cap {
            return Err(BodyError::TooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}
