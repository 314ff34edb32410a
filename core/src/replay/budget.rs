//! A context budget that always fits: a replay rebuilt from canonical blocks is estimated in
//! tokens, and when it is larger than the target's budget its oldest whole turns are folded into
//! one summary block — a deterministic digest, or the text a caller's [`Summarizer`] gives.
//!
//! The estimate errs high. A block counts one token per [`BYTES_PER_TOKEN`] bytes of its text
//! (content, tool name, opaque reasoning), plus [`BLOCK_TOKENS`] for its framing, plus
//! [`IMAGE_TOKENS`] per image. Where a runtime reported the prompt of a response (input, cache
//! reads and cache writes), the conversation before that response is at least that size less the
//! runtime's own system prompt and tools, and the larger figure counts.
//!
//! Measured against a real tokenizer (OpenAI's o200k_base) on the 743 blocks of the fixture
//! sessions the real CLIs wrote (`tests/estimate.rs`): 2.34× the tokens counted in all (small
//! blocks carry the framing), every session estimated above its count, 19 single blocks (2.6%,
//! dense ids and JSON) below theirs, the lowest at 0.82×. Anthropic's and Google's tokenizers are
//! not available offline; they count code somewhat more densely than o200k_base, which the margin
//! covers.
//!
//! The fold never separates a tool call from its result, and never touches the newest user turn
//! or anything after it.

use std::sync::Arc;

use crate::error::Result;
use crate::model::{Actor, Block, Kind};
use crate::report::{ReportAction, ReportEntry};

/// Bytes of text counted as one token. Tokenizers give 3.5 to 4.5 bytes of English or code per
/// token; 3 errs high.
pub const BYTES_PER_TOKEN: u64 = 3;

/// Tokens counted for each block's framing (role, part and call markup).
pub const BLOCK_TOKENS: u64 = 8;

/// Tokens counted for each image: above what Anthropic (about 1,600 at most), OpenAI (765 at high
/// detail for a square image, 1,105 at most for 2048 × 2048 tiles) and Gemini (258 per tile)
/// charge.
pub const IMAGE_TOKENS: u64 = 2_000;

/// Writes the summary of blocks folded to fit a budget: given them (oldest first), it returns the
/// text that stands in for them. An error stops the conversion; nothing is written.
#[derive(Clone)]
pub struct Summarizer(Arc<SummarizeFn>);

/// What a [`Summarizer`] calls.
type SummarizeFn = dyn Fn(&[Block]) -> Result<String> + Send + Sync;

impl Summarizer {
    /// A summarizer calling `f`.
    pub fn new(f: impl Fn(&[Block]) -> Result<String> + Send + Sync + 'static) -> Summarizer {
        Summarizer(Arc::new(f))
    }

    /// The summary of `blocks`.
    pub fn summarize(&self, blocks: &[Block]) -> Result<String> {
        (self.0)(blocks)
    }
}

impl std::fmt::Debug for Summarizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Summarizer")
    }
}

impl PartialEq for Summarizer {
    fn eq(&self, other: &Summarizer) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Summarizer {}

/// The tokens a replay may take, and where the figure comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Budget {
    /// The target's window, in tokens.
    pub window: u64,
    /// What is kept free of it: the target's own system prompt and tools, and its answer.
    pub reserve: u64,
    /// Where the window comes from ("the context_window option", "gpt-5.5 in models.json of …").
    pub source: String,
}

impl Budget {
    /// The tokens the replayed conversation may take.
    pub(crate) fn limit(&self) -> u64 {
        self.window.saturating_sub(self.reserve)
    }
}

/// The estimated tokens of one block (see the module's documentation).
pub fn estimate_tokens(block: &Block) -> u64 {
    let mut bytes = block.content.len() as u64;
    if let Some(name) = block.tool.as_ref().and_then(|t| t.name.as_deref()) {
        bytes += name.len() as u64;
    }
    if let Some(reasoning) = &block.reasoning {
        bytes += reasoning.data.len() as u64;
    }
    let mut tokens = bytes.div_ceil(BYTES_PER_TOKEN) + BLOCK_TOKENS;
    for embed in block.embeds.values() {
        tokens += if embed.mime.starts_with("image/") { IMAGE_TOKENS } else { embed.size.div_ceil(BYTES_PER_TOKEN).max(IMAGE_TOKENS) };
    }
    tokens
}

/// What a fit is given besides the blocks.
pub(crate) struct Fit<'a> {
    pub budget: Budget,
    /// Reported prompt sizes: the seq of the block reporting a response, and the conversation's
    /// tokens before it (the prompt less the reporting runtime's own system prompt and tools).
    pub reported: Vec<(u64, u64)>,
    /// True for a block that starts a user turn (a prompt the person typed).
    pub is_turn_start: &'a dyn Fn(&Block) -> bool,
    /// The caller's summarizer; `None`: the digest.
    pub summarizer: Option<&'a Summarizer>,
    /// The session's id, named in the digest.
    pub session: &'a str,
}

/// What a fold did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Folded {
    /// The seqs of the first and last blocks folded.
    pub seqs: (u64, u64),
    /// The blocks folded.
    pub blocks: usize,
}

/// The replay's estimated tokens: the blocks' estimates, or, where a runtime reported the
/// conversation's size before a block, that size and the estimates of the blocks from there on,
/// whichever is larger.
fn total(estimates: &[u64], blocks: &[Block], reported: &[(u64, u64)]) -> u64 {
    let sum: u64 = estimates.iter().sum();
    let mut best = sum;
    let mut before = 0u64;
    let mut next = reported.iter().peekable();
    for (i, block) in blocks.iter().enumerate() {
        while let Some(&&(seq, size)) = next.peek() {
            if seq > block.seq {
                break;
            }
            next.next();
            let from_here: u64 = sum - before;
            best = best.max(before.max(size) + from_here);
        }
        before += estimates[i];
    }
    best
}

/// Folds the oldest whole turns of `blocks` into one summary block when their estimate is over
/// the budget; returns what it folded. The fold is reported (first in `report`, so that strict
/// mode's refusal names the budget); a replay still over the budget when only the newest turn is
/// left is reported too.
pub(crate) fn fit(blocks: &mut Vec<Block>, fit: Fit<'_>, report: &mut Vec<ReportEntry>) -> Result<Option<Folded>> {
    let estimates: Vec<u64> = blocks.iter().map(estimate_tokens).collect();
    let sum: u64 = estimates.iter().sum();
    let total = total(&estimates, blocks, &fit.reported);
    let limit = fit.budget.limit();
    if total <= limit {
        return Ok(None);
    }
    let budget = describe(&fit.budget);
    // The estimates scaled to the total, so that what a fold saves errs low.
    let scale = |tokens: u64| -> u64 { if sum == 0 { tokens } else { (tokens as u128 * total as u128).div_ceil(sum as u128) as u64 } };
    let starts: Vec<usize> = (0..blocks.len()).filter(|&i| (fit.is_turn_start)(&blocks[i])).collect();
    let Some(&newest) = starts.last() else {
        report.insert(0, over(total, &budget, "it has no user turn to keep whole"));
        return Ok(None);
    };
    // Each place a fold may end: a turn start no call before which has its result after it.
    let ends: Vec<usize> = starts.iter().copied().filter(|&e| e > 0 && e <= newest && !splits_a_call(blocks, e)).collect();
    let mut chosen = None;
    for &end in &ends {
        let folded: u64 = estimates[..end].iter().sum();
        let digest = estimate_tokens(&Block::text(Actor::User, digest(&blocks[..end], fit.session)));
        let left = total.saturating_sub(scale(folded)) + scale(digest);
        chosen = Some(end);
        if left <= limit {
            break;
        }
    }
    let Some(end) = chosen else {
        report.insert(0, over(total, &budget, "no whole turn before the newest one can be folded"));
        return Ok(None);
    };
    let folded: Vec<Block> = blocks.drain(..end).collect();
    let text = match fit.summarizer {
        Some(summarizer) => summarizer.summarize(&folded)?,
        None => digest(&folded, fit.session),
    };
    let first = &folded[0];
    let mut block = Block::text(Actor::User, text);
    block.id = format!("{}-folded", first.id);
    block.seq = first.seq;
    block.created_at = first.created_at;
    let seqs = (folded.iter().map(|b| b.seq).min().unwrap_or(0), folded.iter().map(|b| b.seq).max().unwrap_or(0));
    let turns = starts.iter().filter(|&&s| s < end).count();
    let left = estimates[end..].iter().sum::<u64>() + estimate_tokens(&block);
    blocks.insert(0, block);
    report.insert(
        0,
        ReportEntry {
            action: ReportAction::Degraded,
            block_id: Some(first.id.clone()),
            message: format!(
                "{} blocks ({turns} turn{}, seq {}–{}) folded into one summary to fit {budget}: the replay was estimated at {total} tokens",
                folded.len(),
                if turns == 1 { "" } else { "s" },
                seqs.0,
                seqs.1
            ),
        },
    );
    if scale(left) > limit {
        report.insert(1, over(scale(left), &budget, "the newest turn is never folded"));
    }
    Ok(Some(Folded { seqs, blocks: folded.len() }))
}

/// How a report names a budget.
fn describe(budget: &Budget) -> String {
    format!("the context budget of {} tokens ({}: window {} less {} reserved)", budget.limit(), budget.source, budget.window, budget.reserve)
}

/// The report entry of a replay that stays over its budget.
fn over(total: u64, budget: &str, why: &str) -> ReportEntry {
    ReportEntry { action: ReportAction::Degraded, block_id: None, message: format!("the replay is estimated at {total} tokens, over {budget}: {why}") }
}

/// True when a tool call before `end` has its result at or after it.
fn splits_a_call(blocks: &[Block], end: usize) -> bool {
    let calls: std::collections::HashSet<&str> =
        blocks[..end].iter().filter(|b| b.kind == Kind::ToolUse).filter_map(|b| b.tool.as_ref().map(|t| t.call_id.as_str())).collect();
    !calls.is_empty()
        && blocks[end..].iter().any(|b| b.kind == Kind::ToolResult && b.tool.as_ref().is_some_and(|t| calls.contains(t.call_id.as_str())))
}

/// Characters of a prompt the digest keeps.
const PROMPT_CHARS: usize = 200;

/// Turns the digest lists one by one; past that, the oldest are counted.
const DIGEST_TURNS: usize = 40;

/// The deterministic digest of folded blocks: what each folded turn asked (shortened), the tools it
/// used, and where the blocks are in the history store.
pub(crate) fn digest(folded: &[Block], session: &str) -> String {
    struct Turn {
        prompt: Option<String>,
        tools: Vec<(String, usize)>,
    }
    let mut turns: Vec<Turn> = Vec::new();
    let mut lead: Option<String> = None;
    for block in folded {
        let is_prompt = block.actor == Actor::User && block.kind == Kind::Text;
        if is_prompt && (turns.is_empty() || turns.last().is_some_and(|t| !t.tools.is_empty() || t.prompt.is_some())) && !block.content.trim().is_empty() {
            turns.push(Turn { prompt: Some(shorten(&block.content)), tools: Vec::new() });
            continue;
        }
        if block.kind == Kind::ToolUse {
            let name = block.tool.as_ref().and_then(|t| t.name.clone()).unwrap_or_else(|| "tool".into());
            if turns.is_empty() {
                turns.push(Turn { prompt: None, tools: Vec::new() });
            }
            let tools = &mut turns.last_mut().expect("pushed").tools;
            match tools.iter_mut().find(|(n, _)| *n == name) {
                Some((_, count)) => *count += 1,
                None => tools.push((name, 1)),
            }
        } else if turns.is_empty() && lead.is_none() && block.kind == Kind::Text {
            lead = Some(shorten(&block.content));
        }
    }
    let first = folded.iter().map(|b| b.seq).min().unwrap_or(0);
    let last = folded.iter().map(|b| b.seq).max().unwrap_or(0);
    let count = turns.len();
    let mut out = format!(
        "[The {count} earliest turn{} of this conversation were folded to fit the context window. What each asked, oldest first:]\n",
        if count == 1 { "" } else { "s" }
    );
    if let Some(lead) = lead {
        out.push_str(&format!("- (before them) {lead}\n"));
    }
    let skipped = count.saturating_sub(DIGEST_TURNS);
    if skipped > 0 {
        out.push_str(&format!("- … {skipped} older turn{} not listed\n", if skipped == 1 { "" } else { "s" }));
    }
    for (n, turn) in turns.iter().enumerate().skip(skipped) {
        let prompt = turn.prompt.as_deref().unwrap_or("(no prompt)");
        out.push_str(&format!("{}. {prompt}", n + 1));
        if !turn.tools.is_empty() {
            let tools: Vec<String> = turn.tools.iter().map(|(name, k)| if *k == 1 { name.clone() } else { format!("{name} ×{k}") }).collect();
            out.push_str(&format!(" (tools: {})", tools.join(", ")));
        }
        out.push('\n');
    }
    out.push_str(&format!("… these {count} earlier turn{} are in the history store: session {session}, seq {first}–{last}", if count == 1 { "" } else { "s" }));
    out
}

/// A prompt on one line, at most [`PROMPT_CHARS`] characters.
fn shorten(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= PROMPT_CHARS {
        return line;
    }
    let mut short: String = line.chars().take(PROMPT_CHARS).collect();
    short.push('…');
    short
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn(i: usize, size: usize) -> Vec<Block> {
        let mut call = Block::tool_use(format!("call_{i}"), "Bash", r#"{"command":"ls"}"#);
        call.seq = (i * 4 + 1) as u64;
        let mut result = Block::tool_result(format!("call_{i}"), "x".repeat(size), false);
        result.seq = (i * 4 + 2) as u64;
        let mut prompt = Block::text(Actor::User, format!("PROMPT-{i} please do thing number {i}"));
        prompt.seq = (i * 4) as u64;
        let mut answer = Block::text(Actor::Assistant, format!("done {i}"));
        answer.seq = (i * 4 + 3) as u64;
        vec![prompt, call, result, answer]
    }

    fn is_prompt(block: &Block) -> bool {
        block.actor == Actor::User && block.kind == Kind::Text
    }

    fn fit_with(blocks: &mut Vec<Block>, window: u64, reported: Vec<(u64, u64)>) -> (Option<Folded>, Vec<ReportEntry>) {
        let mut report = Vec::new();
        let budget = Budget { window, reserve: 1_000, source: "the context_window option".into() };
        let folded = fit(blocks, Fit { budget, reported, is_turn_start: &is_prompt, summarizer: None, session: "s1" }, &mut report).unwrap();
        (folded, report)
    }

    #[test]
    fn a_replay_that_fits_is_left_alone() {
        let mut blocks: Vec<Block> = (0..3).flat_map(|i| turn(i, 300)).collect();
        let (folded, report) = fit_with(&mut blocks, 10_000, Vec::new());
        assert!(folded.is_none() && report.is_empty());
        assert_eq!(blocks.len(), 12);
    }

    #[test]
    fn the_oldest_whole_turns_fold_and_the_newest_stays() {
        let mut blocks: Vec<Block> = (0..10).flat_map(|i| turn(i, 3_000)).collect();
        let (folded, report) = fit_with(&mut blocks, 6_000, Vec::new());
        let folded = folded.unwrap();
        assert_eq!(folded.seqs.0, 0);
        assert_eq!(folded.blocks % 4, 0, "whole turns only: {folded:?}");
        let digest = &blocks[0];
        assert!(digest.content.contains("1. PROMPT-0 please do thing number 0 (tools: Bash)"), "{}", digest.content);
        assert!(digest.content.ends_with(&format!("session s1, seq 0–{}", folded.seqs.1)), "{}", digest.content);
        assert!(blocks.iter().any(|b| b.content.starts_with("PROMPT-9")), "the newest turn is whole");
        let total: u64 = blocks.iter().map(estimate_tokens).sum();
        assert!(total <= 5_000, "{total}");
        assert_eq!(report[0].action, ReportAction::Degraded);
        assert!(report[0].message.contains("the context budget of 5000 tokens (the context_window option: window 6000 less 1000 reserved)"), "{}", report[0].message);
    }

    #[test]
    fn a_reported_prompt_larger_than_the_estimate_counts() {
        let mut blocks: Vec<Block> = (0..3).flat_map(|i| turn(i, 30)).collect();
        let (folded, _) = fit_with(&mut blocks.clone(), 5_000, Vec::new());
        assert!(folded.is_none());
        // The runtime said the conversation before the last turn was 9,000 tokens.
        let (folded, report) = fit_with(&mut blocks, 5_000, vec![(8, 9_000)]);
        assert!(folded.is_some(), "{report:?}");
    }

    #[test]
    fn a_call_and_its_result_are_never_split_and_an_oversized_newest_turn_is_reported() {
        let mut blocks = turn(0, 30);
        // The result of turn 0's call comes after turn 1's prompt.
        let result = blocks.remove(2);
        blocks.extend(turn(1, 30_000));
        blocks.insert(5, result);
        let (folded, report) = fit_with(&mut blocks, 3_000, Vec::new());
        assert!(folded.is_none(), "{folded:?}");
        assert!(report[0].message.contains("no whole turn before the newest one can be folded"), "{report:?}");
    }
}
