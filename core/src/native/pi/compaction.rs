//! Pi's compactions: a `compaction` entry holds the summary, the first entry kept
//! (`firstKeptEntryId`) and the tokens before. Pi then sends the summary as a user message in its
//! own words, the path's entries from the first kept one up to the compaction, then the rest.

use serde_json::Value;

use crate::model::{Block, Trigger};
use crate::native::adapter::{Found, Needle, Preserved, record_of, stand_in_text};

/// The needle every compaction entry's stored text holds.
pub(super) const NEEDLES: &[Needle] = &[Needle::Native("\"type\":\"compaction\"")];

/// The compaction `window[0]` records, if it is a compaction entry.
pub(super) fn read(window: &[Block]) -> Option<Found> {
    let record = record_of(window.first()?)?;
    if record.get("type").and_then(Value::as_str) != Some("compaction") {
        return None;
    }
    let summary = record.get("summary").and_then(Value::as_str).unwrap_or("").to_string();
    let preserved = match record.get("firstKeptEntryId").and_then(Value::as_str) {
        Some(id) => Preserved::From(id.to_string()),
        None => Preserved::None,
    };
    // What Pi's context building turns the entry into (`compactionSummary`).
    let text = format!("The conversation history before this point was compacted into the following summary:\n\n<summary>\n{summary}\n</summary>");
    Some(Found {
        summary_at: 0,
        summary,
        stand_in: vec![stand_in_text(text)],
        replaced: vec![0],
        preserved,
        // An extension's compaction says so; Pi's own entry does not say what started it.
        trigger: Trigger::Unknown,
        tokens_before: record.get("tokensBefore").and_then(Value::as_u64),
        loss: None,
    })
}

/// The id of the entry `block` is the first block of.
pub(super) fn record_key(block: &Block) -> Option<&str> {
    record_of(block)?.get("id")?.as_str()
}
