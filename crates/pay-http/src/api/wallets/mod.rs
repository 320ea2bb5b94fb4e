//! The merchant's settlement wallets for the chain processor: the EVM extended public key
//! whose children are the deposit addresses.

pub mod dto;

use actix_web::{delete, get, put, web, HttpResponse};
use pay_domain::app::Pay;

use crate::api::wallets::dto::{EvmWalletDto, PutEvmWalletRequest};
use crate::edge::credentials::{blocking, Credentials};
use crate::edge::error::{ApiError, ErrorBody};
use crate::edge::json::JsonBody;

/// Sets the EVM wallet's extended public key (replaces the key for new sessions; sessions
/// already started keep their addresses).
#[utoipa::path(
    tag = "Settings",
    request_body = PutEvmWalletRequest,
    security(("apiKeyId" = [], "apiKeySecret" = []), ("session" = [])),
    responses(
        (status = 200, description = "The wallet with its first addresses", body = EvmWalletDto),
        (status = 400, description = "`invalid_json`, `unknown_field`, `validation_failed` (field `xpub`), `private_key_refused` (field `xpub`: an extended private key, never stored)", body = ErrorBody),
        (status = 401, description = "`Unauthorized` or `Invalid pay API credentials`", body = ErrorBody),
        (status = 403, description = "Session without `settings.manage` or CSRF token", body = ErrorBody),
    )
)]
#[put("/api/partner/v1/pay/settlement-wallets/evm")]
pub async fn put_evm_wallet(
    pay: web::Data<Pay>,
    creds: Credentials,
    body: JsonBody,
) -> Result<HttpResponse, ApiError> {
    let w = blocking(move || {
        let principal = creds.principal(&pay)?;
        let request = body.read::<PutEvmWalletRequest>()?;
        Ok(pay.chains().put_wallet(&principal, &request.xpub)?)
    })
    .await?;
    Ok(HttpResponse::Ok().json(EvmWalletDto::from(w)))
}

/// The EVM wallet.
#[utoipa::path(
    tag = "Settings",
    security(("apiKeyId" = [], "apiKeySecret" = []), ("session" = [])),
    responses(
        (status = 200, description = "The wallet with its first addresses", body = EvmWalletDto),
        (status = 401, description = "`Unauthorized` or `Invalid pay API credentials`", body = ErrorBody),
        (status = 404, description = "`not_found`: no EVM wallet set", body = ErrorBody),
    )
)]
#[get("/api/partner/v1/pay/settlement-wallets/evm")]
pub async fn get_evm_wallet(
    pay: web::Data<Pay>,
    creds: Credentials,
) -> Result<HttpResponse, ApiError> {
    let w = blocking(move || Ok(pay.chains().wallet(&creds.principal(&pay)?)?)).await?;
    Ok(HttpResponse::Ok().json(EvmWalletDto::from(w)))
}

/// Removes the EVM wallet: starts on EVM assets are refused until one is set again.
#[utoipa::path(
    tag = "Settings",
    security(("apiKeyId" = [], "apiKeySecret" = []), ("session" = [])),
    responses(
        (status = 204, description = "Removed"),
        (status = 401, description = "`Unauthorized` or `Invalid pay API credentials`", body = ErrorBody),
        (status = 403, description = "Session without `settings.manage` or CSRF token", body = ErrorBody),
        (status = 404, description = "`not_found`: no EVM wallet set", body = ErrorBody),
    )
)]
#[delete("/api/partner/v1/pay/settlement-wallets/evm")]
pub async fn delete_evm_wallet(
    pay: web::Data<Pay>,
    creds: Credentials,
) -> Result<HttpResponse, ApiError> {
    blocking(move || Ok(pay.chains().delete_wallet(&creds.principal(&pay)?)?)).await?;
    Ok(HttpResponse::NoContent().finish())
}
