//! Mail outbox rows: what is read and what is inserted.

use diesel::prelude::*;
use pay_domain::kernel::ids::{CompanyId, LinkUid, PaymentLinkId};
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::mail::{MailId, MailKind, MailStatus, OutgoingMail};
use pay_domain::{Fault, PortResult};

use super::{corrupt, id, instant, opt_instant, uuid_text};
use crate::conn::MultiBackend;
use crate::schema::mail_outbox;

#[derive(Queryable, Selectable)]
#[diesel(table_name = mail_outbox, check_for_backend(MultiBackend))]
pub(crate) struct MailRow {
    id: String,
    company_id: String,
    link_id: String,
    link_uid: String,
    kind: String,
    recipient: String,
    subject: String,
    text_body: String,
    html_body: String,
    status: String,
    attempts: i64,
    pub(crate) next_attempt_at: Option<i64>,
    last_attempt_at: Option<i64>,
    last_error: Option<String>,
    created_at: i64,
    sent_at: Option<i64>,
}

impl crate::ports::outbox::OutboxRow for MailRow {
    fn id(&self) -> &str {
        &self.id
    }

    fn leased_until(&mut self, lease: i64) {
        self.next_attempt_at = Some(lease);
    }
}

impl TryFrom<MailRow> for OutgoingMail {
    type Error = Fault;

    fn try_from(r: MailRow) -> PortResult<OutgoingMail> {
        Ok(OutgoingMail {
            id: id(&r.id, MailId::parse, "mail_outbox.id")?,
            company_id: id(&r.company_id, CompanyId::parse, "mail_outbox.company_id")?,
            link_id: id(&r.link_id, PaymentLinkId::parse, "mail_outbox.link_id")?,
            link_uid: id(&r.link_uid, LinkUid::parse, "mail_outbox.link_uid")?,
            kind: MailKind::parse(&r.kind).ok_or_else(|| corrupt("mail_outbox.kind"))?,
            to: r.recipient,
            subject: r.subject,
            text_body: r.text_body,
            html_body: r.html_body,
            status: MailStatus::parse(&r.status).ok_or_else(|| corrupt("mail_outbox.status"))?,
            attempts: u32::try_from(r.attempts).map_err(|_| corrupt("mail_outbox.attempts"))?,
            next_attempt_at: opt_instant(r.next_attempt_at, "mail_outbox.next_attempt_at")?,
            last_attempt_at: opt_instant(r.last_attempt_at, "mail_outbox.last_attempt_at")?,
            last_error: r.last_error,
            created_at: instant(r.created_at, "mail_outbox.created_at")?,
            sent_at: opt_instant(r.sent_at, "mail_outbox.sent_at")?,
        })
    }
}

#[derive(Insertable)]
#[diesel(table_name = mail_outbox)]
pub(crate) struct NewMailRow<'a> {
    id: String,
    company_id: String,
    link_id: String,
    link_uid: &'a str,
    kind: &'static str,
    recipient: &'a str,
    subject: &'a str,
    text_body: &'a str,
    html_body: &'a str,
    status: &'static str,
    attempts: i64,
    next_attempt_at: Option<i64>,
    last_attempt_at: Option<i64>,
    last_error: Option<&'a str>,
    created_at: i64,
    sent_at: Option<i64>,
}

impl<'a> From<&'a OutgoingMail> for NewMailRow<'a> {
    fn from(m: &'a OutgoingMail) -> Self {
        NewMailRow {
            id: mail_id_text(m.id),
            company_id: m.company_id.to_string(),
            link_id: m.link_id.to_string(),
            link_uid: m.link_uid.as_str(),
            kind: m.kind.as_str(),
            recipient: &m.to,
            subject: &m.subject,
            text_body: &m.text_body,
            html_body: &m.html_body,
            status: m.status.as_str(),
            attempts: i64::from(m.attempts),
            next_attempt_at: m.next_attempt_at.map(Timestamp::unix_millis),
            last_attempt_at: m.last_attempt_at.map(Timestamp::unix_millis),
            last_error: m.last_error.as_deref(),
            created_at: m.created_at.unix_millis(),
            sent_at: m.sent_at.map(Timestamp::unix_millis),
        }
    }
}

/// Mail ids are stored in the canonical hyphenated form, lower case: text order is id order,
/// which is creation order for UUID v7.
pub(crate) fn mail_id_text(id: MailId) -> String {
    uuid_text(id.0)
}
