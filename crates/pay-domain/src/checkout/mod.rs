//! Checkout: a payer's payment sessions on a link, their status machine, quotes, the
//! underpayment tolerance, expiry, and what the processor reports.

mod error;
pub mod machine;
mod model;
pub mod ports;
pub mod quote;
mod service;
mod settlement;
mod timeline;
pub mod tolerance;

pub use error::{
    CheckoutError, LinkAlreadyPaid, PaymentUnderWay, PriceUnavailable, RefundAddressAlreadySet,
    SessionTransition, StartBlocked,
};
pub use model::*;
pub(crate) use service::link_not_found;
pub use service::summary::{Collected, PaymentsSummary, SUMMARY_DAYS};
pub use service::{
    CheckoutAdapters, CheckoutService, CheckoutView, DueWorkReport, LinkDetail, Resolution,
    DUE_BATCH, SESSION_NOT_FOUND,
};
pub use settlement::{ChainTransfer, RefundReason, ResolutionRecord, Settlement};
pub use timeline::{DepositsLeftReason, QuoteFacts, TimelineEvent, TimelineFacts, TimelineKind};
