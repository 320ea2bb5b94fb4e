//! Health, readiness, time zones and the OpenAPI document.

pub mod dto;

use actix_web::{get, web, HttpResponse};
use pay_domain::app::Pay;

use crate::api::meta::dto::{HealthDto, TimezoneList};
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

/// Readiness: the database answers.
#[utoipa::path(
    tag = "Operations",
    responses(
        (status = 200, body = HealthDto),
        (status = 503, description = "Database unreachable", body = ErrorBody),
    )
)]
#[get("/readyz")]
pub async fn readyz(pay: web::Data<Pay>) -> Result<HttpResponse, ApiError> {
    blocking(move || {
        pay.ready()
            .map_err(|_| ApiError::Unavailable("database unavailable".into()))
    })
    .await?;
    Ok(HttpResponse::Ok().json(HealthDto {
        status: "ok".into(),
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
