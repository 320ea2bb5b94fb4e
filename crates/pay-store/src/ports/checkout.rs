//! `CheckoutStore` on `DieselStore`: payment sessions, the link's timeline, and the one write
//! that moves a session (processor event once, one-time claim, compare-and-set on the session's
//! version, timeline, webhook outbox) in one transaction. Written once for both backends.
//! Sessions change all the time, so none of this goes through the hot-read cache.

use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError, QueryResult};
use pay_domain::checkout::machine::SessionStatus;
use pay_domain::checkout::{
    CheckoutStore, CollectedDay, DueSession, LinkEventWrite, PaymentSession, SessionChange,
    TimelineEvent, WriteOutcome,
};
use pay_domain::kernel::ids::{CompanyId, LinkUid, PaymentLinkId, PaymentSessionId};
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::links::{LinkStatus, PaymentLink};
use pay_domain::webhooks::Delivery;
use pay_domain::{Fault, PortResult};

use super::clock;
use super::collected::{self, Counted};
use super::events::insert_events;
use super::webhooks::{insert_built, take_event_numbers};
use crate::conn::{write_transaction, AnyConnection};
use crate::rows::{
    write_instant, LinkRow, NewPaymentSessionRow, NewTimelineRow, PaymentSessionRow, TimelineRow,
};
use crate::schema::{payment_links, payment_sessions, processor_events, timeline_events};
use crate::DieselStore;

/// The statuses of sessions still waiting for the payer (`SessionStatus::is_unfinished`).
fn unfinished() -> [&'static str; 2] {
    [
        SessionStatus::Quote.as_str(),
        SessionStatus::Pending.as_str(),
    ]
}

/// Why a write changed nothing. Carried out of the transaction closure (whose error rolls it
/// back) and turned into the port's answer there.
enum Refusal {
    Stale,
    Duplicate,
    LinkAlreadyPaid,
    UnknownLink,
    /// The stored session could not be read as counted (`collected::Counted`).
    Corrupt(Fault),
}

/// The write, converted to rows before a connection is taken.
struct Prepared<'a> {
    link_id: String,
    /// The processor event id and the session it applies to.
    processor_event: Option<(&'a str, Option<PaymentSessionId>)>,
    claim: Option<String>,
    session: Option<NewPaymentSessionRow<'a>>,
    /// `Some` for an update: the version the stored row must still have.
    expected_version: Option<i64>,
    /// What the session counts for in the daily roll-up once written (`None`: not complete).
    counted: Option<Counted>,
    timeline: Vec<NewTimelineRow>,
    webhook_events: i64,
    /// When the write happened (the claimed link's `updated_at`, the event's `applied_at`).
    at: i64,
    /// The domain events the write decides.
    events: &'a [pay_domain::kernel::events::EventRecord],
}

impl<'a> Prepared<'a> {
    fn new(write: &'a LinkEventWrite) -> PortResult<Self> {
        let bug = |what: &str| Fault::new(format!("write link event: {what}"));
        let (session, expected_version) = match &write.change {
            SessionChange::Insert(s) => (Some(s), None),
            SessionChange::Update {
                session,
                expected_version,
            } => {
                if session.version != expected_version.saturating_add(1) {
                    return Err(bug("an update must store expected_version + 1"));
                }
                (Some(session), Some(*expected_version))
            }
            SessionChange::None => (None, None),
        };
        // Caller bugs, refused before anything is written: rows filed under another link.
        if session.is_some_and(|s| s.link_id != write.link_id)
            || write.timeline.iter().any(|e| e.link_id != write.link_id)
        {
            return Err(bug("session or timeline entry of another link"));
        }
        let webhook_events =
            i64::try_from(write.webhook_events).map_err(|_| bug("too many webhook events"))?;
        // A write with neither a session nor a timeline entry has no instant of its own; the
        // wall clock dates it (only bookkeeping columns take it).
        let at = write_instant(session, &write.timeline)
            .unwrap_or_else(|| Timestamp::from_datetime(time::OffsetDateTime::now_utc()));
        Ok(Prepared {
            link_id: write.link_id.to_string(),
            processor_event: write
                .processor_event_id
                .as_deref()
                .map(|e| (e, session.map(|s| s.id).or(write.claim_link))),
            claim: write.claim_link.map(|s| s.to_string()),
            session: session.map(NewPaymentSessionRow::try_from).transpose()?,
            expected_version,
            counted: match session {
                Some(s) => Counted::of(
                    s.status.as_str(),
                    &s.company_id.to_string(),
                    s.updated_at.unix_millis(),
                    &s.invoice_asset,
                    s.invoice_amount.as_str(),
                )?,
                None => None,
            },
            timeline: write
                .timeline
                .iter()
                .map(NewTimelineRow::try_from)
                .collect::<PortResult<_>>()?,
            webhook_events,
            at: at.unix_millis(),
            events: &write.events,
        })
    }
}

/// The steps of `write_link_event` inside its transaction; `Err(Refusal)` rolls it back.
///
/// Every step that locks the link's row (the claim, the sequence bump) comes before the
/// session's row is written: two writes about one session, one claiming the link and one
/// emitting a webhook, would otherwise lock the two rows in opposite orders on PostgreSQL and
/// deadlock. The deliveries themselves are still built and inserted last.
fn apply(
    conn: &mut AnyConnection,
    w: &Prepared<'_>,
    build: &dyn Fn(u64) -> Vec<Delivery>,
) -> QueryResult<Result<Vec<Delivery>, Refusal>> {
    // (a) The processor event, once. The check answers a redelivery without an error; the
    // primary key settles two first deliveries racing on PostgreSQL: the second INSERT waits
    // for the first transaction and fails when it commits.
    if let Some((event_id, session_id)) = &w.processor_event {
        let seen = processor_events::table
            .find(event_id)
            .select(processor_events::event_id)
            .first::<String>(conn)
            .optional()?;
        if seen.is_some() {
            return Ok(Err(Refusal::Duplicate));
        }
        match diesel::insert_into(processor_events::table)
            .values((
                processor_events::event_id.eq(event_id),
                processor_events::session_id.eq(session_id.map(|s| s.to_string())),
                processor_events::applied_at.eq(w.at),
            ))
            .execute(conn)
        {
            Ok(_) => {}
            Err(DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, _)) => {
                return Ok(Err(Refusal::Duplicate))
            }
            Err(e) => return Err(e),
        }
    }

    // (b) The one-time claim: compare-and-set on the empty `paid_session_id`.
    if let Some(session_id) = &w.claim {
        let claimed = diesel::update(
            payment_links::table
                .filter(payment_links::id.eq(&w.link_id))
                .filter(payment_links::paid_session_id.is_null()),
        )
        .set((
            payment_links::paid_session_id.eq(session_id),
            payment_links::status.eq(LinkStatus::Archived.as_str()),
            payment_links::updated_at.eq(w.at),
        ))
        .execute(conn)?;
        if claimed == 0 {
            return Ok(Err(Refusal::LinkAlreadyPaid));
        }
    }

    // (e, first half) The event sequence: the UPDATE first, so that on PostgreSQL its row lock
    // holds every other emitter of this link until this transaction ends and the value read
    // next is ours (`take_event_numbers`, shared with `enqueue_link_event`).
    let first = if w.webhook_events > 0 {
        match take_event_numbers(conn, &w.link_id, w.webhook_events)? {
            Some(first) => Some(first),
            None => return Ok(Err(Refusal::UnknownLink)),
        }
    } else {
        None
    };

    // (c) The session: a new row, or compare-and-set on its version; and, in this same
    // transaction, the daily roll-up of completed sessions (`collected_days`) moved from what
    // the stored row counted for to what the new one does. Every write of a session passes
    // here, so no completion (settlement, manual resolution, sandbox) or reversal is missed.
    if let Some(row) = &w.session {
        let before = match w.expected_version {
            None => {
                diesel::insert_into(payment_sessions::table)
                    .values(row)
                    .execute(conn)?;
                None
            }
            Some(expected) => {
                // The row being replaced, read at the version the update requires: if the
                // update below succeeds, this is what it replaced.
                let before = match collected::before_update(conn, &row.id, &row.link_id, expected)?
                {
                    None => return Ok(Err(Refusal::Stale)),
                    Some(Err(fault)) => return Ok(Err(Refusal::Corrupt(fault))),
                    Some(Ok(counted)) => counted,
                };
                let updated = diesel::update(
                    payment_sessions::table
                        .filter(payment_sessions::id.eq(&row.id))
                        .filter(payment_sessions::link_id.eq(&row.link_id))
                        .filter(payment_sessions::version.eq(expected)),
                )
                .set(row)
                .execute(conn)?;
                if updated == 0 {
                    return Ok(Err(Refusal::Stale));
                }
                before
            }
        };
        collected::follow(conn, before.as_ref(), w.counted.as_ref())?;
    }

    // (c') The domain events it decides (a completion), into the event outbox.
    insert_events(conn, w.events)?;

    // (d) The timeline.
    for row in &w.timeline {
        diesel::insert_into(timeline_events::table)
            .values(row)
            .execute(conn)?;
    }

    // (e, second half) The deliveries built with the numbers handed out.
    match first {
        Some(first) => insert_built(conn, build, first).map(Ok),
        None => Ok(Ok(Vec::new())),
    }
}

impl CheckoutStore for DieselStore {
    fn public_link(&self, uid: &LinkUid) -> PortResult<Option<PaymentLink>> {
        self.run("public link", |conn| {
            payment_links::table
                .filter(payment_links::uid.eq(uid.as_str()))
                .select(LinkRow::as_select())
                .first(conn)
                .optional()
        })?
        .map(PaymentLink::try_from)
        .transpose()
    }

    fn processor_event_applied(&self, event_id: &str) -> PortResult<bool> {
        let found = self.run("processor event applied", |conn| {
            processor_events::table
                .find(event_id)
                .select(processor_events::event_id)
                .first::<String>(conn)
                .optional()
        })?;
        Ok(found.is_some())
    }

    fn write_link_event(
        &self,
        write: &LinkEventWrite,
        build: &dyn Fn(u64) -> Vec<Delivery>,
    ) -> PortResult<WriteOutcome> {
        let prepared = Prepared::new(write)?;
        let mut refused = None;
        let written = self.write("write link event", |conn| {
            write_transaction(conn, |conn| match apply(conn, &prepared, build)? {
                Ok(deliveries) => Ok(deliveries),
                Err(refusal) => {
                    refused = Some(refusal);
                    Err(DieselError::RollbackTransaction)
                }
            })
        });
        match refused {
            None => written.map(WriteOutcome::Applied),
            Some(Refusal::Stale) => Ok(WriteOutcome::Stale),
            Some(Refusal::Duplicate) => Ok(WriteOutcome::Duplicate),
            Some(Refusal::LinkAlreadyPaid) => Ok(WriteOutcome::LinkAlreadyPaid),
            Some(Refusal::UnknownLink) => Err(Fault::new("unknown payment link")),
            Some(Refusal::Corrupt(fault)) => Err(fault),
        }
    }

    fn payment_session(&self, id: PaymentSessionId) -> PortResult<Option<PaymentSession>> {
        self.run("payment session", |conn| {
            payment_sessions::table
                .find(id.to_string())
                .select(PaymentSessionRow::as_select())
                .first(conn)
                .optional()
        })?
        .map(PaymentSession::try_from)
        .transpose()
    }

    fn session_with_link(
        &self,
        id: PaymentSessionId,
    ) -> PortResult<Option<(PaymentLink, PaymentSession)>> {
        let row = self.run("session with link", |conn| {
            payment_sessions::table
                .inner_join(payment_links::table)
                .filter(payment_sessions::id.eq(id.to_string()))
                .select((LinkRow::as_select(), PaymentSessionRow::as_select()))
                .first::<(LinkRow, PaymentSessionRow)>(conn)
                .optional()
        })?;
        row.map(|(l, s)| Ok((PaymentLink::try_from(l)?, PaymentSession::try_from(s)?)))
            .transpose()
    }

    fn latest_session(&self, link: PaymentLinkId) -> PortResult<Option<PaymentSession>> {
        self.run("latest session", |conn| latest_session_row(conn, link))?
            .map(PaymentSession::try_from)
            .transpose()
    }

    fn latest_session_in(
        &self,
        link: PaymentLinkId,
        statuses: &[SessionStatus],
    ) -> PortResult<Option<PaymentSession>> {
        let statuses: Vec<&str> = statuses.iter().map(|s| s.as_str()).collect();
        self.run("latest session in", |conn| {
            latest_session_row_in(conn, link, Some(&statuses))
        })?
        .map(PaymentSession::try_from)
        .transpose()
    }

    fn company_sessions_in(
        &self,
        company: CompanyId,
        status: SessionStatus,
        since: Timestamp,
        limit: usize,
    ) -> PortResult<Vec<PaymentSession>> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        if limit == 0 {
            return Ok(Vec::new());
        }
        // The range of the (company_id, status, updated_at, id) index, read backwards.
        let rows: Vec<PaymentSessionRow> = self.run("company sessions in", |conn| {
            payment_sessions::table
                .filter(payment_sessions::company_id.eq(company.to_string()))
                .filter(payment_sessions::status.eq(status.as_str()))
                .filter(payment_sessions::updated_at.ge(since.unix_millis()))
                .order((
                    payment_sessions::updated_at.desc(),
                    payment_sessions::id.desc(),
                ))
                .limit(limit)
                .select(PaymentSessionRow::as_select())
                .load(conn)
        })?;
        rows.into_iter().map(PaymentSession::try_from).collect()
    }

    fn company_collected(
        &self,
        company: CompanyId,
        first_day: i64,
    ) -> PortResult<Vec<CollectedDay>> {
        // The daily roll-up: one row per day and asset, a range of its primary key.
        let rows = self.run("company collected", |conn| {
            collected::read(conn, &company.to_string(), first_day)
        })?;
        collected::days(rows)
    }

    fn unfinished_sessions(&self, link: PaymentLinkId) -> PortResult<Vec<PaymentSession>> {
        let rows: Vec<PaymentSessionRow> = self.run("unfinished sessions", |conn| {
            payment_sessions::table
                .filter(payment_sessions::link_id.eq(link.to_string()))
                .filter(payment_sessions::status.eq_any(unfinished()))
                .order((
                    payment_sessions::created_at.asc(),
                    payment_sessions::id.asc(),
                ))
                .select(PaymentSessionRow::as_select())
                .load(conn)
        })?;
        rows.into_iter().map(PaymentSession::try_from).collect()
    }

    fn timeline(&self, link: PaymentLinkId) -> PortResult<Vec<TimelineEvent>> {
        let rows = self.run("timeline", |conn| timeline_rows(conn, link))?;
        rows.into_iter().map(TimelineEvent::try_from).collect()
    }

    fn latest_session_and_timeline(
        &self,
        link: PaymentLinkId,
    ) -> PortResult<(Option<PaymentSession>, Vec<TimelineEvent>)> {
        // One pooled connection for both reads (the link detail's hot path).
        let (session, rows) = self.run("latest session and timeline", |conn| {
            Ok((latest_session_row(conn, link)?, timeline_rows(conn, link)?))
        })?;
        Ok((
            session.map(PaymentSession::try_from).transpose()?,
            rows.into_iter()
                .map(TimelineEvent::try_from)
                .collect::<PortResult<_>>()?,
        ))
    }

    fn due_sessions(&self, now: Timestamp, limit: usize) -> PortResult<Vec<DueSession>> {
        let now = now.unix_millis();
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        if limit == 0 {
            return Ok(Vec::new());
        }
        let rows: Vec<(PaymentSessionRow, LinkRow)> = self.run("due sessions", |conn| {
            // Deadlines are on the link's company clock: first what is due by the furthest
            // moved clock (exactly `now` while none moved), then what is due on its own.
            let moved = clock::max_clock_offset(conn)?;
            let by = now.saturating_add(moved);
            let link_expired = || {
                clock::due_on_company_clock(
                    "payment_links",
                    "expires_at",
                    "company_id",
                    now,
                    moved > 0,
                )
            };
            payment_sessions::table
                .inner_join(payment_links::table)
                .filter(payment_sessions::status.eq_any(unfinished()))
                .filter(
                    payment_sessions::expires_at
                        .le(by)
                        .or(payment_links::status.ne(LinkStatus::Active.as_str()))
                        .or(payment_links::expires_at.le(by)),
                )
                .filter(
                    link_expired()
                        .or(payment_links::status.ne(LinkStatus::Active.as_str()))
                        .or(clock::due_on_company_clock(
                            "payment_sessions",
                            "expires_at",
                            "company_id",
                            now,
                            moved > 0,
                        )),
                )
                .order((
                    payment_sessions::expires_at.asc(),
                    payment_sessions::id.asc(),
                ))
                .limit(limit)
                .select((PaymentSessionRow::as_select(), LinkRow::as_select()))
                .load(conn)
        })?;
        rows.into_iter()
            .map(|(session, link)| {
                Ok(DueSession {
                    session: session.try_into()?,
                    link: PaymentLink::try_from(link)?,
                })
            })
            .collect()
    }
}

/// The link's newest session row.
fn latest_session_row(
    conn: &mut AnyConnection,
    link: PaymentLinkId,
) -> QueryResult<Option<PaymentSessionRow>> {
    latest_session_row_in(conn, link, None)
}

/// The link's newest session row, of one of `statuses` when given.
fn latest_session_row_in(
    conn: &mut AnyConnection,
    link: PaymentLinkId,
    statuses: Option<&[&str]>,
) -> QueryResult<Option<PaymentSessionRow>> {
    let mut q = payment_sessions::table
        .filter(payment_sessions::link_id.eq(link.to_string()))
        .into_boxed();
    if let Some(statuses) = statuses {
        q = q.filter(payment_sessions::status.eq_any(statuses));
    }
    q
        // Session ids are v7 UUIDs: they break same-millisecond ties in creation order.
        .order((
            payment_sessions::created_at.desc(),
            payment_sessions::id.desc(),
        ))
        .select(PaymentSessionRow::as_select())
        .first(conn)
        .optional()
}

/// The link's timeline rows, oldest first.
fn timeline_rows(conn: &mut AnyConnection, link: PaymentLinkId) -> QueryResult<Vec<TimelineRow>> {
    timeline_events::table
        .filter(timeline_events::link_id.eq(link.to_string()))
        .order((timeline_events::created_at.asc(), timeline_events::id.asc()))
        .select(TimelineRow::as_select())
        .load(conn)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unfinished_statuses_are_the_domains() {
        let want: Vec<&str> = SessionStatus::ALL
            .into_iter()
            .filter(|s| s.is_unfinished())
            .map(SessionStatus::as_str)
            .collect();
        assert_eq!(unfinished().to_vec(), want);
    }
}
