//! The gateway form: `POST /gateway/pay/{payKeyId}` takes a merchant's HTML form straight from
//! the customer's browser and answers 303 to the hosted checkout. A browser shows whatever comes
//! back, so every error is a small self-contained HTML page on the base layout (no external
//! assets, every value escaped) with the status, the `errorCode` and the field at fault,
//! instead of JSON.

use actix_web::http::{header, StatusCode};
use actix_web::{post, web, HttpRequest, HttpResponse};
use askama::Template;
use pay_domain::app::Pay;
use pay_domain::kernel::error::RateLimited;
use pay_domain::tenancy::Denied;

use crate::edge::credentials::blocking;
use crate::edge::error::ApiError;
use crate::edge::form::{FormBody, FormError, MAX_FORM_BYTES};
use crate::pages::layout::{html, Layout, NONCE_LEN};

/// The form's fields, for the OpenAPI document (the handler reads the pairs itself). Besides
/// these, any number of `metadata[<key>]` string fields.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub struct GatewayFormFields {
    /// A positive decimal string in the settlement asset (at most its decimals).
    #[schema(example = "24.00")]
    pub amount: String,
    #[schema(nullable = false, example = "USDC")]
    pub currency: Option<String>,
    #[schema(
        nullable = false,
        example = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
    )]
    pub asset: Option<String>,
    #[schema(nullable = false, example = "Order 1042")]
    pub title: Option<String>,
    #[schema(nullable = false)]
    pub description: Option<String>,
    #[schema(nullable = false, example = "1042")]
    pub order_id: Option<String>,
    #[schema(nullable = false)]
    pub customer_email: Option<String>,
    #[schema(nullable = false)]
    pub client_id: Option<String>,
    #[schema(nullable = false, example = "https://shop.example/orders/1042/thanks")]
    pub success_url: Option<String>,
    #[schema(nullable = false)]
    pub failure_url: Option<String>,
    #[schema(nullable = false)]
    pub return_url: Option<String>,
}

/// The one `Origin` header, or `None` when there is none. Several are refused as a bad one.
fn origin(req: &HttpRequest) -> Option<String> {
    let mut all = req.headers().get_all(header::ORIGIN);
    let first = all.next()?;
    if all.next().is_some() {
        return Some(String::new());
    }
    Some(first.to_str().unwrap_or_default().to_owned())
}

/// Create a payment link from a merchant's HTML form and send the customer to checkout.
///
/// The form posts from the customer's browser with the integration's public form key
/// (`form_key_id`, `pk_pay_...`) in the path. The browser's `Origin` must be exactly one of the
/// integration's `allowedOrigins` (scheme, host and port); a missing or `null` Origin is
/// refused. Fields: `amount` (required), `currency`, `asset`, `title`, `description`,
/// `orderId`, `customerEmail`, `clientId`, `successUrl`, `failureUrl`, `returnUrl` and any
/// number of `metadata[<key>]` (string values; the metadata limits apply). Blank fields are not
/// given; a repeated field is `validation_failed`; any other name is `unknown_field`. The link
/// is created as the integration's API key would create it. Errors are HTML pages whose
/// `<main>` carries `data-error-code` and `data-field`.
#[utoipa::path(
    tag = "Gateway form",
    params(("payKeyId" = String, Path, description = "The integration's public form key (`form_key_id`, `pk_pay_...`)")),
    request_body(
        content_type = "application/x-www-form-urlencoded",
        description = "The form's fields, plus any number of `metadata[<key>]` string fields",
        content = GatewayFormFields,
    ),
    responses(
        (status = 303, description = "Link created; `Location` is its hosted checkout (`publicUrl`)",
            headers(("Location" = String, description = "The link's publicUrl"))),
        (status = 400, description = "HTML page: `unknown_field`, `validation_failed` (the field is named), `invalid_destination_asset`, `ambiguous_currency`, `missing_destination_asset`, `invalid_form`", content_type = "text/html", body = String),
        (status = 403, description = "HTML page: `Origin` missing or not in the integration's `allowedOrigins`", content_type = "text/html", body = String),
        (status = 404, description = "HTML page: unknown or disabled form key (one answer for both)", content_type = "text/html", body = String),
        (status = 413, description = "HTML page: body over 64 KiB", content_type = "text/html", body = String),
        (status = 415, description = "HTML page: not application/x-www-form-urlencoded", content_type = "text/html", body = String),
        (status = 429, description = "HTML page: too many posts from this address or to this form key (`Retry-After` in seconds)", content_type = "text/html", body = String),
        (status = 500, description = "HTML page: internal error", content_type = "text/html", body = String),
    )
)]
#[post("/gateway/pay/{payKeyId}")]
pub async fn gateway_pay(
    pay: web::Data<Pay>,
    req: HttpRequest,
    key: web::Path<String>,
    body: FormBody,
) -> HttpResponse {
    let origin = origin(&req);
    let addr = crate::edge::client_addr(&req);
    let key = key.into_inner();
    let p = pay.clone();
    let shown_origin = origin.clone();
    // The key and the Origin come before the body, as credentials do on the JSON routes.
    let nonce = pay.random_alphanumeric(NONCE_LEN);
    let result = blocking(move || {
        let form = p
            .links()
            .open_gateway_form(&key, origin.as_deref(), &addr)?;
        let fields = match body.0 {
            Ok(fields) => fields,
            Err(e) => return Ok(Err(e)),
        };
        let link = p.links().create_link_for_form(&form, fields)?;
        let base = p.tenancy().pay_base(link.company_id)?;
        Ok(Ok(link.public_url(&base)))
    })
    .await;
    match result {
        Ok(Ok(public_url)) => HttpResponse::SeeOther()
            .insert_header((header::LOCATION, public_url))
            .insert_header((header::CACHE_CONTROL, "no-store"))
            .finish(),
        Ok(Err(e)) => form_error_page(&nonce, &e),
        Err(e) => api_error_page(&nonce, &e, shown_origin.as_deref()),
    }
}

fn form_error_page(nonce: &str, e: &FormError) -> HttpResponse {
    match e {
        FormError::NotAForm => page(&Page {
            nonce,
            status: StatusCode::UNSUPPORTED_MEDIA_TYPE,
            code: "unsupported_media_type",
            heading: "This is not a form submission",
            message: "Send the form as application/x-www-form-urlencoded, the default encoding of \
                      an HTML form (not multipart/form-data or text/plain).",
            field: None,
        }),
        FormError::TooLarge => page(&Page {
            nonce,
            status: StatusCode::PAYLOAD_TOO_LARGE,
            code: "payload_too_large",
            heading: "The form is too large",
            message: &format!("The form body must be at most {MAX_FORM_BYTES} bytes."),
            field: None,
        }),
        FormError::Malformed(why) => page(&Page {
            nonce,
            status: StatusCode::BAD_REQUEST,
            code: "invalid_form",
            heading: "The form could not be read",
            message: &format!(
                "{why}. Serve the page that holds the form as UTF-8, or add \
                 accept-charset=\"UTF-8\" to the form."
            ),
            field: None,
        }),
    }
}

fn api_error_page(nonce: &str, e: &ApiError, origin: Option<&str>) -> HttpResponse {
    let (status, code, message, field) = e.parts();
    let forbidden;
    let (heading, message) = match e {
        ApiError::NotFound(_) => (
            "Payment form not found",
            "This payment form key is unknown or no longer active. Please contact the shop.",
        ),
        ApiError::Denied(Denied::Forbidden) => {
            forbidden = match origin {
                None => "The browser sent no Origin header, so the page that holds this form \
                         cannot be checked against the form key's allowed origins."
                    .to_owned(),
                Some(o) => format!(
                    "The page that sent this form (origin \"{o}\") is not one of the allowed \
                     origins of this payment form key."
                ),
            };
            (
                "This page may not use this payment form",
                forbidden.as_str(),
            )
        }
        _ if status.is_server_error() => (
            "Something went wrong",
            "The payment could not be started. Please try again in a moment.",
        ),
        _ => ("The payment form has an error", message.as_str()),
    };
    let mut res = page(&Page {
        nonce,
        status,
        code,
        heading,
        message,
        field: field.as_deref(),
    });
    if let ApiError::RateLimited(RateLimited { retry_after_secs }) = e {
        res.headers_mut().insert(
            header::RETRY_AFTER,
            header::HeaderValue::from(*retry_after_secs),
        );
    }
    res
}

struct Page<'a> {
    nonce: &'a str,
    status: StatusCode,
    code: &'a str,
    heading: &'a str,
    message: &'a str,
    field: Option<&'a str>,
}

/// The error page (`templates/gateway.html`) on the base layout.
#[derive(Template)]
#[template(path = "gateway.html")]
struct ErrorPage<'a> {
    layout: Layout<'a>,
    heading: &'a str,
    status: u16,
    code: &'a str,
    message: &'a str,
    field: Option<&'a str>,
}

/// Renders an error page: self-contained (the inline style sheet under the nonce, nothing
/// else), `lang`, a title, one heading, the field at fault, the code and status.
fn page(p: &Page<'_>) -> HttpResponse {
    let title = format!("{} - Payment", p.heading);
    let html = html(&ErrorPage {
        layout: Layout::card(p.nonce, &title),
        heading: p.heading,
        status: p.status.as_u16(),
        code: p.code,
        message: p.message,
        field: p.field,
    });
    let mut res = HttpResponse::build(p.status);
    res.insert_header((header::CONTENT_TYPE, "text/html; charset=utf-8"))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((header::REFERRER_POLICY, "no-referrer"))
        .insert_header((
            header::CONTENT_SECURITY_POLICY,
            format!(
                "default-src 'none'; style-src 'nonce-{}'; base-uri 'none'; \
                 form-action 'none'; frame-ancestors 'none'",
                p.nonce
            ),
        ));
    res.body(html)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_escape_every_value() {
        let res = page(&Page {
            nonce: "n0",
            status: StatusCode::BAD_REQUEST,
            code: "validation_failed",
            heading: "<h>",
            message: "<script>alert(\"x\")</script> & 'y'",
            field: Some("metadata[<img src=x>]"),
        });
        assert_eq!(res.status(), StatusCode::BAD_REQUEST);
        let csp = res
            .headers()
            .get(header::CONTENT_SECURITY_POLICY)
            .unwrap()
            .to_str()
            .unwrap();
        assert!(csp.contains("style-src 'nonce-n0';"), "{csp}");
        assert!(!csp.contains("unsafe-inline"), "{csp}");
        let body = actix_web::body::MessageBody::try_into_bytes(res.into_body()).unwrap();
        let html = std::str::from_utf8(&body).unwrap();
        assert!(!html.contains("<script>"), "{html}");
        assert!(!html.contains("<img"), "{html}");
        assert!(!html.contains("<h>"), "{html}");
        assert!(
            html.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;")
        );
        assert!(html.contains("data-field=\"metadata[&lt;img src=x&gt;]\""));
        assert!(html.contains("<html lang=\"en\""));
        assert!(html.contains("<style nonce=\"n0\">"), "{html}");
        assert!(
            html.contains("<title>&lt;h&gt; - Payment</title>"),
            "{html}"
        );
    }
}
