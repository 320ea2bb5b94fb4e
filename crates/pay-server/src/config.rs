//! Typed configuration from `PAY_*` environment variables, with defaults that run the
//! embedded set-up (SQLite file, loopback listener, sandbox processor).

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::{bail, Context};
use pay_domain::kernel::assets::{AssetCatalogue, DestinationAsset};
use pay_domain::kernel::ratelimit::{Limit, RateLimits};

/// Everything the binary reads from its environment.
#[derive(Debug, Clone)]
pub struct Config {
    pub database_url: String,
    pub listen: SocketAddr,
    pub base_url: String,
    pub auth_url: String,
    pub public_pay_url: String,
    pub pool_size: u32,
    pub workers: usize,
    /// `None`: the built-in catalogue.
    pub assets_file: Option<String>,
    /// Bootstrap a demo company on the first start of an empty embedded database.
    pub demo: bool,
    /// Time to live of the store's hot-read cache (key lookups, company settings).
    pub read_cache: Duration,
    /// `PAY_ENCRYPTION_KEY`: base64 of 32 bytes sealing secrets at rest. Unset on the embedded
    /// default: generated once into `pay.key` beside the database file.
    pub encryption_key: Option<String>,
    /// `PAY_ENCRYPTION_KEYS_OLD`: earlier keys (comma-separated), still able to open.
    pub encryption_keys_old: Vec<String>,
    /// Development and tests: webhooks may reach http and private addresses.
    pub allow_private_targets: bool,
    /// `PAY_DPOP_NONCES` (default false): require a server-issued nonce in every DPoP proof
    /// (RFC 9449 sections 8 and 9), stateless, keyed from the keyring.
    pub dpop_nonces: bool,
    /// `PAY_APEX_HOST`: a host name whose requests are answered 307 to the same path and
    /// query on `base_url` (the canonical host).
    pub apex_host: Option<String>,
    /// Run the outbox workers (webhook dispatcher, mailer) inside `serve`.
    pub dispatcher: bool,
    /// `PAY_WEBHOOK_LEASE_SECS`: how long a claimed delivery stays hidden from other
    /// dispatchers, and so how long the claims of a crashed one wait before they are sent again
    /// (default 60 s). The send timeout follows it (`dispatcher::send_timeout`).
    pub webhook_lease: Duration,
    /// `PAY_WEBHOOK_CIRCUIT_AFTER_SECS` (default 3600) and `PAY_WEBHOOK_CIRCUIT_PAUSE_SECS`
    /// (default 300): an endpoint whose every attempt failed for the first (at least ten
    /// attempts) is paused for the second, doubled after each failed probe up to an hour.
    pub webhook_circuit: pay_domain::webhooks::CircuitRule,
    /// `PAY_EVENTS_RETENTION_DAYS` (1 to 3650, default 30): how long the event log
    /// (`GET /api/partner/v1/pay/events`) keeps an event before the pruning job forgets it.
    pub events_retention: time::Duration,
    /// `PAY_SMTP_URL`: where mails go (`smtp://`, `smtp://…?tls=required`, `smtps://`; may
    /// carry a password). Unset: mails stay in the outbox and are logged.
    pub smtp_url: Option<pay_domain::kernel::secret::Secret>,
    /// `PAY_MAIL_FROM`: the sender of every mail.
    pub mail_from: String,
    /// `PAY_PROCESSOR`: the payment processor; `sandbox` (the default, a test mode with the
    /// sandbox events route and the test clock) or `onchain` (the chains of `PAY_CHAINS_FILE`,
    /// watched by this service, paid into the merchants' own wallets).
    pub processor: String,
    /// `PAY_CHAINS_FILE`: the chains of the `onchain` processor (a JSON array, see
    /// docs/chains.md); required by it, refused with the sandbox.
    pub chains_file: Option<String>,
    /// `PAY_SANDBOX_PRICES_FILE`: the sandbox's price table (JSON), else the built-in one.
    pub sandbox_prices_file: Option<String>,
    /// `PAY_RATE_LIMIT_*`: each `N/SECONDS`; the defaults are `RateLimits::default()`.
    pub rate_limits: RateLimits,
    /// `PAY_BILLING_LEAD_SECS`: how long before a cycle's `dueAt` the billing scheduler
    /// issues its invoice link (default 7 days).
    pub billing_lead: Duration,
    /// `PAY_FILES_DIR` or `PAY_FILES_S3_*`: where evidence files' bytes live.
    pub files: crate::files::FilesConfig,
    /// `PAY_METRICS_LISTEN`: a listener of its own serving only `GET /metrics`.
    pub metrics_listen: Option<SocketAddr>,
    /// `PAY_METRICS_TOKEN`: the bearer token `GET /metrics` requires (on the public listener
    /// when `metrics_listen` is unset). With neither, `/metrics` is off.
    pub metrics_token: Option<pay_domain::kernel::secret::Secret>,
}

/// The rate-limit variables, each read as `N/SECONDS` (N hits per window of SECONDS).
fn rate_limits() -> anyhow::Result<RateLimits> {
    let mut limits = RateLimits::default();
    // `..._REQUEST_EMAIL_PER_RECIPIENT` is the older name of the mail cap, read first so that
    // `..._MAIL_PER_RECIPIENT` wins when both are set.
    if let Some(v) = var("PAY_RATE_LIMIT_REQUEST_EMAIL_PER_RECIPIENT") {
        limits.mail_per_recipient = Limit::parse(&v).with_context(|| {
            format!("PAY_RATE_LIMIT_REQUEST_EMAIL_PER_RECIPIENT must be N/SECONDS, got {v:?}")
        })?;
    }
    let slots: [(&str, &mut Limit); 8] = [
        ("PAY_RATE_LIMIT_LOGIN", &mut limits.login),
        (
            "PAY_RATE_LIMIT_LOGIN_PER_ADDRESS",
            &mut limits.login_per_address,
        ),
        (
            "PAY_RATE_LIMIT_ANONYMOUS_LINKS",
            &mut limits.anonymous_links,
        ),
        (
            "PAY_RATE_LIMIT_CHECKOUT_STARTS",
            &mut limits.checkout_starts,
        ),
        (
            "PAY_RATE_LIMIT_GATEWAY_PER_FORM",
            &mut limits.gateway_per_form,
        ),
        (
            "PAY_RATE_LIMIT_GATEWAY_PER_ADDRESS",
            &mut limits.gateway_per_address,
        ),
        (
            "PAY_RATE_LIMIT_REQUEST_EMAIL_PER_LINK",
            &mut limits.request_email_per_link,
        ),
        (
            "PAY_RATE_LIMIT_MAIL_PER_RECIPIENT",
            &mut limits.mail_per_recipient,
        ),
    ];
    for (name, slot) in slots {
        if let Some(v) = var(name) {
            *slot = Limit::parse(&v).with_context(|| {
                format!("{name} must be N/SECONDS (N from 1, 1 to 86400 seconds), got {v:?}")
            })?;
        }
    }
    Ok(limits)
}

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

fn url_var(name: &str, default: &str) -> anyhow::Result<String> {
    let v = var(name).unwrap_or_else(|| default.to_owned());
    if !(v.starts_with("http://") || v.starts_with("https://")) {
        bail!("{name} must be an absolute http(s) URL, got {v:?}");
    }
    Ok(v.trim_end_matches('/').to_owned())
}

fn bool_var(name: &str, default: bool) -> anyhow::Result<bool> {
    match var(name).as_deref() {
        None => Ok(default),
        Some("1" | "true" | "yes") => Ok(true),
        Some("0" | "false" | "no") => Ok(false),
        Some(v) => bail!("{name} must be true or false, got {v:?}"),
    }
}

/// The sender when `PAY_MAIL_FROM` is unset (set a real one: servers refuse `@localhost`).
pub const DEFAULT_MAIL_FROM: &str = "Pay <no-reply@localhost>";

/// The webhook claim lease when `PAY_WEBHOOK_LEASE_SECS` is unset (the domain's `CLAIM_LEASE`).
pub const DEFAULT_WEBHOOK_LEASE: Duration = Duration::from_secs(60);
/// The range `PAY_WEBHOOK_LEASE_SECS` may take.
const WEBHOOK_LEASE_SECS: std::ops::RangeInclusive<u64> = 2..=3600;

/// A duration variable `name` in whole seconds within `range`; `default` when unset.
fn secs_var(
    name: &str,
    v: Option<String>,
    default: Duration,
    range: std::ops::RangeInclusive<u64>,
) -> anyhow::Result<Duration> {
    let Some(v) = v else {
        return Ok(default);
    };
    match v.trim().parse::<u64>() {
        Ok(secs) if range.contains(&secs) => Ok(Duration::from_secs(secs)),
        _ => bail!(
            "{name} must be whole seconds from {} to {}, got {v:?}",
            range.start(),
            range.end()
        ),
    }
}

/// `PAY_WEBHOOK_LEASE_SECS`: whole seconds within `WEBHOOK_LEASE_SECS`.
fn webhook_lease(v: Option<String>) -> anyhow::Result<Duration> {
    secs_var(
        "PAY_WEBHOOK_LEASE_SECS",
        v,
        DEFAULT_WEBHOOK_LEASE,
        WEBHOOK_LEASE_SECS,
    )
}

/// `PAY_WEBHOOK_CIRCUIT_AFTER_SECS` (1 s to 7 days) and `PAY_WEBHOOK_CIRCUIT_PAUSE_SECS`
/// (1 s to 1 hour, the longest pause).
fn webhook_circuit(
    after: Option<String>,
    pause: Option<String>,
) -> anyhow::Result<pay_domain::webhooks::CircuitRule> {
    let rule = pay_domain::webhooks::CircuitRule::default();
    let whole = |d: time::Duration| Duration::from_secs(d.whole_seconds().unsigned_abs());
    let after = secs_var(
        "PAY_WEBHOOK_CIRCUIT_AFTER_SECS",
        after,
        whole(rule.open_after),
        1..=7 * 24 * 3600,
    )?;
    let pause = secs_var(
        "PAY_WEBHOOK_CIRCUIT_PAUSE_SECS",
        pause,
        whole(rule.first_pause),
        1..=3600,
    )?;
    Ok(pay_domain::webhooks::CircuitRule {
        open_after: time::Duration::try_from(after)?,
        first_pause: time::Duration::try_from(pause)?,
        ..rule
    })
}

/// `PAY_EVENTS_RETENTION_DAYS`: whole days from 1 to 3650 (default 30).
fn events_retention(v: Option<String>) -> anyhow::Result<time::Duration> {
    let Some(v) = v else {
        return Ok(pay_domain::webhooks::EVENTS_KEPT_DEFAULT);
    };
    match v.trim().parse::<i64>() {
        Ok(days) if (1..=3650).contains(&days) => Ok(time::Duration::days(days)),
        _ => bail!("PAY_EVENTS_RETENTION_DAYS must be whole days from 1 to 3650, got {v:?}"),
    }
}

/// The invoice lead time when `PAY_BILLING_LEAD_SECS` is unset: 7 days.
pub const DEFAULT_BILLING_LEAD: Duration = Duration::from_secs(7 * 24 * 3600);
/// The range `PAY_BILLING_LEAD_SECS` may take: at due time to 90 days ahead.
const BILLING_LEAD_SECS: std::ops::RangeInclusive<u64> = 0..=90 * 24 * 3600;

/// `PAY_BILLING_LEAD_SECS`: whole seconds within `BILLING_LEAD_SECS`.
fn billing_lead(v: Option<String>) -> anyhow::Result<Duration> {
    secs_var(
        "PAY_BILLING_LEAD_SECS",
        v,
        DEFAULT_BILLING_LEAD,
        BILLING_LEAD_SECS,
    )
}

/// `PAY_APEX_HOST`: a bare host name (no scheme, port or path), lower-cased, other than the
/// host of `PAY_BASE_URL` (which would redirect to itself).
fn apex_host(v: Option<String>, base_url: &str) -> anyhow::Result<Option<String>> {
    let Some(v) = v else { return Ok(None) };
    let host = v.trim().trim_end_matches('.').to_ascii_lowercase();
    let valid = !host.is_empty()
        && host.len() <= 253
        && host.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        });
    if !valid {
        bail!("PAY_APEX_HOST must be a host name like example.com, got {v:?}");
    }
    let base_host = url::Url::parse(base_url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_ascii_lowercase));
    if base_host.as_deref() == Some(host.as_str()) {
        bail!("PAY_APEX_HOST must differ from the host of PAY_BASE_URL ({host})");
    }
    Ok(Some(host))
}

/// `PAY_METRICS_LISTEN`: host:port, not the address of `PAY_LISTEN`.
fn metrics_listen(v: Option<String>, listen: SocketAddr) -> anyhow::Result<Option<SocketAddr>> {
    let Some(v) = v else { return Ok(None) };
    let addr: SocketAddr = v.trim().parse().map_err(|_| {
        anyhow::anyhow!("PAY_METRICS_LISTEN must be host:port, e.g. 127.0.0.1:9090, got {v:?}")
    })?;
    if addr == listen && addr.port() != 0 {
        bail!("PAY_METRICS_LISTEN must differ from PAY_LISTEN ({listen})");
    }
    Ok(Some(addr))
}

/// The shortest `PAY_METRICS_TOKEN` accepted.
pub const METRICS_TOKEN_MIN_LEN: usize = 24;

/// `PAY_METRICS_TOKEN`: 24 to 256 characters of the token68 alphabet (RFC 7235: letters,
/// digits, `-._~+/=`), so it is sent as is in `Authorization: Bearer`.
fn metrics_token(v: Option<String>) -> anyhow::Result<Option<pay_domain::kernel::secret::Secret>> {
    let Some(v) = v else { return Ok(None) };
    let ok = (METRICS_TOKEN_MIN_LEN..=256).contains(&v.len())
        && v.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~+/=".contains(&b));
    if !ok {
        bail!(
            "PAY_METRICS_TOKEN must be {METRICS_TOKEN_MIN_LEN} to 256 characters of letters, digits and -._~+/= (e.g. openssl rand -hex 32)"
        );
    }
    Ok(Some(pay_domain::kernel::secret::Secret::new(v)))
}

/// `PAY_SMTP_URL`, checked at start (scheme, host, no password in clear to a remote host).
fn smtp_url(v: Option<String>) -> anyhow::Result<Option<pay_domain::kernel::secret::Secret>> {
    let Some(url) = v else { return Ok(None) };
    pay_mail::parse_smtp_url(url.trim()).map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(Some(pay_domain::kernel::secret::Secret::new(url.trim())))
}

/// `PAY_MAIL_FROM`, checked at start; `DEFAULT_MAIL_FROM` when unset.
fn mail_from(v: Option<String>) -> anyhow::Result<String> {
    let from = v.unwrap_or_else(|| DEFAULT_MAIL_FROM.to_owned());
    pay_mail::parse_from(&from).map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(from.trim().to_owned())
}

impl Config {
    pub fn from_env() -> anyhow::Result<Config> {
        let database_url = var("PAY_DATABASE_URL").unwrap_or_else(|| "sqlite://pay.db".into());
        let listen: SocketAddr = var("PAY_LISTEN")
            .unwrap_or_else(|| "127.0.0.1:8080".into())
            .parse()
            .context("PAY_LISTEN must be host:port, e.g. 127.0.0.1:8080")?;
        let local = format!("http://{listen}");
        let base_url = url_var("PAY_BASE_URL", &local)?;
        let cores = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2);
        // Two connections per core: more only queue database backends (or SQLite readers) on
        // the same cores, and the tail latency grows (measured on 2 cores: p99 5 ms with 4
        // connections, 400+ ms with 16, at the same throughput).
        let default_pool = (2 * cores).max(4) as u32;
        let pool_size = match var("PAY_DATABASE_POOL_SIZE") {
            Some(v) => v
                .parse()
                .context("PAY_DATABASE_POOL_SIZE must be a number")?,
            None => default_pool,
        };
        let workers = match var("PAY_WORKERS") {
            Some(v) => v.parse().context("PAY_WORKERS must be a number")?,
            None => cores,
        };
        let files = crate::files::FilesConfig::from_env(var, &database_url)?;
        let apex_host = apex_host(var("PAY_APEX_HOST"), &base_url)?;
        Ok(Config {
            auth_url: url_var("PAY_AUTH_URL", &base_url)?,
            public_pay_url: url_var("PAY_PUBLIC_PAY_URL", &base_url)?,
            base_url,
            database_url,
            listen,
            pool_size,
            workers,
            assets_file: var("PAY_ASSETS_FILE"),
            demo: bool_var("PAY_DEMO", true)?,
            read_cache: Duration::from_millis(match var("PAY_READ_CACHE_MS") {
                Some(v) => v
                    .parse()
                    .context("PAY_READ_CACHE_MS must be milliseconds")?,
                None => 1000,
            }),
            encryption_key: var("PAY_ENCRYPTION_KEY"),
            encryption_keys_old: var("PAY_ENCRYPTION_KEYS_OLD")
                .map(|v| {
                    v.split(',')
                        .map(|k| k.trim().to_owned())
                        .filter(|k| !k.is_empty())
                        .collect()
                })
                .unwrap_or_default(),
            allow_private_targets: bool_var("PAY_WEBHOOK_ALLOW_PRIVATE_TARGETS", false)?,
            dpop_nonces: bool_var("PAY_DPOP_NONCES", false)?,
            apex_host,
            dispatcher: bool_var("PAY_DISPATCHER", true)?,
            webhook_lease: webhook_lease(var("PAY_WEBHOOK_LEASE_SECS"))?,
            webhook_circuit: webhook_circuit(
                var("PAY_WEBHOOK_CIRCUIT_AFTER_SECS"),
                var("PAY_WEBHOOK_CIRCUIT_PAUSE_SECS"),
            )?,
            events_retention: events_retention(var("PAY_EVENTS_RETENTION_DAYS"))?,
            smtp_url: smtp_url(var("PAY_SMTP_URL"))?,
            mail_from: mail_from(var("PAY_MAIL_FROM"))?,
            processor: processor(var("PAY_PROCESSOR"), var("PAY_CHAINS_FILE").is_some())?,
            chains_file: var("PAY_CHAINS_FILE"),
            sandbox_prices_file: var("PAY_SANDBOX_PRICES_FILE"),
            rate_limits: rate_limits()?,
            billing_lead: billing_lead(var("PAY_BILLING_LEAD_SECS"))?,
            files,
            metrics_listen: metrics_listen(var("PAY_METRICS_LISTEN"), listen)?,
            metrics_token: metrics_token(var("PAY_METRICS_TOKEN"))?,
        })
    }

    /// A configuration for tests and embedding: the given database, port 0 on loopback.
    pub fn for_database(database_url: &str) -> Config {
        let listen: SocketAddr = ([127, 0, 0, 1], 0).into();
        Config {
            database_url: database_url.to_owned(),
            listen,
            base_url: "http://127.0.0.1".into(),
            auth_url: "http://127.0.0.1".into(),
            public_pay_url: "http://127.0.0.1".into(),
            pool_size: 4,
            workers: 1,
            assets_file: None,
            demo: false,
            read_cache: Duration::from_millis(1000),
            // A fixed test key: tests exercise real sealing without a key file.
            encryption_key: Some("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=".into()),
            encryption_keys_old: vec![],
            allow_private_targets: true,
            dpop_nonces: false,
            apex_host: None,
            dispatcher: false,
            webhook_lease: DEFAULT_WEBHOOK_LEASE,
            webhook_circuit: Default::default(),
            events_retention: pay_domain::webhooks::EVENTS_KEPT_DEFAULT,
            smtp_url: None,
            mail_from: DEFAULT_MAIL_FROM.into(),
            processor: "sandbox".into(),
            chains_file: None,
            sandbox_prices_file: None,
            rate_limits: RateLimits::default(),
            billing_lead: DEFAULT_BILLING_LEAD,
            // A directory of its own per configuration: test servers share the temporary
            // directory their databases are in.
            files: crate::files::FilesConfig::Local(
                std::env::temp_dir().join(format!("pay_files_{}", uuid::Uuid::new_v4().simple())),
            ),
            metrics_listen: None,
            metrics_token: None,
        }
    }

    /// The billing scheduler's settings: the lead time from `PAY_BILLING_LEAD_SECS`, the
    /// domain's defaults otherwise.
    pub fn billing(&self) -> pay_domain::subscriptions::BillingConfig {
        pay_domain::subscriptions::BillingConfig {
            invoice_lead: time::Duration::try_from(self.billing_lead)
                .unwrap_or(time::Duration::days(7)),
            ..Default::default()
        }
    }

    pub fn is_embedded(&self) -> bool {
        self.database_url.starts_with("sqlite:")
    }

    /// The keyring sealing secrets at rest: `PAY_ENCRYPTION_KEY`, or on the embedded default a
    /// key generated once into `pay.key` beside the database (mode 0600). PostgreSQL
    /// deployments must configure the key: several instances have to share it.
    pub fn keyring(&self) -> anyhow::Result<pay_webhooks::Keyring> {
        let old: Vec<&str> = self
            .encryption_keys_old
            .iter()
            .map(String::as_str)
            .collect();
        if let Some(key) = &self.encryption_key {
            return pay_webhooks::Keyring::from_base64(key, &old)
                .map_err(|e| anyhow::anyhow!("PAY_ENCRYPTION_KEY: {e}"));
        }
        if !self.is_embedded() {
            bail!("PAY_ENCRYPTION_KEY is required with PostgreSQL (base64 of 32 random bytes, the same on every instance)");
        }
        let db = self.database_url.trim_start_matches("sqlite://");
        let dir = std::path::Path::new(db)
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(std::path::Path::new("."));
        let path = dir.join("pay.key");
        let key = match std::fs::read_to_string(&path) {
            Ok(k) => k.trim().to_owned(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let (_, key) = pay_webhooks::Keyring::generate();
                write_private(&path, &key)?;
                tracing::warn!(path = %path.display(), "generated a new encryption key for secrets at rest; back it up with the database");
                key
            }
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        };
        pay_webhooks::Keyring::from_base64(&key, &old)
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
    }

    /// The sandbox price table: `PAY_SANDBOX_PRICES_FILE` or the built-in one.
    pub fn sandbox_prices(&self) -> anyhow::Result<pay_processor::SandboxPrices> {
        let Some(path) = &self.sandbox_prices_file else {
            return Ok(pay_processor::SandboxPrices::builtin());
        };
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {path}"))?;
        pay_processor::SandboxPrices::from_json(&text).map_err(|e| anyhow::anyhow!("{path}: {e}"))
    }

    /// The operator's asset catalogue: `PAY_ASSETS_FILE` (a JSON array of assets) or the
    /// built-in set; under `onchain`, the chains' assets join it (`chains::catalogue`).
    pub fn asset_catalogue(&self) -> anyhow::Result<AssetCatalogue> {
        let from_file = match &self.assets_file {
            None => None,
            Some(path) => {
                let text =
                    std::fs::read_to_string(path).with_context(|| format!("reading {path}"))?;
                let assets: Vec<DestinationAsset> =
                    serde_json::from_str(&text).with_context(|| format!("parsing {path}"))?;
                Some((path, assets))
            }
        };
        if self.processor == "onchain" {
            let chains = crate::chains::load(self)?;
            return crate::chains::catalogue(from_file.map(|(_, a)| a), &chains);
        }
        match from_file {
            None => Ok(AssetCatalogue::builtin()),
            Some((path, assets)) => {
                AssetCatalogue::new(assets).map_err(|e| anyhow::anyhow!("{path}: {e}"))
            }
        }
    }
}

/// Creates a file readable by its owner only, refusing to overwrite one.
fn write_private(path: &std::path::Path, contents: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut f = options
        .open(path)
        .with_context(|| format!("creating {}", path.display()))?;
    f.write_all(contents.as_bytes())?;
    f.sync_all()?;
    Ok(())
}

/// `PAY_PROCESSOR`: `sandbox` (the default) or `onchain`; `PAY_CHAINS_FILE` goes with
/// `onchain` only (a file the sandbox would silently ignore is refused).
fn processor(v: Option<String>, chains_file: bool) -> anyhow::Result<String> {
    match v.as_deref().map(str::trim) {
        None | Some("sandbox") if chains_file => {
            bail!("PAY_CHAINS_FILE is set but PAY_PROCESSOR is not onchain")
        }
        None | Some("sandbox") => Ok("sandbox".into()),
        Some("onchain") => Ok("onchain".into()),
        Some(other) => {
            bail!("PAY_PROCESSOR {other:?} is not a processor this build has (sandbox, onchain)")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_apex_host_is_a_bare_host_name_other_than_the_canonical_one() {
        let base = "https://pay.example.com";
        assert_eq!(apex_host(None, base).unwrap(), None);
        assert_eq!(
            apex_host(Some(" Example.COM. ".into()), base).unwrap(),
            Some("example.com".into())
        );
        for bad in [
            "",
            "https://example.com",
            "example.com:443",
            "example.com/x",
            "-a.example.com",
            "a..b",
            "pay.example.com",
        ] {
            let e = apex_host(Some(bad.into()), base).unwrap_err().to_string();
            assert!(e.contains("PAY_APEX_HOST"), "{bad}: {e}");
        }
    }

    #[test]
    fn the_processor_is_the_sandbox_unless_told_otherwise() {
        assert_eq!(processor(None, false).unwrap(), "sandbox");
        assert_eq!(processor(Some("sandbox".into()), false).unwrap(), "sandbox");
        assert_eq!(processor(Some("onchain".into()), true).unwrap(), "onchain");
        let e = processor(Some("stripe".into()), false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("PAY_PROCESSOR") && e.contains("stripe"), "{e}");
        let e = processor(None, true).unwrap_err().to_string();
        assert!(e.contains("PAY_CHAINS_FILE"), "{e}");
    }

    #[test]
    fn metrics_variables_are_strict() {
        let listen: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        assert_eq!(metrics_listen(None, listen).unwrap(), None);
        assert_eq!(
            metrics_listen(Some("127.0.0.1:9090".into()), listen).unwrap(),
            Some("127.0.0.1:9090".parse().unwrap())
        );
        for bad in [
            "9090",
            "localhost:9090",
            "127.0.0.1",
            "http://127.0.0.1:9090",
        ] {
            let e = metrics_listen(Some(bad.into()), listen)
                .unwrap_err()
                .to_string();
            assert!(e.contains("PAY_METRICS_LISTEN must be host:port"), "{e}");
        }
        let e = metrics_listen(Some("127.0.0.1:8080".into()), listen)
            .unwrap_err()
            .to_string();
        assert!(e.contains("must differ from PAY_LISTEN"), "{e}");
        assert!(metrics_token(None).unwrap().is_none());
        let ok = "0123456789abcdef0123456789abcdef";
        assert_eq!(
            metrics_token(Some(ok.into())).unwrap().unwrap().expose(),
            ok
        );
        for bad in [
            "short",
            "0123456789abcdef 0123456789abcdef",
            "0123456789abcdef0123456789abcdé",
        ] {
            let e = metrics_token(Some(bad.into())).unwrap_err().to_string();
            assert!(e.contains("PAY_METRICS_TOKEN must be"), "{e}");
            assert!(!e.contains(bad), "the token is not echoed: {e}");
        }
    }

    #[test]
    fn the_operator_replaces_the_sandbox_prices() {
        let path = std::env::temp_dir().join(format!("pay-prices-{}.json", std::process::id()));
        let mut c = Config::for_database("sqlite://x.db");
        c.sandbox_prices_file = Some(path.display().to_string());
        std::fs::write(&path, r#"{"assets": {"eip155:1/slip44:60": "3000"}}"#).unwrap();
        let prices = c.sandbox_prices().unwrap();
        use pay_domain::checkout::ports::PriceSource;
        assert_eq!(
            prices.price("eip155:1/slip44:60", "USD").unwrap(),
            Some(pay_domain::kernel::amount::Decimal::parse("3000").unwrap())
        );
        std::fs::write(&path, r#"{"assets": {"eip155:1/slip44:60": 3000}}"#).unwrap();
        assert!(c.sandbox_prices().is_err(), "numbers are refused");
        let _ = std::fs::remove_file(&path);
        c.sandbox_prices_file = Some("/nonexistent/prices.json".into());
        assert!(c.sandbox_prices().is_err());
        c.sandbox_prices_file = None;
        assert!(c.sandbox_prices().is_ok(), "the built-in table");
    }

    fn with_assets(name: &str, json: &str) -> anyhow::Result<AssetCatalogue> {
        let path =
            std::env::temp_dir().join(format!("pay-assets-{}-{name}.json", std::process::id()));
        std::fs::write(&path, json)?;
        let mut c = Config::for_database("sqlite://x.db");
        c.assets_file = Some(path.display().to_string());
        let r = c.asset_catalogue();
        let _ = std::fs::remove_file(&path);
        r
    }

    #[test]
    fn the_operator_replaces_the_asset_catalogue() {
        let c = with_assets(
            "ok",
            r#"[{"assetIdentifier": "eip155:10/erc20:0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85",
                 "chainCode": "optimism", "chainName": "OP Mainnet", "symbol": "USDC",
                 "name": "USD Coin", "decimals": 6, "defaultForNewCompanies": true}]"#,
        )
        .unwrap();
        assert_eq!(c.all().len(), 1);
        assert_eq!(c.default_for_new_companies().chain_code, "optimism");
    }

    #[test]
    fn an_invalid_catalogue_stops_the_start() {
        // No default, an unknown field, a bad identifier, not JSON.
        for (i, bad) in [
            r#"[{"assetIdentifier": "eip155:1/slip44:60", "chainCode": "ethereum", "chainName": "Ethereum", "symbol": "ETH", "name": "Ether", "decimals": 18}]"#,
            r#"[{"assetIdentifier": "eip155:1/slip44:60", "chainCode": "ethereum", "chainName": "Ethereum", "symbol": "ETH", "name": "Ether", "decimals": 18, "defaultForNewCompanies": true, "colour": "blue"}]"#,
            r#"[{"assetIdentifier": "ETH", "chainCode": "ethereum", "chainName": "Ethereum", "symbol": "ETH", "name": "Ether", "decimals": 18, "defaultForNewCompanies": true}]"#,
            "not json",
        ]
        .into_iter()
        .enumerate()
        {
            assert!(with_assets(&format!("bad{i}"), bad).is_err(), "{bad}");
        }
        let mut c = Config::for_database("sqlite://x.db");
        c.assets_file = Some("/nonexistent/assets.json".into());
        assert!(c.asset_catalogue().is_err());
        c.assets_file = None;
        assert_eq!(c.asset_catalogue().unwrap().all().len(), 9);
    }

    #[test]
    fn smtp_url_is_optional_and_checked() {
        assert!(smtp_url(None).unwrap().is_none());
        for ok in [
            "smtp://127.0.0.1:2525",
            " smtps://user:pw@smtp.example.com ",
            "smtp://user:pw@smtp.example.com:587?tls=required",
        ] {
            let got = smtp_url(Some(ok.into())).unwrap().unwrap();
            assert_eq!(got.expose(), ok.trim());
            assert_eq!(format!("{got:?}"), "***", "the URL may hold a password");
        }
        for bad in [
            "http://smtp.example.com",
            "smtp://",
            "smtp://user:hunter2@smtp.example.com",
            "smtp://smtp.example.com?tls=sometimes",
        ] {
            let e = smtp_url(Some(bad.into())).unwrap_err().to_string();
            assert!(e.starts_with("PAY_SMTP_URL"), "{e}");
            assert!(!e.contains("hunter2"), "{e}");
        }
    }

    #[test]
    fn events_are_kept_thirty_days_unless_configured() {
        assert_eq!(events_retention(None).unwrap(), time::Duration::days(30));
        assert_eq!(
            events_retention(Some(" 7 ".into())).unwrap(),
            time::Duration::days(7)
        );
        for bad in ["0", "3651", "-1", "1.5", "30d", ""] {
            let e = events_retention(Some(bad.into())).unwrap_err().to_string();
            assert!(e.contains("PAY_EVENTS_RETENTION_DAYS"), "{e}");
        }
    }

    #[test]
    fn the_webhook_circuit_opens_after_an_hour_and_pauses_five_minutes_unless_configured() {
        let rule = webhook_circuit(None, None).unwrap();
        assert_eq!(rule, pay_domain::webhooks::CircuitRule::default());
        assert_eq!(rule.open_after, time::Duration::hours(1));
        assert_eq!(rule.first_pause, time::Duration::minutes(5));
        let rule = webhook_circuit(Some("2".into()), Some(" 1 ".into())).unwrap();
        assert_eq!(rule.open_after, time::Duration::seconds(2));
        assert_eq!(rule.first_pause, time::Duration::seconds(1));
        assert_eq!(rule.max_pause, time::Duration::hours(1));
        for bad in ["0", "604801", "-1", "1.5", "soon"] {
            let e = webhook_circuit(Some(bad.into()), None)
                .unwrap_err()
                .to_string();
            assert!(e.contains("PAY_WEBHOOK_CIRCUIT_AFTER_SECS"), "{e}");
        }
        for bad in ["0", "3601", "5m"] {
            let e = webhook_circuit(None, Some(bad.into()))
                .unwrap_err()
                .to_string();
            assert!(e.contains("PAY_WEBHOOK_CIRCUIT_PAUSE_SECS"), "{e}");
        }
    }

    #[test]
    fn the_webhook_lease_is_a_minute_unless_configured() {
        assert_eq!(webhook_lease(None).unwrap(), Duration::from_secs(60));
        assert_eq!(
            DEFAULT_WEBHOOK_LEASE.as_secs(),
            pay_domain::webhooks::CLAIM_LEASE.whole_seconds() as u64
        );
        assert_eq!(
            webhook_lease(Some(" 5 ".into())).unwrap(),
            Duration::from_secs(5)
        );
        assert_eq!(
            webhook_lease(Some("3600".into())).unwrap(),
            Duration::from_secs(3600)
        );
        for bad in ["1", "0", "3601", "-5", "1.5", "5s", "soon"] {
            let e = webhook_lease(Some(bad.into())).unwrap_err().to_string();
            assert!(e.starts_with("PAY_WEBHOOK_LEASE_SECS"), "{e}");
        }
        assert_eq!(
            Config::for_database("sqlite://x.db").webhook_lease,
            DEFAULT_WEBHOOK_LEASE
        );
    }

    #[test]
    fn the_billing_lead_is_a_week_unless_configured() {
        assert_eq!(billing_lead(None).unwrap(), Duration::from_secs(604_800));
        assert_eq!(
            Config::for_database("sqlite://x.db").billing().invoice_lead,
            pay_domain::subscriptions::BillingConfig::default().invoice_lead,
            "the domain's default is the same week"
        );
        assert_eq!(billing_lead(Some("0".into())).unwrap(), Duration::ZERO);
        assert_eq!(
            billing_lead(Some(" 86400 ".into())).unwrap(),
            Duration::from_secs(86_400)
        );
        assert_eq!(
            billing_lead(Some("7776000".into())).unwrap(),
            Duration::from_secs(90 * 86_400)
        );
        for bad in ["7776001", "-1", "1.5", "7d", "soon"] {
            let e = billing_lead(Some(bad.into())).unwrap_err().to_string();
            assert!(e.starts_with("PAY_BILLING_LEAD_SECS"), "{e}");
        }
        let mut c = Config::for_database("sqlite://x.db");
        c.billing_lead = Duration::from_secs(3600);
        assert_eq!(c.billing().invoice_lead, time::Duration::hours(1));
    }

    #[test]
    fn mail_from_has_a_default_and_is_checked() {
        assert_eq!(mail_from(None).unwrap(), DEFAULT_MAIL_FROM);
        assert_eq!(
            mail_from(Some(" Shop <billing@shop.example> ".into())).unwrap(),
            "Shop <billing@shop.example>"
        );
        assert_eq!(
            mail_from(Some("billing@shop.example".into())).unwrap(),
            "billing@shop.example"
        );
        for bad in ["not an address", "Shop <>", "a@b@c"] {
            let e = mail_from(Some(bad.into())).unwrap_err().to_string();
            assert!(e.starts_with("PAY_MAIL_FROM"), "{e}");
        }
        let c = Config::for_database("sqlite://x.db");
        assert!(c.smtp_url.is_none());
        assert_eq!(c.mail_from, DEFAULT_MAIL_FROM);
    }
}
