//! Fidelity reports: what a conversion lost, altered or added (docs/design.md §4). Every path that
//! writes or reads native history reports through these types; strict mode turns an entry into an
//! error.

use serde::{Deserialize, Serialize};

/// One entry of a fidelity report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReportEntry {
    /// What happened.
    pub action: ReportAction,
    /// The block it concerns, if one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_id: Option<String>,
    /// A readable explanation.
    pub message: String,
}

impl ReportEntry {
    /// True for an entry strict mode refuses: anything but a redaction (which was asked for) and
    /// a compaction (the source runtime's own bound on what it sends).
    pub fn is_loss(&self) -> bool {
        !matches!(self.action, ReportAction::Redacted | ReportAction::Compacted)
    }
}

/// The kinds of fidelity loss a conversion can report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReportAction {
    /// Left out of the output.
    Dropped,
    /// Carried in a weaker form (for instance an image as a text placeholder).
    Degraded,
    /// Added by the conversion (for instance an error result for an unanswered tool call).
    Synthesized,
    /// An id changed to meet the target's constraints.
    Remapped,
    /// On import: a malformed native record kept as an `error` block.
    Malformed,
    /// A secret replaced by `[REDACTED:<kind>]` (with the `redact` option).
    Redacted,
    /// History before a compaction left out of a replay, the compacting runtime's summary standing
    /// in for it, as that runtime itself does. Not a loss of the conversion: strict mode allows it.
    Compacted,
}

/// What a conversion lost, altered or added.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    /// The entries, in the order of the blocks they concern.
    pub entries: Vec<ReportEntry>,
}

impl Report {
    /// True when nothing was lost, altered or added.
    pub fn is_lossless(&self) -> bool {
        self.entries.is_empty()
    }
}

impl ReportAction {
    /// Every action.
    pub const ALL: &'static [ReportAction] =
        &[ReportAction::Dropped, ReportAction::Degraded, ReportAction::Synthesized, ReportAction::Remapped, ReportAction::Malformed, ReportAction::Redacted, ReportAction::Compacted];

    /// The action's name as serialized: `dropped`, `degraded`, `synthesized`, `remapped`, `malformed`,
    /// `redacted`, `compacted`.
    pub fn as_str(self) -> &'static str {
        match self {
            ReportAction::Dropped => "dropped",
            ReportAction::Degraded => "degraded",
            ReportAction::Synthesized => "synthesized",
            ReportAction::Remapped => "remapped",
            ReportAction::Malformed => "malformed",
            ReportAction::Redacted => "redacted",
            ReportAction::Compacted => "compacted",
        }
    }
}

impl std::fmt::Display for ReportAction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}
