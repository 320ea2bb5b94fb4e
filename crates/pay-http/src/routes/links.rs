//! Payment links: create, list, detail, status.

use actix_web::{get, patch, post, web, HttpResponse};
use pay_domain::link::{CreateLinkInput, LinkStatus, CREATE_LINK_FIELDS};
use pay_domain::service::Pay;
use pay_domain::DomainError;

use crate::auth::{blocking, Credentials};
use crate::dto::{
    CreatePaymentLinkRequest, PaymentLinkDetailDto, PaymentLinkDto, PaymentLinkList,
    UpdateLinkStatusRequest,
};
use crate::error::{ApiError, ErrorBody};
use crate::json::JsonBody;

fn read_create(body: JsonBody) -> Result<CreateLinkInput, ApiError> {
    let mut f = body.fields(CREATE_LINK_FIELDS)?;
    Ok(CreateLinkInput {
        title: f.opt_string("title")?,
        description: f.opt_string("description")?,
        amount: f.string("amount")?,
        fiat_currency: f.opt_string("fiatCurrency")?,
        currency: f.opt_string("currency")?,
        asset: f.opt_string("asset")?,
        skip_quote_acceptance: f.opt_bool("skipQuoteAcceptance")?,
        fee_paid_by: f.opt_string("feePaidBy")?,
        order_id: f.opt_string("orderId")?,
        invoice_pdf_url: f.opt_string("invoicePdfUrl")?,
        customer_email: f.opt_string("customerEmail")?,
        client_id: f.opt_string("clientId")?,
        return_url: f.opt_string("returnUrl")?,
        success_url: f.opt_string("successUrl")?,
        failure_url: f.opt_string("failureUrl")?,
        expiration_time: f.opt_string("expirationTime")?,
        metadata: f.opt_object("metadata")?,
    })
}

/// Create a payment link.
#[utoipa::path(
    tag = "Payment links",
    request_body = CreatePaymentLinkRequest,
    security(("apiKeyId" = [], "apiKeySecret" = []), ("session" = [])),
    responses(
        (status = 201, description = "The new link", body = PaymentLinkDto),
        (status = 400, description = "Invalid body (`invalid_json`, `unknown_field`, `validation_failed`, `invalid_destination_asset`, `ambiguous_currency`, `missing_destination_asset`)", body = ErrorBody),
        (status = 401, description = "`Unauthorized` or `Invalid pay API credentials`", body = ErrorBody),
        (status = 403, description = "Session without `settings.manage` or CSRF token", body = ErrorBody),
        (status = 413, description = "Body over 64 KiB", body = ErrorBody),
        (status = 415, description = "Not application/json", body = ErrorBody),
    )
)]
#[post("/api/partner/v1/pay/payment-links")]
pub async fn create_link(
    pay: web::Data<Pay>,
    creds: Credentials,
    body: JsonBody,
) -> Result<HttpResponse, ApiError> {
    let p = pay.clone();
    let link = blocking(move || {
        let principal = creds.principal(&p)?;
        let input = read_create(body)?;
        Ok(p.create_link(&principal, input)?)
    })
    .await?;
    Ok(HttpResponse::Created().json(PaymentLinkDto::new(link, &pay.public_pay_url)))
}

/// List up to 200 newest payment links.
#[utoipa::path(
    tag = "Payment links",
    security(("apiKeyId" = [], "apiKeySecret" = []), ("session" = [])),
    responses(
        (status = 200, description = "Newest first; anonymous links excluded", body = PaymentLinkList),
        (status = 401, description = "`Unauthorized` or `Invalid pay API credentials`", body = ErrorBody),
    )
)]
#[get("/api/partner/v1/pay/payment-links")]
pub async fn list_links(pay: web::Data<Pay>, creds: Credentials) -> Result<HttpResponse, ApiError> {
    let p = pay.clone();
    let links = blocking(move || Ok(p.list_links(&creds.principal(&p)?)?)).await?;
    let data = links
        .into_iter()
        .map(|l| PaymentLinkDto::new(l, &pay.public_pay_url))
        .collect();
    Ok(HttpResponse::Ok().json(PaymentLinkList { data }))
}

/// A payment link with its latest session and timeline.
#[utoipa::path(
    tag = "Payment links",
    params(("uid" = String, Path, description = "Public link identifier")),
    security(("apiKeyId" = [], "apiKeySecret" = []), ("session" = [])),
    responses(
        (status = 200, description = "The link", body = PaymentLinkDetailDto),
        (status = 401, description = "`Unauthorized` or `Invalid pay API credentials`", body = ErrorBody),
        (status = 404, description = "Unknown, or another company's", body = ErrorBody),
    )
)]
#[get("/api/partner/v1/pay/payment-links/{uid}")]
pub async fn get_link(
    pay: web::Data<Pay>,
    creds: Credentials,
    uid: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let p = pay.clone();
    let uid = uid.into_inner();
    let link = blocking(move || Ok(p.get_link(&creds.principal(&p)?, &uid)?)).await?;
    Ok(HttpResponse::Ok().json(PaymentLinkDetailDto {
        link: PaymentLinkDto::new(link, &pay.public_pay_url),
        latest_session: None,
        timeline: Vec::new(),
    }))
}

/// Change a link's status: active<->paused, active|paused->archived; the same status is a
/// no-op; nothing leaves archived.
#[utoipa::path(
    tag = "Payment links",
    params(("uid" = String, Path, description = "Public link identifier")),
    request_body = UpdateLinkStatusRequest,
    security(("apiKeyId" = [], "apiKeySecret" = []), ("session" = [])),
    responses(
        (status = 200, description = "The link after the change", body = PaymentLinkDto),
        (status = 400, description = "Invalid body", body = ErrorBody),
        (status = 401, description = "`Unauthorized` or `Invalid pay API credentials`", body = ErrorBody),
        (status = 404, description = "Unknown, or another company's", body = ErrorBody),
        (status = 409, description = "`invalid_status_transition`", body = ErrorBody),
    )
)]
#[patch("/api/partner/v1/pay/payment-links/{uid}")]
pub async fn update_link_status(
    pay: web::Data<Pay>,
    creds: Credentials,
    uid: web::Path<String>,
    body: JsonBody,
) -> Result<HttpResponse, ApiError> {
    let p = pay.clone();
    let uid = uid.into_inner();
    let link = blocking(move || {
        let principal = creds.principal(&p)?;
        let status = body.fields(&["status"])?.string("status")?;
        let to = LinkStatus::parse(&status).ok_or_else(|| {
            DomainError::validation("status", "status must be active, paused or archived")
        })?;
        Ok(p.set_link_status(&principal, &uid, to)?)
    })
    .await?;
    Ok(HttpResponse::Ok().json(PaymentLinkDto::new(link, &pay.public_pay_url)))
}
