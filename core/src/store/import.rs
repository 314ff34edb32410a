//! Imports: a whole session (or the new lines of a grown file) written in one transaction, and
//! the files imported, so that importing one again adds only what it gained.

use crate::error::{Error, Result};
use crate::model::{Block, Runtime, Timestamp};

use super::catalog::{delete_session_rows, drop_orphan_blobs, session_rowid, validate_session_id};
use super::db::{args, is_unique_violation, Conn, Sql, Tx};
use super::indexes;
use super::write::{check_native_depth, prepare_block, to_json, BlockWriter, WRITE_CONTEXT};
use super::{Session, Store};

/// What an importer learned about the session besides its blocks.
#[derive(Debug, Default)]
pub(crate) struct ImportedMeta {
    /// The session id the native data names (used when the caller gave none).
    pub id: Option<String>,
    pub title: Option<String>,
    pub cwd: Option<String>,
    /// The bytes of the file the importer read, when the target records its source.
    pub read: Option<ReadRecord>,
}

/// The bytes an import read of a file: what its source record says, so that the record describes
/// exactly what was imported, whatever the file became meanwhile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReadRecord {
    pub size: u64,
    pub lines: u64,
    pub sha256: String,
}

impl ReadRecord {
    /// The record of `bytes` read whole.
    pub(crate) fn of_bytes(bytes: &[u8]) -> ReadRecord {
        let newlines = bytes.iter().filter(|b| **b == b'\n').count() as u64;
        ReadRecord {
            size: bytes.len() as u64,
            lines: newlines + u64::from(bytes.last().is_some_and(|b| *b != b'\n')),
            sha256: source_sha256(&<sha2::Sha256 as sha2::Digest>::digest(bytes)),
        }
    }
}

/// The `sha256` a source record holds for bytes whose SHA-256 is `digest`: the hex SHA-256 of
/// that digest, as schema v2 has recorded it from the start (so records written before stay valid).
pub(crate) fn source_sha256(digest: &[u8]) -> String {
    crate::model::sha256_hex(digest)
}

/// Feeds blocks into a session being imported; see `Store::import_to`.
pub(crate) struct ImportSink<'t, 'c> {
    writer: BlockWriter<'t, 'c>,
    /// Lines of the input that an earlier import already stored (importing a grown file).
    skip_lines: u64,
    /// Where the positions of the blocks that carry an import report entry are noted.
    noted: Option<Noted>,
}

/// The positions of the blocks an import wrote that carry an entry of its report (an `error`
/// block, or native data marked `sanitized`), shared with the caller that reports them.
pub(crate) type Noted = std::rc::Rc<std::cell::RefCell<Vec<u64>>>;

/// A native file as [`Store::import_source`] last read it.
#[derive(Debug, Clone)]
pub(crate) struct SourceRecord {
    pub runtime: Runtime,
    pub size: u64,
    pub lines: u64,
    pub sha256: String,
    /// How the file looked when it was read (none for records written before schema v3).
    pub stat: Option<FileStat>,
}

/// How a file looks to the file system: what changes when it is written, short of its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileStat {
    pub len: u64,
    pub mtime_ns: i64,
    pub inode: u64,
    pub device: u64,
    /// When this was taken, in ms since the epoch.
    pub taken_at: i64,
}

/// How long after its last modification a file's look can be trusted to change with its bytes: a
/// write within the file system's timestamp granularity (up to 2 s on some) may leave the time as
/// it was. A file younger than this when its look was taken is read again to be sure.
const RACY_WINDOW_NS: i64 = 2_000_000_000;

impl FileStat {
    /// The look of a file from its metadata, taken now.
    pub(crate) fn of(meta: &std::fs::Metadata) -> FileStat {
        use std::os::unix::fs::MetadataExt;
        FileStat {
            len: meta.len(),
            mtime_ns: meta.mtime().saturating_mul(1_000_000_000).saturating_add(meta.mtime_nsec()),
            inode: meta.ino(),
            device: meta.dev(),
            taken_at: Timestamp::now().as_millis(),
        }
    }

    /// True when a file that looks like `now` is the file this look was taken of, unchanged since:
    /// same length, time, inode and device, and the look was taken long enough after the last
    /// modification for a later one to have moved the time.
    pub(crate) fn vouches_for(&self, now: &FileStat) -> bool {
        (self.len, self.mtime_ns, self.inode, self.device) == (now.len, now.mtime_ns, now.inode, now.device)
            && self.taken_at.saturating_mul(1_000_000).saturating_sub(self.mtime_ns) >= RACY_WINDOW_NS
    }
}

/// A `sources` row joined to its session: rowid, session id, runtime, size, lines, hash, look.
type SourceRow = (i64, String, String, i64, i64, String, Option<FileStat>);

/// [`Store::source`].
pub(super) fn source(store: &Store, path: &str) -> Result<Option<(Session, SourceRecord)>> {
    let context = "cannot read imported sources";
    let row: Option<SourceRow> = store.with_conn(|conn| {
        conn.first(
            context,
            "SELECT s.rowid, s.id, src.runtime, src.size, src.lines, src.sha256, src.file_len, src.mtime_ns, src.inode, src.device, src.stat_at
             FROM sources src JOIN sessions s ON s.rowid = src.session WHERE src.path = ?1",
            args![path],
            |r| {
                let stat = match (r.opt_int(6)?, r.opt_int(7)?, r.opt_int(8)?, r.opt_int(9)?, r.opt_int(10)?) {
                    (Some(len), Some(mtime_ns), Some(inode), Some(device), Some(taken_at)) => {
                        Some(FileStat { len: len as u64, mtime_ns, inode: inode as u64, device: device as u64, taken_at })
                    }
                    _ => None,
                };
                Ok((r.int(0)?, r.string(1)?, r.string(2)?, r.int(3)?, r.int(4)?, r.string(5)?, stat))
            },
        )
    })?;
    let Some((rowid, id, runtime, size, lines, sha256, stat)) = row else { return Ok(None) };
    let Ok(runtime) = runtime.parse::<Runtime>() else { return Ok(None) };
    let record = SourceRecord { runtime, size: size as u64, lines: lines as u64, sha256, stat };
    Ok(Some((Session { store: store.clone(), id, rowid }, record)))
}

/// [`Store::refresh_source_stat`] on `conn`.
pub(super) fn refresh_source_stat(conn: &mut Conn, path: &str, stat: &FileStat) -> Result<()> {
    {
        conn.exec(
            "cannot record an imported source",
            "UPDATE sources SET file_len = ?2, mtime_ns = ?3, inode = ?4, device = ?5, stat_at = ?6 WHERE path = ?1",
            args![path, stat.len as i64, stat.mtime_ns, stat.inode as i64, stat.device as i64, stat.taken_at],
        )
        .map(drop)
    }
}

/// Where an import goes, and the file it reads when that is to be remembered.
pub(crate) struct ImportTarget {
    into: Into,
    /// The file imported, recorded with the session in the same transaction.
    source: Option<SourceFile>,
    /// Import a grown file's lines only once they are complete: a last line without its newline
    /// that does not read as JSON is still being written.
    hold_partial: bool,
    noted: Option<Noted>,
}

/// A file whose import is to be remembered: its key (the canonical path), runtime, and how it
/// looked before it was read.
#[derive(Debug, Clone)]
pub(crate) struct SourceFile {
    pub path: String,
    pub runtime: Runtime,
    pub stat: Option<FileStat>,
}

enum Into {
    /// A new session: this id, else the id the native data names, else a new UUIDv7.
    New(Option<String>),
    /// The session `id` imported afresh; it stays as it was until the new import is complete.
    Replace(String),
    /// The end of an existing session (the input read again, the blocks of its first `after_line`
    /// lines already stored).
    Append { session: Session, after_line: u64 },
}

impl ImportTarget {
    /// A new session named `id`, else as the native data names it.
    pub(crate) fn new(id: Option<String>) -> Self {
        ImportTarget { into: Into::New(id), source: None, hold_partial: false, noted: None }
    }

    /// The session `id` imported afresh, in one transaction with the removal of what it held.
    pub(crate) fn replace(id: String) -> Self {
        ImportTarget { into: Into::Replace(id), source: None, hold_partial: false, noted: None }
    }

    /// The end of `session`, whose first `after_line` input lines are stored already.
    pub(crate) fn append(session: Session, after_line: u64) -> Self {
        ImportTarget { into: Into::Append { session, after_line }, source: None, hold_partial: false, noted: None }
    }

    /// Records `source` as the file the session holds, with what the importer read of it
    /// ([`ImportedMeta::read`]), in the import's transaction. A new session that the native data
    /// names after a session holding no file takes that session's place: it is the same file,
    /// stored before its source was recorded.
    pub(crate) fn recording(mut self, source: SourceFile) -> Self {
        self.source = Some(source);
        self
    }

    /// True when the importer is to say what it read ([`ImportedMeta::read`]).
    pub(crate) fn records_source(&self) -> bool {
        self.source.is_some()
    }

    /// Leaves a last line still being written (no newline, not yet JSON) for a later import.
    pub(crate) fn holding_partial_lines(mut self) -> Self {
        self.hold_partial = true;
        self
    }

    /// Notes in `noted` the positions of the blocks written that carry a report entry.
    pub(crate) fn noting(mut self, noted: Noted) -> Self {
        self.noted = Some(noted);
        self
    }

    /// True when a last line still being written is left for a later import.
    pub(crate) fn holds_partial_lines(&self) -> bool {
        self.hold_partial
    }
}

/// The id of an imported block (importers leave ids to the store): derived from where it sits and
/// what it holds, so importing the same input again gives the same ids (and the same native ids in
/// exports, which derive from block ids). Not from its time: an importer stamps a record without
/// a timestamp with the time of import. Unique within a session, as `seq` is.
fn imported_block_id(seq: u64, block: &Block) -> String {
    let content = block.content.as_bytes();
    // A bounded prefix keeps this cheap for large tool outputs; seq and length separate the rest.
    let prefix = String::from_utf8_lossy(&content[..content.len().min(256)]);
    crate::model::ids::derived_uuid(&[
        "imported-block",
        &seq.to_string(),
        block.kind.as_str(),
        &content.len().to_string(),
        &prefix,
    ])
}

impl ImportSink<'_, '_> {
    /// True when the blocks of input line `line` (1-based) were stored by an earlier import: the
    /// importer reads such lines for their state but does not push their blocks.
    pub(crate) fn skips(&self, line: u64) -> bool {
        line <= self.skip_lines
    }

    /// Replaces the native passthrough of the block at `seq` written by this import (an importer
    /// that learns something of the first record only at the end of its input).
    pub(crate) fn set_native(&mut self, seq: u64, native: &crate::model::Native) -> Result<()> {
        check_native_depth(native)?;
        self.writer.flush()?;
        let pk = super::layout::block_pk(self.writer.rowid, seq);
        self.writer.tx.exec(WRITE_CONTEXT, "UPDATE blocks SET native = ?1 WHERE pk = ?2", args![&to_json(native), pk])?;
        Ok(())
    }

    /// Validates and stores one imported block, giving it an id derived from its place and content
    /// when it has none; errors carry its position in the import as the batch index.
    pub(crate) fn push(&mut self, mut block: Block) -> Result<()> {
        let index = self.writer.len() as usize;
        if block.id.is_empty() {
            block.id = imported_block_id(self.writer.next_seq, &block);
        }
        prepare_block(&mut block).map_err(|e| e.at_index(index))?;
        let seq = self.writer.next_seq;
        self.writer.write(&mut block, index)?;
        if let Some(noted) = &self.noted {
            if block.kind == crate::model::Kind::Error || block.native.as_ref().is_some_and(|n| n.data.get("sanitized").is_some()) {
                noted.borrow_mut().push(seq);
            }
        }
        Ok(())
    }
}

/// [`Store::import_to`].
pub(super) fn import_to(store: &Store, target: ImportTarget, fill: impl FnOnce(&mut ImportSink<'_, '_>) -> Result<ImportedMeta>) -> Result<Session> {
    let ImportTarget { into, source, noted, .. } = target;
    let (session, after_line) = match into {
        Into::New(id) => return import_session(store, id, false, source, noted, fill),
        Into::Replace(id) => return import_session(store, Some(id), true, source, noted, fill),
        Into::Append { session, after_line } => (session, after_line),
    };
    store.with_conn(|conn| {
        let context = "cannot import into the session";
        let mut tx = conn.write(context)?;
        let count = session.block_count_for_write(&mut tx)?;
        let meta = {
            let mut sink = ImportSink { writer: indexes::writer(&mut tx, session.rowid, &session.id, count)?, skip_lines: after_line, noted };
            let meta = fill(&mut sink)?;
            sink.writer.finish()?;
            meta
        };
        record_source(&mut tx, session.rowid, source.as_ref(), meta.read.as_ref())?;
        tx.commit(context)
    })?;
    Ok(session)
}

/// Creates the session `id` (default: the id the native data names, else a new UUIDv7) and fills
/// it with what `fill` pushes, in one transaction: on any error nothing is stored. `fill` returns
/// the native id, title and cwd it found. With `replace`, the session `id` that exists is
/// removed in the same transaction; with a `source`, a session the native data names that
/// holds no file is taken over the same way.
fn import_session(
    store: &Store,
    id: Option<String>,
    replace: bool,
    source: Option<SourceFile>,
    noted: Option<Noted>,
    fill: impl FnOnce(&mut ImportSink<'_, '_>) -> Result<ImportedMeta>,
) -> Result<Session> {
    let given = id.is_some();
    let final_id = match &id {
        Some(id) => {
            validate_session_id(id)?;
            Some(id.clone())
        }
        None => None,
    };
    // The rows are written under a provisional id and renamed at the end, so that the session
    // being replaced keeps its id until then.
    let mut id = uuid::Uuid::now_v7().to_string();
    let rowid = store.with_conn(|conn| {
        let context = "cannot import the session";
        let mut tx = conn.write(context)?;
        let now = Timestamp::now().as_millis();
        if let (Some(wanted), false) = (&final_id, replace) {
            if existing_rowid(&mut tx, wanted)?.is_some() {
                return Err(Error::Conflict(format!("session {wanted:?} exists already")));
            }
        }
        let rowid = tx
            .first(
                context,
                "INSERT INTO sessions (id, title, cwd, created_at, updated_at, block_count) VALUES (?1, NULL, NULL, ?2, ?2, 0) RETURNING rowid",
                args![&id, now],
                |row| row.int(0),
            )?
            .ok_or_else(|| Error::Internal("creating a session gave no row".into()))?;
        let meta = {
            let shown = final_id.as_deref().unwrap_or(&id);
            let mut sink = ImportSink { writer: indexes::writer(&mut tx, rowid, shown, 0)?, skip_lines: 0, noted };
            let meta = fill(&mut sink)?;
            sink.writer.finish()?;
            meta
        };
        let name = match final_id {
            Some(name) => Some(name),
            None if !given => meta.id.filter(|n| validate_session_id(n).is_ok()),
            None => None,
        };
        let mut orphaned = Vec::new();
        if let Some(name) = name {
            if let Some(existing) = existing_rowid(&mut tx, &name)? {
                let takes_over = replace || (source.is_some() && !holds_a_source(&mut tx, existing)?);
                if !takes_over {
                    return Err(Error::Conflict(format!(
                        "session {name:?} exists already (import it under another id with the session_id option)"
                    )));
                }
                orphaned = delete_session_rows(&mut tx, existing)?;
            }
            match tx.exec(context, "UPDATE sessions SET id = ?2 WHERE rowid = ?1", args![rowid, &name]) {
                Ok(_) => id = name,
                Err(e) if is_unique_violation(&e) => return Err(Error::Conflict(format!("session {name:?} exists already"))),
                Err(e) => return Err(e),
            }
        }
        tx.exec(context, "UPDATE sessions SET title = ?2, cwd = ?3 WHERE rowid = ?1", args![rowid, &meta.title, &meta.cwd])?;
        drop_orphan_blobs(&mut tx, &orphaned)?;
        record_source(&mut tx, rowid, source.as_ref(), meta.read.as_ref())?;
        tx.commit(context)?;
        Ok(rowid)
    })?;
    Ok(Session { store: store.clone(), id, rowid })
}

/// The rowid of session `id`, if there is one.
fn existing_rowid(tx: &mut Tx<'_>, id: &str) -> Result<Option<i64>> {
    match session_rowid(tx, id) {
        Ok(rowid) => Ok(Some(rowid)),
        Err(Error::NotFound(_)) => Ok(None),
        Err(other) => Err(other),
    }
}

/// True when the session holds a file recorded by an import.
fn holds_a_source(tx: &mut Tx<'_>, rowid: i64) -> Result<bool> {
    Ok(tx.first("cannot read imported sources", "SELECT 1 FROM sources WHERE session = ?1 LIMIT 1", args![rowid], |_| Ok(()))?.is_some())
}

/// Records that session `rowid` holds `file` as the importer `read` it (nothing when either is
/// missing: the import was not of a file to remember).
fn record_source(tx: &mut Tx<'_>, rowid: i64, file: Option<&SourceFile>, read: Option<&ReadRecord>) -> Result<()> {
    let (Some(file), Some(read)) = (file, read) else { return Ok(()) };
    // The look was taken before the read: if the file changed after it, the look differs from the
    // file's next time and the file is read again, so the record never vouches for bytes not read.
    let stat = file.stat.as_ref();
    tx.exec(
        "cannot record an imported source",
        "INSERT INTO sources (path, session, runtime, size, lines, sha256, updated_at, file_len, mtime_ns, inode, device, stat_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
         ON CONFLICT (path) DO UPDATE SET session = excluded.session, runtime = excluded.runtime, size = excluded.size,
         lines = excluded.lines, sha256 = excluded.sha256, updated_at = excluded.updated_at, file_len = excluded.file_len,
         mtime_ns = excluded.mtime_ns, inode = excluded.inode, device = excluded.device, stat_at = excluded.stat_at",
        args![
            &file.path,
            rowid,
            file.runtime.as_str(),
            read.size as i64,
            read.lines as i64,
            &read.sha256,
            Timestamp::now().as_millis(),
            stat.map(|s| s.len as i64),
            stat.map(|s| s.mtime_ns),
            stat.map(|s| s.inode as i64),
            stat.map(|s| s.device as i64),
            stat.map(|s| s.taken_at),
        ],
    )?;
    Ok(())
}
