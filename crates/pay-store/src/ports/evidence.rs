//! Evidence file rows on `DieselStore` (the bodies of `BookkeepingStore`'s evidence methods)
//! and the link step of the expense writes: in the expense's transaction, the listed files are
//! taken by one conditional UPDATE (the company's, `stored`, free or already this expense's)
//! whose row count must be the list's length, else the transaction rolls back; on PostgreSQL
//! a concurrent taker waits on the row lock and then finds the file taken.

use diesel::prelude::*;
use diesel::result::Error as DieselError;
use pay_domain::bookkeeping::{EvidenceFile, EvidenceStatus, Expense};
use pay_domain::kernel::ids::{CompanyId, EvidenceFileId, ExpenseId};
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::PortResult;

use crate::conn::AnyConnection;
use crate::rows::EvidenceRow;
use crate::schema::evidence_files as ef;
use crate::DieselStore;

const STORED: &str = "stored";
const DELETING: &str = "deleting";

/// Makes the expense's links exactly its `evidence_file_ids`; `RollbackTransaction` when one
/// cannot be linked (the caller's transaction then writes nothing: `Lost`).
pub(crate) fn sync_links(
    conn: &mut AnyConnection,
    e: &Expense,
    unlinked_at: Timestamp,
) -> QueryResult<()> {
    let expense = e.id.to_string();
    let wanted: Vec<String> = e
        .fields
        .evidence_file_ids
        .iter()
        .map(|f| f.to_string())
        .collect();
    if !wanted.is_empty() {
        let taken = diesel::update(
            ef::table
                .filter(ef::id.eq_any(&wanted))
                .filter(ef::company_id.eq(e.company_id.to_string()))
                .filter(ef::status.eq(STORED))
                .filter(ef::expense_id.is_null().or(ef::expense_id.eq(&expense))),
        )
        .set((
            ef::expense_id.eq(Some(&expense)),
            ef::orphan_since.eq(None::<i64>),
        ))
        .execute(conn)?;
        if taken != wanted.len() {
            return Err(DieselError::RollbackTransaction);
        }
    }
    diesel::update(
        ef::table
            .filter(ef::expense_id.eq(&expense))
            .filter(ef::id.ne_all(&wanted)),
    )
    .set((
        ef::expense_id.eq(None::<String>),
        ef::orphan_since.eq(Some(unlinked_at.unix_millis())),
    ))
    .execute(conn)?;
    Ok(())
}

/// The linked file ids of each of `expenses`, in id order.
pub(crate) fn linked_ids(
    conn: &mut AnyConnection,
    expenses: Vec<String>,
) -> QueryResult<Vec<(String, String)>> {
    if expenses.is_empty() {
        return Ok(Vec::new());
    }
    ef::table
        .filter(ef::expense_id.eq_any(expenses))
        .order(ef::id.asc())
        .select((ef::expense_id.assume_not_null(), ef::id))
        .load(conn)
}

impl DieselStore {
    pub(crate) fn insert_evidence_row(&self, file: &EvidenceFile) -> PortResult<()> {
        let row = EvidenceRow::try_from(file)?;
        self.write("insert evidence file", |conn| {
            diesel::insert_into(ef::table).values(&row).execute(conn)
        })?;
        Ok(())
    }

    pub(crate) fn mark_evidence_row_stored(
        &self,
        company: CompanyId,
        id: EvidenceFileId,
    ) -> PortResult<bool> {
        let n = self.write("mark evidence file stored", |conn| {
            diesel::update(
                ef::table
                    .filter(ef::id.eq(id.to_string()))
                    .filter(ef::company_id.eq(company.to_string()))
                    .filter(ef::status.eq(EvidenceStatus::Pending.as_str())),
            )
            .set(ef::status.eq(STORED))
            .execute(conn)
        })?;
        Ok(n == 1)
    }

    pub(crate) fn evidence_row(
        &self,
        company: CompanyId,
        id: EvidenceFileId,
    ) -> PortResult<Option<EvidenceFile>> {
        self.run("evidence file", |conn| {
            ef::table
                .filter(ef::id.eq(id.to_string()))
                .filter(ef::company_id.eq(company.to_string()))
                .select(EvidenceRow::as_select())
                .first(conn)
                .optional()
        })?
        .map(EvidenceFile::try_from)
        .transpose()
    }

    pub(crate) fn evidence_rows_of_expense(
        &self,
        company: CompanyId,
        expense: ExpenseId,
    ) -> PortResult<Vec<EvidenceFile>> {
        self.run("evidence of expense", |conn| {
            ef::table
                .filter(ef::company_id.eq(company.to_string()))
                .filter(ef::expense_id.eq(expense.to_string()))
                .order(ef::id.asc())
                .select(EvidenceRow::as_select())
                .load(conn)
        })?
        .into_iter()
        .map(EvidenceFile::try_from)
        .collect()
    }

    pub(crate) fn orphan_rows(
        &self,
        before: Timestamp,
        limit: usize,
    ) -> PortResult<Vec<EvidenceFile>> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.run("orphan evidence", |conn| {
            ef::table
                .filter(ef::expense_id.is_null())
                .filter(ef::orphan_since.lt(before.unix_millis()))
                .order((ef::orphan_since.asc(), ef::id.asc()))
                .limit(limit)
                .select(EvidenceRow::as_select())
                .load(conn)
        })?
        .into_iter()
        .map(EvidenceFile::try_from)
        .collect()
    }

    pub(crate) fn claim_orphan_row(
        &self,
        id: EvidenceFileId,
        before: Timestamp,
    ) -> PortResult<bool> {
        let n = self.write("claim orphan evidence", |conn| {
            diesel::update(
                ef::table
                    .filter(ef::id.eq(id.to_string()))
                    .filter(ef::expense_id.is_null())
                    .filter(ef::orphan_since.lt(before.unix_millis())),
            )
            .set(ef::status.eq(DELETING))
            .execute(conn)
        })?;
        Ok(n == 1)
    }

    pub(crate) fn delete_evidence_row(&self, id: EvidenceFileId) -> PortResult<()> {
        self.write("delete evidence file", |conn| {
            diesel::delete(
                ef::table
                    .filter(ef::id.eq(id.to_string()))
                    .filter(ef::status.eq(DELETING)),
            )
            .execute(conn)
        })?;
        Ok(())
    }
}
