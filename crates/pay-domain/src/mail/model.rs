//! Outgoing e-mail through a durable outbox: the mail record, its status machine and retry
//! policy, the claim lease, the rendering of a payment request, the recipient rule and the
//! `MailStore` port. Nothing here sends: a use case inserts a rendered mail, and a worker (the
//! server's mailer) claims due mails, hands them to a transport adapter and records each outcome.

use crate::outbox::{self, Ended, Next, Schedule};
use std::fmt;

use time::Duration;

use crate::kernel::error::{DomainError, DomainResult};
use crate::kernel::ids::{CompanyId, LinkUid, PaymentLinkId};
use crate::kernel::timestamp::Timestamp;
use crate::links::{LinkStatus, PaymentLink};

/// The first attempt plus up to seven retries.
pub const MAX_ATTEMPTS: u32 = 8;
/// The wait after failed attempt `n` (index `n - 1`) before attempt `n + 1`: growing, so a
/// short outage of the mail server costs minutes and a long one is ridden out for about eight
/// hours (the sum) before the mail is given up.
pub const RETRY_DELAYS: [Duration; (MAX_ATTEMPTS - 1) as usize] = [
    Duration::minutes(1),
    Duration::minutes(5),
    Duration::minutes(15),
    Duration::minutes(30),
    Duration::hours(1),
    Duration::hours(2),
    Duration::hours(4),
];
/// The retry schedule of mails (the outbox's rule).
pub const SCHEDULE: Schedule = Schedule::Delays(&RETRY_DELAYS);
/// How long a claimed mail stays invisible to other mailers. A mailer that dies mid-send
/// releases it by letting the lease run out, and the mail is tried again (at least once).
pub const CLAIM_LEASE: Duration = Duration::minutes(2);
/// How long sent and failed mails are kept (the merchant's record of requests sent), then
/// deleted with their personal data.
pub const MAIL_RETENTION: Duration = Duration::days(30);
/// How long a transport may spend on one mail; well inside the lease, so a slow server does
/// not let a second mailer claim the mail while the first is still sending it.
pub const SEND_TIMEOUT: Duration = Duration::seconds(30);
/// Most characters of a transport error kept on the row.
pub const MAX_ERROR_CHARS: usize = 500;
/// Most characters of an address (RFC 5321's path limit less the brackets).
pub const MAX_EMAIL_LEN: usize = 254;
/// Most characters of the part before `@` (RFC 5321).
pub const MAX_LOCAL_LEN: usize = 64;

/// Identifier of an outgoing mail (a UUID v7, so ids sort by creation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MailId(pub uuid::Uuid);

impl MailId {
    /// Parses the canonical hyphenated form.
    pub fn parse(s: &str) -> Option<MailId> {
        if s.len() != 36 {
            return None;
        }
        uuid::Uuid::try_parse(s).ok().map(MailId)
    }
}

impl fmt::Display for MailId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.hyphenated().fmt(f)
    }
}

/// Where a mail is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MailStatus {
    /// Waiting for its next attempt (the first, or a retry).
    Pending,
    /// Accepted by the mail server.
    Sent,
    /// Refused for good, or every attempt failed.
    Failed,
}

impl MailStatus {
    pub const ALL: [MailStatus; 3] = [MailStatus::Pending, MailStatus::Sent, MailStatus::Failed];

    pub fn as_str(self) -> &'static str {
        match self {
            MailStatus::Pending => "pending",
            MailStatus::Sent => "sent",
            MailStatus::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<MailStatus> {
        MailStatus::ALL.into_iter().find(|x| x.as_str() == s)
    }

    pub fn is_terminal(self) -> bool {
        matches!(self, MailStatus::Sent | MailStatus::Failed)
    }
}

impl fmt::Display for MailStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a mail exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MailKind {
    /// `send-request-email`: a payment link sent to a customer.
    PaymentRequest,
}

impl MailKind {
    pub fn as_str(self) -> &'static str {
        match self {
            MailKind::PaymentRequest => "payment_request",
        }
    }

    pub fn parse(s: &str) -> Option<MailKind> {
        match s {
            "payment_request" => Some(MailKind::PaymentRequest),
            _ => None,
        }
    }
}

/// A mail as the outbox keeps it: what to send and how far sending got.
#[derive(Clone, PartialEq, Eq)]
pub struct OutgoingMail {
    pub id: MailId,
    pub company_id: CompanyId,
    pub link_id: PaymentLinkId,
    pub link_uid: LinkUid,
    pub kind: MailKind,
    /// The recipient's address (personal data: never logged).
    pub to: String,
    pub subject: String,
    pub text_body: String,
    pub html_body: String,
    pub status: MailStatus,
    /// Attempts made so far.
    pub attempts: u32,
    /// When it is due (service clock); `None` once terminal.
    pub next_attempt_at: Option<Timestamp>,
    pub last_attempt_at: Option<Timestamp>,
    /// The last transport error, with the recipient's address masked.
    pub last_error: Option<String>,
    pub created_at: Timestamp,
    pub sent_at: Option<Timestamp>,
}

impl fmt::Debug for OutgoingMail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Address and bodies are the customer's data; the log needs only the identity.
        f.debug_struct("OutgoingMail")
            .field("id", &self.id)
            .field("link_uid", &self.link_uid)
            .field("kind", &self.kind)
            .field("status", &self.status)
            .field("attempts", &self.attempts)
            .finish_non_exhaustive()
    }
}

/// What one attempt to hand a mail to the mail server came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SendOutcome {
    /// The server accepted it.
    Sent,
    /// Worth another try: connection, TLS or timeout trouble, or a 4xx answer.
    Transient(String),
    /// Retrying cannot help: a 5xx answer, or a message the transport cannot build.
    Permanent(String),
}

/// The state after an attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AfterMailAttempt {
    pub status: MailStatus,
    pub next_attempt_at: Option<Timestamp>,
    pub last_error: Option<String>,
    pub sent_at: Option<Timestamp>,
}

/// The wait after failed attempt `attempt` (1-based); `None` when it was the last one.
pub fn retry_delay(attempt: u32) -> Option<Duration> {
    if attempt == 0 {
        return None;
    }
    RETRY_DELAYS.get(attempt as usize - 1).copied()
}

/// The moves the status machine makes: a pending mail is retried, sent or given up; nothing
/// leaves a terminal status.
pub fn can_move(from: MailStatus, to: MailStatus) -> bool {
    use MailStatus::*;
    match (from, to) {
        (Pending, Pending) | (Pending, Sent) | (Pending, Failed) => true,
        (Sent, _) | (Failed, _) => false,
    }
}

/// The one transition function. `attempt` is the number of the attempt just made (1-based).
/// Acceptance ends it as sent; a permanent refusal ends it as failed at once; a transient
/// failure schedules the next attempt after `retry_delay(attempt)` until `MAX_ATTEMPTS` were
/// made. A terminal mail takes no more attempts.
pub fn after_attempt(
    current: MailStatus,
    attempt: u32,
    outcome: &SendOutcome,
    now: Timestamp,
) -> DomainResult<AfterMailAttempt> {
    if current.is_terminal() {
        return Err(DomainError::Internal(format!(
            "mail is {current}; no more attempts"
        )));
    }
    let (ended, error) = match outcome {
        SendOutcome::Sent => (Ended::Succeeded, None),
        SendOutcome::Permanent(e) => (Ended::Refused, Some(e.clone())),
        SendOutcome::Transient(e) => (Ended::Failed { retry_after: None }, Some(e.clone())),
    };
    Ok(match outbox::next(&SCHEDULE, attempt, ended, now)? {
        Next::Succeeded => AfterMailAttempt {
            status: MailStatus::Sent,
            next_attempt_at: None,
            last_error: None,
            sent_at: Some(now),
        },
        Next::GaveUp => AfterMailAttempt {
            status: MailStatus::Failed,
            next_attempt_at: None,
            last_error: error,
            sent_at: None,
        },
        Next::RetryAt(at) => AfterMailAttempt {
            status: MailStatus::Pending,
            next_attempt_at: Some(at),
            last_error: error,
            sent_at: None,
        },
    })
}

/// A transport error as the row keeps it: the recipient's address masked (SMTP servers quote
/// it in refusals, and rows and logs must not carry it), at most `MAX_ERROR_CHARS`.
pub fn redact_error(error: &str, address: &str) -> String {
    let masked = if address.is_empty() {
        error.to_owned()
    } else if address.is_ascii() {
        replace_ascii_case_insensitive(error, address, "<recipient>")
    } else {
        error.replace(address, "<recipient>")
    };
    match masked.char_indices().nth(MAX_ERROR_CHARS) {
        Some((end, _)) => masked[..end].to_owned(),
        None => masked,
    }
}

/// `needle` is ASCII, so a match starts and ends on character boundaries of `haystack`.
fn replace_ascii_case_insensitive(haystack: &str, needle: &str, with: &str) -> String {
    let (h, n) = (haystack.as_bytes(), needle.as_bytes());
    let mut out = String::with_capacity(haystack.len());
    let (mut i, mut copied) = (0, 0);
    while i + n.len() <= h.len() {
        if h[i..i + n.len()].eq_ignore_ascii_case(n) {
            out.push_str(&haystack[copied..i]);
            out.push_str(with);
            i += n.len();
            copied = i;
        } else {
            i += 1;
        }
    }
    out.push_str(&haystack[copied..]);
    out
}

/// The recipient rule: trimmed, at most 254 characters, one `@`, a local part of at most 64
/// characters from RFC 5322's dot-atom (no quoted forms, no comments), and a domain of at least
/// two dot-separated labels of letters, digits and inner hyphens (international letters
/// allowed). Nothing that could break out of a header (spaces, controls, `<>,;:"()[]\`)
/// passes. Returns the address with its domain in lower case.
pub fn parse_recipient(field: &str, raw: &str) -> DomainResult<String> {
    let bad = || {
        Err(DomainError::validation(
            field,
            format!("{field} must be an e-mail address"),
        ))
    };
    let value = raw.trim();
    if value.is_empty() || value.chars().count() > MAX_EMAIL_LEN {
        return bad();
    }
    let Some((local, domain)) = value.rsplit_once('@') else {
        return bad();
    };
    let atext = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-/=?^_`{|}~".contains(c);
    let local_ok = !local.is_empty()
        && local.len() <= MAX_LOCAL_LEN
        && local
            .split('.')
            .all(|a| !a.is_empty() && a.chars().all(atext));
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.chars().count() <= 63
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.chars().all(|c| c == '-' || c.is_alphanumeric())
    };
    let labels: Vec<&str> = domain.split('.').collect();
    let domain_ok = labels.len() >= 2 && labels.iter().all(|l| label_ok(l));
    if !(local_ok && domain_ok) {
        return bad();
    }
    Ok(format!("{local}@{}", domain.to_lowercase()))
}

/// Whether a link may be sent to a customer now: active, and not past its expiry.
pub fn check_link_accepts_requests(link: &PaymentLink, now: Timestamp) -> DomainResult<()> {
    match link.status {
        LinkStatus::Active => {}
        other => {
            return Err(DomainError::LinkNotActive {
                state: other.as_str(),
            })
        }
    }
    if link.expires_at.is_some_and(|at| at <= now) {
        return Err(DomainError::LinkNotActive { state: "expired" });
    }
    Ok(())
}

/// A rendered mail: subject, plain text and HTML.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedMail {
    pub subject: String,
    pub text: String,
    pub html: String,
}

/// One line: every run of whitespace or control characters becomes one space (the subject is a
/// header; merchant text may hold newlines).
fn one_line(s: &str) -> String {
    s.split(|c: char| c.is_whitespace() || c.is_control())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The payment request for `link`, pointing at `public_url` (its hosted checkout page). Every
/// interpolated value is escaped in the HTML part, which loads nothing from outside (no
/// images, no styles sheets, no scripts): a customer's mail client fetches nothing.
pub fn render_payment_request(link: &PaymentLink, public_url: &str) -> RenderedMail {
    let p = &link.payload;
    let merchant = p
        .merchant_name
        .as_deref()
        .map(one_line)
        .filter(|m| !m.is_empty())
        .unwrap_or_else(|| "A merchant".to_owned());
    let unit = p.fiat_currency.as_deref().unwrap_or(&p.currency);
    let amount = format!("{} {}", p.amount, unit);
    let title = p.title.as_deref().map(one_line).filter(|t| !t.is_empty());
    let description = p
        .description
        .as_deref()
        .map(str::trim)
        .filter(|d| !d.is_empty());
    let order = p
        .order_id
        .as_deref()
        .map(one_line)
        .filter(|o| !o.is_empty());
    let expires = link.expires_at.map(|t| {
        let d = t.datetime();
        format!(
            "{:04}-{:02}-{:02} {:02}:{:02} UTC",
            d.year(),
            u8::from(d.month()),
            d.day(),
            d.hour(),
            d.minute()
        )
    });

    let subject = match &title {
        Some(t) => format!("Payment request from {merchant}: {t} ({amount})"),
        None => format!("Payment request from {merchant} ({amount})"),
    };

    let mut text = format!("Hello,\n\n{merchant} asks you to pay {amount}.\n\n");
    if let Some(t) = &title {
        text.push_str(&format!("{t}\n"));
    }
    if let Some(d) = description {
        text.push_str(&format!("{d}\n"));
    }
    if let Some(o) = &order {
        text.push_str(&format!("Order: {o}\n"));
    }
    text.push_str(&format!("Amount: {amount}\n\nPay here: {public_url}\n"));
    if let Some(e) = &expires {
        text.push_str(&format!("This link expires on {e}.\n"));
    }
    text.push_str("\nIf you did not expect this request, you can ignore this message.\n");

    let e = crate::kernel::html::escape;
    let mut details = String::new();
    if let Some(t) = &title {
        details.push_str(&format!(
            "<p style=\"margin:0 0 8px;font-size:18px;font-weight:bold\">{}</p>\n",
            e(t)
        ));
    }
    if let Some(d) = description {
        details.push_str(&format!(
            "<p style=\"margin:0 0 8px;white-space:pre-line\">{}</p>\n",
            e(d)
        ));
    }
    if let Some(o) = &order {
        details.push_str(&format!(
            "<p style=\"margin:0 0 8px\">Order: {}</p>\n",
            e(o)
        ));
    }
    let expiry = expires
        .as_deref()
        .map(|x| {
            format!(
                "<p style=\"margin:16px 0 0;color:#555\">This link expires on {}.</p>\n",
                e(x)
            )
        })
        .unwrap_or_default();
    let html = format!(
        "<!DOCTYPE html>\n<html>\n<head><meta charset=\"utf-8\"><title>{subject}</title></head>\n\
         <body style=\"font-family:sans-serif;color:#222;max-width:560px;margin:0 auto;padding:24px\">\n\
         <p>Hello,</p>\n<p>{merchant} asks you to pay <strong>{amount}</strong>.</p>\n\
         {details}<p style=\"margin:24px 0\"><a href=\"{url}\" style=\"background:#222;color:#fff;\
         padding:12px 20px;border-radius:6px;text-decoration:none\">Pay {amount}</a></p>\n\
         <p style=\"color:#555\">Or open this address: <a href=\"{url}\">{url}</a></p>\n{expiry}\
         <p style=\"color:#555\">If you did not expect this request, you can ignore this message.</p>\n\
         </body>\n</html>\n",
        subject = e(&subject),
        merchant = e(&merchant),
        amount = e(&amount),
        url = e(public_url),
    );
    RenderedMail {
        subject,
        text,
        html,
    }
}

/// The mail outbox.
pub trait MailStore {
    /// Inserts a new mail; its id MUST be unique, and its company and link MUST exist.
    fn insert_mail(&self, mail: &OutgoingMail) -> DomainResult<()>;
    /// Atomically claims up to `limit` pending mails due on their company's clock
    /// (`next_attempt_at <= now + that company's test-clock offset`) and not leased (a lease
    /// runs on real time: a moved clock MUST NOT end it), oldest due first, and leases them
    /// until `lease_until` (shown as their `next_attempt_at` meanwhile), so that no other
    /// claimer (another thread or instance) gets them before the lease ends; recording an
    /// attempt ends the lease. Concurrent claimers MUST NOT receive the same mail
    /// (PostgreSQL: `FOR UPDATE SKIP LOCKED`; SQLite: one writer). `now` is real time.
    fn claim_due_mails(
        &self,
        now: Timestamp,
        lease_until: Timestamp,
        limit: usize,
    ) -> DomainResult<Vec<OutgoingMail>>;
    /// Compare-and-set: records attempt `number` made at `at` only if the mail is still
    /// pending with `number - 1` attempts, setting `attempts = number`, `last_attempt_at = at`
    /// and status, `next_attempt_at`, `last_error` and `sent_at` from `after`, in one
    /// statement. Returns false, writing nothing, when the mail moved on (another mailer
    /// recorded this attempt first, or it is unknown or terminal).
    fn record_mail_attempt(
        &self,
        id: MailId,
        number: u32,
        at: Timestamp,
        after: &AfterMailAttempt,
    ) -> DomainResult<bool>;
    /// One mail, of any company (workers and tests; never for a caller-supplied id).
    fn mail(&self, id: MailId) -> DomainResult<Option<OutgoingMail>>;
    /// Deletes sent and failed mails created before `before` (they hold personal data: the
    /// recipient and the body); pending ones stay. Returns how many went.
    fn prune_mails(&self, before: Timestamp) -> DomainResult<u64>;
    /// The company's mails for one link, newest first.
    fn link_mails(&self, company: CompanyId, link: &LinkUid) -> DomainResult<Vec<OutgoingMail>>;
    /// Up to `limit` pending mails with an id greater than `after` (all when `None`), in id
    /// order (ids are time-ordered): what a mailer without a transport reports, once each.
    fn pending_mails_after(
        &self,
        after: Option<MailId>,
        limit: usize,
    ) -> DomainResult<Vec<OutgoingMail>>;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::links::{CreatedBy, ExpirationTime, PaymentLinkPayload};

    fn t(s: i64) -> Timestamp {
        Timestamp::from_unix_millis(s * 1000).unwrap()
    }

    fn transient() -> SendOutcome {
        SendOutcome::Transient("421 try later".into())
    }

    fn permanent() -> SendOutcome {
        SendOutcome::Permanent("550 no such user".into())
    }

    /// The expected result of an attempt, written as a table independent of the code above.
    fn expected(
        from: MailStatus,
        attempt: u32,
        outcome: &SendOutcome,
        now: Timestamp,
    ) -> Option<AfterMailAttempt> {
        use MailStatus::*;
        if from != Pending || !(1..=8).contains(&attempt) {
            return None;
        }
        let delays_min = [1, 5, 15, 30, 60, 120, 240];
        Some(match outcome {
            SendOutcome::Sent => AfterMailAttempt {
                status: Sent,
                next_attempt_at: None,
                last_error: None,
                sent_at: Some(now),
            },
            SendOutcome::Permanent(e) => AfterMailAttempt {
                status: Failed,
                next_attempt_at: None,
                last_error: Some(e.clone()),
                sent_at: None,
            },
            SendOutcome::Transient(e) if attempt == 8 => AfterMailAttempt {
                status: Failed,
                next_attempt_at: None,
                last_error: Some(e.clone()),
                sent_at: None,
            },
            SendOutcome::Transient(e) => AfterMailAttempt {
                status: Pending,
                next_attempt_at: Some(
                    now.plus(Duration::minutes(delays_min[attempt as usize - 1])),
                ),
                last_error: Some(e.clone()),
                sent_at: None,
            },
        })
    }

    #[test]
    fn every_move_of_the_table() {
        let now = t(1000);
        let mut made = std::collections::HashSet::new();
        for from in MailStatus::ALL {
            for attempt in 0..=MAX_ATTEMPTS + 1 {
                for outcome in [SendOutcome::Sent, transient(), permanent()] {
                    let got = after_attempt(from, attempt, &outcome, now).ok();
                    assert_eq!(
                        got,
                        expected(from, attempt, &outcome, now),
                        "{from} attempt {attempt} {outcome:?}"
                    );
                    if let Some(after) = got {
                        made.insert((from, after.status));
                    }
                }
            }
        }
        // Every move made is allowed, and every allowed move is made by some attempt.
        for from in MailStatus::ALL {
            for to in MailStatus::ALL {
                assert_eq!(
                    made.contains(&(from, to)),
                    can_move(from, to),
                    "{from} -> {to}"
                );
            }
        }
        let allowed: Vec<(MailStatus, MailStatus)> = MailStatus::ALL
            .into_iter()
            .flat_map(|f| MailStatus::ALL.into_iter().map(move |t| (f, t)))
            .filter(|(f, t)| can_move(*f, *t))
            .collect();
        use MailStatus::*;
        assert_eq!(
            allowed,
            vec![(Pending, Pending), (Pending, Sent), (Pending, Failed)]
        );
    }

    #[test]
    fn eight_attempts_over_about_eight_hours() {
        let mut status = MailStatus::Pending;
        let start = t(0);
        let mut now = start;
        let mut attempts = 0;
        while !status.is_terminal() {
            attempts += 1;
            let next = after_attempt(status, attempts, &transient(), now).unwrap();
            status = next.status;
            if let Some(at) = next.next_attempt_at {
                assert!(at > now);
                now = at;
            }
        }
        assert_eq!((attempts, status), (8, MailStatus::Failed));
        // 1 + 5 + 15 + 30 + 60 + 120 + 240 minutes.
        assert_eq!(now.unix_seconds() - start.unix_seconds(), 471 * 60);
        assert_eq!(retry_delay(0), None);
        assert_eq!(retry_delay(8), None);
        assert!(RETRY_DELAYS.windows(2).all(|w| w[0] < w[1]), "growing");
        assert!(SEND_TIMEOUT < CLAIM_LEASE);
    }

    #[test]
    fn names_round_trip() {
        for s in MailStatus::ALL {
            assert_eq!(MailStatus::parse(s.as_str()), Some(s));
        }
        assert_eq!(MailStatus::parse("retrying"), None);
        assert_eq!(
            MailKind::parse(MailKind::PaymentRequest.as_str()),
            Some(MailKind::PaymentRequest)
        );
        assert_eq!(MailKind::parse("x"), None);
        let id = MailId(uuid::Uuid::from_u128(7));
        assert_eq!(MailId::parse(&id.to_string()), Some(id));
        assert_eq!(MailId::parse("00000000000000000000000000000007"), None);
    }

    #[test]
    fn recipients() {
        for (raw, want) in [
            ("payer@example.com", "payer@example.com"),
            (
                "  Payer.Name+tag@Example.COM \n",
                "Payer.Name+tag@example.com",
            ),
            ("a@b.co", "a@b.co"),
            ("o'brien@shop-1.example.org", "o'brien@shop-1.example.org"),
            ("kunde@müller.example", "kunde@müller.example"),
        ] {
            assert_eq!(parse_recipient("email", raw).unwrap(), want, "{raw}");
        }
        let long_local = format!("{}@example.com", "a".repeat(65));
        let long_total = format!("a@{}.example", "b".repeat(250));
        for bad in [
            "",
            "   ",
            "plain",
            "@example.com",
            "a@",
            "a@localhost",
            "a@@example.com",
            "a b@example.com",
            "a@exa mple.com",
            "a@example..com",
            "a@.example.com",
            "a@example.com.",
            "a@-example.com",
            "a@example-.com",
            ".a@example.com",
            "a.@example.com",
            "a..b@example.com",
            "\"a\"@example.com",
            "a<b@example.com",
            "a@example.com>",
            "x@example.com,y@example.com",
            "a;b@example.com",
            "a@example.com\r\nBcc: x@evil.example",
            "a\u{0}@example.com",
            "a@[127.0.0.1]",
            "ü@example.com",
            long_local.as_str(),
            long_total.as_str(),
        ] {
            match parse_recipient("email", bad) {
                Err(DomainError::Validation { field, .. }) => assert_eq!(field, "email"),
                other => panic!("{bad:?} gave {other:?}"),
            }
        }
        // 254 characters pass, 255 do not.
        let address = |last: usize| {
            format!(
                "{}@{}.{}.{}",
                "a".repeat(64),
                "b".repeat(63),
                "c".repeat(63),
                "d".repeat(last)
            )
        };
        assert_eq!(address(61).len(), 254);
        assert!(parse_recipient("email", &address(61)).is_ok());
        assert!(parse_recipient("email", &address(62)).is_err());
    }

    #[test]
    fn errors_are_redacted_and_capped() {
        assert_eq!(
            redact_error(
                "550 5.1.1 <Payer@Example.com>: unknown; payer@example.com",
                "payer@example.com"
            ),
            "550 5.1.1 <<recipient>>: unknown; <recipient>"
        );
        assert_eq!(redact_error("é timeout", "x@y.example"), "é timeout");
        let long = "é".repeat(MAX_ERROR_CHARS + 10);
        assert_eq!(
            redact_error(&long, "x@y.example").chars().count(),
            MAX_ERROR_CHARS
        );
    }

    fn link(status: LinkStatus, expires_at: Option<Timestamp>) -> PaymentLink {
        PaymentLink {
            id: PaymentLinkId(uuid::Uuid::from_u128(1)),
            uid: LinkUid::parse("AbCdEfGhIjKlMnOpQrStUv").unwrap(),
            company_id: CompanyId(uuid::Uuid::from_u128(2)),
            status,
            payload: PaymentLinkPayload {
                title: Some("Order <42>\nrush".into()),
                description: Some("Two \"mugs\" & a <script>alert(1)</script>".into()),
                amount: "12.50".into(),
                fiat_currency: Some("USD".into()),
                currency: "USDC".into(),
                asset: "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913".into(),
                skip_quote_acceptance: None,
                fee_paid_by: None,
                order_id: Some("o-1'".into()),
                invoice_pdf_url: None,
                customer_email: Some("payer@example.com".into()),
                client_id: None,
                return_url: None,
                success_url: None,
                failure_url: None,
                expiration_time: ExpirationTime::H24,
                metadata: None,
                runtime_mode: "merchant_target_net_v2".into(),
                billing_version: "v2".into(),
                merchant_name: Some("Acme & Sons <Ltd>".into()),
                merchant_picture_url: Some("https://cdn.example/p.png".into()),
                merchant_logo_url: Some("https://cdn.example/logo.png".into()),
                merchant_payment_link_theme: None,
                settlement_address: None,
            },
            created_at: t(0),
            updated_at: t(0),
            expires_at,
            created_by: CreatedBy::Anonymous,
        }
    }

    #[test]
    fn only_active_unexpired_links_take_requests() {
        let now = t(1000);
        assert!(check_link_accepts_requests(&link(LinkStatus::Active, None), now).is_ok());
        assert!(check_link_accepts_requests(&link(LinkStatus::Active, Some(t(1001))), now).is_ok());
        for (l, state) in [
            (link(LinkStatus::Paused, None), "paused"),
            (link(LinkStatus::Archived, None), "archived"),
            (link(LinkStatus::Active, Some(t(1000))), "expired"),
            (link(LinkStatus::Active, Some(t(999))), "expired"),
            (link(LinkStatus::Paused, Some(t(999))), "paused"),
        ] {
            assert_eq!(
                check_link_accepts_requests(&l, now),
                Err(DomainError::LinkNotActive { state })
            );
        }
    }

    #[test]
    fn rendering_escapes_every_value_and_loads_nothing() {
        let url = "https://pay.example/pay/AbCdEfGhIjKlMnOpQrStUv?a=1&b=\"2\"";
        let m = render_payment_request(&link(LinkStatus::Active, Some(t(86_400))), url);
        assert_eq!(
            m.subject,
            "Payment request from Acme & Sons <Ltd>: Order <42> rush (12.50 USD)"
        );
        assert!(!m.subject.contains(['\n', '\r']));
        // Plain text: the values as they are.
        assert!(m
            .text
            .contains("Acme & Sons <Ltd> asks you to pay 12.50 USD."));
        assert!(m
            .text
            .contains("Two \"mugs\" & a <script>alert(1)</script>"));
        assert!(m.text.contains("Order: o-1'"));
        assert!(m.text.contains(&format!("Pay here: {url}\n")));
        assert!(m
            .text
            .contains("This link expires on 1970-01-02 00:00 UTC."));
        // HTML: escaped, no raw merchant markup, no outside resources.
        assert!(m
            .html
            .contains("Acme &amp; Sons &lt;Ltd&gt; asks you to pay"));
        assert!(m.html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(m.html.contains("Order: o-1&#39;"));
        assert!(m.html.contains(
            "href=\"https://pay.example/pay/AbCdEfGhIjKlMnOpQrStUv?a=1&amp;b=&quot;2&quot;\""
        ));
        assert!(!m.html.contains("<script"));
        assert!(!m.html.contains("<Ltd>"));
        for outside in ["<img", "src=", "cdn.example", "<link", "url("] {
            assert!(!m.html.contains(outside), "{outside}");
        }
    }

    #[test]
    fn rendering_without_optional_fields() {
        let mut l = link(LinkStatus::Active, None);
        l.payload.title = None;
        l.payload.description = None;
        l.payload.order_id = None;
        l.payload.fiat_currency = None;
        l.payload.merchant_name = None;
        let m = render_payment_request(&l, "https://pay.example/pay/x");
        assert_eq!(m.subject, "Payment request from A merchant (12.50 USDC)");
        assert!(!m.text.contains("Order:"));
        assert!(!m.text.contains("expires"));
        assert!(m.html.contains("Pay 12.50 USDC"));
    }

    #[test]
    fn debug_hides_address_and_bodies() {
        let mail = OutgoingMail {
            id: MailId(uuid::Uuid::from_u128(3)),
            company_id: CompanyId(uuid::Uuid::from_u128(2)),
            link_id: PaymentLinkId(uuid::Uuid::from_u128(1)),
            link_uid: LinkUid::parse("AbCdEfGhIjKlMnOpQrStUv").unwrap(),
            kind: MailKind::PaymentRequest,
            to: "payer@example.com".into(),
            subject: "secret subject".into(),
            text_body: "secret text".into(),
            html_body: "secret html".into(),
            status: MailStatus::Pending,
            attempts: 0,
            next_attempt_at: None,
            last_attempt_at: None,
            last_error: None,
            created_at: t(0),
            sent_at: None,
        };
        let d = format!("{mail:?}");
        assert!(d.contains("AbCdEfGhIjKlMnOpQrStUv"));
        for hidden in ["payer@", "secret"] {
            assert!(!d.contains(hidden), "{d}");
        }
    }
}
