//! Compactions: the points where a runtime replaced the conversation it sends its model by a
//! summary (Claude Code's `/compact` and auto-compaction, Codex's `compacted` lines, OpenCode's
//! summary messages, Pi's `compaction` entries, Gemini CLI's chat compression). A compaction is
//! part of the canonical history: the records the runtime wrote for it stay blocks like any other
//! (so an export back to that runtime is lossless), and [`Compaction`] describes what they mean.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::Timestamp;
use crate::error::{Error, Result};

string_enum!(
    /// What started a compaction.
    Trigger, "compaction trigger", {
        /// The person or the host asked for it (`/compact`, an API call).
        Manual => "manual",
        /// The runtime did it by itself, near its context limit.
        Auto => "auto",
        /// The runtime did not say.
        Unknown => "unknown",
    }
);

/// One compaction of a session, as [`crate::Session::compactions`] gives it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Compaction {
    /// The runtime that compacted (`claude-code`, `codex`, …).
    pub runtime: String,
    /// The block that records the compaction (Claude Code's `compact_boundary` row, Codex's
    /// `compacted` line, OpenCode's `compaction` part, Pi's `compaction` entry). Nothing before it
    /// but the preserved blocks is sent to a model after it.
    pub boundary_seq: u64,
    /// The block that holds the summary, when the summary has a block of its own (Claude Code's
    /// summary row, OpenCode's summary message); otherwise the boundary itself.
    pub summary_seq: u64,
    /// The summary, as the runtime sends it to its model.
    pub summary: String,
    /// Blocks before the boundary that the runtime keeps sending verbatim after the summary, in
    /// order (Claude Code's preserved messages, Pi's entries from `firstKeptEntryId`, OpenCode's
    /// tail).
    pub preserved: Vec<u64>,
    /// What started it.
    pub trigger: Trigger,
    /// The size of the conversation when it was compacted, in tokens, as the runtime reported it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_before: Option<u64>,
    /// When it happened (the boundary block's time).
    pub created_at: Timestamp,
}

string_enum!(
    /// Which compaction a replay honours.
    #[derive(Default)]
    CompactionMode, "compaction mode", {
        /// Start at the session's latest compaction (its summary, its preserved blocks, then
        /// every later block), as the runtime that compacted would. The default.
        #[default]
        Latest => "latest",
        /// Replay the whole history from the first block (for archives).
        None => "none",
    }
);
