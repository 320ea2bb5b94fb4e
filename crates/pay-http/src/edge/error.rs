//! The one place where errors become HTTP: each domain error maps to exactly one status and
//! `errorCode`, plus the edge's own errors (body shape, media type, size). 500s never carry
//! internals; their cause goes to the log, tagged with the request id.

use actix_web::http::{header, StatusCode};
use actix_web::{HttpResponse, ResponseError};
use pay_domain::DomainError;
use serde::Serialize;
use utoipa::ToSchema;

/// The error body of every route.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ErrorBody {
    /// Human-readable message.
    #[schema(example = "amount must have at most 2 decimal places")]
    pub error: String,
    /// Stable machine-readable code.
    #[schema(example = "validation_failed")]
    pub error_code: String,
    /// The input field at fault, when one is.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(example = "amount")]
    pub field: Option<String>,
}

/// An error on its way to the client.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error(transparent)]
    Domain(#[from] DomainError),
    #[error("{0}")]
    InvalidJson(String),
    #[error("unknown field {0}")]
    UnknownField(String),
    #[error("request body is larger than {0} bytes")]
    PayloadTooLarge(usize),
    #[error("content-type must be application/json")]
    UnsupportedMediaType,
    #[error("no route {0}")]
    RouteNotFound(String),
    #[error("method not allowed")]
    MethodNotAllowed,
    #[error("request header fields are too large: at most {fields} fields and {bytes} bytes of names and values")]
    RequestHeaderFieldsTooLarge { fields: usize, bytes: usize },
    #[error("{0}")]
    Unavailable(String),
}

impl ApiError {
    /// Status, `errorCode`, message and field: the one mapping (the gateway's HTML pages use
    /// it too).
    pub(crate) fn parts(&self) -> (StatusCode, &'static str, String, Option<String>) {
        use DomainError as D;
        match self {
            ApiError::Domain(d) => match d {
                D::Validation { field, message } => (
                    StatusCode::BAD_REQUEST,
                    "validation_failed",
                    message.clone(),
                    Some(field.clone()),
                ),
                D::UnknownField { field } => (
                    StatusCode::BAD_REQUEST,
                    "unknown_field",
                    d.to_string(),
                    Some(field.clone()),
                ),
                D::InvalidDestinationAsset { field, message } => (
                    StatusCode::BAD_REQUEST,
                    "invalid_destination_asset",
                    message.clone(),
                    Some(field.clone()),
                ),
                D::AmbiguousCurrency { .. } => (
                    StatusCode::BAD_REQUEST,
                    "ambiguous_currency",
                    d.to_string(),
                    Some("currency".into()),
                ),
                D::MissingDestinationAsset => (
                    StatusCode::BAD_REQUEST,
                    "missing_destination_asset",
                    d.to_string(),
                    None,
                ),
                D::Unauthorized => (
                    StatusCode::UNAUTHORIZED,
                    "unauthorized",
                    d.to_string(),
                    None,
                ),
                D::InvalidCredentials => (
                    StatusCode::UNAUTHORIZED,
                    "invalid_credentials",
                    d.to_string(),
                    None,
                ),
                D::InvalidLogin => (
                    StatusCode::UNAUTHORIZED,
                    "invalid_login",
                    d.to_string(),
                    None,
                ),
                D::RateLimited { .. } => (
                    StatusCode::TOO_MANY_REQUESTS,
                    "rate_limited",
                    d.to_string(),
                    None,
                ),
                D::Forbidden => (StatusCode::FORBIDDEN, "forbidden", d.to_string(), None),
                D::NotFound { .. } => (StatusCode::NOT_FOUND, "not_found", d.to_string(), None),
                D::ApiKeyNotFound => (
                    StatusCode::NOT_FOUND,
                    "api_key_not_found",
                    d.to_string(),
                    None,
                ),
                D::InvalidTransition { .. } => (
                    StatusCode::CONFLICT,
                    "invalid_status_transition",
                    d.to_string(),
                    Some("status".into()),
                ),
                D::LinkNotActive { .. } => {
                    (StatusCode::CONFLICT, "link_not_active", d.to_string(), None)
                }
                D::StartBlocked { .. } => (
                    StatusCode::CONFLICT,
                    "start_blocked_missing_company_wallet",
                    d.to_string(),
                    None,
                ),
                D::LinkAlreadyPaid => {
                    (StatusCode::CONFLICT, "link_not_active", d.to_string(), None)
                }
                D::RefundAddressAlreadySet => (
                    StatusCode::CONFLICT,
                    "refund_address_already_set",
                    d.to_string(),
                    None,
                ),
                D::MissingEmail => (
                    StatusCode::BAD_REQUEST,
                    "missing_email",
                    d.to_string(),
                    Some("email".into()),
                ),
                D::SessionTransition { .. } => (
                    StatusCode::CONFLICT,
                    "invalid_status_transition",
                    d.to_string(),
                    None,
                ),
                D::Internal(_) => (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "internal_error",
                    "Internal server error".into(),
                    None,
                ),
            },
            ApiError::InvalidJson(m) => (StatusCode::BAD_REQUEST, "invalid_json", m.clone(), None),
            ApiError::UnknownField(f) => (
                StatusCode::BAD_REQUEST,
                "unknown_field",
                format!("unknown field {f}"),
                Some(f.clone()),
            ),
            ApiError::PayloadTooLarge(_) => (
                StatusCode::PAYLOAD_TOO_LARGE,
                "payload_too_large",
                self.to_string(),
                None,
            ),
            ApiError::UnsupportedMediaType => (
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                self.to_string(),
                None,
            ),
            ApiError::RouteNotFound(_) => {
                (StatusCode::NOT_FOUND, "not_found", "Not found".into(), None)
            }
            ApiError::MethodNotAllowed => (
                StatusCode::METHOD_NOT_ALLOWED,
                "method_not_allowed",
                "Method not allowed".into(),
                None,
            ),
            ApiError::RequestHeaderFieldsTooLarge { .. } => (
                StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
                "request_header_fields_too_large",
                self.to_string(),
                None,
            ),
            ApiError::Unavailable(m) => (
                StatusCode::SERVICE_UNAVAILABLE,
                "unavailable",
                m.clone(),
                None,
            ),
        }
    }

    /// Logs the cause of a server-side failure (never of a client error, which is expected).
    pub fn log(&self) {
        if let ApiError::Domain(DomainError::Internal(cause)) = self {
            tracing::error!(%cause, "request failed");
        }
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        self.parts().0
    }

    fn error_response(&self) -> HttpResponse {
        let (status, code, message, field) = self.parts();
        let mut res = HttpResponse::build(status);
        if let ApiError::Domain(DomainError::RateLimited { retry_after_secs }) = self {
            res.insert_header((header::RETRY_AFTER, retry_after_secs.to_string()));
        }
        if status == StatusCode::UNAUTHORIZED {
            res.insert_header((header::WWW_AUTHENTICATE, "PayKey realm=\"pay\""));
        }
        res.json(ErrorBody {
            error: message,
            error_code: code.into(),
            field,
        })
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

impl From<crate::edge::body::BodyError> for ApiError {
    fn from(e: crate::edge::body::BodyError) -> Self {
        match e {
            crate::edge::body::BodyError::TooLarge => {
                ApiError::PayloadTooLarge(crate::edge::body::MAX_BODY_BYTES)
            }
            crate::edge::body::BodyError::Unreadable(why) => ApiError::InvalidJson(why),
        }
    }
}
