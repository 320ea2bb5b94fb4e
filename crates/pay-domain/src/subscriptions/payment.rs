//! A paid invoice pays its cycle: the subscriptions' reaction to a completed session
//! (`DomainEvent::SessionCompleted`, written by the checkout's write). The cycle whose invoice
//! is the session's link, while it is scheduled, open or overdue, becomes paid at the
//! session's completion, and its subscription's next run comes no later than that instant (the
//! scheduler re-decides the overdue rule). The payment records the event's consumption in its
//! own transaction, so telling the event again pays nothing twice.

use crate::kernel::error::{Fault, PortResult};
use crate::kernel::events::{Consumed, Consumer, DomainEvent, EventConsumer, EventRecord};
use crate::subscriptions::ports::{CyclePaid, CyclePayment};
use crate::subscriptions::SubscriptionService;

/// How often a payment that lost a compare-and-set race is re-read and re-decided.
const ATTEMPTS: usize = 3;

impl EventConsumer for SubscriptionService {
    fn consume(&self, e: &EventRecord) -> PortResult<()> {
        let DomainEvent::SessionCompleted { link, at, .. } = &e.event else {
            return Ok(());
        };
        let consumed = Consumed {
            event: e.id,
            consumer: Consumer::SubscriptionCycle,
        };
        for _ in 0..ATTEMPTS {
            // Most links are no cycle's invoice: nothing to pay, nothing to record.
            let Some(cycle) = self.store.cycle_of_link(*link)? else {
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
                at: *at,
            })?;
            match paid {
                CyclePaid::Applied | CyclePaid::AlreadyConsumed => return Ok(()),
                CyclePaid::Stale => {}
            }
        }
        Err(Fault::new("the paid cycle kept changing under us"))
    }
}
