//! The in-memory store: wallet activities, expenses and their versions, evidence file rows.

use super::{MemStore, Tables};
use crate::bookkeeping::ports::{BookkeepingStore, ExpenseWrite};
use crate::bookkeeping::{
    ActivityFilter, ActivityKey, Direction, EvidenceFile, EvidenceStatus, Expense, ExpenseVersion,
    ExportCursor, ExportItem, ExportPeriod, PaymentRef, Recorded, WalletActivity,
};
use crate::kernel::error::{Fault, PortResult};
use crate::kernel::idempotency::Completion;
use crate::kernel::ids::*;
use crate::kernel::timestamp::Timestamp;

/// Makes the expense's links exactly its `evidence_file_ids` (false, nothing changed, when one
/// is not a stored file of its company free or already its own); unlinked files become
/// orphans at `unlinked_at`.
fn sync_links(t: &mut Tables, e: &Expense, unlinked_at: Timestamp) -> bool {
    let wanted = &e.fields.evidence_file_ids;
    let linkable = wanted.iter().all(|id| {
        t.evidence_files.iter().any(|f| {
            f.id == *id
                && f.company_id == e.company_id
                && f.status == EvidenceStatus::Stored
                && f.expense_id.is_none_or(|x| x == e.id)
        })
    });
    if !linkable {
        return false;
    }
    for f in &mut t.evidence_files {
        if wanted.contains(&f.id) {
            f.expense_id = Some(e.id);
            f.orphan_since = None;
        } else if f.expense_id == Some(e.id) {
            f.expense_id = None;
            f.orphan_since = Some(unlinked_at);
        }
    }
    true
}

impl BookkeepingStore for MemStore {
    fn record_activity(&self, a: &WalletActivity) -> PortResult<Recorded> {
        self.count_call("record_activity");
        let mut t = self.write();
        if !t.companies.iter().any(|(x, _)| x.id == a.company_id) {
            return Err(Fault::new("foreign key: company"));
        }
        if let Some(found) = t
            .wallet_activities
            .iter()
            .find(|x| x.company_id == a.company_id && x.key == a.key)
        {
            return Ok(Recorded::Existing(found.clone()));
        }
        t.wallet_activities.push(a.clone());
        Ok(Recorded::Created(a.clone()))
    }

    fn activity(
        &self,
        company: CompanyId,
        id: WalletActivityId,
    ) -> PortResult<Option<WalletActivity>> {
        self.count_call("activity");
        Ok(self
            .tables()
            .wallet_activities
            .iter()
            .find(|a| a.company_id == company && a.id == id)
            .cloned())
    }

    fn activity_by_key(
        &self,
        company: CompanyId,
        key: &ActivityKey,
    ) -> PortResult<Option<WalletActivity>> {
        self.count_call("activity_by_key");
        Ok(self
            .tables()
            .wallet_activities
            .iter()
            .find(|a| a.company_id == company && &a.key == key)
            .cloned())
    }

    fn activities(
        &self,
        company: CompanyId,
        f: &ActivityFilter,
        limit: usize,
    ) -> PortResult<Vec<(WalletActivity, bool)>> {
        self.count_call("activities");
        let t = self.tables();
        let mut v: Vec<(WalletActivity, bool)> = t
            .wallet_activities
            .iter()
            .filter(|a| a.company_id == company)
            .filter(|a| f.direction.is_none_or(|d| a.direction == d))
            .filter(|a| f.asset.as_ref().is_none_or(|x| &a.asset == x))
            .filter(|a| f.from.is_none_or(|x| a.occurred_at >= x))
            .filter(|a| f.to.is_none_or(|x| a.occurred_at < x))
            .map(|a| {
                let has = t.expenses.iter().any(|e| e.activity_id == a.id);
                (a.clone(), has)
            })
            .filter(|(a, has)| {
                f.has_expense
                    .is_none_or(|want| a.direction == Direction::Outgoing && *has == want)
            })
            .collect();
        v.sort_by_key(|(a, _)| std::cmp::Reverse((a.occurred_at, a.id)));
        v.truncate(limit);
        Ok(v)
    }

    fn expense_of_activity(
        &self,
        company: CompanyId,
        activity: WalletActivityId,
    ) -> PortResult<Option<Expense>> {
        self.count_call("expense_of_activity");
        Ok(self
            .tables()
            .expenses
            .iter()
            .find(|e| e.company_id == company && e.activity_id == activity)
            .cloned())
    }

    fn insert_expense(
        &self,
        e: &Expense,
        version: &ExpenseVersion,
        completion: Option<&Completion>,
    ) -> PortResult<ExpenseWrite> {
        self.count_call("insert_expense");
        let mut t = self.write();
        if completion.is_some_and(|c| super::webhooks::claimed(&t, c).is_none()) {
            return Ok(ExpenseWrite::Unclaimed);
        }
        if t.expenses.iter().any(|x| x.activity_id == e.activity_id)
            || !sync_links(&mut t, e, e.updated_at)
        {
            return Ok(ExpenseWrite::Lost);
        }
        t.expenses.push(e.clone());
        t.expense_versions.push(version.clone());
        super::webhooks::complete(&mut t, completion);
        Ok(ExpenseWrite::Applied)
    }

    fn update_expense(
        &self,
        e: &Expense,
        expected_version: i64,
        version: &ExpenseVersion,
        unlinked_at: Timestamp,
        completion: Option<&Completion>,
    ) -> PortResult<ExpenseWrite> {
        self.count_call("update_expense");
        let mut t = self.write();
        if completion.is_some_and(|c| super::webhooks::claimed(&t, c).is_none()) {
            return Ok(ExpenseWrite::Unclaimed);
        }
        let Some(i) = t.expenses.iter().position(|x| {
            x.id == e.id && x.company_id == e.company_id && x.version == expected_version
        }) else {
            return Ok(ExpenseWrite::Lost);
        };
        if !sync_links(&mut t, e, unlinked_at) {
            return Ok(ExpenseWrite::Lost);
        }
        t.expenses[i] = e.clone();
        t.expense_versions.push(version.clone());
        super::webhooks::complete(&mut t, completion);
        Ok(ExpenseWrite::Applied)
    }

    fn expense_versions(
        &self,
        company: CompanyId,
        expense: ExpenseId,
    ) -> PortResult<Vec<ExpenseVersion>> {
        self.count_call("expense_versions");
        let t = self.tables();
        if !t
            .expenses
            .iter()
            .any(|e| e.id == expense && e.company_id == company)
        {
            return Ok(Vec::new());
        }
        let mut v: Vec<ExpenseVersion> = t
            .expense_versions
            .iter()
            .filter(|x| x.expense_id == expense)
            .cloned()
            .collect();
        v.sort_by_key(|x| x.version);
        Ok(v)
    }

    fn completed_session(
        &self,
        session: PaymentSessionId,
    ) -> PortResult<Option<(crate::links::PaymentLink, crate::checkout::PaymentSession)>> {
        self.count_call("completed_session");
        Ok(
            crate::checkout::CheckoutStore::session_with_link(self, session)?
                .filter(|(_, s)| s.status == crate::checkout::machine::SessionStatus::Complete),
        )
    }

    fn export_page(
        &self,
        company: CompanyId,
        direction: Direction,
        period: &ExportPeriod,
        after: Option<&ExportCursor>,
        limit: usize,
    ) -> PortResult<Vec<ExportItem>> {
        self.count_call("export_page");
        let t = self.tables();
        let mut v: Vec<ExportItem> = t
            .wallet_activities
            .iter()
            .filter(|a| a.company_id == company && a.direction == direction)
            .filter(|a| a.occurred_at >= period.from && a.occurred_at < period.to)
            .filter(|a| after.is_none_or(|c| (a.occurred_at, a.id) > (c.occurred_at, c.id)))
            .filter_map(|a| {
                let expense = t.expenses.iter().find(|e| e.activity_id == a.id).cloned();
                if direction == Direction::Outgoing && expense.is_none() {
                    return None;
                }
                let payment = a.payment_session_id.and_then(|sid| {
                    let s = t.payment_sessions.iter().find(|s| s.id == sid)?;
                    let l = t.links.iter().find(|l| l.id == s.link_id)?;
                    Some(PaymentRef {
                        link_uid: l.uid.to_string(),
                        invoice_asset: s.invoice_asset.clone(),
                        invoice_amount: s.invoice_amount.as_str().to_owned(),
                    })
                });
                Some(ExportItem {
                    activity: a.clone(),
                    expense: expense.filter(|_| direction == Direction::Outgoing),
                    payment: payment.filter(|_| direction == Direction::Incoming),
                })
            })
            .collect();
        v.sort_by_key(|x| (x.activity.occurred_at, x.activity.id));
        v.truncate(limit);
        Ok(v)
    }

    fn insert_evidence(&self, file: &EvidenceFile) -> PortResult<()> {
        self.count_call("insert_evidence");
        let mut t = self.write();
        if t.evidence_files.iter().any(|f| f.id == file.id) {
            return Err(Fault::new("unique: evidence_files.id"));
        }
        if !t.companies.iter().any(|(c, _)| c.id == file.company_id) {
            return Err(Fault::new("foreign key: company"));
        }
        t.evidence_files.push(file.clone());
        Ok(())
    }

    fn mark_evidence_stored(&self, company: CompanyId, id: EvidenceFileId) -> PortResult<bool> {
        self.count_call("mark_evidence_stored");
        let mut t = self.write();
        Ok(t.evidence_files
            .iter_mut()
            .find(|f| f.id == id && f.company_id == company && f.status == EvidenceStatus::Pending)
            .map(|f| f.status = EvidenceStatus::Stored)
            .is_some())
    }

    fn evidence_file(
        &self,
        company: CompanyId,
        id: EvidenceFileId,
    ) -> PortResult<Option<EvidenceFile>> {
        self.count_call("evidence_file");
        Ok(self
            .tables()
            .evidence_files
            .iter()
            .find(|f| f.id == id && f.company_id == company)
            .cloned())
    }

    fn evidence_of_expense(
        &self,
        company: CompanyId,
        expense: ExpenseId,
    ) -> PortResult<Vec<EvidenceFile>> {
        self.count_call("evidence_of_expense");
        let mut v: Vec<EvidenceFile> = self
            .tables()
            .evidence_files
            .iter()
            .filter(|f| f.company_id == company && f.expense_id == Some(expense))
            .cloned()
            .collect();
        v.sort_by_key(|f| f.id);
        Ok(v)
    }

    fn orphan_evidence(&self, before: Timestamp, limit: usize) -> PortResult<Vec<EvidenceFile>> {
        self.count_call("orphan_evidence");
        let mut v: Vec<EvidenceFile> = self
            .tables()
            .evidence_files
            .iter()
            .filter(|f| f.expense_id.is_none() && f.orphan_since.is_some_and(|s| s < before))
            .cloned()
            .collect();
        v.sort_by_key(|f| (f.orphan_since, f.id));
        v.truncate(limit);
        Ok(v)
    }

    fn claim_orphan_evidence(&self, id: EvidenceFileId, before: Timestamp) -> PortResult<bool> {
        self.count_call("claim_orphan_evidence");
        let mut t = self.write();
        Ok(t.evidence_files
            .iter_mut()
            .find(|f| {
                f.id == id && f.expense_id.is_none() && f.orphan_since.is_some_and(|s| s < before)
            })
            .map(|f| f.status = EvidenceStatus::Deleting)
            .is_some())
    }

    fn delete_evidence(&self, id: EvidenceFileId) -> PortResult<()> {
        self.count_call("delete_evidence");
        self.write()
            .evidence_files
            .retain(|f| !(f.id == id && f.status == EvidenceStatus::Deleting));
        Ok(())
    }
}
