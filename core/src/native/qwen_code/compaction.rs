//! Qwen Code's chat compression (`/compress`, or automatic near the model's limit): a `system`
//! record of subtype `chat_compression` whose `systemPayload.compressedHistory` is the whole
//! history the CLI goes on with (the summary as a user message, its own acknowledgement, and any
//! turns it kept), and `info` with the token counts and what started it. On resume the CLI starts
//! from that history and adds the records after it.

use serde_json::Value;

use crate::model::{Actor, Block, Kind, Trigger};
use crate::native::adapter::{record_of, Found, Needle, Preserved};

use super::records::COMPRESSION;

/// The needle every compression record's stored text holds.
pub(super) const NEEDLES: &[Needle] = &[Needle::Native("\"subtype\":\"chat_compression\"")];

/// The compression `window[0]` records, if it is a compression record with a history.
pub(super) fn read(window: &[Block]) -> Option<Found> {
    let record = record_of(window.first()?)?;
    if record.get("type").and_then(Value::as_str) != Some("system") || record.get("subtype").and_then(Value::as_str) != Some(COMPRESSION) {
        return None;
    }
    let payload = record.get("systemPayload")?;
    let history = payload.get("compressedHistory")?.as_array()?;
    let info = payload.get("info");
    // What the CLI sends from here on: the history, as text blocks (a kept turn's calls and
    // results as text too, since they are not paired with blocks of this session).
    let mut stand_in = Vec::new();
    for content in history {
        let actor = if content.get("role").and_then(Value::as_str) == Some("model") { Actor::Assistant } else { Actor::User };
        for part in content.get("parts").and_then(Value::as_array).into_iter().flatten() {
            let text = match (part.get("text").and_then(Value::as_str), part.get("thought")) {
                (Some(_), Some(Value::Bool(true))) => continue,
                (Some(text), _) => text.to_string(),
                (None, _) => match part.get("functionCall").or_else(|| part.get("functionResponse")) {
                    Some(call) => call.to_string(),
                    None => continue,
                },
            };
            stand_in.push(Block::new(actor, Kind::Text, text));
        }
    }
    let summary = stand_in.first().filter(|b| b.actor == Actor::User).map(|b| b.content.clone()).unwrap_or_default();
    let trigger = match info.and_then(|i| i.get("triggerReason")).and_then(Value::as_str) {
        Some("manual") => Trigger::Manual,
        Some(_) => Trigger::Auto,
        None => Trigger::Unknown,
    };
    Some(Found {
        summary_at: 0,
        summary,
        stand_in,
        replaced: vec![0],
        preserved: Preserved::None,
        trigger,
        tokens_before: info.and_then(|i| i.get("originalTokenCount")).and_then(Value::as_u64),
        loss: None,
    })
}

/// The uuid of the record `block` is the first block of.
pub(super) fn record_key(block: &Block) -> Option<&str> {
    record_of(block)?.get("uuid")?.as_str()
}
