//! PostgreSQL through the `postgres` crate: connecting (TLS by rustls when the URL's `sslmode` asks
//! for it, a connect timeout, a statement timeout), statements prepared once per connection, and
//! values converted to and from [`Arg`] and [`Cell`].

use std::collections::HashMap;
use std::time::Duration;

use postgres::types::{IsNull, ToSql, Type};

use super::{dollar_placeholders, storage, Arg, Cell, Row};
use crate::error::{Error, Result};

/// How long connecting may take before the store gives up with a `STORAGE` error.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How long one statement may run on the server.
const STATEMENT_TIMEOUT_MS: u64 = 120_000;

/// The version of the PostgreSQL schema this build writes and understands (`sna_schema.version`).
pub(crate) const SCHEMA_VERSION: i64 = 4;

/// Migrations, index `i` takes the schema from version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[include_str!("../../schema/pg-v1.sql"), include_str!("../../schema/pg-v2.sql"), include_str!("../../schema/pg-v3.sql"), include_str!("../../schema/pg-v4.sql")];

/// The advisory lock that serializes migrations of one database ("SNAH").
const MIGRATION_LOCK: i64 = 0x534e_4148;

/// The statements prepared on a connection, and whether an error said the connection is lost.
#[derive(Default)]
struct State {
    statements: HashMap<String, postgres::Statement>,
    broken: bool,
}

impl State {
    /// A `STORAGE` error for `e`; an error that is not the server's answer to a statement (the
    /// socket closed or failed, the server shutting the session down) marks the connection lost,
    /// so that the next call connects again.
    fn fail(&mut self, context: &str, e: postgres::Error) -> Error {
        let shutdown = e.code().is_some_and(|c| {
            [postgres::error::SqlState::ADMIN_SHUTDOWN, postgres::error::SqlState::CRASH_SHUTDOWN, postgres::error::SqlState::CANNOT_CONNECT_NOW].contains(c)
        });
        if shutdown || e.is_closed() || e.as_db_error().is_none() {
            self.broken = true;
        }
        storage(context, PgError(e))
    }
}

/// A driver error shown with what the server said (the driver's own text is only "db error").
#[derive(Debug)]
pub(crate) struct PgError(pub postgres::Error);

impl std::fmt::Display for PgError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0.as_db_error() {
            Some(db) => {
                write!(f, "{}", db.message())?;
                if let Some(detail) = db.detail() {
                    write!(f, " ({detail})")?;
                }
                Ok(())
            }
            None => {
                write!(f, "{}", self.0)?;
                let mut source = std::error::Error::source(&self.0);
                while let Some(e) = source {
                    write!(f, ": {e}")?;
                    source = e.source();
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for PgError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

/// A connection and the statements prepared on it.
pub(crate) struct PgConn {
    client: postgres::Client,
    state: State,
    /// What to connect to again when the server dropped the connection.
    url: String,
}

/// A transaction of a [`PgConn`].
pub(crate) struct PgTx<'c> {
    tx: postgres::Transaction<'c>,
    state: &'c mut State,
}

/// `url` as it may be shown: without its password.
pub(crate) fn shown(url: &str) -> String {
    match url.parse::<postgres::Config>() {
        Ok(config) => {
            let host = config
                .get_hosts()
                .first()
                .map(|h| match h {
                    postgres::config::Host::Tcp(name) => name.clone(),
                    postgres::config::Host::Unix(path) => path.display().to_string(),
                })
                .unwrap_or_else(|| "localhost".into());
            let port = config.get_ports().first().copied().unwrap_or(5432);
            let db = config.get_dbname().unwrap_or("");
            format!("postgres://{host}:{port}/{db}")
        }
        Err(_) => "the PostgreSQL URL".into(),
    }
}

/// Connects to `url` and brings its schema to [`SCHEMA_VERSION`]: a database of a newer schema is
/// refused untouched, and so is one that holds a `sessions` table not made by sna-history.
pub(crate) fn open(url: &str) -> Result<PgConn> {
    let mut conn = PgConn::connect(url)?;
    migrate(&mut conn.client, &shown(url))?;
    Ok(conn)
}

fn migrate(client: &mut postgres::Client, shown: &str) -> Result<()> {
    let context = format!("cannot migrate {shown}");
    let fail = |e: postgres::Error| storage(&context, PgError(e));
    let mut tx = client.transaction().map_err(fail)?;
    // Another process may be migrating the same database: one at a time.
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK]).map_err(fail)?;
    let exists = |tx: &mut postgres::Transaction<'_>, table: &str| -> Result<bool> {
        Ok(tx.query_one("SELECT to_regclass($1) IS NOT NULL", &[&table]).map_err(fail)?.get(0))
    };
    let version = if exists(&mut tx, "sna_schema")? {
        let row = tx.query_opt("SELECT version FROM sna_schema LIMIT 1", &[]).map_err(fail)?;
        row.map_or(0, |r| r.get::<_, i64>(0))
    } else {
        if exists(&mut tx, "sessions")? {
            return Err(Error::invalid(format!(
                "{shown} holds a sessions table that sna-history did not make (no sna_schema table): it is left untouched"
            )));
        }
        tx.batch_execute("CREATE TABLE sna_schema (version BIGINT NOT NULL, application TEXT NOT NULL)").map_err(fail)?;
        0
    };
    if version > SCHEMA_VERSION {
        return Err(Error::SchemaTooNew { path: shown.to_string(), found: version, supported: SCHEMA_VERSION });
    }
    if version == SCHEMA_VERSION {
        return tx.commit().map_err(fail);
    }
    let Ok(from) = usize::try_from(version) else {
        return Err(Error::invalid(format!("{shown} has schema version {version}, which no sna-history writes (left untouched)")));
    };
    for step in &MIGRATIONS[from..] {
        tx.batch_execute(step).map_err(fail)?;
    }
    tx.execute("DELETE FROM sna_schema", &[]).map_err(fail)?;
    tx.execute("INSERT INTO sna_schema (version, application) VALUES ($1, 'sna-history')", &[&SCHEMA_VERSION]).map_err(fail)?;
    tx.commit().map_err(fail)
}

impl PgConn {
    /// Connects to the server `url` names (`postgres://user:password@host:port/db?sslmode=…`).
    pub(crate) fn connect(url: &str) -> Result<PgConn> {
        let shown = shown(url);
        let mut config: postgres::Config = url.parse().map_err(|e| Error::invalid_field("url", format!("{shown} is not a PostgreSQL URL: {e}")))?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        config.keepalives(true);
        config.keepalives_idle(Duration::from_secs(15));
        // Data the server does not acknowledge for this long ends the connection (a server gone
        // from the network), instead of a call waiting for TCP's own limit of many minutes.
        if config.get_tcp_user_timeout().is_none() {
            config.tcp_user_timeout(Duration::from_secs(30));
        }
        config.application_name("sna-history");
        // The driver's timeout covers reaching the socket, not the server's answer: a port that
        // accepts and never answers would hold the call forever. The handshake runs on a thread
        // of its own and the call gives up at the deadline (the thread ends when the socket does).
        let deadline = config.get_connect_timeout().copied().unwrap_or(CONNECT_TIMEOUT) + Duration::from_secs(1);
        let (send, receive) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("sna-pg-connect".into())
            .spawn(move || {
                let client = match config.get_ssl_mode() {
                    postgres::config::SslMode::Disable => config.connect(postgres::NoTls),
                    _ => config.connect(tls()),
                };
                let _ = send.send(client);
            })
            .map_err(|e| storage(&format!("cannot connect to {shown}"), e))?;
        let client = match receive.recv_timeout(deadline) {
            Ok(client) => client.map_err(|e| storage(&format!("cannot connect to {shown}"), PgError(e)))?,
            Err(_) => {
                return Err(storage(
                    &format!("cannot connect to {shown}"),
                    format!("no answer from the server within {} s", deadline.as_secs()),
                ))
            }
        };
        let mut conn = PgConn { client, state: State::default(), url: url.to_string() };
        conn.client
            // No parallel plans: the store's statements read few rows through indexes, and a
            // parallel sequential scan looked cheaper to the planner than the search index (a
            // GIN bitmap scan) for a word in one block of 100,000: 18 ms instead of 0.4 ms.
            .batch_execute(&format!(
                "SET statement_timeout = {STATEMENT_TIMEOUT_MS}; SET client_min_messages = WARNING; SET max_parallel_workers_per_gather = 0;"
            ))
            .map_err(|e| storage(&format!("cannot set up the session on {shown}"), PgError(e)))?;
        Ok(conn)
    }

    /// Connects again when the connection was lost (the server restarted, the network dropped):
    /// the call that met the loss failed, the next one works once the server answers.
    pub(crate) fn reconnect_if_closed(&mut self) -> Result<()> {
        if self.state.broken || self.client.is_closed() {
            *self = PgConn::connect(&self.url)?;
        }
        Ok(())
    }

    pub(crate) fn transaction(&mut self, context: &str) -> Result<PgTx<'_>> {
        let state = &mut self.state;
        let tx = self.client.transaction().map_err(|e| state.fail(context, e))?;
        Ok(PgTx { tx, state })
    }

    pub(crate) fn exec(&mut self, context: &str, sql: &str, args: &[Arg<'_>]) -> Result<u64> {
        let stmt = prepare(&mut self.client, &mut self.state, context, sql)?;
        self.client.execute(&stmt, &params(args)).map_err(|e| self.state.fail(context, e))
    }

    pub(crate) fn each(&mut self, context: &str, sql: &str, args: &[Arg<'_>], each: &mut dyn FnMut(&Row<'_>) -> Result<()>) -> Result<()> {
        let stmt = prepare(&mut self.client, &mut self.state, context, sql)?;
        for row in self.client.query(&stmt, &params(args)).map_err(|e| self.state.fail(context, e))? {
            each(&Row::Postgres(&row))?;
        }
        Ok(())
    }
}

impl PgTx<'_> {
    pub(crate) fn commit(self, context: &str) -> Result<()> {
        let state = self.state;
        self.tx.commit().map_err(|e| state.fail(context, e))
    }

    pub(crate) fn exec(&mut self, context: &str, sql: &str, args: &[Arg<'_>]) -> Result<u64> {
        let stmt = prepare(&mut self.tx, self.state, context, sql)?;
        self.tx.execute(&stmt, &params(args)).map_err(|e| self.state.fail(context, e))
    }

    pub(crate) fn each(&mut self, context: &str, sql: &str, args: &[Arg<'_>], each: &mut dyn FnMut(&Row<'_>) -> Result<()>) -> Result<()> {
        let stmt = prepare(&mut self.tx, self.state, context, sql)?;
        for row in self.tx.query(&stmt, &params(args)).map_err(|e| self.state.fail(context, e))? {
            each(&Row::Postgres(&row))?;
        }
        Ok(())
    }
}

/// The statement for `sql`, prepared on first use.
fn prepare(client: &mut impl postgres::GenericClient, state: &mut State, context: &str, sql: &str) -> Result<postgres::Statement> {
    if let Some(stmt) = state.statements.get(sql) {
        return Ok(stmt.clone());
    }
    let stmt = client.prepare(&dollar_placeholders(sql)).map_err(|e| state.fail(context, e))?;
    state.statements.insert(sql.to_string(), stmt.clone());
    Ok(stmt)
}

fn params<'a>(args: &'a [Arg<'a>]) -> Vec<&'a (dyn ToSql + Sync)> {
    args.iter().map(|a| a as &(dyn ToSql + Sync)).collect()
}

/// The TLS a URL with `sslmode=prefer` or `require` gets: rustls, verifying the server against the
/// web's root certificates.
// ring rather than aws-lc-rs: it builds with nothing but a C compiler, and a database link does
// not need rustls' post-quantum key exchange (the reason ring's provider is marked deprecated).
#[allow(deprecated)]
fn tls() -> tokio_postgres_rustls::MakeRustlsConnect {
    let roots = rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("ring supports the default TLS versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    tokio_postgres_rustls::MakeRustlsConnect::new(config)
}

impl ToSql for Arg<'_> {
    fn to_sql(&self, ty: &Type, out: &mut postgres::types::private::BytesMut) -> std::result::Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match *self {
            Arg::Null => Ok(IsNull::Yes),
            Arg::Int(n) if *ty == Type::INT4 => i32::try_from(n)?.to_sql(ty, out),
            Arg::Int(n) if *ty == Type::INT2 => i16::try_from(n)?.to_sql(ty, out),
            Arg::Int(n) if *ty == Type::BOOL => (n != 0).to_sql(ty, out),
            Arg::Int(n) => n.to_sql(ty, out),
            Arg::Text(s) if *ty == Type::BYTEA => s.as_bytes().to_sql(ty, out),
            Arg::Text(s) => s.to_sql(ty, out),
            Arg::Blob(b) => b.to_sql(ty, out),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    postgres::types::to_sql_checked!();
}

/// Column `i` of a PostgreSQL row.
pub(super) fn cell<'r>(row: &'r postgres::Row, i: usize) -> Result<Cell<'r>> {
    let bad = |e: postgres::Error| storage("cannot read a row", PgError(e));
    let ty = row.columns().get(i).map(|c| c.type_().clone()).ok_or_else(|| Error::Internal(format!("no column {i}")))?;
    Ok(match ty {
        Type::INT8 => row.try_get::<_, Option<i64>>(i).map_err(bad)?.map_or(Cell::Null, Cell::Int),
        Type::INT4 => row.try_get::<_, Option<i32>>(i).map_err(bad)?.map_or(Cell::Null, |n| Cell::Int(n.into())),
        Type::INT2 => row.try_get::<_, Option<i16>>(i).map_err(bad)?.map_or(Cell::Null, |n| Cell::Int(n.into())),
        Type::BOOL => row.try_get::<_, Option<bool>>(i).map_err(bad)?.map_or(Cell::Null, |b| Cell::Int(b.into())),
        Type::BYTEA => row.try_get::<_, Option<&[u8]>>(i).map_err(bad)?.map_or(Cell::Null, Cell::Blob),
        _ => row.try_get::<_, Option<&str>>(i).map_err(bad)?.map_or(Cell::Null, Cell::Text),
    })
}
