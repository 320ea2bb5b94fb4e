//! Webhooks: what an event is, how it is wrapped (the spec's envelopes), who receives it
//! (callback owners), and the life of one delivery (attempts, retries, final state). Sending,
//! signing and encryption are adapters behind the ports in `ports.rs`; the decisions are here.

pub mod circuit;
pub mod delivery;
pub mod envelope;
mod error;
pub mod event;
pub mod failure;
pub mod grant;
pub mod log;
pub mod ports;
mod service;
mod subject;
pub mod target;

pub use circuit::{
    Circuit, CircuitRule, CircuitState, ClaimBudget, Endpoint, EndpointHealth, EndpointResult,
    RoundRecorded, ENDPOINT_HELD, ENDPOINT_IN_FLIGHT,
};
pub use delivery::*;
pub use envelope::*;
pub use error::WebhookError;
pub use event::*;
pub use failure::*;
pub use grant::{
    is_payment_status, EventFilter, GrantSubscription, RetainedCredential, SubscriptionAnswer,
    SubscriptionInput, SubscriptionState, SubscriptionView,
};
pub use log::{
    EventLogEntry, EventLogPage, EventLogQuery, EventLogRequest, LoggedEvent, EVENTS_KEPT_DEFAULT,
    EVENTS_LIMIT_DEFAULT, EVENTS_LIMIT_MAX, EVENT_NOT_FOUND,
};
pub use service::{
    CallbackView, Recorded, SubscriptionEventDraft, WebhookAdapters, WebhookService,
    DELIVERY_NOT_FOUND,
};
pub use subject::{LinkOrigin, LinkSource, LinkSubject};
pub use target::*;

/// `user-agent` of every delivery.
pub const USER_AGENT: &str = "Pay-Webhooks/1.0";
/// Receivers reject signatures whose `t` is further than this from their clock.
pub const SIGNATURE_TOLERANCE_SECS: i64 = 300;
