//! Pi's `--mode json` / `--mode rpc` events, as the live driver reads them (FORMAT.md, Live).
//!
//! What is recorded does not come from the events: a `message_end` carries the same message
//! object Pi writes into the session file, but the entry around it (its id, parent and time) and
//! the entries that are not messages (model and thinking-level changes) exist only in the file,
//! so the driver records what the file gains (`live.rs`). The events give the rest: text as it
//! streams, the end of a run, and how it ended.

use serde_json::{Map, Value};

use crate::native::live::TurnEnd;

/// The finished message of a `message_end` event (user, assistant or toolResult), as the session
/// file holds it; `None` for any other event.
pub(super) fn message_end(event: &Value) -> Option<&Map<String, Value>> {
    if event.get("type").and_then(Value::as_str) != Some("message_end") {
        return None;
    }
    event.get("message")?.as_object().filter(|m| m.get("role").is_some_and(Value::is_string))
}

/// The finished assistant message of a `message_end` event.
pub(super) fn assistant_end(event: &Value) -> Option<&Map<String, Value>> {
    message_end(event).filter(|m| m.get("role").and_then(Value::as_str) == Some("assistant"))
}

/// The text a `message_update` event streams: `(thinking, text)` for a `text_delta` or
/// `thinking_delta` of its `assistantMessageEvent`.
pub(super) fn delta(event: &Value) -> Option<(bool, &str)> {
    if event.get("type").and_then(Value::as_str) != Some("message_update") {
        return None;
    }
    let update = event.get("assistantMessageEvent")?;
    let thinking = match update.get("type").and_then(Value::as_str)? {
        "text_delta" => false,
        "thinking_delta" => true,
        _ => return None,
    };
    update.get("delta").and_then(Value::as_str).filter(|d| !d.is_empty()).map(|d| (thinking, d))
}

/// How a run ended, from its last assistant message: its `usage`, `interrupted` when its
/// `stopReason` is `aborted`, the `errorMessage` when it is `error`. A run without an assistant
/// message (nothing reached the model) ends plainly.
pub(super) fn turn_end(last_assistant: Option<&Map<String, Value>>) -> TurnEnd {
    let Some(message) = last_assistant else { return TurnEnd::default() };
    let stop = message.get("stopReason").and_then(Value::as_str).unwrap_or("");
    let error = (stop == "error").then(|| {
        message.get("errorMessage").and_then(Value::as_str).filter(|e| !e.trim().is_empty()).unwrap_or("the model request failed").to_string()
    });
    TurnEnd { usage: message.get("usage").cloned(), error, interrupted: stop == "aborted" }
}

/// The last assistant message of an `agent_end` event's `messages`.
pub(super) fn last_assistant(agent_end: &Value) -> Option<&Map<String, Value>> {
    agent_end.get("messages")?.as_array()?.iter().rev().filter_map(Value::as_object).find(|m| m.get("role").and_then(Value::as_str) == Some("assistant"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_message_end_gives_a_message() {
        let event = json!({"type": "message_end", "message": {"role": "assistant", "content": []}});
        assert_eq!(message_end(&event).unwrap()["role"], "assistant");
        assert!(assistant_end(&event).is_some());
        assert!(assistant_end(&json!({"type": "message_end", "message": {"role": "user", "content": []}})).is_none());
        assert!(message_end(&json!({"type": "message_update", "message": {"role": "assistant"}})).is_none());
        assert!(message_end(&json!({"type": "message_end", "message": "x"})).is_none());
    }

    #[test]
    fn deltas_are_text_and_thinking() {
        let update = |ty: &str| json!({"type": "message_update", "assistantMessageEvent": {"type": ty, "contentIndex": 0, "delta": "hi"}});
        assert_eq!(delta(&update("text_delta")), Some((false, "hi")));
        assert_eq!(delta(&update("thinking_delta")), Some((true, "hi")));
        assert_eq!(delta(&update("toolcall_delta")), None);
        assert_eq!(delta(&json!({"type": "message_end"})), None);
    }

    #[test]
    fn the_last_assistant_message_says_how_the_run_ended() {
        let end = json!({"type": "agent_end", "messages": [
            {"role": "user", "content": []},
            {"role": "assistant", "content": [], "stopReason": "toolUse"},
            {"role": "toolResult", "content": []},
            {"role": "assistant", "content": [], "stopReason": "error", "errorMessage": "529 overloaded", "usage": {"input": 3}},
        ]});
        let turn = turn_end(last_assistant(&end));
        assert_eq!(turn.error.as_deref(), Some("529 overloaded"));
        assert_eq!(turn.usage, Some(json!({"input": 3})));
        assert!(!turn.interrupted);
        let aborted = json!({"role": "assistant", "stopReason": "aborted", "errorMessage": "Request was aborted"});
        let turn = turn_end(aborted.as_object());
        assert!(turn.interrupted && turn.error.is_none());
        assert!(turn_end(None).error.is_none());
    }
}
