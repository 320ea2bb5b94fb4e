//! Outgoing e-mail through a durable outbox: the mail record, its status machine and retry
//! policy, the claim lease, the rendering of a payment request, the recipient rule and the
//! `MailStore` port. Nothing here sends: a use case inserts a rendered mail, and a worker (the
//! server's mailer) claims due mails, hands them to a transport adapter and records each outcome.

use std::fmt;

use time::Duration;

use crate::kernel::ids::{CompanyId, LinkUid, PaymentLinkId};
use crate::kernel::timestamp::Timestamp;

/// The first attempt plus up to seven retries.
pub const MAX_ATTEMPTS: u32 = 8;
/// How long sent and failed mails are kept (the merchant's record of requests sent), then
/// deleted with their personal data.
pub const MAIL_RETENTION: Duration = Duration::days(30);
/// How long a transport may spend on one mail; well inside the lease, so a slow server does
/// not let a second mailer claim the mail while the first is still sending it.
pub const SEND_TIMEOUT: Duration = Duration::seconds(30);
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
    /// A subscription cycle's reminder (before due, on due, overdue), with its invoice link.
    SubscriptionReminder,
}

impl MailKind {
    pub fn as_str(self) -> &'static str {
        match self {
            MailKind::PaymentRequest => "payment_request",
            MailKind::SubscriptionReminder => "subscription_reminder",
        }
    }

    pub fn parse(s: &str) -> Option<MailKind> {
        match s {
            "payment_request" => Some(MailKind::PaymentRequest),
            "subscription_reminder" => Some(MailKind::SubscriptionReminder),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::error::FieldError;
    use crate::kernel::ids::{CompanyId, LinkUid, PaymentLinkId};
    use crate::links::LinkNotActive;
    use crate::links::{CreatedBy, ExpirationTime, PaymentLinkPayload};
    use crate::links::{LinkState, LinkStatus, PaymentLink};
    use crate::mail::*;

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
                Err(FieldError { field, .. }) => assert_eq!(field, "email"),
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
                amount: crate::kernel::amount::Amount::parse("12.50", 2).unwrap(),
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
            grant_subscription_id: None,
        }
    }

    #[test]
    fn only_active_unexpired_links_take_requests() {
        let now = t(1000);
        assert!(check_link_accepts_requests(&link(LinkStatus::Active, None), now).is_ok());
        assert!(check_link_accepts_requests(&link(LinkStatus::Active, Some(t(1001))), now).is_ok());
        for (l, state) in [
            (link(LinkStatus::Paused, None), LinkState::Paused),
            (link(LinkStatus::Archived, None), LinkState::Archived),
            (link(LinkStatus::Active, Some(t(1000))), LinkState::Expired),
            (link(LinkStatus::Active, Some(t(999))), LinkState::Expired),
            (link(LinkStatus::Paused, Some(t(999))), LinkState::Paused),
        ] {
            assert_eq!(
                check_link_accepts_requests(&l, now),
                Err(LinkNotActive { state })
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
    fn a_stored_bidi_control_is_neutralised_in_every_part() {
        let mut l = link(LinkStatus::Active, None);
        l.payload.title = Some("Invoice \u{202E}fdp.exe".into());
        l.payload.merchant_name = Some("Acme\u{2067}".into());
        let m = render_payment_request(&l, "https://pay.example/pay/x");
        for part in [&m.subject, &m.text, &m.html] {
            assert!(!part.contains(['\u{202E}', '\u{2067}']), "{part}");
            assert!(part.contains("Invoice \u{FFFD}fdp.exe"), "{part}");
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
