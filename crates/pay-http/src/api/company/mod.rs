//! The company identity (`company:read`): the company the credential resolves to, with no
//! company id in the path.

pub mod dto;

use actix_web::{get, web, HttpResponse};
use pay_domain::app::Pay;

use crate::api::company::dto::CompanyIdentityDto;
use crate::edge::credentials::{blocking, Credentials};
use crate::edge::error::{ApiError, ErrorBody};

/// The company the credential acts for: an API key's team, a signed-in session's company, or
/// the company an OAuth grant was approved for (scope `company:read`).
#[utoipa::path(
    tag = "Company",
    security(("apiKeyId" = [], "apiKeySecret" = []), ("session" = [])),
    responses(
        (status = 200, description = "The company", body = CompanyIdentityDto),
        (status = 401, description = "`Unauthorized` or `Invalid pay API credentials` (an OAuth token without `company:read` too)", body = ErrorBody),
    )
)]
#[get("/api/partner/v1/pay/company")]
pub async fn get_company(
    pay: web::Data<Pay>,
    creds: Credentials,
) -> Result<HttpResponse, ApiError> {
    let company = blocking(move || Ok(pay.tenancy().company(&creds.principal(&pay)?)?)).await?;
    Ok(HttpResponse::Ok().json(CompanyIdentityDto::from(company)))
}
