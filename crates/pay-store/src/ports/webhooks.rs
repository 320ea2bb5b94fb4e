//! `WebhookStore` on `DieselStore`: callback configuration, the delivery outbox (enqueue, claim,
//! record) and the delivery log. Written once for both backends, except the claim's select
//! (`FOR UPDATE SKIP LOCKED`, PostgreSQL only).

use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError, QueryResult};
use pay_domain::kernel::idempotency::Completion;
use pay_domain::kernel::ids::{CompanyId, PaymentLinkId};
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::webhooks::ports::{AttemptRecord, WebhookStore};
use pay_domain::webhooks::{
    AfterAttempt, CallbackKind, Circuit, ClaimBudget, CompanyCallback, Delivery, DeliveryFilter,
    DeliveryStatus, Endpoint, EndpointHealth, EventLogEntry, EventLogQuery, GrantSubscription,
    RoundRecorded,
};
use pay_domain::{Fault, PortResult};

use super::{circuits, clock};
use crate::conn::{write_transaction, AnyConnection};
use crate::rows::{
    uuid_text, AttemptRow, CallbackRow, DeliveryRow, NewAttemptRow, NewCallbackRow, NewDeliveryRow,
};
use crate::schema::{payment_links, webhook_attempts, webhook_callbacks, webhook_deliveries};
use crate::DieselStore;

/// The statuses a dispatcher may claim and record attempts for.
fn claimable() -> [&'static str; 2] {
    [
        DeliveryStatus::Pending.as_str(),
        DeliveryStatus::Retrying.as_str(),
    ]
}

/// The selected deliveries that get a place in their endpoint's share, in order (one with an
/// unreadable company id does: converting the row reports it).
fn keep_within(budget: &mut ClaimBudget, rows: Vec<DeliveryRow>) -> Vec<DeliveryRow> {
    rows.into_iter()
        .filter(|row| {
            let (company, url) = row.endpoint();
            match CompanyId::parse(company) {
                Some(company_id) => budget.take(&Endpoint {
                    company_id,
                    url: url.to_owned(),
                }),
                None => true,
            }
        })
        .collect()
}

/// The claim's selection, shared by both backends: live deliveries due at `now`, oldest due
/// first (ties by id), at most `limit`. The `webhook_deliveries_due` index serves it in order.
#[diesel::dsl::auto_type]
fn due_deliveries(now: i64, pending: &'static str, retrying: &'static str, limit: i64) -> _ {
    webhook_deliveries::table
        .filter(webhook_deliveries::next_attempt_at.le(now))
        // Two equalities, not `IN`: diesel prepares an `IN` list anew on every use on SQLite.
        .filter(
            webhook_deliveries::status
                .eq(pending)
                .or(webhook_deliveries::status.eq(retrying)),
        )
        .order_by((
            webhook_deliveries::next_attempt_at.asc(),
            webhook_deliveries::id.asc(),
        ))
        .limit(limit)
}

/// Hands out `count` consecutive event numbers of a link inside the caller's write
/// transaction and returns the first; `None` (nothing written) when there is no such link. The
/// UPDATE comes first: on PostgreSQL its row lock holds every other emitter of this link until
/// the transaction ends, so the value read next is ours and numbers are handed out in commit
/// order; on SQLite the transaction holds the database's write lock from BEGIN IMMEDIATE on.
pub(super) fn take_event_numbers(
    conn: &mut AnyConnection,
    link_id: &str,
    count: i64,
) -> QueryResult<Option<u64>> {
    let bumped = diesel::update(payment_links::table.find(link_id))
        .set(payment_links::event_sequence.eq(payment_links::event_sequence + count))
        .execute(conn)?;
    if bumped == 0 {
        return Ok(None);
    }
    // RETURNING is not in the backends' common subset, hence the read.
    let last: i64 = payment_links::table
        .find(link_id)
        .select(payment_links::event_sequence)
        .first(conn)?;
    u64::try_from(last - count + 1)
        .map(Some)
        .map_err(|e| DieselError::DeserializationError(Box::new(e)))
}

/// Builds the deliveries of the numbers from `first` on and inserts them (in the caller's
/// transaction: a failed insert rolls the numbers back with it).
pub(super) fn insert_built(
    conn: &mut AnyConnection,
    build: &dyn Fn(u64) -> Vec<Delivery>,
    first: u64,
) -> QueryResult<Vec<Delivery>> {
    let deliveries = build(first);
    insert_delivery_rows(conn, &deliveries)?;
    Ok(deliveries)
}

/// Inserts the deliveries and logs their events (`event_log::log_events`), one INSERT per row
/// (a multi-row INSERT is not in `MultiBackend`'s SQLite support); callers run it inside a
/// write transaction, so it is all rows or none.
pub(super) fn insert_delivery_rows(
    conn: &mut AnyConnection,
    deliveries: &[Delivery],
) -> QueryResult<()> {
    for d in deliveries {
        diesel::insert_into(webhook_deliveries::table)
            .values(&NewDeliveryRow::from(d))
            .execute(conn)?;
    }
    super::event_log::log_events(conn, deliveries)
}

impl WebhookStore for DieselStore {
    fn grant_subscription(&self, grant: uuid::Uuid) -> PortResult<Option<GrantSubscription>> {
        super::grant_webhooks::grant_subscription(self, grant)
    }

    fn save_grant_subscription(
        &self,
        sub: &GrantSubscription,
        completion: Option<&Completion>,
    ) -> PortResult<bool> {
        super::grant_webhooks::save_grant_subscription(self, sub, completion)
    }

    fn company_callback(
        &self,
        company: CompanyId,
        kind: CallbackKind,
    ) -> PortResult<Option<CompanyCallback>> {
        self.run("company callback", |conn| {
            webhook_callbacks::table
                .filter(webhook_callbacks::company_id.eq(company.to_string()))
                .filter(webhook_callbacks::kind.eq(kind.as_str()))
                .select(CallbackRow::as_select())
                .first(conn)
                .optional()
        })?
        .map(CompanyCallback::try_from)
        .transpose()
    }

    fn save_company_callback(&self, callback: &CompanyCallback) -> PortResult<bool> {
        let row = NewCallbackRow::from(callback);
        self.write("save company callback", |conn| {
            if callback.version <= 1 {
                // The first version: only if no row exists (a concurrent first save wins).
                return match diesel::insert_into(webhook_callbacks::table)
                    .values(&row)
                    .execute(conn)
                {
                    Ok(n) => Ok(n == 1),
                    Err(DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, _)) => {
                        Ok(false)
                    }
                    Err(e) => Err(e),
                };
            }
            // Compare-and-set on the version: one statement, so no transaction is needed.
            let n = diesel::update(
                webhook_callbacks::table
                    .filter(webhook_callbacks::company_id.eq(&row.company_id))
                    .filter(webhook_callbacks::kind.eq(row.kind))
                    .filter(webhook_callbacks::version.eq(row.version - 1)),
            )
            .set(&row)
            .execute(conn)?;
            Ok(n == 1)
        })
    }

    fn insert_deliveries(&self, deliveries: &[Delivery]) -> PortResult<()> {
        if deliveries.is_empty() {
            return Ok(());
        }
        self.write("insert deliveries", |conn| {
            write_transaction(conn, |conn| insert_delivery_rows(conn, deliveries))
        })
    }

    fn claim_due_deliveries_beside(
        &self,
        now: Timestamp,
        lease_until: Timestamp,
        limit: usize,
        held: &[(Endpoint, usize)],
    ) -> PortResult<Vec<Delivery>> {
        let now = now.unix_millis();
        let lease = lease_until.unix_millis();
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        if limit == 0 {
            return Ok(Vec::new());
        }
        let rows: Vec<DeliveryRow> = self.write("claim due deliveries", |conn| {
            write_transaction(conn, |conn| {
                let moved = clock::max_clock_offset(conn)?;
                // Each endpoint within its share: full ones are skipped by the selection, the
                // others take places in due order. Without a full endpoint the selection is the
                // plain one, a statement prepared once per connection (a skip list's varying
                // parameters are not).
                let mut budget = circuits::claim_budget(conn, now, held)?;
                let full = budget.full();
                let due_now = now.saturating_add(moved);
                let [pending, retrying] = claimable();
                Ok(if full.is_empty() {
                    claim_due!(
                        conn,
                        webhook_deliveries,
                        DeliveryRow,
                        due_deliveries(due_now, pending, retrying, limit),
                        keep = |rows| keep_within(&mut budget, rows),
                        now = now,
                        lease = lease,
                        moved = moved,
                    )
                } else {
                    let skip = circuits::NotTo::endpoints(&full);
                    claim_due!(
                        conn,
                        webhook_deliveries,
                        DeliveryRow,
                        due_deliveries(due_now, pending, retrying, limit).filter(skip.clone()),
                        keep = |rows| keep_within(&mut budget, rows),
                        now = now,
                        lease = lease,
                        moved = moved,
                    )
                })
            })
        })?;
        rows.into_iter().map(Delivery::try_from).collect()
    }

    fn record_attempt(&self, attempt: &AttemptRecord, after: &AfterAttempt) -> PortResult<()> {
        let recorded = self.write("record attempt", |conn| {
            write_transaction(conn, |conn| record_one(conn, attempt, after))
        })?;
        if recorded {
            Ok(())
        } else {
            Err(Fault::new(format!(
                "webhook delivery {}: attempt {} not recorded (unknown delivery, finished, or \
                 not at attempt {})",
                attempt.delivery_id,
                attempt.number,
                attempt.number.saturating_sub(1)
            )))
        }
    }

    fn record_attempts(
        &self,
        batch: &[(AttemptRecord, AfterAttempt)],
        health: &EndpointHealth<'_>,
    ) -> PortResult<RoundRecorded> {
        if batch.is_empty() && health.results.is_empty() {
            return Ok(RoundRecorded::default());
        }
        // One transaction (one commit, one fsync) for a dispatcher's whole round: each
        // delivery moves by its own compare-and-set update, then the attempts of the ones that
        // moved are inserted together.
        self.write("record attempts", |conn| {
            write_transaction(conn, |conn| {
                let moved: Vec<bool> = match conn {
                    AnyConnection::Postgresql(pg) => move_deliveries_pg(pg, batch)?,
                    _ => batch
                        .iter()
                        .map(|(attempt, after)| move_delivery(conn, attempt, after))
                        .collect::<QueryResult<_>>()?,
                };
                let rows: Vec<NewAttemptRow<'_>> = batch
                    .iter()
                    .zip(&moved)
                    .filter(|(_, m)| **m)
                    .map(|((attempt, _), _)| NewAttemptRow::from(attempt))
                    .collect();
                match conn {
                    // One multi-row INSERT: PostgreSQL takes it; diesel's MultiBackend cannot
                    // batch inserts for SQLite, where a statement is an in-process call anyway.
                    AnyConnection::Postgresql(pg) if !rows.is_empty() => {
                        diesel::insert_into(webhook_attempts::table)
                            .values(&rows)
                            .execute(pg)?;
                    }
                    _ => {
                        for row in &rows {
                            diesel::insert_into(webhook_attempts::table)
                                .values(row)
                                .execute(conn)?;
                        }
                    }
                }
                let opened = circuits::fold_health(conn, health)?;
                Ok(RoundRecorded {
                    recorded: moved,
                    opened,
                })
            })
        })
    }

    fn endpoint_circuits(&self, company: CompanyId) -> PortResult<Vec<Circuit>> {
        self.run("list endpoint circuits", |conn| {
            circuits::of_company(conn, company)
        })
    }

    fn outbox_gauges(
        &self,
        now: Timestamp,
    ) -> PortResult<Option<pay_domain::webhooks::ports::OutboxGauges>> {
        self.run("read outbox gauges", |conn| {
            circuits::outbox_gauges(conn, now).map(Some)
        })
    }

    fn retarget_deliveries(&self, moves: &[(uuid::Uuid, String)]) -> PortResult<()> {
        if moves.is_empty() {
            return Ok(());
        }
        // One UPDATE per distinct URL: a round's moves are usually all to one new URL.
        let mut by_url: Vec<(&str, Vec<String>)> = Vec::new();
        for (id, url) in moves {
            match by_url.iter_mut().find(|(u, _)| u == url) {
                Some((_, ids)) => ids.push(uuid_text(*id)),
                None => by_url.push((url, vec![uuid_text(*id)])),
            }
        }
        self.write("retarget deliveries", |conn| {
            write_transaction(conn, |conn| {
                for (url, ids) in &by_url {
                    diesel::update(
                        webhook_deliveries::table
                            .filter(webhook_deliveries::id.eq_any(ids))
                            .filter(webhook_deliveries::status.eq_any(claimable())),
                    )
                    .set(webhook_deliveries::url.eq(*url))
                    .execute(conn)?;
                }
                Ok(())
            })
        })
    }

    fn deliveries(&self, company: CompanyId, filter: &DeliveryFilter) -> PortResult<Vec<Delivery>> {
        let limit = i64::try_from(filter.limit).unwrap_or(i64::MAX);
        // The search term matches one of four columns exactly. Delivery ids are stored as
        // lower-case hyphenated UUIDs and event names are lower case, so for those two the term
        // is normalised (any UUID spelling, any letter case) and compared with `=`, which both
        // backends answer cheaply and alike. Link uids are case-sensitive and order ids are the
        // merchant's own strings: those match exactly (a `lower()` on the column would need
        // expression indexes, and SQLite's `lower()` folds ASCII only).
        let search = filter.search.as_deref().map(|s| {
            let id = uuid::Uuid::try_parse(s).map_or_else(|_| s.to_ascii_lowercase(), uuid_text);
            (id, s.to_ascii_lowercase(), s)
        });
        let rows: Vec<DeliveryRow> = self.run("list deliveries", |conn| {
            let mut q = webhook_deliveries::table
                .filter(webhook_deliveries::company_id.eq(company.to_string()))
                .into_boxed();
            if let Some(uid) = &filter.payment_link_uid {
                q = q.filter(webhook_deliveries::payment_link_uid.eq(uid));
            }
            if let Some(status) = filter.status {
                q = q.filter(webhook_deliveries::status.eq(status.as_str()));
            }
            if let Some(grant) = filter.grant {
                q = q.filter(webhook_deliveries::grant_id.eq(uuid_text(grant)));
            }
            if let Some((id, event, exact)) = &search {
                q = q.filter(
                    webhook_deliveries::id
                        .eq(id)
                        .or(webhook_deliveries::event.eq(event))
                        .or(webhook_deliveries::payment_link_uid.eq(*exact))
                        .or(webhook_deliveries::order_id.eq(*exact)),
                );
            }
            q.order((
                webhook_deliveries::created_at.desc(),
                webhook_deliveries::id.desc(),
            ))
            .limit(limit)
            .select(DeliveryRow::as_select())
            .load(conn)
        })?;
        rows.into_iter().map(Delivery::try_from).collect()
    }

    fn delivery(&self, company: CompanyId, id: uuid::Uuid) -> PortResult<Option<Delivery>> {
        self.run("get delivery", |conn| {
            webhook_deliveries::table
                .filter(webhook_deliveries::id.eq(uuid_text(id)))
                .filter(webhook_deliveries::company_id.eq(company.to_string()))
                .select(DeliveryRow::as_select())
                .first(conn)
                .optional()
        })?
        .map(Delivery::try_from)
        .transpose()
    }

    fn attempts(&self, company: CompanyId, id: uuid::Uuid) -> PortResult<Vec<AttemptRecord>> {
        let rows: Vec<AttemptRow> = self.run("list attempts", |conn| {
            webhook_attempts::table
                .inner_join(webhook_deliveries::table)
                .filter(webhook_attempts::delivery_id.eq(uuid_text(id)))
                .filter(webhook_deliveries::company_id.eq(company.to_string()))
                .order(webhook_attempts::number.asc())
                .select(AttemptRow::as_select())
                .load(conn)
        })?;
        rows.into_iter().map(AttemptRecord::try_from).collect()
    }

    fn event_log(&self, company: CompanyId, q: &EventLogQuery) -> PortResult<Vec<EventLogEntry>> {
        super::event_log::event_log(self, company, q)
    }

    fn logged_event(
        &self,
        company: CompanyId,
        id: uuid::Uuid,
    ) -> PortResult<Option<EventLogEntry>> {
        super::event_log::logged_event(self, company, id)
    }

    fn prune_event_log(&self, before: Timestamp) -> PortResult<u64> {
        super::event_log::prune_event_log(self, before)
    }

    fn enqueue_link_event(
        &self,
        link: PaymentLinkId,
        build: &dyn Fn(u64) -> Vec<Delivery>,
    ) -> PortResult<Vec<Delivery>> {
        let link_id = link.to_string();
        let enqueued = self.write("enqueue link event", |conn| {
            write_transaction(conn, |conn| {
                match take_event_numbers(conn, &link_id, 1)? {
                    Some(first) => insert_built(conn, build, first).map(Some),
                    // Nothing was written; committing the empty transaction is harmless.
                    None => Ok(None),
                }
            })
        })?;
        enqueued.ok_or(Fault::new("unknown payment link"))
    }
}

/// Records one attempt inside the caller's transaction; false when the delivery moved on.
fn record_one(
    conn: &mut AnyConnection,
    attempt: &AttemptRecord,
    after: &AfterAttempt,
) -> QueryResult<bool> {
    if !move_delivery(conn, attempt, after)? {
        return Ok(false);
    }
    diesel::insert_into(webhook_attempts::table)
        .values(&NewAttemptRow::from(attempt))
        .execute(conn)?;
    Ok(true)
}

/// The PostgreSQL form of `move_delivery` for a whole round: one UPDATE ... FROM (VALUES ...)
/// with the same compare-and-set, returning the ids that moved. Written for PostgreSQL alone:
/// the shared DSL has no multi-row update, and a round's 64 separate round trips were most
/// of the dispatcher's time there (SQLite runs in-process, so it keeps the shared form).
fn move_deliveries_pg(
    pg: &mut diesel::PgConnection,
    batch: &[(AttemptRecord, AfterAttempt)],
) -> QueryResult<Vec<bool>> {
    use diesel::sql_types::{BigInt, Integer, Nullable, Text};

    #[derive(diesel::QueryableByName)]
    struct Moved {
        #[diesel(sql_type = Text)]
        id: String,
    }

    let mut sql = String::from(
        "UPDATE webhook_deliveries AS d SET attempts = v.attempts, status = v.status, \
         next_attempt_at = v.next_attempt_at, last_attempt_at = v.last_attempt_at, \
         last_response_status = v.last_response_status, last_error = v.last_error, \
         lease_until = NULL FROM (VALUES ",
    );
    for i in 0..batch.len() {
        let b = i * 7;
        if i > 0 {
            sql.push_str(", ");
        }
        sql.push_str(&format!(
            "(${}::text, ${}::bigint, ${}::text, ${}::bigint, ${}::bigint, ${}::integer, ${}::text)",
            b + 1,
            b + 2,
            b + 3,
            b + 4,
            b + 5,
            b + 6,
            b + 7
        ));
    }
    sql.push_str(
        ") AS v(id, attempts, status, next_attempt_at, last_attempt_at, last_response_status, \
         last_error) WHERE d.id = v.id AND d.attempts = v.attempts - 1 \
         AND d.status IN ('pending', 'retrying') RETURNING d.id",
    );
    let mut query = diesel::sql_query(sql).into_boxed::<diesel::pg::Pg>();
    for (attempt, after) in batch {
        query = query
            .bind::<Text, _>(uuid_text(attempt.delivery_id))
            .bind::<BigInt, _>(i64::from(attempt.number))
            .bind::<Text, _>(after.status.as_str())
            .bind::<Nullable<BigInt>, _>(after.next_attempt_at.map(Timestamp::unix_millis))
            .bind::<BigInt, _>(attempt.at.unix_millis())
            .bind::<Nullable<Integer>, _>(attempt.outcome.status.map(i32::from))
            .bind::<Nullable<Text>, _>(attempt.outcome.error.map(|e| e.as_str()));
    }
    let moved: std::collections::HashSet<String> =
        query.load::<Moved>(pg)?.into_iter().map(|m| m.id).collect();
    Ok(batch
        .iter()
        .map(|(attempt, _)| moved.contains(&uuid_text(attempt.delivery_id)))
        .collect())
}

/// Moves a delivery by an attempt's outcome; false when it moved on already.
fn move_delivery(
    conn: &mut AnyConnection,
    attempt: &AttemptRecord,
    after: &AfterAttempt,
) -> QueryResult<bool> {
    let delivery_id = uuid_text(attempt.delivery_id);
    let number = i64::from(attempt.number);
    let outcome = &attempt.outcome;
    // Compare-and-set on the attempt count (and a live status): a late or duplicate record (a
    // dispatcher whose lease ran out while another one already recorded this attempt) changes
    // nothing instead of moving the delivery backwards.
    let moved = diesel::update(
        webhook_deliveries::table
            .filter(webhook_deliveries::id.eq(&delivery_id))
            .filter(webhook_deliveries::attempts.eq(number - 1))
            .filter(webhook_deliveries::status.eq_any(claimable())),
    )
    .set((
        webhook_deliveries::attempts.eq(number),
        webhook_deliveries::status.eq(after.status.as_str()),
        webhook_deliveries::next_attempt_at.eq(after.next_attempt_at.map(Timestamp::unix_millis)),
        webhook_deliveries::last_attempt_at.eq(attempt.at.unix_millis()),
        webhook_deliveries::last_response_status.eq(outcome.status.map(i32::from)),
        webhook_deliveries::last_error.eq(outcome.error.map(|e| e.as_str())),
        webhook_deliveries::lease_until.eq(None::<i64>),
    ))
    .execute(conn)?;
    Ok(moved == 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claimable_statuses_are_the_live_ones() {
        let live: Vec<&str> = DeliveryStatus::ALL
            .into_iter()
            .filter(|s| !s.is_terminal())
            .map(DeliveryStatus::as_str)
            .collect();
        assert_eq!(claimable().to_vec(), live);
    }

    /// The outbox claims' selections (webhook deliveries, mails) are prepared once per
    /// connection and reused on both backends: diesel keeps a statement only when every part of
    /// it may be kept, and a `sql()` literal or an `IN` list (on SQLite) in the selection made
    /// it prepare the claim anew each time. Counted with diesel's instrumentation on the
    /// connection the claims run on (SQLite's writer; PostgreSQL's one pooled connection).
    #[test]
    fn outbox_claims_are_prepared_once_per_connection() {
        use crate::{DieselStore, StoreConfig};
        use diesel::connection::{Connection, InstrumentationEvent};
        use pay_domain::mail::MailStore;
        use std::sync::{Arc, Mutex};

        let mut dbs = vec![crate::testing::TestDb::sqlite()];
        dbs.extend(crate::testing::TestDb::postgres());
        for db in dbs {
            let store = DieselStore::connect(&StoreConfig {
                url: db.url.clone(),
                max_connections: 1,
            })
            .unwrap();
            store.migrate().unwrap();
            // (started, cached) per claim selection.
            let seen: Arc<Mutex<[(usize, usize); 2]>> = Arc::default();
            // SQLite's statements quote names with backticks, PostgreSQL's with double quotes.
            let which = |sql: &str| {
                let sql = sql.replace('`', "\"");
                if !sql.starts_with("SELECT") || !sql.contains("ORDER BY") {
                    None
                } else if sql.contains("FROM \"webhook_deliveries\"") {
                    Some(0)
                } else if sql.contains("FROM \"mail_outbox\"") {
                    Some(1)
                } else {
                    None
                }
            };
            let counting = seen.clone();
            store
                .write("instrument", |conn| {
                    conn.set_instrumentation(move |event: InstrumentationEvent<'_>| {
                        let mut seen = counting.lock().unwrap();
                        match event {
                            InstrumentationEvent::StartQuery { query, .. } => {
                                if let Some(i) = which(&query.to_string()) {
                                    seen[i].0 += 1;
                                }
                            }
                            InstrumentationEvent::CacheQuery { sql, .. } => {
                                if let Some(i) = which(sql) {
                                    seen[i].1 += 1;
                                }
                            }
                            _ => {}
                        }
                    });
                    Ok(())
                })
                .unwrap();
            let now = Timestamp::from_unix_millis(1_790_000_000_000).unwrap();
            let lease = now.plus(time::Duration::seconds(60));
            for _ in 0..5 {
                assert!(store
                    .claim_due_deliveries_beside(now, lease, 64, &[])
                    .unwrap()
                    .is_empty());
                assert!(store.claim_due_mails(now, lease, 16).unwrap().is_empty());
            }
            let seen = *seen.lock().unwrap();
            assert_eq!(
                seen,
                [(5, 1), (5, 1)],
                "{db:?}: (claims run, statements prepared for the cache) of the deliveries' \
                 and the mails' claims"
            );
        }
    }
}
