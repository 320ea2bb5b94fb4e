//! The in-memory store: mail.

use super::{unique_violation, MemStore};
use crate::kernel::error::{Fault, PortResult};
use crate::kernel::idempotency::Completion;
use crate::kernel::ids::*;
use crate::kernel::timestamp::Timestamp;
use crate::mail::{MailId, MailStatus, MailStore, OutgoingMail};

impl MailStore for MemStore {
    fn insert_mail(
        &self,
        mail: &OutgoingMail,
        completion: Option<&Completion>,
    ) -> PortResult<bool> {
        self.count_call("insert_mail");
        let mut t = self.write();
        if !t.companies.iter().any(|(c, _)| c.id == mail.company_id) {
            return Err(Fault::new("foreign key: company"));
        }
        if !t
            .links
            .iter()
            .any(|l| l.id == mail.link_id && l.uid == mail.link_uid)
        {
            return Err(Fault::new("foreign key: link"));
        }
        if t.mails.iter().any(|m| m.id == mail.id) {
            return Err(unique_violation("mail_outbox.id"));
        }
        if !super::webhooks::complete(&mut t, completion) {
            return Ok(false);
        }
        t.mails.push(mail.clone());
        Ok(true)
    }

    fn claim_due_mails(
        &self,
        now: Timestamp,
        lease_until: Timestamp,
        limit: usize,
    ) -> PortResult<Vec<OutgoingMail>> {
        self.count_call("claim_due_mails");
        let mut t = self.write();
        let mut due: Vec<usize> = (0..t.mails.len())
            .filter(|&i| {
                let m = &t.mails[i];
                m.status == MailStatus::Pending && m.next_attempt_at.is_some_and(|at| at <= now)
            })
            .collect();
        due.sort_by_key(|&i| (t.mails[i].next_attempt_at, t.mails[i].id));
        due.truncate(limit);
        Ok(due
            .into_iter()
            .map(|i| {
                t.mails[i].next_attempt_at = Some(lease_until);
                t.mails[i].clone()
            })
            .collect())
    }

    fn record_mail_attempt(
        &self,
        id: MailId,
        number: u32,
        at: Timestamp,
        after: &crate::mail::AfterMailAttempt,
    ) -> PortResult<bool> {
        self.count_call("record_mail_attempt");
        let mut t = self.write();
        let Some(m) = t
            .mails
            .iter_mut()
            .find(|m| m.id == id && m.status == MailStatus::Pending && m.attempts + 1 == number)
        else {
            return Ok(false);
        };
        m.attempts = number;
        m.last_attempt_at = Some(at);
        m.status = after.status;
        m.next_attempt_at = after.next_attempt_at;
        m.last_error = after.last_error.clone();
        m.sent_at = after.sent_at;
        Ok(true)
    }

    fn mail(&self, id: MailId) -> PortResult<Option<OutgoingMail>> {
        self.count_call("mail");
        Ok(self.tables().mails.iter().find(|m| m.id == id).cloned())
    }

    fn link_mails(&self, company: CompanyId, link: &LinkUid) -> PortResult<Vec<OutgoingMail>> {
        self.count_call("link_mails");
        let mut v: Vec<OutgoingMail> = self
            .tables()
            .mails
            .iter()
            .filter(|m| m.company_id == company && &m.link_uid == link)
            .cloned()
            .collect();
        v.sort_by_key(|m| std::cmp::Reverse((m.created_at, m.id)));
        Ok(v)
    }

    fn prune_mails(&self, before: Timestamp) -> PortResult<u64> {
        self.count_call("prune_mails");
        let mut t = self.write();
        let n = t.mails.len();
        t.mails
            .retain(|m| m.status == MailStatus::Pending || m.created_at >= before);
        Ok((n - t.mails.len()) as u64)
    }

    fn pending_mails_after(
        &self,
        after: Option<MailId>,
        limit: usize,
    ) -> PortResult<Vec<OutgoingMail>> {
        self.count_call("pending_mails_after");
        let mut v: Vec<OutgoingMail> = self
            .tables()
            .mails
            .iter()
            .filter(|m| m.status == MailStatus::Pending && after.is_none_or(|a| m.id > a))
            .cloned()
            .collect();
        v.sort_by_key(|m| m.id);
        v.truncate(limit);
        Ok(v)
    }
}
