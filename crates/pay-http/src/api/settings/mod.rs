//! Merchant settings and destination assets.

pub mod dto;

use actix_web::{get, put, web, HttpResponse};
use pay_domain::app::Pay;

use crate::api::settings::dto::{
    DestinationAssetDto, DestinationAssetList, PaySettingsDto, UpdateSettingsRequest,
};
use crate::edge::credentials::{blocking, Credentials};
use crate::edge::error::{ApiError, ErrorBody};
use crate::edge::exact_json::ExactJsonBody;

/// The company's settings.
#[utoipa::path(
    tag = "Settings",
    security(("apiKeyId" = [], "apiKeySecret" = []), ("session" = [])),
    responses(
        (status = 200, description = "PaySettings", body = PaySettingsDto),
        (status = 401, description = "`Unauthorized` or `Invalid pay API credentials`", body = ErrorBody),
    )
)]
#[get("/api/partner/v1/pay/settings")]
pub async fn get_settings(
    pay: web::Data<Pay>,
    creds: Credentials,
) -> Result<HttpResponse, ApiError> {
    let s = blocking(move || Ok(pay.settings().settings(&creds.principal(&pay)?)?)).await?;
    Ok(HttpResponse::Ok().json(PaySettingsDto::from(s)))
}

/// Partial update: only the given fields change; `null` clears a nullable field.
#[utoipa::path(
    tag = "Settings",
    request_body = UpdateSettingsRequest,
    security(("apiKeyId" = [], "apiKeySecret" = []), ("session" = [])),
    responses(
        (status = 200, description = "The whole PaySettings after the update", body = PaySettingsDto),
        (status = 400, description = "`invalid_json`, `unknown_field`, `validation_failed`, `invalid_destination_asset`", body = ErrorBody),
        (status = 401, description = "`Unauthorized` or `Invalid pay API credentials`", body = ErrorBody),
        (status = 403, description = "Session without `settings.manage` or CSRF token", body = ErrorBody),
    )
)]
#[put("/api/partner/v1/pay/settings")]
pub async fn put_settings(
    pay: web::Data<Pay>,
    creds: Credentials,
    body: ExactJsonBody,
) -> Result<HttpResponse, ApiError> {
    let s = blocking(move || {
        let principal = creds.principal(&pay)?;
        // The decimals as the exact text sent, never through a float.
        let (request, exact) = body.read::<UpdateSettingsRequest>()?;
        let patch = request.into_patch(&exact)?;
        Ok(pay.settings().update_settings(&principal, patch)?)
    })
    .await?;
    Ok(HttpResponse::Ok().json(PaySettingsDto::from(s)))
}

/// Enabled settlement assets, marking the company's default.
#[utoipa::path(
    tag = "Settings",
    security(("apiKeyId" = [], "apiKeySecret" = []), ("session" = [])),
    responses(
        (status = 200, description = "DestinationAsset list", body = DestinationAssetList),
        (status = 401, description = "`Unauthorized` or `Invalid pay API credentials`", body = ErrorBody),
    )
)]
#[get("/api/partner/v1/pay/destination-assets")]
pub async fn destination_assets(
    pay: web::Data<Pay>,
    creds: Credentials,
) -> Result<HttpResponse, ApiError> {
    let assets =
        blocking(move || Ok(pay.settings().destination_assets(&creds.principal(&pay)?)?)).await?;
    let data = assets
        .into_iter()
        .map(|(a, is_default)| DestinationAssetDto::new(a, is_default))
        .collect();
    Ok(HttpResponse::Ok().json(DestinationAssetList { data }))
}
