//! The one connection type every query is written against, its pool manager and the per-backend
//! connection set-up. This is the only place (with migrations) that looks at the backend.

use std::fmt;

use diesel::connection::{
    AnsiTransactionManager, Connection, SimpleConnection, TransactionManager,
};
use diesel::r2d2::{CustomizeConnection, ManageConnection, R2D2Connection};
use diesel::result::QueryResult;
use diesel::{PgConnection, SqliteConnection};

use crate::Backend;

/// A pooled connection to either backend. Queries are written once against it; the derive
/// serialises them for whichever variant is live.
#[derive(diesel::MultiConnection)]
pub enum AnyConnection {
    /// A PostgreSQL connection.
    Postgresql(PgConnection),
    /// A SQLite connection.
    Sqlite(SqliteConnection),
}

/// A pool slot: the connection, and whether a query found it dead.
pub(crate) struct PoolConn {
    pub(crate) conn: AnyConnection,
    lost: bool,
}

impl PoolConn {
    /// Remembers a lost server connection so that the pool drops it instead of handing it out
    /// again: the pool does not ping on checkout (that would double every hot path's round
    /// trips), so after a server restart each stale connection fails exactly one call.
    pub(crate) fn note_error(&mut self, e: &diesel::result::Error) {
        use diesel::result::{DatabaseErrorKind, Error};
        if let Error::DatabaseError(
            DatabaseErrorKind::ClosedConnection | DatabaseErrorKind::UnableToSendCommand,
            _,
        ) = e
        {
            self.lost = true;
        }
    }
}

/// Opens connections of the backend chosen from the URL.
///
/// Not `diesel::r2d2::ConnectionManager<AnyConnection>`: the derived `establish` tries every
/// variant in turn and throws the errors away, so an unreachable PostgreSQL server would be
/// reported as "Invalid connection url" (after also trying to open the URL as a SQLite file).
pub(crate) struct AnyManager {
    backend: Backend,
    /// For SQLite, the file path (`sqlite://` stripped); for PostgreSQL the URL as given.
    target: String,
}

impl AnyManager {
    pub(crate) fn new(backend: Backend, target: String) -> Self {
        AnyManager { backend, target }
    }
}

// The PostgreSQL URL may hold a password.
impl fmt::Debug for AnyManager {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnyManager")
            .field("backend", &self.backend)
            .finish_non_exhaustive()
    }
}

impl ManageConnection for AnyManager {
    type Connection = PoolConn;
    type Error = diesel::r2d2::Error;

    fn connect(&self) -> Result<PoolConn, Self::Error> {
        let conn = match self.backend {
            Backend::Postgres => {
                PgConnection::establish(&self.target).map(AnyConnection::Postgresql)
            }
            Backend::Sqlite => SqliteConnection::establish(&self.target).map(AnyConnection::Sqlite),
        };
        let conn = conn.map_err(diesel::r2d2::Error::ConnectionError)?;
        Ok(PoolConn { conn, lost: false })
    }

    fn is_valid(&self, c: &mut PoolConn) -> Result<(), Self::Error> {
        c.conn.ping().map_err(diesel::r2d2::Error::QueryError)
    }

    fn has_broken(&self, c: &mut PoolConn) -> bool {
        // `is_broken`: a transaction that could not be closed.
        c.lost || c.conn.is_broken()
    }
}

/// SQLite settings that live on the connection, not in the file, so every new connection of the
/// pool needs them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SqlitePragmas;

/// `busy_timeout` comes first: switching a fresh file to WAL needs the write lock, and several
/// pool connections open at once would otherwise fail with SQLITE_BUSY instead of waiting.
/// `cache_size`: 512 KiB of page cache per connection instead of SQLite's 2 MiB. Each pool
/// connection fills its own cache as the file grows, so the default made the resident memory
/// climb by up to 2 MiB per connection over the first minutes of a write-heavy load (19 % in
/// ten minutes of `bench/soak.py`, 9.8 % with this); the hot pages stay cached and the rest are
/// in the operating system's file cache. "Its own" needs SQLite built without
/// `SQLITE_ENABLE_MEMORY_MANAGEMENT` (see `.cargo/config.toml` and [`shares_page_cache`]).
const SQLITE_PRAGMAS: &str = "PRAGMA busy_timeout = 5000; \
                              PRAGMA journal_mode = WAL; \
                              PRAGMA synchronous = NORMAL; \
                              PRAGMA foreign_keys = ON; \
                              PRAGMA cache_size = -512;";

/// The options the linked SQLite was compiled with (`PRAGMA compile_options`, without the
/// `SQLITE_` prefix).
fn compile_options(c: &mut diesel::SqliteConnection) -> QueryResult<Vec<String>> {
    #[derive(diesel::QueryableByName)]
    struct CompileOption {
        #[diesel(sql_type = diesel::sql_types::Text)]
        compile_options: String,
    }
    let options: Vec<CompileOption> =
        diesel::RunQueryDsl::load(diesel::sql_query("PRAGMA compile_options"), c)?;
    Ok(options.into_iter().map(|o| o.compile_options).collect())
}

/// Whether the linked SQLite puts every connection's page cache into one shared group
/// (`SQLITE_ENABLE_MEMORY_MANAGEMENT`, on in libsqlite3-sys's bundled build). In the server
/// that group stopped keeping the readers' pages as the file grew: a list of 200 links read
/// 100-330 pages from the file per request. This workspace builds SQLite without it
/// (`.cargo/config.toml`); a host embedding this crate in its own workspace should do the same,
/// and `DieselStore::connect` warns when it did not.
pub(crate) fn shares_page_cache(c: &mut diesel::SqliteConnection) -> QueryResult<bool> {
    Ok(compile_options(c)?
        .iter()
        .any(|o| o == "ENABLE_MEMORY_MANAGEMENT"))
}

/// Whether the linked SQLite keeps a prepared statement's plan independent of the values bound
/// to it (`SQLITE_ENABLE_QPSG`). Without it, a bound `LIMIT ?` (diesel's `.first()` and
/// `.limit(n)`) marks its statement to be prepared again each time a value is bound, so the
/// statement cache saves nothing for those reads: the link detail parsed and planned two of its
/// three statements on every request. This workspace builds SQLite with it
/// (`.cargo/config.toml`); `DieselStore::connect` warns when a host's build does not.
pub(crate) fn plans_ignore_bound_values(c: &mut diesel::SqliteConnection) -> QueryResult<bool> {
    Ok(compile_options(c)?.iter().any(|o| o == "ENABLE_QPSG"))
}

impl CustomizeConnection<PoolConn, diesel::r2d2::Error> for SqlitePragmas {
    fn on_acquire(&self, c: &mut PoolConn) -> Result<(), diesel::r2d2::Error> {
        if let AnyConnection::Sqlite(c) = &mut c.conn {
            c.batch_execute(SQLITE_PRAGMAS)
                .map_err(diesel::r2d2::Error::QueryError)?;
        }
        Ok(())
    }
}

/// The SQLite file of the DPoP replay table of older builds, beside the database at `path`
/// (now the records live in `replay::table_file`; `replay` takes this one over).
pub(crate) fn replay_file(path: &str) -> String {
    format!("{path}-dpop")
}

/// A connection to the database at `path` with the server's pragmas, on which the replay
/// store reads the OAuth revocation generation after each record (`replay`).
pub(crate) fn open_generation_conn(path: &str) -> Result<AnyConnection, diesel::r2d2::Error> {
    let mut db = SqliteConnection::establish(path).map_err(diesel::r2d2::Error::ConnectionError)?;
    db.batch_execute(SQLITE_PRAGMAS)
        .map_err(diesel::r2d2::Error::QueryError)?;
    Ok(AnyConnection::Sqlite(db))
}

/// An older build's replay file ([`replay_file`]), its records in `dpop_replays` (those of the
/// text layout moved there first), to be read once by `replay`.
pub(crate) fn open_old_replay_file(path: &str) -> Result<SqliteConnection, diesel::r2d2::Error> {
    let mut c = SqliteConnection::establish(&replay_file(path))
        .map_err(diesel::r2d2::Error::ConnectionError)?;
    c.batch_execute(SQLITE_PRAGMAS)
        .and_then(|()| {
            c.batch_execute(
                "CREATE TABLE IF NOT EXISTS dpop_replays (\
                     key BLOB NOT NULL PRIMARY KEY, \
                     keep_until BIGINT NOT NULL) WITHOUT ROWID;",
            )
        })
        .and_then(|()| adopt_text_records(&mut c))
        .map_err(diesel::r2d2::Error::QueryError)?;
    Ok(c)
}

/// A replay file written before the 16-byte keys (table `dpop_jtis`: `htu` and the hex `jti`
/// digest as text) has its records moved into `dpop_replays` under their keys, and the old
/// table dropped, in one transaction: a proof recorded before the upgrade stays a replay after
/// it. An instance of the older build still running on the file then fails its records (the
/// table is gone) rather than accept a replay: upgrade the instances of a host together.
fn adopt_text_records(c: &mut SqliteConnection) -> QueryResult<()> {
    use crate::schema::dpop_jtis;

    #[derive(diesel::QueryableByName)]
    struct Present {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    let present = diesel::RunQueryDsl::get_result::<Present>(
        diesel::sql_query(
            "SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'dpop_jtis'",
        ),
        c,
    )?;
    if present.n == 0 {
        return Ok(());
    }
    c.immediate_transaction(|c| {
        let rows: Vec<(String, String, i64)> = diesel::RunQueryDsl::load(
            diesel::QueryDsl::select(
                dpop_jtis::table,
                (dpop_jtis::htu, dpop_jtis::jti_digest, dpop_jtis::keep_until),
            ),
            c,
        )?;
        for (htu, jti_digest, keep_until) in rows {
            let key = crate::replay::replay_key(&htu, &jti_digest);
            diesel::RunQueryDsl::execute(
                diesel::insert_or_ignore_into(crate::replay::dpop_replays::table).values((
                    diesel::ExpressionMethods::eq(crate::replay::dpop_replays::key, &key[..]),
                    diesel::ExpressionMethods::eq(
                        crate::replay::dpop_replays::keep_until,
                        keep_until,
                    ),
                )),
                c,
            )?;
        }
        c.batch_execute("DROP TABLE dpop_jtis")
    })
}

/// Runs `f` in a write transaction. On SQLite it starts with `BEGIN IMMEDIATE`: a deferred
/// transaction takes a read lock first and, when two of them then try to write, one fails with
/// SQLITE_BUSY without waiting for the busy timeout (a lock-upgrade deadlock).
///
/// The inner connection's transaction manager opens the transaction, and the enum's (which
/// delegates to that same manager) closes it, so diesel's depth bookkeeping stays consistent.
pub(crate) fn write_transaction<T, F>(conn: &mut AnyConnection, f: F) -> QueryResult<T>
where
    F: FnOnce(&mut AnyConnection) -> QueryResult<T>,
{
    match conn {
        AnyConnection::Sqlite(c) => {
            AnsiTransactionManager::begin_transaction_sql(c, "BEGIN IMMEDIATE")?
        }
        AnyConnection::Postgresql(c) => AnsiTransactionManager::begin_transaction(c)?,
    }
    match f(conn) {
        Ok(value) => {
            <AnyConnection as TransactionManager<AnyConnection>>::commit_transaction(conn)?;
            Ok(value)
        }
        Err(e) => {
            // The caller needs the first error; a failed rollback marks the connection broken,
            // so the pool discards it.
            if let Err(rollback) =
                <AnyConnection as TransactionManager<AnyConnection>>::rollback_transaction(conn)
            {
                tracing::warn!(error = %rollback, "rollback failed");
            }
            Err(e)
        }
    }
}

/// Rolls back whatever transaction is open on `conn` (after a write panicked inside one):
/// otherwise every later statement on the SQLite writer would run inside it, never committed.
pub(crate) fn roll_back_open(conn: &mut AnyConnection) {
    // The enum's transaction manager is the live connection's.
    type Manager = <AnyConnection as Connection>::TransactionManager;
    let open = |conn: &mut AnyConnection| {
        Manager::transaction_manager_status_mut(conn)
            .transaction_depth()
            .map_or(true, |d| d.is_some())
    };
    while open(conn) {
        if let Err(e) = Manager::rollback_transaction(conn) {
            tracing::warn!(error = %e, "rolling back after a panicked write");
            // Start over from the database's side, and diesel's bookkeeping with it.
            let _ = conn.batch_execute("ROLLBACK");
            *Manager::transaction_manager_status_mut(conn) = Default::default();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh SQLite file's path in the temporary directory.
    fn temp_file(tag: &str) -> String {
        std::env::temp_dir()
            .join(format!(
                "pay_test_{tag}_{}.sqlite",
                uuid::Uuid::new_v4().simple()
            ))
            .display()
            .to_string()
    }

    fn remove(path: &str) {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{path}{suffix}"));
        }
    }

    fn open(path: &str) -> AnyConnection {
        let mut c = AnyManager::new(Backend::Sqlite, path.to_owned())
            .connect()
            .unwrap();
        SqlitePragmas.on_acquire(&mut c).unwrap();
        c.conn
    }

    /// The workspace builds SQLite without `SQLITE_ENABLE_MEMORY_MANAGEMENT`
    /// (`.cargo/config.toml`): with it, every connection's page cache is one shared group, and
    /// the server's list re-read its pages from the file once the file passed about 100 MB.
    #[test]
    fn sqlite_connections_keep_their_own_page_cache() {
        let mut c = diesel::SqliteConnection::establish(":memory:").unwrap();
        assert!(!shares_page_cache(&mut c).unwrap());
    }

    /// The workspace builds SQLite with `SQLITE_ENABLE_QPSG` (`.cargo/config.toml`): without
    /// it, every cached statement with a bound `LIMIT` was prepared again on each use.
    #[test]
    fn sqlite_plans_do_not_depend_on_bound_values() {
        let mut c = diesel::SqliteConnection::establish(":memory:").unwrap();
        assert!(plans_ignore_bound_values(&mut c).unwrap());
    }

    /// A write that panics inside its transaction on the SQLite writer: the transaction is
    /// rolled back, and the next write commits as usual (it would otherwise run inside the
    /// abandoned transaction and never be committed).
    #[test]
    fn a_panicked_write_leaves_no_transaction_open_on_the_writer() {
        use diesel::sql_types::BigInt;
        #[derive(diesel::QueryableByName)]
        struct Count {
            #[diesel(sql_type = BigInt)]
            c: i64,
        }
        let path = temp_file("panic");
        let mut writer = open(&path);
        writer
            .batch_execute("CREATE TABLE t (n BIGINT NOT NULL)")
            .unwrap();
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            write_transaction(&mut writer, |c| -> QueryResult<()> {
                c.batch_execute("INSERT INTO t VALUES (1)")?;
                panic!("a write that panics")
            })
        }));
        assert!(panicked.is_err());
        roll_back_open(&mut writer);
        write_transaction(&mut writer, |c| c.batch_execute("INSERT INTO t VALUES (2)")).unwrap();
        let rows = diesel::RunQueryDsl::load::<Count>(
            diesel::sql_query("SELECT count(*) AS c FROM t"),
            &mut open(&path),
        )
        .unwrap();
        remove(&path);
        assert_eq!(rows[0].c, 1, "only the second write, committed");
    }

    /// Two transactions that read and then write: with a deferred BEGIN both hold a read
    /// snapshot when they try to write, and one fails at once with "database is locked".
    #[test]
    fn sqlite_write_transactions_queue_instead_of_failing() {
        let path = temp_file("tx");
        open(&path)
            .batch_execute("CREATE TABLE t (n BIGINT NOT NULL)")
            .unwrap();
        let writers: Vec<_> = (0..2)
            .map(|_| {
                let path = path.clone();
                std::thread::spawn(move || {
                    let mut conn = open(&path);
                    write_transaction(&mut conn, |c| {
                        c.batch_execute("SELECT count(*) FROM t")?;
                        std::thread::sleep(std::time::Duration::from_millis(200));
                        c.batch_execute("INSERT INTO t VALUES (1)")
                    })
                })
            })
            .collect();
        let results: Vec<_> = writers.into_iter().map(|w| w.join().unwrap()).collect();
        remove(&path);
        for r in results {
            r.unwrap();
        }
    }
}
