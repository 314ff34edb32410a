//! Claude Code's compactions: a `system` row of subtype `compact_boundary` (its `compactMetadata`
//! names the trigger, the tokens before and, since 2.1.3xx, the preserved rows), then the summary
//! row (`isCompactSummary`), which Claude Code sends first, then the preserved rows, then the rest.

use serde_json::Value;

use crate::model::{Block, Trigger};
use crate::native::compaction::{record_of, Found, Preserved};

/// The needle every boundary row's stored text holds.
pub(super) const NEEDLES: &[&str] = &["\"subtype\":\"compact_boundary\""];

/// The compaction `window[0]` records, if it is a boundary row.
pub(super) fn read(window: &[Block]) -> Option<Found> {
    let record = record_of(window.first()?)?;
    if record.get("type").and_then(Value::as_str) != Some("system") || record.get("subtype").and_then(Value::as_str) != Some("compact_boundary") {
        return None;
    }
    let meta = record.get("compactMetadata").and_then(Value::as_object);
    let field = |key: &str| meta.and_then(|m| m.get(key));
    let trigger = match field("trigger").and_then(Value::as_str) {
        Some("manual") => Trigger::Manual,
        Some("auto") => Trigger::Auto,
        _ => Trigger::Unknown,
    };
    let strings = |value: Option<&Value>| -> Vec<String> {
        value.and_then(Value::as_array).map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect()).unwrap_or_default()
    };
    let uuids = strings(field("preservedMessages").and_then(|p| p.get("uuids")));
    let segment = field("preservedSegment");
    let end = |key: &str| segment.and_then(|s| s.get(key)).and_then(Value::as_str).map(str::to_string);
    let preserved = if !uuids.is_empty() {
        Preserved::Records(uuids)
    } else if let (Some(head), Some(tail)) = (end("headUuid"), end("tailUuid")) {
        Preserved::Segment(head, tail)
    } else {
        Preserved::None
    };
    // The summary row follows the boundary (its parent), before any other conversation row.
    let boundary = record.get("uuid").and_then(Value::as_str);
    let summary_at = window.iter().enumerate().skip(1).find_map(|(i, block)| {
        let row = record_of(block)?;
        let is_summary = row.get("isCompactSummary") == Some(&Value::Bool(true));
        let parent = row.get("parentUuid").and_then(Value::as_str);
        (is_summary && (boundary.is_none() || parent == boundary || parent.is_none())).then_some(i)
    });
    let (summary, stand_in, replaced) = match summary_at {
        Some(i) => {
            // The row's text, whole: a row with several text items gave one block each.
            let end = window[i + 1..].iter().position(|b| b.native.as_ref().is_none_or(|n| n.data.get("record").is_some())).map_or(window.len(), |n| i + 1 + n);
            let blocks = &window[i..end];
            let summary = blocks.iter().map(|b| b.content.as_str()).collect::<Vec<_>>().join("\n");
            (summary, blocks.to_vec(), (i..end).collect())
        }
        None => (String::new(), Vec::new(), Vec::new()),
    };
    Some(Found {
        summary_at: summary_at.unwrap_or(0),
        summary,
        stand_in,
        replaced,
        preserved,
        trigger,
        tokens_before: field("preTokens").and_then(Value::as_u64),
    })
}

/// The uuid of the row `block` is the first block of.
pub(super) fn record_key(block: &Block) -> Option<&str> {
    record_of(block)?.get("uuid")?.as_str()
}
