//! Customers (contacts): upsert by e-mail, list, and the signed portal URL.

pub mod dto;

use actix_web::http::StatusCode;
use actix_web::{get, post, web, HttpResponse};
use pay_domain::app::Pay;
use pay_domain::customers::{UpsertContactInput, Upserted};

use crate::api::customers::dto::{ContactDto, ContactList, PortalLinkDto, UpsertCustomerRequest};
use crate::edge::credentials::{blocking, Credentials};
use crate::edge::error::{ApiError, ErrorBody};
use crate::edge::idempotency::{json_answer, reply, Keyed, CONFLICT_DOC, KEY_DOC};

/// Create or update a customer by e-mail: 201 when created, 200 when the company's customer
/// with this e-mail (trimmed, compared without case) was updated. Scope `pay:customers:write`.
#[utoipa::path(
    tag = "Customers",
    request_body = UpsertCustomerRequest,
    params(("Idempotency-Key" = Option<String>, Header, min_length = 1, max_length = 255, pattern = "^[ -~]*[!-~][ -~]*$", description = KEY_DOC)),
    security(("apiKeyId" = [], "apiKeySecret" = []), ("session" = [])),
    responses(
        (status = 201, description = "Created; a replay carries `Idempotent-Replayed: true` (the first answer, status and body)", body = ContactDto),
        (status = 200, description = "Updated: only the given fields changed", body = ContactDto),
        (status = 400, description = "Invalid body (the field is named); `validation_failed` on `Idempotency-Key`", body = ErrorBody),
        (status = 401, description = "`Unauthorized` or `Invalid pay API credentials` (also a grant without `pay:customers:write`)", body = ErrorBody),
        (status = 403, description = "Session without `settings.manage` or CSRF token", body = ErrorBody),
        (status = 409, description = CONFLICT_DOC, body = ErrorBody),
    )
)]
#[post("/api/partner/v1/pay/customers")]
pub async fn upsert_customer(
    pay: web::Data<Pay>,
    creds: Credentials,
    body: Keyed,
) -> Result<HttpResponse, ApiError> {
    blocking(move || {
        let principal = creds.principal(&pay)?;
        let body = body.open()?;
        let input = UpsertContactInput::from(body.read::<UpsertCustomerRequest>()?);
        let render = |upserted: &Upserted| {
            let status = if upserted.was_created() {
                StatusCode::CREATED
            } else {
                StatusCode::OK
            };
            json_answer(status, &ContactDto::from(upserted.contact().clone()))
        };
        let answer =
            pay.customers()
                .upsert_customer_keyed(&principal, input, body.call(&render)?)?;
        reply(answer, &render)
    })
    .await?
    .response()
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
