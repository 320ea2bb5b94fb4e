//! Storage adapter of the payment service: every `pay_domain::ports` store trait, implemented
//! once with diesel for both SQLite and PostgreSQL behind a single connection pool.

mod cache;
mod conn;
mod ports;
mod replay;
mod rows;
mod schema;
#[cfg(feature = "testing")]
pub mod testing;
mod tokens;

use std::fmt;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use diesel::r2d2::{Pool, PooledConnection};
use diesel_migrations::{embed_migrations, EmbeddedMigrations, MigrationHarness};
use pay_domain::Fault;

use crate::cache::ReadCache;
use crate::conn::{AnyConnection, AnyManager, PoolConn, SqlitePragmas};
use crate::tokens::TokenCache;

/// One migration set for both backends: every step's SQL runs unchanged on SQLite and
/// PostgreSQL (`tests/schema.rs` checks that both end at the same schema). A step whose SQL
/// truly differs would get a backend-specific set beside it.
const MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../migrations");

/// Serialises concurrent `migrate` calls (several server instances starting at once) on one
/// PostgreSQL database; an arbitrary constant shared by every instance of this service.
const MIGRATION_LOCK_KEY: i64 = 0x0070_6179_5f6d_6967; // "pay_mig"

/// Where the database is and how many connections to keep.
#[derive(Clone)]
pub struct StoreConfig {
    /// `sqlite://<path>` (relative or absolute; the file is created when missing), or
    /// `postgres://…` / `postgresql://…`.
    pub url: String,
    /// Pool size.
    pub max_connections: u32,
}

// The URL may carry a password.
impl fmt::Debug for StoreConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = self.url.split_once("://").map_or("?", |(s, _)| s);
        f.debug_struct("StoreConfig")
            .field("url", &format_args!("{scheme}://***"))
            .field("max_connections", &self.max_connections)
            .finish()
    }
}

/// The database product behind a store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// SQLite (a local file).
    Sqlite,
    /// PostgreSQL.
    Postgres,
}

impl Backend {
    /// The backend a URL names, and what to hand to the driver (for SQLite the bare path, so
    /// that `?`, `#` or `%` in a file name are not read as URI syntax).
    fn from_url(url: &str) -> Result<(Backend, String), StoreError> {
        if let Some(path) = url.strip_prefix("sqlite://") {
            if path.is_empty() {
                return Err(StoreError::InvalidUrl("sqlite:// needs a file path".into()));
            }
            // Every pooled connection would get its own, separate, empty database.
            if path.contains(":memory:") || path.contains("mode=memory") {
                return Err(StoreError::InvalidUrl(
                    "in-memory SQLite cannot be pooled; use a file".into(),
                ));
            }
            Ok((Backend::Sqlite, path.to_owned()))
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Ok((Backend::Postgres, url.to_owned()))
        } else {
            Err(StoreError::InvalidUrl(
                "expected sqlite://<path>, postgres://… or postgresql://…".into(),
            ))
        }
    }
}

/// Why the store could not be opened or migrated. Messages never contain the URL.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The URL names no supported backend, or no file.
    #[error("invalid database url: {0}")]
    InvalidUrl(String),
    /// The first connection failed (server down, bad credentials, unwritable file…).
    #[error("cannot connect to the database: {0}")]
    Connect(#[source] diesel::r2d2::Error),
    /// No pooled connection could be obtained.
    #[error("connection pool: {0}")]
    Pool(#[from] diesel::r2d2::PoolError),
    /// A migration failed; the database holds every migration before it.
    #[error("migration failed: {0}")]
    Migration(String),
}

impl From<StoreError> for Fault {
    fn from(e: StoreError) -> Self {
        Fault::caused("database unavailable", e)
    }
}

/// The diesel store: a pool of SQLite or PostgreSQL connections. Cheap to clone (the pool is
/// shared). Methods block; call them from a blocking pool on an async runtime.
#[derive(Clone)]
pub struct DieselStore {
    pool: Pool<AnyManager>,
    backend: Backend,
    /// SQLite admits one writer at a time, and writers that collide inside SQLite back off by
    /// sleeping whole milliseconds (its busy handler). So on SQLite every write goes through
    /// this one dedicated connection, queued on an in-process lock: no busy sleeps, and its
    /// page cache stays warm instead of being invalidated by other connections' writes.
    /// `None` on PostgreSQL, where pooled connections write concurrently.
    writer: Option<Arc<Mutex<PoolConn>>>,
    /// On SQLite, the DPoP replay table: a hash table in a file of its own beside the database,
    /// shared by every process on the host ([`replay`]): a `jti` recorded per DPoP request
    /// is one read and one write of the page cache under a lock on that file, so it neither
    /// queues behind the database's writes nor empties every reader's page cache of the main
    /// file, and waits on no commit. `None` on PostgreSQL.
    jtis: Option<Arc<replay::ReplayFile>>,
    /// Hot reads (key lookup, company with settings); off unless `with_read_cache`.
    cache: Arc<ReadCache>,
    /// DPoP-bound access tokens with the revocation generation each was read under, served
    /// only while the generation is unchanged ([`tokens`]): no revocation is ever missed.
    tokens: Arc<TokenCache>,
}

impl fmt::Debug for DieselStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.pool.state();
        f.debug_struct("DieselStore")
            .field("backend", &self.backend)
            .field("max_connections", &self.pool.max_size())
            .field("connections", &state.connections)
            .field("idle_connections", &state.idle_connections)
            .finish()
    }
}

impl DieselStore {
    /// Opens a pool of `max_connections` connections to `cfg.url`. One connection is made
    /// up front so that a wrong URL or an unreachable server fails here, with the driver's
    /// reason, rather than as a pool timeout.
    pub fn connect(cfg: &StoreConfig) -> Result<DieselStore, StoreError> {
        let (backend, target) = Backend::from_url(&cfg.url)?;
        if backend == Backend::Sqlite {
            check_sqlite_dir(&target)?;
        }
        let manager = AnyManager::new(backend, target.clone());
        let mut probe =
            diesel::r2d2::ManageConnection::connect(&manager).map_err(StoreError::Connect)?;
        if backend == Backend::Sqlite {
            // Also catches a file that is not a database, before the pool hides the reason.
            diesel::r2d2::CustomizeConnection::on_acquire(&SqlitePragmas, &mut probe)
                .map_err(StoreError::Connect)?;
            if let AnyConnection::Sqlite(c) = &mut probe.conn {
                if conn::shares_page_cache(c).unwrap_or(false) {
                    tracing::warn!(
                        "SQLite was built with SQLITE_ENABLE_MEMORY_MANAGEMENT: all connections \
                         share one page cache, and reads slow down as the file grows; build \
                         with LIBSQLITE3_FLAGS=\"-USQLITE_ENABLE_MEMORY_MANAGEMENT \
                         -DSQLITE_ENABLE_QPSG\""
                    );
                }
                if !conn::plans_ignore_bound_values(c).unwrap_or(true) {
                    tracing::warn!(
                        "SQLite was built without SQLITE_ENABLE_QPSG: reads with a bound LIMIT \
                         are prepared again on every use; build with \
                         LIBSQLITE3_FLAGS=\"-USQLITE_ENABLE_MEMORY_MANAGEMENT \
                         -DSQLITE_ENABLE_QPSG\""
                    );
                }
            }
        }
        let jtis = match backend {
            Backend::Sqlite => {
                let db = conn::open_generation_conn(&target).map_err(StoreError::Connect)?;
                let file = replay::ReplayFile::open(&target, db).map_err(|e| {
                    StoreError::Connect(diesel::r2d2::Error::ConnectionError(
                        diesel::ConnectionError::BadConnection(e),
                    ))
                })?;
                Some(Arc::new(file))
            }
            Backend::Postgres => None,
        };
        // On SQLite the probe stays on as the single writer connection.
        let writer = (backend == Backend::Sqlite).then(|| Arc::new(Mutex::new(probe)));
        // No ping on checkout: it would be a second round trip on every call; `PoolConn`
        // retires connections that turn out dead instead.
        let mut builder = Pool::builder()
            .max_size(cfg.max_connections.max(1))
            .test_on_check_out(false);
        if backend == Backend::Sqlite {
            builder = builder.connection_customizer(Box::new(SqlitePragmas));
        }
        let pool = builder.build(manager)?;
        tracing::debug!(
            ?backend,
            max_connections = cfg.max_connections,
            "database pool ready"
        );
        Ok(DieselStore {
            pool,
            backend,
            writer,
            jtis,
            cache: Arc::new(ReadCache::new(Duration::ZERO)),
            tokens: Arc::new(TokenCache::default()),
        })
    }

    /// Runs the pending embedded migrations of this backend's set; returns how many ran.
    pub fn migrate(&self) -> Result<usize, StoreError> {
        let mut conn = self.pool.get()?;
        let ran = match &mut conn.conn {
            AnyConnection::Sqlite(c) => c.run_pending_migrations(MIGRATIONS).map(|v| v.len()),
            AnyConnection::Postgresql(c) => migrate_postgres(c),
        }
        .map_err(|e| StoreError::Migration(e.to_string()))?;
        if let AnyConnection::Sqlite(c) = &mut conn.conn {
            tokens::install_sqlite_triggers(c).map_err(|e| StoreError::Migration(e.to_string()))?;
        }
        ports::links::fill_search_text(&mut conn.conn)
            .map_err(|e| StoreError::Migration(e.to_string()))?;
        if ran > 0 {
            tracing::info!(ran, backend = ?self.backend, "database migrations applied");
        }
        Ok(ran)
    }

    /// Caches the key lookup and company-with-settings reads for `ttl`. Writes through this
    /// store invalidate at once; another instance's writes are seen after at most `ttl`
    /// (a disabled key keeps working there that long). Zero turns the cache off.
    pub fn with_read_cache(mut self, ttl: Duration) -> Self {
        self.cache = Arc::new(ReadCache::new(ttl));
        self
    }

    /// The pool's connections now: `(open, idle, max)` (those in use are `open - idle`).
    pub fn pool_state(&self) -> (u32, u32, u32) {
        let state = self.pool.state();
        (
            state.connections,
            state.idle_connections,
            self.pool.max_size(),
        )
    }

    /// Which database this store talks to.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    pub(crate) fn conn(&self) -> Result<PooledConnection<AnyManager>, Fault> {
        self.pool
            .get()
            .map_err(|e| Fault::unavailable("database pool", e))
    }
}

type MigrationResult<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

fn migrate_postgres(c: &mut diesel::PgConnection) -> MigrationResult<usize> {
    use diesel::RunQueryDsl;
    diesel::sql_query("SELECT pg_advisory_lock($1)")
        .bind::<diesel::sql_types::BigInt, _>(MIGRATION_LOCK_KEY)
        .execute(c)?;
    let ran = c.run_pending_migrations(MIGRATIONS).map(|v| v.len());
    // The generation's triggers, under the same lock (their syntax is PostgreSQL's own).
    let ran = ran.and_then(|ran| Ok(tokens::install_postgres_triggers(c).map(|()| ran)?));
    // Session-level lock: release it even when a migration failed, or the pooled connection
    // would keep blocking other instances.
    let unlock = diesel::sql_query("SELECT pg_advisory_unlock($1)")
        .bind::<diesel::sql_types::BigInt, _>(MIGRATION_LOCK_KEY)
        .execute(c);
    let ran = ran?;
    unlock?;
    Ok(ran)
}

/// SQLite creates a missing file but not a missing directory, and then only says "unable to
/// open database file".
fn check_sqlite_dir(path: &str) -> Result<(), StoreError> {
    match Path::new(path).parent() {
        Some(dir) if !dir.as_os_str().is_empty() && !dir.is_dir() => Err(StoreError::InvalidUrl(
            format!("directory {} does not exist", dir.display()),
        )),
        _ => Ok(()),
    }
}
