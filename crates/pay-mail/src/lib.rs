//! The e-mail adapter: turns an outbox mail into a MIME message (`multipart/alternative`, a
//! `text/plain` and a `text/html` part) and hands it to an SMTP server through lettre's async
//! tokio transport. TLS is rustls with the ring provider and the webpki roots, as for webhooks.
//! It knows the domain only; the server's mailer claims, calls `send` and records the outcome.

use std::fmt;
use std::time::Duration;

use lettre::message::{Mailbox, MultiPart};
use lettre::transport::smtp::AsyncSmtpTransport;
use lettre::{AsyncTransport, Message, Tokio1Executor};
use pay_domain::mail::{OutgoingMail, SendOutcome, SEND_TIMEOUT};

/// A configuration value the adapter cannot use. Messages never contain a password.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MailConfigError {
    #[error("PAY_SMTP_URL: {0}")]
    SmtpUrl(String),
    #[error("PAY_MAIL_FROM: {0}")]
    From(String),
}

/// What an SMTP URL says, without its credentials (for logs and checks).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SmtpEndpoint {
    /// `smtp`, `smtp+starttls` (`?tls=required`), `smtp+opportunistic` or `smtps`.
    pub security: &'static str,
    pub host: String,
    /// The port the URL gives, if any (lettre picks the scheme's default otherwise).
    pub port: Option<u16>,
    pub has_credentials: bool,
    /// The host is a loopback address or `localhost`.
    pub loopback: bool,
}

impl SmtpEndpoint {
    /// Whether the connection is plain text from the first byte to the last.
    pub fn is_plain(&self) -> bool {
        self.security == "smtp"
    }
}

impl fmt::Display for SmtpEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://{}", self.security, self.host)?;
        if let Some(p) = self.port {
            write!(f, ":{p}")?;
        }
        Ok(())
    }
}

/// Checks `PAY_SMTP_URL`: `smtp://host[:port]` (plain, for a local relay or tests),
/// `smtp://host[:port]?tls=required` (STARTTLS, refused when the server does not offer it),
/// `smtp://…?tls=opportunistic`, or `smtps://host[:port]` (TLS from the start); credentials as
/// `user:password@`. Credentials over a plain connection are refused unless the host is a
/// loopback address: they would cross the network in clear.
pub fn parse_smtp_url(raw: &str) -> Result<SmtpEndpoint, MailConfigError> {
    let bad = |why: &str| Err(MailConfigError::SmtpUrl(why.to_owned()));
    // The url crate's messages never echo the input, so no password reaches the error.
    let url = match url::Url::parse(raw) {
        Ok(u) => u,
        Err(e) => return bad(&format!("not a URL ({e})")),
    };
    let tls = url
        .query_pairs()
        .find(|(k, _)| k == "tls")
        .map(|(_, v)| v.into_owned());
    let security = match (url.scheme(), tls.as_deref()) {
        ("smtp", None) => "smtp",
        ("smtp", Some("required")) => "smtp+starttls",
        ("smtp", Some("opportunistic")) => "smtp+opportunistic",
        ("smtps", None | Some("required")) => "smtps",
        ("smtp" | "smtps", Some(_)) => return bad("tls must be required or opportunistic"),
        _ => return bad("the scheme must be smtp or smtps"),
    };
    let loopback = match url.host() {
        // `smtp` is not a scheme the URL standard knows, so an IPv4 literal stays a "domain".
        Some(url::Host::Domain(d)) => {
            d.eq_ignore_ascii_case("localhost")
                || d.parse::<std::net::IpAddr>()
                    .is_ok_and(|ip| ip.is_loopback())
        }
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => return bad("no host"),
    };
    let host = url.host_str().unwrap_or_default().to_owned();
    if host.is_empty() {
        return bad("no host");
    }
    let has_credentials = !url.username().is_empty() || url.password().is_some();
    let endpoint = SmtpEndpoint {
        security,
        host,
        port: url.port(),
        has_credentials,
        loopback,
    };
    if endpoint.has_credentials && endpoint.is_plain() && !endpoint.loopback {
        return bad(
            "credentials over a plain connection to a remote host; use smtps:// or ?tls=required",
        );
    }
    Ok(endpoint)
}

/// Checks `PAY_MAIL_FROM`: an address, optionally with a display name (`Shop <pay@shop.example>`).
pub fn parse_from(raw: &str) -> Result<Mailbox, MailConfigError> {
    raw.trim()
        .parse::<Mailbox>()
        .map_err(|e| MailConfigError::From(format!("not a mailbox ({e})")))
}

/// Sends outbox mails to one SMTP server. Cheap to clone (connections are pooled).
#[derive(Clone)]
pub struct SmtpMailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
    endpoint: SmtpEndpoint,
}

// The URL may carry a password: show where, never how.
impl fmt::Debug for SmtpMailer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SmtpMailer")
            .field("endpoint", &self.endpoint.to_string())
            .field("from", &self.from.to_string())
            .finish_non_exhaustive()
    }
}

impl SmtpMailer {
    /// A mailer for `smtp_url` (see `parse_smtp_url`) sending as `from`. Connects lazily: a
    /// server that is down shows as failed attempts, not as a start-up error.
    pub fn new(smtp_url: &str, from: &str) -> Result<SmtpMailer, MailConfigError> {
        let endpoint = parse_smtp_url(smtp_url)?;
        let from = parse_from(from)?;
        let timeout = Duration::from_millis(SEND_TIMEOUT.whole_milliseconds() as u64);
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(smtp_url)
            .map_err(|e| MailConfigError::SmtpUrl(e.to_string()))?
            .timeout(Some(timeout))
            .build();
        Ok(SmtpMailer {
            transport,
            from,
            endpoint,
        })
    }

    pub fn endpoint(&self) -> &SmtpEndpoint {
        &self.endpoint
    }

    pub fn from_mailbox(&self) -> &Mailbox {
        &self.from
    }

    /// The MIME message of a mail: From, To, Subject, a Message-ID derived from the mail id
    /// (a resend after a lost acknowledgement carries the same id, so receivers can drop the
    /// copy), and the plain-text and HTML bodies as alternatives. An error says why, without
    /// the address.
    pub fn message(&self, mail: &OutgoingMail) -> Result<Message, String> {
        let to: Mailbox = mail
            .to
            .parse()
            .map_err(|e| format!("the recipient address is not usable ({e})"))?;
        Message::builder()
            .from(self.from.clone())
            .to(to)
            .subject(mail.subject.clone())
            .message_id(Some(format!("<{}@{}>", mail.id, self.from.email.domain())))
            .multipart(MultiPart::alternative_plain_html(
                mail.text_body.clone(),
                mail.html_body.clone(),
            ))
            .map_err(|e| format!("cannot build the message ({e})"))
    }

    /// One attempt: accepted (`Sent`), refused with a 5xx answer or unbuildable
    /// (`Permanent`), or anything else, a 4xx answer, a connection, TLS or protocol failure or
    /// the time limit (`Transient`). Never longer than `SEND_TIMEOUT`.
    pub async fn send(&self, mail: &OutgoingMail) -> SendOutcome {
        let message = match self.message(mail) {
            Ok(m) => m,
            Err(e) => return SendOutcome::Permanent(e),
        };
        let limit = Duration::from_millis(SEND_TIMEOUT.whole_milliseconds() as u64);
        match tokio::time::timeout(limit, self.transport.send(message)).await {
            Ok(Ok(_)) => SendOutcome::Sent,
            Ok(Err(e)) if e.is_permanent() => SendOutcome::Permanent(describe(&e)),
            Ok(Err(e)) => SendOutcome::Transient(describe(&e)),
            Err(_) => SendOutcome::Transient(format!(
                "no answer from {} within {} s",
                self.endpoint,
                limit.as_secs()
            )),
        }
    }
}

/// The error with its causes, one line.
fn describe(e: &lettre::transport::smtp::Error) -> String {
    let mut s = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        let c = cause.to_string();
        if !s.contains(&c) {
            s.push_str(": ");
            s.push_str(&c);
        }
        source = cause.source();
    }
    s.replace(['\r', '\n'], " ")
}

#[cfg(test)]
mod tests;
