//! Webhook rows: company callbacks, deliveries (the outbox and log) and attempts.

use diesel::prelude::*;
use pay_domain::kernel::ids::CompanyId;
use pay_domain::kernel::secret::SealedSecret;
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::webhooks::ports::AttemptRecord;
use pay_domain::webhooks::{
    AttemptError, AttemptOutcome, CallbackKind, CompanyCallback, Delivery, DeliveryOrigin,
    DeliveryStatus, EventKind, StoredSigningSecret,
};
use pay_domain::{Fault, PortResult};

use super::{corrupt, id, instant, opt_instant};
use crate::conn::MultiBackend;
use crate::schema::{webhook_attempts, webhook_callbacks, webhook_deliveries};

/// Ids of deliveries are stored in the canonical hyphenated form (what the log search matches).
pub(crate) fn uuid_text(u: uuid::Uuid) -> String {
    u.hyphenated().to_string()
}

pub(super) fn uuid(text: &str, column: &str) -> PortResult<uuid::Uuid> {
    uuid::Uuid::try_parse(text).map_err(|_| corrupt(column))
}

/// Counters (attempt numbers) are `u32` in the domain and BIGINT in the database.
fn count(n: i64, column: &str) -> PortResult<u32> {
    u32::try_from(n).map_err(|_| corrupt(column))
}

fn http_status(code: Option<i32>, column: &str) -> PortResult<Option<u16>> {
    code.map(|c| u16::try_from(c).map_err(|_| corrupt(column)))
        .transpose()
}

/// A sealed secret from its two columns; `None` when both are NULL.
pub(super) fn stored_secret(
    key_id: Option<String>,
    sealed: Option<String>,
    last4: Option<String>,
    created_at: Option<i64>,
    column: &str,
) -> PortResult<Option<StoredSigningSecret>> {
    match (key_id, sealed, last4, created_at) {
        (None, None, None, None) => Ok(None),
        (Some(key_id), Some(sealed), Some(last4), Some(created_at)) => {
            Ok(Some(StoredSigningSecret {
                sealed: SealedSecret { key_id, sealed },
                last4,
                created_at: instant(created_at, column)?,
            }))
        }
        _ => Err(corrupt(column)),
    }
}

/// The four columns of an optional sealed secret: key id, sealed bytes, last four, created.
pub(super) fn secret_columns(
    s: Option<&StoredSigningSecret>,
) -> (Option<&str>, Option<&str>, Option<&str>, Option<i64>) {
    (
        s.map(|x| x.sealed.key_id.as_str()),
        s.map(|x| x.sealed.sealed.as_str()),
        s.map(|x| x.last4.as_str()),
        s.map(|x| x.created_at.unix_millis()),
    )
}

/// The previous secret and until when it signs: both or neither.
pub(super) fn previous_secret(
    secret: Option<StoredSigningSecret>,
    until: Option<i64>,
    column: &str,
) -> PortResult<Option<(StoredSigningSecret, Timestamp)>> {
    match (secret, until) {
        (None, None) => Ok(None),
        (Some(s), Some(until)) => Ok(Some((s, instant(until, column)?))),
        _ => Err(corrupt(column)),
    }
}

fn callback_kind(text: &str, column: &str) -> PortResult<CallbackKind> {
    CallbackKind::parse(text).ok_or_else(|| corrupt(column))
}

// ----- callbacks -----

#[derive(Queryable, Selectable)]
#[diesel(table_name = webhook_callbacks, check_for_backend(MultiBackend))]
pub(crate) struct CallbackRow {
    company_id: String,
    kind: String,
    url: String,
    secret_key_id: String,
    secret_sealed: String,
    secret_last4: String,
    secret_created_at: i64,
    prev_key_id: Option<String>,
    prev_sealed: Option<String>,
    prev_last4: Option<String>,
    prev_created_at: Option<i64>,
    prev_valid_until: Option<i64>,
    updated_at: i64,
    version: i64,
}

impl TryFrom<CallbackRow> for CompanyCallback {
    type Error = Fault;

    fn try_from(r: CallbackRow) -> PortResult<CompanyCallback> {
        // The previous secret is all five columns or none of them.
        let previous = previous_secret(
            stored_secret(
                r.prev_key_id,
                r.prev_sealed,
                r.prev_last4,
                r.prev_created_at,
                "webhook_callbacks.prev_*",
            )?,
            r.prev_valid_until,
            "webhook_callbacks.prev_*",
        )?;
        Ok(CompanyCallback {
            company_id: id(
                &r.company_id,
                CompanyId::parse,
                "webhook_callbacks.company_id",
            )?,
            kind: callback_kind(&r.kind, "webhook_callbacks.kind")?,
            url: r.url,
            secret: StoredSigningSecret {
                sealed: SealedSecret {
                    key_id: r.secret_key_id,
                    sealed: r.secret_sealed,
                },
                last4: r.secret_last4,
                created_at: instant(r.secret_created_at, "webhook_callbacks.secret_created_at")?,
            },
            previous,
            updated_at: instant(r.updated_at, "webhook_callbacks.updated_at")?,
            version: u64::try_from(r.version).map_err(|_| corrupt("webhook_callbacks.version"))?,
        })
    }
}

/// Written whole by both insert and update; `treat_none_as_null`: a callback saved without a
/// previous secret clears the old one.
#[derive(Insertable, AsChangeset)]
#[diesel(
    table_name = webhook_callbacks,
    primary_key(company_id, kind),
    treat_none_as_default_value = false,
    treat_none_as_null = true
)]
pub(crate) struct NewCallbackRow<'a> {
    pub(crate) company_id: String,
    pub(crate) kind: &'static str,
    url: &'a str,
    secret_key_id: &'a str,
    secret_sealed: &'a str,
    secret_last4: &'a str,
    secret_created_at: i64,
    prev_key_id: Option<&'a str>,
    prev_sealed: Option<&'a str>,
    prev_last4: Option<&'a str>,
    prev_created_at: Option<i64>,
    prev_valid_until: Option<i64>,
    updated_at: i64,
    pub(crate) version: i64,
}

impl<'a> From<&'a CompanyCallback> for NewCallbackRow<'a> {
    fn from(c: &'a CompanyCallback) -> Self {
        let (prev_key_id, prev_sealed, prev_last4, prev_created_at) =
            secret_columns(c.previous.as_ref().map(|(s, _)| s));
        NewCallbackRow {
            company_id: c.company_id.to_string(),
            kind: c.kind.as_str(),
            url: &c.url,
            secret_key_id: &c.secret.sealed.key_id,
            secret_sealed: &c.secret.sealed.sealed,
            secret_last4: &c.secret.last4,
            secret_created_at: c.secret.created_at.unix_millis(),
            prev_key_id,
            prev_sealed,
            prev_last4,
            prev_created_at,
            prev_valid_until: c.previous.as_ref().map(|(_, until)| until.unix_millis()),
            updated_at: c.updated_at.unix_millis(),
            version: c.version as i64,
        }
    }
}

// ----- deliveries -----

#[derive(Queryable, Selectable)]
#[diesel(table_name = webhook_deliveries, check_for_backend(MultiBackend))]
pub(crate) struct DeliveryRow {
    pub(crate) id: String,
    group_id: String,
    company_id: String,
    origin: String,
    event: String,
    status: String,
    attempts: i64,
    pub(crate) next_attempt_at: Option<i64>,
    last_attempt_at: Option<i64>,
    last_response_status: Option<i32>,
    last_error: Option<String>,
    payment_link_uid: Option<String>,
    subscription_uid: Option<String>,
    order_id: Option<String>,
    target: String,
    url: String,
    body: String,
    created_at: i64,
    grant_id: Option<String>,
}

impl DeliveryRow {
    /// Where it goes: (company id, URL) as stored.
    pub(crate) fn endpoint(&self) -> (&str, &str) {
        (&self.company_id, &self.url)
    }
}

impl crate::ports::outbox::OutboxRow for DeliveryRow {
    fn id(&self) -> &str {
        &self.id
    }

    fn leased_until(&mut self, lease: i64) {
        self.next_attempt_at = Some(lease);
    }
}

impl TryFrom<DeliveryRow> for Delivery {
    type Error = Fault;

    fn try_from(r: DeliveryRow) -> PortResult<Delivery> {
        Ok(Delivery {
            id: uuid(&r.id, "webhook_deliveries.id")?,
            group_id: uuid(&r.group_id, "webhook_deliveries.group_id")?,
            company_id: id(
                &r.company_id,
                CompanyId::parse,
                "webhook_deliveries.company_id",
            )?,
            origin: DeliveryOrigin::parse(&r.origin)
                .ok_or_else(|| corrupt("webhook_deliveries.origin"))?,
            event: EventKind::parse_short(&r.event)
                .ok_or_else(|| corrupt("webhook_deliveries.event"))?,
            status: DeliveryStatus::parse(&r.status)
                .ok_or_else(|| corrupt("webhook_deliveries.status"))?,
            attempts: count(r.attempts, "webhook_deliveries.attempts")?,
            next_attempt_at: opt_instant(r.next_attempt_at, "webhook_deliveries.next_attempt_at")?,
            last_attempt_at: opt_instant(r.last_attempt_at, "webhook_deliveries.last_attempt_at")?,
            last_response_status: http_status(
                r.last_response_status,
                "webhook_deliveries.last_response_status",
            )?,
            // Rows written before the fixed vocabulary carry detailed text: read as its word.
            last_error: r.last_error.as_deref().map(AttemptError::from_stored),
            payment_link_uid: r.payment_link_uid,
            subscription_uid: r.subscription_uid,
            order_id: r.order_id,
            target: callback_kind(&r.target, "webhook_deliveries.target")?,
            url: r.url,
            body: r.body,
            created_at: instant(r.created_at, "webhook_deliveries.created_at")?,
            grant_id: r
                .grant_id
                .map(|g| uuid(&g, "webhook_deliveries.grant_id"))
                .transpose()?,
        })
    }
}

#[derive(Insertable)]
#[diesel(table_name = webhook_deliveries, treat_none_as_default_value = false)]
pub(crate) struct NewDeliveryRow<'a> {
    id: String,
    group_id: String,
    company_id: String,
    origin: &'static str,
    event: &'static str,
    status: &'static str,
    attempts: i64,
    next_attempt_at: Option<i64>,
    last_attempt_at: Option<i64>,
    last_response_status: Option<i32>,
    last_error: Option<&'a str>,
    payment_link_uid: Option<&'a str>,
    subscription_uid: Option<&'a str>,
    order_id: Option<&'a str>,
    target: &'static str,
    url: &'a str,
    body: &'a str,
    created_at: i64,
    grant_id: Option<String>,
}

impl<'a> From<&'a Delivery> for NewDeliveryRow<'a> {
    fn from(d: &'a Delivery) -> Self {
        NewDeliveryRow {
            id: uuid_text(d.id),
            group_id: uuid_text(d.group_id),
            company_id: d.company_id.to_string(),
            origin: d.origin.as_str(),
            event: d.event.short_name(),
            status: d.status.as_str(),
            attempts: i64::from(d.attempts),
            next_attempt_at: d.next_attempt_at.map(Timestamp::unix_millis),
            last_attempt_at: d.last_attempt_at.map(Timestamp::unix_millis),
            last_response_status: d.last_response_status.map(i32::from),
            last_error: d.last_error.map(AttemptError::as_str),
            payment_link_uid: d.payment_link_uid.as_deref(),
            subscription_uid: d.subscription_uid.as_deref(),
            order_id: d.order_id.as_deref(),
            target: d.target.as_str(),
            url: &d.url,
            body: &d.body,
            created_at: d.created_at.unix_millis(),
            grant_id: d.grant_id.map(uuid_text),
        }
    }
}

// ----- attempts -----

#[derive(Queryable, Selectable)]
#[diesel(table_name = webhook_attempts, check_for_backend(MultiBackend))]
pub(crate) struct AttemptRow {
    delivery_id: String,
    number: i64,
    at: i64,
    status_code: Option<i32>,
    duration_ms: i64,
    error: Option<String>,
    response_excerpt: Option<String>,
    retry_after_ms: Option<i64>,
}

impl TryFrom<AttemptRow> for AttemptRecord {
    type Error = Fault;

    fn try_from(r: AttemptRow) -> PortResult<AttemptRecord> {
        Ok(AttemptRecord {
            delivery_id: uuid(&r.delivery_id, "webhook_attempts.delivery_id")?,
            number: count(r.number, "webhook_attempts.number")?,
            at: instant(r.at, "webhook_attempts.at")?,
            outcome: AttemptOutcome {
                status: http_status(r.status_code, "webhook_attempts.status_code")?,
                duration_ms: u64::try_from(r.duration_ms)
                    .map_err(|_| corrupt("webhook_attempts.duration_ms"))?,
                error: r.error.as_deref().map(AttemptError::from_stored),
                response_excerpt: r.response_excerpt,
                retry_after: r.retry_after_ms.map(time::Duration::milliseconds),
            },
        })
    }
}

#[derive(Insertable)]
#[diesel(table_name = webhook_attempts, treat_none_as_default_value = false)]
pub(crate) struct NewAttemptRow<'a> {
    delivery_id: String,
    number: i64,
    at: i64,
    status_code: Option<i32>,
    duration_ms: i64,
    error: Option<&'a str>,
    response_excerpt: Option<&'a str>,
    retry_after_ms: Option<i64>,
}

/// Saturates rather than fails: no attempt lasts or asks to wait 292 million years, and
/// recording the attempt matters more than the exact value of an absurd one.
fn saturating_millis(ms: i128) -> i64 {
    i64::try_from(ms).unwrap_or(if ms < 0 { i64::MIN } else { i64::MAX })
}

impl<'a> From<&'a AttemptRecord> for NewAttemptRow<'a> {
    fn from(a: &'a AttemptRecord) -> Self {
        NewAttemptRow {
            delivery_id: uuid_text(a.delivery_id),
            number: i64::from(a.number),
            at: a.at.unix_millis(),
            status_code: a.outcome.status.map(i32::from),
            duration_ms: saturating_millis(i128::from(a.outcome.duration_ms)),
            error: a.outcome.error.map(AttemptError::as_str),
            response_excerpt: a.outcome.response_excerpt.as_deref(),
            retry_after_ms: a
                .outcome
                .retry_after
                .map(|d| saturating_millis(d.whole_milliseconds())),
        }
    }
}
