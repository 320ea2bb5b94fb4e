//! E-mail use cases: `send-request-email` renders a payment request and puts it in the outbox
//! (nothing is sent inline), and the mailer's steps: claim due mails, record each outcome, and
//! list what waits while no transport is configured.

use std::sync::Arc;

use crate::kernel::error::{Fault, PortResult, RateLimited};
use crate::kernel::ids::LinkUid;
use crate::kernel::keyed::{self, Answer, KeyedCall, Sealing};
use crate::kernel::service::Kernel;
use crate::kernel::timestamp::Timestamp;
use crate::links::LinkService;
use crate::mail::{
    after_attempt, check_link_accepts_requests, parse_recipient, redact_error,
    render_payment_request, AfterMailAttempt, MailId, MailKind, MailStatus, MailStore,
    OutgoingMail, SendOutcome, CLAIM_LEASE, MAIL_RETENTION,
};
use crate::mail::{MailError, MissingEmail};
use crate::tenancy::TenancyService;
use crate::tenancy::{Principal, Scope};

/// Payment-request e-mails and the mail outbox, over the mail port only.
#[derive(Clone)]
pub struct MailService {
    k: Kernel,
    tenancy: TenancyService,
    links: LinkService,
    store: Arc<dyn MailStore + Send + Sync>,
}

impl std::fmt::Debug for MailService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MailService").finish_non_exhaustive()
    }
}

impl MailService {
    /// Outgoing mail over its outbox store; `links` reads the link a payment request is for.
    pub fn new(
        k: Kernel,
        tenancy: TenancyService,
        links: LinkService,
        store: Arc<dyn MailStore + Send + Sync>,
    ) -> MailService {
        MailService {
            k,
            tenancy,
            links,
            store,
        }
    }

    /// Housekeeping: forgets sent and failed mails older than `MAIL_RETENTION` before `now`.
    pub(crate) fn prune(&self, now: Timestamp) -> PortResult<u64> {
        self.store.prune_mails(now.minus(MAIL_RETENTION))
    }

    /// Queues the link's payment request for `email`, or for the link's `customerEmail` when
    /// none is given; returns the address it goes to. Authorised like every link mutation
    /// (`pay:payment-links:write`; another company's or grant's link is not found). Checks run
    /// in this order: the link (404), the address (400 `validation_failed` on `email`, or
    /// `missing_email`), then the link's state (409 `link_not_active` when paused, archived
    /// or expired).
    pub fn send_request_email(
        &self,
        p: &Principal,
        uid: &LinkUid,
        email: Option<String>,
    ) -> Result<String, MailError> {
        let answer = self.send_request_email_keyed(p, uid, email, None)?;
        answer
            .fresh()
            .ok_or_else(|| Fault::new("an unkeyed call replayed").into())
    }

    /// `send_request_email` with an `Idempotency-Key` (`kernel::keyed`, route
    /// `payment-links/<uid>/send-request-email`): the mail and its answer commit together; a
    /// byte-identical retry gets that answer and queues no second mail.
    pub fn send_request_email_keyed(
        &self,
        p: &Principal,
        uid: &LinkUid,
        email: Option<String>,
        call: Option<KeyedCall<'_, String>>,
    ) -> Result<Answer<String>, MailError> {
        p.authorize(Scope::PaymentLinksWrite)?;
        let route = format!("payment-links/{uid}/send-request-email");
        self.k
            .keyed(&p.idempotency_credential(), &route, call, |sealing| {
                self.queue_request_email(p, uid, email, sealing)
            })
    }

    fn queue_request_email(
        &self,
        p: &Principal,
        uid: &LinkUid,
        email: Option<String>,
        sealing: Option<&Sealing<'_, String>>,
    ) -> Result<String, MailError> {
        let link = self.links.visible_link::<MailError>(p, uid)?;
        let to = match (email, &link.payload.customer_email) {
            (Some(given), _) => parse_recipient("email", &given)?,
            (None, Some(stored)) => parse_recipient("email", stored)?,
            (None, None) => return Err(MissingEmail.into()),
        };
        let now = self.links.link_now(&link)?;
        check_link_accepts_requests(&link, now)?;
        // Mails leave to outside addresses: a link, and a recipient, get only so many.
        self.k.throttle::<MailError>(
            &format!("request-email|link|{}", link.id),
            &self.k.limits.request_email_per_link,
        )?;
        self.count_for_recipient::<MailError>(&to)?;
        let base = self.tenancy.pay_base(link.company_id)?;
        let rendered = render_payment_request(&link, &link.public_url(&base));
        let mail = OutgoingMail {
            id: MailId(self.k.crypto.new_uuid()),
            company_id: link.company_id,
            link_id: link.id,
            link_uid: link.uid.clone(),
            kind: MailKind::PaymentRequest,
            to,
            subject: rendered.subject,
            text_body: rendered.text,
            html_body: rendered.html,
            status: MailStatus::Pending,
            attempts: 0,
            next_attempt_at: Some(now),
            last_attempt_at: None,
            last_error: None,
            created_at: now,
            sent_at: None,
        };
        let completion = keyed::completion(sealing, &mail.to)?;
        if !self.store.insert_mail(&mail, completion.as_ref())? {
            return Err(keyed::claim_lost().into());
        }
        Ok(mail.to)
    }

    /// Counts one mail to `to` against the one per-recipient cap of every kind of mail
    /// (`RateLimits::mail_per_recipient`, real time: a moved test clock gives no new day).
    fn count_for_recipient<E: From<Fault> + From<RateLimited>>(&self, to: &str) -> Result<(), E> {
        self.k.throttle::<E>(
            &format!("mail|to|{}", to.to_ascii_lowercase()),
            &self.k.limits.mail_per_recipient,
        )
    }

    /// Queues a mail another use case rendered (a subscription reminder) about `link`, due at
    /// `now` on the company's clock. Nothing is sent here. `None` when the recipient reached
    /// the per-recipient cap: the mail is dropped (a reminder is news of the moment, not a
    /// debt; the invoice stays in the portal and the payment link).
    pub(crate) fn queue(
        &self,
        link: &crate::links::PaymentLink,
        kind: MailKind,
        to: String,
        rendered: crate::mail::RenderedMail,
        now: Timestamp,
    ) -> PortResult<Option<OutgoingMail>> {
        match self.count_for_recipient::<CapError>(&to) {
            Ok(()) => {}
            Err(CapError::Reached) => return Ok(None),
            Err(CapError::Fault(f)) => return Err(f),
        }
        let mail = OutgoingMail {
            id: MailId(self.k.crypto.new_uuid()),
            company_id: link.company_id,
            link_id: link.id,
            link_uid: link.uid.clone(),
            kind,
            to,
            subject: rendered.subject,
            text_body: rendered.text,
            html_body: rendered.html,
            status: MailStatus::Pending,
            attempts: 0,
            next_attempt_at: Some(now),
            last_attempt_at: None,
            last_error: None,
            created_at: now,
            sent_at: None,
        };
        self.store.insert_mail(&mail, None)?;
        Ok(Some(mail))
    }

    /// Mailer step 1: claims up to `limit` due mails for `CLAIM_LEASE`.
    pub fn claim_due_mails(&self, limit: usize) -> PortResult<Vec<OutgoingMail>> {
        let now = self.k.now();
        self.store
            .claim_due_mails(now, now.plus(CLAIM_LEASE), limit)
    }

    /// Mailer step 2: records what the transport did with a claimed mail and moves it per the
    /// retry policy. `None` when the claim was stale (another mailer recorded this attempt
    /// first): nothing is written then. Errors are kept with the address masked.
    pub fn record_mail_outcome(
        &self,
        mail: &OutgoingMail,
        outcome: SendOutcome,
    ) -> PortResult<Option<AfterMailAttempt>> {
        // The retry falls due on the company's clock.
        let now = self.tenancy.company_now(mail.company_id)?;
        let number = mail.attempts + 1;
        let outcome = match outcome {
            SendOutcome::Sent => SendOutcome::Sent,
            SendOutcome::Transient(e) => SendOutcome::Transient(redact_error(&e, &mail.to)),
            SendOutcome::Permanent(e) => SendOutcome::Permanent(redact_error(&e, &mail.to)),
        };
        let after = after_attempt(mail.status, number, &outcome, now)?;
        let recorded = self
            .store
            .record_mail_attempt(mail.id, number, now, &after)?;
        Ok(recorded.then_some(after))
    }

    /// Without a transport: pending mails after `after` (id order), for the mailer to report
    /// each once. Nothing is claimed, so a mailer with a transport sends them at once.
    pub fn pending_mails_after(
        &self,
        after: Option<MailId>,
        limit: usize,
    ) -> PortResult<Vec<OutgoingMail>> {
        self.store.pending_mails_after(after, limit)
    }
}

/// The cap's two outcomes for a mail no caller waits on.
enum CapError {
    Reached,
    Fault(Fault),
}

impl From<RateLimited> for CapError {
    fn from(_: RateLimited) -> Self {
        CapError::Reached
    }
}

impl From<Fault> for CapError {
    fn from(f: Fault) -> Self {
        CapError::Fault(f)
    }
}
