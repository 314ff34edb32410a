//! The store: one database holds many sessions, their blocks, the embed bytes (content-addressed by
//! SHA-256) and the bindings to live native threads. The database is an SQLite file (or an
//! in-memory one) or, with the default `postgres` feature, a PostgreSQL server; `db.rs` hides
//! which, and both keep the same guarantees.
//!
//! Every write of blocks runs in one transaction (`BEGIN IMMEDIATE` on SQLite), so several processes may append to
//! one session at once and `seq` stays dense. Appended blocks are validated before the transaction
//! starts, imported ones as they arrive inside it; a batch or an import is stored whole or not at
//! all.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rusqlite::{Connection, ErrorCode};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::json::{option_field, option_map, unknown_option};
use crate::model::{sha256_hex, Block, Runtime, Timestamp};

mod conns;
pub(crate) mod fts;
pub(crate) mod db;
mod import;
mod search;
mod session;
pub(crate) mod stored_text;
mod sync;
mod usage;
mod usage_report;
mod write;

use conns::{ConnGuard, Conns};
use db::sqlite::{check_schema, migrate, uri_path};
use db::{args, is_unique_violation, Conn, Row, Sql};
use write::{block_pk, id_from_column, pk_range, StoredId};
pub use search::{parse_time, SearchHit, SearchOptions, MAX_SEARCH_LIMIT};
pub use sync::{SyncConflict, SyncOptions, SyncReport};
pub use usage_report::{ModelUsage, PriceSource, ResponseUsage, SessionUsage, UsageBy, UsageOptions, UsageReport, UsageRow};
pub(crate) use import::{source_sha256, FileStat, ImportSink, ImportTarget, ImportedMeta, Noted, ReadRecord, SourceFile, SourceRecord};

/// The schema version this build writes and understands.
pub const SCHEMA_VERSION: i64 = 7;

/// `PRAGMA application_id` of an sna-history database ("SNAH").
pub const APPLICATION_ID: i64 = 0x534e_4148;

const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Longest session id accepted.
pub const MAX_SESSION_ID_LEN: usize = 256;

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
#[derive(Debug, Clone, Default, PartialEq, Eq)]
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
        let mut new = NewSession::new();
        for (key, value) in option_map(value)? {
            match key.as_str() {
                "id" => new.id = option_field(&key, value)?,
                "title" => new.title = option_field(&key, value)?,
                "cwd" => new.cwd = option_field(&key, value)?,
                _ => return Err(unknown_option(&key, NewSession::KEYS)),
            }
        }
        Ok(new)
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

impl Store {
    /// Opens (creating if needed) the database at `path`.
    ///
    /// A directory, a file that is not SQLite, a database of another application and a database written
    /// by a newer sna-history (`SCHEMA_TOO_NEW`) are refused; a refused file is not modified.
    ///
    /// A `postgres://` or `postgresql://` URL opens that PostgreSQL database instead (see
    /// [`Store::open_url`]).
    pub fn open(path: impl AsRef<Path>) -> Result<Store> {
        let path = path.as_ref();
        if let Some(url) = path.to_str().filter(|p| is_postgres_url(p)) {
            return Store::open_url(url);
        }
        let shown = path.display().to_string();
        if path.is_dir() {
            return Err(Error::invalid(format!("database path {shown} is a directory, not a file")));
        }
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            if !parent.is_dir() {
                return Err(Error::Io {
                    context: format!("cannot create database {shown}"),
                    source: std::io::Error::new(
                        std::io::ErrorKind::NotFound,
                        format!("directory {} does not exist", parent.display()),
                    ),
                });
            }
        }
        let existed = path.exists();
        let opened = (|| {
            let conn = Connection::open(path).map_err(Error::storage(format!("cannot open database {shown}")))?;
            conn.busy_timeout(BUSY_TIMEOUT).map_err(Error::storage("cannot set the busy timeout"))?;
            check_schema(&conn, &shown)?;
            let mode: String = conn
                .query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))
                .map_err(Error::storage(format!("cannot switch {shown} to WAL")))?;
            if !mode.eq_ignore_ascii_case("wal") {
                return Err(Error::Storage {
                    context: format!("cannot switch {shown} to WAL (journal mode stays {mode})"),
                    source: Box::new(rusqlite::Error::InvalidQuery),
                });
            }
            Self::finish_open(conn, &shown, Some(path.to_path_buf()))
        })();
        match opened {
            // A database the user may only read (the file, or the directory its WAL goes in):
            // opened read-only, so that reading works.
            Err(Error::Storage { source, .. })
                if existed
                    && matches!(source.downcast_ref::<rusqlite::Error>(),
                        Some(rusqlite::Error::SqliteFailure(f, _)) if matches!(f.code, ErrorCode::ReadOnly | ErrorCode::CannotOpen)) =>
            {
                Self::open_read_only(path)
            }
            other => other,
        }
    }

    /// Opens an existing database for reading only: every read works, every write is a `STORAGE`
    /// error saying the database is read-only. [`Store::open`] does this by itself for a database
    /// (or its directory) the user may not write. Nothing is migrated: a database of an older
    /// schema must be opened writable once.
    pub fn open_read_only(path: impl AsRef<Path>) -> Result<Store> {
        use rusqlite::OpenFlags;
        let path = path.as_ref();
        let shown = path.display().to_string();
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let open = |uri: String| -> Result<Connection> {
            let conn = Connection::open_with_flags(uri, flags).map_err(Error::storage(format!("cannot open database {shown} read-only")))?;
            conn.busy_timeout(BUSY_TIMEOUT).map_err(Error::storage("cannot set the busy timeout"))?;
            check_schema(&conn, &shown)?;
            Ok(conn)
        };
        let uri = format!("file:{}?mode=ro", uri_path(path));
        // A WAL database whose shared-memory file cannot be created (a read-only directory) is read
        // as a still image instead.
        let conn = match open(uri) {
            Ok(conn) if conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get::<_, i64>(0)).is_ok() => conn,
            _ => open(format!("file:{}?immutable=1", uri_path(path)))?,
        };
        let version: i64 = conn.query_row("PRAGMA user_version", [], |row| row.get(0)).map_err(Error::storage(format!("cannot read {shown}")))?;
        if version != SCHEMA_VERSION {
            return Err(Error::invalid(format!(
                "{shown} has schema version {version} and is read-only: open it writable once to upgrade it to version {SCHEMA_VERSION}"
            )));
        }
        conn.execute_batch("PRAGMA foreign_keys = ON; PRAGMA cache_size = -32768;").map_err(Error::storage("cannot set pragmas"))?;
        Ok(Store { inner: Arc::new(Inner { conns: Conns::one(Conn::Sqlite(conn)), path: Some(path.to_path_buf()), url: None }) })
    }

    /// Opens the PostgreSQL database a `postgres://user:password@host:port/database?sslmode=…` URL
    /// names (the forms libpq accepts), creating sna-history's tables in it if they are missing.
    /// The same API and guarantees as a database file: `seq` dense under appends from many
    /// processes and hosts, imports atomic. An unreachable server is a `STORAGE` error naming host
    /// and port after at most 5 s (`connect_timeout` in the URL sets another limit); a database of
    /// a newer schema is `SCHEMA_TOO_NEW`, left untouched. TLS (rustls, verified against the web's
    /// root certificates) when `sslmode` is `prefer` (the default, falling back to plain text) or
    /// `require`; `sslmode=disable` never tries it.
    pub fn open_url(url: &str) -> Result<Store> {
        if !is_postgres_url(url) {
            return Err(Error::invalid_field("url", "a store URL starts with postgres:// or postgresql://"));
        }
        #[cfg(feature = "postgres")]
        {
            let mut conn = Conn::postgres(url)?;
            search::build_missing(&mut conn)?;
            usage::build_missing(&mut conn)?;
            Ok(Store { inner: Arc::new(Inner { conns: Conns::pool(url, conn), path: None, url: Some(db::pg::shown(url)) }) })
        }
        #[cfg(not(feature = "postgres"))]
        Err(Error::invalid("this build of sna-history has no PostgreSQL support (the `postgres` feature)"))
    }

    /// The PostgreSQL URL of the store (without its password), `None` for SQLite.
    pub fn url(&self) -> Option<&str> {
        self.inner.url.as_deref()
    }

    /// A store in memory, gone when the last clone is dropped.
    pub fn open_in_memory() -> Result<Store> {
        let conn = Connection::open_in_memory().map_err(Error::storage("cannot open an in-memory database"))?;
        Self::finish_open(conn, ":memory:", None)
    }

    fn finish_open(mut conn: Connection, shown: &str, path: Option<PathBuf>) -> Result<Store> {
        conn.execute_batch("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA cache_size = -32768;")
            .map_err(Error::storage("cannot set pragmas"))?;
        conn.set_prepared_statement_cache_capacity(64);
        migrate(&mut conn, shown)?;
        let mut conn = Conn::Sqlite(conn);
        search::build_missing(&mut conn)?;
        usage::build_missing(&mut conn)?;
        Ok(Store { inner: Arc::new(Inner { conns: Conns::one(conn), path, url: None }) })
    }

    /// The database file, `None` in memory.
    pub fn path(&self) -> Option<&Path> {
        self.inner.path.as_deref()
    }

    /// Creates an empty session. An id that exists already is a `CONFLICT`.
    pub fn create_session(&self, new: NewSession) -> Result<Session> {
        let id = match new.id {
            Some(id) => {
                validate_session_id(&id)?;
                id
            }
            None => uuid::Uuid::now_v7().to_string(),
        };
        let now = Timestamp::now().as_millis();
        let mut conn = lock(&self.inner)?;
        let inserted = conn.first(
            "cannot create the session",
            "INSERT INTO sessions (id, title, cwd, created_at, updated_at, block_count) VALUES (?1, ?2, ?3, ?4, ?4, 0) RETURNING rowid",
            args![&id, &new.title, &new.cwd, now],
            |row| row.int(0),
        );
        let rowid = match inserted {
            Ok(Some(rowid)) => rowid,
            Ok(None) => return Err(Error::Internal("creating a session gave no row".into())),
            Err(e) if is_unique_violation(&e) => {
                return Err(Error::Conflict(format!("session {id:?} exists already")));
            }
            Err(e) => return Err(e),
        };
        drop(conn);
        Ok(Session { store: self.clone(), id, rowid })
    }

    /// The session with this id (`NOT_FOUND` if there is none).
    pub fn session(&self, id: &str) -> Result<Session> {
        let mut conn = lock(&self.inner)?;
        let rowid = session_rowid(&mut *conn, id)?;
        drop(conn);
        Ok(Session { store: self.clone(), id: id.to_string(), rowid })
    }

    /// Every session, most recently updated first.
    pub fn sessions(&self) -> Result<Vec<SessionInfo>> {
        let mut conn = lock(&self.inner)?;
        session_infos(&mut *conn, None)
    }

    /// Changes a session's title and working directory: each `Some` replaces the stored value
    /// (`Some("")` clears it), `None` keeps it. `NOT_FOUND` for an unknown session.
    pub fn update_session(&self, id: &str, title: Option<&str>, cwd: Option<&str>) -> Result<SessionInfo> {
        let mut conn = lock(&self.inner)?;
        let conn = &mut *conn;
        let rowid = session_rowid(conn, id)?;
        let blank = |v: Option<&str>| v.map(|v| if v.is_empty() { None } else { Some(v.to_string()) });
        let context = "cannot update the session";
        if let Some(title) = blank(title) {
            conn.exec(context, "UPDATE sessions SET title = ?1 WHERE rowid = ?2", args![&title, rowid])?;
        }
        if let Some(cwd) = blank(cwd) {
            conn.exec(context, "UPDATE sessions SET cwd = ?1 WHERE rowid = ?2", args![&cwd, rowid])?;
        }
        session_infos(conn, Some(rowid))?.pop().ok_or_else(|| Error::NotFound(format!("session {id:?} not found")))
    }

    /// Deletes a session with its blocks and bindings; embed bytes no other session uses are freed.
    pub fn delete_session(&self, id: &str) -> Result<()> {
        let mut conn = lock(&self.inner)?;
        let context = "cannot delete the session";
        let mut tx = conn.write(context)?;
        let rowid = session_rowid(&mut tx, id)?;
        let hashes = delete_session_rows(&mut tx, rowid)?;
        drop_orphan_blobs(&mut tx, &hashes)?;
        tx.commit(context)
    }

    /// Number of distinct embed blobs stored (each distinct content once).
    pub fn blob_count(&self) -> Result<u64> {
        let mut conn = lock(&self.inner)?;
        let n = conn.first("cannot count blobs", "SELECT count(*) FROM blobs", &[], |row| row.int(0))?;
        Ok(n.unwrap_or(0) as u64)
    }

    /// Closes the database. Every later call on this store, its clones and its sessions fails with
    /// `CLOSED`; closing twice is harmless. Dropping the last clone closes it too.
    pub fn close(&self) -> Result<()> {
        self.inner.conns.close()
    }

    /// True once [`Store::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.inner.conns.is_closed()
    }

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

pub(crate) fn validate_session_id(id: &str) -> Result<()> {
    if id.is_empty() || id.len() > MAX_SESSION_ID_LEN || id.chars().any(char::is_control) {
        return Err(Error::invalid_field(
            "id",
            format!("session id must be 1 to {MAX_SESSION_ID_LEN} bytes without control characters"),
        ));
    }
    Ok(())
}

/// Deletes session `rowid` and what hangs off it (blocks, bindings, sources, embed references) in
/// `tx`; returns the embed hashes it referenced, for [`drop_orphan_blobs`].
fn delete_session_rows(tx: &mut impl Sql, rowid: i64) -> Result<Vec<String>> {
    let context = "cannot delete the session";
    let hashes = tx.all(context, "SELECT DISTINCT sha256 FROM session_embeds WHERE session = ?1", args![rowid], |row| row.string(0))?;
    tx.exec(context, "DELETE FROM sessions WHERE rowid = ?1", args![rowid])?;
    Ok(hashes)
}

/// Deletes the blobs among `hashes` that no session refers to any more.
fn drop_orphan_blobs(tx: &mut impl Sql, hashes: &[String]) -> Result<()> {
    let context = "cannot delete the session";
    for hash in hashes {
        tx.exec(context, "DELETE FROM blobs WHERE sha256 = ?1 AND NOT EXISTS (SELECT 1 FROM session_embeds WHERE sha256 = ?1)", args![hash])?;
    }
    Ok(())
}

fn timestamp(ms: i64) -> Result<Timestamp> {
    Timestamp::from_millis(ms).map_err(|_| Error::Internal(format!("stored timestamp {ms} is out of range")))
}

fn session_rowid(conn: &mut impl Sql, id: &str) -> Result<i64> {
    conn.first("cannot look up the session", "SELECT rowid FROM sessions WHERE id = ?1", args![id], |row| row.int(0))?
        .ok_or_else(|| Error::NotFound(format!("no session {id:?}")))
}

const BLOCK_COLUMNS: &str = "seq, id, actor, kind, content, tool, reasoning, embeds, provider, model_provider, model, \
                             message_id, turn_id, created_at, native";

fn json_column<T: serde::de::DeserializeOwned>(row: &Row<'_>, index: usize, name: &str) -> Result<Option<T>> {
    match row.opt_text(index).map_err(|_| Error::Internal(format!("stored {name} column is not text")))? {
        None => Ok(None),
        Some(text) => serde_json::from_str(text).map_err(|e| Error::Internal(format!("stored {name} column is corrupt: {e}"))).map(Some),
    }
}

fn block_from_row(row: &Row<'_>) -> Result<Block> {
    stored_text::block_from_row_raw(row, None)
}



fn to_json<T: Serialize>(value: &T) -> String {
    // Only model types go through here; they hold strings, numbers and JSON values.
    serde_json::to_string(value).unwrap_or_default()
}

/// Checks a block and settles its embeds' size and hash; the bytes stay in the embed.
fn prepare_block(block: &mut Block) -> Result<()> {
    block.validate()?;
    if let Some(native) = &block.native {
        if crate::json::depth(&native.data) > crate::json::MAX_NATIVE_DEPTH {
            return Err(Error::invalid_field(
                "native.data",
                format!("nested more than {} levels deep: it could not be read back once stored", crate::json::MAX_NATIVE_DEPTH),
            ));
        }
    }
    for (embed_id, embed) in block.embeds.iter_mut() {
        let field = format!("embeds.{embed_id}");
        match &embed.data {
            Some(data) => {
                let hash = sha256_hex(data);
                if !embed.sha256.is_empty() && embed.sha256 != hash {
                    return Err(Error::invalid_field(
                        format!("{field}.sha256"),
                        format!("sha256 {} does not match the embed's bytes ({hash})", embed.sha256),
                    ));
                }
                if embed.size != 0 && embed.size != data.len() as u64 {
                    return Err(Error::invalid_field(
                        format!("{field}.size"),
                        format!("size {} does not match the embed's {} bytes", embed.size, data.len()),
                    ));
                }
                embed.sha256 = hash;
                embed.size = data.len() as u64;
            }
            None if embed.sha256.is_empty() => {
                return Err(Error::invalid_field(
                    format!("{field}.data"),
                    format!("embed {embed_id:?} carries no bytes"),
                ));
            }
            None => {}
        }
    }
    Ok(())
}

fn session_infos(conn: &mut impl Sql, only: Option<i64>) -> Result<Vec<SessionInfo>> {
    let context = "cannot list sessions";
    let mut seen: HashMap<i64, [BTreeSet<String>; 3]> = HashMap::new();
    conn.each(
        context,
        "SELECT session, provider, model_provider, model FROM session_attribution WHERE CAST(?1 AS BIGINT) IS NULL OR session = ?1",
        args![only],
        &mut |row| {
            let entry = seen.entry(row.int(0)?).or_default();
            for (i, set) in entry.iter_mut().enumerate() {
                let value = row.text(i + 1)?;
                if !value.is_empty() {
                    set.insert(value.to_string());
                }
            }
            Ok(())
        },
    )?;
    conn.all(
        context,
        "SELECT rowid, id, title, cwd, created_at, updated_at, block_count, origin FROM sessions
         WHERE CAST(?1 AS BIGINT) IS NULL OR rowid = ?1 ORDER BY updated_at DESC, rowid DESC",
        args![only],
        |row| {
            let [providers, model_providers, models] = seen.remove(&row.int(0)?).unwrap_or_default();
            Ok(SessionInfo {
                id: row.string(1)?,
                title: row.opt_string(2)?,
                cwd: row.opt_string(3)?,
                created_at: timestamp(row.int(4)?)?,
                updated_at: timestamp(row.int(5)?)?,
                block_count: row.int(6)? as u64,
                providers: providers.into_iter().collect(),
                model_providers: model_providers.into_iter().collect(),
                models: models.into_iter().collect(),
                origin: row.opt_string(7)?,
            })
        },
    )
}

fn if_batch(e: Error, index: usize) -> Error {
    e.at_index(index)
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
