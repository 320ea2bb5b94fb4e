//! Checkout rows: payment sessions and timeline entries. (Processor event ids and the link's
//! one-time claim are written column by column; they are never read back as rows.)

use diesel::prelude::*;
use pay_domain::checkout::machine::SessionStatus;
use pay_domain::checkout::{PaymentSession, TimelineEvent, TimelineKind};
use pay_domain::kernel::amount::{Amount, Decimal};
use pay_domain::kernel::ids::{CompanyId, PaymentLinkId, PaymentSessionId};
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::{Fault, PortResult};

use super::{corrupt, id, instant, uuid_text};
use crate::conn::MultiBackend;
use crate::schema::{payment_sessions, timeline_events};

fn session_status(text: &str, column: &str) -> PortResult<SessionStatus> {
    SessionStatus::parse(text).ok_or_else(|| corrupt(column))
}

/// JSON values (the typed settlement, timeline data) are stored as their text; a row that does
/// not read back as its type is corrupt.
fn json_value<T: serde::de::DeserializeOwned>(text: &str, column: &str) -> PortResult<T> {
    serde_json::from_str(text).map_err(|_| corrupt(column))
}

fn decimal(text: &str, column: &str) -> PortResult<Decimal> {
    Decimal::parse_stored(text).map_err(|_| corrupt(column))
}

fn json_text<T: serde::Serialize>(value: &T, what: &str) -> PortResult<String> {
    serde_json::to_string(value).map_err(|e| Fault::caused(format!("encoding {what}"), e))
}

// ----- payment sessions -----

#[derive(Queryable, Selectable)]
#[diesel(table_name = payment_sessions, check_for_backend(MultiBackend))]
pub(crate) struct PaymentSessionRow {
    id: String,
    link_id: String,
    company_id: String,
    status: String,
    previous_status: Option<String>,
    version: i64,
    invoice_asset: String,
    invoice_amount: String,
    selected_sell_asset: String,
    required_sell_amount: String,
    expected_buy_amount: String,
    destination_address: String,
    deposit_address: Option<String>,
    channel_id: Option<String>,
    composite_channel_id: Option<String>,
    source_chain: Option<String>,
    expires_at: i64,
    settlement: String,
    error_message: Option<String>,
    created_at: i64,
    updated_at: i64,
}

impl TryFrom<PaymentSessionRow> for PaymentSession {
    type Error = Fault;

    fn try_from(r: PaymentSessionRow) -> PortResult<PaymentSession> {
        Ok(PaymentSession {
            id: id(&r.id, PaymentSessionId::parse, "payment_sessions.id")?,
            link_id: id(&r.link_id, PaymentLinkId::parse, "payment_sessions.link_id")?,
            company_id: id(
                &r.company_id,
                CompanyId::parse,
                "payment_sessions.company_id",
            )?,
            status: session_status(&r.status, "payment_sessions.status")?,
            previous_status: r
                .previous_status
                .map(|s| session_status(&s, "payment_sessions.previous_status"))
                .transpose()?,
            version: r.version,
            invoice_asset: r.invoice_asset,
            invoice_amount: Amount::parse_stored(&r.invoice_amount, u32::MAX)
                .map_err(|_| corrupt("payment_sessions.invoice_amount"))?,
            selected_sell_asset: r.selected_sell_asset,
            required_sell_amount: decimal(
                &r.required_sell_amount,
                "payment_sessions.required_sell_amount",
            )?,
            expected_buy_amount: decimal(
                &r.expected_buy_amount,
                "payment_sessions.expected_buy_amount",
            )?,
            destination_address: r.destination_address,
            deposit_address: r.deposit_address,
            channel_id: r.channel_id,
            composite_channel_id: r.composite_channel_id,
            source_chain: r.source_chain,
            expires_at: instant(r.expires_at, "payment_sessions.expires_at")?,
            settlement: json_value(&r.settlement, "payment_sessions.settlement")?,
            error_message: r.error_message,
            created_at: instant(r.created_at, "payment_sessions.created_at")?,
            updated_at: instant(r.updated_at, "payment_sessions.updated_at")?,
        })
    }
}

/// The whole row: inserted as is, or written over the stored one (every column but the id;
/// `None` writes NULL) by the compare-and-set update.
#[derive(Insertable, AsChangeset)]
#[diesel(
    table_name = payment_sessions,
    treat_none_as_default_value = false,
    treat_none_as_null = true
)]
pub(crate) struct NewPaymentSessionRow<'a> {
    pub(crate) id: String,
    pub(crate) link_id: String,
    company_id: String,
    status: &'static str,
    previous_status: Option<&'static str>,
    pub(crate) version: i64,
    invoice_asset: &'a str,
    invoice_amount: &'a str,
    selected_sell_asset: &'a str,
    required_sell_amount: String,
    expected_buy_amount: String,
    destination_address: &'a str,
    deposit_address: Option<&'a str>,
    channel_id: Option<&'a str>,
    composite_channel_id: Option<&'a str>,
    source_chain: Option<&'a str>,
    expires_at: i64,
    settlement: String,
    error_message: Option<&'a str>,
    created_at: i64,
    updated_at: i64,
}

impl<'a> TryFrom<&'a PaymentSession> for NewPaymentSessionRow<'a> {
    type Error = Fault;

    fn try_from(s: &'a PaymentSession) -> PortResult<Self> {
        Ok(NewPaymentSessionRow {
            id: s.id.to_string(),
            link_id: s.link_id.to_string(),
            company_id: s.company_id.to_string(),
            status: s.status.as_str(),
            previous_status: s.previous_status.map(SessionStatus::as_str),
            version: s.version,
            invoice_asset: &s.invoice_asset,
            invoice_amount: s.invoice_amount.as_str(),
            selected_sell_asset: &s.selected_sell_asset,
            required_sell_amount: s.required_sell_amount.to_string(),
            expected_buy_amount: s.expected_buy_amount.to_string(),
            destination_address: &s.destination_address,
            deposit_address: s.deposit_address.as_deref(),
            channel_id: s.channel_id.as_deref(),
            composite_channel_id: s.composite_channel_id.as_deref(),
            source_chain: s.source_chain.as_deref(),
            expires_at: s.expires_at.unix_millis(),
            settlement: json_text(&s.settlement, "session settlement")?,
            error_message: s.error_message.as_deref(),
            created_at: s.created_at.unix_millis(),
            updated_at: s.updated_at.unix_millis(),
        })
    }
}

// ----- timeline -----

#[derive(Queryable, Selectable)]
#[diesel(table_name = timeline_events, check_for_backend(MultiBackend))]
pub(crate) struct TimelineRow {
    id: String,
    link_id: String,
    session_id: Option<String>,
    kind: String,
    created_at: i64,
    data: String,
}

impl TryFrom<TimelineRow> for TimelineEvent {
    type Error = Fault;

    fn try_from(r: TimelineRow) -> PortResult<TimelineEvent> {
        Ok(TimelineEvent {
            id: uuid::Uuid::try_parse(&r.id).map_err(|_| corrupt("timeline_events.id"))?,
            link_id: id(&r.link_id, PaymentLinkId::parse, "timeline_events.link_id")?,
            session_id: r
                .session_id
                .map(|s| id(&s, PaymentSessionId::parse, "timeline_events.session_id"))
                .transpose()?,
            kind: TimelineKind::parse(&r.kind).ok_or_else(|| corrupt("timeline_events.kind"))?,
            created_at: instant(r.created_at, "timeline_events.created_at")?,
            facts: json_value(&r.data, "timeline_events.data")?,
        })
    }
}

#[derive(Insertable)]
#[diesel(table_name = timeline_events, treat_none_as_default_value = false)]
pub(crate) struct NewTimelineRow {
    id: String,
    pub(crate) link_id: String,
    session_id: Option<String>,
    kind: &'static str,
    created_at: i64,
    data: String,
}

impl TryFrom<&TimelineEvent> for NewTimelineRow {
    type Error = Fault;

    fn try_from(e: &TimelineEvent) -> PortResult<Self> {
        Ok(NewTimelineRow {
            id: uuid_text(e.id),
            link_id: e.link_id.to_string(),
            session_id: e.session_id.map(|s| s.to_string()),
            kind: e.kind.as_str(),
            created_at: e.created_at.unix_millis(),
            data: json_text(&e.facts, "timeline data")?,
        })
    }
}

/// The instant of a write, for the columns that record when it happened (the link's
/// `updated_at` on a claim, a processor event's `applied_at`): the session's `updated_at`, else
/// the newest timeline entry's time.
pub(crate) fn write_instant(
    session: Option<&PaymentSession>,
    timeline: &[TimelineEvent],
) -> Option<Timestamp> {
    session
        .map(|s| s.updated_at)
        .or_else(|| timeline.iter().map(|e| e.created_at).max())
}
