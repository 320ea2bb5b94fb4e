//! Subscriptions and their cycles: the records, the create input and its rules.

use std::fmt;

use chrono_tz::Tz;
use serde_json::{Map, Value};
use time::format_description::well_known::Rfc3339;
use time::{Duration, OffsetDateTime};

use crate::kernel::amount::{Amount, DecimalError};
use crate::kernel::assets::{AssetCatalogue, AssetRefusal};
use crate::kernel::error::FieldError;
use crate::kernel::ids::{
    CompanyId, ContactId, CycleId, LinkUid, PaymentLinkId, SubscriptionId, SubscriptionUid,
};
use crate::kernel::timestamp::Timestamp;
use crate::kernel::{timezones, validate};
use crate::links::CreatedBy;
use crate::settings::PaySettings;
use crate::subscriptions::calendar::{Cadence, Interval, IntervalError, Schedule};
use crate::subscriptions::{SubscriptionError, SubscriptionStatus};

/// The list limit, as for links: up to 200 newest.
pub const LIST_LIMIT: usize = 200;
/// Decimals of `amountUsd` (cents).
pub const USD_DECIMALS: u32 = 2;
/// Longest `label`.
pub const MAX_LABEL_CHARS: usize = 200;
/// Longest `description`.
pub const MAX_DESCRIPTION_CHARS: usize = 2000;
/// How far in the past `startAt` may be (a create that crossed midnight on its way).
pub const MAX_START_IN_PAST: Duration = Duration::days(1);
/// How far ahead `startAt` may be.
pub const MAX_START_AHEAD: Duration = Duration::days(366 * 5);

/// A cycle's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CycleStatus {
    /// Planned; its invoice link is not issued yet.
    Scheduled,
    /// Its invoice link is issued and unpaid.
    Open,
    Paid,
    /// Unpaid 24 hours or more after `dueAt`.
    Overdue,
    /// The subscription ended before it was paid; its link is archived.
    Cancelled,
}

impl CycleStatus {
    pub const ALL: [CycleStatus; 5] = [
        CycleStatus::Scheduled,
        CycleStatus::Open,
        CycleStatus::Paid,
        CycleStatus::Overdue,
        CycleStatus::Cancelled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            CycleStatus::Scheduled => "scheduled",
            CycleStatus::Open => "open",
            CycleStatus::Paid => "paid",
            CycleStatus::Overdue => "overdue",
            CycleStatus::Cancelled => "cancelled",
        }
    }

    pub fn parse(s: &str) -> Option<CycleStatus> {
        CycleStatus::ALL.into_iter().find(|c| c.as_str() == s)
    }

    /// Issued and not paid: what reminders and the overdue rule look at.
    pub fn is_unpaid(self) -> bool {
        matches!(self, CycleStatus::Open | CycleStatus::Overdue)
    }

    /// What a cancel cancels: every cycle not paid yet.
    pub fn is_cancellable(self) -> bool {
        matches!(
            self,
            CycleStatus::Scheduled | CycleStatus::Open | CycleStatus::Overdue
        )
    }
}

impl fmt::Display for CycleStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A subscription as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct Subscription {
    pub id: SubscriptionId,
    pub uid: SubscriptionUid,
    pub company_id: CompanyId,
    /// The customer (contact) it bills.
    pub contact_id: ContactId,
    pub status: SubscriptionStatus,
    pub customer_email: String,
    pub label: String,
    pub description: Option<String>,
    /// Exact decimal text, at most 2 decimals.
    pub amount_usd: String,
    /// The settlement asset identifier.
    pub settlement_asset: String,
    pub interval: Interval,
    pub start_at: Timestamp,
    pub zone: Tz,
    pub metadata: Map<String, Value>,
    /// Which credential created it; its cycle links are recorded as made by the same.
    pub created_by: CreatedBy,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    /// The sequence number of the next cycle to create.
    pub next_sequence: u32,
    /// When the scheduler has work on it next (company clock): a cycle to issue, a reminder,
    /// an overdue check. `None`: nothing until a person acts (paused, cancelled).
    pub next_run_at: Option<Timestamp>,
}

impl Subscription {
    pub fn schedule(&self) -> Schedule {
        Schedule::new(self.start_at, self.zone, self.interval)
    }

    pub fn cadence(&self) -> Cadence {
        self.interval.cadence()
    }
}

/// One billing cycle as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct Cycle {
    pub id: CycleId,
    pub subscription_id: SubscriptionId,
    pub company_id: CompanyId,
    /// 0, 1, 2, ...
    pub sequence: u32,
    pub due_at: Timestamp,
    pub amount_usd: String,
    pub status: CycleStatus,
    pub payment_link_id: Option<PaymentLinkId>,
    pub payment_link_uid: Option<LinkUid>,
    /// When its link was issued.
    pub issued_at: Option<Timestamp>,
    pub paid_at: Option<Timestamp>,
    /// The last reminder stage handled (0: none yet; see `scheduler::ReminderStage`).
    pub reminders: u8,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// The create body, typed by the edge, not yet checked.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CreateSubscriptionInput {
    pub customer_email: String,
    pub label: String,
    pub amount_usd: String,
    pub cadence: String,
    pub timezone: String,
    pub description: Option<String>,
    pub settlement_asset: Option<String>,
    pub billing_interval_count: Option<i64>,
    /// RFC 3339; default now.
    pub start_at: Option<String>,
    pub metadata: Option<Map<String, Value>>,
}

/// Field names the create route takes.
pub const CREATE_SUBSCRIPTION_FIELDS: &[&str] = &[
    "customerEmail",
    "label",
    "amountUsd",
    "cadence",
    "timezone",
    "description",
    "settlementAsset",
    "billingIntervalCount",
    "startAt",
    "metadata",
];

/// A checked create.
#[derive(Debug, Clone, PartialEq)]
pub struct NewSubscription {
    pub customer_email: String,
    pub label: String,
    pub description: Option<String>,
    pub amount_usd: String,
    pub settlement_asset: String,
    pub interval: Interval,
    pub start_at: Timestamp,
    pub zone: Tz,
    pub metadata: Map<String, Value>,
}

impl CreateSubscriptionInput {
    /// Applies every rule, naming the field at fault: the e-mail (trimmed), `label` (one line,
    /// 1..200), `description` (at most 2000), `amountUsd` (positive, at most 2 decimals, at
    /// most 18 integer digits), `cadence` (the five names), `billingIntervalCount` (1..24,
    /// required for `custom_months`, implied by the others), `timezone` (an IANA name of the
    /// bundled database), `settlementAsset` (an enabled asset; default: the company's),
    /// `startAt` (RFC 3339, at most a day in the past and five years ahead; default now),
    /// `metadata` (the metadata limits; its advanced redirect and tolerance settings,
    /// `settings::LINK_SETTING_KEYS`, by the settings' rules).
    pub fn check(
        self,
        catalogue: &AssetCatalogue,
        settings: &PaySettings,
        now: Timestamp,
    ) -> Result<NewSubscription, SubscriptionError> {
        let customer_email = self.customer_email.trim().to_owned();
        validate::email("customerEmail", &customer_email)?;
        validate::text("label", &self.label, MAX_LABEL_CHARS, false)?;
        if let Some(d) = &self.description {
            validate::text("description", d, MAX_DESCRIPTION_CHARS, true)?;
        }
        parse_usd(&self.amount_usd)?;
        let cadence = Cadence::parse(&self.cadence).ok_or_else(|| {
            FieldError::new(
                "cadence",
                "cadence must be one of weekly, biweekly, monthly, custom_months, yearly",
            )
        })?;
        let interval = Interval::new(cadence, self.billing_interval_count).map_err(|e| {
            let field = match e {
                IntervalError::CountOutOfRange(_)
                | IntervalError::CountRequired
                | IntervalError::CountContradictsCadence { .. } => "billingIntervalCount",
            };
            FieldError::new(field, e.to_string())
        })?;
        if !timezones::is_supported(&self.timezone) {
            return Err(FieldError::new(
                "timezone",
                "timezone must be a supported IANA zone such as Europe/Paris",
            )
            .into());
        }
        let zone: Tz = self
            .timezone
            .parse()
            .map_err(|_| FieldError::new("timezone", "timezone is not supported"))?;
        let asset = catalogue
            .resolve(
                self.settlement_asset.as_deref(),
                None,
                settings.default_destination_asset.as_deref(),
            )
            .map_err(|e| match e {
                AssetRefusal::InvalidDestinationAsset { message, .. } => {
                    AssetRefusal::InvalidDestinationAsset {
                        field: "settlementAsset".into(),
                        message,
                    }
                }
                other => other,
            })?;
        let start_at = match &self.start_at {
            None => now,
            Some(s) => parse_start(s, now)?,
        };
        let metadata = self.metadata.unwrap_or_default();
        validate::metadata("metadata", &metadata)?;
        // Its advanced settings go on every cycle link: checked as a link's are.
        crate::settings::with_link_overrides(settings, Some(&metadata), catalogue)?;
        Ok(NewSubscription {
            customer_email,
            label: self.label,
            description: self.description,
            amount_usd: self.amount_usd,
            settlement_asset: asset.asset_identifier.clone(),
            interval,
            start_at,
            zone,
            metadata,
        })
    }
}

/// A positive USD amount with at most 2 decimals.
pub fn parse_usd(s: &str) -> Result<Amount, FieldError> {
    Amount::parse(s, USD_DECIMALS).map_err(|e| {
        let why = match e {
            DecimalError::TooPrecise(n) => {
                format!("amountUsd must have at most {n} decimal places")
            }
            DecimalError::TooLarge => "amountUsd is too large".to_owned(),
            DecimalError::LeadingZero => "amountUsd must not start with a zero".to_owned(),
            DecimalError::Format | DecimalError::NegativeZero => {
                "amountUsd must be a positive decimal string such as \"19.99\"".to_owned()
            }
        };
        FieldError::new("amountUsd", why)
    })
}

fn parse_start(s: &str, now: Timestamp) -> Result<Timestamp, FieldError> {
    let bad = || FieldError::new("startAt", "startAt must be an RFC 3339 timestamp");
    let at = OffsetDateTime::parse(s, &Rfc3339)
        .map(Timestamp::from_datetime)
        .map_err(|_| bad())?;
    if at < now.minus(MAX_START_IN_PAST) {
        return Err(FieldError::new(
            "startAt",
            "startAt must not be more than a day in the past",
        ));
    }
    if at > now.plus(MAX_START_AHEAD) {
        return Err(FieldError::new(
            "startAt",
            "startAt must be at most five years ahead",
        ));
    }
    Ok(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cycle_statuses_round_trip() {
        for c in CycleStatus::ALL {
            assert_eq!(CycleStatus::parse(c.as_str()), Some(c));
        }
        assert!(CycleStatus::Open.is_unpaid() && CycleStatus::Overdue.is_unpaid());
        assert!(!CycleStatus::Scheduled.is_unpaid() && !CycleStatus::Paid.is_unpaid());
        assert!(!CycleStatus::Paid.is_cancellable() && !CycleStatus::Cancelled.is_cancellable());
    }

    #[test]
    fn usd_amounts() {
        assert!(parse_usd("19.99").is_ok());
        assert!(parse_usd("5").is_ok());
        for bad in [
            "1.999",
            "-5",
            "0",
            "1000000000000000000000000000000",
            "1e3",
            " 5",
            "",
        ] {
            assert_eq!(parse_usd(bad).unwrap_err().field, "amountUsd", "{bad}");
        }
    }
}
