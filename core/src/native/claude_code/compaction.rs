//! Claude Code's compactions: a `system` row of subtype `compact_boundary` (its `compactMetadata`
//! names the trigger, the tokens before and, since 2.1.3xx, the preserved rows), then the summary
//! row (`isCompactSummary`), which Claude Code sends first, then the preserved rows, then the rest.

use serde_json::{Map, Value};

use crate::model::{Actor, Block, Kind, Trigger};
use crate::native::adapter::{Found, Needle, Preserved, record_of};

/// The needle every boundary row's stored text holds.
pub(super) const NEEDLES: &[Needle] = &[Needle::Native("\"subtype\":\"compact_boundary\"")];

/// The record a block keeps: a transcript row (`native.data.record`), or a `stream-json` event a
/// host captured (`native.data.event`), with whether it is the event.
fn row_of(block: &Block) -> Option<(&Map<String, Value>, bool)> {
    if let Some(record) = record_of(block) {
        return Some((record, false));
    }
    Some((block.native.as_ref()?.data.get("event")?.as_object()?, true))
}

/// The compaction `window[0]` records, if it is a boundary row (or the `compact_boundary` event of
/// a captured turn, whose metadata is in snake case).
pub(super) fn read(window: &[Block]) -> Option<Found> {
    let (record, event) = row_of(window.first()?)?;
    if record.get("type").and_then(Value::as_str) != Some("system") || record.get("subtype").and_then(Value::as_str) != Some("compact_boundary") {
        return None;
    }
    // The same metadata in each spelling.
    let key = |camel: &'static str, snake: &'static str| if event { snake } else { camel };
    let meta = record.get(key("compactMetadata", "compact_metadata")).and_then(Value::as_object);
    let field = |name: &str| meta.and_then(|m| m.get(name));
    let trigger = match field("trigger").and_then(Value::as_str) {
        Some("manual") => Trigger::Manual,
        Some("auto") => Trigger::Auto,
        _ => Trigger::Unknown,
    };
    let strings = |value: Option<&Value>| -> Vec<String> {
        value.and_then(Value::as_array).map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect()).unwrap_or_default()
    };
    let uuids = strings(field(key("preservedMessages", "preserved_messages")).and_then(|p| p.get("uuids")));
    let segment = field(key("preservedSegment", "preserved_segment"));
    let end = |name: &str| segment.and_then(|s| s.get(name)).and_then(Value::as_str).map(str::to_string);
    let preserved = if !uuids.is_empty() {
        Preserved::Records(uuids)
    } else if let (Some(head), Some(tail)) = (end(key("headUuid", "head_uuid")), end(key("tailUuid", "tail_uuid"))) {
        Preserved::Segment(head, tail)
    } else {
        Preserved::None
    };
    // The summary row follows the boundary: right after it for `/compact`, after the attachments
    // of the turn it interrupted for an auto-compaction (parented to the last of them). In a
    // captured turn it is the synthetic user message after the boundary. Another boundary ends the
    // search.
    let summary_at = window
        .iter()
        .enumerate()
        .skip(1)
        .filter_map(|(i, block)| row_of(block).map(|(row, event)| (i, block, row, event)))
        .take_while(|(_, _, row, _)| row.get("subtype").and_then(Value::as_str) != Some("compact_boundary"))
        .find_map(|(i, block, row, event)| {
            let summary = if event {
                row.get("isSynthetic") == Some(&Value::Bool(true)) && block.actor == Actor::User && block.kind == Kind::Text
            } else {
                row.get("isCompactSummary") == Some(&Value::Bool(true))
            };
            summary.then_some(i)
        });
    let (summary, stand_in, replaced) = match summary_at {
        Some(i) => {
            // The row's text, whole: a row with several text items gave one block each.
            let end = crate::native::adapter::record_end(&super::ClaudeCode, window, i);
            let blocks = &window[i..end];
            let summary = blocks.iter().map(|b| b.content.as_str()).collect::<Vec<_>>().join("\n");
            (summary, blocks.to_vec(), std::iter::once(0).chain(i..end).collect())
        }
        None => (String::new(), Vec::new(), vec![0]),
    };
    Some(Found {
        summary_at: summary_at.unwrap_or(0),
        summary,
        stand_in,
        replaced,
        preserved,
        trigger,
        tokens_before: field(key("preTokens", "pre_tokens")).and_then(Value::as_u64),
        loss: None,
    })
}

/// The uuid of the row (or captured event) `block` is the first block of.
pub(super) fn record_key(block: &Block) -> Option<&str> {
    match block.native.as_ref()?.data.as_object()? {
        data if data.contains_key("record") => data["record"].get("uuid")?.as_str(),
        data => data.get("event")?.get("uuid")?.as_str(),
    }
}
