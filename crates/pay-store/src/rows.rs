//! Row structs, one pair per table (what is read, what is written), and their conversions to
//! and from domain types, one file per context (`rows/<context>.rs`). A value the domain would
//! refuse (bad id, status or instant) means the row is corrupt: it becomes `Fault::Internal`,
//! never a panic or a silent default.

use pay_domain::kernel::amount::Decimal;
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::{Fault, PortResult};

mod anonymous;
mod bookkeeping;
mod checkout;
mod customers;
mod event_log;
mod grant_webhooks;
pub(crate) mod installations;
mod links;
mod mail;
pub(crate) mod oauth;
pub(crate) mod onboarding;
mod payload;
pub(crate) mod recovery;
mod settings;
mod short_text;
mod subscriptions;
mod tenancy;
mod webhooks;

pub(crate) use anonymous::*;
pub(crate) use bookkeeping::*;
pub(crate) use checkout::*;
pub(crate) use customers::*;
pub(crate) use event_log::*;
pub(crate) use grant_webhooks::*;
pub(crate) use links::*;
pub(crate) use mail::*;
pub(crate) use settings::*;
pub(crate) use short_text::ShortText;
pub(crate) use subscriptions::*;
pub(crate) use tenancy::*;
pub(crate) use webhooks::*;

/// Names the column only: values may be secrets or personal data.
pub(crate) fn corrupt(column: &str) -> Fault {
    Fault::new(format!("corrupt stored value in {column}"))
}

fn instant(ms: i64, column: &str) -> PortResult<Timestamp> {
    Timestamp::from_unix_millis(ms).ok_or_else(|| corrupt(column))
}

pub(crate) fn opt_instant(ms: Option<i64>, column: &str) -> PortResult<Option<Timestamp>> {
    ms.map(|ms| instant(ms, column)).transpose()
}

fn id<T>(text: &str, parse: fn(&str) -> Option<T>, column: &str) -> PortResult<T> {
    parse(text).ok_or_else(|| corrupt(column))
}

fn decimal(text: &str, column: &str) -> PortResult<Decimal> {
    Decimal::parse(text).map_err(|_| corrupt(column))
}
