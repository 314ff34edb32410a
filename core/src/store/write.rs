//! Writing blocks inside a caller's transaction: ids, `seq`, embed bytes and attribution.

use std::collections::BTreeSet;

use rusqlite::{params, OptionalExtension};

use crate::error::{Error, Result};
use crate::model::{Block, Timestamp};

use super::{is_unique_violation, to_json, BLOCK_COLUMNS};

/// Inserts blocks into one session inside a caller's transaction: assigns ids and `seq`, stores embed
/// bytes, records attribution. `finish` updates the session's count; the caller commits.
pub(crate) struct BlockWriter<'t> {
    pub(super) tx: &'t rusqlite::Transaction<'t>,
    pub(super) rowid: i64,
    pub(super) session_id: &'t str,
    pub(super) next_seq: u64,
    pub(super) last_attribution: Option<(String, String, String)>,
    pub(super) seen_attributions: BTreeSet<(String, String, String)>,
}

pub(super) const WRITE_CONTEXT: &str = "cannot append blocks";

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
