//! The event log as callers read it: a page of the caller's events, and one event.

use super::*;
use crate::webhooks::{
    EventLogEntry, EventLogPage, EventLogQuery, EventLogRequest, EVENTS_LIMIT_DEFAULT,
    EVENTS_LIMIT_MAX, EVENT_NOT_FOUND,
};

impl WebhookService {
    /// One logged event of the caller's company (of its grant, for a grant's token).
    fn visible_event(&self, p: &Principal, id: uuid::Uuid) -> PortResult<Option<EventLogEntry>> {
        Ok(self
            .store
            .logged_event(p.company_id, id)?
            .filter(|e| p.grant_id().is_none_or(|g| e.event.grant_id == Some(g))))
    }

    /// A page of the caller's events, newest first: the company's for API keys and members,
    /// only its own links' for an OAuth grant. `starting_after` must be an event the caller
    /// sees (400 on `starting_after` otherwise).
    pub fn event_log(&self, p: &Principal, r: EventLogRequest) -> WebhookResult<EventLogPage> {
        p.authorize(Scope::WebhooksRead)?;
        let limit = match r.limit {
            0 => EVENTS_LIMIT_DEFAULT,
            n if n <= EVENTS_LIMIT_MAX => n,
            _ => {
                return Err(FieldError::new(
                    "limit",
                    format!("limit must be an integer from 1 to {EVENTS_LIMIT_MAX}"),
                )
                .into())
            }
        };
        let after = match r.starting_after {
            None => None,
            Some(id) => {
                let e = self.visible_event(p, id)?.ok_or_else(|| {
                    FieldError::new("starting_after", "starting_after is not one of your events")
                })?;
                Some((e.event.created_at, e.event.id))
            }
        };
        let q = EventLogQuery {
            // One more than asked: whether older entries follow.
            limit: limit + 1,
            after,
            kinds: r.kinds,
            created_gte: r.created_gte,
            created_lt: r.created_lt,
            delivered: r.delivered,
            grant: p.grant_id(),
        };
        let mut data = self.store.event_log(p.company_id, &q)?;
        let has_more = data.len() > limit;
        data.truncate(limit);
        Ok(EventLogPage { data, has_more })
    }

    /// One event of the caller's; another company's or grant's is not found.
    pub fn logged_event(&self, p: &Principal, id: uuid::Uuid) -> WebhookResult<EventLogEntry> {
        p.authorize(Scope::WebhooksRead)?;
        Ok(self.visible_event(p, id)?.ok_or(EVENT_NOT_FOUND)?)
    }
}
