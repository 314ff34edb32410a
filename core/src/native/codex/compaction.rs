//! Codex's compactions: a `compacted` rollout line. Its `replacement_history` is the whole model
//! history from then on (what Codex kept of the user's messages, then the summary as a user
//! message); its `message` is the summary. Codex replays the rollout's later items on top of it.
//! A legacy line without a replacement history stands for the summary alone.

use serde_json::Value;

use crate::model::{Actor, Block, Kind, Trigger};
use crate::native::adapter::{Found, Needle, Preserved, record_of, stand_in_text};

use super::import::{item_to_blocks, RolloutState};

/// The needle every `compacted` line's stored text holds.
pub(super) const NEEDLES: &[Needle] = &[Needle::Native("\"type\":\"compacted\"")];

/// The compaction `window[0]` records, if it is a `compacted` line.
pub(super) fn read(window: &[Block]) -> Option<Found> {
    let first = window.first()?;
    let record = record_of(first)?;
    if record.get("type").and_then(Value::as_str) != Some("compacted") {
        return None;
    }
    let payload = record.get("payload")?.as_object()?;
    let message = payload.get("message").and_then(Value::as_str).unwrap_or("");
    let mut state = RolloutState::default();
    let stand_in: Vec<Block> = match payload.get("replacement_history").and_then(Value::as_array) {
        Some(items) => items
            .iter()
            .filter_map(Value::as_object)
            .flat_map(|item| item_to_blocks(item.clone(), None, &mut state, first.created_at))
            .collect(),
        None => vec![stand_in_text(message.to_string())],
    };
    // A server-side compaction keeps its summary encrypted (a `compaction` item): only Codex with
    // the same provider can read it.
    let opaque = payload.get("replacement_history").and_then(Value::as_array).is_some_and(|items| {
        items.iter().any(|item| matches!(item.get("type").and_then(Value::as_str), Some("compaction" | "context_compaction" | "compaction_summary")))
    });
    // The summary: the line's message, else (a local compaction) the last user message of the
    // replacement history, which is the summary Codex wrote there.
    let summary = if !message.is_empty() || opaque {
        message.to_string()
    } else {
        stand_in.iter().rev().find(|b| b.actor == Actor::User && b.kind == Kind::Text).map(|b| b.content.clone()).unwrap_or_default()
    };
    let loss = (opaque && summary.is_empty()).then(|| {
        "Codex compacted the conversation on its server: its summary is encrypted, so the replay carries only what Codex kept beside it".to_string()
    });
    Some(Found { summary_at: 0, summary, stand_in, replaced: vec![0], preserved: Preserved::None, trigger: Trigger::Unknown, tokens_before: None, loss })
}
