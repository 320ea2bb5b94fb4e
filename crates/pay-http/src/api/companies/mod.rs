//! Dashboard and key-management routes: the signed-in user's teams and their API keys.
//! These are the only routes that take a company id, and only from a signed-in session.

pub mod dto;

use actix_web::{delete, get, patch, post, web, HttpResponse};
use pay_domain::app::Pay;
use pay_domain::kernel::ids::PartnerId;
use pay_domain::tenancy::keys::NewIntegrationInput;

use crate::api::companies::dto::{
    CompanyDto, CompanyList, CreateIntegrationRequest, CreateIntegrationResponse,
    CreatedIntegrationDto, IntegrationDto, IntegrationList, UpdateIntegrationRequest,
};
use crate::edge::company_id;
use crate::edge::credentials::{blocking, Credentials};
use crate::edge::error::{ApiError, ErrorBody};
use crate::edge::json::JsonBody;

/// A malformed `{partnerId}` cannot exist: it becomes an id no record has, so the team check
/// still runs first and the answer is the same 404 as for an unknown id.
fn partner_id(s: &str) -> PartnerId {
    PartnerId::parse(s).unwrap_or(PartnerId(uuid::Uuid::nil()))
}

/// Teams available to the signed-in user.
#[utoipa::path(
    tag = "Companies",
    security(("session" = [])),
    responses(
        (status = 200, body = CompanyList),
        (status = 401, description = "`Unauthorized`: no signed-in session", body = ErrorBody),
    )
)]
#[get("/api/partner/v1/companies")]
pub async fn list_companies(
    pay: web::Data<Pay>,
    creds: Credentials,
) -> Result<HttpResponse, ApiError> {
    let teams = blocking(move || Ok(pay.tenancy().companies(&creds.signed_in(&pay)?)?)).await?;
    Ok(HttpResponse::Ok().json(CompanyList {
        data: teams.into_iter().map(CompanyDto::from).collect(),
    }))
}

/// Create an API key pair; the secret is returned this once.
#[utoipa::path(
    tag = "Integrations",
    params(("companyId" = String, Path)),
    request_body = CreateIntegrationRequest,
    security(("session" = [])),
    responses(
        (status = 201, body = CreateIntegrationResponse),
        (status = 400, description = "Invalid body", body = ErrorBody),
        (status = 401, description = "`Unauthorized`", body = ErrorBody),
        (status = 403, description = "`Forbidden`: not a member, no `settings.manage`, or no CSRF token", body = ErrorBody),
    )
)]
#[post("/api/partner/v1/companies/{companyId}/integrations")]
pub async fn create_integration(
    pay: web::Data<Pay>,
    creds: Credentials,
    path: web::Path<String>,
    body: JsonBody,
) -> Result<HttpResponse, ApiError> {
    let (integration, secret) = blocking(move || {
        let signed_in = creds.signed_in(&pay)?;
        let company = company_id(&path)?;
        let input = NewIntegrationInput::from(body.read::<CreateIntegrationRequest>()?);
        Ok(pay
            .tenancy()
            .create_integration(&signed_in, company, input)?)
    })
    .await?;
    Ok(HttpResponse::Created().json(CreateIntegrationResponse {
        integration: CreatedIntegrationDto {
            integration: IntegrationDto::from(integration),
            key_secret: secret.expose().to_owned(),
        },
    }))
}

/// The team's API keys (never their secrets).
#[utoipa::path(
    tag = "Integrations",
    params(("companyId" = String, Path)),
    security(("session" = [])),
    responses(
        (status = 200, body = IntegrationList),
        (status = 401, description = "`Unauthorized`", body = ErrorBody),
        (status = 403, description = "`Forbidden`", body = ErrorBody),
    )
)]
#[get("/api/partner/v1/companies/{companyId}/integrations")]
pub async fn list_integrations(
    pay: web::Data<Pay>,
    creds: Credentials,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let list = blocking(move || {
        let signed_in = creds.signed_in(&pay)?;
        Ok(pay
            .tenancy()
            .list_integrations(&signed_in, company_id(&path)?)?)
    })
    .await?;
    Ok(HttpResponse::Ok().json(IntegrationList {
        data: list.into_iter().map(IntegrationDto::from).collect(),
    }))
}

/// Enable or disable an API key.
#[utoipa::path(
    tag = "Integrations",
    params(("companyId" = String, Path), ("partnerId" = String, Path)),
    request_body = UpdateIntegrationRequest,
    security(("session" = [])),
    responses(
        (status = 200, body = IntegrationDto),
        (status = 400, description = "Invalid body", body = ErrorBody),
        (status = 401, description = "`Unauthorized`", body = ErrorBody),
        (status = 403, description = "`Forbidden`", body = ErrorBody),
        (status = 404, description = "`API key not found`", body = ErrorBody),
    )
)]
#[patch("/api/partner/v1/companies/{companyId}/integrations/{partnerId}")]
pub async fn update_integration(
    pay: web::Data<Pay>,
    creds: Credentials,
    path: web::Path<(String, String)>,
    body: JsonBody,
) -> Result<HttpResponse, ApiError> {
    let integration = blocking(move || {
        let signed_in = creds.signed_in(&pay)?;
        let company = company_id(&path.0)?;
        let enabled = body.read::<UpdateIntegrationRequest>()?.enabled;
        Ok(pay.tenancy().set_integration_enabled(
            &signed_in,
            company,
            partner_id(&path.1),
            enabled,
        )?)
    })
    .await?;
    Ok(HttpResponse::Ok().json(IntegrationDto::from(integration)))
}

/// Delete an API key.
#[utoipa::path(
    tag = "Integrations",
    params(("companyId" = String, Path), ("partnerId" = String, Path)),
    security(("session" = [])),
    responses(
        (status = 204, description = "Deleted"),
        (status = 401, description = "`Unauthorized`", body = ErrorBody),
        (status = 403, description = "`Forbidden`", body = ErrorBody),
        (status = 404, description = "`API key not found`", body = ErrorBody),
    )
)]
#[delete("/api/partner/v1/companies/{companyId}/integrations/{partnerId}")]
pub async fn delete_integration(
    pay: web::Data<Pay>,
    creds: Credentials,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, ApiError> {
    blocking(move || {
        let signed_in = creds.signed_in(&pay)?;
        let company = company_id(&path.0)?;
        Ok(pay
            .tenancy()
            .delete_integration(&signed_in, company, partner_id(&path.1))?)
    })
    .await?;
    Ok(HttpResponse::NoContent().finish())
}
