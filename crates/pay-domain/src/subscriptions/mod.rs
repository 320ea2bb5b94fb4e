//! Recurring billing: subscriptions, their cycles (each an ordinary payment link) and the
//! scheduler's steps (issue, remind, overdue), on each company's clock.

mod billing;
pub mod calendar;
mod error;
pub mod machine;
mod model;
mod payment;
pub mod ports;
mod reminder;
mod scheduler;
mod service;

pub use billing::BillingConfig;
pub use error::{InvalidSubscriptionTransition, SubscriptionError};
pub use machine::{transition, Actor, Reason, SubscriptionStatus, SubscriptionTransition};
pub use model::*;
pub use reminder::*;
pub use scheduler::BillingRun;
pub use service::{PortalView, SubscriptionService, SubscriptionView, SUBSCRIPTION_NOT_FOUND};
