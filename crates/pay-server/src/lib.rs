//! The composition root: configuration, wiring of the adapters around the domain, the CLI's
//! commands and the server's life cycle. Tests build the same `Application` on port 0.

pub mod billing;
pub mod chains;
pub mod config;
pub mod dispatcher;
pub mod files;
pub mod janitor;
pub mod mailer;
pub mod portal;
pub mod scheduler;

use std::net::TcpListener;
use std::sync::Arc;

use anyhow::Context;
use pay_auth::AuthCrypto;
use pay_domain::app::{Adapters, AppConfig, Pay, Stores};
use pay_domain::kernel::ports::Clock;
use pay_domain::kernel::secret::Secret;
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::tenancy::BootstrapOutcome;
use pay_http::HttpConfig;

/// What the DPoP nonce key is derived for from the keyring (a new use gets a new label).
pub const DPOP_NONCE_KEY_LABEL: &str = "pay dpop nonce v1";
use pay_store::{DieselStore, StoreConfig};
use pay_webhooks::{AeadSealer, HmacSigner, HttpTransport, TransportConfig};
use serde_json::json;

pub use config::Config;
pub use dispatcher::Dispatcher;
pub use mailer::Mailer;

/// Runs a store-bound step of a background loop on the blocking pool; its error (or the
/// task's panic) is logged as `{what} failed` and read as `None` (the loop retries later).
pub(crate) async fn background_step<T, E>(
    what: &'static str,
    f: impl FnOnce() -> Result<T, E> + Send + 'static,
) -> Option<T>
where
    T: Send + 'static,
    E: std::error::Error + Send + 'static,
{
    match tokio::task::spawn_blocking(f).await {
        Ok(Ok(v)) => Some(v),
        Ok(Err(e)) => {
            tracing::warn!(error = %pay_domain::kernel::error::chain(&e), "{what} failed");
            None
        }
        Err(e) => {
            tracing::warn!(error = %pay_domain::kernel::error::chain(&e), "{what} failed");
            None
        }
    }
}

/// Real time.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        Timestamp::from_datetime(time::OffsetDateTime::now_utc())
    }
}

/// Opens the store and runs pending migrations.
pub fn open_store(config: &Config) -> anyhow::Result<DieselStore> {
    let store = DieselStore::connect(&StoreConfig {
        url: config.database_url.clone(),
        max_connections: config.pool_size,
    })
    .context("connecting to the database")?
    .with_read_cache(config.read_cache);
    let ran = store.migrate().context("running migrations")?;
    tracing::info!(backend = ?store.backend(), migrations = ran, "database ready");
    Ok(store)
}

/// The domain service over the real adapters, on real time. Each company's sandbox test clock
/// is stored with the company (the domain reads it); the process clock is never moved.
pub fn build_pay(config: &Config, store: DieselStore) -> anyhow::Result<Pay> {
    build_pay_with_clock(config, store, Arc::new(SystemClock))
}

/// The same with another process clock (tests stand in for real time with it). Signature
/// timestamps always use the system's real time.
pub fn build_pay_with_clock<C: Clock + 'static>(
    config: &Config,
    store: DieselStore,
    clock: Arc<C>,
) -> anyhow::Result<Pay> {
    let processor: Arc<dyn pay_domain::checkout::ports::Processor> =
        if config.processor == "onchain" {
            Arc::new(pay_chain::OnchainProcessor::new(
                Arc::new(chains::load(config)?),
                Arc::new(store.clone()),
                Arc::new(SystemClock),
            ))
        } else {
            Arc::new(pay_processor::SandboxProcessor::new())
        };
    build_pay_with(config, store, clock, processor)
}

/// The price source of the configured processor: the chains' prices (fixed pars and price
/// feeds) under `onchain`, else the sandbox's table.
fn price_source(
    config: &Config,
) -> anyhow::Result<Arc<dyn pay_domain::checkout::ports::PriceSource>> {
    if config.processor == "onchain" {
        let prices =
            pay_chain::ChainPrices::new(Arc::new(chains::load(config)?), Arc::new(SystemClock))
                .map_err(|e| anyhow::anyhow!("{e}"))?;
        return Ok(Arc::new(prices));
    }
    Ok(Arc::new(config.sandbox_prices()?))
}

/// The same with another processor (tests rehearse a merchant without a wallet).
pub fn build_pay_with<C: Clock + 'static>(
    config: &Config,
    store: DieselStore,
    clock: Arc<C>,
    processor: Arc<dyn pay_domain::checkout::ports::Processor>,
) -> anyhow::Result<Pay> {
    let keyring = config.keyring()?;
    Ok(Pay::new(
        AppConfig {
            assets: config.asset_catalogue()?,
            public_pay_url: config.public_pay_url.clone(),
            limits: config.rate_limits,
            sandbox: config.processor == "sandbox",
            allow_private_targets: config.allow_private_targets,
            billing: config.billing(),
            oauth: Default::default(),
            webhook_circuit: config.webhook_circuit,
            events_kept: config.events_retention,
        },
        Stores::all_in(Arc::new(store)),
        Adapters {
            clock,
            crypto: Arc::new(AuthCrypto::new()),
            portal_keys: Arc::new(portal::KeyringPortalKeys::new(&keyring)),
            sealer: Arc::new(AeadSealer::new(keyring)),
            signer: Arc::new(HmacSigner),
            wall_clock: Arc::new(SystemClock),
            processor,
            prices: price_source(config)?,
            files: config.files.build()?,
        },
    ))
}

/// The webhook dispatcher over the real transport, claiming for `PAY_WEBHOOK_LEASE_SECS` with
/// its sends timed to fit inside that lease.
pub fn build_dispatcher(config: &Config, pay: Pay) -> anyhow::Result<Dispatcher> {
    let total_timeout = dispatcher::send_timeout(config.webhook_lease);
    let transport = HttpTransport::new(TransportConfig {
        allow_private: config.allow_private_targets,
        connect_timeout: pay_webhooks::transport::CONNECT_TIMEOUT.min(total_timeout),
        total_timeout,
    })
    .map_err(|e| anyhow::anyhow!("webhook transport: {e}"))?;
    Ok(Dispatcher::new(pay, transport).with_lease(config.webhook_lease))
}

/// The printed form of a bootstrap (`admin bootstrap` and the first-start demo).
pub fn bootstrap_json(o: &BootstrapOutcome) -> serde_json::Value {
    json!({
        "companyId": o.company_id.to_string(),
        "userId": o.user_id.to_string(),
        "keyId": o.key_id.to_string(),
        "keySecret": o.key_secret.as_ref().map(|s| s.expose().to_owned()),
        "formKeyId": o.form_key_id.to_string(),
    })
}

/// On the first start of an empty embedded database: a demo company whose credentials are
/// printed once to standard output (never to the log).
pub fn demo_bootstrap(config: &Config, pay: &Pay) -> anyhow::Result<Option<String>> {
    if !(config.demo && config.is_embedded() && pay.tenancy().is_empty()?) {
        return Ok(None);
    }
    let password = Secret::new(format!("demo-{}", pay.random_alphanumeric(16)));
    let outcome = pay
        .tenancy()
        .bootstrap("Demo Company", "demo@example.com", &password)?;
    let mut creds = bootstrap_json(&outcome);
    creds["email"] = json!("demo@example.com");
    creds["password"] = json!(password.expose());
    let banner = format!(
        "First start on an empty database: created a demo company.\n\
         These credentials are shown ONCE; keep them.\n{}\n\
         Try: curl -s {}/api/partner/v1/pay/payment-links -H 'x-svc-key-id: {}' -H 'x-svc-key-secret: <keySecret>'\n",
        serde_json::to_string_pretty(&creds)?,
        config.base_url,
        outcome.key_id,
    );
    Ok(Some(banner))
}

/// A built, not yet running server.
pub struct Application {
    port: u16,
    metrics_port: Option<u16>,
    server: actix_web::dev::Server,
    pay: Pay,
    dispatcher: Dispatcher,
    mailer: Mailer,
    counters: pay_http::edge::metrics::Counters,
    run_dispatcher: bool,
}

impl std::fmt::Debug for Application {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Application")
            .field("port", &self.port)
            .finish_non_exhaustive()
    }
}

impl Application {
    /// Opens the database, migrates, binds the listener (port 0 picks a free one).
    pub fn build(config: &Config) -> anyhow::Result<Application> {
        let store = open_store(config)?;
        let pay = build_pay(config, store.clone())?;
        Self::build_with_store(config, pay, store)
    }

    /// Over `pay`; `/readyz` reports no chain and `/metrics` no pool (both need the store).
    pub fn build_with(config: &Config, pay: Pay) -> anyhow::Result<Application> {
        Self::build_inner(config, pay, None)
    }

    /// Over `pay` and its store: under the chain processor, `/readyz` and `/metrics` report
    /// each chain's health from the watchers' records in it; `/metrics` reads its pool.
    pub fn build_with_store(
        config: &Config,
        pay: Pay,
        store: DieselStore,
    ) -> anyhow::Result<Application> {
        Self::build_inner(config, pay, Some(store))
    }

    fn build_inner(
        config: &Config,
        pay: Pay,
        store: Option<DieselStore>,
    ) -> anyhow::Result<Application> {
        let pool = store.as_ref().map(|store| {
            let store = store.clone();
            pay_http::edge::metrics::PoolProbe(Arc::new(move || {
                let (open, idle, max) = store.pool_state();
                pay_http::edge::metrics::PoolReading {
                    in_use: open.saturating_sub(idle),
                    idle,
                    max,
                }
            }))
        });
        let chains = match store {
            Some(store) if config.processor == "onchain" => {
                Some(pay_domain::chains::ChainMonitor::new(
                    Arc::new(chains::load(config)?),
                    Arc::new(store),
                    Arc::new(SystemClock),
                ))
            }
            _ => None,
        };
        let listener = TcpListener::bind(config.listen)
            .with_context(|| format!("binding {}", config.listen))?;
        let port = listener.local_addr()?.port();
        let metrics_listener = config
            .metrics_listen
            .map(|addr| {
                TcpListener::bind(addr)
                    .with_context(|| format!("binding PAY_METRICS_LISTEN {addr}"))
            })
            .transpose()?;
        let metrics_port = metrics_listener
            .as_ref()
            .map(|l| l.local_addr().map(|a| a.port()))
            .transpose()?;
        let workers = config.workers.max(1);
        let counters = pay_http::edge::metrics::Counters::default();
        let http = HttpConfig {
            counters: counters.clone(),
            pool,
            secure_cookies: config.base_url.starts_with("https://"),
            blocking_threads_per_worker: (config.pool_size as usize).div_ceil(workers),
            base_url: config.base_url.clone(),
            auth_url: config.auth_url.clone(),
            apex_host: config.apex_host.clone(),
            dpop_nonces: config
                .dpop_nonces
                .then(|| config.keyring())
                .transpose()?
                .map(|ring| {
                    Arc::new(pay_dpop::NonceIssuer::new(
                        &ring.derive(DPOP_NONCE_KEY_LABEL).0,
                    ))
                }),
            metrics_token: config.metrics_token.as_ref().map(|t| t.expose().to_owned()),
            chains,
        };
        let server = pay_http::build_server(
            pay.clone(),
            http,
            listener,
            metrics_listener,
            config.workers,
        )?;
        let dispatcher = build_dispatcher(config, pay.clone())?.with_counters(counters.clone());
        let mailer = Mailer::from_config(config, pay.clone())?.with_counters(counters.clone());
        Ok(Application {
            port,
            metrics_port,
            server,
            pay,
            dispatcher,
            mailer,
            counters,
            run_dispatcher: config.dispatcher,
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The port of the metrics listener (`PAY_METRICS_LISTEN`), when there is one.
    pub fn metrics_port(&self) -> Option<u16> {
        self.metrics_port
    }

    pub fn pay(&self) -> &Pay {
        &self.pay
    }

    /// A dispatcher over this application's service (tests drive it round by round).
    pub fn dispatcher(&self) -> Dispatcher {
        self.dispatcher.clone()
    }

    /// The mailer over this application's service (tests drive it round by round).
    pub fn mailer(&self) -> Mailer {
        self.mailer.clone()
    }

    /// The counters `GET /metrics` shows beside the edge's own (the dispatcher, the mailer and
    /// the background jobs count into them; tests run jobs' rounds with them).
    pub fn counters(&self) -> pay_http::edge::metrics::Counters {
        self.counters.clone()
    }

    /// Runs until the server stops (SIGINT/SIGTERM: graceful shutdown), with the webhook
    /// dispatcher and the mailer beside it unless configured off, and the expiry and billing
    /// schedulers always.
    pub async fn run(self) -> std::io::Result<()> {
        if self.run_dispatcher {
            actix_rt::spawn(self.dispatcher.run());
            actix_rt::spawn(self.mailer.run());
        }
        actix_rt::spawn(janitor::run(self.pay.clone(), self.counters.clone()));
        actix_rt::spawn(scheduler::run(self.pay.clone(), self.counters.clone()));
        actix_rt::spawn(billing::run(self.pay.clone(), self.counters.clone()));
        self.server.await
    }

    /// The server future and a handle, for tests that stop it.
    pub fn into_server(self) -> actix_web::dev::Server {
        self.server
    }
}

/// Logs to standard error, filtered by `PAY_LOG` (default `info`).
pub fn init_tracing() {
    use std::io::IsTerminal;
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_env("PAY_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false)
        .try_init();
}
