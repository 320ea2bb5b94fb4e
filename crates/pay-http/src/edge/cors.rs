//! CORS for the public API (`/api/public/...`): an embedded checkout on a merchant's own site
//! calls it from the payer's browser. Those routes take no cookie and no credential, so any
//! origin may call them and read the answers (`Access-Control-Allow-Origin: *`, never with
//! credentials); preflights are answered here, before routing. Every other route sends no CORS
//! header, so browsers keep other sites away from the partner API and the signed-in routes.

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::{header, Method};
use actix_web::middleware::Next;
use actix_web::HttpResponse;

/// The prefix of the credential-free routes.
pub const PUBLIC_PREFIX: &str = "/api/public/";
/// How long browsers may keep a preflight answer, seconds.
pub const MAX_AGE_SECS: u32 = 600;

pub async fn public_cors(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    if !req.path().starts_with(PUBLIC_PREFIX) {
        return Ok(next.call(req).await?.map_into_boxed_body());
    }
    let preflight = req.method() == Method::OPTIONS
        && req
            .headers()
            .contains_key(header::ACCESS_CONTROL_REQUEST_METHOD);
    if preflight {
        let res = HttpResponse::NoContent()
            .insert_header((header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"))
            .insert_header((header::ACCESS_CONTROL_ALLOW_METHODS, "GET, POST"))
            .insert_header((header::ACCESS_CONTROL_ALLOW_HEADERS, "content-type"))
            .insert_header((header::ACCESS_CONTROL_MAX_AGE, MAX_AGE_SECS.to_string()))
            .finish();
        return Ok(req.into_response(res));
    }
    let mut res = next.call(req).await?.map_into_boxed_body();
    res.headers_mut().insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        header::HeaderValue::from_static("*"),
    );
    Ok(res)
}
