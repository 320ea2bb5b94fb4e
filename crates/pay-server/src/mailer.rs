//! The mail outbox's worker: claims due mails, sends each through SMTP (`pay-mail`), records
//! the outcome (the domain's retry policy decides what comes next). Store calls run on the
//! blocking pool. Any number of mailers (`serve` instances, `pay-server worker`s) can run
//! against one database: claims never overlap, and a mailer that dies mid-send leaves its claim
//! to expire, so the mail is tried again (at least once, with the same Message-ID).
//!
//! Without `PAY_SMTP_URL` nothing is sent: mails stay pending in the outbox, and the mailer
//! logs one line per queued mail (its id and link, never the address or the text). A restart
//! with SMTP configured sends them at once.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use pay_domain::app::Pay;
use pay_domain::mail::{MailId, MailStatus, OutgoingMail, SendOutcome};
use pay_http::edge::metrics::Counters;
use pay_mail::SmtpMailer;

use crate::Config;

/// Mails claimed per round.
pub const BATCH: usize = 16;
/// Sends in flight at once per mailer (each on its own SMTP connection).
pub const CONCURRENCY: usize = 4;
/// Wait between rounds when nothing was due.
pub const IDLE_POLL: Duration = Duration::from_millis(500);

/// One mailer.
#[derive(Clone)]
pub struct Mailer {
    pay: Pay,
    smtp: Option<Arc<SmtpMailer>>,
    counters: Counters,
    /// Without SMTP: the last pending mail reported, so each is logged once per process.
    reported: Arc<Mutex<Option<MailId>>>,
}

impl std::fmt::Debug for Mailer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mailer")
            .field("smtp", &self.smtp)
            .finish_non_exhaustive()
    }
}

impl Mailer {
    /// A mailer sending through `smtp`, or only reporting queued mails without one.
    pub fn new(pay: Pay, smtp: Option<SmtpMailer>) -> Mailer {
        Mailer {
            pay,
            smtp: smtp.map(Arc::new),
            counters: Counters::default(),
            reported: Arc::default(),
        }
    }

    /// Counts its attempts in `counters` (those `GET /metrics` shows).
    pub fn with_counters(mut self, counters: Counters) -> Mailer {
        self.counters = counters;
        self
    }

    /// The mailer `PAY_SMTP_URL` and `PAY_MAIL_FROM` describe.
    pub fn from_config(config: &Config, pay: Pay) -> anyhow::Result<Mailer> {
        let smtp = match &config.smtp_url {
            None => None,
            Some(url) => Some(
                SmtpMailer::new(url.expose(), &config.mail_from)
                    .map_err(|e| anyhow::anyhow!("{e}"))?,
            ),
        };
        Ok(Mailer::new(pay, smtp))
    }

    /// Whether this mailer sends (SMTP is configured).
    pub fn sends(&self) -> bool {
        self.smtp.is_some()
    }

    /// One round; returns how many mails it handled (sent or tried, or, without SMTP,
    /// reported).
    pub async fn run_once(&self) -> anyhow::Result<usize> {
        match &self.smtp {
            Some(smtp) => self.send_round(smtp).await,
            None => self.report_round().await,
        }
    }

    async fn send_round(&self, smtp: &SmtpMailer) -> anyhow::Result<usize> {
        let pay = self.pay.clone();
        let claimed = tokio::task::spawn_blocking(move || pay.mail().claim_due_mails(BATCH))
            .await?
            .map_err(|e| anyhow::anyhow!("claiming mails: {e}"))?;
        let n = claimed.len();
        if n == 0 {
            return Ok(0);
        }
        let outcomes: Vec<(OutgoingMail, SendOutcome)> = futures_util::stream::iter(claimed)
            .map(|mail| async move {
                let outcome = smtp.send(&mail).await;
                (mail, outcome)
            })
            .buffer_unordered(CONCURRENCY)
            .collect()
            .await;
        let pay = self.pay.clone();
        let counters = self.counters.clone();
        tokio::task::spawn_blocking(move || {
            for (mail, outcome) in outcomes {
                record(&pay, &counters, &mail, outcome);
            }
        })
        .await?;
        Ok(n)
    }

    async fn report_round(&self) -> anyhow::Result<usize> {
        let after = *self.reported.lock().unwrap_or_else(|p| p.into_inner());
        let pay = self.pay.clone();
        let pending =
            tokio::task::spawn_blocking(move || pay.mail().pending_mails_after(after, BATCH))
                .await?
                .map_err(|e| anyhow::anyhow!("reading queued mails: {e}"))?;
        for m in &pending {
            tracing::info!(
                mail_id = %m.id,
                link_uid = %m.link_uid,
                "mail queued in the outbox, not sent: PAY_SMTP_URL is not set"
            );
        }
        if let Some(last) = pending.last() {
            *self.reported.lock().unwrap_or_else(|p| p.into_inner()) = Some(last.id);
        }
        Ok(pending.len())
    }

    /// Runs rounds until nothing is due (or, without SMTP, nothing new is queued); returns how
    /// many mails were handled.
    pub async fn drain(&self) -> anyhow::Result<usize> {
        let mut total = 0;
        loop {
            let n = self.run_once().await?;
            if n == 0 {
                return Ok(total);
            }
            total += n;
        }
    }

    /// Runs until the process stops.
    pub async fn run(self) {
        match &self.smtp {
            Some(smtp) => {
                let endpoint = smtp.endpoint();
                tracing::info!(smtp = %endpoint, from = %smtp.from_mailbox(), "mailer running");
                if endpoint.is_plain() && !endpoint.loopback {
                    tracing::warn!(
                        smtp = %endpoint,
                        "PAY_SMTP_URL is plain text to a remote host; use smtps:// or ?tls=required"
                    );
                }
                if smtp.from_mailbox().email.domain() == "localhost" {
                    tracing::warn!(
                        "PAY_MAIL_FROM is not set; mail servers may refuse mails from @localhost"
                    );
                }
            }
            None => tracing::info!(
                "mailer running without PAY_SMTP_URL: mails stay in the outbox and are logged"
            ),
        }
        loop {
            match self.run_once().await {
                Ok(0) => tokio::time::sleep(IDLE_POLL).await,
                Ok(_) => {}
                Err(e) => {
                    tracing::error!(error = %format!("{e:#}"), "mailer round failed");
                    tokio::time::sleep(IDLE_POLL).await;
                }
            }
        }
    }
}

/// Records one outcome, counts it by the mail's status after it, and logs it by mail id and
/// link (the error is already masked). An attempt not recorded (a stale claim, a store error)
/// is not counted: the mail is tried again.
fn record(pay: &Pay, counters: &Counters, mail: &OutgoingMail, outcome: SendOutcome) {
    let attempt = mail.attempts + 1;
    match pay.mail().record_mail_outcome(mail, outcome) {
        Ok(Some(after)) => {
            counters.mail_attempt(after.status);
            match after.status {
                MailStatus::Sent => tracing::info!(
                    mail_id = %mail.id,
                    link_uid = %mail.link_uid,
                    attempt,
                    "mail sent"
                ),
                MailStatus::Pending => tracing::warn!(
                    mail_id = %mail.id,
                    link_uid = %mail.link_uid,
                    attempt,
                    next_attempt_at = %after.next_attempt_at.map(|t| t.to_string()).unwrap_or_default(),
                    error = after.last_error.as_deref().unwrap_or(""),
                    "mail not sent; will retry"
                ),
                MailStatus::Failed => tracing::error!(
                    mail_id = %mail.id,
                    link_uid = %mail.link_uid,
                    attempt,
                    error = after.last_error.as_deref().unwrap_or(""),
                    "mail failed; no more attempts"
                ),
            }
        }
        // Another mailer recorded this attempt first (this claim's lease ran out).
        Ok(None) => tracing::warn!(mail_id = %mail.id, attempt, "mail attempt on a stale claim"),
        // The claim expires and the mail is tried again.
        Err(e) => {
            tracing::warn!(mail_id = %mail.id, error = %pay_domain::kernel::error::chain(&e), "could not record a mail attempt")
        }
    }
}
