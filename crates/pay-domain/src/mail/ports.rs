//! What mail needs from storage: the outbox.

use crate::kernel::error::PortResult;
use crate::kernel::idempotency::Completion;
use crate::kernel::ids::{CompanyId, LinkUid};
use crate::kernel::timestamp::Timestamp;
use crate::mail::*;

/// The mail outbox.
pub trait MailStore {
    /// Inserts a new mail; its id MUST be unique, and its company and link MUST exist. With a
    /// completion (a keyed request, `kernel::keyed`), marks that idempotency record answered
    /// in the SAME transaction; false with nothing written when its claim was taken over.
    fn insert_mail(&self, mail: &OutgoingMail, completion: Option<&Completion>)
        -> PortResult<bool>;
    /// Atomically claims up to `limit` pending mails due on their company's clock
    /// (`next_attempt_at <= now + that company's test-clock offset`) and not leased (a lease
    /// runs on real time: a moved clock MUST NOT end it), oldest due first, and leases them
    /// until `lease_until` (shown as their `next_attempt_at` meanwhile), so that no other
    /// claimer (another thread or instance) gets them before the lease ends; recording an
    /// attempt ends the lease. Concurrent claimers MUST NOT receive the same mail
    /// (PostgreSQL: `FOR UPDATE SKIP LOCKED`; SQLite: one writer). `now` is real time.
    fn claim_due_mails(
        &self,
        now: Timestamp,
        lease_until: Timestamp,
        limit: usize,
    ) -> PortResult<Vec<OutgoingMail>>;
    /// Compare-and-set: records attempt `number` made at `at` only if the mail is still
    /// pending with `number - 1` attempts, setting `attempts = number`, `last_attempt_at = at`
    /// and status, `next_attempt_at`, `last_error` and `sent_at` from `after`, in one
    /// statement. Returns false, writing nothing, when the mail moved on (another mailer
    /// recorded this attempt first, or it is unknown or terminal).
    fn record_mail_attempt(
        &self,
        id: MailId,
        number: u32,
        at: Timestamp,
        after: &AfterMailAttempt,
    ) -> PortResult<bool>;
    /// One mail, of any company (workers and tests; never for a caller-supplied id).
    fn mail(&self, id: MailId) -> PortResult<Option<OutgoingMail>>;
    /// Deletes sent and failed mails created before `before` (they hold personal data: the
    /// recipient and the body); pending ones stay. Returns how many went.
    fn prune_mails(&self, before: Timestamp) -> PortResult<u64>;
    /// The company's mails for one link, newest first.
    fn link_mails(&self, company: CompanyId, link: &LinkUid) -> PortResult<Vec<OutgoingMail>>;
    /// Up to `limit` pending mails with an id greater than `after` (all when `None`), in id
    /// order (ids are time-ordered): what a mailer without a transport reports, once each.
    fn pending_mails_after(
        &self,
        after: Option<MailId>,
        limit: usize,
    ) -> PortResult<Vec<OutgoingMail>>;
}
