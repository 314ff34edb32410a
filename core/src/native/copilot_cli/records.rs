//! What a Copilot CLI event is: the events of the session log, what makes one malformed, and what
//! the CLI prints rather than keeps.

use serde_json::{Map, Value};

use crate::json::json_type;
use crate::native::common::{malformed, str_field, Malformed};

/// True for an event of a session log: a dotted `type` (`session.start`, `user.message`, …), a
/// `data` object, a string `id` and `timestamp`, and a `parentId` key (null or an id).
pub(super) fn is_event(record: &Map<String, Value>) -> bool {
    record.get("type").and_then(Value::as_str).is_some_and(|t| t.contains('.') && !t.starts_with('.') && !t.contains(' '))
        && record.get("data").is_some_and(Value::is_object)
        && record.get("id").is_some_and(Value::is_string)
        && record.get("timestamp").is_some_and(Value::is_string)
        && matches!(record.get("parentId"), Some(Value::Null | Value::String(_)))
}

/// True for what `copilot --output-format json` prints and the log does not keep: an event marked
/// `ephemeral`, or the closing `result`.
pub(super) fn is_output(record: &Map<String, Value>) -> bool {
    record.get("ephemeral") == Some(&Value::Bool(true))
        || (record.get("type").and_then(Value::as_str) == Some("result") && record.contains_key("sessionId") && record.contains_key("exitCode"))
}

/// The checks that make a line malformed: not an object, without a string `type` and `id`, or with
/// a `data` that is not an object.
pub(super) fn check_record(value: &Value) -> std::result::Result<(), Malformed> {
    let Value::Object(map) = value else {
        return Err(Malformed { reason: format!("an event must be a JSON object, not {}", json_type(value)), field: None });
    };
    if str_field(map, "type")?.is_none() {
        return Err(malformed("type", "the event has no \"type\""));
    }
    if str_field(map, "id")?.is_none() {
        return Err(malformed("id", "the event has no \"id\""));
    }
    for key in ["timestamp", "parentId"] {
        str_field(map, key)?;
    }
    match map.get("data") {
        None | Some(Value::Object(_)) => Ok(()),
        Some(other) => Err(malformed("data", format!("\"data\" must be an object, not {}", json_type(other)))),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn events_and_printed_output_are_told_apart() {
        let event = json!({"type": "user.message", "data": {"content": "hi"}, "id": "e1", "timestamp": "t", "parentId": null});
        assert!(is_event(event.as_object().unwrap()) && !is_output(event.as_object().unwrap()));
        let ephemeral = json!({"type": "assistant.idle", "data": {}, "ephemeral": true, "id": "e2", "timestamp": "t", "parentId": "e1"});
        assert!(is_output(ephemeral.as_object().unwrap()));
        let result = json!({"type": "result", "timestamp": "t", "sessionId": "s", "exitCode": 0});
        assert!(is_output(result.as_object().unwrap()) && !is_event(result.as_object().unwrap()));
        let pi = json!({"type": "message", "id": "a1b2c3d4", "parentId": null, "timestamp": "t", "message": {}});
        assert!(!is_event(pi.as_object().unwrap()));
    }

    #[test]
    fn malformed_events_name_the_field() {
        assert_eq!(check_record(&json!({"type": "x.y", "data": []})).err().unwrap().field.as_deref(), Some("id"));
        assert_eq!(check_record(&json!({"type": "x.y", "id": "e", "data": 3})).err().unwrap().field.as_deref(), Some("data"));
        assert!(check_record(&json!([1])).is_err());
    }
}
