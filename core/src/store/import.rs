//! Imports: a whole session (or the new lines of a grown file) written in one transaction, and
//! the files imported, so that importing one again adds only what it gained.

use rusqlite::{params, OptionalExtension, TransactionBehavior};

use crate::error::{Error, Result};
use crate::model::{Block, Runtime, Timestamp};

use super::{is_unique_violation, prepare_block, to_json, validate_session_id, Session, Store};
use super::write::{BlockWriter, WRITE_CONTEXT};

/// What an importer learned about the session besides its blocks.
#[derive(Debug, Default)]
pub(crate) struct ImportedMeta {
    /// The session id the native data names (used when the caller gave none).
    pub id: Option<String>,
    pub title: Option<String>,
    pub cwd: Option<String>,
}

/// Feeds blocks into a session being imported; see `Store::import_to`.
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
    crate::model::ids::derived_uuid(&[
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

    /// Validates and stores one imported block, giving it an id derived from its place and content
    /// when it has none; errors carry its position in the import as the batch index.
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
    /// Imports into `target`: a new session ([`Store::import_session`]) or the end of an existing one,
    /// in one transaction: on any error nothing is stored.
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

    /// Creates the session `id` (default: the id the native data names, else a new UUIDv7) and fills
    /// it with what `fill` pushes, in one transaction: on any error nothing is stored. `fill` returns
    /// the native id, title and cwd it found.
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
