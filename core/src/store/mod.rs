//! The store: one database holds many sessions, their blocks, the embed bytes (content-addressed by
//! SHA-256) and the bindings to live native threads. The database is an SQLite file (or an
//! in-memory one) or, with the default `postgres` feature, a PostgreSQL server; `db` hides which
//! (what differs between them is its dialect's), and both keep the same guarantees.
//!
//! This file defines [`Store`] and [`Session`] and does the work of `Store`'s opening, sessions,
//! search and closing; every public method of the two is declared in `api/store.rs` and
//! `api/session.rs`, delegating here, to `session.rs` and to the modules beside them: `catalog`
//! (the sessions table), `write` (the block writer), `derived`/`indexes`/`search`/`usage` (the
//! tables derived from the blocks), `import`, `sync`, `usage_report` and `layout` (the row layout).
//! The conversions to and from the runtimes' native files delegate to the pipeline (`native/`)
//! instead, since the store knows no runtime.
//!
//! Every write of blocks runs in a write transaction (`BEGIN IMMEDIATE` on SQLite), so several processes may append to
//! one session at once and `seq` stays dense. Appended blocks are validated before the transaction
//! starts, imported ones as they arrive inside it; a batch or an import is stored whole or not at
//! all.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::json::options;
use crate::model::{Block, Runtime, Timestamp};

mod catalog;
mod conns;
pub(crate) mod db;
mod derived;
pub(crate) mod fts;
mod import;
mod indexes;
mod layout;
mod search;
pub(crate) mod session;
pub(crate) mod stored_text;
pub(crate) mod sync;
mod usage;
pub(crate) mod usage_report;
mod write;

use conns::{ConnGuard, Conns};
use db::{Conn, Sql};
pub use catalog::MAX_SESSION_ID_LEN;
pub(crate) use catalog::validate_session_id;
pub use search::{parse_time, SearchHit, SearchOptions, MAX_SEARCH_LIMIT};
pub use sync::{SyncConflict, SyncOptions, SyncReport};
pub use usage_report::{ModelUsage, PriceSource, ResponseUsage, SessionUsage, UsageBy, UsageOptions, UsageReport, UsageRow};
pub(crate) use import::{source_sha256, FileStat, ImportSink, ImportTarget, ImportedMeta, Noted, ReadRecord, SourceFile, SourceRecord};

/// The schema version this build writes and understands.
pub const SCHEMA_VERSION: i64 = 8;

/// `PRAGMA application_id` of an sna-history database ("SNAH").
pub const APPLICATION_ID: i64 = 0x534e_4148;

/// A database of sessions. Cheap to clone: clones share its connections.
///
/// A `Store` may be moved between threads. On SQLite calls take turns on its one connection; for
/// parallel writers open one `Store` per thread or process: SQLite's locking keeps them
/// consistent. On PostgreSQL calls from several threads run at once, on up to four connections.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

struct Inner {
    conns: Conns,
    path: Option<PathBuf>,
    /// A PostgreSQL store's URL, without its password.
    url: Option<String>,
}

/// What `Store::sessions` lists about one session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionInfo {
    /// The session id.
    pub id: String,
    /// Its title, if one was given.
    pub title: Option<String>,
    /// The working directory the conversation ran in, if known.
    pub cwd: Option<String>,
    /// When the session was created.
    pub created_at: Timestamp,
    /// When a block was last appended (or the session created).
    pub updated_at: Timestamp,
    /// Number of blocks.
    pub block_count: u64,
    /// Runtimes that produced blocks (`provider`), sorted.
    pub providers: Vec<String>,
    /// Model vendors seen (`model_provider`), sorted.
    pub model_providers: Vec<String>,
    /// Models seen (`model`), sorted.
    pub models: Vec<String>,
    /// The machine the session was first written on, when `sna sync` brought it here from
    /// another store; `None` for a session made in this store.
    #[serde(default)]
    pub origin: Option<String>,
}

/// Options of `Store::create_session`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NewSession {
    /// The id; generated (UUIDv7) when `None`.
    pub id: Option<String>,
    /// A title.
    pub title: Option<String>,
    /// The working directory.
    pub cwd: Option<String>,
}

impl NewSession {
    /// A session with a generated id.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the id.
    pub fn id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// Sets the title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets the working directory.
    pub fn cwd(mut self, cwd: impl Into<String>) -> Self {
        self.cwd = Some(cwd.into());
        self
    }

    /// The option names [`NewSession::from_value`] accepts.
    pub const KEYS: &'static [&'static str] = &["id", "title", "cwd"];

    /// A new session's options from a JSON object (the bindings pass keyword arguments this way):
    /// strings or `null`. Unknown keys and wrong types are `INVALID_INPUT` naming the key.
    pub fn from_value(value: serde_json::Value) -> Result<NewSession> {
        options(value, NewSession::KEYS)
    }
}

/// One session of a store. Holds the store's connection; stays usable while the store is alive
/// anywhere (it keeps it alive itself).
#[derive(Clone)]
pub struct Session {
    store: Store,
    id: String,
    rowid: i64,
}

/// A live native thread that holds the session's history up to `through_seq`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Binding {
    /// The runtime.
    pub runtime: Runtime,
    /// The runtime's own id of the thread (its session or thread id).
    pub native_id: String,
    /// The last block the native thread holds.
    pub through_seq: u64,
    /// When the binding was recorded.
    pub updated_at: Timestamp,
}

/// The answer of `Session::continuation`: how to go on in a runtime.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum Continuation {
    /// The bound native thread holds everything up to `through_seq`: continue it and send only `pending`.
    Continue {
        /// The native thread to continue.
        native_id: String,
        /// The last block it holds.
        through_seq: u64,
        /// The blocks after `through_seq`, to send as new input.
        pending: Vec<Block>,
    },
    /// No usable native thread: rebuild the native history from the canonical blocks.
    Replay {
        /// Why continuing is not possible.
        reason: String,
    },
}

impl Continuation {
    /// The mode's name as serialized: `continue` or `replay`.
    pub fn mode(&self) -> &'static str {
        match self {
            Continuation::Continue { .. } => "continue",
            Continuation::Replay { .. } => "replay",
        }
    }
}

fn lock(inner: &Inner) -> Result<ConnGuard<'_>> {
    inner.conns.get(|| match (&inner.path, &inner.url) {
        (Some(path), _) => format!("the store {} is closed", path.display()),
        (None, Some(url)) => format!("the store {url} is closed"),
        (None, None) => "the in-memory store is closed".to_string(),
    })
}

// The work of `Store`'s public methods, which `api/store.rs` declares (with their docs) and
// delegates here.

pub(crate) fn open(path: &Path) -> Result<Store> {
    if let Some(url) = path.to_str().filter(|p| is_postgres_url(p)) {
        return open_url(url);
    }
    match db::sqlite::open(path)? {
        (mut conn, true) => {
            indexes::build_missing(&mut conn)?;
            Ok(Store::with(conn, Some(path.to_path_buf()), None))
        }
        (conn, false) => Ok(Store::with(conn, Some(path.to_path_buf()), None)),
    }
}

pub(crate) fn open_read_only(path: &Path) -> Result<Store> {
    Ok(Store::with(db::sqlite::open_read_only(path)?, Some(path.to_path_buf()), None))
}

pub(crate) fn open_url(url: &str) -> Result<Store> {
    if !is_postgres_url(url) {
        return Err(Error::invalid_field("url", "a store URL starts with postgres:// or postgresql://"));
    }
    #[cfg(feature = "postgres")]
    {
        let mut conn = Conn::postgres(url)?;
        indexes::build_missing(&mut conn)?;
        Ok(Store { inner: Arc::new(Inner { conns: Conns::pool(url, conn), path: None, url: Some(db::pg::shown(url)) }) })
    }
    #[cfg(not(feature = "postgres"))]
    Err(Error::invalid("this build of sna-history has no PostgreSQL support (the `postgres` feature)"))
}

pub(crate) fn url(store: &Store) -> Option<&str> {
    store.inner.url.as_deref()
}

pub(crate) fn open_in_memory() -> Result<Store> {
    let mut conn = db::sqlite::open_in_memory()?;
    indexes::build_missing(&mut conn)?;
    Ok(Store::with(conn, None, None))
}

pub(crate) fn path(store: &Store) -> Option<&Path> {
    store.inner.path.as_deref()
}

pub(crate) fn create_session(store: &Store, new: NewSession) -> Result<Session> {
    if let Some(id) = &new.id {
        validate_session_id(id)?;
    }
    let (id, rowid) = store.with_conn(|conn| catalog::create(conn, new))?;
    Ok(Session { store: store.clone(), id, rowid })
}

pub(crate) fn session_by_id(store: &Store, id: &str) -> Result<Session> {
    let rowid = store.with_conn(|conn| catalog::session_rowid(conn, id))?;
    Ok(Session { store: store.clone(), id: id.to_string(), rowid })
}

pub(crate) fn sessions(store: &Store) -> Result<Vec<SessionInfo>> {
    store.with_conn(|conn| catalog::session_infos(conn, None))
}

pub(crate) fn update_session(store: &Store, id: &str, title: Option<&str>, cwd: Option<&str>) -> Result<SessionInfo> {
    store.with_conn(|conn| catalog::update(conn, id, title, cwd))
}

pub(crate) fn delete_session(store: &Store, id: &str) -> Result<()> {
    store.with_conn(|conn| catalog::delete(conn, id))
}

pub(crate) fn blob_count(store: &Store) -> Result<u64> {
    let n = store.with_conn(|conn| conn.first("cannot count blobs", "SELECT count(*) FROM blobs", &[], |row| row.int(0)))?;
    Ok(n.unwrap_or(0) as u64)
}

pub(crate) fn search_blocks(store: &Store, query: &str, options: &SearchOptions) -> Result<Vec<SearchHit>> {
    let parsed = search::parse(query, options)?;
    store.with_conn(|conn| search::run(conn, &parsed, options))
}

pub(crate) fn store_id(store: &Store) -> Result<String> {
    store.with_conn(sync::store_id)
}

pub(crate) fn close(store: &Store) -> Result<()> {
    store.inner.conns.close()
}

pub(crate) fn is_closed(store: &Store) -> bool {
    store.inner.conns.is_closed()
}

impl Store {
    fn with(conn: Conn, path: Option<PathBuf>, url: Option<String>) -> Store {
        Store { inner: Arc::new(Inner { conns: Conns::one(conn), path, url }) }
    }

    /// The session imported from `path` and how the file was then, if it was and the session is still there.
    pub(crate) fn source(&self, path: &str) -> Result<Option<(Session, SourceRecord)>> {
        import::source(self, path)
    }

    /// Records that the file at `path`, read again and found to hold what its record says, looks
    /// like `stat` now: the next check needs only the look.
    pub(crate) fn refresh_source_stat(&self, path: &str, stat: &FileStat) -> Result<()> {
        self.with_conn(|conn| import::refresh_source_stat(conn, path, stat))
    }

    /// Imports into `target`, in one transaction with the source record: on any error nothing is
    /// stored and a replaced session stays as it was.
    pub(crate) fn import_to(&self, target: ImportTarget, fill: impl FnOnce(&mut ImportSink<'_, '_>) -> Result<ImportedMeta>) -> Result<Session> {
        import::import_to(self, target, fill)
    }

    /// Runs `f` on a connection of the store (the one, or one of the pool's).
    pub(crate) fn with_conn<T>(&self, f: impl FnOnce(&mut Conn) -> Result<T>) -> Result<T> {
        let mut conn = lock(&self.inner)?;
        f(&mut conn)
    }
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.inner.path).field("url", &self.inner.url).finish()
    }
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").field("id", &self.id).finish()
    }
}

/// True for a URL [`Store::open_url`] takes.
pub fn is_postgres_url(text: &str) -> bool {
    text.starts_with("postgres://") || text.starts_with("postgresql://")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn new_session_options_are_parsed_like_every_other_option() {
        let new = NewSession::from_value(json!({"id": "a", "title": "T", "cwd": null})).unwrap();
        assert_eq!(new, NewSession::new().id("a").title("T"));
        let err = NewSession::from_value(json!({"name": "x"})).unwrap_err();
        assert_eq!(err.to_string(), "field \"name\": unknown option \"name\" (expected one of: id, title, cwd)");
        let err = NewSession::from_value(json!({"title": 3})).unwrap_err();
        assert_eq!(err.location().unwrap().field.as_deref(), Some("title"));
        assert!(NewSession::from_value(json!([1])).is_err());
    }

    #[test]
    fn continuation_modes_are_their_serialized_tags() {
        let replay = Continuation::Replay { reason: "none".into() };
        assert_eq!(serde_json::to_value(&replay).unwrap()["mode"], replay.mode());
        let go = Continuation::Continue { native_id: "n".into(), through_seq: 0, pending: Vec::new() };
        assert_eq!(serde_json::to_value(&go).unwrap()["mode"], go.mode());
    }
}
