//! Health, readiness, time zones and the OpenAPI document.

pub mod dto;

use actix_web::{get, web, HttpResponse};
use pay_domain::app::Pay;

use crate::api::meta::dto::{HealthDto, ReadyDto, TimezoneList};
use crate::edge::credentials::blocking;
use crate::edge::error::{ApiError, ErrorBody};

/// Liveness: the process answers.
#[utoipa::path(tag = "Operations", responses((status = 200, body = HealthDto)))]
#[get("/healthz")]
pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(HealthDto {
        status: "ok".into(),
    })
}

/// Readiness: the database answers and, under the chain processor, no chain has gone unread
/// longer than its `unreachableAfterSecs`; each chain's lag behind its node's head.
#[utoipa::path(
    tag = "Operations",
    responses(
        (status = 200, body = ReadyDto),
        (status = 503, description = "Database unreachable, or a chain unread too long", body = ErrorBody),
    )
)]
#[get("/readyz")]
pub async fn readyz(
    pay: web::Data<Pay>,
    config: web::Data<crate::HttpConfig>,
) -> Result<HttpResponse, ApiError> {
    let monitor = config.chains.clone();
    let chains = blocking(move || {
        let down = |_| ApiError::Unavailable("database unavailable".into());
        pay.ready().map_err(down)?;
        monitor.map_or(Ok(Vec::new()), |m| m.health().map_err(down))
    })
    .await?;
    if let Some(c) = chains.iter().find(|c| !c.ready) {
        let since = c.read_at.map_or_else(
            || "never read".to_owned(),
            |t| format!("last read at {}", t.to_rfc3339()),
        );
        return Err(ApiError::Unavailable(format!(
            "chain {} unreachable: {since}",
            c.chain_code
        )));
    }
    Ok(HttpResponse::Ok().json(ReadyDto {
        status: "ok".into(),
        chains: chains.into_iter().map(Into::into).collect(),
    }))
}

/// Supported IANA time zones.
#[utoipa::path(tag = "Reference", responses((status = 200, body = TimezoneList)))]
#[get("/api/partner/v1/timezones")]
pub async fn timezones(list: web::Data<TimezoneCache>) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header(("cache-control", "public, max-age=86400"))
        .content_type("application/json")
        .body(list.0.clone())
}

/// The time-zone list, serialised once at start.
#[derive(Debug, Clone)]
pub struct TimezoneCache(pub web::Bytes);

impl TimezoneCache {
    pub fn new() -> Self {
        let body = TimezoneList {
            data: pay_domain::kernel::timezones::all()
                .into_iter()
                .map(str::to_owned)
                .collect(),
        };
        TimezoneCache(web::Bytes::from(
            serde_json::to_vec(&body).unwrap_or_default(),
        ))
    }
}

impl Default for TimezoneCache {
    fn default() -> Self {
        Self::new()
    }
}

/// This document.
#[utoipa::path(tag = "Reference", responses((status = 200, description = "OpenAPI 3.1 document")))]
#[get("/api/partner/v1/openapi.json")]
pub async fn openapi_json() -> HttpResponse {
    // The committed document, which a test keeps equal to the generated one: static bytes,
    // nothing composed per request.
    HttpResponse::Ok()
        .content_type(actix_web::http::header::ContentType::json())
        .body(crate::openapi::COMMITTED)
}
