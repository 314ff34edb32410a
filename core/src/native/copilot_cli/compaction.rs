//! Copilot CLI's compactions (`/compact`, or the CLI by itself near the model's limit): a
//! `session.compaction_complete` event with `success`, the `summaryContent` the model wrote, the
//! `trigger` and the tokens before. The CLI then goes on from the summary.

use serde_json::Value;

use crate::model::{Block, Trigger};
use crate::native::adapter::{record_of, stand_in_text, Found, Needle, Preserved};

/// The needle every compaction event's stored text holds.
pub(super) const NEEDLES: &[Needle] = &[Needle::Native("\"type\":\"session.compaction_complete\"")];

/// The compaction `window[0]` records, if it is a compaction that was applied.
pub(super) fn read(window: &[Block]) -> Option<Found> {
    let record = record_of(window.first()?)?;
    if record.get("type").and_then(Value::as_str) != Some("session.compaction_complete") {
        return None;
    }
    let data = record.get("data")?;
    if data.get("success") != Some(&Value::Bool(true)) {
        return None;
    }
    let summary = data.get("summaryContent").and_then(Value::as_str)?.to_string();
    let trigger = match data.get("trigger").and_then(Value::as_str) {
        Some("manual") => Trigger::Manual,
        Some(_) => Trigger::Auto,
        None => Trigger::Unknown,
    };
    Some(Found {
        summary_at: 0,
        stand_in: vec![stand_in_text(format!("The conversation before this point was compacted into this summary:\n\n{summary}"))],
        summary,
        replaced: vec![0],
        preserved: Preserved::None,
        trigger,
        tokens_before: data.get("preCompactionTokens").and_then(Value::as_u64),
        loss: None,
    })
}

/// The id of the event `block` is the first block of.
pub(super) fn record_key(block: &Block) -> Option<&str> {
    record_of(block)?.get("id")?.as_str()
}
