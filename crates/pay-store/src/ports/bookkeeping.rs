//! `BookkeepingStore` on `DieselStore`: wallet activities (unique key per company) and one
//! expense per activity (UNIQUE `activity_id`), saved by compare-and-set on its version with a
//! version row and its evidence links in the same transaction; the evidence rows themselves
//! are in `evidence`. Written once for both backends.

use std::cell::Cell;

use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use pay_domain::bookkeeping::ports::{BookkeepingStore, ExpenseWrite};
use pay_domain::bookkeeping::{
    ActivityFilter, ActivityKey, Direction, EvidenceFile, Expense, ExpenseVersion, ExportCursor,
    ExportItem, ExportPeriod, PaymentRef, Recorded, WalletActivity,
};
use pay_domain::checkout::machine::SessionStatus;
use pay_domain::checkout::PaymentSession;
use pay_domain::kernel::idempotency::Completion;
use pay_domain::kernel::ids::{
    CompanyId, EvidenceFileId, ExpenseId, PaymentSessionId, WalletActivityId,
};
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::links::PaymentLink;
use pay_domain::{Fault, PortResult};

use super::evidence::{linked_ids, sync_links};
use crate::conn::{write_transaction, AnyConnection};
use crate::rows::{ActivityRow, ExpenseRow, ExpenseVersionRow};
use crate::schema::{
    expense_versions, expenses, payment_links, payment_sessions, wallet_activities,
};
use crate::DieselStore;

/// `None` for a unique refusal, or a transaction rolled back because a file was not linkable.
fn unique_violation<T>(r: QueryResult<T>) -> QueryResult<Option<T>> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, _))
        | Err(DieselError::RollbackTransaction) => Ok(None),
        Err(e) => Err(e),
    }
}

/// A keyed save's answer, in its transaction: rolls it back, noting `unclaimed`, when the
/// claim was taken over.
fn answer_keyed(
    conn: &mut AnyConnection,
    completion: Option<&Completion>,
    unclaimed: &Cell<bool>,
) -> QueryResult<()> {
    match completion {
        Some(c) if !super::grant_webhooks::answer(conn, c)? => {
            unclaimed.set(true);
            Err(DieselError::RollbackTransaction)
        }
        _ => Ok(()),
    }
}

impl BookkeepingStore for DieselStore {
    fn record_activity(&self, activity: &WalletActivity) -> PortResult<Recorded> {
        let row = ActivityRow::from(activity);
        // Insert; a unique refusal (the key, on PostgreSQL once the other insert commits)
        // means the movement is recorded: read that one.
        let inserted = self.write("record wallet activity", |conn| {
            unique_violation(
                diesel::insert_into(wallet_activities::table)
                    .values(&row)
                    .execute(conn),
            )
        })?;
        if inserted.is_some() {
            return Ok(Recorded::Created(activity.clone()));
        }
        self.activity_by_key(activity.company_id, &activity.key)?
            .map(Recorded::Existing)
            .ok_or_else(|| Fault::new("record wallet activity: unique violation (id)"))
    }

    fn activity(
        &self,
        company: CompanyId,
        id: WalletActivityId,
    ) -> PortResult<Option<WalletActivity>> {
        self.run("wallet activity", |conn| {
            wallet_activities::table
                .filter(wallet_activities::company_id.eq(company.to_string()))
                .filter(wallet_activities::id.eq(id.to_string()))
                .select(ActivityRow::as_select())
                .first(conn)
                .optional()
        })?
        .map(WalletActivity::try_from)
        .transpose()
    }

    fn activity_by_key(
        &self,
        company: CompanyId,
        key: &ActivityKey,
    ) -> PortResult<Option<WalletActivity>> {
        self.run("wallet activity by key", |conn| {
            wallet_activities::table
                .filter(wallet_activities::company_id.eq(company.to_string()))
                .filter(wallet_activities::activity_key.eq(key.to_string()))
                .select(ActivityRow::as_select())
                .first(conn)
                .optional()
        })?
        .map(WalletActivity::try_from)
        .transpose()
    }

    fn activities(
        &self,
        company: CompanyId,
        f: &ActivityFilter,
        limit: usize,
    ) -> PortResult<Vec<(WalletActivity, bool)>> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = self.run("wallet activities", |conn| {
            let mut q = wallet_activities::table
                .left_join(expenses::table.on(expenses::activity_id.eq(wallet_activities::id)))
                .filter(wallet_activities::company_id.eq(company.to_string()))
                .into_boxed();
            if let Some(d) = f.direction {
                q = q.filter(wallet_activities::direction.eq(d.as_str()));
            }
            if let Some(a) = &f.asset {
                q = q.filter(wallet_activities::asset.eq(a.clone()));
            }
            if let Some(from) = f.from {
                q = q.filter(wallet_activities::occurred_at.ge(from.unix_millis()));
            }
            if let Some(to) = f.to {
                q = q.filter(wallet_activities::occurred_at.lt(to.unix_millis()));
            }
            if let Some(has) = f.has_expense {
                q = q.filter(wallet_activities::direction.eq(Direction::Outgoing.as_str()));
                q = if has {
                    q.filter(expenses::id.is_not_null())
                } else {
                    q.filter(expenses::id.is_null())
                };
            }
            q.order((
                wallet_activities::occurred_at.desc(),
                wallet_activities::id.desc(),
            ))
            .limit(limit)
            .select((ActivityRow::as_select(), expenses::id.nullable()))
            .load::<(ActivityRow, Option<String>)>(conn)
        })?;
        rows.into_iter()
            .map(|(r, e)| Ok((WalletActivity::try_from(r)?, e.is_some())))
            .collect()
    }

    fn expense_of_activity(
        &self,
        company: CompanyId,
        activity: WalletActivityId,
    ) -> PortResult<Option<Expense>> {
        let found = self.run("expense of activity", |conn| {
            let row = expenses::table
                .filter(expenses::company_id.eq(company.to_string()))
                .filter(expenses::activity_id.eq(activity.to_string()))
                .select(ExpenseRow::as_select())
                .first(conn)
                .optional()?;
            let files = match &row {
                Some(r) => linked_ids(conn, vec![r.id.clone()])?,
                None => Vec::new(),
            };
            Ok(row.map(|r| (r, files)))
        })?;
        found
            .map(|(row, files)| with_files(Expense::try_from(row)?, &files))
            .transpose()
    }

    fn insert_expense(
        &self,
        expense: &Expense,
        version: &ExpenseVersion,
        completion: Option<&Completion>,
    ) -> PortResult<ExpenseWrite> {
        let row = ExpenseRow::from(expense);
        let v = ExpenseVersionRow::try_from(version)?;
        let unclaimed = Cell::new(false);
        // The UNIQUE activity refuses a second expense: on PostgreSQL the losing insert waits
        // for the winner's commit and then fails; the whole transaction rolls back.
        let done = self.write("insert expense", |conn| {
            unique_violation(write_transaction(conn, |conn| {
                diesel::insert_into(expenses::table)
                    .values(&row)
                    .execute(conn)?;
                diesel::insert_into(expense_versions::table)
                    .values(&v)
                    .execute(conn)?;
                sync_links(conn, expense, expense.updated_at)?;
                answer_keyed(conn, completion, &unclaimed)
            }))
        })?;
        Ok(match done {
            Some(_) => ExpenseWrite::Applied,
            None if unclaimed.get() => ExpenseWrite::Unclaimed,
            None => ExpenseWrite::Lost,
        })
    }

    fn update_expense(
        &self,
        expense: &Expense,
        expected_version: i64,
        version: &ExpenseVersion,
        unlinked_at: Timestamp,
        completion: Option<&Completion>,
    ) -> PortResult<ExpenseWrite> {
        let row = ExpenseRow::from(expense);
        let v = ExpenseVersionRow::try_from(version)?;
        let unclaimed = Cell::new(false);
        let done = self.write("update expense", |conn| {
            unique_violation(write_transaction(conn, |conn| {
                let n = diesel::update(
                    expenses::table
                        .filter(expenses::id.eq(&row.id))
                        .filter(expenses::company_id.eq(&row.company_id))
                        .filter(expenses::version.eq(expected_version)),
                )
                .set(&row)
                .execute(conn)?;
                if n == 0 {
                    return Ok(false);
                }
                diesel::insert_into(expense_versions::table)
                    .values(&v)
                    .execute(conn)?;
                sync_links(conn, expense, unlinked_at)?;
                answer_keyed(conn, completion, &unclaimed)?;
                Ok(true)
            }))
        })?;
        Ok(match done {
            Some(true) => ExpenseWrite::Applied,
            _ if unclaimed.get() => ExpenseWrite::Unclaimed,
            _ => ExpenseWrite::Lost,
        })
    }

    fn expense_versions(
        &self,
        company: CompanyId,
        expense: ExpenseId,
    ) -> PortResult<Vec<ExpenseVersion>> {
        self.run("expense versions", |conn| {
            expense_versions::table
                .filter(expense_versions::expense_id.eq(expense.to_string()))
                .filter(
                    expense_versions::expense_id.eq_any(
                        expenses::table
                            .filter(expenses::company_id.eq(company.to_string()))
                            .select(expenses::id),
                    ),
                )
                .order(expense_versions::version.asc())
                .select(ExpenseVersionRow::as_select())
                .load(conn)
        })?
        .into_iter()
        .map(ExpenseVersion::try_from)
        .collect()
    }

    fn completed_session(
        &self,
        session: PaymentSessionId,
    ) -> PortResult<Option<(PaymentLink, PaymentSession)>> {
        use pay_domain::checkout::CheckoutStore;
        Ok(self
            .session_with_link(session)?
            .filter(|(_, s)| s.status == SessionStatus::Complete))
    }

    fn export_page(
        &self,
        company: CompanyId,
        direction: Direction,
        period: &ExportPeriod,
        after: Option<&ExportCursor>,
        limit: usize,
    ) -> PortResult<Vec<ExportItem>> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let outgoing = direction == Direction::Outgoing;
        let (rows, payments, files) = self.run("export page", |conn| {
            let mut q = wallet_activities::table
                .left_join(expenses::table.on(expenses::activity_id.eq(wallet_activities::id)))
                .filter(wallet_activities::company_id.eq(company.to_string()))
                .filter(wallet_activities::direction.eq(direction.as_str()))
                .filter(wallet_activities::occurred_at.ge(period.from.unix_millis()))
                .filter(wallet_activities::occurred_at.lt(period.to.unix_millis()))
                .into_boxed();
            if outgoing {
                q = q.filter(expenses::id.is_not_null());
            }
            if let Some(c) = after {
                let at = c.occurred_at.unix_millis();
                q = q.filter(
                    wallet_activities::occurred_at
                        .gt(at)
                        .or(wallet_activities::occurred_at
                            .eq(at)
                            .and(wallet_activities::id.gt(c.id.to_string()))),
                );
            }
            let rows = q
                .order((
                    wallet_activities::occurred_at.asc(),
                    wallet_activities::id.asc(),
                ))
                .limit(limit)
                .select((ActivityRow::as_select(), Option::<ExpenseRow>::as_select()))
                .load::<(ActivityRow, Option<ExpenseRow>)>(conn)?;
            let sessions: Vec<String> = rows
                .iter()
                .filter_map(|(a, _)| a.payment_session_id.clone())
                .collect();
            let payments = if outgoing || sessions.is_empty() {
                Vec::new()
            } else {
                payment_sessions::table
                    .inner_join(payment_links::table)
                    .filter(payment_sessions::company_id.eq(company.to_string()))
                    .filter(payment_sessions::id.eq_any(sessions))
                    .select((
                        payment_sessions::id,
                        payment_links::uid,
                        payment_sessions::invoice_asset,
                        payment_sessions::invoice_amount,
                    ))
                    .load::<(String, String, String, String)>(conn)?
            };
            let expense_ids = rows
                .iter()
                .filter_map(|(_, e)| e.as_ref().map(|e| e.id.clone()))
                .collect();
            let files = if outgoing {
                linked_ids(conn, expense_ids)?
            } else {
                Vec::new()
            };
            Ok((rows, payments, files))
        })?;
        rows.into_iter()
            .map(|(a, e)| {
                let payment = a.payment_session_id.as_ref().and_then(|sid| {
                    payments.iter().find(|p| &p.0 == sid).map(|p| PaymentRef {
                        link_uid: p.1.clone(),
                        invoice_asset: p.2.clone(),
                        invoice_amount: p.3.clone(),
                    })
                });
                Ok(ExportItem {
                    activity: WalletActivity::try_from(a)?,
                    expense: if outgoing {
                        e.map(|e| with_files(Expense::try_from(e)?, &files))
                            .transpose()?
                    } else {
                        None
                    },
                    payment,
                })
            })
            .collect()
    }

    fn insert_evidence(&self, file: &EvidenceFile) -> PortResult<()> {
        self.insert_evidence_row(file)
    }

    fn mark_evidence_stored(&self, company: CompanyId, id: EvidenceFileId) -> PortResult<bool> {
        self.mark_evidence_row_stored(company, id)
    }

    fn evidence_file(
        &self,
        company: CompanyId,
        id: EvidenceFileId,
    ) -> PortResult<Option<EvidenceFile>> {
        self.evidence_row(company, id)
    }

    fn evidence_of_expense(
        &self,
        company: CompanyId,
        expense: ExpenseId,
    ) -> PortResult<Vec<EvidenceFile>> {
        self.evidence_rows_of_expense(company, expense)
    }

    fn orphan_evidence(&self, before: Timestamp, limit: usize) -> PortResult<Vec<EvidenceFile>> {
        self.orphan_rows(before, limit)
    }

    fn claim_orphan_evidence(&self, id: EvidenceFileId, before: Timestamp) -> PortResult<bool> {
        self.claim_orphan_row(id, before)
    }

    fn delete_evidence(&self, id: EvidenceFileId) -> PortResult<()> {
        self.delete_evidence_row(id)
    }
}

/// The expense with the ids of the files that link it (from `(expense id, file id)` pairs).
fn with_files(mut e: Expense, links: &[(String, String)]) -> PortResult<Expense> {
    let me = e.id.to_string();
    e.fields.evidence_file_ids = links
        .iter()
        .filter(|(x, _)| *x == me)
        .map(|(_, f)| {
            EvidenceFileId::parse(f).ok_or_else(|| crate::rows::corrupt("evidence_files.id"))
        })
        .collect::<PortResult<_>>()?;
    Ok(e)
}
