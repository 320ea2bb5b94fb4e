//! Webhook endpoints on `DieselStore`: the claim's share per endpoint (what is leased now,
//! what each circuit allows) and the circuits a round's results move. Written once for both
//! backends; called inside the claim's and the record's transactions.

use std::collections::HashMap;

use diesel::backend::Backend;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, QueryFragment};
use diesel::result::{Error as DieselError, QueryResult};
use diesel::serialize::ToSql;
use diesel::sql_types::Text;
use pay_domain::kernel::ids::CompanyId;
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::webhooks::{Circuit, ClaimBudget, Endpoint, EndpointHealth};

use crate::conn::AnyConnection;
use crate::schema::{webhook_deliveries, webhook_endpoint_circuits};

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = webhook_endpoint_circuits, check_for_backend(crate::conn::MultiBackend))]
pub(super) struct CircuitRow {
    company_id: String,
    url: String,
    failing_since: i64,
    last_failure_at: i64,
    failures: i64,
    paused_until: Option<i64>,
    pauses: i64,
}

fn corrupt(what: &str) -> DieselError {
    DieselError::DeserializationError(format!("webhook_endpoint_circuits: bad {what}").into())
}

fn instant(ms: i64) -> QueryResult<Timestamp> {
    Timestamp::from_unix_millis(ms).ok_or_else(|| corrupt("instant"))
}

fn company(text: &str) -> QueryResult<CompanyId> {
    CompanyId::parse(text).ok_or_else(|| corrupt("company_id"))
}

impl CircuitRow {
    fn circuit(self) -> QueryResult<Circuit> {
        Ok(Circuit {
            endpoint: Endpoint {
                company_id: company(&self.company_id)?,
                url: self.url,
            },
            failing_since: instant(self.failing_since)?,
            last_failure_at: instant(self.last_failure_at)?,
            failures: u32::try_from(self.failures).map_err(|_| corrupt("failures"))?,
            paused_until: self.paused_until.map(instant).transpose()?,
            pauses: u32::try_from(self.pauses).map_err(|_| corrupt("pauses"))?,
        })
    }

    fn of(c: &Circuit) -> CircuitRow {
        CircuitRow {
            company_id: c.endpoint.company_id.to_string(),
            url: c.endpoint.url.clone(),
            failing_since: c.failing_since.unix_millis(),
            last_failure_at: c.last_failure_at.unix_millis(),
            failures: i64::from(c.failures),
            paused_until: c.paused_until.map(Timestamp::unix_millis),
            pauses: i64::from(c.pauses),
        }
    }
}

/// The claim's share per endpoint at `now` (ms, real time): what the claiming dispatcher holds,
/// the circuits that ever opened (only they lower the cap), and what is leased of the probing
/// ones (one probe at a time over every dispatcher).
pub(super) fn claim_budget(
    conn: &mut AnyConnection,
    now: i64,
    held: &[(Endpoint, usize)],
) -> QueryResult<ClaimBudget> {
    let circuits = webhook_endpoint_circuits::table
        .filter(webhook_endpoint_circuits::pauses.gt(0))
        .select(CircuitRow::as_select())
        .load(conn)?
        .into_iter()
        .map(CircuitRow::circuit)
        .collect::<QueryResult<Vec<_>>>()?;
    let mut budget = ClaimBudget::new(held.iter().cloned(), circuits, instant(now)?);
    for e in budget.probing() {
        let leased: i64 = webhook_deliveries::table
            .filter(webhook_deliveries::company_id.eq(e.company_id.to_string()))
            .filter(webhook_deliveries::url.eq(&e.url))
            .filter(webhook_deliveries::lease_until.gt(now))
            .count()
            .get_result(conn)?;
        budget.leased(&e, usize::try_from(leased).unwrap_or(usize::MAX));
    }
    Ok(budget)
}

/// `NOT (endpoint 1 OR endpoint 2 ...)` over `webhook_deliveries`: the claim's selection skips
/// the endpoints with no room left, so the deliveries behind a full endpoint's queue are reached.
/// Every company id and URL is a bound parameter. No endpoint: `1 = 1`.
#[derive(Debug, Clone)]
pub(super) struct NotTo(Vec<(String, String)>);

impl NotTo {
    pub(super) fn endpoints(full: &[Endpoint]) -> NotTo {
        NotTo(
            full.iter()
                .map(|e| (e.company_id.to_string(), e.url.clone()))
                .collect(),
        )
    }
}

// The number of parameters varies: an empty list is cached, a longer one is not (`walk_ast`).
bool_condition!(NotTo);

impl<DB> QueryFragment<DB> for NotTo
where
    DB: Backend,
    String: ToSql<Text, DB>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        if self.0.is_empty() {
            out.push_sql("1 = 1");
            return Ok(());
        }
        // One statement per number of endpoints skipped, and circuits can pause any number:
        // not one to keep prepared.
        out.unsafe_to_cache_prepared();
        out.push_sql("NOT (");
        for (i, (company, url)) in self.0.iter().enumerate() {
            if i > 0 {
                out.push_sql(" OR ");
            }
            out.push_sql("(webhook_deliveries.company_id = ");
            out.push_bind_param::<Text, String>(company)?;
            out.push_sql(" AND webhook_deliveries.url = ");
            out.push_bind_param::<Text, String>(url)?;
            out.push_sql(")");
        }
        out.push_sql(")");
        Ok(())
    }
}

/// Folds a round's results into the circuits inside the record's transaction: reads each
/// touched endpoint's row once (on PostgreSQL locked, in one order for every dispatcher, so two
/// rounds failing at one endpoint neither lose a count nor deadlock), writes the new state
/// (deletes the row of a closed circuit); returns the circuits the round opened.
pub(super) fn fold_health(
    conn: &mut AnyConnection,
    health: &EndpointHealth<'_>,
) -> QueryResult<Vec<Circuit>> {
    if health.results.is_empty() {
        return Ok(Vec::new());
    }
    let mut touched: Vec<&Endpoint> = health.results.iter().map(|r| &r.endpoint).collect();
    touched.sort();
    touched.dedup();
    let mut stored: HashMap<Endpoint, Circuit> = HashMap::new();
    for e in touched {
        let found =
            webhook_endpoint_circuits::table.find((e.company_id.to_string(), e.url.clone()));
        let row: Option<CircuitRow> = match conn {
            AnyConnection::Postgresql(pg) => found
                .select(CircuitRow::as_select())
                .for_update()
                .first(pg)
                .optional()?,
            AnyConnection::Sqlite(sqlite) => found
                .select(CircuitRow::as_select())
                .first(sqlite)
                .optional()?,
        };
        if let Some(row) = row {
            stored.insert(e.clone(), row.circuit()?);
        }
    }
    let folded = health.fold(|e| Ok::<_, DieselError>(stored.remove(e)))?;
    let mut opened = Vec::new();
    for (endpoint, state) in folded {
        let key = (endpoint.company_id.to_string(), endpoint.url.clone());
        let Some(c) = state else {
            diesel::delete(webhook_endpoint_circuits::table.find(key)).execute(conn)?;
            continue;
        };
        let row = CircuitRow::of(&c);
        let updated = diesel::update(webhook_endpoint_circuits::table.find(key))
            .set((
                webhook_endpoint_circuits::failing_since.eq(row.failing_since),
                webhook_endpoint_circuits::last_failure_at.eq(row.last_failure_at),
                webhook_endpoint_circuits::failures.eq(row.failures),
                webhook_endpoint_circuits::paused_until.eq(row.paused_until),
                webhook_endpoint_circuits::pauses.eq(row.pauses),
            ))
            .execute(conn)?;
        if updated == 0 {
            // A first failure. Another round inserting the same endpoint at once (PostgreSQL)
            // wins; this round's count is dropped rather than its whole record failing.
            let insert = diesel::insert_into(webhook_endpoint_circuits::table).values(&row);
            match conn {
                AnyConnection::Postgresql(pg) => insert.on_conflict_do_nothing().execute(pg)?,
                AnyConnection::Sqlite(sqlite) => insert.on_conflict_do_nothing().execute(sqlite)?,
            };
        }
        if c.opened_at(health.now, health.rule) {
            opened.push(c);
        }
    }
    Ok(opened)
}

/// The company's circuits, by URL.
pub(super) fn of_company(
    conn: &mut AnyConnection,
    company: CompanyId,
) -> QueryResult<Vec<Circuit>> {
    webhook_endpoint_circuits::table
        .filter(webhook_endpoint_circuits::company_id.eq(company.to_string()))
        .order_by(webhook_endpoint_circuits::url.asc())
        .select(CircuitRow::as_select())
        .load(conn)?
        .into_iter()
        .map(CircuitRow::circuit)
        .collect()
}

/// `WebhookStore::outbox_gauges`: live deliveries (pending or retrying; they, and only they,
/// have a `next_attempt_at`, so the `webhook_deliveries_due` partial index holds them) counted
/// with their oldest `created_at`, and the circuits paused at `now`. One read per table,
/// proportional to what is queued and failing, not to the history.
pub(super) fn outbox_gauges(
    conn: &mut AnyConnection,
    now: Timestamp,
) -> QueryResult<pay_domain::webhooks::ports::OutboxGauges> {
    use pay_domain::webhooks::DeliveryStatus;
    let (pending, oldest): (i64, Option<i64>) = webhook_deliveries::table
        .filter(webhook_deliveries::next_attempt_at.is_not_null())
        .filter(
            webhook_deliveries::status
                .eq(DeliveryStatus::Pending.as_str())
                .or(webhook_deliveries::status.eq(DeliveryStatus::Retrying.as_str())),
        )
        .select((
            diesel::dsl::count_star(),
            diesel::dsl::min(webhook_deliveries::created_at),
        ))
        .first(conn)?;
    let open: i64 = webhook_endpoint_circuits::table
        .filter(webhook_endpoint_circuits::paused_until.gt(now.unix_millis()))
        .count()
        .get_result(conn)?;
    Ok(pay_domain::webhooks::ports::OutboxGauges {
        pending: u64::try_from(pending).unwrap_or(0),
        oldest_pending_at: oldest.map(instant).transpose()?,
        circuits_open: u64::try_from(open).unwrap_or(0),
    })
}
