//! Limits on request header fields, answered 431 with the JSON error body like every other
//! error. actix answers a head over its own hard limits (96 fields, 128 KiB) itself, with an
//! empty body and before any middleware; ours are lower, so every request a client can make
//! within actix's limits meets ours first and gets the JSON answer.

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::ResponseError;

use crate::edge::error::ApiError;

/// Most header fields a request may carry (browsers send about 20).
pub const MAX_HEADER_FIELDS: usize = 64;
/// Most bytes of header names and values together (cookies included).
pub const MAX_HEADER_BYTES: usize = 32 * 1024;

pub async fn header_limits(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let headers = req.headers();
    let bytes: usize = headers
        .iter()
        .map(|(name, value)| name.as_str().len() + value.len())
        .sum();
    if headers.len() > MAX_HEADER_FIELDS || bytes > MAX_HEADER_BYTES {
        let e = ApiError::RequestHeaderFieldsTooLarge {
            fields: MAX_HEADER_FIELDS,
            bytes: MAX_HEADER_BYTES,
        };
        return Ok(req.into_response(e.error_response()));
    }
    Ok(next.call(req).await?.map_into_boxed_body())
}
