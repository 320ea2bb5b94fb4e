//! The event log on `DieselStore`: its rows are written with the deliveries of their events
//! (`log_events`, inside the inserting transaction), read a page at a time, and pruned.

use std::collections::HashMap;

use diesel::prelude::*;
use diesel::result::QueryResult;
use pay_domain::kernel::ids::CompanyId;
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::webhooks::{Delivery, DeliveryStatus, EventLogEntry, EventLogQuery, LoggedEvent};
use pay_domain::PortResult;

use crate::conn::AnyConnection;
use crate::rows::{uuid_text, EventRow, NewEventRow};
use crate::schema::{webhook_deliveries, webhook_events};
use crate::DieselStore;

/// Records the events of `deliveries` (`LoggedEvent::of_deliveries`) in the caller's
/// transaction, one INSERT each.
pub(super) fn log_events(conn: &mut AnyConnection, deliveries: &[Delivery]) -> QueryResult<()> {
    for event in LoggedEvent::of_deliveries(deliveries) {
        diesel::insert_into(webhook_events::table)
            .values(&NewEventRow::from(&event))
            .execute(conn)?;
    }
    Ok(())
}

/// (group id, delivery id, status) of the deliveries of some events, oldest first.
type DeliveryFacts = Vec<(String, String, String)>;

/// The deliveries of the events `ids`, oldest first (served by `webhook_deliveries_group`).
fn deliveries_of(conn: &mut AnyConnection, ids: &[String]) -> QueryResult<DeliveryFacts> {
    if ids.is_empty() {
        return Ok(vec![]);
    }
    webhook_deliveries::table
        .filter(webhook_deliveries::group_id.eq_any(ids))
        .order((
            webhook_deliveries::created_at.asc(),
            webhook_deliveries::id.asc(),
        ))
        .select((
            webhook_deliveries::group_id,
            webhook_deliveries::id,
            webhook_deliveries::status,
        ))
        .load(conn)
}

/// The entries of `rows` with their deliveries.
fn entries(rows: Vec<EventRow>, facts: DeliveryFacts) -> PortResult<Vec<EventLogEntry>> {
    let mut by_group: HashMap<String, (Vec<uuid::Uuid>, bool)> = HashMap::new();
    for (group, id, status) in facts {
        let id = uuid::Uuid::try_parse(&id)
            .map_err(|_| crate::rows::corrupt("webhook_deliveries.id"))?;
        let slot = by_group.entry(group).or_default();
        slot.0.push(id);
        slot.1 |= status == DeliveryStatus::Succeeded.as_str();
    }
    rows.into_iter()
        .map(|row| {
            let event = LoggedEvent::try_from(row)?;
            let (delivery_ids, delivered) =
                by_group.remove(&uuid_text(event.id)).unwrap_or_default();
            Ok(EventLogEntry {
                event,
                delivery_ids,
                delivered,
            })
        })
        .collect()
}

pub(super) fn event_log(
    store: &DieselStore,
    company: CompanyId,
    q: &EventLogQuery,
) -> PortResult<Vec<EventLogEntry>> {
    let limit = i64::try_from(q.limit).unwrap_or(i64::MAX);
    let kinds: Vec<&'static str> = q.kinds.iter().map(|k| k.short_name()).collect();
    let (rows, facts) = store.run("list logged events", |conn| {
        let mut sel = webhook_events::table
            .filter(webhook_events::company_id.eq(company.to_string()))
            .into_boxed();
        if let Some(grant) = q.grant {
            sel = sel.filter(webhook_events::grant_id.eq(uuid_text(grant)));
        }
        if !kinds.is_empty() {
            sel = sel.filter(webhook_events::event.eq_any(kinds.clone()));
        }
        if let Some(t) = q.created_gte {
            sel = sel.filter(webhook_events::created_at.ge(t.unix_millis()));
        }
        if let Some(t) = q.created_lt {
            sel = sel.filter(webhook_events::created_at.lt(t.unix_millis()));
        }
        if let Some((at, id)) = q.after {
            let (at, id) = (at.unix_millis(), uuid_text(id));
            sel = sel.filter(
                webhook_events::created_at
                    .lt(at)
                    .or(webhook_events::created_at
                        .eq(at)
                        .and(webhook_events::id.lt(id))),
            );
        }
        if let Some(delivered) = q.delivered {
            let succeeded = diesel::dsl::exists(
                webhook_deliveries::table
                    .filter(webhook_deliveries::group_id.eq(webhook_events::id))
                    .filter(webhook_deliveries::status.eq(DeliveryStatus::Succeeded.as_str())),
            );
            sel = if delivered {
                sel.filter(succeeded)
            } else {
                sel.filter(diesel::dsl::not(succeeded))
            };
        }
        let rows: Vec<EventRow> = sel
            .order((webhook_events::created_at.desc(), webhook_events::id.desc()))
            .limit(limit)
            .select(EventRow::as_select())
            .load(conn)?;
        let ids: Vec<String> = rows.iter().map(|r| r.id.clone()).collect();
        let facts = deliveries_of(conn, &ids)?;
        Ok((rows, facts))
    })?;
    entries(rows, facts)
}

pub(super) fn logged_event(
    store: &DieselStore,
    company: CompanyId,
    id: uuid::Uuid,
) -> PortResult<Option<EventLogEntry>> {
    let (rows, facts) = store.run("get logged event", |conn| {
        let rows: Vec<EventRow> = webhook_events::table
            .filter(webhook_events::id.eq(uuid_text(id)))
            .filter(webhook_events::company_id.eq(company.to_string()))
            .select(EventRow::as_select())
            .load(conn)?;
        let ids: Vec<String> = rows.iter().map(|r| r.id.clone()).collect();
        let facts = deliveries_of(conn, &ids)?;
        Ok((rows, facts))
    })?;
    Ok(entries(rows, facts)?.pop())
}

pub(super) fn prune_event_log(store: &DieselStore, before: Timestamp) -> PortResult<u64> {
    let n = store.write("prune event log", |conn| {
        diesel::delete(
            webhook_events::table.filter(webhook_events::created_at.lt(before.unix_millis())),
        )
        .execute(conn)
    })?;
    Ok(n as u64)
}
