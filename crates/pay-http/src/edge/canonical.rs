//! The canonical host: with `PAY_APEX_HOST` set, a request whose `Host` is that apex is
//! answered 307 (method and body kept, RFC 9110 section 15.4.8) to the same path and query on
//! `PAY_BASE_URL`, before any route runs. Nothing is read or written for it; a DPoP proof
//! built for the apex does not match the canonical URL after the redirect (its `htu` names the
//! apex), so clients must address the canonical host directly.

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::ServiceRequest;
use actix_web::dev::ServiceResponse;
use actix_web::http::header;
use actix_web::middleware::Next;
use actix_web::HttpResponse;

use crate::HttpConfig;

/// The host name of a `Host` value (`name`, `name:port`, `[v6]:port`), lower-cased, without a
/// trailing dot.
fn host_name(value: &str) -> String {
    let name = if let Some(rest) = value.strip_prefix('[') {
        rest.split(']').next().unwrap_or_default()
    } else {
        value.rsplit_once(':').map_or(value, |(h, _)| h)
    };
    name.trim_end_matches('.').to_ascii_lowercase()
}

/// Whether the request names the apex host (`Host`, or the authority of an absolute target).
pub fn is_apex(apex: &str, req: &actix_web::dev::RequestHead) -> bool {
    let host = req
        .headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .or_else(|| req.uri.authority().map(|a| a.as_str()));
    host.is_some_and(|h| host_name(h) == apex)
}

pub async fn apex_redirect(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let to = req
        .app_data::<actix_web::web::Data<HttpConfig>>()
        .and_then(|c| {
            let apex = c.apex_host.as_deref()?;
            is_apex(apex, req.head()).then(|| {
                let target = req.uri().path_and_query().map_or("/", |pq| pq.as_str());
                format!("{}{target}", c.base_url.trim_end_matches('/'))
            })
        });
    match to {
        Some(location) => {
            let res = HttpResponse::TemporaryRedirect()
                .insert_header((header::LOCATION, location))
                .insert_header((header::CACHE_CONTROL, "no-store"))
                .finish();
            Ok(req.into_response(res))
        }
        None => Ok(next.call(req).await?.map_into_boxed_body()),
    }
}

#[cfg(test)]
mod tests {
    use super::host_name;

    #[test]
    fn host_names() {
        assert_eq!(host_name("Example.COM"), "example.com");
        assert_eq!(host_name("example.com:8443"), "example.com");
        assert_eq!(host_name("example.com."), "example.com");
        assert_eq!(host_name("[::1]:80"), "::1");
        assert_eq!(host_name("pay.example.com"), "pay.example.com");
    }
}
