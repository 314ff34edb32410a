//! OpenCode's compactions: a user message with a `compaction` part (`auto`, `overflow`,
//! `tail_start_id`), answered by an assistant message marked `summary` that holds the summary.
//! OpenCode drops the history before the compaction message once that summary has completed,
//! sends the compaction part as "What did we do so far?" and the summary as the answer, re-includes
//! the messages from `tail_start_id` on, then the rest.

use serde_json::Value;

use crate::model::{Actor, Block, Kind, Trigger};
use crate::native::adapter::{Found, Needle, Preserved, stand_in_text};

/// The needle every compaction part's stored text holds.
pub(super) const NEEDLES: &[Needle] = &[Needle::Native("\"type\":\"compaction\"")];

/// The text OpenCode sends for a compaction part.
const QUESTION: &str = "What did we do so far?";

fn part(block: &Block) -> Option<&serde_json::Map<String, Value>> {
    block.native.as_ref()?.data.get("part")?.as_object()
}

fn info(block: &Block) -> Option<&serde_json::Map<String, Value>> {
    block.native.as_ref()?.data.get("message")?.as_object()
}

/// The compaction `window[0]` records, if it is a compaction part whose summary completed.
pub(super) fn read(window: &[Block]) -> Option<Found> {
    let first = window.first()?;
    let compaction = part(first)?;
    if compaction.get("type").and_then(Value::as_str) != Some("compaction") {
        return None;
    }
    let asked = first.message_id.as_deref()?;
    // The summary: an assistant message marked `summary`, answering the compaction message,
    // finished without an error.
    let start = window.iter().position(|b| {
        info(b).is_some_and(|m| {
            m.get("role").and_then(Value::as_str) == Some("assistant")
                && m.get("summary") == Some(&Value::Bool(true))
                && m.get("parentID").and_then(Value::as_str) == Some(asked)
                && m.get("finish").is_some_and(|f| !f.is_null())
                && m.get("error").is_none_or(Value::is_null)
        })
    })?;
    let answer = window[start].message_id.clone()?;
    let in_message = |b: &Block, id: &str| b.message_id.as_deref() == Some(id);
    let texts: Vec<usize> = (start..window.len())
        .filter(|&i| in_message(&window[i], &answer) && window[i].actor == Actor::Assistant && window[i].kind == Kind::Text)
        .collect();
    let summary = texts.iter().map(|&i| window[i].content.as_str()).collect::<Vec<_>>().join("\n");
    let mut stand_in = vec![stand_in_text(QUESTION.to_string())];
    stand_in.extend(texts.iter().map(|&i| window[i].clone()));
    let replaced = (0..window.len()).filter(|&i| in_message(&window[i], asked) || in_message(&window[i], &answer)).collect();
    let preserved = match compaction.get("tail_start_id").and_then(Value::as_str) {
        Some(id) => Preserved::From(id.to_string()),
        None => Preserved::None,
    };
    let trigger = match compaction.get("auto").and_then(Value::as_bool) {
        Some(true) => Trigger::Auto,
        Some(false) => Trigger::Manual,
        None => Trigger::Unknown,
    };
    Some(Found { summary_at: texts.first().copied().unwrap_or(start), summary, stand_in, replaced, preserved, trigger, tokens_before: None, loss: None })
}

/// The id of the message `block` is the first block of.
pub(super) fn record_key(block: &Block) -> Option<&str> {
    info(block)?.get("id")?.as_str()
}
