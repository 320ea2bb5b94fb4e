//! What bookkeeping needs from storage: wallet activities and their expenses with versions.

use crate::bookkeeping::{
    ActivityFilter, ActivityKey, Direction, Expense, ExpenseVersion, ExportCursor, ExportItem,
    ExportPeriod, Recorded, WalletActivity,
};
use crate::kernel::error::PortResult;
use crate::kernel::ids::{CompanyId, WalletActivityId};

/// What an expense write did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExpenseWrite {
    /// Written, with its version record.
    Applied,
    /// Nothing written: the activity already has an expense (insert), or the expense is no
    /// longer at the expected version (update). The caller reads again and decides again.
    Lost,
}

/// Wallet activities and expenses.
pub trait BookkeepingStore {
    /// Inserts `activity`, unless the company already has one with the same key: then nothing
    /// changes and the stored one comes back as `Existing`. MUST be atomic (two concurrent
    /// reports of one movement make one activity); the key MUST be unique per company.
    fn record_activity(&self, activity: &WalletActivity) -> PortResult<Recorded>;
    /// The company's activity with this id; `None` for another company's.
    fn activity(
        &self,
        company: CompanyId,
        id: WalletActivityId,
    ) -> PortResult<Option<WalletActivity>>;
    /// The company's activity with this key; `None` for another company's.
    fn activity_by_key(
        &self,
        company: CompanyId,
        key: &ActivityKey,
    ) -> PortResult<Option<WalletActivity>>;
    /// Up to `limit` of the company's activities matching `filter`, newest `occurred_at`
    /// first (ties by id, newest first), each with whether it has an expense.
    fn activities(
        &self,
        company: CompanyId,
        filter: &ActivityFilter,
        limit: usize,
    ) -> PortResult<Vec<(WalletActivity, bool)>>;
    /// The expense of the company's activity, if it has one.
    fn expense_of_activity(
        &self,
        company: CompanyId,
        activity: WalletActivityId,
    ) -> PortResult<Option<Expense>>;
    /// Inserts a new expense (version 1) and its version record in ONE transaction. An
    /// activity has at most one expense: a UNIQUE constraint on the activity MUST refuse a
    /// second one, also under concurrent inserts, and the refusal is `Lost` with nothing
    /// written.
    fn insert_expense(
        &self,
        expense: &Expense,
        version: &ExpenseVersion,
    ) -> PortResult<ExpenseWrite>;
    /// Replaces the expense's fields where its stored version is `expected_version`
    /// (compare-and-set; `expense.version` is the new one) and inserts the version record, in
    /// ONE transaction; `Lost` with nothing written when the version moved on.
    fn update_expense(
        &self,
        expense: &Expense,
        expected_version: i64,
        version: &ExpenseVersion,
    ) -> PortResult<ExpenseWrite>;
    /// Every version of the expense, oldest first.
    fn expense_versions(
        &self,
        company: CompanyId,
        expense: crate::kernel::ids::ExpenseId,
    ) -> PortResult<Vec<ExpenseVersion>>;
    /// One page of an export: up to `limit` of the company's `direction` activities with
    /// `period.from <= occurred_at < period.to`, after `after` in (`occurred_at`, `id`)
    /// ascending order. Outgoing: only activities that have an expense, each with it.
    /// Incoming: every one, with the payment (link uid, invoice) of its session when it has
    /// one. Never another company's rows.
    fn export_page(
        &self,
        company: CompanyId,
        direction: Direction,
        period: &ExportPeriod,
        after: Option<&ExportCursor>,
        limit: usize,
    ) -> PortResult<Vec<ExportItem>>;
}
