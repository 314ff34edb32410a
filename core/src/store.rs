//! The SQLite store: one database file holds many sessions, their blocks, the embed bytes
//! (content-addressed by SHA-256) and the bindings to live native threads.
//!
//! Every write runs in a `BEGIN IMMEDIATE` transaction, so several processes may append to one
//! session at once and `seq` stays dense. Blocks are validated before the transaction starts; a batch
//! is stored whole or not at all.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rusqlite::{params, Connection, ErrorCode, OptionalExtension, Row, TransactionBehavior};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::model::{sha256_hex, Actor, Attribution, Block, Kind, Runtime, Switch, Timestamp};

/// The schema version this build writes and understands.
pub const SCHEMA_VERSION: i64 = 2;

/// `PRAGMA application_id` of an sna-history database ("SNAH").
pub const APPLICATION_ID: i64 = 0x534e_4148;

const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Longest session id accepted.
pub const MAX_SESSION_ID_LEN: usize = 256;

/// Migrations, index `i` takes the schema from version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[include_str!("schema/v1.sql"), include_str!("schema/v2.sql")];

/// A database of sessions. Cheap to clone: clones share one connection.
///
/// A `Store` may be moved between threads; calls are serialized on its connection. For parallel
/// writers open one `Store` per thread or process: SQLite's locking keeps them consistent.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

struct Inner {
    /// `None` once the store is closed.
    conn: Mutex<Option<Connection>>,
    path: Option<PathBuf>,
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
}

/// One session of a store. Holds the store's connection; stays usable while the store is alive
/// anywhere (it keeps it alive itself).
#[derive(Clone)]
pub struct Session {
    store: Store,
    id: String,
    rowid: i64,
}

/// What a live `message.updated` event said of a message: role, model provider, model.
pub(crate) type MessageEvent = (String, Option<String>, Option<String>);

/// A live native thread that holds the session's history up to `through_seq`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Binding {
    /// The runtime.
    pub runtime: Runtime,
    /// The runtime's own id of the thread (Claude Code session id, Codex thread id, OpenCode session id).
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

/// The locked connection of an open store.
struct ConnGuard<'a>(MutexGuard<'a, Option<Connection>>);

impl std::ops::Deref for ConnGuard<'_> {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        // `lock` only builds a guard around `Some`, and nothing takes the connection while it is held.
        self.0.as_ref().expect("ConnGuard holds an open connection")
    }
}

impl std::ops::DerefMut for ConnGuard<'_> {
    fn deref_mut(&mut self) -> &mut Connection {
        self.0.as_mut().expect("ConnGuard holds an open connection")
    }
}

fn lock(inner: &Inner) -> Result<ConnGuard<'_>> {
    // A panic while holding the lock cannot leave the connection inconsistent: SQLite rolls back
    // an unfinished transaction when it is dropped, so a poisoned lock is still safe to use.
    let guard = inner.conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if guard.is_none() {
        return Err(Error::Closed(match &inner.path {
            Some(path) => format!("the store {} is closed", path.display()),
            None => "the in-memory store is closed".to_string(),
        }));
    }
    Ok(ConnGuard(guard))
}

impl Store {
    /// Opens (creating if needed) the database at `path`.
    ///
    /// A directory, a file that is not SQLite, a database of another application and a database written
    /// by a newer sna-history (`SCHEMA_TOO_NEW`) are refused; a refused file is not modified.
    pub fn open(path: impl AsRef<Path>) -> Result<Store> {
        let path = path.as_ref();
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
        let conn = Connection::open(path).map_err(Error::storage(format!("cannot open database {shown}")))?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(Error::storage("cannot set the busy timeout"))?;
        check_schema(&conn, &shown)?;
        let mode: String = conn
            .query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))
            .map_err(Error::storage(format!("cannot switch {shown} to WAL")))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(Error::Storage {
                context: format!("cannot switch {shown} to WAL (journal mode stays {mode})"),
                source: rusqlite::Error::InvalidQuery,
            });
        }
        Self::finish_open(conn, &shown, Some(path.to_path_buf()))
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
        Ok(Store { inner: Arc::new(Inner { conn: Mutex::new(Some(conn)), path }) })
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
        let conn = lock(&self.inner)?;
        let inserted = conn.execute(
            "INSERT INTO sessions (id, title, cwd, created_at, updated_at, block_count) VALUES (?1, ?2, ?3, ?4, ?4, 0)",
            params![id, new.title, new.cwd, now],
        );
        match inserted {
            Ok(_) => {}
            Err(e) if is_unique_violation(&e) => {
                return Err(Error::Conflict(format!("session {id:?} exists already")));
            }
            Err(e) => return Err(Error::storage("cannot create the session")(e)),
        }
        let rowid = conn.last_insert_rowid();
        drop(conn);
        Ok(Session { store: self.clone(), id, rowid })
    }

    /// The session with this id (`NOT_FOUND` if there is none).
    pub fn session(&self, id: &str) -> Result<Session> {
        let conn = lock(&self.inner)?;
        let rowid = session_rowid(&conn, id)?;
        drop(conn);
        Ok(Session { store: self.clone(), id: id.to_string(), rowid })
    }

    /// Every session, most recently updated first.
    pub fn sessions(&self) -> Result<Vec<SessionInfo>> {
        let conn = lock(&self.inner)?;
        session_infos(&conn, None)
    }

    /// Deletes a session with its blocks and bindings; embed bytes no other session uses are freed.
    pub fn delete_session(&self, id: &str) -> Result<()> {
        let mut conn = lock(&self.inner)?;
        let context = "cannot delete the session";
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(Error::storage(context))?;
        let rowid = session_rowid(&tx, id)?;
        let hashes: Vec<String> = {
            let mut stmt = tx
                .prepare_cached("SELECT DISTINCT sha256 FROM session_embeds WHERE session = ?1")
                .map_err(Error::storage(context))?;
            let rows = stmt.query_map([rowid], |row| row.get(0)).map_err(Error::storage(context))?;
            rows.collect::<rusqlite::Result<_>>().map_err(Error::storage(context))?
        };
        tx.execute("DELETE FROM sessions WHERE rowid = ?1", [rowid]).map_err(Error::storage(context))?;
        {
            let mut stmt = tx
                .prepare_cached(
                    "DELETE FROM blobs WHERE sha256 = ?1
                     AND NOT EXISTS (SELECT 1 FROM session_embeds WHERE sha256 = ?1)",
                )
                .map_err(Error::storage(context))?;
            for hash in &hashes {
                stmt.execute([hash]).map_err(Error::storage(context))?;
            }
        }
        tx.commit().map_err(Error::storage(context))
    }

    /// Number of distinct embed blobs stored (each distinct content once).
    pub fn blob_count(&self) -> Result<u64> {
        let conn = lock(&self.inner)?;
        conn.query_row("SELECT count(*) FROM blobs", [], |row| row.get::<_, i64>(0))
            .map(|n| n as u64)
            .map_err(Error::storage("cannot count blobs"))
    }

    /// Closes the database. Every later call on this store, its clones and its sessions fails with
    /// `CLOSED`; closing twice is harmless. Dropping the last clone closes it too.
    pub fn close(&self) -> Result<()> {
        let mut guard = self.inner.conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        match guard.take() {
            Some(conn) => conn.close().map_err(|(_, e)| Error::storage("cannot close the database")(e)),
            None => Ok(()),
        }
    }

    /// True once [`Store::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.inner.conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).is_none()
    }

    pub(crate) fn with_conn<T>(&self, f: impl FnOnce(&mut Connection) -> Result<T>) -> Result<T> {
        let mut conn = lock(&self.inner)?;
        f(&mut conn)
    }
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.inner.path).finish()
    }
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").field("id", &self.id).finish()
    }
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

fn is_unique_violation(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(f, _) if f.code == ErrorCode::ConstraintViolation)
}

fn timestamp(ms: i64) -> Result<Timestamp> {
    Timestamp::from_millis(ms).map_err(|_| Error::Internal(format!("stored timestamp {ms} is out of range")))
}

fn session_rowid(conn: &Connection, id: &str) -> Result<i64> {
    conn.prepare_cached("SELECT rowid FROM sessions WHERE id = ?1")
        .and_then(|mut stmt| stmt.query_row([id], |row| row.get(0)).optional())
        .map_err(Error::storage("cannot look up the session"))?
        .ok_or_else(|| Error::NotFound(format!("no session {id:?}")))
}

/// Refuses what is not ours or is too new, before anything is written.
fn check_schema(conn: &Connection, shown: &str) -> Result<()> {
    let version: i64 = match conn.query_row("PRAGMA user_version", [], |row| row.get(0)) {
        Ok(v) => v,
        Err(rusqlite::Error::SqliteFailure(f, _)) if f.code == ErrorCode::NotADatabase => {
            return Err(Error::invalid(format!("{shown} is not an SQLite database")));
        }
        Err(e) => return Err(Error::storage(format!("cannot read the schema version of {shown}"))(e)),
    };
    if version > SCHEMA_VERSION {
        return Err(Error::SchemaTooNew { path: shown.to_string(), found: version, supported: SCHEMA_VERSION });
    }
    let app: i64 = conn
        .query_row("PRAGMA application_id", [], |row| row.get(0))
        .map_err(Error::storage(format!("cannot read the application id of {shown}")))?;
    let tables: i64 = conn
        .query_row("SELECT count(*) FROM sqlite_master", [], |row| row.get(0))
        .map_err(Error::storage(format!("cannot read the schema of {shown}")))?;
    if app != APPLICATION_ID && (tables > 0 || version > 0) {
        return Err(Error::invalid(format!(
            "{shown} is an SQLite database of another application (application_id {app:#x}), not an sna-history database"
        )));
    }
    Ok(())
}

fn migrate(conn: &mut Connection, shown: &str) -> Result<()> {
    let context = format!("cannot migrate {shown}");
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(Error::storage(&context))?;
    // Read again inside the write lock: another process may have migrated meanwhile.
    let version: i64 =
        tx.query_row("PRAGMA user_version", [], |row| row.get(0)).map_err(Error::storage(&context))?;
    if version > SCHEMA_VERSION {
        return Err(Error::SchemaTooNew { path: shown.to_string(), found: version, supported: SCHEMA_VERSION });
    }
    if version == SCHEMA_VERSION {
        return Ok(());
    }
    for step in &MIGRATIONS[version as usize..] {
        tx.execute_batch(step).map_err(Error::storage(&context))?;
    }
    tx.execute_batch(&format!("PRAGMA user_version = {SCHEMA_VERSION}; PRAGMA application_id = {APPLICATION_ID};"))
        .map_err(Error::storage(&context))?;
    tx.commit().map_err(Error::storage(&context))
}

const BLOCK_COLUMNS: &str = "seq, id, actor, kind, content, tool, reasoning, embeds, provider, model_provider, model, \
                             message_id, turn_id, created_at, native";

fn json_column<T: serde::de::DeserializeOwned>(row: &Row<'_>, index: usize, name: &str) -> Result<Option<T>> {
    let text: Option<String> = row.get(index).map_err(Error::storage("cannot read a block"))?;
    text.map(|text| {
        serde_json::from_str(&text).map_err(|e| Error::Internal(format!("stored {name} column is corrupt: {e}")))
    })
    .transpose()
}

fn block_from_row(row: &Row<'_>) -> Result<Block> {
    let context = "cannot read a block";
    let actor = row.get_ref(2).map_err(Error::storage(context))?.as_str().map_err(|e| Error::Internal(format!("stored actor: {e}")))?;
    let kind = row.get_ref(3).map_err(Error::storage(context))?.as_str().map_err(|e| Error::Internal(format!("stored kind: {e}")))?;
    Ok(Block {
        seq: row.get::<_, i64>(0).map_err(Error::storage(context))? as u64,
        id: row.get(1).map_err(Error::storage(context))?,
        actor: actor.parse::<Actor>().map_err(|e| Error::Internal(format!("stored block: {e}")))?,
        kind: kind.parse::<Kind>().map_err(|e| Error::Internal(format!("stored block: {e}")))?,
        content: row.get(4).map_err(Error::storage(context))?,
        tool: json_column(row, 5, "tool")?,
        reasoning: json_column(row, 6, "reasoning")?,
        embeds: json_column(row, 7, "embeds")?.unwrap_or_default(),
        provider: row.get(8).map_err(Error::storage(context))?,
        model_provider: row.get(9).map_err(Error::storage(context))?,
        model: row.get(10).map_err(Error::storage(context))?,
        message_id: row.get(11).map_err(Error::storage(context))?,
        turn_id: row.get(12).map_err(Error::storage(context))?,
        created_at: timestamp(row.get(13).map_err(Error::storage(context))?)?,
        native: json_column(row, 14, "native")?,
    })
}

fn to_json<T: Serialize>(value: &T) -> String {
    // Only model types go through here; they hold strings, numbers and JSON values.
    serde_json::to_string(value).unwrap_or_default()
}

/// Checks a block and settles its embeds' size and hash; the bytes stay in the embed.
fn prepare_block(block: &mut Block) -> Result<()> {
    block.validate()?;
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

impl Session {
    /// The session id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The store this session lives in.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Appends one block; returns it with `seq` and `id` filled in.
    pub fn append(&self, block: Block) -> Result<Block> {
        let mut out = self.extend(vec![block])?;
        out.pop().ok_or_else(|| Error::Internal("append stored no block".into()))
    }

    /// Appends blocks in one transaction: all are stored, or (on any error) none.
    /// Validation errors name the block's index in the batch and the field.
    pub fn extend(&self, blocks: impl IntoIterator<Item = Block>) -> Result<Vec<Block>> {
        let mut blocks: Vec<Block> = blocks.into_iter().collect();
        for (index, block) in blocks.iter_mut().enumerate() {
            prepare_block(block).map_err(|e| if_batch(e, index))?;
        }
        if blocks.is_empty() {
            return Ok(blocks);
        }
        self.store.with_conn(|conn| {
            let context = "cannot append blocks";
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(Error::storage(context))?;
            let count = self.block_count(&tx)?;
            {
                let mut writer = BlockWriter::new(&tx, self.rowid, &self.id, count)?;
                for (index, block) in blocks.iter_mut().enumerate() {
                    writer.write(block, index)?;
                }
                writer.finish()?;
            }
            tx.commit().map_err(Error::storage(context))?;
            Ok(blocks)
        })
    }

    /// What `Store::sessions` lists about this session.
    pub fn info(&self) -> Result<SessionInfo> {
        self.store.with_conn(|conn| session_infos(conn, Some(self.rowid))?.pop().ok_or_else(|| self.gone()))
    }

    /// Every block, in `seq` order.
    pub fn blocks(&self) -> Result<Vec<Block>> {
        self.blocks_range(0, u64::MAX)
    }

    /// The blocks with `from <= seq < to`, in order.
    pub fn blocks_range(&self, from: u64, to: u64) -> Result<Vec<Block>> {
        self.blocks_where(from, to, "1")
    }

    /// The blocks with `from <= seq < to` for which the SQL condition `filter` (over the `blocks`
    /// columns; a constant of this crate, never user input) holds, in order.
    pub(crate) fn blocks_where(&self, from: u64, to: u64, filter: &str) -> Result<Vec<Block>> {
        self.store.with_conn(|conn| {
            let count = self.block_count(conn)?;
            let capacity = if filter == "1" { usize::try_from(count.min(to).saturating_sub(from)).unwrap_or(0) } else { 0 };
            let context = "cannot read blocks";
            let mut stmt = conn
                .prepare_cached(&format!(
                    "SELECT {BLOCK_COLUMNS} FROM blocks WHERE session = ?1 AND seq >= ?2 AND seq < ?3 AND ({filter}) ORDER BY seq"
                ))
                .map_err(Error::storage(context))?;
            let to = i64::try_from(to).unwrap_or(i64::MAX);
            let from = i64::try_from(from).unwrap_or(i64::MAX);
            let mut rows = stmt.query(params![self.rowid, from, to]).map_err(Error::storage(context))?;
            let mut out = Vec::with_capacity(capacity);
            while let Some(row) = rows.next().map_err(Error::storage(context))? {
                out.push(block_from_row(row)?);
            }
            Ok(out)
        })
    }

    /// The newest live OpenCode `message.updated` status block of native message `message_id`:
    /// the message's role and the block's `(model_provider, model)`.
    pub(crate) fn message_event(&self, message_id: &str) -> Result<Option<MessageEvent>> {
        self.store.with_conn(|conn| {
            let context = "cannot read blocks";
            let mut stmt = conn
                .prepare_cached(
                    "SELECT model_provider, model, native FROM blocks WHERE session = ?1 AND message_id = ?2 AND kind = 'status' \
                     AND instr(native, '\"message.updated\"') > 0 ORDER BY seq DESC LIMIT 1",
                )
                .map_err(Error::storage(context))?;
            let row: Option<(Option<String>, Option<String>, Option<String>)> = stmt
                .query_row(params![self.rowid, message_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .optional()
                .map_err(Error::storage(context))?;
            Ok(row.map(|(model_provider, model, native)| {
                let native: serde_json::Value = native.and_then(|n| serde_json::from_str(&n).ok()).unwrap_or_default();
                let role = native["data"]["event"]["properties"]["info"]["role"].as_str().unwrap_or("").to_string();
                (role, model_provider, model)
            }))
        })
    }

    /// Number of blocks.
    pub fn len(&self) -> Result<u64> {
        self.store.with_conn(|conn| self.block_count(conn))
    }

    /// True when the session has no block.
    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }

    /// The block with this id (`NOT_FOUND` if this session has none).
    pub fn block(&self, id: &str) -> Result<Block> {
        self.store.with_conn(|conn| {
            self.check_exists(conn)?;
            let mut stmt = conn
                .prepare_cached(&format!("SELECT {BLOCK_COLUMNS} FROM blocks WHERE session = ?1 AND id = ?2"))
                .map_err(Error::storage("cannot read a block"))?;
            let mut rows = stmt.query(params![self.rowid, id]).map_err(Error::storage("cannot read a block"))?;
            match rows.next().map_err(Error::storage("cannot read a block"))? {
                Some(row) => block_from_row(row),
                None => Err(Error::NotFound(format!("no block {id:?} in session {:?}", self.id))),
            }
        })
    }

    /// The bytes of an embed of this session.
    pub fn embed(&self, embed_id: &str) -> Result<Vec<u8>> {
        self.store.with_conn(|conn| {
            self.check_exists(conn)?;
            conn.prepare_cached(
                "SELECT b.data FROM session_embeds e JOIN blobs b ON b.sha256 = e.sha256
                 WHERE e.session = ?1 AND e.embed_id = ?2",
            )
            .and_then(|mut stmt| stmt.query_row(params![self.rowid, embed_id], |row| row.get(0)).optional())
            .map_err(Error::storage("cannot read an embed"))?
            .ok_or_else(|| Error::NotFound(format!("no embed {embed_id:?} in session {:?}", self.id)))
        })
    }

    /// Every point where `(provider, model_provider, model)` changes, in order. Blocks without any
    /// attribution (typically the user's) neither start nor end a run.
    pub fn switches(&self) -> Result<Vec<Switch>> {
        self.store.with_conn(|conn| {
            self.check_exists(conn)?;
            let context = "cannot read attribution";
            let mut stmt = conn
                .prepare_cached(
                    "SELECT seq, id, provider, model_provider, model FROM blocks
                     WHERE session = ?1 AND (provider IS NOT NULL OR model_provider IS NOT NULL OR model IS NOT NULL)
                     ORDER BY seq",
                )
                .map_err(Error::storage(context))?;
            let mut rows = stmt.query([self.rowid]).map_err(Error::storage(context))?;
            let mut out: Vec<Switch> = Vec::new();
            let mut current: Option<Attribution> = None;
            while let Some(row) = rows.next().map_err(Error::storage(context))? {
                let attribution = Attribution {
                    provider: row.get(2).map_err(Error::storage(context))?,
                    model_provider: row.get(3).map_err(Error::storage(context))?,
                    model: row.get(4).map_err(Error::storage(context))?,
                };
                if current.as_ref() != Some(&attribution) {
                    out.push(Switch {
                        seq: row.get::<_, i64>(0).map_err(Error::storage(context))? as u64,
                        block_id: row.get(1).map_err(Error::storage(context))?,
                        from: current.take(),
                        to: attribution.clone(),
                    });
                    current = Some(attribution);
                }
            }
            Ok(out)
        })
    }

    /// Records that the native thread `native_id` of `runtime` holds this session's blocks up to
    /// `through_seq` (replacing an earlier binding for that runtime).
    pub fn bind(&self, runtime: Runtime, native_id: &str, through_seq: u64) -> Result<Binding> {
        if native_id.is_empty() || native_id.chars().any(char::is_control) {
            return Err(Error::invalid_field("native_id", "native_id must be non-empty, without control characters"));
        }
        let updated_at = Timestamp::now();
        self.store.with_conn(|conn| {
            let context = "cannot bind the session";
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(Error::storage(context))?;
            let count = self.block_count(&tx)? as i64;
            if through_seq >= count as u64 {
                return Err(Error::invalid_field(
                    "through_seq",
                    format!("through_seq {through_seq} is past the last block (the session has {count} blocks)"),
                ));
            }
            tx.execute(
                "INSERT INTO bindings (session, runtime, native_id, through_seq, updated_at) VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (session, runtime) DO UPDATE SET native_id = excluded.native_id,
                 through_seq = excluded.through_seq, updated_at = excluded.updated_at",
                params![self.rowid, runtime.as_str(), native_id, through_seq as i64, updated_at.as_millis()],
            )
            .map_err(Error::storage(context))?;
            tx.commit().map_err(Error::storage(context))?;
            Ok(Binding { runtime, native_id: native_id.to_string(), through_seq, updated_at })
        })
    }

    /// The binding recorded for `runtime`, if any.
    pub fn binding(&self, runtime: Runtime) -> Result<Option<Binding>> {
        self.store.with_conn(|conn| {
            self.check_exists(conn)?;
            let row: Option<(String, i64, i64)> = conn
                .prepare_cached("SELECT native_id, through_seq, updated_at FROM bindings WHERE session = ?1 AND runtime = ?2")
                .and_then(|mut stmt| {
                    stmt.query_row(params![self.rowid, runtime.as_str()], |row| {
                        Ok((row.get(0)?, row.get(1)?, row.get(2)?))
                    })
                    .optional()
                })
                .map_err(Error::storage("cannot read the binding"))?;
            row.map(|(native_id, through_seq, updated_at)| {
                Ok(Binding { runtime, native_id, through_seq: through_seq as u64, updated_at: timestamp(updated_at)? })
            })
            .transpose()
        })
    }

    /// How to go on in `runtime`: continue the bound native thread and send only the blocks after it,
    /// or replay from the canonical blocks. Continuing is possible when a thread is bound and every
    /// pending block is input (user or system); assistant blocks after the binding mean the thread does
    /// not hold what was said (another runtime answered, or the binding was not moved on), so replay.
    pub fn continuation(&self, runtime: Runtime) -> Result<Continuation> {
        let Some(binding) = self.binding(runtime)? else {
            return Ok(Continuation::Replay { reason: format!("no {runtime} thread is bound to this session") });
        };
        let pending = self.blocks_range(binding.through_seq + 1, u64::MAX)?;
        if let Some(block) = pending.iter().find(|b| b.actor == Actor::Assistant) {
            let by = block.provider.as_deref().unwrap_or("an unnamed provider");
            return Ok(Continuation::Replay {
                reason: format!(
                    "block {} (seq {}) is assistant output by {by} after the {runtime} thread {} was bound through seq {}",
                    block.id, block.seq, binding.native_id, binding.through_seq
                ),
            });
        }
        Ok(Continuation::Continue { native_id: binding.native_id, through_seq: binding.through_seq, pending })
    }

    fn gone(&self) -> Error {
        Error::NotFound(format!("no session {:?} (it was deleted)", self.id))
    }

    fn check_exists(&self, conn: &Connection) -> Result<()> {
        let exists = conn
            .prepare_cached("SELECT 1 FROM sessions WHERE rowid = ?1")
            .and_then(|mut stmt| stmt.exists([self.rowid]))
            .map_err(Error::storage("cannot look up the session"))?;
        if exists { Ok(()) } else { Err(self.gone()) }
    }

    /// The stored block count; `NOT_FOUND` once the session was deleted.
    fn block_count(&self, conn: &Connection) -> Result<u64> {
        conn.prepare_cached("SELECT block_count FROM sessions WHERE rowid = ?1")
            .and_then(|mut stmt| stmt.query_row([self.rowid], |row| row.get::<_, i64>(0)).optional())
            .map_err(Error::storage("cannot count blocks"))?
            .map(|n| n as u64)
            .ok_or_else(|| self.gone())
    }
}

/// Inserts blocks into one session inside a caller's transaction: assigns ids and `seq`, stores embed
/// bytes, records attribution. `finish` updates the session's count; the caller commits.
pub(crate) struct BlockWriter<'t> {
    tx: &'t rusqlite::Transaction<'t>,
    rowid: i64,
    session_id: &'t str,
    next_seq: u64,
    last_attribution: Option<(String, String, String)>,
    seen_attributions: BTreeSet<(String, String, String)>,
}

const WRITE_CONTEXT: &str = "cannot append blocks";

impl<'t> BlockWriter<'t> {
    pub(crate) fn new(tx: &'t rusqlite::Transaction<'t>, rowid: i64, session_id: &'t str, count: u64) -> Result<Self> {
        Ok(BlockWriter {
            tx,
            rowid,
            session_id,
            next_seq: count,
            last_attribution: None,
            seen_attributions: BTreeSet::new(),
        })
    }

    /// Blocks written so far plus those the session had.
    pub(crate) fn len(&self) -> u64 {
        self.next_seq
    }

    /// Stores one block prepared by `prepare_block`; `index` names it in errors.
    pub(crate) fn write(&mut self, block: &mut Block, index: usize) -> Result<()> {
        let context = WRITE_CONTEXT;
        let tx = self.tx;
        let mut insert_block = tx
            .prepare_cached(&format!(
                "INSERT INTO blocks (session, {BLOCK_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)"
            ))
            .map_err(Error::storage(context))?;
        if block.id.is_empty() {
            block.id = uuid::Uuid::now_v7().to_string();
        }
        block.seq = self.next_seq;
        for (embed_id, embed) in block.embeds.iter_mut() {
            match embed.data.take() {
                Some(data) => {
                    tx.prepare_cached("INSERT OR IGNORE INTO blobs (sha256, size, data) VALUES (?1, ?2, ?3)")
                        .and_then(|mut stmt| stmt.execute(params![embed.sha256, data.len() as i64, data]))
                        .map_err(Error::storage(context))?;
                }
                None => {
                    let size: Option<i64> = tx
                        .prepare_cached("SELECT size FROM blobs WHERE sha256 = ?1")
                        .and_then(|mut stmt| stmt.query_row([&embed.sha256], |row| row.get(0)).optional())
                        .map_err(Error::storage(context))?;
                    match size {
                        Some(size) => embed.size = size as u64,
                        None => {
                            return Err(Error::invalid_field(
                                format!("embeds.{embed_id}.data"),
                                format!(
                                    "embed {embed_id:?} carries no bytes and the store has none with sha256 {}",
                                    embed.sha256
                                ),
                            )
                            .at_index(index));
                        }
                    }
                }
            }
            tx.prepare_cached("INSERT OR IGNORE INTO session_embeds (session, embed_id, sha256) VALUES (?1, ?2, ?3)")
                .and_then(|mut stmt| stmt.execute(params![self.rowid, embed_id, embed.sha256]))
                .map_err(Error::storage(context))?;
            let stored: String = tx
                .prepare_cached("SELECT sha256 FROM session_embeds WHERE session = ?1 AND embed_id = ?2")
                .and_then(|mut stmt| stmt.query_row(params![self.rowid, embed_id], |row| row.get(0)))
                .map_err(Error::storage(context))?;
            if stored != embed.sha256 {
                return Err(Error::Conflict(format!(
                    "embed id {embed_id:?} is already used in session {:?} for other bytes (block {index} of the batch)",
                    self.session_id
                )));
            }
        }
        let embeds = (!block.embeds.is_empty()).then(|| to_json(&block.embeds));
        let inserted = insert_block.execute(params![
            self.rowid,
            block.seq as i64,
            block.id,
            block.actor.as_str(),
            block.kind.as_str(),
            block.content,
            block.tool.as_ref().map(to_json),
            block.reasoning.as_ref().map(to_json),
            embeds,
            block.provider,
            block.model_provider,
            block.model,
            block.message_id,
            block.turn_id,
            block.created_at.as_millis(),
            block.native.as_ref().map(to_json),
        ]);
        match inserted {
            Ok(_) => {}
            Err(e) if is_unique_violation(&e) => {
                return Err(Error::Conflict(format!("block id {:?} exists already (block {index} of the batch)", block.id)));
            }
            Err(e) => return Err(Error::storage(context)(e)),
        }
        if block.provider.is_some() || block.model_provider.is_some() || block.model.is_some() {
            let key = (
                block.provider.clone().unwrap_or_default(),
                block.model_provider.clone().unwrap_or_default(),
                block.model.clone().unwrap_or_default(),
            );
            // One row per distinct attribution and batch; most blocks repeat the previous one.
            if self.last_attribution.as_ref() != Some(&key) {
                if self.seen_attributions.insert(key.clone()) {
                    tx.prepare_cached(
                        "INSERT OR IGNORE INTO session_attribution (session, provider, model_provider, model)
                         VALUES (?1, ?2, ?3, ?4)",
                    )
                    .and_then(|mut stmt| stmt.execute(params![self.rowid, key.0, key.1, key.2]))
                    .map_err(Error::storage(context))?;
                }
                self.last_attribution = Some(key);
            }
        }
        self.next_seq += 1;
        Ok(())
    }

    /// Records the new block count on the session.
    pub(crate) fn finish(self) -> Result<()> {
        self.tx
            .execute(
                "UPDATE sessions SET block_count = ?2, updated_at = max(updated_at, ?3) WHERE rowid = ?1",
                params![self.rowid, self.next_seq as i64, Timestamp::now().as_millis()],
            )
            .map_err(Error::storage(WRITE_CONTEXT))?;
        Ok(())
    }
}

/// What an importer learned about the session besides its blocks.
#[derive(Debug, Default)]
pub(crate) struct ImportedMeta {
    /// The session id the native data names (used when the caller gave none).
    pub id: Option<String>,
    pub title: Option<String>,
    pub cwd: Option<String>,
}

/// Feeds blocks into a session being imported; see `Store::import_session`.
pub(crate) struct ImportSink<'t> {
    writer: BlockWriter<'t>,
    /// Lines of the input that an earlier import already stored (importing a grown file).
    skip_lines: u64,
}

/// A native file as [`Store::import_source`] last read it.
#[derive(Debug, Clone)]
pub(crate) struct SourceRecord {
    pub path: String,
    pub runtime: Runtime,
    pub size: u64,
    pub lines: u64,
    pub sha256: String,
}

impl Store {
    /// The session imported from `path` and how the file was then, if it was and the session is still there.
    pub(crate) fn source(&self, path: &str) -> Result<Option<(Session, SourceRecord)>> {
        let context = "cannot read imported sources";
        let row: Option<(i64, String, String, i64, i64, String)> = self.with_conn(|conn| {
            conn.prepare_cached(
                "SELECT s.rowid, s.id, src.runtime, src.size, src.lines, src.sha256 FROM sources src JOIN sessions s ON s.rowid = src.session WHERE src.path = ?1",
            )
            .and_then(|mut stmt| stmt.query_row([path], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?))).optional())
            .map_err(Error::storage(context))
        })?;
        let Some((rowid, id, runtime, size, lines, sha256)) = row else { return Ok(None) };
        let Ok(runtime) = runtime.parse() else { return Ok(None) };
        let record = SourceRecord { path: path.to_string(), runtime, size: size as u64, lines: lines as u64, sha256 };
        Ok(Some((Session { store: self.clone(), id, rowid }, record)))
    }

    /// Records that `session` holds the file as `record` describes it.
    pub(crate) fn remember_source(&self, session: &Session, record: &SourceRecord) -> Result<()> {
        self.with_conn(|conn| {
            conn.execute(
                "INSERT INTO sources (path, session, runtime, size, lines, sha256, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                 ON CONFLICT (path) DO UPDATE SET session = excluded.session, runtime = excluded.runtime, size = excluded.size,
                 lines = excluded.lines, sha256 = excluded.sha256, updated_at = excluded.updated_at",
                params![record.path, session.rowid, record.runtime.as_str(), record.size as i64, record.lines as i64, record.sha256, Timestamp::now().as_millis()],
            )
            .map_err(Error::storage("cannot record an imported source"))?;
            Ok(())
        })
    }
}

/// Where an import goes: a new session, or the end of an existing one (the input read again, the
/// blocks of its first `after_line` lines already stored).
pub(crate) enum ImportTarget {
    New(Option<String>),
    Append { session: Session, after_line: u64 },
}

/// The id of an imported block (importers leave ids to the store): derived from where it sits and
/// what it holds, so importing the same input again gives the same ids (and the same native ids in
/// exports, which derive from block ids). Not from its time: an importer stamps a record without
/// a timestamp with the time of import. Unique within a session, as `seq` is.
fn imported_block_id(seq: u64, block: &Block) -> String {
    let content = block.content.as_bytes();
    // A bounded prefix keeps this cheap for large tool outputs; seq and length separate the rest.
    let prefix = String::from_utf8_lossy(&content[..content.len().min(256)]);
    crate::native::common::derived_uuid(&[
        "imported-block",
        &seq.to_string(),
        block.kind.as_str(),
        &content.len().to_string(),
        &prefix,
    ])
}

impl ImportSink<'_> {
    /// True when the blocks of input line `line` (1-based) were stored by an earlier import: the
    /// importer reads such lines for their state but does not push their blocks.
    pub(crate) fn skips(&self, line: u64) -> bool {
        line <= self.skip_lines
    }

    /// Replaces the native passthrough of the block at `seq` written by this import (an importer
    /// that learns something of the first record only at the end of its input).
    pub(crate) fn set_native(&mut self, seq: u64, native: &crate::model::Native) -> Result<()> {
        self.writer
            .tx
            .execute(
                "UPDATE blocks SET native = ?1 WHERE session = ?2 AND seq = ?3",
                params![to_json(native), self.writer.rowid, seq as i64],
            )
            .map_err(Error::storage(WRITE_CONTEXT))?;
        Ok(())
    }

    /// Validates and stores one block; `index` names it in errors.
    pub(crate) fn push(&mut self, mut block: Block) -> Result<()> {
        let index = self.writer.len() as usize;
        if block.id.is_empty() {
            block.id = imported_block_id(self.writer.next_seq, &block);
        }
        prepare_block(&mut block).map_err(|e| e.at_index(index))?;
        self.writer.write(&mut block, index)
    }
}

impl Store {
    /// Creates the session `id` and fills it with what `fill` pushes, in one transaction: on any error
    /// nothing is stored. `fill` returns the title and cwd it found.
    /// Imports into `target`: a new session ([`Store::import_session`]) or the end of an existing one.
    pub(crate) fn import_to(&self, target: ImportTarget, fill: impl FnOnce(&mut ImportSink<'_>) -> Result<ImportedMeta>) -> Result<Session> {
        let (session, after_line) = match target {
            ImportTarget::New(id) => return self.import_session(id, fill),
            ImportTarget::Append { session, after_line } => (session, after_line),
        };
        self.with_conn(|conn| {
            let context = "cannot import into the session";
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(Error::storage(context))?;
            let count = session.block_count(&tx)?;
            {
                let mut sink = ImportSink { writer: BlockWriter::new(&tx, session.rowid, &session.id, count)?, skip_lines: after_line };
                fill(&mut sink)?;
                sink.writer.finish()?;
            }
            tx.commit().map_err(Error::storage(context))
        })?;
        Ok(session)
    }

    pub(crate) fn import_session(
        &self,
        id: Option<String>,
        fill: impl FnOnce(&mut ImportSink<'_>) -> Result<ImportedMeta>,
    ) -> Result<Session> {
        let given = id.is_some();
        let mut id = match id {
            Some(id) => {
                validate_session_id(&id)?;
                id
            }
            None => uuid::Uuid::now_v7().to_string(),
        };
        let rowid = self.with_conn(|conn| {
            let context = "cannot import the session";
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(Error::storage(context))?;
            let now = Timestamp::now().as_millis();
            match tx.execute(
                "INSERT INTO sessions (id, title, cwd, created_at, updated_at, block_count) VALUES (?1, NULL, NULL, ?2, ?2, 0)",
                params![id, now],
            ) {
                Ok(_) => {}
                Err(e) if is_unique_violation(&e) => {
                    return Err(Error::Conflict(format!("session {id:?} exists already")));
                }
                Err(e) => return Err(Error::storage(context)(e)),
            }
            let rowid = tx.last_insert_rowid();
            let meta = {
                let mut sink = ImportSink { writer: BlockWriter::new(&tx, rowid, &id, 0)?, skip_lines: 0 };
                let meta = fill(&mut sink)?;
                sink.writer.finish()?;
                meta
            };
            if let (false, Some(native_id)) = (given, meta.id.filter(|n| validate_session_id(n).is_ok())) {
                match tx.execute("UPDATE sessions SET id = ?2 WHERE rowid = ?1", params![rowid, native_id]) {
                    Ok(_) => id = native_id,
                    Err(e) if is_unique_violation(&e) => {
                        return Err(Error::Conflict(format!(
                            "session {native_id:?} exists already (import it under another id with the session_id option)"
                        )));
                    }
                    Err(e) => return Err(Error::storage(context)(e)),
                }
            }
            tx.execute(
                "UPDATE sessions SET title = ?2, cwd = ?3 WHERE rowid = ?1",
                params![rowid, meta.title, meta.cwd],
            )
            .map_err(Error::storage(context))?;
            tx.commit().map_err(Error::storage(context))?;
            Ok(rowid)
        })?;
        Ok(Session { store: self.clone(), id, rowid })
    }
}

fn session_infos(conn: &Connection, only: Option<i64>) -> Result<Vec<SessionInfo>> {

    let context = "cannot list sessions";
    let mut seen: HashMap<i64, [BTreeSet<String>; 3]> = HashMap::new();
    let mut stmt = conn
        .prepare_cached("SELECT session, provider, model_provider, model FROM session_attribution WHERE ?1 IS NULL OR session = ?1")
        .map_err(Error::storage(context))?;
    let mut rows = stmt.query([only]).map_err(Error::storage(context))?;
    while let Some(row) = rows.next().map_err(Error::storage(context))? {
        let entry = seen.entry(row.get(0).map_err(Error::storage(context))?).or_default();
        for (i, set) in entry.iter_mut().enumerate() {
            let value: String = row.get(i + 1).map_err(Error::storage(context))?;
            if !value.is_empty() {
                set.insert(value);
            }
        }
    }
    drop(rows);
    let mut stmt = conn
        .prepare_cached(
            "SELECT rowid, id, title, cwd, created_at, updated_at, block_count FROM sessions
             WHERE ?1 IS NULL OR rowid = ?1 ORDER BY updated_at DESC, rowid DESC",
        )
        .map_err(Error::storage(context))?;
    let mut rows = stmt.query([only]).map_err(Error::storage(context))?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(Error::storage(context))? {
        let rowid: i64 = row.get(0).map_err(Error::storage(context))?;
        let [providers, model_providers, models] = seen.remove(&rowid).unwrap_or_default();
        out.push(SessionInfo {
            id: row.get(1).map_err(Error::storage(context))?,
            title: row.get(2).map_err(Error::storage(context))?,
            cwd: row.get(3).map_err(Error::storage(context))?,
            created_at: timestamp(row.get(4).map_err(Error::storage(context))?)?,
            updated_at: timestamp(row.get(5).map_err(Error::storage(context))?)?,
            block_count: row.get::<_, i64>(6).map_err(Error::storage(context))? as u64,
            providers: providers.into_iter().collect(),
            model_providers: model_providers.into_iter().collect(),
            models: models.into_iter().collect(),
        });
    }
    Ok(out)
}

fn if_batch(e: Error, index: usize) -> Error {
    e.at_index(index)
}
