//! The outbox every external effect goes through (webhook deliveries, e-mails, the coming
//! scheduler): a row per effect, claimed on a real-time lease, retried on a schedule, each
//! attempt recorded.
