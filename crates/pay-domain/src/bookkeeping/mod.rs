//! Bookkeeping: the merchant's wallet activity (incoming from settled sessions, outgoing as the
//! processor reports it) and exactly one expense per outgoing transfer, versioned on each save.
//! Evidence files and the accountant's export come next (docs/bookkeeping.md).

mod activity;
mod error;
mod expense;
pub mod ports;
mod service;

pub use activity::*;
pub use error::BookkeepingError;
pub use expense::*;
pub use service::{ActivityDetail, BookkeepingService, ExpenseDetail, SavedExpense};
