//! Event-log rows: one per event queued for a callback.

use diesel::prelude::*;
use pay_domain::kernel::ids::CompanyId;
use pay_domain::webhooks::{EventKind, LoggedEvent};
use pay_domain::PortResult;

use super::webhooks::{uuid, uuid_text};
use super::{corrupt, id, instant};
use crate::schema::webhook_events;

#[derive(Queryable, Selectable)]
#[diesel(table_name = webhook_events)]
pub(crate) struct EventRow {
    pub(crate) id: String,
    company_id: String,
    grant_id: Option<String>,
    event: String,
    payment_link_uid: Option<String>,
    subscription_uid: Option<String>,
    body: String,
    created_at: i64,
}

impl TryFrom<EventRow> for LoggedEvent {
    type Error = pay_domain::Fault;

    fn try_from(r: EventRow) -> PortResult<LoggedEvent> {
        Ok(LoggedEvent {
            id: uuid(&r.id, "webhook_events.id")?,
            company_id: id(&r.company_id, CompanyId::parse, "webhook_events.company_id")?,
            grant_id: r
                .grant_id
                .map(|g| uuid(&g, "webhook_events.grant_id"))
                .transpose()?,
            event: EventKind::parse_short(&r.event)
                .ok_or_else(|| corrupt("webhook_events.event"))?,
            payment_link_uid: r.payment_link_uid,
            subscription_uid: r.subscription_uid,
            body: r.body,
            created_at: instant(r.created_at, "webhook_events.created_at")?,
        })
    }
}

#[derive(Insertable)]
#[diesel(table_name = webhook_events, treat_none_as_default_value = false)]
pub(crate) struct NewEventRow<'a> {
    id: String,
    company_id: String,
    grant_id: Option<String>,
    event: &'static str,
    payment_link_uid: Option<&'a str>,
    subscription_uid: Option<&'a str>,
    body: &'a str,
    created_at: i64,
}

impl<'a> From<&'a LoggedEvent> for NewEventRow<'a> {
    fn from(e: &'a LoggedEvent) -> Self {
        NewEventRow {
            id: uuid_text(e.id),
            company_id: e.company_id.to_string(),
            grant_id: e.grant_id.map(uuid_text),
            event: e.event.short_name(),
            payment_link_uid: e.payment_link_uid.as_deref(),
            subscription_uid: e.subscription_uid.as_deref(),
            body: &e.body,
            created_at: e.created_at.unix_millis(),
        }
    }
}
