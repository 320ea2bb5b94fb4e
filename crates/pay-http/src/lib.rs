//! The actix-web adapter: routes, credential extraction, strict JSON input, DTOs, the single
//! error mapping and the OpenAPI document. It knows the domain and nothing else; the binary
//! hands it a ready `Pay`.

pub mod api;
pub mod edge;
pub mod openapi;
pub mod pages;

use std::net::TcpListener;

use actix_web::dev::Server;
use actix_web::{middleware, web, App, HttpRequest, HttpServer};
use pay_domain::app::Pay;

use crate::api::meta;
use crate::edge::error::ApiError;

/// Settings of the HTTP edge.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// Mark the session cookie `Secure` (when the base URL is https).
    pub secure_cookies: bool,
    /// Blocking threads per worker for store calls. More threads than pooled connections only
    /// queue on the pool's lock and cost context switches, so the binary sizes this from the
    /// pool.
    pub blocking_threads_per_worker: usize,
    /// `PAY_BASE_URL`: the public origin (and path prefix) clients address. DPoP proofs'
    /// `htu` and the OAuth metadata are built from it, never from the request's `Host`.
    pub base_url: String,
    /// `PAY_AUTH_URL`: the origin (and path prefix) of the native-installation route; its
    /// proofs' `htu` is built from it.
    pub auth_url: String,
    /// `PAY_DPOP_NONCES`: every DPoP proof must carry a nonce this issuer made (RFC 9449
    /// sections 8 and 9); `None` asks for none.
    pub dpop_nonces: Option<std::sync::Arc<pay_dpop::NonceIssuer>>,
    /// `PAY_APEX_HOST`: requests whose `Host` is this name (lower-case) get 307 to the same
    /// path and query on `base_url` (`edge::canonical`).
    pub apex_host: Option<String>,
    /// `PAY_METRICS_TOKEN`: `GET /metrics` on the public listener with this bearer token
    /// (`edge::metrics`). The metrics listener is the one `build_server` is given.
    pub metrics_token: Option<String>,
    /// The counters `GET /metrics` shows beside the edge's own; the composition root shares
    /// them with the adapters that report (the webhook dispatcher).
    pub counters: edge::metrics::Counters,
    /// Reads the server's database pool for `GET /metrics` (`None`: not shown).
    pub pool: Option<edge::metrics::PoolProbe>,
    /// The chain processor's chains, whose health `/readyz` reports (`None` under the sandbox).
    pub chains: Option<pay_domain::chains::ChainMonitor>,
}

/// Registers every route (`openapi::routes!`, the one list), then the 405 answers.
pub fn configure(cfg: &mut web::ServiceConfig) {
    openapi::register_routes(cfg);
    // Registered after the handlers: a known path with another method lands here (405, with
    // `Allow` naming the path's methods as the OpenAPI document gives them).
    for (path, allow) in openapi::route_methods() {
        let allow = allow.clone();
        cfg.service(web::resource(path.as_str()).to(move || {
            let allow = allow.clone();
            async move { method_not_allowed(&allow) }
        }));
    }
}

async fn not_found(req: HttpRequest) -> ApiError {
    ApiError::RouteNotFound(req.path().to_owned())
}

fn method_not_allowed(allow: &str) -> actix_web::HttpResponse {
    let mut res = actix_web::ResponseError::error_response(&ApiError::MethodNotAllowed);
    if let Ok(v) = actix_web::http::header::HeaderValue::from_str(allow) {
        res.headers_mut().insert(actix_web::http::header::ALLOW, v);
    }
    res
}

/// Builds the server on an already bound listener (port 0 in tests), and on
/// `metrics_listener` when given (`PAY_METRICS_LISTEN`: it serves `GET /metrics` only).
pub fn build_server(
    pay: Pay,
    config: HttpConfig,
    listener: TcpListener,
    metrics_listener: Option<TcpListener>,
    workers: usize,
) -> std::io::Result<Server> {
    let blocking = config.blocking_threads_per_worker.max(1);
    let pay = web::Data::new(pay);
    // The page cache hears of link changes for as long as the server runs.
    let links_epoch = std::sync::Arc::new(crate::pages::checkout::cache::LinkEpoch::default());
    let observer: std::sync::Arc<dyn pay_domain::links::ports::LinkObserver> = links_epoch.clone();
    pay.links().observe(&observer);
    let links_epoch = web::Data::from(links_epoch);
    let metrics = web::Data::new(edge::metrics::Metrics::new(
        edge::metrics::MetricsAccess {
            token: config.metrics_token.clone(),
            listener: metrics_listener
                .as_ref()
                .map(TcpListener::local_addr)
                .transpose()?,
        },
        config.counters.clone(),
    ));
    let config = web::Data::new(config);
    let zones = web::Data::new(meta::TimezoneCache::new());
    let server = HttpServer::new(move || {
        App::new()
            .app_data(pay.clone())
            .app_data(config.clone())
            .app_data(zones.clone())
            .app_data(links_epoch.clone())
            .app_data(metrics.clone())
            // One per worker thread: answered on the event loop without a lock.
            .app_data(web::Data::new(
                crate::pages::checkout::cache::PageCache::new(pay.random_alphanumeric(32)),
            ))
            .configure(configure)
            .service(web::resource(edge::metrics::METRICS_PATH).to(edge::metrics::metrics))
            .default_service(web::to(|req: HttpRequest| async move {
                actix_web::ResponseError::error_response(&not_found(req).await)
            }))
            .wrap(middleware::from_fn(edge::limits::header_limits))
            .wrap(middleware::from_fn(edge::cors::public_cors))
            .wrap(middleware::from_fn(edge::canonical::apex_redirect))
            .wrap(middleware::from_fn(edge::metrics::observe))
            .wrap(middleware::from_fn(edge::telemetry::request_span))
    })
    .workers(workers.max(1))
    .worker_max_blocking_threads(blocking)
    .listen(listener)?;
    let server = match metrics_listener {
        Some(l) => server.listen(l)?,
        None => server,
    };
    let server = server.run();
    Ok(server)
}
