//! Rows of grant webhook subscriptions and of idempotency records.

use diesel::prelude::*;
use pay_domain::kernel::ids::CompanyId;
use pay_domain::kernel::secret::SealedSecret;
use pay_domain::webhooks::{EventFilter, GrantSubscription, RetainedCredential};
use pay_domain::{Fault, PortResult};

use super::webhooks::{previous_secret, secret_columns, stored_secret, uuid, uuid_text};
use super::{corrupt, id, instant};
use crate::conn::MultiBackend;
use crate::schema::{grant_webhook_subscriptions, idempotency_keys};

#[derive(Queryable, Selectable)]
#[diesel(table_name = grant_webhook_subscriptions, check_for_backend(MultiBackend))]
pub(crate) struct GrantSubscriptionRow {
    id: String,
    grant_id: String,
    company_id: String,
    url: String,
    events: String,
    description: Option<String>,
    metadata: Option<String>,
    secret_key_id: Option<String>,
    secret_sealed: Option<String>,
    secret_last4: Option<String>,
    secret_created_at: Option<i64>,
    prev_key_id: Option<String>,
    prev_sealed: Option<String>,
    prev_last4: Option<String>,
    prev_created_at: Option<i64>,
    prev_valid_until: Option<i64>,
    created_at: i64,
    updated_at: i64,
    version: i64,
    retained_key_id: Option<String>,
    retained_sealed: Option<String>,
    retained_url: Option<String>,
    retained_at: Option<i64>,
}

impl TryFrom<GrantSubscriptionRow> for GrantSubscription {
    type Error = Fault;

    fn try_from(r: GrantSubscriptionRow) -> PortResult<GrantSubscription> {
        let events: Vec<String> = serde_json::from_str(&r.events)
            .map_err(|_| corrupt("grant_webhook_subscriptions.events"))?;
        let metadata = r
            .metadata
            .map(|m| serde_json::from_str(&m))
            .transpose()
            .map_err(|_| corrupt("grant_webhook_subscriptions.metadata"))?;
        let previous = previous_secret(
            stored_secret(
                r.prev_key_id,
                r.prev_sealed,
                r.prev_last4,
                r.prev_created_at,
                "grant_webhook_subscriptions.prev_*",
            )?,
            r.prev_valid_until,
            "grant_webhook_subscriptions.prev_*",
        )?;
        Ok(GrantSubscription {
            id: uuid(&r.id, "grant_webhook_subscriptions.id")?,
            grant_id: uuid(&r.grant_id, "grant_webhook_subscriptions.grant_id")?,
            company_id: id(
                &r.company_id,
                CompanyId::parse,
                "grant_webhook_subscriptions.company_id",
            )?,
            url: r.url,
            events: EventFilter::from_stored(events),
            description: r.description,
            metadata,
            secret: stored_secret(
                r.secret_key_id,
                r.secret_sealed,
                r.secret_last4,
                r.secret_created_at,
                "grant_webhook_subscriptions.secret_*",
            )?,
            previous,
            retained: match (
                r.retained_key_id,
                r.retained_sealed,
                r.retained_url,
                r.retained_at,
            ) {
                (Some(key_id), Some(sealed), Some(url), Some(at)) => Some(RetainedCredential {
                    sealed: SealedSecret { key_id, sealed },
                    url,
                    since: instant(at, "grant_webhook_subscriptions.retained_at")?,
                }),
                (None, None, None, None) => None,
                _ => return Err(corrupt("grant_webhook_subscriptions.retained_*")),
            },
            created_at: instant(r.created_at, "grant_webhook_subscriptions.created_at")?,
            updated_at: instant(r.updated_at, "grant_webhook_subscriptions.updated_at")?,
            version: u64::try_from(r.version)
                .map_err(|_| corrupt("grant_webhook_subscriptions.version"))?,
        })
    }
}

/// Written whole by both insert and update; `treat_none_as_null`: disabling clears the secret
/// columns.
#[derive(Insertable, AsChangeset)]
#[diesel(
    table_name = grant_webhook_subscriptions,
    treat_none_as_default_value = false,
    treat_none_as_null = true
)]
pub(crate) struct NewGrantSubscriptionRow<'a> {
    pub(crate) id: String,
    pub(crate) grant_id: String,
    company_id: String,
    url: &'a str,
    events: String,
    description: Option<&'a str>,
    metadata: Option<String>,
    secret_key_id: Option<&'a str>,
    secret_sealed: Option<&'a str>,
    secret_last4: Option<&'a str>,
    secret_created_at: Option<i64>,
    prev_key_id: Option<&'a str>,
    prev_sealed: Option<&'a str>,
    prev_last4: Option<&'a str>,
    prev_created_at: Option<i64>,
    prev_valid_until: Option<i64>,
    created_at: i64,
    updated_at: i64,
    pub(crate) version: i64,
    retained_key_id: Option<&'a str>,
    retained_sealed: Option<&'a str>,
    retained_url: Option<&'a str>,
    retained_at: Option<i64>,
}

impl<'a> From<&'a GrantSubscription> for NewGrantSubscriptionRow<'a> {
    fn from(s: &'a GrantSubscription) -> Self {
        let (secret_key_id, secret_sealed, secret_last4, secret_created_at) =
            secret_columns(s.secret.as_ref());
        let (prev_key_id, prev_sealed, prev_last4, prev_created_at) =
            secret_columns(s.previous.as_ref().map(|(x, _)| x));
        NewGrantSubscriptionRow {
            id: uuid_text(s.id),
            grant_id: uuid_text(s.grant_id),
            company_id: s.company_id.to_string(),
            url: &s.url,
            // Serialising strings and a JSON map cannot fail.
            events: serde_json::to_string(s.events.names()).unwrap_or_default(),
            description: s.description.as_deref(),
            metadata: s
                .metadata
                .as_ref()
                .map(|m| serde_json::to_string(m).unwrap_or_default()),
            secret_key_id,
            secret_sealed,
            secret_last4,
            secret_created_at,
            prev_key_id,
            prev_sealed,
            prev_last4,
            prev_created_at,
            prev_valid_until: s.previous.as_ref().map(|(_, until)| until.unix_millis()),
            created_at: s.created_at.unix_millis(),
            updated_at: s.updated_at.unix_millis(),
            version: s.version as i64,
            retained_key_id: s.retained.as_ref().map(|r| r.sealed.key_id.as_str()),
            retained_sealed: s.retained.as_ref().map(|r| r.sealed.sealed.as_str()),
            retained_url: s.retained.as_ref().map(|r| r.url.as_str()),
            retained_at: s.retained.as_ref().map(|r| r.since.unix_millis()),
        }
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = idempotency_keys, check_for_backend(MultiBackend))]
pub(crate) struct IdempotencyRow {
    pub(crate) fingerprint: String,
    pub(crate) token: String,
    pub(crate) lease_until: i64,
    answer_key_id: Option<String>,
    answer_sealed: Option<String>,
}

impl IdempotencyRow {
    /// The stored answer, once there is one.
    pub(crate) fn answer(&self) -> Option<SealedSecret> {
        match (&self.answer_key_id, &self.answer_sealed) {
            (Some(key_id), Some(sealed)) => Some(SealedSecret {
                key_id: key_id.clone(),
                sealed: sealed.clone(),
            }),
            _ => None,
        }
    }
}

#[derive(Insertable)]
#[diesel(table_name = idempotency_keys, treat_none_as_default_value = false)]
pub(crate) struct NewIdempotencyRow<'a> {
    pub(crate) scope: &'a str,
    pub(crate) idem_key: &'a str,
    pub(crate) fingerprint: &'a str,
    pub(crate) token: &'a str,
    pub(crate) lease_until: i64,
    pub(crate) answer_key_id: Option<&'a str>,
    pub(crate) answer_sealed: Option<&'a str>,
    pub(crate) created_at: i64,
}
