//! Customers (contacts): upsert by e-mail, list, and the signed portal URL.

pub mod dto;

use actix_web::{get, post, web, HttpResponse};
use pay_domain::app::Pay;
use pay_domain::customers::UpsertContactInput;

use crate::api::customers::dto::{ContactDto, ContactList, PortalLinkDto, UpsertCustomerRequest};
use crate::edge::credentials::{blocking, Credentials};
use crate::edge::error::{ApiError, ErrorBody};
use crate::edge::json::JsonBody;

/// Create or update a customer by e-mail: 201 when created, 200 when the company's customer
/// with this e-mail (trimmed, compared without case) was updated. Scope `pay:customers:write`.
#[utoipa::path(
    tag = "Customers",
    request_body = UpsertCustomerRequest,
    security(("apiKeyId" = [], "apiKeySecret" = []), ("session" = [])),
    responses(
        (status = 201, description = "Created", body = ContactDto),
        (status = 200, description = "Updated: only the given fields changed", body = ContactDto),
        (status = 400, description = "Invalid body (the field is named)", body = ErrorBody),
        (status = 401, description = "`Unauthorized` or `Invalid pay API credentials` (also a grant without `pay:customers:write`)", body = ErrorBody),
        (status = 403, description = "Session without `settings.manage` or CSRF token", body = ErrorBody),
    )
)]
#[post("/api/partner/v1/pay/customers")]
pub async fn upsert_customer(
    pay: web::Data<Pay>,
    creds: Credentials,
    body: JsonBody,
) -> Result<HttpResponse, ApiError> {
    let upserted = blocking(move || {
        let principal = creds.principal(&pay)?;
        let input = UpsertContactInput::from(body.read::<UpsertCustomerRequest>()?);
        Ok(pay.customers().upsert_customer(&principal, input)?)
    })
    .await?;
    let mut res = if upserted.was_created() {
        HttpResponse::Created()
    } else {
        HttpResponse::Ok()
    };
    Ok(res.json(ContactDto::from(upserted.into_contact())))
}

/// List up to 200 newest customers of the company. Scope `pay:customers:read`.
#[utoipa::path(
    tag = "Customers",
    security(("apiKeyId" = [], "apiKeySecret" = []), ("session" = [])),
    responses(
        (status = 200, description = "Newest first", body = ContactList),
        (status = 401, description = "`Unauthorized` or `Invalid pay API credentials`", body = ErrorBody),
    )
)]
#[get("/api/partner/v1/pay/customers")]
pub async fn list_customers(
    pay: web::Data<Pay>,
    creds: Credentials,
) -> Result<HttpResponse, ApiError> {
    let contacts =
        blocking(move || Ok(pay.customers().list_customers(&creds.principal(&pay)?)?)).await?;
    Ok(HttpResponse::Ok().json(ContactList {
        data: contacts.into_iter().map(Into::into).collect(),
    }))
}

/// A signed customer-portal URL for one customer (by `id` or `uid`), valid 24 hours. Generate
/// it when needed; do not store it. Scope `pay:customers:write` (the URL lets its holder
/// pause and cancel the customer's subscriptions).
#[utoipa::path(
    tag = "Customers",
    params(("customerId" = String, Path, description = "The customer's `id` or `uid`")),
    security(("apiKeyId" = [], "apiKeySecret" = []), ("session" = [])),
    responses(
        (status = 200, description = "The URL in `customer.urls.customerPortal`", body = PortalLinkDto),
        (status = 401, description = "`Unauthorized` or `Invalid pay API credentials`", body = ErrorBody),
        (status = 403, description = "Session without `settings.manage` or CSRF token", body = ErrorBody),
        (status = 404, description = "Unknown, or another company's", body = ErrorBody),
    )
)]
#[post("/api/partner/v1/pay/customers/{customerId}/portal")]
pub async fn customer_portal(
    pay: web::Data<Pay>,
    creds: Credentials,
    customer_id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let link = blocking(move || {
        let principal = creds.principal(&pay)?;
        let by = crate::edge::contact_ref(&customer_id)?;
        Ok(pay.customers().portal_link(&principal, by)?)
    })
    .await?;
    Ok(HttpResponse::Ok()
        .insert_header(("cache-control", "no-store"))
        .json(PortalLinkDto::from(link)))
}
