//! The one claim of an outbox table (webhook deliveries, mails, and the subscriptions due to
//! the scheduler): rows due on their company's clock and not leased on real time, oldest due
//! first, locked and skipped by concurrent claimers on PostgreSQL (`FOR UPDATE SKIP LOCKED`;
//! SQLite claims on its single writer inside BEGIN IMMEDIATE), then leased until `lease`. The
//! tables share the column names this needs (`id`, `company_id`, `lease_until`, and the due
//! column: `next_attempt_at` for the outboxes, `next_run_at` for subscriptions).

/// A row an outbox claim hands out.
pub(crate) trait OutboxRow {
    fn id(&self) -> &str;
    /// Shows the lease as the row's `next_attempt_at` (what an outbox claim wrote; a row whose
    /// lease has a column of its own keeps its due time).
    fn leased_until(&mut self, lease: i64);
}

/// The traits that make `$t` a boolean condition over any table's rows, written out in its own
/// `QueryFragment`: a plain value (no aggregate), and a statement holding it keyed in diesel's
/// statement cache by its SQL text, not its type, since the text varies with the value. Whether
/// such a statement is kept at all is the fragment's to say (`unsafe_to_cache_prepared`).
macro_rules! bool_condition {
    ($t:ty) => {
        impl diesel::expression::Expression for $t {
            type SqlType = diesel::sql_types::Bool;
        }

        impl<QS> diesel::expression::AppearsOnTable<QS> for $t {}

        impl<QS> diesel::expression::SelectableExpression<QS> for $t {}

        impl<GB> diesel::expression::ValidGrouping<GB> for $t {
            type IsAggregate = diesel::expression::is_aggregate::Never;
        }

        impl diesel::query_builder::QueryId for $t {
            type QueryId = ();
            const HAS_STATIC_QUERY_ID: bool = false;
        }
    };
}

/// Claims what `$due` (the table's due selection, oldest first, limited) finds, inside the
/// caller's write transaction on `$conn`; evaluates to the leased rows. An outbox's due column
/// is `next_attempt_at` and the claim shows the lease there too; another table names its due
/// column (`due = next_run_at`) and what the claim sets (`set = |lease| ...`). `keep = |rows|
/// ...` picks, from the selected rows in order, the ones leased (the webhook outbox keeps each
/// endpoint within its share); the rest stay for a later claim.
macro_rules! claim_due {
    ($conn:expr, $table:ident, $Row:ty, $due:expr, now = $now:expr, lease = $lease:expr, moved = $moved:expr $(,)?) => {
        claim_due!(
            $conn,
            $table,
            $Row,
            $due,
            keep = |rows| rows,
            now = $now,
            lease = $lease,
            moved = $moved,
        )
    };
    ($conn:expr, $table:ident, $Row:ty, $due:expr, keep = $keep:expr, now = $now:expr, lease = $lease:expr, moved = $moved:expr $(,)?) => {
        claim_due!(
            $conn,
            $table,
            $Row,
            $due,
            due = next_attempt_at,
            set = |lease: i64| (
                $table::next_attempt_at.eq(lease),
                $table::lease_until.eq(lease)
            ),
            keep = $keep,
            now = $now,
            lease = $lease,
            moved = $moved,
        )
    };
    ($conn:expr, $table:ident, $Row:ty, $due:expr, due = $column:ident, set = $set:expr, now = $now:expr, lease = $lease:expr, moved = $moved:expr $(,)?) => {
        claim_due!(
            $conn,
            $table,
            $Row,
            $due,
            due = $column,
            set = $set,
            keep = |rows| rows,
            now = $now,
            lease = $lease,
            moved = $moved,
        )
    };
    ($conn:expr, $table:ident, $Row:ty, $due:expr, due = $column:ident, set = $set:expr, keep = $keep:expr, now = $now:expr, lease = $lease:expr, moved = $moved:expr $(,)?) => {{
        use $crate::ports::outbox::OutboxRow as _;
        let (now, lease, moved): (i64, i64, i64) = ($now, $lease, $moved);
        // Due on the row's company clock (a moved test clock makes its retries due sooner),
        // and not leased on real time (a moved clock never ends a lease early).
        let due = || {
            $due.filter($crate::ports::clock::due_on_company_clock(
                stringify!($table),
                stringify!($column),
                "company_id",
                now,
                moved > 0,
            ))
            .filter(
                $table::lease_until
                    .is_null()
                    .or($table::lease_until.le(now)),
            )
        };
        // A claimer whose select began before another's commit re-checks the committed row
        // and drops it (its `next_attempt_at` is now the lease). Diesel offers
        // `for_update`/`skip_locked` on the Pg backend only, not on `MultiBackend`, hence the
        // match.
        let rows: Vec<$Row> = match $conn {
            AnyConnection::Postgresql(pg) => due()
                .select(<$Row>::as_select())
                .for_update()
                .skip_locked()
                .load(pg)?,
            AnyConnection::Sqlite(sqlite) => due().select(<$Row>::as_select()).load(sqlite)?,
        };
        let mut rows: Vec<$Row> = ($keep)(rows);
        if !rows.is_empty() {
            let ids: Vec<String> = rows.iter().map(|r| r.id().to_owned()).collect();
            diesel::update($table::table.filter($table::id.eq_any(&ids)))
                .set(($set)(lease))
                .execute($conn)?;
            for r in &mut rows {
                r.leased_until(lease);
            }
        }
        rows
    }};
}
