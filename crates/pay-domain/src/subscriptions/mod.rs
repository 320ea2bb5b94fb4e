//! Recurring billing (room for the next issue): subscriptions, their cycles and scheduler.

pub mod calendar;
