//! A paid invoice pays its cycle: the subscriptions' reaction to a completed session
//! (`DomainEvent::SessionCompleted`, written by the checkout's write). The cycle whose invoice
//! is the session's link, while it is scheduled, open or overdue, becomes paid at the
//! session's completion, and its subscription's next run comes no later than that instant (the
//! scheduler re-decides the overdue rule). The payment records the event's consumption in its
//! own transaction, so telling the event again pays nothing twice.

use crate::kernel::error::{Fault, PortResult};
use crate::kernel::events::{Consumed, Consumer, DomainEvent, EventConsumer, EventRecord};
use crate::kernel::ids::{EventId, PaymentLinkId};
use crate::kernel::timestamp::Timestamp;
use crate::subscriptions::ports::{CyclePaid, CyclePayment};
use crate::subscriptions::SubscriptionService;

/// How often a payment that lost a compare-and-set race is re-read and re-decided.
const ATTEMPTS: usize = 3;

/// The subscriptions' reactions: a completed session pays its cycle (here), a moved test clock
/// runs the billing work due on it (`scheduler.rs`).
impl EventConsumer for SubscriptionService {
    fn consume(&self, e: &EventRecord) -> PortResult<()> {
        match &e.event {
            DomainEvent::SessionCompleted { link, at, .. } => self.pay_cycle_of(e.id, *link, *at),
            DomainEvent::ClockMoved { company, until } => {
                self.follow_moved_clock(e.id, *company, *until)
            }
            DomainEvent::LinkStopped { .. } => Ok(()),
        }
    }
}

impl SubscriptionService {
    fn pay_cycle_of(&self, event: EventId, link: PaymentLinkId, at: Timestamp) -> PortResult<()> {
        let consumed = Consumed {
            event,
            consumer: Consumer::SubscriptionCycle,
        };
        for _ in 0..ATTEMPTS {
            // Most links are no cycle's invoice: nothing to pay, nothing to record.
            let Some(cycle) = self.store.cycle_of_link(link)? else {
                return Ok(());
            };
            if !cycle.status.is_cancellable() {
                return Ok(());
            }
            let paid = self.store.pay_cycle(&CyclePayment {
                consumed,
                cycle: cycle.id,
                from: cycle.status,
                subscription: cycle.subscription_id,
                at,
            })?;
            match paid {
                CyclePaid::Applied | CyclePaid::AlreadyConsumed => return Ok(()),
                CyclePaid::Stale => {}
            }
        }
        Err(Fault::new("the paid cycle kept changing under us"))
    }
}
