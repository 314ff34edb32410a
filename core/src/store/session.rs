//! The work of [`Session`]'s methods that read and write the store (appending and reading blocks,
//! embeds, switches, bindings, continuation, redaction): the public methods are declared in
//! `api/session.rs` and delegate to the functions here; the crate-private helpers the other
//! modules read blocks with (`blocks_where`, `blocks_raw_range`, `last_seq_where`, …) are methods
//! here. Token usage is `usage_report`'s and `usage`'s work; the conversions to the runtimes'
//! native shapes are the pipeline's (`native/`), since the store knows no runtime.

use crate::error::{Error, Result};
use crate::model::{Actor, Attribution, Block, Runtime, Switch, Timestamp};

use super::catalog::session_infos;
use super::db::{args, Conn, Sql};
use super::indexes;
use super::layout::{block_pk, id_from_column, pk_range, timestamp, uuid_bytes, BLOCK_COLUMNS};
use super::stored_text::{block_from_row, block_from_row_raw, Lighten, Splices};
use super::write::{prepare_block, to_json};
use super::{search, usage, usage_report, Binding, Continuation, Session, SessionInfo, Store};

impl Session {
    /// The blocks with `from <= seq < to` for which the SQL condition `filter` (over the `blocks`
    /// columns; a constant of this crate, never user input) holds, in order.
    pub(crate) fn blocks_where(&self, from: u64, to: u64, filter: &str) -> Result<Vec<Block>> {
        self.blocks_loaded(from, to, Some(filter), None)
    }

    /// The blocks with `from <= seq < to`, each one holding native data of `runtime` readied by
    /// `lighten` as it is read (while its text is still in the cache): what an export that writes
    /// stored text out as it is reads ([`crate::native::splice`]).
    pub(crate) fn blocks_raw_range(&self, runtime: &str, lighten: Lighten, from: u64, to: u64) -> Result<(Vec<Block>, Splices)> {
        let mut splices = Splices::default();
        let blocks = self.blocks_loaded(from, to, None, Some((runtime, lighten, &mut splices)))?;
        Ok((blocks, splices))
    }

    /// The `seq` of the newest block with `from <= seq < before` for which the SQL condition
    /// `filter` (over the `blocks` columns; a constant of this crate, never user input) holds. The
    /// rows are read newest first and the read stops at the first that matches: its cost follows
    /// the distance from `before`, not the session's length.
    pub(crate) fn last_seq_where(&self, from: u64, before: u64, filter: &str) -> Result<Option<u64>> {
        self.store.with_conn(|conn| {
            let sql = format!("SELECT seq FROM blocks WHERE pk >= ?1 AND pk < ?2 AND ({filter}) ORDER BY pk DESC LIMIT 1");
            let (lo, hi) = pk_range(self.rowid, from, before);
            conn.first("cannot read blocks", &sql, args![lo, hi], |row| Ok(row.int(0)? as u64))
        })
    }

    fn blocks_loaded(&self, from: u64, to: u64, filter: Option<&str>, mut raw: Option<(&str, Lighten, &mut Splices)>) -> Result<Vec<Block>> {
        self.store.with_conn(|conn| {
            let count = self.block_count(conn)?;
            let capacity = if filter.is_none() { usize::try_from(count.min(to).saturating_sub(from)).unwrap_or(0) } else { 0 };
            let sql = match filter {
                None => format!("SELECT {BLOCK_COLUMNS} FROM blocks WHERE pk >= ?1 AND pk < ?2 ORDER BY pk"),
                Some(filter) => format!("SELECT {BLOCK_COLUMNS} FROM blocks WHERE pk >= ?1 AND pk < ?2 AND ({filter}) ORDER BY pk"),
            };
            let (lo, hi) = pk_range(self.rowid, from, to);
            let mut out = Vec::with_capacity(capacity);
            conn.each("cannot read blocks", &sql, args![lo, hi], &mut |row| {
                let Some((runtime, lighten, splices)) = raw.as_mut() else {
                    out.push(block_from_row(row)?);
                    return Ok(());
                };
                let mut block = block_from_row_raw(row, Some(runtime))?;
                if block.native.as_ref().is_some_and(|n| n.runtime == *runtime && n.data.is_string()) {
                    if let Some(splice) = lighten(&mut block)? {
                        splices.set(block.seq, splice);
                    }
                }
                out.push(block);
                Ok(())
            })?;
            Ok(out)
        })
    }

    /// The newest block of native message `message_id` for which the SQL condition `filter` (over
    /// the `blocks` columns; a constant of this crate, never user input) holds.
    pub(crate) fn latest_of_message(&self, message_id: &str, filter: &str) -> Result<Option<Block>> {
        self.store.with_conn(|conn| {
            let sql = format!("SELECT {BLOCK_COLUMNS} FROM blocks WHERE pk >= ?1 AND pk < ?2 AND message_id = ?3 AND ({filter}) ORDER BY pk DESC LIMIT 1");
            let (lo, hi) = pk_range(self.rowid, 0, u64::MAX);
            conn.first("cannot read blocks", &sql, args![lo, hi, message_id], block_from_row)
        })
    }

    /// The prompt sizes the runtimes reported for the responses at `from` or later, in order: the
    /// seq of the block that reports one, the runtime, and its prompt tokens (input, cache reads
    /// and cache writes). Side chains' responses are left out.
    pub(crate) fn reported_prompts(&self, from: u64) -> Result<Vec<(u64, String, u64)>> {
        usage_report::reported_prompts(self, from)
    }

    /// Records the usage a runtime reported at the end of a live turn whose blocks carried none
    /// (a runtime that reports usage only with the turn's end): on the turn's last assistant block (else its last
    /// block). Nothing when a block of the turn reported usage already, or the turn has no block.
    pub(crate) fn record_turn_usage(&self, runtime: Runtime, blocks: &[Block], usage: &serde_json::Value) -> Result<()> {
        self.store.with_conn(|conn| usage::record_turn_usage(conn, self.rowid, runtime, blocks, usage))
    }

    fn gone(&self) -> Error {
        Error::NotFound(format!("no session {:?} (it was deleted)", self.id))
    }

    fn check_exists(&self, conn: &mut impl Sql) -> Result<()> {
        let exists = conn.first("cannot look up the session", "SELECT 1 FROM sessions WHERE rowid = ?1", args![self.rowid], |_| Ok(()))?;
        if exists.is_some() { Ok(()) } else { Err(self.gone()) }
    }

    /// The stored block count; `NOT_FOUND` once the session was deleted.
    pub(super) fn block_count(&self, conn: &mut impl Sql) -> Result<u64> {
        conn.first("cannot count blocks", "SELECT block_count FROM sessions WHERE rowid = ?1", args![self.rowid], |row| row.int(0))?
            .map(|n| n as u64)
            .ok_or_else(|| self.gone())
    }

    /// The block count inside a write transaction, the session's row locked until it ends (so
    /// that concurrent appends on PostgreSQL take their turn, as SQLite's write lock makes them).
    pub(super) fn block_count_for_write(&self, tx: &mut super::db::Tx<'_>) -> Result<u64> {
        let sql = format!("SELECT block_count FROM sessions WHERE rowid = ?1{}", tx.for_update());
        tx.first("cannot count blocks", &sql, args![self.rowid], |row| row.int(0))?.map(|n| n as u64).ok_or_else(|| self.gone())
    }
}

// The work of `Session`'s public methods, which `api/session.rs` declares (with their docs) and
// delegates here.

pub(crate) fn id(session: &Session) -> &str {
    &session.id
}

pub(crate) fn store(session: &Session) -> &Store {
    &session.store
}

pub(crate) fn append(session: &Session, block: Block) -> Result<Block> {
    let mut out = extend(session, vec![block])?;
    out.pop().ok_or_else(|| Error::Internal("append stored no block".into()))
}

pub(crate) fn extend(session: &Session, blocks: impl IntoIterator<Item = Block>) -> Result<Vec<Block>> {
    let mut blocks: Vec<Block> = blocks.into_iter().collect();
    for (index, block) in blocks.iter_mut().enumerate() {
        prepare_block(block).map_err(|e| e.at_index(index))?;
    }
    if blocks.is_empty() {
        return Ok(blocks);
    }
    session.store.with_conn(|conn| {
        let context = "cannot append blocks";
        let mut tx = conn.write(context)?;
        let count = session.block_count_for_write(&mut tx)?;
        {
            let mut writer = indexes::writer(&mut tx, session.rowid, &session.id, count)?;
            for (index, block) in blocks.iter_mut().enumerate() {
                writer.write(block, index)?;
            }
            writer.finish()?;
        }
        tx.commit(context)?;
        Ok(blocks)
    })
}

pub(crate) fn info(session: &Session) -> Result<SessionInfo> {
    session.store.with_conn(|conn| session_infos(conn, Some(session.rowid))?.pop().ok_or_else(|| session.gone()))
}

pub(crate) fn blocks(session: &Session) -> Result<Vec<Block>> {
    blocks_range(session, 0, u64::MAX)
}

pub(crate) fn blocks_range(session: &Session, from: u64, to: u64) -> Result<Vec<Block>> {
    session.blocks_loaded(from, to, None, None)
}

pub(crate) fn len(session: &Session) -> Result<u64> {
    session.store.with_conn(|conn| session.block_count(conn))
}

pub(crate) fn is_empty(session: &Session) -> Result<bool> {
    Ok(len(session)? == 0)
}

pub(crate) fn block(session: &Session, id: &str) -> Result<Block> {
    session.store.with_conn(|conn| {
        session.check_exists(conn)?;
        let sql = format!("SELECT {BLOCK_COLUMNS} FROM blocks WHERE session = ?1 AND id = ?2");
        let uuid = uuid_bytes(id);
        let id_arg = conn.dialect().block_id(id, uuid.as_ref());
        conn.first("cannot read a block", &sql, args![session.rowid, id_arg], block_from_row)?
            .ok_or_else(|| Error::NotFound(format!("no block {id:?} in session {:?}", session.id)))
    })
}

pub(crate) fn embed(session: &Session, embed_id: &str) -> Result<Vec<u8>> {
    session.store.with_conn(|conn| {
        session.check_exists(conn)?;
        conn.first(
            "cannot read an embed",
            "SELECT b.data FROM session_embeds e JOIN blobs b ON b.sha256 = e.sha256
             WHERE e.session = ?1 AND e.embed_id = ?2",
            args![session.rowid, embed_id],
            |row| Ok(row.blob(0)?.to_vec()),
        )?
        .ok_or_else(|| Error::NotFound(format!("no embed {embed_id:?} in session {:?}", session.id)))
    })
}

pub(crate) fn embed_mime(session: &Session, embed_id: &str) -> Result<Option<String>> {
    session.store.with_conn(|conn| {
        session.check_exists(conn)?;
        let (lo, hi) = pk_range(session.rowid, 0, u64::MAX);
        let (sql, key) = conn.dialect().embed_mime(embed_id);
        let found = conn.first("cannot read an embed", sql, args![lo, hi, &key], |row| row.opt_string(0))?;
        Ok(found.flatten())
    })
}

pub(crate) fn switches(session: &Session) -> Result<Vec<Switch>> {
    session.store.with_conn(|conn| {
        session.check_exists(conn)?;
        let (lo, hi) = pk_range(session.rowid, 0, u64::MAX);
        let mut out: Vec<Switch> = Vec::new();
        let mut current: Option<Attribution> = None;
        conn.each(
            "cannot read attribution",
            "SELECT seq, id, provider, model_provider, model FROM blocks
             WHERE pk >= ?1 AND pk < ?2 AND (provider IS NOT NULL OR model_provider IS NOT NULL OR model IS NOT NULL)
             ORDER BY pk",
            args![lo, hi],
            &mut |row| {
                let attribution = Attribution { provider: row.opt_string(2)?, model_provider: row.opt_string(3)?, model: row.opt_string(4)? };
                if current.as_ref() != Some(&attribution) {
                    out.push(Switch {
                        seq: row.int(0)? as u64,
                        block_id: id_from_column(row.cell(1)?)?,
                        from: current.take(),
                        to: attribution.clone(),
                    });
                    current = Some(attribution);
                }
                Ok(())
            },
        )?;
        Ok(out)
    })
}

pub(crate) fn bind(session: &Session, runtime: Runtime, native_id: &str, through_seq: u64) -> Result<Binding> {
    if native_id.is_empty() || native_id.chars().any(char::is_control) {
        return Err(Error::invalid_field("native_id", "native_id must be non-empty, without control characters"));
    }
    let updated_at = Timestamp::now();
    session.store.with_conn(|conn| {
        let context = "cannot bind the session";
        let mut tx = conn.write(context)?;
        let count = session.block_count_for_write(&mut tx)? as i64;
        if through_seq >= count as u64 {
            return Err(Error::invalid_field(
                "through_seq",
                format!("through_seq {through_seq} is past the last block (the session has {count} blocks)"),
            ));
        }
        tx.exec(
            context,
            "INSERT INTO bindings (session, runtime, native_id, through_seq, updated_at) VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (session, runtime) DO UPDATE SET native_id = excluded.native_id,
             through_seq = excluded.through_seq, updated_at = excluded.updated_at",
            args![session.rowid, runtime.as_str(), native_id, through_seq as i64, updated_at.as_millis()],
        )?;
        tx.commit(context)?;
        Ok(Binding { runtime, native_id: native_id.to_string(), through_seq, updated_at })
    })
}

pub(crate) fn binding(session: &Session, runtime: Runtime) -> Result<Option<Binding>> {
    session.store.with_conn(|conn| {
        session.check_exists(conn)?;
        let row: Option<(String, i64, i64)> = conn.first(
            "cannot read the binding",
            "SELECT native_id, through_seq, updated_at FROM bindings WHERE session = ?1 AND runtime = ?2",
            args![session.rowid, runtime.as_str()],
            |row| Ok((row.string(0)?, row.int(1)?, row.int(2)?)),
        )?;
        row.map(|(native_id, through_seq, updated_at)| {
            Ok(Binding { runtime, native_id, through_seq: through_seq as u64, updated_at: timestamp(updated_at)? })
        })
        .transpose()
    })
}

pub(crate) fn continuation(session: &Session, runtime: Runtime) -> Result<Continuation> {
    let Some(binding) = binding(session, runtime)? else {
        return Ok(Continuation::Replay { reason: format!("no {runtime} thread is bound to this session") });
    };
    let pending = blocks_range(session, binding.through_seq + 1, u64::MAX)?;
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

pub(crate) fn scan_secrets(session: &Session) -> Result<Vec<crate::redact::SecretFinding>> {
    Ok(blocks(session)?.iter().flat_map(crate::redact::scan_block).collect())
}

pub(crate) fn redact_in_place(session: &Session) -> Result<crate::report::Report> {
    let original = blocks(session)?;
    let mut blocks = original.clone();
    let entries = crate::redact::redact_blocks(&mut blocks);
    if entries.is_empty() {
        return Ok(crate::report::Report { entries });
    }
    session.store.with_conn(|conn: &mut Conn| {
        let context = "cannot rewrite the session";
        // The old text must not stay readable in free pages or the WAL.
        conn.secure_delete(true, context)?;
        let mut tx = conn.write(context)?;
        for (before, after) in original.iter().zip(&blocks) {
            if before == after {
                continue;
            }
            let native = after.native.as_ref().map(to_json);
            let reasoning = after.reasoning.as_ref().map(to_json);
            tx.exec(
                context,
                "UPDATE blocks SET content = ?1, native = ?2, reasoning = ?3 WHERE pk = ?4",
                args![&after.content, &native, &reasoning, block_pk(session.rowid, after.seq)],
            )?;
            search::reindex(&mut tx, block_pk(session.rowid, after.seq), after)?;
        }
        tx.commit(context)?;
        // Copy the rewritten pages into the database and empty the WAL.
        conn.checkpoint();
        conn.secure_delete(false, context)?;
        Ok(())
    })?;
    Ok(crate::report::Report { entries })
}
