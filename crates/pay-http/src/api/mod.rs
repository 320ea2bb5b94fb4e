//! The JSON API, one folder per resource: its handlers (`mod.rs`) and its request and response
//! shapes (`dto.rs`). Each handler reads its input strictly, calls one use case on the
//! blocking pool and converts the result.

#[macro_use]
mod dto_macros;

pub mod bookkeeping;
pub mod checkout;
pub mod companies;
pub mod company;
pub mod customers;
pub mod events;
pub mod installations;
pub mod links;
pub mod mail;
pub mod meta;
pub mod oauth;
pub mod onboarding;
pub mod schema;
pub mod session;
pub mod settings;
pub mod subscriptions;
pub mod wallets;
pub mod webhook_subscription;
pub mod webhooks;
