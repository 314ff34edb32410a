//! Where SQL meets a database: the one connection type the store uses, over SQLite (rusqlite) or
//! PostgreSQL (the `postgres` crate). Statements are written once, in the SQL both accept, with
//! `?N` placeholders (given to PostgreSQL as `$N`); the few that differ are the [`Dialect`]'s.
//! Values cross as [`Arg`]s and come back through [`Row`], so nothing above this module names a
//! driver.

use rusqlite::types::{ToSqlOutput, ValueRef};

use crate::error::{Error, Result};

use dialect::Backend;
pub(crate) use dialect::Dialect;

/// A value bound to a placeholder.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Arg<'a> {
    Null,
    Int(i64),
    Text(&'a str),
    Blob(&'a [u8]),
}

impl From<i64> for Arg<'_> {
    fn from(n: i64) -> Self {
        Arg::Int(n)
    }
}

impl<'a> From<&'a str> for Arg<'a> {
    fn from(s: &'a str) -> Self {
        Arg::Text(s)
    }
}

impl<'a> From<&'a String> for Arg<'a> {
    fn from(s: &'a String) -> Self {
        Arg::Text(s)
    }
}

impl<'a> From<&'a [u8]> for Arg<'a> {
    fn from(b: &'a [u8]) -> Self {
        Arg::Blob(b)
    }
}

impl<'a, T: Into<Arg<'a>>> From<Option<T>> for Arg<'a> {
    fn from(v: Option<T>) -> Self {
        v.map_or(Arg::Null, Into::into)
    }
}

impl<'a> From<&'a Option<String>> for Arg<'a> {
    fn from(v: &'a Option<String>) -> Self {
        v.as_deref().map_or(Arg::Null, Arg::Text)
    }
}

impl rusqlite::ToSql for Arg<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match *self {
            Arg::Null => ValueRef::Null,
            Arg::Int(n) => ValueRef::Integer(n),
            Arg::Text(s) => ValueRef::Text(s.as_bytes()),
            Arg::Blob(b) => ValueRef::Blob(b),
        }))
    }
}

/// Arguments for a statement: `args![a, b, c]`.
macro_rules! args {
    ($($arg:expr),* $(,)?) => { &[$($crate::store::db::Arg::from($arg)),*][..] };
}
pub(crate) use args;

/// A failure of the database driver, kept as the source of a `STORAGE` error.
pub(crate) type DbError = Box<dyn std::error::Error + Send + Sync>;

/// A `STORAGE` error saying what was being done.
pub(crate) fn storage(context: &str, source: impl Into<DbError>) -> Error {
    Error::storage(context)(source.into())
}

/// True when `e` is the database refusing a second row with the same unique key.
pub(crate) fn is_unique_violation(e: &Error) -> bool {
    let Error::Storage { source, .. } = e else { return false };
    if let Some(rusqlite::Error::SqliteFailure(f, _)) = source.downcast_ref::<rusqlite::Error>() {
        return f.code == rusqlite::ErrorCode::ConstraintViolation;
    }
    #[cfg(feature = "postgres")]
    if let Some(pg::PgError(e)) = source.downcast_ref::<pg::PgError>() {
        return e.code() == Some(&postgres::error::SqlState::UNIQUE_VIOLATION);
    }
    false
}

/// One row of a result, read by column index.
pub(crate) enum Row<'r> {
    Sqlite(&'r rusqlite::Row<'r>),
    #[cfg(feature = "postgres")]
    Postgres(&'r postgres::Row),
}

/// A column's value as it is stored.
pub(crate) enum Cell<'r> {
    Null,
    Int(i64),
    Text(&'r str),
    Blob(&'r [u8]),
}

impl<'r> Row<'r> {
    /// The value of column `i`.
    pub(crate) fn cell(&self, i: usize) -> Result<Cell<'r>> {
        let context = "cannot read a row";
        match self {
            Row::Sqlite(row) => Ok(match row.get_ref(i).map_err(|e| storage(context, e))? {
                ValueRef::Null => Cell::Null,
                ValueRef::Integer(n) => Cell::Int(n),
                // No column of the store holds a float: one here is a corrupt row, not a number to round.
                ValueRef::Real(x) => return Err(Error::Internal(format!("stored column {i} holds the float {x}, not an integer or text"))),
                ValueRef::Text(t) => Cell::Text(std::str::from_utf8(t).map_err(|e| Error::Internal(format!("stored text is not UTF-8: {e}")))?),
                ValueRef::Blob(b) => Cell::Blob(b),
            }),
            #[cfg(feature = "postgres")]
            Row::Postgres(row) => pg::cell(row, i),
        }
    }

    fn is_postgres(&self) -> bool {
        !matches!(self, Row::Sqlite(_))
    }

    pub(crate) fn int(&self, i: usize) -> Result<i64> {
        match self.cell(i)? {
            Cell::Int(n) => Ok(n),
            _ => Err(Error::Internal(format!("stored column {i} is not an integer"))),
        }
    }

    pub(crate) fn opt_int(&self, i: usize) -> Result<Option<i64>> {
        match self.cell(i)? {
            Cell::Null => Ok(None),
            Cell::Int(n) => Ok(Some(n)),
            _ => Err(Error::Internal(format!("stored column {i} is not an integer"))),
        }
    }

    pub(crate) fn text(&self, i: usize) -> Result<&'r str> {
        match self.cell(i)? {
            Cell::Text(t) => Ok(t),
            // PostgreSQL keeps text that may hold NUL (a block's content) as UTF-8 bytes.
            Cell::Blob(b) if self.is_postgres() => std::str::from_utf8(b).map_err(|e| Error::Internal(format!("stored text is not UTF-8: {e}"))),
            _ => Err(Error::Internal(format!("stored column {i} is not text"))),
        }
    }

    pub(crate) fn opt_text(&self, i: usize) -> Result<Option<&'r str>> {
        match self.cell(i)? {
            Cell::Null => Ok(None),
            Cell::Text(t) => Ok(Some(t)),
            _ => Err(Error::Internal(format!("stored column {i} is not text"))),
        }
    }

    pub(crate) fn string(&self, i: usize) -> Result<String> {
        self.text(i).map(str::to_string)
    }

    pub(crate) fn opt_string(&self, i: usize) -> Result<Option<String>> {
        Ok(self.opt_text(i)?.map(str::to_string))
    }

    /// A computed number (a search score): no stored column holds one.
    pub(crate) fn float(&self, i: usize) -> Result<f64> {
        let context = "cannot read a row";
        match self {
            Row::Sqlite(row) => match row.get_ref(i).map_err(|e| storage(context, e))? {
                ValueRef::Real(x) => Ok(x),
                ValueRef::Integer(n) => Ok(n as f64),
                _ => Err(Error::Internal(format!("column {i} is not a number"))),
            },
            #[cfg(feature = "postgres")]
            Row::Postgres(row) => row.try_get::<_, f64>(i).map_err(|e| storage(context, pg::PgError(e))),
        }
    }

    pub(crate) fn blob(&self, i: usize) -> Result<&'r [u8]> {
        match self.cell(i)? {
            Cell::Blob(b) => Ok(b),
            _ => Err(Error::Internal(format!("stored column {i} is not a blob"))),
        }
    }
}

/// Running statements: on a connection or inside a transaction.
pub(crate) trait Sql {
    /// What differs on this connection's database.
    fn dialect(&self) -> Dialect;

    /// Runs a statement; returns how many rows it changed.
    fn exec(&mut self, context: &str, sql: &str, args: &[Arg<'_>]) -> Result<u64>;

    /// Runs a query, handing each row to `each` in order.
    fn each(&mut self, context: &str, sql: &str, args: &[Arg<'_>], each: &mut dyn FnMut(&Row<'_>) -> Result<()>) -> Result<()>;

    /// The first row of a query, read by `read`, if there is one.
    fn first<T>(&mut self, context: &str, sql: &str, args: &[Arg<'_>], read: impl FnOnce(&Row<'_>) -> Result<T>) -> Result<Option<T>>
    where
        Self: Sized,
    {
        let mut read = Some(read);
        let mut out = None;
        self.each(context, sql, args, &mut |row| {
            if let Some(read) = read.take() {
                out = Some(read(row)?);
            }
            Ok(())
        })?;
        Ok(out)
    }

    /// Every row of a query, each read by `read`.
    fn all<T>(&mut self, context: &str, sql: &str, args: &[Arg<'_>], mut read: impl FnMut(&Row<'_>) -> Result<T>) -> Result<Vec<T>>
    where
        Self: Sized,
    {
        let mut out = Vec::new();
        self.each(context, sql, args, &mut |row| {
            out.push(read(row)?);
            Ok(())
        })?;
        Ok(out)
    }
}

fn sqlite_each(conn: &rusqlite::Connection, context: &str, sql: &str, args: &[Arg<'_>], each: &mut dyn FnMut(&Row<'_>) -> Result<()>) -> Result<()> {
    let failed = |e| sqlite::failure(conn, context, e);
    let mut stmt = conn.prepare_cached(sql).map_err(failed)?;
    let mut rows = stmt.query(rusqlite::params_from_iter(args)).map_err(failed)?;
    while let Some(row) = rows.next().map_err(failed)? {
        each(&Row::Sqlite(row))?;
    }
    Ok(())
}

fn sqlite_exec(conn: &rusqlite::Connection, context: &str, sql: &str, args: &[Arg<'_>]) -> Result<u64> {
    let failed = |e| sqlite::failure(conn, context, e);
    let mut stmt = conn.prepare_cached(sql).map_err(failed)?;
    stmt.execute(rusqlite::params_from_iter(args)).map(|n| n as u64).map_err(failed)
}

/// An open connection.
pub(crate) enum Conn {
    Sqlite(rusqlite::Connection),
    #[cfg(feature = "postgres")]
    Postgres(Box<pg::PgConn>),
}

/// A transaction; dropped without [`Tx::commit`], it is rolled back.
pub(crate) enum Tx<'c> {
    Sqlite(rusqlite::Transaction<'c>),
    #[cfg(feature = "postgres")]
    Postgres(pg::PgTx<'c>),
}

impl Conn {
    /// Starts a transaction that writes: it holds the database's write lock from the start on
    /// SQLite (`BEGIN IMMEDIATE`); on PostgreSQL rows are locked as they are read for update.
    pub(crate) fn write(&mut self, context: &str) -> Result<Tx<'_>> {
        match self {
            Conn::Sqlite(conn) => {
                // Begun on a shared borrow (`&mut self` already keeps transactions from nesting),
                // so that a failure can be read on the connection.
                let conn: &rusqlite::Connection = conn;
                rusqlite::Transaction::new_unchecked(conn, rusqlite::TransactionBehavior::Immediate)
                    .map(Tx::Sqlite)
                    .map_err(|e| sqlite::failure(conn, context, e))
            }
            #[cfg(feature = "postgres")]
            Conn::Postgres(conn) => conn.transaction(context).map(Tx::Postgres),
        }
    }

    /// Opens the PostgreSQL database `url` names, its schema brought up to date.
    #[cfg(feature = "postgres")]
    pub(crate) fn postgres(url: &str) -> Result<Conn> {
        pg::open(url).map(|conn| Conn::Postgres(Box::new(conn)))
    }

    /// A further connection to a PostgreSQL database that [`Conn::postgres`] opened (no migration).
    #[cfg(feature = "postgres")]
    pub(crate) fn postgres_session(url: &str) -> Result<Conn> {
        pg::PgConn::connect(url).map(|conn| Conn::Postgres(Box::new(conn)))
    }

    /// Makes SQLite overwrite deleted content with zeros from now on (`on`), or stop; nothing on
    /// PostgreSQL (whose dead rows go with its vacuum).
    pub(crate) fn secure_delete(&mut self, on: bool, context: &str) -> Result<()> {
        match self {
            Conn::Sqlite(conn) => conn.execute_batch(if on { "PRAGMA secure_delete = ON" } else { "PRAGMA secure_delete = OFF" }).map_err(|e| sqlite::failure(conn, context, e)),
            #[cfg(feature = "postgres")]
            Conn::Postgres(_) => Ok(()),
        }
    }

    /// Copies SQLite's write-ahead log into the database file and empties it, best effort (another
    /// reader may hold it; the next checkpoint does it then); nothing on PostgreSQL.
    pub(crate) fn checkpoint(&mut self) {
        match self {
            Conn::Sqlite(conn) => {
                let _ = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
            }
            #[cfg(feature = "postgres")]
            Conn::Postgres(_) => {}
        }
    }
}

impl Sql for Conn {
    fn dialect(&self) -> Dialect {
        match self {
            Conn::Sqlite(_) => Dialect(Backend::Sqlite),
            #[cfg(feature = "postgres")]
            Conn::Postgres(_) => Dialect(Backend::Postgres),
        }
    }

    fn exec(&mut self, context: &str, sql: &str, args: &[Arg<'_>]) -> Result<u64> {
        match self {
            Conn::Sqlite(conn) => sqlite_exec(conn, context, sql, args),
            #[cfg(feature = "postgres")]
            Conn::Postgres(conn) => conn.exec(context, sql, args),
        }
    }

    fn each(&mut self, context: &str, sql: &str, args: &[Arg<'_>], each: &mut dyn FnMut(&Row<'_>) -> Result<()>) -> Result<()> {
        match self {
            Conn::Sqlite(conn) => sqlite_each(conn, context, sql, args, each),
            #[cfg(feature = "postgres")]
            Conn::Postgres(conn) => conn.each(context, sql, args, each),
        }
    }
}

impl Tx<'_> {
    pub(crate) fn commit(self, context: &str) -> Result<()> {
        match self {
            // What `Transaction::commit` does, with the failure read on the connection: once
            // committed the drop does nothing; a transaction left open is rolled back by it.
            Tx::Sqlite(tx) => tx.execute_batch("COMMIT").map_err(|e| sqlite::failure(&tx, context, e)),
            #[cfg(feature = "postgres")]
            Tx::Postgres(tx) => tx.commit(context),
        }
    }

    /// ` FOR UPDATE` where the database locks rows read for update ([`Dialect::for_update`]).
    pub(crate) fn for_update(&self) -> &'static str {
        self.dialect().for_update()
    }
}

impl Sql for Tx<'_> {
    fn dialect(&self) -> Dialect {
        match self {
            Tx::Sqlite(_) => Dialect(Backend::Sqlite),
            #[cfg(feature = "postgres")]
            Tx::Postgres(_) => Dialect(Backend::Postgres),
        }
    }

    fn exec(&mut self, context: &str, sql: &str, args: &[Arg<'_>]) -> Result<u64> {
        match self {
            Tx::Sqlite(tx) => sqlite_exec(tx, context, sql, args),
            #[cfg(feature = "postgres")]
            Tx::Postgres(tx) => tx.exec(context, sql, args),
        }
    }

    fn each(&mut self, context: &str, sql: &str, args: &[Arg<'_>], each: &mut dyn FnMut(&Row<'_>) -> Result<()>) -> Result<()> {
        match self {
            Tx::Sqlite(tx) => sqlite_each(tx, context, sql, args, each),
            #[cfg(feature = "postgres")]
            Tx::Postgres(tx) => tx.each(context, sql, args, each),
        }
    }
}

/// `sql` with SQLite's `?N` placeholders written as PostgreSQL's `$N` (outside quoted text).
#[cfg_attr(not(feature = "postgres"), allow(dead_code))]
pub(crate) fn dollar_placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut quote: Option<char> = None;
    for c in sql.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '?') => {
                out.push('$');
                continue;
            }
            _ => {}
        }
        out.push(c);
    }
    out
}

mod dialect;
#[cfg(feature = "postgres")]
pub(crate) mod pg;
pub(crate) mod sqlite;

/// For tests: caps an SQLite database at its present size plus `room` pages (its connection's
/// `PRAGMA max_page_count`), or lifts the cap (`None`). A write that needs more pages then fails
/// with `SQLITE_FULL`, as one that finds the disk full.
#[cfg(test)]
impl Conn {
    pub(crate) fn cap_pages(&mut self, room: Option<u64>) {
        #[allow(irrefutable_let_patterns)]
        let Conn::Sqlite(conn) = self else { panic!("only an SQLite database has a page cap") };
        let cap = match room {
            Some(room) => conn.query_row("PRAGMA page_count", [], |r| r.get::<_, u64>(0)).unwrap() + room,
            None => 4_294_967_294,
        };
        let set: u64 = conn.query_row(&format!("PRAGMA max_page_count = {cap}"), [], |r| r.get(0)).unwrap();
        assert_eq!(set, cap);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_become_dollars_outside_quotes() {
        assert_eq!(dollar_placeholders("SELECT a FROM t WHERE b = ?1 AND c = '?2' AND d = ?12"), "SELECT a FROM t WHERE b = $1 AND c = '?2' AND d = $12");
        assert_eq!(dollar_placeholders(r#"SELECT "x?" , ?3"#), r#"SELECT "x?" , $3"#);
    }
}
