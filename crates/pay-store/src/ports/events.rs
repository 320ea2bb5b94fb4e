//! `EventStore` on `DieselStore`: the outbox of domain events and its consumption records.
//! The deciding ports insert the rows in their own transactions (`insert_events`); the drain's
//! claim is the one outbox claim (`claim_due!`), on real time only (no company clock). Written
//! once for both backends, except the claim's select.

use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError, QueryResult};
use pay_domain::kernel::events::{Consumed, DomainEvent, EventRecord, EventStore};
use pay_domain::kernel::ids::{CompanyId, EventId};
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::{Fault, PortResult};

use crate::conn::{write_transaction, AnyConnection};
use crate::schema::{consumed_events, domain_events};
use crate::DieselStore;

/// An event row as the claim reads it.
#[derive(Queryable, Selectable)]
#[diesel(table_name = domain_events, check_for_backend(crate::conn::MultiBackend))]
pub(crate) struct EventRow {
    id: String,
    company_id: String,
    kind: String,
    payload: String,
    created_at: i64,
    due_at: i64,
}

impl crate::ports::outbox::OutboxRow for EventRow {
    fn id(&self) -> &str {
        &self.id
    }

    fn leased_until(&mut self, lease: i64) {
        self.due_at = lease;
    }
}

impl TryFrom<EventRow> for EventRecord {
    type Error = Fault;

    fn try_from(r: EventRow) -> PortResult<EventRecord> {
        let bad = |c: &str| Fault::new(format!("corrupt domain_events.{c}"));
        let company = CompanyId::parse(&r.company_id).ok_or_else(|| bad("company_id"))?;
        Ok(EventRecord {
            id: EventId::parse(&r.id).ok_or_else(|| bad("id"))?,
            event: DomainEvent::from_stored(company, &r.kind, &r.payload)?,
            created_at: Timestamp::from_unix_millis(r.created_at)
                .ok_or_else(|| bad("created_at"))?,
            due_at: Timestamp::from_unix_millis(r.due_at).ok_or_else(|| bad("due_at"))?,
        })
    }
}

/// Inside the deciding write's transaction: its events, into the outbox.
pub(super) fn insert_events(conn: &mut AnyConnection, events: &[EventRecord]) -> QueryResult<()> {
    for e in events {
        diesel::insert_into(domain_events::table)
            .values((
                domain_events::id.eq(e.id.to_string()),
                domain_events::company_id.eq(e.event.company().to_string()),
                domain_events::kind.eq(e.event.kind()),
                domain_events::payload.eq(e.event.payload()),
                domain_events::created_at.eq(e.created_at.unix_millis()),
                domain_events::due_at.eq(e.due_at.unix_millis()),
            ))
            .execute(conn)?;
    }
    Ok(())
}

/// Inside a reacting write's transaction: records the consumption; false when it was recorded
/// before (the primary key settles two racing consumers on PostgreSQL: the second INSERT waits
/// for the first transaction and fails when it commits).
pub(super) fn record_consumed(
    conn: &mut AnyConnection,
    c: &Consumed,
    at: Timestamp,
) -> QueryResult<bool> {
    let seen = consumed_events::table
        .find((c.event.to_string(), c.consumer.as_str()))
        .select(consumed_events::event_id)
        .first::<String>(conn)
        .optional()?;
    if seen.is_some() {
        return Ok(false);
    }
    match diesel::insert_into(consumed_events::table)
        .values((
            consumed_events::event_id.eq(c.event.to_string()),
            consumed_events::consumer.eq(c.consumer.as_str()),
            consumed_events::consumed_at.eq(at.unix_millis()),
        ))
        .execute(conn)
    {
        Ok(_) => Ok(true),
        Err(DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, _)) => Ok(false),
        Err(e) => Err(e),
    }
}

/// The claim's selection: events not done, due by `now`, oldest due first (ties by id), at most
/// `limit`. The `domain_events_pending` index serves it in order.
#[diesel::dsl::auto_type]
fn due_events(now: i64, limit: i64) -> _ {
    domain_events::table
        .filter(domain_events::done_at.is_null())
        .filter(domain_events::due_at.le(now))
        .order_by((domain_events::due_at.asc(), domain_events::id.asc()))
        .limit(limit)
}

impl EventStore for DieselStore {
    fn claim_due_events(
        &self,
        now: Timestamp,
        lease_until: Timestamp,
        limit: usize,
    ) -> PortResult<Vec<EventRecord>> {
        let now = now.unix_millis();
        let lease = lease_until.unix_millis();
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        if limit == 0 {
            return Ok(Vec::new());
        }
        let rows: Vec<EventRow> = self.write("claim due events", |conn| {
            write_transaction(conn, |conn| {
                Ok(claim_due!(
                    conn,
                    domain_events,
                    EventRow,
                    due_events(now, limit),
                    due = due_at,
                    set = |lease: i64| (
                        domain_events::due_at.eq(lease),
                        domain_events::lease_until.eq(lease)
                    ),
                    now = now,
                    lease = lease,
                    // Real time only: an event is no company's schedule.
                    moved = 0,
                ))
            })
        })?;
        rows.into_iter().map(EventRecord::try_from).collect()
    }

    fn event_consumed(&self, c: &Consumed) -> PortResult<bool> {
        let found = self.run("event consumed", |conn| {
            consumed_events::table
                .find((c.event.to_string(), c.consumer.as_str()))
                .select(consumed_events::event_id)
                .first::<String>(conn)
                .optional()
        })?;
        Ok(found.is_some())
    }

    fn consume_event(&self, c: &Consumed, at: Timestamp) -> PortResult<bool> {
        self.write("consume event", |conn| {
            write_transaction(conn, |conn| record_consumed(conn, c, at))
        })
    }

    fn finish_event(&self, id: EventId, at: Timestamp) -> PortResult<()> {
        self.write("finish event", |conn| {
            diesel::update(
                domain_events::table
                    .filter(domain_events::id.eq(id.to_string()))
                    .filter(domain_events::done_at.is_null()),
            )
            .set((
                domain_events::done_at.eq(at.unix_millis()),
                domain_events::lease_until.eq(None::<i64>),
            ))
            .execute(conn)
            .map(|_| ())
        })
    }

    fn prune_events(&self, before: Timestamp) -> PortResult<u64> {
        let before = before.unix_millis();
        let rows = self.write("prune events", |conn| {
            write_transaction(conn, |conn| {
                let done = domain_events::table
                    .filter(domain_events::done_at.lt(before))
                    .select(domain_events::id);
                let consumed = diesel::delete(
                    consumed_events::table.filter(consumed_events::event_id.eq_any(done)),
                )
                .execute(conn)?;
                let events =
                    diesel::delete(domain_events::table.filter(domain_events::done_at.lt(before)))
                        .execute(conn)?;
                Ok(consumed + events)
            })
        })?;
        Ok(rows as u64)
    }
}
