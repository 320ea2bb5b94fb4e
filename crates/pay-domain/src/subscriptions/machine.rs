//! The subscription status machine: one enum, one `transition` function over (from, to, who
//! asks), and the overdue rule the scheduler applies.

use std::fmt;

use time::Duration;

use crate::kernel::timestamp::Timestamp;
use crate::subscriptions::{Cycle, InvalidSubscriptionTransition};

/// The spec's overdue threshold: 24 hours past `dueAt`.
pub const OVERDUE_AFTER: Duration = Duration::hours(24);

/// A subscription's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SubscriptionStatus {
    /// Collects scheduled invoices normally.
    Active,
    /// The merchant or the customer paused it: no invoice, no reminder.
    Paused,
    /// At least one unpaid cycle is 24 hours or more past due.
    Overdue,
    /// Ended; its unpaid cycles are cancelled. Terminal.
    Cancelled,
}

impl SubscriptionStatus {
    pub const ALL: [SubscriptionStatus; 4] = [
        SubscriptionStatus::Active,
        SubscriptionStatus::Paused,
        SubscriptionStatus::Overdue,
        SubscriptionStatus::Cancelled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            SubscriptionStatus::Active => "active",
            SubscriptionStatus::Paused => "paused",
            SubscriptionStatus::Overdue => "overdue",
            SubscriptionStatus::Cancelled => "cancelled",
        }
    }

    pub fn parse(s: &str) -> Option<SubscriptionStatus> {
        SubscriptionStatus::ALL
            .into_iter()
            .find(|x| x.as_str() == s)
    }

    /// Whether the scheduler issues invoices and sends reminders.
    pub fn bills(self) -> bool {
        matches!(
            self,
            SubscriptionStatus::Active | SubscriptionStatus::Overdue
        )
    }
}

impl fmt::Display for SubscriptionStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Who asks for a move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Actor {
    /// The merchant, through the API (`PATCH /subscriptions/{uid}`).
    Merchant,
    /// The customer, through the signed portal.
    Customer,
    /// The billing scheduler (the overdue rule).
    Scheduler,
}

impl Actor {
    /// `event.trigger` of the webhook.
    pub fn trigger(self) -> &'static str {
        match self {
            Actor::Merchant => "merchant_api",
            Actor::Customer => "customer_portal",
            Actor::Scheduler => "subscription_scheduler",
        }
    }
}

/// Why a subscription moved (`data.reason` of the webhook).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reason {
    MerchantPaused,
    MerchantResumed,
    MerchantCancelled,
    CustomerPaused,
    CustomerResumed,
    CustomerCancelled,
    /// The oldest unpaid cycle is 24 hours or more past due.
    CycleOneDayOverdue,
    /// No unpaid cycle is 24 hours or more past due any more.
    OverdueCyclesPaid,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::MerchantPaused => "merchant_paused",
            Reason::MerchantResumed => "merchant_resumed",
            Reason::MerchantCancelled => "merchant_cancelled",
            Reason::CustomerPaused => "customer_paused",
            Reason::CustomerResumed => "customer_resumed",
            Reason::CustomerCancelled => "customer_cancelled",
            Reason::CycleOneDayOverdue => "cycle_one_day_overdue",
            Reason::OverdueCyclesPaid => "overdue_cycles_paid",
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a requested move amounts to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubscriptionTransition {
    /// It moves: write it (compare-and-set on `from`) with one webhook.
    Move {
        from: SubscriptionStatus,
        to: SubscriptionStatus,
        reason: Reason,
    },
    /// Already there: a no-op, no webhook.
    Same,
}

/// The one transition function. People (merchant, customer): active|overdue -> paused,
/// paused -> active, active|paused|overdue -> cancelled; cancelled is terminal; asking for
/// the current status is a no-op. The scheduler: active -> overdue and overdue -> active only.
/// Everything else is refused.
pub fn transition(
    from: SubscriptionStatus,
    to: SubscriptionStatus,
    actor: Actor,
) -> Result<SubscriptionTransition, InvalidSubscriptionTransition> {
    use SubscriptionStatus::*;
    let refused = Err(InvalidSubscriptionTransition { from, to });
    if from == to {
        return Ok(SubscriptionTransition::Same);
    }
    let reason = match (actor, from, to) {
        (Actor::Scheduler, Active, Overdue) => Reason::CycleOneDayOverdue,
        (Actor::Scheduler, Overdue, Active) => Reason::OverdueCyclesPaid,
        (Actor::Scheduler, _, _) => return refused,
        (_, Cancelled, _) => return refused,
        (Actor::Merchant, Active | Overdue, Paused) => Reason::MerchantPaused,
        (Actor::Customer, Active | Overdue, Paused) => Reason::CustomerPaused,
        (Actor::Merchant, Paused, Active) => Reason::MerchantResumed,
        (Actor::Customer, Paused, Active) => Reason::CustomerResumed,
        (Actor::Merchant, _, Cancelled) => Reason::MerchantCancelled,
        (Actor::Customer, _, Cancelled) => Reason::CustomerCancelled,
        // active <-> overdue is the scheduler's rule alone; paused -> overdue goes through
        // active.
        (Actor::Merchant | Actor::Customer, Active | Overdue | Paused, _) => return refused,
    };
    Ok(SubscriptionTransition::Move { from, to, reason })
}

/// Whether `cycle` is unpaid and 24 hours or more past due at `now`.
pub fn is_overdue(cycle: &Cycle, now: Timestamp) -> bool {
    cycle.status.is_unpaid() && cycle.due_at.plus(OVERDUE_AFTER) <= now
}

/// The oldest cycle that makes the subscription overdue at `now`, if any.
pub fn oldest_overdue(cycles: &[Cycle], now: Timestamp) -> Option<&Cycle> {
    cycles
        .iter()
        .filter(|c| is_overdue(c, now))
        .min_by_key(|c| c.sequence)
}

/// The scheduler's status decision at `now`: active with an overdue cycle -> overdue; overdue
/// with none -> active; otherwise stay (`None`).
pub fn scheduled_status(
    status: SubscriptionStatus,
    cycles: &[Cycle],
    now: Timestamp,
) -> Option<SubscriptionStatus> {
    let late = oldest_overdue(cycles, now).is_some();
    match status {
        SubscriptionStatus::Active if late => Some(SubscriptionStatus::Overdue),
        SubscriptionStatus::Overdue if !late => Some(SubscriptionStatus::Active),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::SubscriptionStatus::*;
    use super::*;

    #[test]
    fn names_round_trip() {
        for s in SubscriptionStatus::ALL {
            assert_eq!(SubscriptionStatus::parse(s.as_str()), Some(s));
        }
        assert_eq!(SubscriptionStatus::parse("Active"), None);
    }

    /// The whole table: every (from, to, actor).
    #[test]
    fn the_whole_table() {
        use Actor::*;
        let mv = |from, to, reason| Ok(SubscriptionTransition::Move { from, to, reason });
        for actor in [Merchant, Customer, Scheduler] {
            for from in SubscriptionStatus::ALL {
                for to in SubscriptionStatus::ALL {
                    let got = transition(from, to, actor);
                    let no = Err(InvalidSubscriptionTransition { from, to });
                    let want = match (actor, from, to) {
                        (_, a, b) if a == b => Ok(SubscriptionTransition::Same),
                        (Scheduler, Active, Overdue) => mv(from, to, Reason::CycleOneDayOverdue),
                        (Scheduler, Overdue, Active) => mv(from, to, Reason::OverdueCyclesPaid),
                        (Scheduler, _, _) => no,
                        (Merchant, Active | Overdue, Paused) => {
                            mv(from, to, Reason::MerchantPaused)
                        }
                        (Customer, Active | Overdue, Paused) => {
                            mv(from, to, Reason::CustomerPaused)
                        }
                        (Merchant, Paused, Active) => mv(from, to, Reason::MerchantResumed),
                        (Customer, Paused, Active) => mv(from, to, Reason::CustomerResumed),
                        (Merchant, Active | Paused | Overdue, Cancelled) => {
                            mv(from, to, Reason::MerchantCancelled)
                        }
                        (Customer, Active | Paused | Overdue, Cancelled) => {
                            mv(from, to, Reason::CustomerCancelled)
                        }
                        _ => no,
                    };
                    assert_eq!(got, want, "{actor:?}: {from} -> {to}");
                }
            }
        }
        // Spot checks of the refusals the contract names.
        assert!(transition(Cancelled, Active, Merchant).is_err());
        assert!(transition(Active, Overdue, Merchant).is_err());
        assert!(transition(Overdue, Active, Customer).is_err());
        assert!(transition(Paused, Overdue, Scheduler).is_err());
        assert!(transition(Active, Paused, Scheduler).is_err());
    }

    #[test]
    fn reasons_are_the_spec_words() {
        assert_eq!(Reason::CycleOneDayOverdue.as_str(), "cycle_one_day_overdue");
        assert_eq!(Reason::MerchantPaused.to_string(), "merchant_paused");
        assert_eq!(Reason::CustomerPaused.as_str(), "customer_paused");
        assert_eq!(Reason::CustomerCancelled.as_str(), "customer_cancelled");
        assert_eq!(Actor::Scheduler.trigger(), "subscription_scheduler");
        assert!(Active.bills() && Overdue.bills() && !Paused.bills() && !Cancelled.bills());
    }
}
