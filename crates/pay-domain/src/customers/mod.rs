//! Customers: contacts (one table for customers and, later, vendors), upserted by e-mail, and
//! the signed self-service portal URL (`portal`), verified before any portal data is read.

mod error;
mod model;
pub mod portal;
pub mod ports;
mod service;

pub use error::{CustomerError, PortalRefused};
pub use model::*;
pub use service::{CustomerService, PortalAccess, PortalLink, CUSTOMER_NOT_FOUND};
