//! Token usage in the store (schema v7): a row per block that reports what a model response
//! consumed, a [`DerivedIndex`] written with the block in the same transaction (`model/usage.rs`
//! reads it from the runtime's data), and made for blocks stored before. `store/usage_report.rs`
//! reads the rows and adds them up.

use crate::error::Result;
use crate::model::usage::{turn_usage, Reported, UsageReader};
use crate::model::{Block, Runtime};

use super::db::{args, Arg, Conn, Sql, Tx};
use super::derived::DerivedIndex;
use super::layout::{block_pk, pk_range, BLOCK_COLUMNS};
use super::stored_text::block_from_row;

const CONTEXT: &str = "cannot record token usage";

/// A usage row waiting to be written with its block.
struct PendingUsage {
    block: i64,
    at: i64,
    runtime: String,
    model_provider: Option<String>,
    turn: Option<String>,
    reported: Reported,
}

/// The usage rows of the blocks one writer stores into one session.
pub(super) struct UsageWriter {
    reader: UsageReader,
    /// True once the reader knows what the session's earlier blocks told it.
    ready: bool,
    last_model_provider: Option<String>,
    rows: Vec<PendingUsage>,
    /// Where in `rows` the copy of each key is: a copy of a response this writer has already
    /// noted replaces it when larger, else is dropped (a session keeps one row per response;
    /// copies in other sessions are settled when counted).
    keyed: std::collections::HashMap<String, usize>,
}

impl UsageWriter {
    /// For a session that holds `count` blocks already.
    pub(super) fn new(count: u64) -> UsageWriter {
        UsageWriter { reader: UsageReader::default(), ready: count == 0, last_model_provider: None, rows: Vec::new(), keyed: std::collections::HashMap::new() }
    }

    /// Notes the usage block `pk` (stored in session `session`) reports.
    pub(super) fn observe(&mut self, tx: &mut Tx<'_>, session: i64, pk: i64, block: &Block) -> Result<()> {
        let Some(native) = &block.native else {
            self.reader.read(block);
            self.remember(block);
            return Ok(());
        };
        // Only some runtimes' records need what came before (a running total, the model).
        if !self.ready && UsageReader::reads_earlier(&native.runtime) {
            self.load(tx, session, pk)?;
        }
        let reported = self.reader.read(block);
        self.remember(block);
        let Some(reported) = reported else { return Ok(()) };
        let row = PendingUsage {
            block: pk,
            at: block.created_at.as_millis(),
            runtime: native.runtime.clone(),
            model_provider: block.model_provider.clone().or_else(|| self.last_model_provider.clone()),
            turn: block.turn_id.clone(),
            reported,
        };
        match row.reported.key.as_ref().and_then(|key| self.keyed.get(key).copied()) {
            Some(i) => {
                let kept = &self.rows[i].reported;
                let better = (row.reported.sidechain, std::cmp::Reverse(row.reported.tokens.total())) < (kept.sidechain, std::cmp::Reverse(kept.tokens.total()));
                if better {
                    self.rows[i] = row;
                }
            }
            None => {
                if let Some(key) = &row.reported.key {
                    self.keyed.insert(key.clone(), self.rows.len());
                }
                self.rows.push(row);
            }
        }
        Ok(())
    }

    fn remember(&mut self, block: &Block) {
        if block.model_provider.is_some() {
            self.last_model_provider.clone_from(&block.model_provider);
        }
    }

    /// What the session's blocks before `pk` tell the reader: the last running total and the
    /// last model named.
    fn load(&mut self, tx: &mut Tx<'_>, session: i64, pk: i64) -> Result<()> {
        self.ready = true;
        let (from, _) = pk_range(session, 0, 0);
        let running = tx
            .first(CONTEXT, "SELECT running FROM usage WHERE session = ?1 AND block < ?2 AND running IS NOT NULL ORDER BY block DESC LIMIT 1", args![session, pk], |r| r.string(0))?;
        if self.reader.running.is_none() {
            self.reader.running = running;
        }
        let last = tx.first(
            CONTEXT,
            "SELECT model, model_provider FROM blocks WHERE pk >= ?1 AND pk < ?2 AND model IS NOT NULL ORDER BY pk DESC LIMIT 1",
            args![from, pk],
            |r| Ok((r.opt_string(0)?, r.opt_string(1)?)),
        )?;
        // What this writer's blocks named already is newer.
        if let Some((model, provider)) = last {
            if self.reader.last_model.is_none() {
                self.reader.last_model = model;
            }
            if self.last_model_provider.is_none() {
                self.last_model_provider = provider;
            }
        }
        Ok(())
    }

    /// Writes the rows noted (after their blocks).
    pub(super) fn flush(&mut self, tx: &mut Tx<'_>, session: i64) -> Result<()> {
        self.keyed.clear();
        for chunk in std::mem::take(&mut self.rows).chunks(200) {
            insert_rows(tx, session, chunk)?;
        }
        Ok(())
    }
}

const COLUMNS: usize = 15;

fn insert_rows(tx: &mut Tx<'_>, session: i64, rows: &[PendingUsage]) -> Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let mut sql = String::from(
        "INSERT INTO usage (block, session, at, runtime, model_provider, model, turn, dedup, sidechain, input, output, cache_read, cache_write, reasoning, cost_nano) VALUES",
    );
    for r in 0..rows.len() {
        sql.push_str(if r == 0 { " (" } else { ", (" });
        for c in 0..COLUMNS {
            sql.push_str(&format!("{}?{}", if c == 0 { "" } else { ", " }, r * COLUMNS + c + 1));
        }
        sql.push(')');
    }
    // Running totals, set after (most rows have none).
    let counts: Vec<[i64; 5]> = rows
        .iter()
        .map(|row| {
            let t = &row.reported.tokens;
            [t.input, t.output, t.cache_read, t.cache_write, t.reasoning].map(|n| i64::try_from(n).unwrap_or(i64::MAX))
        })
        .collect();
    let mut values: Vec<Arg<'_>> = Vec::with_capacity(rows.len() * COLUMNS);
    for (row, counts) in rows.iter().zip(&counts) {
        values.extend([Arg::Int(row.block), Arg::Int(session), Arg::Int(row.at), Arg::Text(&row.runtime)]);
        values.extend([Arg::from(&row.model_provider), Arg::from(&row.reported.model), Arg::from(&row.turn), Arg::from(&row.reported.key)]);
        values.push(Arg::Int(i64::from(row.reported.sidechain)));
        values.extend(counts.iter().map(|n| Arg::Int(*n)));
        values.push(row.reported.cost.map_or(Arg::Null, |usd| Arg::Int((usd * 1e9).round() as i64)));
    }
    tx.exec(CONTEXT, &sql, &values)?;
    for row in rows.iter().filter(|row| row.reported.running.is_some()) {
        tx.exec(CONTEXT, "UPDATE usage SET running = ?2 WHERE block = ?1", args![row.block, &row.reported.running])?;
    }
    Ok(())
}

/// How many blocks one transaction reads when rows are made for blocks stored before schema v7.
const BUILD_BATCH: i64 = 5000;

impl DerivedIndex for UsageWriter {
    fn name(&self) -> &'static str {
        "the usage table"
    }

    fn mark(&self) -> &'static str {
        "usage_from"
    }

    fn observe(&mut self, tx: &mut Tx<'_>, session: i64, pk: i64, block: &Block) -> Result<()> {
        UsageWriter::observe(self, tx, session, pk, block)
    }

    /// Writes the rows noted at the end of the batch only: a copy of a response noted later may
    /// replace one noted earlier.
    fn flush(&mut self, tx: &mut Tx<'_>, session: i64, end: bool) -> Result<()> {
        if end {
            UsageWriter::flush(self, tx, session)?;
        }
        Ok(())
    }

    /// Makes the usage rows of a batch of the blocks stored before schema v7 (the migration
    /// leaves `usage_from` in `store_meta`).
    fn rebuild(&mut self, tx: &mut Tx<'_>, from: i64) -> Result<Option<i64>> {
        let context = "cannot build the usage table";
        let sql = format!("SELECT {BLOCK_COLUMNS}, pk FROM blocks WHERE pk >= ?1 ORDER BY pk LIMIT ?2");
        let pk_column = BLOCK_COLUMNS.split(',').count();
        let rows = tx.all(context, &sql, args![from, BUILD_BATCH], |row| Ok((row.int(pk_column)?, block_from_row(row)?)))?;
        let mut writer: Option<(i64, UsageWriter)> = None;
        for (pk, block) in &rows {
            let session = pk >> 32;
            if writer.as_ref().is_none_or(|(s, _)| *s != session) {
                if let Some((s, mut w)) = writer.take() {
                    w.flush(tx, s)?;
                }
                writer = Some((session, UsageWriter::new(block.seq)));
            }
            if let Some((_, w)) = writer.as_mut() {
                w.observe(tx, session, *pk, block)?;
            }
        }
        if let Some((s, mut w)) = writer.take() {
            w.flush(tx, s)?;
        }
        Ok(rows.last().filter(|_| rows.len() as i64 == BUILD_BATCH).map(|(last, _)| last + 1))
    }
}

/// Records the usage a runtime reported at the end of a live turn ([`super::Session::record_turn_usage`])
/// in session `rowid`.
pub(super) fn record_turn_usage(conn: &mut Conn, rowid: i64, runtime: Runtime, blocks: &[Block], usage: &serde_json::Value) -> Result<()> {
    let Some(block) = blocks.iter().rev().find(|b| b.actor == crate::model::Actor::Assistant).or_else(|| blocks.last()) else {
        return Ok(());
    };
    let Some(reported) = turn_usage(runtime, usage, block.model.as_deref()) else { return Ok(()) };
    let pks: Vec<i64> = blocks.iter().map(|b| block_pk(rowid, b.seq)).collect();
    let (low, high) = (pks.iter().min().copied().unwrap_or(0), pks.iter().max().copied().unwrap_or(0));
    let mut tx = conn.write(CONTEXT)?;
    let known = tx.first(CONTEXT, "SELECT block FROM usage WHERE block >= ?1 AND block <= ?2 LIMIT 1", args![low, high], |r| r.int(0))?;
    if known.is_none() {
        let row = PendingUsage {
            block: block_pk(rowid, block.seq),
            at: block.created_at.as_millis(),
            runtime: runtime.as_str().to_string(),
            model_provider: block.model_provider.clone(),
            turn: block.turn_id.clone(),
            reported,
        };
        insert_rows(&mut tx, rowid, std::slice::from_ref(&row))?;
    }
    tx.commit(CONTEXT)
}
