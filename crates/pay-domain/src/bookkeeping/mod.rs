//! Bookkeeping: the merchant's wallet activity (incoming from settled sessions, outgoing as the
//! processor reports it) and exactly one expense per outgoing transfer, versioned on each save.
//! The accountant's CSV export of expenses and incoming payments; private evidence files linked
//! to expenses (docs/bookkeeping.md).

mod activity;
pub mod csv;
mod error;
mod evidence;
mod evidence_service;
mod expense;
mod export;
pub mod ports;
mod service;

pub use activity::*;
pub use error::{BookkeepingError, EvidenceRefusal};
pub use evidence::*;
pub use evidence_service::FILE_NOT_FOUND;
pub use expense::*;
pub use export::*;
pub use service::{
    ActivityDetail, BookkeepingService, ExpenseDetail, ExportPage, SavedExpense, ACTIVITY_NOT_FOUND,
};
