//! One semantic error enum for the domain. The HTTP edge maps each variant to exactly one status
//! and `errorCode`; nothing here knows about HTTP.

use crate::links::LinkStatus;

/// Why a use case refused, or failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DomainError {
    /// One input field is wrong (type, range, length or format).
    #[error("{message}")]
    Validation { field: String, message: String },
    /// A field (form field) that the route does not take.
    #[error("unknown field {field}")]
    UnknownField { field: String },
    /// `asset` (or `currency`) names no enabled settlement asset.
    #[error("{message}")]
    InvalidDestinationAsset { field: String, message: String },
    /// `currency` matches several assets and no default settles it.
    #[error("currency {symbol} matches several destination assets; pass `asset`")]
    AmbiguousCurrency { symbol: String },
    /// Neither `asset`, `currency` nor a default asset.
    #[error("no destination asset: pass `asset` or `currency`, or set a default asset")]
    MissingDestinationAsset,
    /// No credential, or half a key pair.
    #[error("Unauthorized")]
    Unauthorized,
    /// A wrong, disabled or insufficient credential.
    #[error("Invalid pay API credentials")]
    InvalidCredentials,
    /// Wrong e-mail or password (the same message for both).
    #[error("Invalid e-mail or password")]
    InvalidLogin,
    /// Too many attempts; retry after this many seconds.
    #[error("Too many attempts; retry later")]
    RateLimited { retry_after_secs: u64 },
    /// A signed-in user cannot access the team or lacks the permission.
    #[error("Forbidden")]
    Forbidden,
    /// Unknown resource, or one of another company (no existence leaks).
    #[error("{kind} not found")]
    NotFound { kind: &'static str },
    /// Key-management route with an unknown `partnerId`.
    #[error("API key not found")]
    ApiKeyNotFound,
    /// A refused state change.
    #[error("cannot change status from {from} to {to}")]
    InvalidTransition { from: LinkStatus, to: LinkStatus },
    /// A refused payment-session move.
    #[error("a {from} session cannot take {event}")]
    SessionTransition { from: &'static str, event: String },
    /// The link is paused, archived or expired: it takes no new payment or request.
    #[error("the payment link is {state}; it takes no new payments")]
    LinkNotActive { state: &'static str },
    /// The merchant has no settlement wallet for the link's asset: payments cannot start.
    #[error(
        "the merchant cannot receive {asset} at the moment; payments to this link cannot start"
    )]
    StartBlocked { asset: String },
    /// A one-time link another payer already paid.
    #[error("this one-time payment link is already paid")]
    LinkAlreadyPaid,
    /// The session already has its refund address: the first one given stays.
    #[error("a refund address was already given for this payment; it cannot be changed")]
    RefundAddressAlreadySet,
    /// `send-request-email` without an e-mail in the body or on the link.
    #[error("no e-mail: pass `email` or set the link's customerEmail")]
    MissingEmail,
    /// A store or crypto adapter failed; the message is for the log only.
    #[error("internal error: {0}")]
    Internal(String),
}

pub type DomainResult<T> = Result<T, DomainError>;

impl DomainError {
    pub fn validation(field: impl Into<String>, message: impl Into<String>) -> Self {
        DomainError::Validation {
            field: field.into(),
            message: message.into(),
        }
    }
}
