//! Cross-runtime replay rules (docs/design.md §3) that every `to_native` applies before the target's
//! writer sees the blocks: another runtime's harness context is not replayed, and tool calls are
//! translated where the target has an equivalent tool ([`tools`]). The rules that depend on the
//! target's format — reasoning scope, tool pairing, id constraints, embeds — live in each
//! runtime's writer, which reports what it drops, degrades, synthesizes or remaps.

pub mod budget;
pub mod tools;

use crate::error::Result;
use crate::model::{Block, Kind, Runtime};
use crate::report::{ReportAction, ReportEntry};
use crate::store::Session;

/// Where a replay starts when a compaction bounds it (`crate::native::compaction` finds it): the
/// blocks that stand in for the history before the compaction, then the stored blocks from `from`
/// on but those in `replaced`.
#[derive(Debug, Default)]
pub(crate) struct Bound {
    /// The summary the compacting runtime sends, then the blocks it preserved.
    pub prefix: Vec<Block>,
    /// The compaction's boundary: stored blocks are read from here.
    pub from: u64,
    /// Stored blocks at or after `from` that the prefix stands in for.
    pub replaced: Vec<u64>,
    /// What the report says of it.
    pub entries: Vec<ReportEntry>,
}

impl Bound {
    /// `blocks` (read from `self.from` on) behind the prefix, without the replaced ones.
    fn apply(self, blocks: Vec<Block>, report: &mut Vec<ReportEntry>) -> Vec<Block> {
        if self.from == 0 && self.prefix.is_empty() && self.replaced.is_empty() {
            return blocks;
        }
        report.extend(self.entries);
        let mut out = self.prefix;
        out.reserve(blocks.len());
        out.extend(blocks.into_iter().filter(|b| self.replaced.binary_search(&b.seq).is_err()));
        out
    }
}

/// The session's blocks as `target`'s writer is to see them, from where `bound` says, with what
/// [`prepare`] reported.
/// `is_harness` says which blocks are a runtime's harness context (each runtime's adapter decides:
/// `crate::native::is_harness`).
pub(crate) fn load(session: &Session, target: Runtime, is_harness: fn(&Block, Runtime) -> bool, bound: Bound) -> Result<(Vec<Block>, Vec<ReportEntry>)> {
    let mut report = Vec::new();
    let blocks = session.blocks_range(bound.from, u64::MAX)?;
    let mut blocks = bound.apply(blocks, &mut report);
    prepare(&mut blocks, target, is_harness, &mut report);
    Ok((blocks, report))
}

/// Like [`load`], with `target`'s native data readied by `lighten` for an export written from
/// the stored text ([`crate::native::splice`]).
pub(crate) fn load_raw(
    session: &Session,
    target: Runtime,
    is_harness: fn(&Block, Runtime) -> bool,
    lighten: crate::store::stored_text::Lighten,
    bound: Bound,
) -> Result<(Vec<Block>, crate::store::stored_text::Splices, Vec<ReportEntry>)> {
    let mut report = Vec::new();
    let (blocks, splices) = session.blocks_raw_range(target.as_str(), lighten, bound.from, u64::MAX)?;
    let mut blocks = bound.apply(blocks, &mut report);
    prepare(&mut blocks, target, is_harness, &mut report);
    Ok((blocks, splices, report))
}

/// The runtime a block comes from: the runtime of its passthrough, else the runtime named as its
/// provider. `None` for blocks a host made itself.
pub fn origin(block: &Block) -> Option<Runtime> {
    let name = block.native.as_ref().map(|n| n.runtime.as_str()).or(block.provider.as_deref())?;
    name.parse().ok()
}

/// Applies the cross-runtime rules for `target` to `blocks`: leaves out the harness context of
/// other runtimes (reported as dropped: `is_harness(block, runtime)` says which blocks are) and
/// translates tool calls of other runtimes' tools.
pub fn prepare(blocks: &mut Vec<Block>, target: Runtime, is_harness: fn(&Block, Runtime) -> bool, report: &mut Vec<ReportEntry>) {
    blocks.retain(|block| {
        let Some(from) = origin(block).filter(|from| *from != target) else { return true };
        if !is_harness(block, from) {
            return true;
        }
        let first = block.content.lines().next().unwrap_or("").trim();
        let first: String = first.chars().take(40).collect();
        report.push(ReportEntry {
            action: ReportAction::Dropped,
            block_id: Some(block.id.clone()),
            message: format!("{from} harness context ({first}…) is not replayed in {target}, which adds its own"),
        });
        false
    });
    for block in blocks.iter_mut() {
        if block.kind != Kind::ToolUse || origin(block) == Some(target) {
            continue;
        }
        let from = origin(block);
        let Some(tool) = block.tool.as_mut() else { continue };
        let Some(name) = tool.name.as_deref() else { continue };
        if let Some((name, input)) = tools::translate(name, &block.content, from, target) {
            tool.name = Some(name);
            block.content = input;
        }
    }
}
