//! [`Store::sync_to`]: copies what one store holds and another lacks, session by session, keeping
//! session ids, block ids, times, attribution and embed bytes.
//!
//! Blocks are only ever appended, so two stores hold the same history of a session when one's
//! blocks are the first blocks of the other's, compared by block id. The target keeps a watermark
//! per (source store, session) — how many first blocks both held at the last sync — written in the
//! transaction that copies: a session unchanged on both sides since then costs no read of its
//! blocks, a crash loses at most the chunk being copied, and a second run copies nothing. Two
//! histories that differ at some `seq` (both sides appended on their own) are reported, never merged.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::json::options;
use crate::model::{Block, Timestamp};

use super::db::{args, is_unique_violation, Conn, Sql, Tx};
use super::layout::{id_from_column, pk_range};
use super::indexes;
use super::write::prepare_block;
use super::{Session, Store};

/// Blocks copied in one transaction of the target: a crash loses at most this many.
const CHUNK: u64 = 2_000;

/// Options of [`Store::sync_to`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SyncOptions {
    /// The origin recorded for a session that was made in the source store itself (a session the
    /// source got from elsewhere keeps the origin it has). Default: this machine's host name when
    /// the source is a database file, the server (`host:port/database`) when it is PostgreSQL.
    pub origin: Option<String>,
}

impl SyncOptions {
    /// The option names [`SyncOptions::from_value`] accepts.
    pub const KEYS: &'static [&'static str] = &["origin"];

    /// Sync options from a JSON object (the bindings pass keyword arguments this way): `origin`, a
    /// string or `null`. Unknown keys and wrong types are `INVALID_INPUT` naming the key.
    pub fn from_value(value: serde_json::Value) -> Result<SyncOptions> {
        options(value, SyncOptions::KEYS)
    }
}

/// What [`Store::sync_to`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyncReport {
    /// Sessions of the source looked at.
    pub sessions: u64,
    /// Sessions the target did not have, created.
    pub created: u64,
    /// Sessions the target had fewer blocks of, extended.
    pub extended: u64,
    /// Sessions that were the same on both sides already.
    pub unchanged: u64,
    /// Blocks copied.
    pub blocks: u64,
    /// Embed contents (distinct by SHA-256) the target lacked, copied.
    pub embeds: u64,
    /// Bytes of those embeds.
    pub embed_bytes: u64,
    /// Sessions the target holds more blocks of than the source (the source's are its first
    /// ones): nothing to copy this way; a sync the other way brings them.
    pub target_ahead: Vec<String>,
    /// Sessions whose two histories differ: left as they are on both sides.
    pub conflicts: Vec<SyncConflict>,
}

/// A session whose histories in the two stores differ from some `seq` on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyncConflict {
    /// The session id.
    pub session_id: String,
    /// The first position at which the two differ.
    pub seq: u64,
    /// The source's block there.
    pub source_block_id: String,
    /// The target's block there.
    pub target_block_id: String,
    /// Blocks the source holds.
    pub source_blocks: u64,
    /// Blocks the target holds.
    pub target_blocks: u64,
}

/// A session of the source, as listed at the start.
struct SourceSession {
    rowid: i64,
    id: String,
    title: Option<String>,
    cwd: Option<String>,
    created_at: i64,
    updated_at: i64,
    count: u64,
    origin: Option<String>,
}

/// The target's session of that id, with the watermark for the source.
#[derive(Clone, Copy)]
struct TargetSession {
    rowid: i64,
    count: u64,
    /// The watermark: both held this many first blocks, when the source's session was last
    /// updated at `.1`.
    mark: Option<(u64, i64)>,
}

/// What happened to one session.
enum Outcome {
    Created { blocks: u64 },
    Extended { blocks: u64 },
    Unchanged,
    TargetAhead,
    Conflict(SyncConflict),
}

/// [`Store::sync_to`] from `source`.
pub(crate) fn sync_to(source_store: &Store, target: &Store, options: &SyncOptions) -> Result<SyncReport> {
    if same_place(source_store, target) {
        return Err(Error::invalid("the source and the target of a sync are the same store"));
    }
    let source_id = source_store.with_conn(store_id)?;
    if source_id == target.with_conn(store_id)? {
        return Err(Error::invalid(format!(
            "the source and the target of a sync are copies of one store (store id {source_id}): a copied database file keeps its id; sync from the original instead"
        )));
    }
    let origin = match &options.origin {
        Some(origin) if origin.trim().is_empty() || origin.chars().any(char::is_control) => {
            return Err(Error::invalid_field("origin", "an origin is a name without control characters"));
        }
        Some(origin) => origin.clone(),
        None => default_origin(source_store),
    };
    let sources = source_store.with_conn(source_sessions)?;
    let mut targets = target.with_conn(|conn| target_sessions(conn, &source_id))?;
    let mut report = SyncReport::default();
    for source in &sources {
        report.sessions += 1;
        let outcome = sync_session(source_store, target, source, targets.remove(&source.id), &source_id, &origin, &mut report)?;
        match outcome {
            Outcome::Created { blocks } => {
                report.created += 1;
                report.blocks += blocks;
            }
            Outcome::Extended { blocks } => {
                report.extended += 1;
                report.blocks += blocks;
            }
            Outcome::Unchanged => report.unchanged += 1,
            Outcome::TargetAhead => report.target_ahead.push(source.id.clone()),
            Outcome::Conflict(conflict) => report.conflicts.push(conflict),
        }
    }
    Ok(report)
}

fn same_place(this: &Store, other: &Store) -> bool {
    if std::sync::Arc::ptr_eq(&this.inner, &other.inner) {
        return true;
    }
    match (this.path(), other.path(), this.url(), other.url()) {
        (Some(a), Some(b), _, _) => std::fs::canonicalize(a).ok().zip(std::fs::canonicalize(b).ok()).is_some_and(|(a, b)| a == b),
        (_, _, Some(a), Some(b)) => a == b,
        _ => false,
    }
}

fn default_origin(this: &Store) -> String {
    match this.url() {
        Some(url) => url.trim_start_matches("postgres://").to_string(),
        None => host_name(),
    }
}

fn sync_session(
    this: &Store,
    target: &Store,
    source: &SourceSession,
    mut there: Option<TargetSession>,
    source_id: &str,
    origin: &str,
    report: &mut SyncReport,
) -> Result<Outcome> {
    let from = Session { store: this.clone(), id: source.id.clone(), rowid: source.rowid };
    // The target may change while this runs (another machine appending): a copy whose check
    // inside the transaction fails starts over, a few times.
    for _ in 0..5 {
        let Some(t) = there else {
            match create_in(target, &from, source, source_id, origin, report)? {
                Some(blocks) => return Ok(Outcome::Created { blocks }),
                // Made in the target meanwhile: compared like any session it had.
                None => {
                    there = target.with_conn(|conn| target_sessions(conn, source_id))?.remove(&source.id);
                    continue;
                }
            }
        };
        if t.mark == Some((t.count, source.updated_at)) && t.count == source.count {
            return Ok(Outcome::Unchanged);
        }
        // Where the two may start to differ: after the watermark, if the block at it is still
        // the same on both sides.
        let to = Session { store: target.clone(), id: source.id.clone(), rowid: t.rowid };
        let mut start = 0;
        if let Some((marked, _)) = t.mark.filter(|&(marked, _)| marked > 0 && marked <= t.count.min(source.count)) {
            if block_ids(&from, marked - 1, marked)? == block_ids(&to, marked - 1, marked)? {
                start = marked;
            }
        }
        let ours = block_ids(&from, start, source.count)?;
        let theirs = block_ids(&to, start, t.count)?;
        if let Some(offset) = ours.iter().zip(&theirs).position(|(a, b)| a != b) {
            return Ok(Outcome::Conflict(SyncConflict {
                session_id: source.id.clone(),
                seq: start + offset as u64,
                source_block_id: ours[offset].clone(),
                target_block_id: theirs[offset].clone(),
                source_blocks: source.count,
                target_blocks: t.count,
            }));
        }
        if source.count <= t.count {
            let last = block_ids(&from, source.count.saturating_sub(1), source.count)?.pop();
            target.with_conn(|conn| {
                let mut tx = conn.write("cannot record a sync")?;
                fill_in(&mut tx, t.rowid, source)?;
                set_mark(&mut tx, source_id, t.rowid, source.count, last.as_deref(), source.updated_at)?;
                tx.commit("cannot record a sync")
            })?;
            return Ok(if source.count == t.count { Outcome::Unchanged } else { Outcome::TargetAhead });
        }
        match copy_blocks(&from, &to, t.count, source, source_id, report)? {
            Some(blocks) => return Ok(Outcome::Extended { blocks }),
            None => there = target.with_conn(|conn| target_sessions(conn, source_id))?.remove(&source.id),
        }
    }
    Err(Error::Conflict(format!("session {:?} kept changing in the target while it was synced; run the sync again", source.id)))
}

/// Creates the session in the target with its first chunk of blocks; the rest follow as an
/// extension. Returns the blocks copied; `None` when the target has the session (made there
/// meanwhile, or it changed there while the rest was copied).
fn create_in(target: &Store, from: &Session, source: &SourceSession, source_id: &str, origin: &str, report: &mut SyncReport) -> Result<Option<u64>> {
    let rowid = target.with_conn(|conn| {
        let context = "cannot create the session";
        let mut tx = conn.write(context)?;
        let inserted = tx.first(
            context,
            "INSERT INTO sessions (id, title, cwd, created_at, updated_at, block_count, origin) VALUES (?1, ?2, ?3, ?4, ?5, 0, ?6) RETURNING rowid",
            args![&source.id, &source.title, &source.cwd, source.created_at, source.updated_at, source.origin.as_deref().unwrap_or(origin)],
            |row| row.int(0),
        );
        let rowid = match inserted {
            Ok(Some(rowid)) => rowid,
            Ok(None) => return Err(Error::Internal("creating a session gave no row".into())),
            // Made in the target since it was listed.
            Err(e) if is_unique_violation(&e) => return Ok(None),
            Err(e) => return Err(e),
        };
        let to = Session { store: target.clone(), id: source.id.clone(), rowid };
        let end = source.count.min(CHUNK);
        let blocks = read_for_copy(from, 0, end, &mut tx, report)?;
        let last = blocks.last().map(|b| b.id.clone());
        write_chunk(&mut tx, &to, blocks, 0, source.updated_at)?;
        set_mark(&mut tx, source_id, rowid, end, last.as_deref(), if end == source.count { source.updated_at } else { 0 })?;
        tx.commit(context)?;
        Ok(Some(rowid))
    })?;
    let Some(rowid) = rowid else { return Ok(None) };
    if source.count <= CHUNK {
        return Ok(Some(source.count));
    }
    let to = Session { store: target.clone(), id: source.id.clone(), rowid };
    Ok(copy_blocks(from, &to, CHUNK, source, source_id, report)?.map(|rest| CHUNK + rest))
}

/// Copies the source's blocks from `have` on into the target, a chunk per transaction, each
/// checking the target still holds `have` (then more) blocks. `None` when the target changed.
fn copy_blocks(from: &Session, to: &Session, mut have: u64, source: &SourceSession, source_id: &str, report: &mut SyncReport) -> Result<Option<u64>> {
    let start = have;
    while have < source.count {
        let end = source.count.min(have + CHUNK);
        let done = to.store.with_conn(|conn| {
            let context = "cannot copy blocks";
            let mut tx = conn.write(context)?;
            if to.block_count_for_write(&mut tx)? != have {
                return Ok(false);
            }
            let blocks = read_for_copy(from, have, end, &mut tx, report)?;
            let last = blocks.last().map(|b| b.id.clone());
            write_chunk(&mut tx, to, blocks, have, source.updated_at)?;
            fill_in(&mut tx, to.rowid, source)?;
            set_mark(&mut tx, source_id, to.rowid, end, last.as_deref(), if end == source.count { source.updated_at } else { 0 })?;
            tx.commit(context)?;
            Ok(true)
        })?;
        if !done {
            return Ok(None);
        }
        have = end;
    }
    Ok(Some(have - start))
}

/// The source's blocks `from..to`, each embed the target lacks carrying its bytes (read from the
/// source); counts what is copied.
fn read_for_copy(from: &Session, start: u64, end: u64, target: &mut Tx<'_>, report: &mut SyncReport) -> Result<Vec<Block>> {
    let mut blocks = from.blocks_range(start, end)?;
    // Contents settled in this chunk: in the target already, or carried by an earlier block of it
    // (whose write stores them, so later blocks find them by hash).
    let mut settled: HashSet<String> = HashSet::new();
    for block in &mut blocks {
        for embed in block.embeds.values_mut() {
            if !settled.insert(embed.sha256.clone()) {
                continue;
            }
            let present = target.first("cannot look up an embed", "SELECT 1 FROM blobs WHERE sha256 = ?1", args![&embed.sha256], |_| Ok(()))?.is_some();
            if present {
                continue;
            }
            let data = from.store.with_conn(|conn| {
                conn.first("cannot read an embed", "SELECT data FROM blobs WHERE sha256 = ?1", args![&embed.sha256], |row| Ok(row.blob(0)?.to_vec()))
            })?;
            let data = data.ok_or_else(|| Error::Internal(format!("the source holds no bytes for embed sha256 {}", embed.sha256)))?;
            report.embeds += 1;
            report.embed_bytes += data.len() as u64;
            embed.data = Some(data);
        }
    }
    Ok(blocks)
}

/// Writes blocks that must land at `seq` `first` on.
fn write_chunk(tx: &mut Tx<'_>, to: &Session, mut blocks: Vec<Block>, first: u64, source_updated_at: i64) -> Result<()> {
    for (index, block) in blocks.iter_mut().enumerate() {
        prepare_block(block).map_err(|e| e.at_index(index))?;
    }
    let mut writer = indexes::writer(tx, to.rowid, &to.id, first)?;
    for (index, block) in blocks.iter_mut().enumerate() {
        let seq = block.seq;
        writer.write(block, index)?;
        if block.seq != seq {
            return Err(Error::Internal(format!("block {:?} of session {:?} would move from seq {seq} to {}", block.id, to.id, block.seq)));
        }
    }
    writer.finish()?;
    // The session was last updated when the source's was, not when it was copied.
    tx.exec("cannot copy blocks", "UPDATE sessions SET updated_at = ?2 WHERE rowid = ?1", args![to.rowid, source_updated_at])?;
    Ok(())
}

/// Gives the target's session the title and working directory it lacks.
fn fill_in(tx: &mut Tx<'_>, rowid: i64, source: &SourceSession) -> Result<()> {
    let context = "cannot record a sync";
    tx.exec(
        context,
        "UPDATE sessions SET title = COALESCE(title, ?2), cwd = COALESCE(cwd, ?3) WHERE rowid = ?1 AND (title IS NULL OR cwd IS NULL)",
        args![rowid, &source.title, &source.cwd],
    )?;
    Ok(())
}

fn set_mark(tx: &mut Tx<'_>, source_id: &str, rowid: i64, count: u64, last_id: Option<&str>, source_updated_at: i64) -> Result<()> {
    tx.exec(
        "cannot record a sync",
        "INSERT INTO sync_marks (source, session, block_count, last_id, source_updated_at, synced_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (source, session) DO UPDATE SET block_count = excluded.block_count, last_id = excluded.last_id,
             source_updated_at = excluded.source_updated_at, synced_at = excluded.synced_at",
        args![source_id, rowid, count as i64, last_id, source_updated_at, Timestamp::now().as_millis()],
    )?;
    Ok(())
}

/// The ids of a session's blocks `from..to`, in order.
fn block_ids(session: &Session, from: u64, to: u64) -> Result<Vec<String>> {
    if from >= to {
        return Ok(Vec::new());
    }
    let (lo, hi) = pk_range(session.rowid, from, to);
    session.store.with_conn(|conn| {
        conn.all("cannot read block ids", "SELECT id FROM blocks WHERE pk >= ?1 AND pk < ?2 ORDER BY pk", args![lo, hi], |row| {
            id_from_column(row.cell(0)?)
        })
    })
}

/// The store's id ([`Store::store_id`]).
pub(super) fn store_id(conn: &mut Conn) -> Result<String> {
    conn.first("cannot read the store id", "SELECT value FROM store_meta WHERE key = 'store_id'", &[], |row| row.string(0))?
        .ok_or_else(|| Error::Internal("the store has no store id".into()))
}

fn source_sessions(conn: &mut Conn) -> Result<Vec<SourceSession>> {
    conn.all(
        "cannot list sessions",
        "SELECT rowid, id, title, cwd, created_at, updated_at, block_count, origin FROM sessions ORDER BY rowid",
        &[],
        |row| {
            Ok(SourceSession {
                rowid: row.int(0)?,
                id: row.string(1)?,
                title: row.opt_string(2)?,
                cwd: row.opt_string(3)?,
                created_at: row.int(4)?,
                updated_at: row.int(5)?,
                count: row.int(6)? as u64,
                origin: row.opt_string(7)?,
            })
        },
    )
}

fn target_sessions(conn: &mut Conn, source_id: &str) -> Result<HashMap<String, TargetSession>> {
    let pairs = conn.all(
        "cannot list sessions",
        "SELECT s.id, s.rowid, s.block_count, m.block_count, m.source_updated_at
         FROM sessions s LEFT JOIN sync_marks m ON m.session = s.rowid AND m.source = ?1",
        args![source_id],
        |row| {
            let mark = match (row.opt_int(3)?, row.opt_int(4)?) {
                (Some(count), Some(at)) => Some((count as u64, at)),
                _ => None,
            };
            Ok((row.string(0)?, TargetSession { rowid: row.int(1)?, count: row.int(2)? as u64, mark }))
        },
    )?;
    Ok(pairs.into_iter().collect())
}

/// This machine's host name (`unknown` if the system gives none).
fn host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is writable for its whole length, and gethostname writes at most that much.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    match std::str::from_utf8(&buf[..end]) {
        Ok(name) if rc == 0 && !name.is_empty() => name.to_string(),
        _ => "unknown".to_string(),
    }
}

