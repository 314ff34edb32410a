//! Every public method of [`Store`], each delegating to the module that does the work: opening,
//! sessions, search and closing to `store/mod.rs`, usage to `store/usage_report.rs`, sync to
//! `store/sync.rs`, and the conversions (imports of native files and databases) to the pipeline's
//! `native/imports.rs`.

use std::path::Path;

use crate::error::Result;
use crate::model::Runtime;
use crate::native::{self, Options, Source, SourceImport};
use crate::store::{self, NewSession, SearchHit, SearchOptions, Session, SessionInfo, Store, SyncOptions, SyncReport, UsageOptions, UsageReport};

impl Store {
    /// Opens (creating if needed) the database at `path`.
    ///
    /// A directory, a file that is not SQLite, a database of another application and a database written
    /// by a newer sna-history (`SCHEMA_TOO_NEW`) are refused; a refused file is not modified.
    ///
    /// A `postgres://` or `postgresql://` URL opens that PostgreSQL database instead (see
    /// [`Store::open_url`]).
    pub fn open(path: impl AsRef<Path>) -> Result<Store> {
        store::open(path.as_ref())
    }

    /// Opens an existing database for reading only: every read works, every write is a `STORAGE`
    /// error saying the database is read-only. [`Store::open`] does this by itself for a database
    /// (or its directory) the user may not write. Nothing is migrated: a database of an older
    /// schema must be opened writable once.
    pub fn open_read_only(path: impl AsRef<Path>) -> Result<Store> {
        store::open_read_only(path.as_ref())
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
        store::open_url(url)
    }

    /// The PostgreSQL URL of the store (without its password), `None` for SQLite.
    pub fn url(&self) -> Option<&str> {
        store::url(self)
    }

    /// A store in memory, gone when the last clone is dropped.
    pub fn open_in_memory() -> Result<Store> {
        store::open_in_memory()
    }

    /// The database file, `None` in memory.
    pub fn path(&self) -> Option<&Path> {
        store::path(self)
    }

    /// Creates an empty session. An id that exists already is a `CONFLICT`.
    pub fn create_session(&self, new: NewSession) -> Result<Session> {
        store::create_session(self, new)
    }

    /// The session with this id (`NOT_FOUND` if there is none).
    pub fn session(&self, id: &str) -> Result<Session> {
        store::session_by_id(self, id)
    }

    /// Every session, most recently updated first.
    pub fn sessions(&self) -> Result<Vec<SessionInfo>> {
        store::sessions(self)
    }

    /// Changes a session's title and working directory: each `Some` replaces the stored value
    /// (`Some("")` clears it), `None` keeps it. `NOT_FOUND` for an unknown session.
    pub fn update_session(&self, id: &str, title: Option<&str>, cwd: Option<&str>) -> Result<SessionInfo> {
        store::update_session(self, id, title, cwd)
    }

    /// Deletes a session with its blocks and bindings; embed bytes no other session uses are freed.
    pub fn delete_session(&self, id: &str) -> Result<()> {
        store::delete_session(self, id)
    }

    /// Number of distinct embed blobs stored (each distinct content once).
    pub fn blob_count(&self) -> Result<u64> {
        store::blob_count(self)
    }

    /// Full-text search over every session's blocks (user and assistant text, thinking, tool
    /// calls with their tool name, tool output; runtime bookkeeping only with
    /// [`SearchOptions::bookkeeping`]), best first.
    ///
    /// The query: words (matched whatever their case and accents), `"a phrase"`, `prefix*`,
    /// `AND` (also between words side by side), `OR`, `a NOT b`, parentheses. CJK text and emoji
    /// are searched character by character. A malformed query is `INVALID_INPUT` on field
    /// `query` saying what is wrong and at which character.
    pub fn search(&self, query: &str, options: &SearchOptions) -> Result<Vec<SearchHit>> {
        store::search_blocks(self, query, options)
    }

    /// Token usage and cost of every session, grouped as `options.by` says: one row per group in
    /// order (days, weeks and months oldest first, sessions by their last response, the others
    /// most expensive first), each broken down by model, and the totals.
    ///
    /// A response written more than once (a transcript that repeats a response on each of its
    /// content records; a resumed or forked session that copies earlier ones) counts once. Cost: the
    /// runtime's own, when it reported one; else from the price table; a model with neither is
    /// listed in `unpriced_models` and adds nothing to `cost_usd` (which is `None` when nothing in
    /// the row could be priced).
    pub fn usage(&self, options: &UsageOptions) -> Result<UsageReport> {
        store::usage_report::store_usage(self, options)
    }

    /// The random id (32 hex digits) that names this store to the stores it syncs with.
    pub fn store_id(&self) -> Result<String> {
        store::store_id(self)
    }

    /// Copies into `target` every session and block of this store that `target` lacks: sessions
    /// it does not have are created with the same id, title, working directory, times and origin
    /// (see [`SyncOptions::origin`]); sessions it holds fewer blocks of get the rest, with the same
    /// block ids, `seq`, times, attribution, native data and embed bytes. Bindings to native threads
    /// and the files sessions were imported from belong to the machine they were made on and are
    /// not copied.
    ///
    /// Incremental and safe to stop: each chunk of blocks is copied in one transaction of the target
    /// together with its watermark, so a run that is stopped leaves whole blocks, and the next run
    /// goes on from there and copies nothing that is there already. A session whose histories differ
    /// in the two stores is listed in [`SyncReport::conflicts`] and left untouched on both sides.
    pub fn sync_to(&self, target: &Store, options: &SyncOptions) -> Result<SyncReport> {
        store::sync::sync_to(self, target, options)
    }

    /// Closes the database. Every later call on this store, its clones and its sessions fails with
    /// `CLOSED`; closing twice is harmless. Dropping the last clone closes it too.
    pub fn close(&self) -> Result<()> {
        store::close(self)
    }

    /// True once [`Store::close`] was called.
    pub fn is_closed(&self) -> bool {
        store::is_closed(self)
    }

    /// Imports native history of `runtime` as a new session, atomically: on any error nothing is
    /// stored. Malformed records are kept as `error` blocks (see [`Session::import_report`]), or with
    /// `options.strict` fail the import naming the line. A file (`Source::Path`) is remembered with
    /// the session, as [`Store::import_source`] does, so that importing it that way later knows it.
    pub fn import_native(&self, runtime: Runtime, source: Source, options: &Options) -> Result<Session> {
        native::imports::import_native(self, runtime, source, options)
    }

    /// Imports a native file and remembers it, so that importing the same path again adds only
    /// what the file gained: nothing when it is unchanged; for a Claude Code transcript or Codex
    /// rollout that grew by whole lines, the blocks of the new lines appended to its session; for
    /// any other change, the session imported afresh in place, in one transaction (it stays as it
    /// was if the new import fails). The record of the file is what the import read, written with
    /// the blocks; a last line still being written (no newline, not yet JSON) waits for the next
    /// import. The runtime is detected when `runtime` is `None`. (Databases of sessions, such as
    /// `opencode.db`, are [`Store::import_database`]'s.)
    pub fn import_source(&self, path: impl AsRef<Path>, runtime: Option<Runtime>, options: &Options) -> Result<SourceImport> {
        native::imports::import_source(self, path.as_ref(), runtime, options)
    }

    /// True when `path` is a file [`Store::import_source`] read before and it still looks as it did
    /// then (length, modification time, inode and device, and not modified within two seconds of
    /// that read): importing it would do nothing, and deciding so read none of its bytes. False
    /// when it has to be read to tell.
    pub fn source_unchanged(&self, path: impl AsRef<Path>) -> Result<bool> {
        native::imports::source_unchanged(self, path.as_ref())
    }

    /// Imports every session of a database file (`opencode.db`, read-only) that the store does not
    /// hold yet, most recently updated first; returns the sessions imported. The runtime is
    /// detected from the file's header when `runtime` is `None`.
    pub fn import_database(&self, path: impl AsRef<Path>, runtime: Option<Runtime>) -> Result<Vec<Session>> {
        native::imports::import_database(self, path.as_ref(), runtime)
    }

    /// Imports every session of an `opencode.db` (read-only), most recently updated first;
    /// sessions already in the store are skipped. Returns the sessions imported.
    pub fn import_opencode_db(&self, path: impl AsRef<Path>) -> Result<Vec<Session>> {
        native::imports::import_database(self, path.as_ref(), Some(Runtime::OpenCode))
    }

    /// Imports a native file; `runtime: None` detects the runtime from the content.
    pub fn import_file(&self, path: impl AsRef<Path>, runtime: Option<Runtime>, options: &Options) -> Result<Session> {
        native::imports::import_file(self, path.as_ref(), runtime, options)
    }
}
