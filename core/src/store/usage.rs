//! Token usage in the store (schema v7): a row per block that reports what a model response
//! consumed, written with the block in the same transaction (`model/usage.rs` reads it from the
//! runtime's data); rows for blocks stored before; and the responses a report counts, each once
//! (`store/usage_report.rs` adds them up).

use std::path::Path;


use crate::error::{Error, Result};
use crate::model::usage::{turn_usage, Reported, UsageReader};
use crate::model::{Block, Runtime, Timestamp, Tokens};

use super::db::{args, Arg, Conn, Sql, Tx};
use super::search::build_from_mark;
use super::layout::{block_pk, pk_range, BLOCK_COLUMNS};
use super::stored_text::block_from_row;
use super::usage_report::{bound, price_table, report, time_zone, Costs, PriceSource, ResponseUsage, SessionUsage, Sum, UsageOptions, UsageReport};
use super::{Session, Store};

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

/// Makes the usage rows of the blocks stored before schema v7 (the migration leaves `usage_from`
/// in `store_meta`), a batch per transaction. Nothing to do once the key is gone.
pub(super) fn build_missing(conn: &mut Conn) -> Result<()> {
    let context = "cannot build the usage table";
    build_from_mark(conn, "usage_from", context, |tx, from| {
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
    })
}

impl Session {
    /// Records the usage a runtime reported at the end of a live turn whose blocks carried none
    /// (a runtime that reports usage only with the turn's end): on the turn's last assistant block (else its last
    /// block). Nothing when a block of the turn reported usage already, or the turn has no block.
    pub(crate) fn record_turn_usage(&self, runtime: Runtime, blocks: &[Block], usage: &serde_json::Value) -> Result<()> {
        let Some(block) = blocks.iter().rev().find(|b| b.actor == crate::model::Actor::Assistant).or_else(|| blocks.last()) else {
            return Ok(());
        };
        let Some(reported) = turn_usage(runtime, usage, block.model.as_deref()) else { return Ok(()) };
        let pks: Vec<i64> = blocks.iter().map(|b| block_pk(self.rowid, b.seq)).collect();
        let (low, high) = (pks.iter().min().copied().unwrap_or(0), pks.iter().max().copied().unwrap_or(0));
        self.store.with_conn(|conn| {
            let mut tx = conn.write(CONTEXT)?;
            let known = tx.first(CONTEXT, "SELECT block FROM usage WHERE block >= ?1 AND block <= ?2 LIMIT 1", args![low, high], |r| r.int(0))?;
            if known.is_none() {
                let row = PendingUsage {
                    block: block_pk(self.rowid, block.seq),
                    at: block.created_at.as_millis(),
                    runtime: runtime.as_str().to_string(),
                    model_provider: block.model_provider.clone(),
                    turn: block.turn_id.clone(),
                    reported,
                };
                insert_rows(&mut tx, self.rowid, std::slice::from_ref(&row))?;
            }
            tx.commit(CONTEXT)
        })
    }
}

/// One counted response.
pub(super) struct Response {
    pub(super) seq: u64,
    pub(super) at: i64,
    pub(super) model_provider: Option<String>,
    pub(super) model: Option<String>,
    pub(super) tokens: Tokens,
    pub(super) cost_nano: Option<i64>,
    /// The session's rowid.
    pub(super) session: i64,
    /// The block's rowid.
    pub(super) block: i64,
}

/// Which responses to count.
struct Filter<'a> {
    session: Option<i64>,
    since: Option<i64>,
    until: Option<i64>,
    runtime: Option<&'a str>,
    model: Option<&'a str>,
}

/// The responses `filter` selects, oldest first: each response once, however many copies of it
/// the store holds (the largest, a side chain's copy last, else the first stored).
fn responses(conn: &mut Conn, filter: &Filter<'_>) -> Result<Vec<Response>> {
    // The keys written more than once (few), and of each the copies that lose.
    let sql = "WITH copied AS (SELECT dedup FROM usage WHERE dedup IS NOT NULL GROUP BY dedup HAVING count(*) > 1),
              losers AS (
                  SELECT block FROM (
                      SELECT u.block, ROW_NUMBER() OVER (
                          PARTITION BY u.dedup ORDER BY u.sidechain, u.input + u.output + u.cache_read + u.cache_write DESC, u.block) AS n
                      FROM usage u JOIN copied c ON u.dedup = c.dedup) AS ranked
                  WHERE n > 1)
         SELECT u.block, u.at, u.model_provider, u.model, u.input, u.output, u.cache_read, u.cache_write, u.reasoning, u.cost_nano, u.session
         FROM usage u
         WHERE u.block NOT IN (SELECT block FROM losers)
           AND (CAST(?1 AS BIGINT) IS NULL OR u.session = ?1)
           AND (CAST(?2 AS BIGINT) IS NULL OR u.at >= ?2) AND (CAST(?3 AS BIGINT) IS NULL OR u.at < ?3)
           AND (CAST(?4 AS TEXT) IS NULL OR u.runtime = ?4) AND (CAST(?5 AS TEXT) IS NULL OR u.model = ?5)";
    // Read in the table's order and sorted here: ordering by time in the query reads the rows
    // through the time index, one seek each.
    let mut responses = conn.all("cannot read token usage", sql, args![filter.session, filter.since, filter.until, filter.runtime, filter.model], |r| {
        let n = |i: usize| r.int(i).map(|n| n.max(0) as u64);
        Ok(Response {
            seq: (r.int(0)? & 0xffff_ffff) as u64,
            at: r.int(1)?,
            model_provider: r.opt_string(2)?,
            model: r.opt_string(3)?,
            tokens: Tokens { input: n(4)?, output: n(5)?, cache_read: n(6)?, cache_write: n(7)?, reasoning: n(8)? },
            cost_nano: r.opt_int(9)?,
            session: r.int(10)?,
            block: r.int(0)?,
        })
    })?;
    responses.sort_unstable_by_key(|r| (r.at, r.block));
    Ok(responses)
}

/// A session's id, working directory and title, by rowid.
pub(super) type Sessions = std::collections::HashMap<i64, (String, Option<String>, Option<String>)>;

/// The sessions `responses` are in.
fn sessions_of(conn: &mut Conn, responses: &[Response]) -> Result<Sessions> {
    let wanted: std::collections::HashSet<i64> = responses.iter().map(|r| r.session).collect();
    let mut out = Sessions::new();
    conn.each("cannot read token usage", "SELECT rowid, id, cwd, title FROM sessions", &[], &mut |r| {
        let rowid = r.int(0)?;
        if wanted.contains(&rowid) {
            out.insert(rowid, (r.string(1)?, r.opt_string(2)?, r.opt_string(3)?));
        }
        Ok(())
    })?;
    Ok(out)
}

impl Store {
    /// Token usage and cost of every session, grouped as `options.by` says: one row per group in
    /// order (days, weeks and months oldest first, sessions by their last response, the others
    /// most expensive first), each broken down by model, and the totals.
    ///
    /// A response written more than once (a transcript that repeats a response on each of its
    /// content records; a resumed or forked session that copies earlier ones) counts once. Cost: the
    /// runtime's own, when it reported one; else from the price table; a model with neither is
    /// listed in `unpriced_models` and adds nothing to `cost_usd` (which is `None` when nothing in
    /// the row could be priced).
    pub fn usage(&self, options: &UsageOptions) -> Result<UsageReport> {
        let (tz, tz_name) = time_zone(options.tz.as_deref())?;
        let since = options.since.as_deref().map(|t| bound(t, "since", &tz, false)).transpose()?;
        let until = options.until.as_deref().map(|t| bound(t, "until", &tz, true)).transpose()?;
        if let Some(runtime) = &options.runtime {
            runtime.parse::<Runtime>().map_err(|e| Error::invalid_field("runtime", e.to_string()))?;
        }
        let prices = price_table(options.prices.as_ref())?;
        let filter = Filter { session: None, since, until, runtime: options.runtime.as_deref(), model: options.model.as_deref() };
        let (responses, sessions) = self.with_conn(|conn| {
            let responses = responses(conn, &filter)?;
            let sessions = sessions_of(conn, &responses)?;
            Ok((responses, sessions))
        })?;
        Ok(report(options.by, tz, tz_name, &prices, responses, &sessions))
    }
}

impl Session {
    /// The session's token usage, response by response, priced as [`Store::usage`] prices it
    /// (`prices`: a price file read over the shipped table; default as [`UsageOptions::prices`]).
    /// A response a copy of which in another session counts instead is left out.
    pub fn usage(&self, prices: Option<&Path>) -> Result<SessionUsage> {
        let prices = price_table(prices.map(Path::to_path_buf).as_ref())?;
        let filter = Filter { session: Some(self.rowid), since: None, until: None, runtime: None, model: None };
        let responses = self.store.with_conn(|conn| responses(conn, &filter))?;
        let mut totals = Sum::default();
        let mut costs = Costs::new(&prices);
        let mut out = Vec::with_capacity(responses.len());
        for response in &responses {
            let cost = costs.of(response);
            totals.add(response, cost);
            out.push(ResponseUsage {
                seq: response.seq,
                at: Timestamp::from_millis(response.at).unwrap_or_else(|_| Timestamp::now()),
                model: response.model.clone(),
                total: response.tokens.total(),
                tokens: response.tokens,
                cost_usd: cost,
            });
        }
        Ok(SessionUsage { responses: out, totals: totals.row(None), prices: PriceSource::of(&prices) })
    }
}

impl Session {
    /// The prompt sizes the runtimes reported for the responses at `from` or later, in order: the
    /// seq of the block that reports one, the runtime, and its prompt tokens (input, cache reads
    /// and cache writes). Side chains' responses are left out.
    pub(crate) fn reported_prompts(&self, from: u64) -> Result<Vec<(u64, String, u64)>> {
        let (lo, hi) = pk_range(self.rowid, from, u64::MAX);
        self.store.with_conn(|conn| {
            let mut out = Vec::new();
            conn.each(
                "cannot read token usage",
                "SELECT block, runtime, input + cache_read + cache_write FROM usage WHERE block >= ?1 AND block < ?2 AND sidechain = 0 ORDER BY block",
                args![lo, hi],
                &mut |row| {
                    let seq = (row.int(0)? - lo) as u64 + from;
                    out.push((seq, row.string(1)?, row.int(2)?.max(0) as u64));
                    Ok(())
                },
            )?;
            Ok(out)
        })
    }
}
