//! Payment links: create, list, detail, status.

use actix_web::{get, patch, post, web, HttpRequest, HttpResponse};
use pay_domain::link::{
    Branding, CreateAnonymousLinkInput, CreateLinkInput, LinkStatus, SettlementPriority,
    ANONYMOUS_LINK_EXTRA_FIELDS, CREATE_LINK_FIELDS,
};
use pay_domain::service::Pay;
use pay_domain::DomainError;
use serde_json::Value;

use crate::auth::{blocking, Credentials};
use crate::dto::{
    AnonymousLinkDto, CreateAnonymousLinkRequest, CreatePaymentLinkRequest, PaymentLinkDetailDto,
    PaymentLinkDto, PaymentLinkList, UpdateLinkStatusRequest,
};
use crate::error::{ApiError, ErrorBody};
use crate::json::{Fields, JsonBody};

fn read_create(body: JsonBody) -> Result<CreateLinkInput, ApiError> {
    let mut f = body.fields(CREATE_LINK_FIELDS)?;
    read_link_fields(&mut f)
}

fn read_link_fields(f: &mut Fields) -> Result<CreateLinkInput, ApiError> {
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

fn invalid(field: &str, want: &str) -> ApiError {
    ApiError::Domain(DomainError::validation(
        field,
        format!("{field} must be {want}"),
    ))
}

/// An object with only the given keys (the first other one is `unknown_field`, by its path).
fn strict_object<'a>(
    v: &'a Value,
    path: &str,
    allowed: &[&str],
) -> Result<&'a serde_json::Map<String, Value>, ApiError> {
    let map = v
        .as_object()
        .ok_or_else(|| invalid(path, "a JSON object"))?;
    if let Some(k) = map.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(ApiError::UnknownField(format!("{path}.{k}")));
    }
    Ok(map)
}

fn opt_str(
    map: &serde_json::Map<String, Value>,
    key: &str,
    path: &str,
) -> Result<Option<String>, ApiError> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(invalid(&format!("{path}.{key}"), "a string")),
    }
}

/// The anonymous-link body: the link fields plus `settlement`, `branding` and `webhookUrl`.
fn read_anonymous(body: JsonBody) -> Result<CreateAnonymousLinkInput, ApiError> {
    let allowed: Vec<&str> = CREATE_LINK_FIELDS
        .iter()
        .chain(ANONYMOUS_LINK_EXTRA_FIELDS)
        .copied()
        .collect();
    let mut f = body.fields(&allowed)?;
    let settlement = f.opt_value("settlement");
    let branding = f.opt_value("branding");
    let webhook_url = f.opt_string("webhookUrl")?;
    let link = read_link_fields(&mut f)?;
    let settlement = settlement.ok_or_else(|| {
        ApiError::Domain(DomainError::validation(
            "settlement.priorities",
            "settlement.priorities is required",
        ))
    })?;
    let s = strict_object(&settlement, "settlement", &["priorities"])?;
    let list = s
        .get("priorities")
        .and_then(Value::as_array)
        .ok_or_else(|| invalid("settlement.priorities", "an array of {asset, address}"))?;
    let mut priorities = Vec::with_capacity(list.len());
    for (i, p) in list.iter().enumerate() {
        let path = format!("settlement.priorities[{i}]");
        let o = strict_object(p, &path, &["asset", "address"])?;
        let asset = opt_str(o, "asset", &path)?
            .ok_or_else(|| invalid(&format!("{path}.asset"), "a string"))?;
        let address = opt_str(o, "address", &path)?
            .ok_or_else(|| invalid(&format!("{path}.address"), "a string"))?;
        priorities.push(SettlementPriority { asset, address });
    }
    let branding = match branding {
        None | Some(Value::Null) => Branding::default(),
        Some(v) => {
            let o = strict_object(&v, "branding", &["name", "logoUrl", "theme"])?;
            Branding {
                name: opt_str(o, "name", "branding")?,
                logo_url: opt_str(o, "logoUrl", "branding")?,
                theme: opt_str(o, "theme", "branding")?,
            }
        }
    };
    Ok(CreateAnonymousLinkInput {
        link,
        priorities,
        branding,
        webhook_url,
    })
}

async fn anonymous(
    pay: web::Data<Pay>,
    req: HttpRequest,
    body: JsonBody,
) -> Result<HttpResponse, ApiError> {
    let addr = crate::routes::client_addr(&req);
    let p = pay.clone();
    let (link, secret) = blocking(move || {
        let input = read_anonymous(body)?;
        Ok(p.create_anonymous_link(input, &addr)?)
    })
    .await?;
    Ok(HttpResponse::Created()
        .insert_header(("cache-control", "no-store"))
        .json(AnonymousLinkDto {
            link: PaymentLinkDto::new(link, &pay.public_pay_url),
            webhook_secret: secret.map(|s| s.expose().to_owned()),
        }))
}

/// Create an anonymous one-time link: no account; it settles to the first of your
/// `settlement.priorities` the service can settle, is branded with `branding`, and reports to
/// `webhookUrl` with a signing secret returned only here. 30 per minute per client address.
#[utoipa::path(
    tag = "Payment links",
    request_body = CreateAnonymousLinkRequest,
    responses(
        (status = 201, description = "The link, and `webhookSecret` when a `webhookUrl` was given", body = AnonymousLinkDto),
        (status = 400, description = "Invalid body; `invalid_destination_asset` when no priority can be settled", body = ErrorBody),
        (status = 429, description = "Too many from this address; see `Retry-After`", body = ErrorBody),
    )
)]
#[post("/api/public/anonymous-payment-links")]
pub async fn create_anonymous_link(
    pay: web::Data<Pay>,
    req: HttpRequest,
    body: JsonBody,
) -> Result<HttpResponse, ApiError> {
    anonymous(pay, req, body).await
}

/// Create a payment link.
#[utoipa::path(
    tag = "Payment links",
    request_body = CreatePaymentLinkRequest,
    security(("apiKeyId" = [], "apiKeySecret" = []), ("session" = [])),
    responses(
        (status = 201, description = "The new link (without any credential: an anonymous one-time link, as `POST /api/public/anonymous-payment-links`)", body = PaymentLinkDto),
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
    req: HttpRequest,
    body: JsonBody,
) -> Result<HttpResponse, ApiError> {
    // Without any credential the spec creates an anonymous one-time link. Half a key pair, a
    // bad session or an `Authorization` header is still a credential, and fails as one.
    if matches!(creds, Credentials::None) {
        return anonymous(pay, req, body).await;
    }
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
    let detail = blocking(move || Ok(p.link_detail(&creds.principal(&p)?, &uid)?)).await?;
    Ok(HttpResponse::Ok().json(PaymentLinkDetailDto {
        link: PaymentLinkDto::new(detail.link, &pay.public_pay_url),
        latest_session: detail.latest_session.map(Into::into),
        timeline: detail.timeline.into_iter().map(Into::into).collect(),
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
