//! `MailStore` on `DieselStore`: the e-mail outbox (insert, claim with a lease, record an
//! attempt by compare-and-set, reads). Written once for both backends, except the claim's
//! select (`FOR UPDATE SKIP LOCKED`, PostgreSQL only), as for the webhook outbox.

use diesel::prelude::*;
use pay_domain::kernel::idempotency::Completion;
use pay_domain::kernel::ids::{CompanyId, LinkUid};
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::mail::{AfterMailAttempt, MailId, MailStatus, MailStore, OutgoingMail};
use pay_domain::PortResult;

use super::clock;
use crate::conn::{write_transaction, AnyConnection};
use crate::rows::{mail_id_text, MailRow, NewMailRow};
use crate::schema::mail_outbox;
use crate::DieselStore;

/// The one status a mailer claims and records attempts for.
fn live() -> &'static str {
    MailStatus::Pending.as_str()
}

/// The claim's selection, shared by both backends: pending mails due at `now`, oldest due
/// first (ties by id), at most `limit`. The `mail_outbox_due` index serves it in order.
#[diesel::dsl::auto_type]
fn due_mails(now: i64, status: &'static str, limit: i64) -> _ {
    mail_outbox::table
        .filter(mail_outbox::next_attempt_at.le(now))
        .filter(mail_outbox::status.eq(status))
        .order_by((mail_outbox::next_attempt_at.asc(), mail_outbox::id.asc()))
        .limit(limit)
}

fn to_mails(rows: Vec<MailRow>) -> PortResult<Vec<OutgoingMail>> {
    rows.into_iter().map(OutgoingMail::try_from).collect()
}

impl MailStore for DieselStore {
    fn insert_mail(
        &self,
        mail: &OutgoingMail,
        completion: Option<&Completion>,
    ) -> PortResult<bool> {
        let row = NewMailRow::from(mail);
        super::grant_webhooks::write_keyed(self, "insert mail", completion, |conn| {
            diesel::insert_into(mail_outbox::table)
                .values(&row)
                .execute(conn)
                .map(drop)
        })
    }

    fn prune_mails(&self, before: Timestamp) -> PortResult<u64> {
        let n = self.write("prune mails", |conn| {
            diesel::delete(
                mail_outbox::table
                    .filter(mail_outbox::status.ne("pending"))
                    .filter(mail_outbox::created_at.lt(before.unix_millis())),
            )
            .execute(conn)
        })?;
        Ok(n as u64)
    }

    fn claim_due_mails(
        &self,
        now: Timestamp,
        lease_until: Timestamp,
        limit: usize,
    ) -> PortResult<Vec<OutgoingMail>> {
        let now = now.unix_millis();
        let lease = lease_until.unix_millis();
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        if limit == 0 {
            return Ok(Vec::new());
        }
        let rows: Vec<MailRow> = self.write("claim due mails", |conn| {
            write_transaction(conn, |conn| {
                let moved = clock::max_clock_offset(conn)?;
                Ok(claim_due!(
                    conn,
                    mail_outbox,
                    MailRow,
                    due_mails(now.saturating_add(moved), live(), limit),
                    now = now,
                    lease = lease,
                    moved = moved,
                ))
            })
        })?;
        to_mails(rows)
    }

    fn record_mail_attempt(
        &self,
        id: MailId,
        number: u32,
        at: Timestamp,
        after: &AfterMailAttempt,
    ) -> PortResult<bool> {
        let id = mail_id_text(id);
        let number = i64::from(number);
        let moved = self.write("record mail attempt", |conn| {
            // Compare-and-set on the attempt count and a live status, in one statement: a
            // late or duplicate record (a mailer whose lease ran out while another already
            // recorded this attempt) changes nothing instead of moving the mail backwards.
            diesel::update(
                mail_outbox::table
                    .filter(mail_outbox::id.eq(&id))
                    .filter(mail_outbox::attempts.eq(number - 1))
                    .filter(mail_outbox::status.eq(live())),
            )
            .set((
                mail_outbox::attempts.eq(number),
                mail_outbox::status.eq(after.status.as_str()),
                mail_outbox::next_attempt_at.eq(after.next_attempt_at.map(Timestamp::unix_millis)),
                mail_outbox::last_attempt_at.eq(at.unix_millis()),
                mail_outbox::last_error.eq(after.last_error.as_deref()),
                mail_outbox::sent_at.eq(after.sent_at.map(Timestamp::unix_millis)),
                mail_outbox::lease_until.eq(None::<i64>),
            ))
            .execute(conn)
        })?;
        Ok(moved == 1)
    }

    fn mail(&self, id: MailId) -> PortResult<Option<OutgoingMail>> {
        self.run("get mail", |conn| {
            mail_outbox::table
                .find(mail_id_text(id))
                .select(MailRow::as_select())
                .first(conn)
                .optional()
        })?
        .map(OutgoingMail::try_from)
        .transpose()
    }

    fn link_mails(&self, company: CompanyId, link: &LinkUid) -> PortResult<Vec<OutgoingMail>> {
        let rows = self.run("link mails", |conn| {
            mail_outbox::table
                .filter(mail_outbox::company_id.eq(company.to_string()))
                .filter(mail_outbox::link_uid.eq(link.as_str()))
                .order((mail_outbox::created_at.desc(), mail_outbox::id.desc()))
                .select(MailRow::as_select())
                .load(conn)
        })?;
        to_mails(rows)
    }

    fn pending_mails_after(
        &self,
        after: Option<MailId>,
        limit: usize,
    ) -> PortResult<Vec<OutgoingMail>> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let after = after.map(mail_id_text);
        let rows = self.run("pending mails", |conn| {
            let mut q = mail_outbox::table
                .filter(mail_outbox::status.eq(live()))
                .into_boxed();
            if let Some(a) = &after {
                q = q.filter(mail_outbox::id.gt(a));
            }
            q.order(mail_outbox::id.asc())
                .limit(limit)
                .select(MailRow::as_select())
                .load(conn)
        })?;
        to_mails(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_claimable_status_is_the_only_live_one() {
        let live_ones: Vec<&str> = MailStatus::ALL
            .into_iter()
            .filter(|s| !s.is_terminal())
            .map(MailStatus::as_str)
            .collect();
        assert_eq!(live_ones, vec![live()]);
    }
}
