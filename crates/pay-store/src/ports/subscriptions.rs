//! `SubscriptionStore` on `DieselStore`: subscriptions, their cycles, and the scheduler's claim
//! (`claim_due!`, as the outboxes: due on the company's clock, leased on real time, `FOR
//! UPDATE SKIP LOCKED` on PostgreSQL). Written once for both backends, except that select.

use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use pay_domain::kernel::idempotency::Completion;
use pay_domain::kernel::ids::{CompanyId, ContactId, CycleId, LinkUid, PaymentLinkId};
use pay_domain::kernel::ids::{SubscriptionId, SubscriptionUid};
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::subscriptions::ports::{CyclePaid, CyclePayment};
use pay_domain::subscriptions::ports::{StatusWrite, SubscriptionFilter, SubscriptionStore};
use pay_domain::subscriptions::{Cycle, CycleStatus, Subscription, SubscriptionStatus};
use pay_domain::{Fault, PortResult};

use super::clock;
use super::events::record_consumed;
use super::webhooks::insert_delivery_rows;
use crate::conn::{write_transaction, AnyConnection};
use crate::rows::{CycleRow, NewCycleRow, NewSubscriptionRow, SubscriptionRow};
use crate::schema::{subscription_cycles, subscriptions};
use crate::DieselStore;

/// The cycle statuses a cancel cancels and a payment pays (`CycleStatus::is_cancellable`).
fn unpaid() -> Vec<&'static str> {
    CycleStatus::ALL
        .into_iter()
        .filter(|c| c.is_cancellable())
        .map(CycleStatus::as_str)
        .collect()
}

/// The claim's selection, shared by both backends: subscriptions with a next run due by `now`,
/// earliest first (ties by id), at most `limit`. The `subscriptions_due` index serves it in
/// order and holds only rows with a next run.
#[diesel::dsl::auto_type]
fn due_subscriptions(now: i64, limit: i64) -> _ {
    subscriptions::table
        .filter(subscriptions::next_run_at.le(now))
        .order_by((subscriptions::next_run_at.asc(), subscriptions::id.asc()))
        .limit(limit)
}

fn to_subscriptions(rows: Vec<SubscriptionRow>) -> PortResult<Vec<Subscription>> {
    rows.into_iter().map(Subscription::try_from).collect()
}

fn ids(of: &[SubscriptionId]) -> Vec<String> {
    of.iter().map(ToString::to_string).collect()
}

impl SubscriptionStore for DieselStore {
    fn insert_subscription(
        &self,
        s: &Subscription,
        first: &Cycle,
        completion: Option<&Completion>,
    ) -> PortResult<bool> {
        if first.subscription_id != s.id {
            return Err(Fault::new("insert subscription: a first cycle of another"));
        }
        let row = NewSubscriptionRow::try_from(s)?;
        let cycle = NewCycleRow::from(first);
        super::grant_webhooks::write_keyed(self, "insert subscription", completion, |conn| {
            diesel::insert_into(subscriptions::table)
                .values(&row)
                .execute(conn)?;
            diesel::insert_into(subscription_cycles::table)
                .values(&cycle)
                .execute(conn)
                .map(drop)
        })
    }

    fn subscriptions(
        &self,
        company: CompanyId,
        filter: SubscriptionFilter,
        limit: usize,
    ) -> PortResult<Vec<Subscription>> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = self.run("subscriptions", |conn| {
            let mut q = subscriptions::table
                .filter(subscriptions::company_id.eq(company.to_string()))
                .into_boxed();
            if let Some(g) = filter.grant_id {
                q = q.filter(subscriptions::grant_id.eq(g.hyphenated().to_string()));
            }
            q.order((subscriptions::created_at.desc(), subscriptions::id.desc()))
                .limit(limit)
                .select(SubscriptionRow::as_select())
                .load(conn)
        })?;
        to_subscriptions(rows)
    }

    fn subscription(
        &self,
        company: CompanyId,
        uid: &SubscriptionUid,
    ) -> PortResult<Option<Subscription>> {
        self.run("subscription", |conn| {
            subscriptions::table
                .filter(subscriptions::company_id.eq(company.to_string()))
                .filter(subscriptions::uid.eq(uid.as_str()))
                .select(SubscriptionRow::as_select())
                .first(conn)
                .optional()
        })?
        .map(Subscription::try_from)
        .transpose()
    }

    fn contact_subscriptions(
        &self,
        company: CompanyId,
        contact: ContactId,
    ) -> PortResult<Vec<Subscription>> {
        let rows = self.run("contact subscriptions", |conn| {
            subscriptions::table
                .filter(subscriptions::contact_id.eq(contact.to_string()))
                .filter(subscriptions::company_id.eq(company.to_string()))
                .order((subscriptions::created_at.desc(), subscriptions::id.desc()))
                .select(SubscriptionRow::as_select())
                .load(conn)
        })?;
        to_subscriptions(rows)
    }

    fn cycles(&self, company: CompanyId, of: &[SubscriptionId]) -> PortResult<Vec<Cycle>> {
        if of.is_empty() {
            return Ok(Vec::new());
        }
        let of = ids(of);
        self.run("cycles", |conn| {
            subscription_cycles::table
                .filter(subscription_cycles::subscription_id.eq_any(&of))
                .filter(subscription_cycles::company_id.eq(company.to_string()))
                .order((
                    subscription_cycles::subscription_id.asc(),
                    subscription_cycles::sequence.asc(),
                ))
                .select(CycleRow::as_select())
                .load(conn)
        })?
        .into_iter()
        .map(Cycle::try_from)
        .collect()
    }

    fn move_subscription(&self, w: &StatusWrite) -> PortResult<bool> {
        let id = w.subscription.to_string();
        let at = w.at.unix_millis();
        self.write("move subscription", |conn| {
            write_transaction(conn, |conn| {
                // Compare-and-set on the status; its row lock (PostgreSQL) comes first.
                let moved = diesel::update(
                    subscriptions::table
                        .filter(subscriptions::id.eq(&id))
                        .filter(subscriptions::company_id.eq(w.company.to_string()))
                        .filter(subscriptions::status.eq(w.from.as_str())),
                )
                .set((
                    subscriptions::status.eq(w.to.as_str()),
                    subscriptions::updated_at.eq(at),
                    subscriptions::next_sequence.eq(i64::from(w.next_sequence)),
                    subscriptions::next_run_at.eq(w.next_run_at.map(Timestamp::unix_millis)),
                ))
                .execute(conn)?;
                if moved == 0 {
                    return Ok(false);
                }
                if w.cancel_unpaid_cycles {
                    diesel::update(
                        subscription_cycles::table
                            .filter(subscription_cycles::subscription_id.eq(&id))
                            .filter(subscription_cycles::status.eq_any(unpaid())),
                    )
                    .set((
                        subscription_cycles::status.eq(CycleStatus::Cancelled.as_str()),
                        subscription_cycles::updated_at.eq(at),
                    ))
                    .execute(conn)?;
                }
                insert_delivery_rows(conn, &w.deliveries)?;
                Ok(true)
            })
        })
    }

    fn claim_due_subscriptions(
        &self,
        now: Timestamp,
        lease_until: Timestamp,
        limit: usize,
        only: Option<CompanyId>,
    ) -> PortResult<Vec<Subscription>> {
        let now = now.unix_millis();
        let lease = lease_until.unix_millis();
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        if limit == 0 {
            return Ok(Vec::new());
        }
        let only = only.map(|c| c.to_string());
        let rows: Vec<SubscriptionRow> = self.write("claim due subscriptions", |conn| {
            write_transaction(conn, |conn| {
                let moved = clock::max_clock_offset(conn)?;
                let by = now.saturating_add(moved);
                Ok(match &only {
                    None => claim_due!(
                        conn,
                        subscriptions,
                        SubscriptionRow,
                        due_subscriptions(by, limit),
                        due = next_run_at,
                        set = |lease: i64| subscriptions::lease_until.eq(lease),
                        now = now,
                        lease = lease,
                        moved = moved,
                    ),
                    // A moved test clock runs its own company's work alone.
                    Some(company) => claim_due!(
                        conn,
                        subscriptions,
                        SubscriptionRow,
                        due_subscriptions(by, limit).filter(subscriptions::company_id.eq(company)),
                        due = next_run_at,
                        set = |lease: i64| subscriptions::lease_until.eq(lease),
                        now = now,
                        lease = lease,
                        moved = moved,
                    ),
                })
            })
        })?;
        to_subscriptions(rows)
    }

    fn next_run_after(
        &self,
        company: CompanyId,
        after: Timestamp,
    ) -> PortResult<Option<Timestamp>> {
        let next: Option<i64> = self.run("next run after", |conn| {
            subscriptions::table
                .filter(subscriptions::company_id.eq(company.to_string()))
                .filter(subscriptions::next_run_at.gt(after.unix_millis()))
                .select(diesel::dsl::min(subscriptions::next_run_at))
                .first(conn)
        })?;
        crate::rows::opt_instant(next, "subscriptions.next_run_at")
    }

    fn finish_run(
        &self,
        id: SubscriptionId,
        lease_until: Timestamp,
        status: SubscriptionStatus,
        next_sequence: u32,
        next_run_at: Option<Timestamp>,
    ) -> PortResult<bool> {
        let id = id.to_string();
        let lease = lease_until.unix_millis();
        let next_sequence = i64::from(next_sequence);
        self.write("finish run", |conn| {
            write_transaction(conn, |conn| {
                let mine = || subscriptions::table.filter(subscriptions::id.eq(&id));
                // Compare-and-set on the lease: a run whose lease another took over writes
                // nothing.
                let released = diesel::update(mine().filter(subscriptions::lease_until.eq(lease)))
                    .set(subscriptions::lease_until.eq(None::<i64>))
                    .execute(conn)?;
                if released == 0 {
                    return Ok(false);
                }
                let still = || mine().filter(subscriptions::status.eq(status.as_str()));
                diesel::update(still())
                    .set(subscriptions::next_run_at.eq(next_run_at.map(Timestamp::unix_millis)))
                    .execute(conn)?;
                // Never lowers it.
                diesel::update(still().filter(subscriptions::next_sequence.lt(next_sequence)))
                    .set(subscriptions::next_sequence.eq(next_sequence))
                    .execute(conn)?;
                Ok(true)
            })
        })
    }

    fn insert_cycle(&self, c: &Cycle) -> PortResult<bool> {
        let row = NewCycleRow::from(c);
        self.write("insert cycle", |conn| {
            match diesel::insert_into(subscription_cycles::table)
                .values(&row)
                .execute(conn)
            {
                Ok(_) => Ok(true),
                Err(e @ DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, _)) => {
                    // This cycle exists already: false. Another unique column (the id): the
                    // error.
                    let exists = subscription_cycles::table
                        .filter(subscription_cycles::subscription_id.eq(&row.subscription_id))
                        .filter(subscription_cycles::sequence.eq(row.sequence))
                        .select(subscription_cycles::id)
                        .first::<String>(conn)
                        .optional()?;
                    match exists {
                        Some(_) => Ok(false),
                        None => Err(e),
                    }
                }
                Err(e) => Err(e),
            }
        })
    }

    fn open_cycle(
        &self,
        id: CycleId,
        link: PaymentLinkId,
        link_uid: &LinkUid,
        at: Timestamp,
    ) -> PortResult<bool> {
        let at = at.unix_millis();
        let n = self.write("open cycle", |conn| {
            diesel::update(
                subscription_cycles::table
                    .filter(subscription_cycles::id.eq(id.to_string()))
                    .filter(subscription_cycles::status.eq(CycleStatus::Scheduled.as_str())),
            )
            .set((
                subscription_cycles::status.eq(CycleStatus::Open.as_str()),
                subscription_cycles::payment_link_id.eq(link.to_string()),
                subscription_cycles::payment_link_uid.eq(link_uid.as_str()),
                subscription_cycles::issued_at.eq(at),
                subscription_cycles::updated_at.eq(at),
            ))
            .execute(conn)
        })?;
        Ok(n == 1)
    }

    fn set_cycle_status(
        &self,
        id: CycleId,
        from: CycleStatus,
        to: CycleStatus,
        at: Timestamp,
    ) -> PortResult<bool> {
        let n = self.write("set cycle status", |conn| {
            diesel::update(
                subscription_cycles::table
                    .filter(subscription_cycles::id.eq(id.to_string()))
                    .filter(subscription_cycles::status.eq(from.as_str())),
            )
            .set((
                subscription_cycles::status.eq(to.as_str()),
                subscription_cycles::updated_at.eq(at.unix_millis()),
            ))
            .execute(conn)
        })?;
        Ok(n == 1)
    }

    fn set_cycle_reminders(&self, id: CycleId, from: u8, to: u8) -> PortResult<bool> {
        let n = self.write("set cycle reminders", |conn| {
            diesel::update(
                subscription_cycles::table
                    .filter(subscription_cycles::id.eq(id.to_string()))
                    .filter(subscription_cycles::reminders.eq(i64::from(from))),
            )
            .set(subscription_cycles::reminders.eq(i64::from(to)))
            .execute(conn)
        })?;
        Ok(n == 1)
    }

    fn cycle_of_link(&self, link: PaymentLinkId) -> PortResult<Option<Cycle>> {
        self.run("cycle of link", |conn| {
            subscription_cycles::table
                .filter(subscription_cycles::payment_link_id.eq(link.to_string()))
                .select(CycleRow::as_select())
                .first(conn)
                .optional()
        })?
        .map(Cycle::try_from)
        .transpose()
    }

    fn pay_cycle(&self, w: &CyclePayment) -> PortResult<CyclePaid> {
        let at = w.at.unix_millis();
        let mut stale = false;
        let paid = self.write("pay cycle", |conn| {
            write_transaction(conn, |conn| {
                if !record_consumed(conn, &w.consumed, w.at)? {
                    return Ok(CyclePaid::AlreadyConsumed);
                }
                // The subscription's row first, the order `move_subscription` locks them in.
                diesel::update(
                    subscriptions::table
                        .filter(subscriptions::id.eq(w.subscription.to_string()))
                        .filter(subscriptions::next_run_at.gt(at)),
                )
                .set(subscriptions::next_run_at.eq(at))
                .execute(conn)?;
                let n = diesel::update(
                    subscription_cycles::table
                        .filter(subscription_cycles::id.eq(w.cycle.to_string()))
                        .filter(subscription_cycles::subscription_id.eq(w.subscription.to_string()))
                        .filter(subscription_cycles::status.eq(w.from.as_str())),
                )
                .set((
                    subscription_cycles::status.eq(CycleStatus::Paid.as_str()),
                    subscription_cycles::paid_at.eq(at),
                    subscription_cycles::updated_at.eq(at),
                ))
                .execute(conn)?;
                if n == 0 {
                    stale = true;
                    return Err(DieselError::RollbackTransaction);
                }
                Ok(CyclePaid::Applied)
            })
        });
        match paid {
            Err(_) if stale => Ok(CyclePaid::Stale),
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_payment_pays_is_what_a_cancel_cancels() {
        assert_eq!(unpaid(), ["scheduled", "open", "overdue"]);
    }
}
