//! Writing blocks inside a caller's transaction: ids, `seq`, embed bytes and attribution, and the
//! derived indexes the writer is given told of each block (the row layout is [`super::layout`]'s).

use std::collections::BTreeSet;
use std::sync::Mutex;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::model::{sha256_hex, Block, Timestamp};

use super::db::{args, is_unique_violation, Arg, Dialect, Sql, Tx};
use super::derived::DerivedIndex;
use super::layout::{block_pk, uuid_bytes, MAX_BLOCKS_PER_SESSION, MAX_SESSION_ROWID};

/// The columns of a block row as the writer inserts them.
const INSERT_BLOCK_HEAD: &str = "INSERT INTO blocks (pk, session, id, actor, kind, content, tool, reasoning, embeds, provider, \
                                 model_provider, model, message_id, turn_id, created_at, native) VALUES";

/// Parameters of one block row.
const BLOCK_PARAMS: usize = 16;

/// The 74 bits of a UUIDv7 after its time: `rand_a` (12) and `rand_b` (62).
const COUNTER_MASK: u128 = (1 << 74) - 1;

/// The last id generated in this process: its time (ms) and its 74 counter bits.
static LAST_ID: Mutex<Option<(u64, u128)>> = Mutex::new(None);

/// A new block id: a UUIDv7 (RFC 9562) of the current time, strictly greater than every id this
/// process generated before (method 2 of RFC 9562 §6.2: the 74 bits after the time start random,
/// once per process, and count up; a clock that goes back keeps the last time). One read of the
/// OS random source per process instead of one per id (that system call was 5 % of a batched append).
fn new_block_id() -> uuid::Uuid {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
    let mut last = LAST_ID.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let (ms, counter) = match *last {
        // The random bits of a UUIDv7 from the `uuid` crate (`rand_a`, `rand_b`) as the start.
        None => {
            let seed = uuid::Uuid::now_v7().as_u128();
            (now, (((seed >> 64) & 0xfff) << 62) | (seed & ((1 << 62) - 1)))
        }
        Some((ms, counter)) => {
            let next = (counter + 1) & COUNTER_MASK;
            // The counter wrapped: move on a millisecond so that ids still grow.
            let ms = if next == 0 { ms + 1 } else { ms };
            (now.max(ms), next)
        }
    };
    *last = Some((ms, counter));
    drop(last);
    let ms = ms & ((1 << 48) - 1);
    let rand_a = (counter >> 62) & 0xfff;
    let rand_b = counter & ((1 << 62) - 1);
    uuid::Uuid::from_u128((u128::from(ms) << 80) | (0x7 << 76) | (rand_a << 64) | (0b10 << 62) | rand_b)
}


/// Inserts blocks into one session inside a caller's transaction: assigns ids and `seq`, stores embed
/// bytes, records attribution, and tells its derived indexes of each block. `finish` updates the
/// session's count; the caller commits.
pub(crate) struct BlockWriter<'t, 'c> {
    pub(super) tx: &'t mut Tx<'c>,
    pub(super) rowid: i64,
    pub(super) session_id: &'t str,
    pub(super) next_seq: u64,
    last_attribution: Option<(String, String, String)>,
    seen_attributions: BTreeSet<(String, String, String)>,
    dialect: Dialect,
    /// Rows not written yet, written [`Dialect::rows_per_insert`] at a time.
    pending: Vec<PendingRow>,
    /// The insert of that many rows, once made.
    insert: Option<(usize, String)>,
    indexes: Vec<Box<dyn DerivedIndex>>,
}

/// A block row waiting for [`BlockWriter::flush`]: its place in the batch (for errors), key, id
/// (with its 16 bytes when it is a UUID), actor, kind, content, the nullable text columns (tool,
/// reasoning, embeds, provider, model_provider, model, message_id, turn_id, native) and time.
struct PendingRow {
    index: usize,
    pk: i64,
    id: String,
    uuid: Option<[u8; 16]>,
    actor: &'static str,
    kind: &'static str,
    content: String,
    columns: [Option<String>; 9],
    created_at: i64,
}

pub(super) const WRITE_CONTEXT: &str = "cannot append blocks";

impl<'t, 'c> BlockWriter<'t, 'c> {
    /// A writer of the blocks after the `count` that session `rowid` holds, keeping `indexes` up
    /// to date.
    pub(crate) fn new(tx: &'t mut Tx<'c>, rowid: i64, session_id: &'t str, count: u64, indexes: Vec<Box<dyn DerivedIndex>>) -> Result<Self> {
        if !(0..MAX_SESSION_ROWID).contains(&rowid) {
            return Err(Error::Internal(format!("session {session_id:?} has rowid {rowid}: sessions past rowid 2^31 cannot hold blocks")));
        }
        let dialect = tx.dialect();
        Ok(BlockWriter {
            tx,
            rowid,
            session_id,
            next_seq: count,
            last_attribution: None,
            seen_attributions: BTreeSet::new(),
            dialect,
            pending: Vec::new(),
            insert: None,
            indexes,
        })
    }

    /// Blocks written so far plus those the session had.
    pub(crate) fn len(&self) -> u64 {
        self.next_seq
    }

    /// Stores one block prepared by [`prepare_block`]; `index` names it in errors.
    pub(crate) fn write(&mut self, block: &mut Block, index: usize) -> Result<()> {
        let context = WRITE_CONTEXT;
        if self.next_seq >= MAX_BLOCKS_PER_SESSION {
            return Err(Error::invalid(format!("session {:?} holds {} blocks, the most a session can hold", self.session_id, self.next_seq))
                .at_index(index));
        }
        let generated = block.id.is_empty().then(new_block_id);
        if let Some(uuid) = generated {
            block.id = uuid.hyphenated().encode_lower(&mut uuid::Uuid::encode_buffer()).to_owned();
        }
        block.seq = self.next_seq;
        for (embed_id, embed) in block.embeds.iter_mut() {
            match embed.data.take() {
                Some(data) => {
                    self.tx.exec(
                        context,
                        "INSERT INTO blobs (sha256, size, data) VALUES (?1, ?2, ?3) ON CONFLICT DO NOTHING",
                        args![&embed.sha256, data.len() as i64, &data[..]],
                    )?;
                }
                None => {
                    let size = self.tx.first(context, "SELECT size FROM blobs WHERE sha256 = ?1", args![&embed.sha256], |row| row.int(0))?;
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
            self.tx.exec(
                context,
                "INSERT INTO session_embeds (session, embed_id, sha256) VALUES (?1, ?2, ?3) ON CONFLICT DO NOTHING",
                args![self.rowid, embed_id, &embed.sha256],
            )?;
            let stored = self.tx.first(
                context,
                "SELECT sha256 FROM session_embeds WHERE session = ?1 AND embed_id = ?2",
                args![self.rowid, embed_id],
                |row| row.string(0),
            )?;
            if stored.as_deref() != Some(embed.sha256.as_str()) {
                return Err(Error::Conflict(format!(
                    "embed id {embed_id:?} is already used in session {:?} for other bytes (block {index} of the batch)",
                    self.session_id
                )));
            }
        }
        let embeds = (!block.embeds.is_empty()).then(|| to_json(&block.embeds));
        let (tool, reasoning, native) = (block.tool.as_ref().map(to_json), block.reasoning.as_ref().map(to_json), block.native.as_ref().map(to_json));
        let pk = block_pk(self.rowid, block.seq);
        self.pending.push(PendingRow {
            index,
            pk,
            id: block.id.clone(),
            // A generated id's bytes as they are, without parsing the id back.
            uuid: generated.map(uuid::Uuid::into_bytes).or_else(|| uuid_bytes(&block.id)),
            actor: block.actor.as_str(),
            kind: block.kind.as_str(),
            content: block.content.clone(),
            columns: [tool, reasoning, embeds, block.provider.clone(), block.model_provider.clone(), block.model.clone(), block.message_id.clone(), block.turn_id.clone(), native],
            created_at: block.created_at.as_millis(),
        });
        for derived in &mut self.indexes {
            derived.observe(self.tx, self.rowid, pk, block)?;
        }
        if self.pending.len() >= self.dialect.rows_per_insert() {
            self.flush()?;
        }
        self.attribute(block)?;
        self.next_seq += 1;
        Ok(())
    }

    /// Records the block's attribution on the session (one row per distinct one).
    fn attribute(&mut self, block: &Block) -> Result<()> {
        let context = WRITE_CONTEXT;
        if block.provider.is_some() || block.model_provider.is_some() || block.model.is_some() {
            fn part(field: &Option<String>) -> &str {
                field.as_deref().unwrap_or("")
            }
            // One row per distinct attribution and batch; most blocks repeat the previous one
            // (compared before anything is copied).
            let repeated = self.last_attribution.as_ref().is_some_and(|(p, mp, m)| {
                p == part(&block.provider) && mp == part(&block.model_provider) && m == part(&block.model)
            });
            if !repeated {
                let key = (part(&block.provider).to_string(), part(&block.model_provider).to_string(), part(&block.model).to_string());
                if self.seen_attributions.insert(key.clone()) {
                    self.tx.exec(
                        context,
                        "INSERT INTO session_attribution (session, provider, model_provider, model)
                         VALUES (?1, ?2, ?3, ?4) ON CONFLICT DO NOTHING",
                        args![self.rowid, &key.0, &key.1, &key.2],
                    )?;
                }
                self.last_attribution = Some(key);
            }
        }
        Ok(())
    }

    /// Writes the rows waiting for a multi-row insert, then tells the derived indexes they are.
    pub(crate) fn flush(&mut self) -> Result<()> {
        self.write_rows()?;
        for derived in &mut self.indexes {
            derived.flush(self.tx, self.rowid, false)?;
        }
        Ok(())
    }

    fn write_rows(&mut self) -> Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let rows = std::mem::take(&mut self.pending);
        if self.insert.as_ref().is_none_or(|(n, _)| *n != rows.len()) {
            let mut sql = String::from(INSERT_BLOCK_HEAD);
            for r in 0..rows.len() {
                sql.push_str(if r == 0 { " (" } else { ", (" });
                for c in 0..BLOCK_PARAMS {
                    sql.push_str(&format!("{}?{}", if c == 0 { "" } else { ", " }, r * BLOCK_PARAMS + c + 1));
                }
                sql.push(')');
            }
            self.insert = Some((rows.len(), sql));
        }
        let sql = self.insert.as_ref().map_or("", |(_, sql)| sql.as_str());
        let mut values: Vec<Arg<'_>> = Vec::with_capacity(rows.len() * BLOCK_PARAMS);
        for row in &rows {
            values.extend([Arg::Int(row.pk), Arg::Int(self.rowid), self.dialect.block_id(&row.id, row.uuid.as_ref())]);
            values.extend([Arg::Text(row.actor), Arg::Text(row.kind), Arg::Text(&row.content)]);
            values.extend(row.columns[..8].iter().map(Arg::from));
            values.push(Arg::Int(row.created_at));
            values.push(Arg::from(&row.columns[8]));
        }
        match self.tx.exec(WRITE_CONTEXT, sql, &values) {
            Ok(_) => Ok(()),
            Err(e) if is_unique_violation(&e) => {
                // PostgreSQL names the key it found twice: `Key (session, id)=(7, <id>) already exists.`
                let shown = e.to_string();
                let named = rows.iter().rev().find(|r| shown.contains(&format!(", {})=", r.id)) || shown.contains(&format!(", {}) ", r.id)));
                Err(match named.or(if rows.len() == 1 { rows.first() } else { None }) {
                    Some(r) => Error::Conflict(format!("block id {:?} exists already (block {} of the batch)", r.id, r.index)),
                    None => Error::Conflict(format!("a block id of blocks {} to {} of the batch exists already ({shown})", rows[0].index, rows[rows.len() - 1].index)),
                })
            }
            Err(e) => Err(e),
        }
    }

    /// Writes what is left, lets the derived indexes write theirs, and records the new block
    /// count on the session.
    pub(crate) fn finish(mut self) -> Result<()> {
        self.write_rows()?;
        for derived in &mut self.indexes {
            derived.flush(self.tx, self.rowid, true)?;
        }
        let sql = format!("UPDATE sessions SET block_count = ?2, updated_at = {}(updated_at, ?3) WHERE rowid = ?1", self.dialect.greatest());
        self.tx.exec(WRITE_CONTEXT, &sql, args![self.rowid, self.next_seq as i64, Timestamp::now().as_millis()])?;
        Ok(())
    }
}

/// A model value as a JSON column holds it (`serde_json`'s compact writer; see
/// [`super::stored_text`]).
pub(crate) fn to_json<T: Serialize>(value: &T) -> String {
    // Only model types go through here; they hold strings, numbers and JSON values.
    serde_json::to_string(value).unwrap_or_default()
}

/// Refuses native data nested deeper than the store can read back ([`crate::json::MAX_NATIVE_DEPTH`]):
/// every way native data reaches a block's row goes through here.
pub(crate) fn check_native_depth(native: &crate::model::Native) -> Result<()> {
    if crate::json::depth(&native.data) > crate::json::MAX_NATIVE_DEPTH {
        return Err(Error::invalid_field(
            "native.data",
            format!("nested more than {} levels deep: it could not be read back once stored", crate::json::MAX_NATIVE_DEPTH),
        ));
    }
    Ok(())
}

/// Checks a block and settles its embeds' size and hash; the bytes stay in the embed.
pub(crate) fn prepare_block(block: &mut Block) -> Result<()> {
    block.validate()?;
    if let Some(native) = &block.native {
        check_native_depth(native)?;
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
