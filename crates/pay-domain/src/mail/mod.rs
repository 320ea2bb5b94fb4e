//! Payment-request e-mails: who may be written to, what the mail says, and its outbox.

mod model;
mod service;

pub use service::MailService;

pub use model::*;
