//! Payment links: the merchant's links and their status machine, anonymous links, and the
//! gateway form that creates a link from a merchant's own web page.

mod anonymous_service;
mod error;
pub mod gateway;
mod gateway_service;
mod model;
pub mod ports;
mod service;
mod state;
mod subject;

pub use error::{InvalidTransition, LinkError, LinkNotActive, LINK_NOT_FOUND};
pub use gateway_service::GatewayForm;
pub use model::*;
pub use service::LinkService;
pub use state::LinkState;
