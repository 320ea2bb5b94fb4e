//! Sends one delivery attempt and reports what happened, never failing itself: every problem
//! becomes part of the `AttemptOutcome` the domain's retry policy judges. The outcome names a
//! failure in the delivery log's fixed words (`AttemptError`); the details (the address a name
//! resolved to, the connect error) go to the server log only.

use std::error::Error as StdError;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use pay_domain::webhooks::{
    AttemptError, AttemptOutcome, OutboundRequest, RESPONSE_EXCERPT_CHARS, RESPONSE_READ_LIMIT,
};
use pay_domain::{Fault, PortResult};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, RETRY_AFTER};
use reqwest::redirect::Policy;

use crate::ssrf::{parse_checked, GuardedResolver, RefusedTarget};

/// Spec: a receiver gets 5 s to accept the connection...
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// ...and 15 s for the whole exchange, response body included.
pub const TOTAL_TIMEOUT: Duration = Duration::from_secs(15);

/// How the transport behaves; `Default` is the production setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransportConfig {
    /// Development and tests only: allows http and loopback/private targets.
    pub allow_private: bool,
    pub connect_timeout: Duration,
    pub total_timeout: Duration,
}

impl Default for TransportConfig {
    fn default() -> Self {
        TransportConfig {
            allow_private: false,
            connect_timeout: CONNECT_TIMEOUT,
            total_timeout: TOTAL_TIMEOUT,
        }
    }
}

/// The webhook HTTP client. Cheap to clone; clones share one connection pool.
#[derive(Debug, Clone)]
pub struct HttpTransport {
    client: reqwest::Client,
    config: TransportConfig,
}

/// Why no answer came: the word for the delivery log and the details for the server log.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Failure {
    kind: AttemptError,
    /// Never the URL's path or query, a header value or the body (the signature, customer
    /// data); may name the host and the addresses it resolved to.
    detail: String,
}

impl Failure {
    fn new(kind: AttemptError, detail: impl Into<String>) -> Failure {
        Failure {
            kind,
            detail: detail.into(),
        }
    }
}

/// What came back when a response arrived.
struct Answer {
    status: u16,
    excerpt: Option<String>,
    retry_after: Option<time::Duration>,
}

impl HttpTransport {
    pub fn new(config: TransportConfig) -> PortResult<Self> {
        let client = reqwest::Client::builder()
            // A redirect would send the signed body somewhere the merchant never configured
            // (and past the URL check); the 3xx is reported as a failure instead.
            .redirect(Policy::none())
            // An environment proxy would resolve names itself, out of the guard's sight.
            .no_proxy()
            .dns_resolver(Arc::new(GuardedResolver {
                allow_private: config.allow_private,
            }))
            .https_only(!config.allow_private)
            .connect_timeout(config.connect_timeout)
            .timeout(config.total_timeout)
            .build()
            .map_err(|e| Fault::caused("webhook http client", e))?;
        Ok(HttpTransport { client, config })
    }

    pub fn config(&self) -> TransportConfig {
        self.config
    }

    /// One attempt: POSTs the body with exactly the request's headers. A failure is logged
    /// (`info`) with its details; the outcome carries only its word.
    pub async fn send(&self, req: &OutboundRequest) -> AttemptOutcome {
        let (outcome, detail) = self.send_with_detail(req).await;
        if let (Some(kind), Some(detail)) = (outcome.error, detail) {
            tracing::info!(
                delivery_id = %req.delivery_id,
                attempt = req.attempt,
                error = kind.as_str(),
                detail = %detail,
                "webhook attempt got no answer"
            );
        }
        outcome
    }

    async fn send_with_detail(&self, req: &OutboundRequest) -> (AttemptOutcome, Option<String>) {
        let started = Instant::now();
        let mut outcome = AttemptOutcome {
            status: None,
            duration_ms: 0,
            error: None,
            response_excerpt: None,
            retry_after: None,
        };
        let mut detail = None;
        match self.exchange(req, started).await {
            Ok(answer) => {
                outcome.status = Some(answer.status);
                outcome.response_excerpt = answer.excerpt;
                outcome.retry_after = answer.retry_after;
            }
            Err(failure) => {
                outcome.error = Some(failure.kind);
                detail = Some(failure.detail);
            }
        }
        outcome.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        (outcome, detail)
    }

    async fn exchange(&self, req: &OutboundRequest, started: Instant) -> Result<Answer, Failure> {
        let url = parse_checked(&req.url, self.config.allow_private).map_err(|why| {
            Failure::new(
                AttemptError::RefusedTarget,
                format!("refused target: {why}"),
            )
        })?;
        let mut headers = HeaderMap::with_capacity(req.headers.len());
        for (name, value) in &req.headers {
            let header = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
                Failure::new(
                    AttemptError::Internal,
                    format!("invalid header name {name:?}"),
                )
            })?;
            // The value may be the signature: name the header, never the value.
            let value = HeaderValue::from_str(value).map_err(|_| {
                Failure::new(
                    AttemptError::Internal,
                    format!("invalid value for header {name}"),
                )
            })?;
            headers.append(header, value);
        }
        let request = self
            .client
            .post(url)
            .headers(headers)
            .body(req.body.clone())
            .build()
            .map_err(|e| describe(&e))?;

        // reqwest enforces the total timeout too; this deadline also bounds the body reads
        // below whatever reqwest's internals do.
        let deadline = tokio::time::Instant::from_std(started + self.config.total_timeout);
        let mut response =
            match tokio::time::timeout_at(deadline, self.client.execute(request)).await {
                Err(_) => return Err(timed_out(self.config.total_timeout)),
                Ok(Err(e)) if e.is_timeout() && !e.is_connect() => {
                    return Err(timed_out(self.config.total_timeout))
                }
                Ok(Err(e)) => return Err(describe(&e)),
                Ok(Ok(r)) => r,
            };
        let status = response.status().as_u16();
        let retry_after = if status == 429 || status == 503 {
            response
                .headers()
                .get(RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| parse_retry_after(v, SystemTime::now()))
        } else {
            None
        };
        let mut body = Vec::new();
        while body.len() < RESPONSE_READ_LIMIT {
            match tokio::time::timeout_at(deadline, response.chunk()).await {
                Ok(Ok(Some(chunk))) => body.extend_from_slice(&chunk),
                // The status is the receiver's answer; a body that ends early, breaks or runs
                // past the deadline does not change it, so keep what arrived.
                _ => break,
            }
        }
        // Dropping the response closes the connection instead of draining a huge body.
        drop(response);
        body.truncate(RESPONSE_READ_LIMIT);
        let excerpt = (!body.is_empty()).then(|| {
            String::from_utf8_lossy(&body)
                .chars()
                .take(RESPONSE_EXCERPT_CHARS)
                .collect()
        });
        Ok(Answer {
            status,
            excerpt,
            retry_after,
        })
    }
}

fn timed_out(total: Duration) -> Failure {
    Failure::new(
        AttemptError::TimedOut,
        format!(
            "timeout: no complete answer within {} ms",
            total.as_millis()
        ),
    )
}

/// Classifies a reqwest failure. The detail is built from the error chain's kinds and its
/// innermost cause, never from reqwest's top-level message (it carries the URL) and never from
/// the request's headers or body (they carry the signature). A connect timeout is a failed
/// connection like a refused one: which of the two it was says whether something filters the
/// port, and that stays in the server log.
fn describe(e: &reqwest::Error) -> Failure {
    if let Some(refused) = find_in_chain::<RefusedTarget>(e) {
        return Failure::new(AttemptError::RefusedTarget, refused.to_string());
    }
    if let Some(tls) = find_in_chain::<rustls::Error>(e) {
        return Failure::new(AttemptError::TlsFailed, format!("tls error: {tls}"));
    }
    if e.is_timeout() {
        return if e.is_connect() {
            Failure::new(AttemptError::ConnectionFailed, "connect timeout")
        } else {
            Failure::new(AttemptError::TimedOut, "timeout")
        };
    }
    let cause = innermost(e);
    if e.is_connect() {
        Failure::new(
            AttemptError::ConnectionFailed,
            format!("connect error: {cause}"),
        )
    } else if e.is_builder() {
        Failure::new(AttemptError::Internal, format!("invalid request: {cause}"))
    } else {
        Failure::new(
            AttemptError::ConnectionFailed,
            format!("request error: {cause}"),
        )
    }
}

/// Walks `source()` and also looks inside `io::Error`s, whose `source()` skips the error they
/// wrap (TLS errors arrive that way).
fn find_in_chain<'a, T: StdError + 'static>(e: &'a (dyn StdError + 'static)) -> Option<&'a T> {
    let mut cur: Option<&(dyn StdError + 'static)> = Some(e);
    while let Some(err) = cur {
        if let Some(found) = err.downcast_ref::<T>() {
            return Some(found);
        }
        if let Some(inner) = err
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
        {
            if let Some(found) = find_in_chain::<T>(inner) {
                return Some(found);
            }
        }
        cur = err.source();
    }
    None
}

fn innermost(e: &reqwest::Error) -> String {
    let mut cur: &(dyn StdError + 'static) = match e.source() {
        Some(s) => s,
        None => return "failed".into(),
    };
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}

/// `Retry-After` as delta seconds or an HTTP date (RFC 9110 section 10.2.3). A date in the past
/// means "now"; the domain's policy then applies its own floor and ceiling.
fn parse_retry_after(value: &str, now: SystemTime) -> Option<time::Duration> {
    let value = value.trim();
    let secs = if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        value.parse::<u64>().unwrap_or(u64::MAX)
    } else {
        let at = httpdate::parse_http_date(value).ok()?;
        at.duration_since(now).map_or(0, |d| d.as_secs())
    };
    Some(time::Duration::seconds(
        i64::try_from(secs).unwrap_or(i64::MAX),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::SocketAddr;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};

    use pay_domain::kernel::secret::Secret;
    use pay_domain::webhooks::ports::WebhookSigner;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};
    use tokio::sync::mpsc;

    use crate::HmacSigner;

    #[derive(Debug)]
    struct Recorded {
        request_line: String,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    }

    enum Behaviour {
        /// Reads the request, writes these bytes, closes.
        Respond(Vec<u8>),
        /// Reads the request and never answers.
        Silent,
        /// Writes these bytes as soon as the connection opens, without reading.
        RawOnConnect(Vec<u8>),
        /// A 200 whose body is `total` bytes of `a`, written in 64 KiB pieces, paced so the
        /// client's early close is seen long before the end.
        Stream {
            total: usize,
            written: Arc<AtomicUsize>,
            write_failed: Arc<AtomicBool>,
        },
    }

    struct Server {
        addr: SocketAddr,
        accepted: Arc<AtomicUsize>,
        requests: mpsc::UnboundedReceiver<Recorded>,
    }

    async fn serve(behaviour: Behaviour) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let accepted = Arc::new(AtomicUsize::new(0));
        let (tx, requests) = mpsc::unbounded_channel();
        let behaviour = Arc::new(behaviour);
        let count = accepted.clone();
        tokio::spawn(async move {
            while let Ok((mut sock, _)) = listener.accept().await {
                count.fetch_add(1, SeqCst);
                let (tx, behaviour) = (tx.clone(), behaviour.clone());
                tokio::spawn(async move {
                    if let Behaviour::RawOnConnect(bytes) = &*behaviour {
                        let _ = sock.write_all(bytes).await;
                        tokio::time::sleep(Duration::from_secs(2)).await;
                        return;
                    }
                    let Some(req) = read_request(&mut sock).await else {
                        return;
                    };
                    let _ = tx.send(req);
                    match &*behaviour {
                        Behaviour::Respond(bytes) => {
                            let _ = sock.write_all(bytes).await;
                            let _ = sock.shutdown().await;
                        }
                        Behaviour::Silent => tokio::time::sleep(Duration::from_secs(30)).await,
                        Behaviour::RawOnConnect(_) => unreachable!(),
                        Behaviour::Stream {
                            total,
                            written,
                            write_failed,
                        } => {
                            let head = format!(
                                "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {total}\r\n\r\n"
                            );
                            if sock.write_all(head.as_bytes()).await.is_err() {
                                write_failed.store(true, SeqCst);
                                return;
                            }
                            let piece = vec![b'a'; 64 * 1024];
                            while written.load(SeqCst) < *total {
                                if sock.write_all(&piece).await.is_err() {
                                    write_failed.store(true, SeqCst);
                                    return;
                                }
                                written.fetch_add(piece.len(), SeqCst);
                                tokio::time::sleep(Duration::from_millis(3)).await;
                            }
                        }
                    }
                });
            }
        });
        Server {
            addr,
            accepted,
            requests,
        }
    }

    async fn read_request(sock: &mut TcpStream) -> Option<Recorded> {
        let mut buf = Vec::new();
        let mut chunk = [0u8; 8192];
        let head_end = loop {
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i;
            }
            let n = sock.read(&mut chunk).await.ok()?;
            if n == 0 {
                return None;
            }
            buf.extend_from_slice(&chunk[..n]);
        };
        let head = String::from_utf8(buf[..head_end].to_vec()).ok()?;
        let mut lines = head.split("\r\n");
        let request_line = lines.next()?.to_owned();
        let headers: Vec<(String, String)> = lines
            .map(|l| {
                let (n, v) = l.split_once(':').unwrap();
                (n.to_owned(), v.strip_prefix(' ').unwrap_or(v).to_owned())
            })
            .collect();
        let len: usize = headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
            .map_or(0, |(_, v)| v.parse().unwrap());
        let mut body = buf[head_end + 4..].to_vec();
        while body.len() < len {
            let n = sock.read(&mut chunk).await.ok()?;
            if n == 0 {
                return None;
            }
            body.extend_from_slice(&chunk[..n]);
        }
        Some(Recorded {
            request_line,
            headers,
            body,
        })
    }

    fn respond(status_line: &str, extra_headers: &str, body: &str) -> Behaviour {
        Behaviour::Respond(
            format!(
                "HTTP/1.1 {status_line}\r\n{extra_headers}content-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            )
            .into_bytes(),
        )
    }

    fn transport(allow_private: bool) -> HttpTransport {
        HttpTransport::new(TransportConfig {
            allow_private,
            ..TransportConfig::default()
        })
        .unwrap()
    }

    const BODY: &str = "{\"deliveryId\":\"00000000-0000-0000-0000-000000000001\",\"label\":\"Caf\u{e9} \u{2615}\",\"raw\":\"\r\n\r\nnot a header\"}";
    const SECRET: &str = "whsec_MfKQ9r3GyiJ2vVzT8xWb4nLpE6sHcA0dRu7kYq1oZNe";

    /// A request shaped as the domain's `prepare_attempt` builds it.
    fn request(url: String) -> OutboundRequest {
        let signature =
            HmacSigner.signature_header(&[Secret::new(SECRET)], 1_700_000_000, BODY.as_bytes());
        OutboundRequest {
            delivery_id: uuid::Uuid::from_u128(1),
            url,
            headers: vec![
                ("content-type".into(), "application/json".into()),
                ("user-agent".into(), pay_domain::webhooks::USER_AGENT.into()),
                (
                    "x-pay-delivery-id".into(),
                    uuid::Uuid::from_u128(1).to_string(),
                ),
                (
                    "x-pay-delivery-group-id".into(),
                    uuid::Uuid::from_u128(2).to_string(),
                ),
                ("x-pay-delivery-origin".into(), "event".into()),
                ("x-pay-event".into(), "status_changed".into()),
                ("x-pay-attempt".into(), "3".into()),
                ("x-pay-signature".into(), signature),
            ],
            body: BODY.into(),
            attempt: 3,
        }
    }

    /// Outcomes go to the delivery log and details to the server log: neither may repeat the
    /// signature or the body.
    fn assert_clean(what: &impl std::fmt::Debug, req: &OutboundRequest) {
        let text = format!("{what:?}");
        for (_, v) in &req.headers {
            if v.starts_with("t=") {
                assert!(!text.contains(&v[13..]), "signature leaked: {text}");
            }
        }
        assert!(!text.contains("Caf"), "body leaked: {text}");
    }

    async fn no_connection_within(server: &Server, wait: Duration) {
        tokio::time::sleep(wait).await;
        assert_eq!(
            server.accepted.load(SeqCst),
            0,
            "a connection reached the receiver"
        );
    }

    #[tokio::test]
    async fn headers_and_body_arrive_exactly() {
        let mut server = serve(respond("200 OK", "", "ok")).await;
        let req = request(format!("http://{}/hooks/pay?shop=42", server.addr));
        let outcome = transport(true).send(&req).await;
        assert_eq!(outcome.status, Some(200), "{outcome:?}");
        assert!(outcome.is_success());
        assert_eq!(outcome.response_excerpt.as_deref(), Some("ok"));
        let got = server.requests.recv().await.unwrap();
        assert_eq!(got.request_line, "POST /hooks/pay?shop=42 HTTP/1.1");
        assert_eq!(got.body, BODY.as_bytes(), "body byte for byte");
        let mut last = None;
        for (name, value) in &req.headers {
            let found: Vec<_> = got
                .headers
                .iter()
                .enumerate()
                .filter(|(_, (n, _))| n.eq_ignore_ascii_case(name))
                .collect();
            assert_eq!(found.len(), 1, "{name} exactly once: {:?}", got.headers);
            let (pos, (_, v)) = found[0];
            assert_eq!(v, value, "{name}");
            assert!(last < Some(pos), "{name} out of order: {:?}", got.headers);
            last = Some(pos);
        }
        assert_eq!(
            got.headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
                .unwrap()
                .1,
            BODY.len().to_string()
        );
    }

    #[tokio::test]
    async fn only_2xx_is_success() {
        for (status_line, code, success) in [
            ("200 OK", 200, true),
            ("204 No Content", 204, true),
            ("500 Internal Server Error", 500, false),
            ("404 Not Found", 404, false),
        ] {
            let body = if code == 204 { "" } else { "answer" };
            let server = serve(respond(status_line, "", body)).await;
            let outcome = transport(true)
                .send(&request(format!("http://{}/", server.addr)))
                .await;
            assert_eq!(outcome.status, Some(code), "{outcome:?}");
            assert_eq!(outcome.error, None);
            assert_eq!(outcome.is_success(), success, "{code}");
            assert_eq!(outcome.response_excerpt.is_some(), code != 204);
            assert_eq!(outcome.retry_after, None);
        }
    }

    #[tokio::test]
    async fn redirects_are_not_followed() {
        let target = serve(respond("200 OK", "", "ok")).await;
        let location = format!("location: http://{}/elsewhere\r\n", target.addr);
        let redirecting = serve(respond("302 Found", &location, "")).await;
        let outcome = transport(true)
            .send(&request(format!("http://{}/", redirecting.addr)))
            .await;
        assert_eq!(outcome.status, Some(302), "{outcome:?}");
        assert!(!outcome.is_success());
        assert_eq!(redirecting.accepted.load(SeqCst), 1);
        no_connection_within(&target, Duration::from_millis(200)).await;
    }

    #[tokio::test]
    async fn a_silent_receiver_hits_the_total_timeout() {
        let server = serve(Behaviour::Silent).await;
        let t = HttpTransport::new(TransportConfig {
            allow_private: true,
            connect_timeout: Duration::from_secs(5),
            total_timeout: Duration::from_millis(300),
        })
        .unwrap();
        let req = request(format!("http://{}/", server.addr));
        let (outcome, detail) = t.send_with_detail(&req).await;
        assert_eq!(outcome.status, None);
        assert_eq!(outcome.error, Some(AttemptError::TimedOut));
        let detail = detail.unwrap();
        assert!(detail.starts_with("timeout"), "{detail}");
        assert_clean(&detail, &req);
        assert!(
            (250..5000).contains(&outcome.duration_ms),
            "{}",
            outcome.duration_ms
        );
        assert_eq!(server.accepted.load(SeqCst), 1, "it did connect");
        assert_clean(&outcome, &req);
    }

    #[tokio::test]
    async fn a_huge_body_is_cut_without_reading_it_all() {
        const TOTAL: usize = 10 * 1024 * 1024;
        let written = Arc::new(AtomicUsize::new(0));
        let write_failed = Arc::new(AtomicBool::new(false));
        let server = serve(Behaviour::Stream {
            total: TOTAL,
            written: written.clone(),
            write_failed: write_failed.clone(),
        })
        .await;
        let outcome = transport(true)
            .send(&request(format!("http://{}/", server.addr)))
            .await;
        assert_eq!(outcome.status, Some(200), "{outcome:?}");
        assert!(outcome.is_success());
        let excerpt = outcome.response_excerpt.unwrap();
        assert_eq!(excerpt, "a".repeat(RESPONSE_EXCERPT_CHARS));
        // The client hung up: the receiver's next write fails long before 10 MB went out.
        for _ in 0..200 {
            if write_failed.load(SeqCst) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        assert!(
            write_failed.load(SeqCst),
            "the receiver could write everything"
        );
        let sent = written.load(SeqCst);
        assert!(
            sent < TOTAL / 2,
            "{sent} bytes were sent before the client closed"
        );
    }

    #[tokio::test]
    async fn excerpts_are_lossy_utf8() {
        let server = serve(Behaviour::Respond(
            b"HTTP/1.1 400 Bad Request\r\ncontent-length: 6\r\n\r\n\xff\xfeok\xc3\xa9".to_vec(),
        ))
        .await;
        let outcome = transport(true)
            .send(&request(format!("http://{}/", server.addr)))
            .await;
        assert_eq!(
            outcome.response_excerpt.as_deref(),
            Some("\u{fffd}\u{fffd}ok\u{e9}")
        );
    }

    #[tokio::test]
    async fn retry_after_is_read_on_429_and_503_only() {
        let cases = [
            (
                "503 Service Unavailable",
                "retry-after: 120\r\n",
                Some(time::Duration::seconds(120)),
            ),
            (
                "429 Too Many Requests",
                "retry-after: 7\r\n",
                Some(time::Duration::seconds(7)),
            ),
            ("500 Internal Server Error", "retry-after: 120\r\n", None),
            ("200 OK", "retry-after: 120\r\n", None),
            ("503 Service Unavailable", "retry-after: soon\r\n", None),
            ("503 Service Unavailable", "", None),
        ];
        for (status_line, header, expected) in cases {
            let server = serve(respond(status_line, header, "")).await;
            let outcome = transport(true)
                .send(&request(format!("http://{}/", server.addr)))
                .await;
            assert_eq!(outcome.retry_after, expected, "{status_line} {header}");
        }
        // An HTTP date, about ten minutes ahead.
        let at = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(600));
        let server = serve(respond(
            "429 Too Many Requests",
            &format!("retry-after: {at}\r\n"),
            "",
        ))
        .await;
        let outcome = transport(true)
            .send(&request(format!("http://{}/", server.addr)))
            .await;
        let secs = outcome.retry_after.unwrap().whole_seconds();
        assert!((590..=600).contains(&secs), "{secs}");
    }

    #[test]
    fn retry_after_forms() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let s = |v| parse_retry_after(v, now).map(|d| d.whole_seconds());
        assert_eq!(s("120"), Some(120));
        assert_eq!(s(" 0 "), Some(0));
        assert_eq!(s("99999999999999999999999"), Some(i64::MAX));
        // 1_700_000_000 is Tue, 14 Nov 2023 22:13:20 GMT.
        assert_eq!(s("Tue, 14 Nov 2023 23:13:20 GMT"), Some(3600));
        assert_eq!(
            s("Tue, 14 Nov 2023 21:13:20 GMT"),
            Some(0),
            "a past date means now"
        );
        for bad in ["", "-5", "1.5", "soon", "120 seconds"] {
            assert_eq!(s(bad), None, "{bad}");
        }
    }

    #[tokio::test]
    async fn private_targets_are_refused_before_any_connection() {
        let server = serve(respond("200 OK", "", "ok")).await;
        let port = server.addr.port();
        let t = transport(false);
        for url in [
            format!("http://127.0.0.1:{port}/"),
            format!("https://127.0.0.1:{port}/"),
            "https://127.0.0.1/".into(),
            "https://[::1]/".into(),
            "https://[::ffff:127.0.0.1]/".into(),
            format!("https://[::ffff:127.0.0.1]:{port}/"),
            "https://169.254.169.254/latest/meta-data".into(),
            format!("https://2130706433:{port}/"),
            format!("https://user:pw@example.com:{port}/"),
        ] {
            let req = request(url.clone());
            let (outcome, detail) = t.send_with_detail(&req).await;
            assert_eq!(outcome.status, None, "{url}");
            assert_eq!(outcome.error, Some(AttemptError::RefusedTarget), "{url}");
            let detail = detail.unwrap();
            assert!(detail.starts_with("refused target: "), "{url}: {detail}");
            assert_clean(&outcome, &req);
            assert_clean(&detail, &req);
        }
        // A name is not refused by the URL check; the resolver refuses it at connect time. The
        // outcome says only that; the address it resolved to is in the detail, for the log.
        let by_name = format!("https://localhost:{port}/");
        assert_eq!(crate::check_url(&by_name, false), Ok(()));
        let (outcome, detail) = t.send_with_detail(&request(by_name)).await;
        assert_eq!(outcome.error, Some(AttemptError::RefusedTarget));
        assert!(!format!("{outcome:?}").contains("127.0.0.1"), "{outcome:?}");
        let detail = detail.unwrap();
        assert!(
            detail.starts_with("refused target: localhost resolves to a forbidden address"),
            "{detail}"
        );
        no_connection_within(&server, Duration::from_millis(100)).await;
    }

    #[tokio::test]
    async fn allow_private_reaches_the_local_receiver_over_http() {
        let server = serve(respond("204 No Content", "", "")).await;
        let port = server.addr.port();
        let t = transport(true);
        for url in [
            format!("http://127.0.0.1:{port}/"),
            format!("http://localhost:{port}/"),
        ] {
            let outcome = t.send(&request(url.clone())).await;
            assert!(outcome.is_success(), "{url}: {outcome:?}");
        }
        assert_eq!(server.accepted.load(SeqCst), 2);
    }

    #[tokio::test]
    async fn connection_errors_are_reported() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        drop(listener);
        let req = request(format!("http://{addr}/"));
        let (outcome, detail) = transport(true).send_with_detail(&req).await;
        assert_eq!(outcome.error, Some(AttemptError::ConnectionFailed));
        let detail = detail.unwrap();
        assert!(detail.starts_with("connect error: "), "{detail}");
        assert!(
            !detail.contains("127.0.0.1"),
            "reqwest's url-bearing message is not used: {detail}"
        );
        assert_clean(&outcome, &req);
        assert_clean(&detail, &req);
    }

    #[tokio::test]
    async fn tls_errors_are_reported() {
        // Plain HTTP where a TLS server hello should be.
        let server = serve(Behaviour::RawOnConnect(
            b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n".to_vec(),
        ))
        .await;
        let req = request(format!("https://{}/", server.addr));
        let (outcome, detail) = transport(true).send_with_detail(&req).await;
        assert_eq!(outcome.error, Some(AttemptError::TlsFailed));
        let detail = detail.unwrap();
        assert!(detail.starts_with("tls error: "), "{detail}");
        assert_eq!(outcome.status, None);
        assert_clean(&outcome, &req);
        assert_clean(&detail, &req);
    }

    #[tokio::test]
    async fn an_invalid_header_is_refused_without_sending() {
        let server = serve(respond("200 OK", "", "ok")).await;
        let mut req = request(format!("http://{}/", server.addr));
        req.headers.push(("x-bad".into(), "line\r\nbreak".into()));
        let (outcome, detail) = transport(true).send_with_detail(&req).await;
        assert_eq!(outcome.error, Some(AttemptError::Internal));
        assert_eq!(detail.as_deref(), Some("invalid value for header x-bad"));
        no_connection_within(&server, Duration::from_millis(50)).await;
    }
}
