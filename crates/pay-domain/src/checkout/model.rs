//! Payment sessions as records, the link's timeline, and the one write that moves a session:
//! the session row (compare-and-set on `version`), the processor event it applies (once), the
//! timeline entries and the webhook deliveries go to the store together, in one transaction.

use time::Duration;

use crate::checkout::machine::SessionStatus;
use crate::checkout::timeline::TimelineEvent;
use crate::kernel::amount::{Amount, Decimal};
use crate::kernel::ids::{CompanyId, LinkUid, PaymentLinkId, PaymentSessionId};
use crate::kernel::timestamp::Timestamp;
use crate::webhooks::{Delivery, SessionSnapshot};

/// How long an open deposit request waits for the payer's deposit.
pub const DEPOSIT_WINDOW: Duration = Duration::minutes(30);

/// One payer's attempt to pay a link (the contract's session fields, plus what the service
/// keeps for itself).
#[derive(Debug, Clone, PartialEq)]
pub struct PaymentSession {
    pub id: PaymentSessionId,
    pub link_id: PaymentLinkId,
    pub company_id: CompanyId,
    pub status: SessionStatus,
    pub previous_status: Option<SessionStatus>,
    /// Compare-and-set counter: 1 when inserted, +1 with every write.
    pub version: i64,
    /// The invoice unit: the link's `fiatCurrency`, or its settlement asset identifier.
    pub invoice_asset: String,
    /// The link's amount, exactly as given.
    pub invoice_amount: Amount,
    /// The asset identifier the payer pays with.
    pub selected_sell_asset: String,
    /// What the payer sends (normalised, the pay asset's decimals at most).
    pub required_sell_amount: Decimal,
    /// What the merchant receives (normalised, the settlement asset's decimals at most).
    pub expected_buy_amount: Decimal,
    /// Where the settlement goes: the merchant's wallet, or an anonymous link's address.
    pub destination_address: String,
    pub deposit_address: Option<String>,
    pub channel_id: Option<String>,
    pub composite_channel_id: Option<String>,
    pub source_chain: Option<String>,
    /// The quote's expiry in `quote`, the deposit request's in `pending`.
    pub expires_at: Timestamp,
    /// Received amounts, shortfall, overpayment, late deposits, resolution, refund address.
    pub settlement: crate::checkout::Settlement,
    pub error_message: Option<String>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

impl PaymentSession {
    /// The `session` object of webhooks and API responses.
    pub fn snapshot(&self) -> SessionSnapshot {
        SessionSnapshot {
            id: Some(self.id.to_string()),
            status: Some(self.status.as_str().to_owned()),
            previous_status: self.previous_status.map(|s| s.as_str().to_owned()),
            invoice_asset: Some(self.invoice_asset.clone()),
            invoice_amount: Some(self.invoice_amount.as_str().to_owned()),
            selected_sell_asset: Some(self.selected_sell_asset.clone()),
            required_sell_amount: Some(self.required_sell_amount.to_string()),
            expected_buy_amount: Some(self.expected_buy_amount.to_string()),
            destination_address: Some(self.destination_address.clone()),
            deposit_address: self.deposit_address.clone(),
            channel_id: self.channel_id.clone(),
            composite_channel_id: self.composite_channel_id.clone(),
            source_chain: self.source_chain.clone(),
            expires_at: Some(self.expires_at),
            settlement: self.settlement.to_json(),
            error_message: self.error_message.clone(),
        }
    }
}

/// What a write does to the session row.
#[derive(Debug, Clone, PartialEq)]
pub enum SessionChange {
    /// A new session.
    Insert(PaymentSession),
    /// The session as it is after the write (its `version` already incremented); written only
    /// while the stored row still has `expected_version`.
    Update {
        session: PaymentSession,
        expected_version: i64,
    },
    /// No session row changes (an event about the link, such as a blocked start).
    None,
}

/// One write about a link: everything in it lands together or not at all.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkEventWrite {
    pub link_id: PaymentLinkId,
    pub change: SessionChange,
    /// The processor's event id: a second write carrying the same id changes nothing and
    /// reports `Duplicate`.
    pub processor_event_id: Option<String>,
    /// One-time links: record this session as the link's one completed payment and archive
    /// the link; when another session already holds it, nothing is written (`LinkAlreadyPaid`).
    pub claim_link: Option<PaymentSessionId>,
    /// Appended to the link's timeline.
    pub timeline: Vec<TimelineEvent>,
    /// How many webhook events the write emits. The store hands out that many consecutive
    /// numbers from the link's event sequence and calls the builder once with the first.
    pub webhook_events: u64,
    /// The domain events the write decides (a completion), inserted into the event outbox.
    pub events: Vec<crate::kernel::events::EventRecord>,
}

/// What became of a write.
#[derive(Debug, Clone, PartialEq)]
pub enum WriteOutcome {
    /// Written; the deliveries that were queued.
    Applied(Vec<Delivery>),
    /// The session moved on meanwhile (version changed); nothing written.
    Stale,
    /// The processor event was applied before; nothing written.
    Duplicate,
    /// The one-time link is already paid by another session; nothing written.
    LinkAlreadyPaid,
}

/// Unfinished sessions with work due: a quote or deposit request past `expires_at`, or a link
/// that is no longer active or has expired.
#[derive(Debug, Clone, PartialEq)]
pub struct DueSession {
    pub session: PaymentSession,
    /// The session's link, read in the same query.
    pub link: crate::links::PaymentLink,
}

/// What a company's sessions in one status collected on one UTC day in one invoice asset (the
/// dashboard overview's aggregate).
#[derive(Debug, Clone, PartialEq)]
pub struct CollectedDay {
    /// The UTC day of the sessions' last change (`updated_at`), in days since 1970-01-01.
    pub day: i64,
    /// The invoice unit (`PaymentSession::invoice_asset`).
    pub asset: String,
    /// How many sessions.
    pub count: u64,
    /// Their invoice amounts added up, exactly.
    pub amount: Decimal,
}

/// Milliseconds in a day: `CollectedDay::day` is `updated_at`'s unix milliseconds over this.
pub const DAY_MILLIS: i64 = 86_400_000;

/// Adds sessions' `(updated_at, invoice asset, invoice amount)` up by UTC day and asset (day,
/// then asset, ascending): `CheckoutStore::company_collected` over rows already read.
pub fn collect_days<'a>(
    sessions: impl IntoIterator<Item = (Timestamp, &'a str, Decimal)>,
) -> crate::kernel::error::PortResult<Vec<CollectedDay>> {
    let mut days = std::collections::BTreeMap::<(i64, &str), (u64, Decimal)>::new();
    for (at, asset, amount) in sessions {
        let day = at.unix_millis().div_euclid(DAY_MILLIS);
        let (count, sum) = days.entry((day, asset)).or_insert((0, Decimal::ZERO));
        *count += 1;
        *sum = sum
            .checked_add(amount)
            .ok_or_else(|| crate::kernel::error::Fault::new("collected amount overflows"))?;
    }
    Ok(days
        .into_iter()
        .map(|((day, asset), (count, amount))| CollectedDay {
            day,
            asset: asset.to_owned(),
            count,
            amount,
        })
        .collect())
}

/// Storage of sessions and timelines.
pub trait CheckoutStore {
    /// A link by its public uid, whatever its company (the public checkout).
    fn public_link(
        &self,
        uid: &LinkUid,
    ) -> crate::kernel::error::PortResult<Option<crate::links::PaymentLink>>;
    /// Applies one write in ONE transaction (see `LinkEventWrite`): processor event id first
    /// (unique), then the one-time claim, the session row (insert, or compare-and-set on the
    /// version), the timeline entries, and `webhook_events` sequence numbers with the
    /// deliveries `build(first_sequence)` returns. `build` is not called when
    /// `webhook_events` is 0.
    fn write_link_event(
        &self,
        write: &LinkEventWrite,
        build: &dyn Fn(u64) -> Vec<Delivery>,
    ) -> crate::kernel::error::PortResult<WriteOutcome>;
    /// Whether a processor event id was applied (a replay is answered without deciding again).
    fn processor_event_applied(&self, event_id: &str) -> crate::kernel::error::PortResult<bool>;
    fn payment_session(
        &self,
        id: PaymentSessionId,
    ) -> crate::kernel::error::PortResult<Option<PaymentSession>>;
    /// A session with its link, whatever its company (what a processor reports names the
    /// session only).
    fn session_with_link(
        &self,
        id: PaymentSessionId,
    ) -> crate::kernel::error::PortResult<Option<(crate::links::PaymentLink, PaymentSession)>>;
    /// The link's newest session.
    fn latest_session(
        &self,
        link: PaymentLinkId,
    ) -> crate::kernel::error::PortResult<Option<PaymentSession>>;
    /// The link's newest session whose status is one of `statuses` (newest by creation, ties
    /// by id), if any.
    fn latest_session_in(
        &self,
        link: PaymentLinkId,
        statuses: &[crate::checkout::machine::SessionStatus],
    ) -> crate::kernel::error::PortResult<Option<PaymentSession>>;
    /// The link's sessions in `quote` or `pending`, oldest first.
    fn unfinished_sessions(
        &self,
        link: PaymentLinkId,
    ) -> crate::kernel::error::PortResult<Vec<PaymentSession>>;
    /// The link's timeline, oldest first.
    fn timeline(&self, link: PaymentLinkId)
        -> crate::kernel::error::PortResult<Vec<TimelineEvent>>;
    /// `latest_session` and `timeline` together (the link detail's reads). A store may read
    /// both in one go (one pooled connection instead of two); the answer is the same.
    fn latest_session_and_timeline(
        &self,
        link: PaymentLinkId,
    ) -> crate::kernel::error::PortResult<(Option<PaymentSession>, Vec<TimelineEvent>)> {
        Ok((self.latest_session(link)?, self.timeline(link)?))
    }
    /// Up to `limit` unfinished sessions with work due, each deadline compared with the clock
    /// of the link's company (`now`, real time, plus that company's test-clock offset), oldest
    /// deadline first, each with its link (one query, not one per session).
    fn due_sessions(
        &self,
        now: Timestamp,
        limit: usize,
    ) -> crate::kernel::error::PortResult<Vec<DueSession>>;
    /// The company's sessions whose status is `status` and whose last change (`updated_at`) is
    /// at or after `since`: the newest change first (ties by id), at most `limit`. Served by
    /// an index on (company, status, updated_at), never a scan of the company's sessions.
    fn company_sessions_in(
        &self,
        company: CompanyId,
        status: SessionStatus,
        since: Timestamp,
        limit: usize,
    ) -> crate::kernel::error::PortResult<Vec<PaymentSession>>;
    /// What the company's completed sessions add up to, by UTC day of their last change
    /// (`updated_at`, their completion) and invoice asset (day, then asset, ascending), from
    /// `first_day` (days since 1970-01-01, `CollectedDay::day`) on: every such session, none
    /// left out. This default reads the sessions (`company_sessions_in`); a store may keep the
    /// figures rolled up by day instead (written with each session change, in the same
    /// transaction), with the same answer.
    fn company_collected(
        &self,
        company: CompanyId,
        first_day: i64,
    ) -> crate::kernel::error::PortResult<Vec<CollectedDay>> {
        let since = first_day
            .checked_mul(DAY_MILLIS)
            .and_then(Timestamp::from_unix_millis)
            .ok_or_else(|| crate::kernel::error::Fault::new("collected since: out of range"))?;
        let sessions =
            self.company_sessions_in(company, SessionStatus::Complete, since, usize::MAX)?;
        collect_days(sessions.iter().map(|s| {
            (
                s.updated_at,
                s.invoice_asset.as_str(),
                s.invoice_amount.value(),
            )
        }))
    }
}
