//! Payment-request e-mails: who may be written to, what the mail says, and its outbox.

mod error;
mod model;
mod outbox;
mod ports;
mod recipient;
mod render;
mod service;

pub use error::{MailError, MissingEmail};
pub use service::MailService;

pub use model::*;
pub use outbox::*;
pub use ports::*;
pub use recipient::*;
pub use render::*;
