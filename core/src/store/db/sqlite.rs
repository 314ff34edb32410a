//! What only SQLite needs when a database file is opened: the `file:` URI of a path, the check
//! that a file is an sna-history database, and the migrations keyed by `PRAGMA user_version`.

use std::path::Path;

use rusqlite::{Connection, ErrorCode, TransactionBehavior};

use crate::error::{Error, Result};
use crate::store::{APPLICATION_ID, SCHEMA_VERSION};

/// Migrations, index `i` takes the schema from version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[
    include_str!("../../schema/v1.sql"), include_str!("../../schema/v2.sql"), include_str!("../../schema/v3.sql"), include_str!("../../schema/v4.sql"),
    include_str!("../../schema/v5.sql"),
    include_str!("../../schema/v6.sql"),
    include_str!("../../schema/v7.sql"),
    include_str!("../../schema/v8.sql"),
];

/// A path as the path part of an SQLite `file:` URI.
pub(crate) fn uri_path(path: &Path) -> String {
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
pub(crate) fn check_schema(conn: &Connection, shown: &str) -> Result<()> {
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

pub(crate) fn migrate(conn: &mut Connection, shown: &str) -> Result<()> {
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
