//! The in-memory store: wallet activities, expenses and their versions.

use super::MemStore;
use crate::bookkeeping::ports::{BookkeepingStore, ExpenseWrite};
use crate::bookkeeping::{
    ActivityFilter, ActivityKey, Direction, Expense, ExpenseVersion, ExportCursor, ExportItem,
    ExportPeriod, PaymentRef, Recorded, WalletActivity,
};
use crate::kernel::error::{Fault, PortResult};
use crate::kernel::ids::*;

impl BookkeepingStore for MemStore {
    fn record_activity(&self, a: &WalletActivity) -> PortResult<Recorded> {
        self.count_call("record_activity");
        let mut t = self.tables();
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

    fn insert_expense(&self, e: &Expense, version: &ExpenseVersion) -> PortResult<ExpenseWrite> {
        self.count_call("insert_expense");
        let mut t = self.tables();
        if t.expenses.iter().any(|x| x.activity_id == e.activity_id) {
            return Ok(ExpenseWrite::Lost);
        }
        t.expenses.push(e.clone());
        t.expense_versions.push(version.clone());
        Ok(ExpenseWrite::Applied)
    }

    fn update_expense(
        &self,
        e: &Expense,
        expected_version: i64,
        version: &ExpenseVersion,
    ) -> PortResult<ExpenseWrite> {
        self.count_call("update_expense");
        let mut t = self.tables();
        let Some(row) = t.expenses.iter_mut().find(|x| {
            x.id == e.id && x.company_id == e.company_id && x.version == expected_version
        }) else {
            return Ok(ExpenseWrite::Lost);
        };
        *row = e.clone();
        t.expense_versions.push(version.clone());
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
}
