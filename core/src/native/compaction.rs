//! Compactions in the canonical history, and the bound they put on every replay.
//!
//! A runtime that compacts writes records for it — Claude Code's `compact_boundary` row and summary
//! row, Codex's `compacted` line, OpenCode's `compaction` part and summary message, Pi's
//! `compaction` entry. They are imported as blocks like any other record, so that an export back
//! to that runtime stays lossless (its own loader applies the compaction). Each runtime's adapter
//! reads what such a block means ([`Adapter::compaction`]); this module finds those blocks in the
//! store, resolves what they preserve, and gives a replay into another runtime the blocks the
//! compacting runtime itself would send: the summary, the preserved blocks, then every later
//! block.
//!
//! Finding the latest compaction reads the session newest first and stops at the first block whose
//! stored native text holds one of the adapters' needles ([`Adapter::compaction_needles`]): a
//! replay reads the tail it replays, not the whole session.

use std::sync::OnceLock;

use crate::error::Result;
use crate::model::{Block, Compaction, CompactionMode, Runtime};
use crate::native::adapter::{record_end, Adapter, Needle, Preserved, WINDOW};
use crate::native::registry::{adapter, ADAPTERS};
use crate::report::{ReportAction, ReportEntry};
use crate::store::Session;

/// How many blocks before a boundary are read at a time while looking for what it preserves.
const CHUNK: u64 = 256;

/// A compaction and what a replay after it sends instead of the history before it.
#[derive(Debug)]
pub(crate) struct Cut {
    pub compaction: Compaction,
    /// The stand-in blocks, then the preserved blocks.
    pub prefix: Vec<Block>,
    /// Seqs at or after the boundary that the prefix replaces.
    pub replaced: Vec<u64>,
    /// What a replay loses of the compaction itself.
    pub loss: Option<String>,
}

impl Cut {
    /// The report entries of a replay that starts here.
    pub(crate) fn entries(&self) -> Vec<ReportEntry> {
        let mut entries = vec![self.entry()];
        if let Some(loss) = &self.loss {
            entries.push(ReportEntry { action: ReportAction::Degraded, block_id: None, message: loss.clone() });
        }
        entries
    }

    /// The report entry of a replay that starts here.
    fn entry(&self) -> ReportEntry {
        let compaction = &self.compaction;
        let left_out = compaction.boundary_seq - compaction.preserved.len() as u64;
        ReportEntry {
            action: ReportAction::Compacted,
            block_id: None,
            message: format!(
                "{left_out} block{} before the compaction at seq {} are not replayed; the runtime's summary stands in for them",
                if left_out == 1 { "" } else { "s" },
                compaction.boundary_seq
            ),
        }
    }
}

/// The SQL condition that holds for a block that holds one of the adapters' needles.
fn candidates() -> &'static str {
    static FILTER: OnceLock<String> = OnceLock::new();
    FILTER.get_or_init(|| {
        let needles: Vec<String> = ADAPTERS
            .iter()
            .flat_map(|a| a.compaction_needles())
            .map(|needle| {
                let (column, text) = match needle {
                    Needle::Native(text) => ("native", text),
                    Needle::Content(text) => ("content", text),
                };
                debug_assert!(!text.contains('\'') && !text.contains('%'), "a needle is put in SQL as it is");
                format!("{column} LIKE '%{text}%'")
            })
            .collect();
        if needles.is_empty() { "0 = 1".to_string() } else { needles.join(" OR ") }
    })
}

/// The adapter of the runtime whose native data `block` carries.
fn adapter_of(block: &Block) -> Option<&'static dyn Adapter> {
    let runtime: Runtime = block.native.as_ref()?.runtime.parse().ok()?;
    Some(adapter(runtime))
}

/// The compaction the block at `seq` records, if it records one.
fn read_at(session: &Session, seq: u64) -> Result<Option<Cut>> {
    let window = session.blocks_range(seq, seq.saturating_add(WINDOW))?;
    let Some(first) = window.first() else { return Ok(None) };
    let Some(adapter) = adapter_of(first) else { return Ok(None) };
    let Some(found) = adapter.compaction(&window) else { return Ok(None) };
    let preserved = preserved_blocks(session, adapter, seq, &found.preserved)?;
    let at = |i: usize| window.get(i).map_or(seq, |b| b.seq);
    let compaction = Compaction {
        runtime: adapter.runtime().as_str().to_string(),
        boundary_seq: seq,
        summary_seq: at(found.summary_at),
        summary: found.summary,
        preserved: preserved.iter().map(|b| b.seq).collect(),
        trigger: found.trigger,
        tokens_before: found.tokens_before,
        created_at: first.created_at,
    };
    let mut prefix = found.stand_in;
    // A block made for the stand-in gets an id and a place from the boundary, so that repeated
    // exports are identical.
    for (i, block) in prefix.iter_mut().enumerate().filter(|(_, b)| b.id.is_empty()) {
        block.id = format!("{}-compaction-{i}", first.id);
        block.seq = seq;
        block.created_at = first.created_at;
    }
    prefix.extend(preserved);
    let mut replaced: Vec<u64> = found.replaced.iter().map(|&i| at(i)).collect();
    replaced.sort_unstable();
    replaced.dedup();
    Ok(Some(Cut { compaction, prefix, replaced, loss: found.loss }))
}

/// The blocks before `boundary` that `preserved` names, found by reading back from the boundary a
/// chunk at a time (what is preserved is the newest part of the history before it). Records that
/// cannot be found are left out.
fn preserved_blocks(session: &Session, adapter: &dyn Adapter, boundary: u64, preserved: &Preserved) -> Result<Vec<Block>> {
    let wanted: Vec<&str> = match preserved {
        Preserved::None => return Ok(Vec::new()),
        Preserved::Records(keys) => keys.iter().map(String::as_str).collect(),
        Preserved::Segment(head, _) | Preserved::From(head) => vec![head.as_str()],
    };
    if wanted.is_empty() {
        return Ok(Vec::new());
    }
    // Read back until the oldest record wanted is among the blocks read.
    let mut start = boundary;
    let mut blocks: Vec<Block> = Vec::new();
    loop {
        let from = start.saturating_sub(CHUNK);
        let mut chunk = session.blocks_range(from, start)?;
        chunk.append(&mut blocks);
        blocks = chunk;
        start = from;
        let found = |key: &str| blocks.iter().any(|b| adapter.record_key(b) == Some(key));
        if start == 0 || wanted.iter().all(|key| found(key)) {
            break;
        }
    }
    let position = |key: &str| blocks.iter().position(|b| adapter.record_key(b) == Some(key));
    let out = match preserved {
        Preserved::None => Vec::new(),
        Preserved::From(key) => match position(key) {
            Some(i) => blocks.split_off(i),
            None => Vec::new(),
        },
        Preserved::Segment(head, tail) => {
            let (Some(i), Some(j)) = (position(head), position(tail)) else { return Ok(Vec::new()) };
            if j < i {
                return Ok(Vec::new());
            }
            let end = record_end(adapter, &blocks, j);
            blocks[i..end].to_vec()
        }
        Preserved::Records(keys) => {
            let mut out = Vec::new();
            for key in keys {
                if let Some(i) = position(key) {
                    out.extend_from_slice(&blocks[i..record_end(adapter, &blocks, i)]);
                }
            }
            out.sort_by_key(|b| b.seq);
            out.dedup_by_key(|b| b.seq);
            out
        }
    };
    Ok(out)
}


/// The newest compaction of `session` whose boundary is at `from` or later and before `before`.
fn latest_before(session: &Session, from: u64, mut before: u64) -> Result<Option<Cut>> {
    while let Some(seq) = session.last_seq_where(from, before, candidates())? {
        if let Some(cut) = read_at(session, seq)? {
            return Ok(Some(cut));
        }
        before = seq;
    }
    Ok(None)
}

/// The compaction a replay of `session` into `target` starts at: the latest, unless the options
/// say `none`, or the latest was made by `target` itself and the export writes `target`'s own
/// records (`rebuilt` false), which its loader applies the compaction to.
pub(crate) fn cut_for(session: &Session, target: Runtime, mode: CompactionMode, rebuilt: bool) -> Result<Option<Cut>> {
    if mode == CompactionMode::None {
        return Ok(None);
    }
    let cut = latest_before(session, 0, u64::MAX)?;
    Ok(cut.filter(|cut| rebuilt || cut.compaction.runtime != target.as_str()))
}

/// The compactions of `session` whose boundary is at `from` or later, oldest first.
pub(crate) fn since(session: &Session, from: u64) -> Result<Vec<Compaction>> {
    let mut out = Vec::new();
    let mut before = u64::MAX;
    while let Some(cut) = latest_before(session, from, before)? {
        before = cut.compaction.boundary_seq;
        out.push(cut.compaction);
    }
    out.reverse();
    Ok(out)
}
