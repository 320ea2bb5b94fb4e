//! Subscription and cycle rows: what is read and what is inserted.

use diesel::prelude::*;
use pay_domain::kernel::ids::{
    CompanyId, ContactId, CycleId, LinkUid, PaymentLinkId, SubscriptionId, SubscriptionUid,
};
use pay_domain::subscriptions::calendar::{Cadence, Interval};
use pay_domain::subscriptions::{Cycle, CycleStatus, Subscription, SubscriptionStatus};
use pay_domain::{Fault, PortResult};

use super::{
    corrupt, created_by_columns, id, instant, json_object, json_text, opt_instant, parse_created_by,
};
use crate::conn::MultiBackend;
use crate::ports::outbox::OutboxRow;
use crate::schema::{subscription_cycles, subscriptions};

#[derive(Queryable, Selectable)]
#[diesel(table_name = subscriptions, check_for_backend(MultiBackend))]
pub(crate) struct SubscriptionRow {
    id: String,
    uid: String,
    company_id: String,
    contact_id: String,
    status: String,
    customer_email: String,
    label: String,
    description: Option<String>,
    amount_usd: String,
    settlement_asset: String,
    cadence: String,
    interval_count: i64,
    start_at: i64,
    zone: String,
    metadata: String,
    created_by_kind: String,
    created_by_id: Option<String>,
    grant_id: Option<String>,
    created_at: i64,
    updated_at: i64,
    next_sequence: i64,
    next_run_at: Option<i64>,
}

impl OutboxRow for SubscriptionRow {
    fn id(&self) -> &str {
        &self.id
    }

    /// The lease has its own column, not read: the due time stays as stored.
    fn leased_until(&mut self, _lease: i64) {}
}

fn interval(cadence: &str, count: i64) -> PortResult<Interval> {
    let cadence = Cadence::parse(cadence).ok_or_else(|| corrupt("subscriptions.cadence"))?;
    Interval::new(cadence, Some(count)).map_err(|_| corrupt("subscriptions.interval_count"))
}

fn sequence(n: i64, column: &str) -> PortResult<u32> {
    u32::try_from(n).map_err(|_| corrupt(column))
}

impl TryFrom<SubscriptionRow> for Subscription {
    type Error = Fault;

    fn try_from(r: SubscriptionRow) -> PortResult<Subscription> {
        Ok(Subscription {
            created_by: parse_created_by(
                &r.created_by_kind,
                r.created_by_id.as_deref(),
                r.grant_id.as_deref(),
                "subscriptions",
            )?,
            id: id(&r.id, SubscriptionId::parse, "subscriptions.id")?,
            uid: id(&r.uid, SubscriptionUid::parse, "subscriptions.uid")?,
            company_id: id(&r.company_id, CompanyId::parse, "subscriptions.company_id")?,
            contact_id: id(&r.contact_id, ContactId::parse, "subscriptions.contact_id")?,
            status: SubscriptionStatus::parse(&r.status)
                .ok_or_else(|| corrupt("subscriptions.status"))?,
            customer_email: r.customer_email,
            label: r.label,
            description: r.description,
            amount_usd: r.amount_usd,
            settlement_asset: r.settlement_asset,
            interval: interval(&r.cadence, r.interval_count)?,
            start_at: instant(r.start_at, "subscriptions.start_at")?,
            zone: r.zone.parse().map_err(|_| corrupt("subscriptions.zone"))?,
            metadata: json_object(&r.metadata, "subscriptions.metadata")?,
            created_at: instant(r.created_at, "subscriptions.created_at")?,
            updated_at: instant(r.updated_at, "subscriptions.updated_at")?,
            next_sequence: sequence(r.next_sequence, "subscriptions.next_sequence")?,
            next_run_at: opt_instant(r.next_run_at, "subscriptions.next_run_at")?,
        })
    }
}

#[derive(Insertable)]
#[diesel(table_name = subscriptions, treat_none_as_default_value = false)]
pub(crate) struct NewSubscriptionRow<'a> {
    id: String,
    uid: &'a str,
    company_id: String,
    contact_id: String,
    status: &'static str,
    customer_email: &'a str,
    label: &'a str,
    description: Option<&'a str>,
    amount_usd: &'a str,
    settlement_asset: &'a str,
    cadence: &'static str,
    interval_count: i64,
    start_at: i64,
    zone: &'static str,
    metadata: String,
    created_by_kind: &'static str,
    created_by_id: Option<String>,
    grant_id: Option<String>,
    created_at: i64,
    updated_at: i64,
    next_sequence: i64,
    next_run_at: Option<i64>,
    lease_until: Option<i64>,
}

impl<'a> TryFrom<&'a Subscription> for NewSubscriptionRow<'a> {
    type Error = Fault;

    fn try_from(s: &'a Subscription) -> PortResult<Self> {
        let (kind, by_id, grant_id) = created_by_columns(&s.created_by);
        Ok(NewSubscriptionRow {
            id: s.id.to_string(),
            uid: s.uid.as_str(),
            company_id: s.company_id.to_string(),
            contact_id: s.contact_id.to_string(),
            status: s.status.as_str(),
            customer_email: &s.customer_email,
            label: &s.label,
            description: s.description.as_deref(),
            amount_usd: &s.amount_usd,
            settlement_asset: &s.settlement_asset,
            cadence: s.interval.cadence().as_str(),
            interval_count: i64::from(s.interval.count()),
            start_at: s.start_at.unix_millis(),
            zone: s.zone.name(),
            metadata: json_text(&s.metadata)?,
            created_by_kind: kind,
            created_by_id: by_id,
            grant_id,
            created_at: s.created_at.unix_millis(),
            updated_at: s.updated_at.unix_millis(),
            next_sequence: i64::from(s.next_sequence),
            next_run_at: s.next_run_at.map(|t| t.unix_millis()),
            lease_until: None,
        })
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = subscription_cycles, check_for_backend(MultiBackend))]
pub(crate) struct CycleRow {
    id: String,
    subscription_id: String,
    company_id: String,
    sequence: i64,
    due_at: i64,
    amount_usd: String,
    status: String,
    payment_link_id: Option<String>,
    payment_link_uid: Option<String>,
    issued_at: Option<i64>,
    paid_at: Option<i64>,
    reminders: i64,
    created_at: i64,
    updated_at: i64,
}

impl TryFrom<CycleRow> for Cycle {
    type Error = Fault;

    fn try_from(r: CycleRow) -> PortResult<Cycle> {
        Ok(Cycle {
            id: id(&r.id, CycleId::parse, "subscription_cycles.id")?,
            subscription_id: id(
                &r.subscription_id,
                SubscriptionId::parse,
                "subscription_cycles.subscription_id",
            )?,
            company_id: id(
                &r.company_id,
                CompanyId::parse,
                "subscription_cycles.company_id",
            )?,
            sequence: sequence(r.sequence, "subscription_cycles.sequence")?,
            due_at: instant(r.due_at, "subscription_cycles.due_at")?,
            amount_usd: r.amount_usd,
            status: CycleStatus::parse(&r.status)
                .ok_or_else(|| corrupt("subscription_cycles.status"))?,
            payment_link_id: r
                .payment_link_id
                .map(|l| {
                    id(
                        &l,
                        PaymentLinkId::parse,
                        "subscription_cycles.payment_link_id",
                    )
                })
                .transpose()?,
            payment_link_uid: r
                .payment_link_uid
                .map(|l| id(&l, LinkUid::parse, "subscription_cycles.payment_link_uid"))
                .transpose()?,
            issued_at: opt_instant(r.issued_at, "subscription_cycles.issued_at")?,
            paid_at: opt_instant(r.paid_at, "subscription_cycles.paid_at")?,
            reminders: u8::try_from(r.reminders)
                .map_err(|_| corrupt("subscription_cycles.reminders"))?,
            created_at: instant(r.created_at, "subscription_cycles.created_at")?,
            updated_at: instant(r.updated_at, "subscription_cycles.updated_at")?,
        })
    }
}

#[derive(Insertable)]
#[diesel(table_name = subscription_cycles, treat_none_as_default_value = false)]
pub(crate) struct NewCycleRow<'a> {
    pub(crate) id: String,
    pub(crate) subscription_id: String,
    company_id: String,
    pub(crate) sequence: i64,
    due_at: i64,
    amount_usd: &'a str,
    status: &'static str,
    payment_link_id: Option<String>,
    payment_link_uid: Option<&'a str>,
    issued_at: Option<i64>,
    paid_at: Option<i64>,
    reminders: i64,
    created_at: i64,
    updated_at: i64,
}

impl<'a> From<&'a Cycle> for NewCycleRow<'a> {
    fn from(c: &'a Cycle) -> Self {
        NewCycleRow {
            id: c.id.to_string(),
            subscription_id: c.subscription_id.to_string(),
            company_id: c.company_id.to_string(),
            sequence: i64::from(c.sequence),
            due_at: c.due_at.unix_millis(),
            amount_usd: &c.amount_usd,
            status: c.status.as_str(),
            payment_link_id: c.payment_link_id.map(|l| l.to_string()),
            payment_link_uid: c.payment_link_uid.as_ref().map(LinkUid::as_str),
            issued_at: c.issued_at.map(|t| t.unix_millis()),
            paid_at: c.paid_at.map(|t| t.unix_millis()),
            reminders: i64::from(c.reminders),
            created_at: c.created_at.unix_millis(),
            updated_at: c.updated_at.unix_millis(),
        }
    }
}
