//! `GET /metrics` in the Prometheus text format, and the middleware counting every request.
//!
//! Requests are labelled by the route template actix matched (`/api/.../payment-links/{uid}`),
//! never the raw path, so no id or token reaches a label; a request no route matched is
//! `route="unmatched"`, and a method outside the standard ones is `method="other"` (neither can
//! grow the label sets). Gauges read from the store (outbox depth and age) are read when scraped.
//!
//! Access (`MetricsAccess`): on a listener of its own (`PAY_METRICS_LISTEN`), where nothing
//! else is served and the public listener answers `/metrics` 404; else on the public listener
//! with `Authorization: Bearer <PAY_METRICS_TOKEN>` (401 without or with another); with
//! neither, off (404). A token set beside a listener of its own is required there too.

use std::net::SocketAddr;
use std::time::Instant;

use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderValue};
use actix_web::http::{Method, StatusCode};
use actix_web::middleware::Next;
use actix_web::{web, HttpRequest, HttpResponse, ResponseError};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::{Registry, Unit};

use crate::edge::error::ApiError;

mod counters;
mod requests;
pub use counters::{mark, Counted, Counters};

/// The path `/metrics` is served on.
pub const METRICS_PATH: &str = "/metrics";
/// The route label of a request no route matched.
pub const UNMATCHED_ROUTE: &str = "unmatched";
/// The media type of the exposition: OpenMetrics 1.0, the text format `prometheus-client`
/// writes (Prometheus asks for it first; counters' samples end in `_total`, and it ends with
/// `# EOF`).
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Who may read `/metrics`, and where.
#[derive(Debug, Clone, Default)]
pub struct MetricsAccess {
    /// `PAY_METRICS_TOKEN`: the bearer token a scrape must carry.
    pub token: Option<String>,
    /// `PAY_METRICS_LISTEN`'s bound address: the listener that serves only `/metrics`.
    pub listener: Option<SocketAddr>,
}

impl MetricsAccess {
    /// Whether `/metrics` is served at all.
    pub fn enabled(&self) -> bool {
        self.token.is_some() || self.listener.is_some()
    }

    /// Whether a request arrived on the metrics listener (`local`: the listener's address).
    fn is_metrics_listener(&self, local: SocketAddr) -> bool {
        self.listener == Some(local)
    }
}

/// What the store answered when scraped: the webhook outbox and the endpoints paused.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StoreReading {
    pub outbox_pending: u64,
    /// Seconds since the oldest pending delivery was created (0 when none).
    pub outbox_oldest_pending_age: f64,
    pub circuits_open: u64,
}

/// The database pool when scraped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolReading {
    pub in_use: u32,
    pub idle: u32,
    pub max: u32,
}

/// Reads the server's database pool (in process, no I/O); the composition root makes it.
#[derive(Clone)]
pub struct PoolProbe(pub std::sync::Arc<dyn Fn() -> PoolReading + Send + Sync>);

impl std::fmt::Debug for PoolProbe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PoolProbe")
    }
}

/// One chain of the chain processor when scraped (from the watchers' records).
#[derive(Debug, Clone, PartialEq)]
pub struct ChainReading {
    pub chain: String,
    /// Blocks between the node's head and the last block read (`None`: not read yet).
    pub blocks_behind: Option<u64>,
    /// Seconds since the last read (`None`: never read).
    pub last_read_age: Option<f64>,
}

/// What a scrape read outside the counters: the store (`None` when it offers no gauges or the
/// read failed: left out of the exposition), the pool and the chains.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reading {
    pub store: Option<StoreReading>,
    pub pool: Option<PoolReading>,
    pub chains: Vec<ChainReading>,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ChainLabels {
    chain: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PoolLabels {
    state: &'static str,
}

/// The gauges of the scrape under way, written by `Metrics::encode`.
#[derive(Debug, Default)]
struct ReadGauges(std::sync::Mutex<Reading>);

fn gauge_of(v: u64) -> ConstGauge {
    ConstGauge::new(i64::try_from(v).unwrap_or(i64::MAX))
}

impl Collector for ReadGauges {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let reading = self.0.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if let Some(r) = reading.store {
            let pending = gauge_of(r.outbox_pending);
            pending.encode(encoder.encode_descriptor(
                "pay_webhook_outbox_pending",
                "Webhook deliveries waiting to be sent (pending or retrying, claimed ones included)",
                None,
                pending.metric_type(),
            )?)?;
            let age = ConstGauge::new(r.outbox_oldest_pending_age);
            age.encode(encoder.encode_descriptor(
                "pay_webhook_outbox_oldest_pending_age",
                "Age of the oldest webhook delivery waiting to be sent (0 when none waits)",
                Some(&Unit::Seconds),
                age.metric_type(),
            )?)?;
            let open = gauge_of(r.circuits_open);
            open.encode(encoder.encode_descriptor(
                "pay_webhook_circuits_open",
                "Webhook endpoints paused by their circuit now",
                None,
                open.metric_type(),
            )?)?;
        }
        if let Some(p) = reading.pool {
            let mut family = encoder.encode_descriptor(
                "pay_db_pool_connections",
                "Database pool connections: in use, idle, and the most the pool opens",
                None,
                prometheus_client::metrics::MetricType::Gauge,
            )?;
            for (state, v) in [("in_use", p.in_use), ("idle", p.idle), ("max", p.max)] {
                gauge_of(v.into()).encode(family.encode_family(&PoolLabels { state })?)?;
            }
        }
        if reading.chains.is_empty() {
            return Ok(());
        }
        let mut family = encoder.encode_descriptor(
            "pay_chain_blocks_behind",
            "Blocks between a chain's head and the last block its watcher read",
            None,
            prometheus_client::metrics::MetricType::Gauge,
        )?;
        for c in &reading.chains {
            if let Some(behind) = c.blocks_behind {
                let labels = ChainLabels {
                    chain: c.chain.clone(),
                };
                gauge_of(behind).encode(family.encode_family(&labels)?)?;
            }
        }
        let mut family = encoder.encode_descriptor(
            "pay_chain_last_read_age",
            "Time since a chain's watcher last read it",
            Some(&Unit::Seconds),
            prometheus_client::metrics::MetricType::Gauge,
        )?;
        for c in &reading.chains {
            if let Some(age) = c.last_read_age {
                let labels = ChainLabels {
                    chain: c.chain.clone(),
                };
                ConstGauge::new(age).encode(family.encode_family(&labels)?)?;
            }
        }
        Ok(())
    }
}

/// The registry and the metrics the HTTP edge records; one per server, shared by its workers.
#[derive(Debug)]
pub struct Metrics {
    access: MetricsAccess,
    registry: Registry,
    read: std::sync::Arc<ReadGauges>,
    counters: Counters,
    /// One scrape at a time sets the store's gauges and encodes them.
    scrape: std::sync::Mutex<()>,
    /// Requests by route template, method and status, with their latencies.
    requests: std::sync::Arc<requests::Requests>,
}

impl Metrics {
    pub fn new(access: MetricsAccess, counters: Counters) -> Metrics {
        let mut registry = Registry::default();
        // The request series are a collector (sharded per worker, added up when scraped),
        // registered first: collectors are encoded after the registered metrics, so the
        // families keep their order (the counters', the requests', the gauges').
        let requests = std::sync::Arc::new(requests::Requests::default());
        registry.register_collector(Box::new(requests.clone()));
        counters.register(&mut registry);
        let read = std::sync::Arc::new(ReadGauges::default());
        registry.register_collector(Box::new(read.clone()));
        Metrics {
            access,
            registry,
            read,
            counters,
            scrape: std::sync::Mutex::new(()),
            requests,
        }
    }

    pub fn access(&self) -> &MetricsAccess {
        &self.access
    }

    fn record(&self, route: &str, method: &'static str, status: u16, seconds: f64) {
        self.requests.record(route, method, status, seconds);
    }

    /// The exposition text of every metric, with the gauges of `reading`.
    pub fn encode(&self, reading: Reading) -> Result<String, std::fmt::Error> {
        let _one = self.scrape.lock().unwrap_or_else(|e| e.into_inner());
        *self.read.0.lock().unwrap_or_else(|e| e.into_inner()) = reading;
        let mut out = String::with_capacity(16 * 1024);
        prometheus_client::encoding::text::encode(&mut out, &self.registry)?;
        Ok(out)
    }
}

/// The method as a label: the standard ones by name, any other `other`.
fn method_label(m: &Method) -> &'static str {
    match *m {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        Method::CONNECT => "CONNECT",
        Method::TRACE => "TRACE",
        _ => "other",
    }
}

/// Counts and times every request of the public listener while `/metrics` is served (off:
/// passes every request through); on the metrics listener, answers 404 for every path but
/// `/metrics` (which it does not count).
pub async fn observe(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody>>, actix_web::Error> {
    let Some(metrics) = req.app_data::<web::Data<Metrics>>().cloned() else {
        return Ok(next.call(req).await?.map_into_left_body());
    };
    // `/metrics` off (neither a token nor a listener): nothing would read the counts, so
    // requests pass through uncounted (the A/B of bench/metrics_cost.py).
    if !metrics.access.enabled() {
        return Ok(next.call(req).await?.map_into_left_body());
    }
    if metrics
        .access
        .is_metrics_listener(req.app_config().local_addr())
    {
        if req.path() != METRICS_PATH {
            let res = ApiError::RouteNotFound(req.path().to_owned()).error_response();
            return Ok(req.into_response(res).map_into_right_body());
        }
        return Ok(next.call(req).await?.map_into_left_body());
    }
    let start = Instant::now();
    let method = method_label(req.method());
    let res = next.call(req).await;
    // The template is read after routing: from the path the router took (a walk by index).
    // Read before, it is a search of every route's pattern against the path (actix's
    // `match_pattern` before routing), which was most of what the metrics cost a request
    // (bench/metrics_cost.py). An error instead of a response (an inner middleware's failure;
    // the routes answer theirs as responses) has no request left to read: `unmatched`.
    let (route, status) = match &res {
        Ok(r) => {
            if let Some(c) = r.response().extensions().get::<Counted>() {
                metrics.counters.count(*c);
            }
            (r.request().match_pattern(), r.status())
        }
        Err(e) => (None, e.as_response_error().status_code()),
    };
    metrics.record(
        route.as_deref().unwrap_or(UNMATCHED_ROUTE),
        method,
        status.as_u16(),
        start.elapsed().as_secs_f64(),
    );
    Ok(res?.map_into_left_body())
}

/// Compares a presented token with the configured one in time that depends only on the
/// configured token's length.
fn token_matches(presented: &[u8], expected: &[u8]) -> bool {
    let mut diff = presented.len() ^ expected.len();
    for (i, e) in expected.iter().enumerate() {
        let p = presented.get(i).copied().unwrap_or(0);
        diff |= usize::from(std::hint::black_box(p ^ e));
    }
    diff == 0
}

/// The bearer token of `Authorization`, if it carries one.
fn bearer(req: &HttpRequest) -> Option<&[u8]> {
    let v = req.headers().get(header::AUTHORIZATION)?.as_bytes();
    let (scheme, token) = v.split_at_checked(7)?;
    scheme
        .eq_ignore_ascii_case(b"bearer ")
        .then_some(token)
        .filter(|t| !t.is_empty())
}

fn unauthorized() -> HttpResponse {
    let mut res = ApiError::Denied(pay_domain::tenancy::Denied::Unauthenticated).error_response();
    res.headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    res
}

/// The gauges read now (on the blocking pool): the store's (`None` when it does not offer
/// them or the read failed, logged: the rest of the exposition is still served), the pool's,
/// and the chains' (none when their read failed, logged too).
fn read_now(pay: &pay_domain::app::Pay, config: &crate::HttpConfig) -> Reading {
    let now = pay.now().unix_millis();
    let store = match pay.webhooks().outbox_gauges() {
        Ok(Some(g)) => Some(StoreReading {
            outbox_pending: g.pending,
            outbox_oldest_pending_age: g
                .oldest_pending_at
                .map_or(0.0, |at| (now - at.unix_millis()).max(0) as f64 / 1000.0),
            circuits_open: g.circuits_open,
        }),
        Ok(None) => None,
        Err(e) => {
            tracing::warn!(error = %pay_domain::kernel::error::chain(&e), "metrics: reading the outbox failed");
            None
        }
    };
    let chains = match config.chains.as_ref().map(|m| m.health()) {
        None => Vec::new(),
        Some(Ok(health)) => {
            let real_now = time::OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000;
            health
                .into_iter()
                .map(|h| ChainReading {
                    chain: h.chain_code,
                    blocks_behind: h.lag,
                    last_read_age: h
                        .read_at
                        .map(|at| (real_now as i64 - at.unix_millis()).max(0) as f64 / 1000.0),
                })
                .collect()
        }
        Some(Err(e)) => {
            tracing::warn!(error = %pay_domain::kernel::error::chain(&e), "metrics: reading the chains failed");
            Vec::new()
        }
    };
    Reading {
        store,
        pool: config.pool.as_ref().map(|p| (p.0)()),
        chains,
    }
}

/// Any method on `/metrics`: the exposition to a scrape allowed where it arrives (see the
/// module), else 404 (off, or the public listener beside a metrics listener) or 401.
pub async fn metrics(
    req: HttpRequest,
    metrics: web::Data<Metrics>,
    pay: web::Data<pay_domain::app::Pay>,
    config: web::Data<crate::HttpConfig>,
) -> HttpResponse {
    let access = metrics.access();
    let here = access.is_metrics_listener(req.app_config().local_addr());
    if !(here || (access.listener.is_none() && access.token.is_some())) {
        return ApiError::RouteNotFound(req.path().to_owned()).error_response();
    }
    if let Some(token) = &access.token {
        if !bearer(&req).is_some_and(|p| token_matches(p, token.as_bytes())) {
            return unauthorized();
        }
    }
    if req.method() != Method::GET {
        let mut res = ApiError::MethodNotAllowed.error_response();
        res.headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("GET"));
        return res;
    }
    let reading = web::block(move || read_now(&pay, &config))
        .await
        .unwrap_or_default();
    let text = match metrics.encode(reading) {
        Ok(t) => t,
        Err(_) => return HttpResponse::new(StatusCode::INTERNAL_SERVER_ERROR),
    };
    HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, CONTENT_TYPE))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .body(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_compare_whole() {
        assert!(token_matches(b"abc", b"abc"));
        assert!(!token_matches(b"abd", b"abc"));
        assert!(!token_matches(b"ab", b"abc"));
        assert!(!token_matches(b"abcd", b"abc"));
        assert!(!token_matches(b"", b"abc"));
    }

    /// Requests through the middleware to a bare route, then the exposition's text.
    async fn counted_after_requests(access: MetricsAccess) -> String {
        use actix_web::{middleware, test, App};
        let metrics = web::Data::new(Metrics::new(access, Counters::default()));
        let app = test::init_service(
            App::new()
                .app_data(metrics.clone())
                .route("/hello/{name}", web::get().to(HttpResponse::Ok))
                .wrap(middleware::from_fn(observe)),
        )
        .await;
        for _ in 0..3 {
            let res =
                test::call_service(&app, test::TestRequest::get().uri("/hello/x").to_request())
                    .await;
            assert_eq!(res.status(), StatusCode::OK);
        }
        let res =
            test::call_service(&app, test::TestRequest::get().uri("/nowhere").to_request()).await;
        assert_eq!(res.status(), StatusCode::NOT_FOUND);
        metrics.encode(Reading::default()).unwrap()
    }

    #[actix_rt::test]
    async fn requests_are_counted_only_while_metrics_are_served() {
        let on = counted_after_requests(MetricsAccess {
            token: Some("t".repeat(24)),
            listener: None,
        })
        .await;
        assert!(
            on.contains(
                r#"pay_http_requests_total{route="/hello/{name}",method="GET",status="200"} 3"#
            ),
            "{on}"
        );
        assert!(
            on.contains(
                r#"pay_http_requests_total{route="unmatched",method="GET",status="404"} 1"#
            ),
            "{on}"
        );
        let off = counted_after_requests(MetricsAccess::default()).await;
        assert!(off.contains("# TYPE pay_mails counter"), "{off}");
        assert!(!off.contains("pay_http_requests_total{"), "{off}");
        assert!(
            !off.contains("pay_http_request_duration_seconds_count{"),
            "{off}"
        );
    }

    #[test]
    fn unknown_methods_share_one_label() {
        assert_eq!(method_label(&Method::GET), "GET");
        assert_eq!(method_label(&Method::from_bytes(b"BREW").unwrap()), "other");
    }
}
