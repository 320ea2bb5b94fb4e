//! What bookkeeping needs from storage: wallet activities and their expenses with versions,
//! and the metadata of evidence files (their bytes are in a `FileStore`).

use crate::bookkeeping::{
    ActivityFilter, ActivityKey, Direction, EvidenceFile, Expense, ExpenseVersion, ExportCursor,
    ExportItem, ExportPeriod, Recorded, WalletActivity,
};
use crate::kernel::error::PortResult;
use crate::kernel::idempotency::Completion;
use crate::kernel::ids::{CompanyId, EvidenceFileId, ExpenseId, WalletActivityId};
use crate::kernel::timestamp::Timestamp;

/// What an expense write did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExpenseWrite {
    /// Written, with its version record.
    Applied,
    /// Nothing written: the activity already has an expense (insert), or the expense is no
    /// longer at the expected version (update), or one of its evidence files is no longer
    /// linkable (another expense took it, or it is not stored). The caller reads again and
    /// decides again.
    Lost,
    /// Nothing written: the keyed save's claim was taken over (its completion answers no
    /// record), so it must not happen.
    Unclaimed,
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
    /// The expense of the company's activity, if it has one (`fields.evidence_file_ids`: the
    /// files that link it, in id order).
    fn expense_of_activity(
        &self,
        company: CompanyId,
        activity: WalletActivityId,
    ) -> PortResult<Option<Expense>>;
    /// Inserts a new expense (version 1) and its version record in ONE transaction, and links
    /// its `evidence_file_ids` (each MUST be the company's, `Stored` and linked to no expense,
    /// else `Lost` with nothing written; linking clears `orphan_since`). An activity has at
    /// most one expense: a UNIQUE constraint on the activity MUST refuse a second one, also
    /// under concurrent inserts, and the refusal is `Lost` with nothing written.
    /// With a completion (a keyed save, `kernel::keyed`), marks that idempotency record
    /// answered in the same transaction; `Unclaimed` with nothing written when its claim was
    /// taken over. So does `update_expense`.
    fn insert_expense(
        &self,
        expense: &Expense,
        version: &ExpenseVersion,
        completion: Option<&Completion>,
    ) -> PortResult<ExpenseWrite>;
    /// Replaces the expense's fields where its stored version is `expected_version`
    /// (compare-and-set; `expense.version` is the new one), inserts the version record and
    /// makes its links exactly `evidence_file_ids` (new ones as `insert_expense` links them;
    /// files it linked and no longer lists are unlinked with `orphan_since = unlinked_at`),
    /// in ONE transaction; `Lost` with nothing written when the version moved on or a file
    /// cannot be linked.
    fn update_expense(
        &self,
        expense: &Expense,
        expected_version: i64,
        version: &ExpenseVersion,
        unlinked_at: Timestamp,
        completion: Option<&Completion>,
    ) -> PortResult<ExpenseWrite>;
    /// Every version of the expense, oldest first.
    fn expense_versions(
        &self,
        company: CompanyId,
        expense: crate::kernel::ids::ExpenseId,
    ) -> PortResult<Vec<ExpenseVersion>>;
    /// The session with this id while it is complete, with its link (any company: the
    /// completion event names it); `None` otherwise.
    fn completed_session(
        &self,
        session: crate::kernel::ids::PaymentSessionId,
    ) -> PortResult<Option<(crate::links::PaymentLink, crate::checkout::PaymentSession)>>;
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

    /// Inserts a new evidence file row (`Pending`, unlinked). Ids are unique.
    fn insert_evidence(&self, file: &EvidenceFile) -> PortResult<()>;
    /// `Pending` -> `Stored` for the company's file; false when it was not pending.
    fn mark_evidence_stored(&self, company: CompanyId, id: EvidenceFileId) -> PortResult<bool>;
    /// The company's file with this id, whatever its status; `None` for another company's.
    fn evidence_file(
        &self,
        company: CompanyId,
        id: EvidenceFileId,
    ) -> PortResult<Option<EvidenceFile>>;
    /// The files the company's expense links, in id order.
    fn evidence_of_expense(
        &self,
        company: CompanyId,
        expense: ExpenseId,
    ) -> PortResult<Vec<EvidenceFile>>;
    /// Up to `limit` files of any company that no expense links with `orphan_since < before`
    /// (any status: a `Pending` one is an upload that never finished, a `Deleting` one a pass
    /// that stopped half-way), oldest first.
    fn orphan_evidence(&self, before: Timestamp, limit: usize) -> PortResult<Vec<EvidenceFile>>;
    /// Claims an orphan for deletion: sets `Deleting` where the file is still linked to no
    /// expense with `orphan_since < before` (compare-and-set: a save that linked it meanwhile
    /// wins, and a `Deleting` file can no longer be linked). True when it is now `Deleting`.
    fn claim_orphan_evidence(&self, id: EvidenceFileId, before: Timestamp) -> PortResult<bool>;
    /// Deletes the row of a `Deleting` file (its bytes are gone); nothing for any other.
    fn delete_evidence(&self, id: EvidenceFileId) -> PortResult<()>;
}
