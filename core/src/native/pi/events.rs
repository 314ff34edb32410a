//! Pi's `--mode json` / `--mode rpc` events. Live capture is not wired yet (the adapter keeps the
//! trait's `UNSUPPORTED` default); what it will read is here: a `message_end` event carries the
//! same message object Pi writes into the session file, signatures included (FORMAT.md, Events).

use serde_json::{Map, Value};

/// The finished message of a `message_end` event (user, assistant or toolResult), as the session
/// file holds it; `None` for any other event.
#[allow(dead_code)] // the live driver's reader, to come
pub(super) fn message_end(event: &Value) -> Option<&Map<String, Value>> {
    if event.get("type").and_then(Value::as_str) != Some("message_end") {
        return None;
    }
    event.get("message")?.as_object().filter(|m| m.get("role").is_some_and(Value::is_string))
}

#[cfg(test)]
mod tests {
    use super::message_end;
    use serde_json::json;

    #[test]
    fn only_message_end_gives_a_message() {
        let event = json!({"type": "message_end", "message": {"role": "assistant", "content": []}});
        assert_eq!(message_end(&event).unwrap()["role"], "assistant");
        assert!(message_end(&json!({"type": "message_update", "message": {"role": "assistant"}})).is_none());
        assert!(message_end(&json!({"type": "message_end", "message": "x"})).is_none());
    }
}
