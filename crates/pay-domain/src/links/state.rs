//! Whether a link takes new payments and payment requests now.

use std::fmt;

use crate::kernel::timestamp::Timestamp;
use crate::links::{LinkStatus, PaymentLink};

/// A link's state as its checkout shows it: its status, and `Expired` once an active link is
/// past its expiry. Only `Active` takes new payments and payment requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkState {
    Active,
    Paused,
    Archived,
    Expired,
}

impl LinkState {
    /// The state of `link` at `now` (a paused or archived link stays so past its expiry).
    pub fn of(link: &PaymentLink, now: Timestamp) -> LinkState {
        match link.status {
            LinkStatus::Paused => LinkState::Paused,
            LinkStatus::Archived => LinkState::Archived,
            LinkStatus::Active if link.expires_at.is_some_and(|e| e <= now) => LinkState::Expired,
            LinkStatus::Active => LinkState::Active,
        }
    }

    pub fn takes_payments(self) -> bool {
        self == LinkState::Active
    }

    pub fn as_str(self) -> &'static str {
        match self {
            LinkState::Active => "active",
            LinkState::Paused => "paused",
            LinkState::Archived => "archived",
            LinkState::Expired => "expired",
        }
    }
}

impl fmt::Display for LinkState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
