//! Payment link rows.

use diesel::prelude::*;
use pay_domain::kernel::ids::{CompanyId, LinkUid, PartnerId, PaymentLinkId, UserId};
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::links::{CreatedBy, LinkStatus, PaymentLink};
use pay_domain::{Fault, PortResult};

use super::{corrupt, id, instant, opt_instant, payload, ShortText};
use crate::conn::MultiBackend;
use crate::schema::payment_links;

// ----- payment links -----

const BY_API_KEY: &str = "api_key";
const BY_USER: &str = "user";
const BY_GRANT: &str = "grant";
const BY_ANONYMOUS: &str = "anonymous";

#[derive(Queryable, Selectable)]
#[diesel(table_name = payment_links, check_for_backend(MultiBackend))]
pub(crate) struct LinkRow {
    id: ShortText,
    uid: String,
    company_id: ShortText,
    status: ShortText,
    payload: String,
    created_at: i64,
    updated_at: i64,
    expires_at: Option<i64>,
    created_by_kind: ShortText,
    created_by_id: Option<ShortText>,
    grant_id: Option<ShortText>,
    grant_subscription_id: Option<ShortText>,
}

/// `created_by` from the three columns payment links and subscriptions share.
pub(crate) fn parse_created_by(
    kind: &str,
    by_id: Option<&str>,
    grant_id: Option<&str>,
    table: &str,
) -> PortResult<CreatedBy> {
    let col = |c: &str| corrupt(&format!("{table}.{c}"));
    let by_id = by_id.unwrap_or_default();
    Ok(match kind {
        BY_API_KEY => {
            CreatedBy::ApiKey(PartnerId::parse(by_id).ok_or_else(|| col("created_by_id"))?)
        }
        BY_USER => CreatedBy::User(UserId::parse(by_id).ok_or_else(|| col("created_by_id"))?),
        BY_GRANT => CreatedBy::Grant(
            grant_id
                .and_then(|g| uuid::Uuid::try_parse(g).ok())
                .ok_or_else(|| col("grant_id"))?,
        ),
        BY_ANONYMOUS => CreatedBy::Anonymous,
        _ => return Err(col("created_by_kind")),
    })
}

/// `created_by` as those three columns (kind, id, grant); the grant also goes in its own
/// column so that grant-filtered lists use an index.
pub(crate) fn created_by_columns(by: &CreatedBy) -> (&'static str, Option<String>, Option<String>) {
    match by {
        CreatedBy::ApiKey(p) => (BY_API_KEY, Some(p.to_string()), None),
        CreatedBy::User(u) => (BY_USER, Some(u.to_string()), None),
        CreatedBy::Grant(g) => {
            let g = g.hyphenated().to_string();
            (BY_GRANT, Some(g.clone()), Some(g))
        }
        CreatedBy::Anonymous => (BY_ANONYMOUS, None, None),
    }
}

impl LinkRow {
    fn created_by(&self) -> PortResult<CreatedBy> {
        parse_created_by(
            &self.created_by_kind,
            self.created_by_id.as_deref(),
            self.grant_id.as_deref(),
            "payment_links",
        )
    }
}

impl TryFrom<LinkRow> for PaymentLink {
    type Error = Fault;

    fn try_from(r: LinkRow) -> PortResult<PaymentLink> {
        Ok(PaymentLink {
            created_by: r.created_by()?,
            id: id(&r.id, PaymentLinkId::parse, "payment_links.id")?,
            uid: LinkUid::from_string(r.uid).ok_or_else(|| corrupt("payment_links.uid"))?,
            company_id: id(&r.company_id, CompanyId::parse, "payment_links.company_id")?,
            status: LinkStatus::parse(&r.status).ok_or_else(|| corrupt("payment_links.status"))?,
            payload: serde_json::from_str::<payload::StoredPayload>(&r.payload)
                .map_err(|_| corrupt("payment_links.payload"))?
                .into(),
            created_at: instant(r.created_at, "payment_links.created_at")?,
            updated_at: instant(r.updated_at, "payment_links.updated_at")?,
            expires_at: opt_instant(r.expires_at, "payment_links.expires_at")?,
            grant_subscription_id: r
                .grant_subscription_id
                .map(|s| {
                    uuid::Uuid::try_parse(s.as_str())
                        .map_err(|_| corrupt("payment_links.grant_subscription_id"))
                })
                .transpose()?,
        })
    }
}

/// The search text of a stored payload (`PaymentLinkPayload::search_text`); `None` when the
/// JSON does not read.
pub(crate) fn search_text_of(payload: &str) -> Option<String> {
    let p: pay_domain::links::PaymentLinkPayload =
        serde_json::from_str::<payload::StoredPayload>(payload)
            .ok()?
            .into();
    Some(p.search_text())
}

#[derive(Insertable)]
#[diesel(table_name = payment_links, treat_none_as_default_value = false)]
pub(crate) struct NewLinkRow<'a> {
    id: String,
    uid: &'a str,
    company_id: String,
    status: &'static str,
    payload: String,
    created_at: i64,
    updated_at: i64,
    expires_at: Option<i64>,
    created_by_kind: &'static str,
    created_by_id: Option<String>,
    grant_id: Option<String>,
    anonymous: bool,
    grant_subscription_id: Option<String>,
    search_text: String,
}

impl<'a> TryFrom<&'a PaymentLink> for NewLinkRow<'a> {
    type Error = Fault;

    fn try_from(l: &'a PaymentLink) -> PortResult<Self> {
        let (kind, by_id, grant_id) = created_by_columns(&l.created_by);
        Ok(NewLinkRow {
            id: l.id.to_string(),
            uid: l.uid.as_str(),
            company_id: l.company_id.to_string(),
            status: l.status.as_str(),
            payload: serde_json::to_string(&payload::StoredPayload::from(&l.payload))
                .map_err(|e| Fault::caused("encoding link payload", e))?,
            created_at: l.created_at.unix_millis(),
            updated_at: l.updated_at.unix_millis(),
            expires_at: l.expires_at.map(Timestamp::unix_millis),
            created_by_kind: kind,
            created_by_id: by_id,
            grant_id,
            anonymous: l.is_anonymous(),
            grant_subscription_id: l.grant_subscription_id.map(|s| s.hyphenated().to_string()),
            search_text: l.payload.search_text(),
        })
    }
}
