//! What only SQLite needs when a database file is opened: the checks of the path, the `file:` URI
//! of a path, the check that a file is an sna-history database, write-ahead logging, the
//! read-only fallback, and the migrations keyed by `PRAGMA user_version`.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, OpenFlags, TransactionBehavior};

use crate::error::{Error, Result};
use crate::store::{APPLICATION_ID, SCHEMA_VERSION};

use super::Conn;

const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Opens (creating if needed) the database file at `path`, migrated to [`SCHEMA_VERSION`]. A file
/// or directory the user may only read is opened read-only instead; the flag says whether the
/// connection may write.
pub(crate) fn open(path: &Path) -> Result<(Conn, bool)> {
    let shown = path.display().to_string();
    if path.is_dir() {
        return Err(Error::invalid(format!("database path {shown} is a directory, not a file")));
    }
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        if !parent.is_dir() {
            return Err(Error::Io {
                context: format!("cannot create database {shown}"),
                source: std::io::Error::new(std::io::ErrorKind::NotFound, format!("directory {} does not exist", parent.display())),
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
        finish_open(conn, &shown)
    })();
    match opened {
        Ok(conn) => Ok((conn, true)),
        // A database the user may only read (the file, or the directory its WAL goes in):
        // opened read-only, so that reading works.
        Err(Error::Storage { source, .. })
            if existed
                && matches!(source.downcast_ref::<rusqlite::Error>(),
                    Some(rusqlite::Error::SqliteFailure(f, _)) if matches!(f.code, ErrorCode::ReadOnly | ErrorCode::CannotOpen)) =>
        {
            Ok((open_read_only(path)?, false))
        }
        Err(e) => Err(e),
    }
}

/// Opens an existing database for reading only (`Store::open_read_only`).
pub(crate) fn open_read_only(path: &Path) -> Result<Conn> {
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
    Ok(Conn::Sqlite(conn))
}

/// A database in memory, gone with its connection.
pub(crate) fn open_in_memory() -> Result<Conn> {
    let conn = Connection::open_in_memory().map_err(Error::storage("cannot open an in-memory database"))?;
    finish_open(conn, ":memory:")
}

fn finish_open(mut conn: Connection, shown: &str) -> Result<Conn> {
    conn.execute_batch("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA cache_size = -32768;")
        .map_err(Error::storage("cannot set pragmas"))?;
    conn.set_prepared_statement_cache_capacity(64);
    migrate(&mut conn, shown)?;
    Ok(Conn::Sqlite(conn))
}

/// Migrations, index `i` takes the schema from version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[
    include_str!("../../schema/v1.sql"), include_str!("../../schema/v2.sql"), include_str!("../../schema/v3.sql"), include_str!("../../schema/v4.sql"),
    include_str!("../../schema/v5.sql"),
    include_str!("../../schema/v6.sql"),
    include_str!("../../schema/v7.sql"),
    include_str!("../../schema/v8.sql"),
];

/// A path as the path part of an SQLite `file:` URI.
fn uri_path(path: &Path) -> String {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut out = String::new();
    for byte in absolute.to_string_lossy().bytes() {
        match byte {
            b'?' | b'#' | b'%' | 0x80.. => out.push_str(&format!("%{byte:02X}")),
            _ => out.push(byte as char),
        }
    }
    out
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
    if version < 0 {
        return Err(Error::invalid(format!(
            "{shown} has schema version {version}, which no sna-history writes: it is not an sna-history database or it is corrupt (left untouched)"
        )));
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
    let Ok(from) = usize::try_from(version) else {
        return Err(Error::invalid(format!("{shown} has schema version {version}, which no sna-history writes (left untouched)")));
    };
    for step in &MIGRATIONS[from..] {
        tx.execute_batch(step).map_err(Error::storage(&context))?;
    }
    tx.execute_batch(&format!("PRAGMA user_version = {SCHEMA_VERSION}; PRAGMA application_id = {APPLICATION_ID};"))
        .map_err(Error::storage(&context))?;
    tx.commit().map_err(Error::storage(&context))
}

/// A `STORAGE` error for a failed SQLite call on `conn`. A failure of the disk under the database
/// (full, read-only, an I/O error, a file that cannot be opened) says in words what happened,
/// names the database file and adds the system's error where SQLite kept one; SQLite's own error
/// stays its source. Any other failure is `context` and SQLite's error, as before.
pub(crate) fn failure(conn: &Connection, context: &str, e: rusqlite::Error) -> Error {
    let Some(cause) = disk_cause(conn, &e) else { return Error::storage(context)(e) };
    Error::storage(context)(DiskFailure { cause, sqlite: e })
}

/// What a failure of the disk under the database was, in words, or `None` for other failures.
fn disk_cause(conn: &Connection, e: &rusqlite::Error) -> Option<String> {
    let rusqlite::Error::SqliteFailure(f, _) = e else { return None };
    let file = match conn.path() {
        Some("") | None => "the in-memory database".to_string(),
        Some(path) => path.to_string(),
    };
    // SQLite keeps the system's error number only for these two codes; for the others it would be
    // that of an earlier failure.
    let os = matches!(f.code, ErrorCode::SystemIoFailure | ErrorCode::CannotOpen)
        .then(|| {
            // SAFETY: `conn` is open for the whole call; the function only reads a number it holds.
            let errno = unsafe { rusqlite::ffi::sqlite3_system_errno(conn.handle()) };
            (errno != 0).then(|| std::io::Error::from_raw_os_error(errno))
        })
        .flatten();
    let said = |what: String| match &os {
        Some(os) => format!("{what} ({os})"),
        None => what,
    };
    Some(match (f.code, os.as_ref().and_then(std::io::Error::raw_os_error)) {
        (ErrorCode::DiskFull, _) => format!("the disk is full or the database reached its size limit: {file} cannot grow"),
        (ErrorCode::ReadOnly, _) => format!("the database {file} is read-only"),
        (_, Some(libc::ENOSPC | libc::EDQUOT)) => said(format!("the disk is full: {file} cannot grow")),
        (_, Some(libc::EFBIG)) => said(format!("{file} cannot grow: it reached the file-size limit set for this process")),
        (_, Some(libc::EROFS)) => said(format!("the database {file} is read-only: its file system is mounted read-only")),
        (_, Some(libc::EPERM | libc::EACCES)) => said(format!("the database {file} is read-only: the system refuses to write it")),
        (ErrorCode::CannotOpen, _) => said(format!("{file} or the -wal or -shm file beside it cannot be opened")),
        (ErrorCode::SystemIoFailure, _) => said(format!("the disk failed reading or writing {file}")),
        _ => return None,
    })
}

/// A failure of the disk under a database: the cause in words, with SQLite's own error.
#[derive(Debug)]
struct DiskFailure {
    cause: String,
    sqlite: rusqlite::Error,
}

impl std::fmt::Display for DiskFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}; SQLite: {}", self.cause, self.sqlite)
    }
}

impl std::error::Error for DiskFailure {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.sqlite)
    }
}
