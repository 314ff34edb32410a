//! What a Qwen Code chat record is: its kinds, what makes one malformed, and the vendor behind a
//! model name.

use serde_json::{Map, Value};

use crate::json::json_type;
use crate::native::common::{malformed, str_field, Malformed};

/// Every record type Qwen Code 0.24 writes.
pub(super) const RECORD_TYPES: [&str; 4] = ["user", "assistant", "tool_result", "system"];

/// The `subtype` of the system record a compression writes.
pub(super) const COMPRESSION: &str = "chat_compression";

/// True for a record of a Qwen Code chat file: a Qwen record type, a string `uuid` and
/// `sessionId`, a `parentUuid` key, and what only Qwen's records have: a message with Gemini
/// `parts` and no `content` (Claude Code's messages have `content`), or a `systemPayload`, or the
/// `tool_result` type.
pub(super) fn is_record(record: &Map<String, Value>) -> bool {
    let ty = record.get("type").and_then(Value::as_str).unwrap_or("");
    RECORD_TYPES.contains(&ty)
        && record.get("uuid").is_some_and(Value::is_string)
        && record.get("sessionId").is_some_and(Value::is_string)
        && matches!(record.get("parentUuid"), Some(Value::Null | Value::String(_)))
        && (record.get("message").and_then(Value::as_object).is_some_and(|m| m.contains_key("parts") && !m.contains_key("content"))
            || record.get("systemPayload").is_some_and(Value::is_object)
            || ty == "tool_result")
}

/// The checks that make a line malformed: a record that is not an object, without a string
/// `type` or `uuid`, or whose message is not `{role, parts: [object…]}`.
pub(super) fn check_record(value: &Value) -> std::result::Result<(), Malformed> {
    let Value::Object(map) = value else {
        return Err(Malformed { reason: format!("a record must be a JSON object, not {}", json_type(value)), field: None });
    };
    let ty = match map.get("type") {
        Some(Value::String(ty)) => ty.as_str(),
        None => return Err(malformed("type", "the record has no \"type\"")),
        Some(other) => return Err(malformed("type", format!("\"type\" must be a string, not {}", json_type(other)))),
    };
    for key in ["uuid", "parentUuid", "sessionId", "timestamp", "cwd", "model", "subtype"] {
        str_field(map, key)?;
    }
    if str_field(map, "uuid")?.is_none() {
        return Err(malformed("uuid", "the record has no \"uuid\""));
    }
    let message = match map.get("message") {
        None if ty == "system" || !RECORD_TYPES.contains(&ty) => return Ok(()),
        None => return Err(malformed("message", format!("a {ty} record needs \"message\""))),
        Some(Value::Object(message)) => message,
        Some(other) => return Err(malformed("message", format!("\"message\" must be an object, not {}", json_type(other)))),
    };
    match message.get("parts") {
        Some(Value::Array(parts)) => match parts.iter().position(|part| !part.is_object()) {
            Some(i) => Err(malformed(format!("message.parts[{i}]"), format!("a part must be an object, not {}", json_type(&parts[i])))),
            None => Ok(()),
        },
        None => Err(malformed("message.parts", "the message has no \"parts\"")),
        Some(other) => Err(malformed("message.parts", format!("\"message.parts\" must be a list, not {}", json_type(other)))),
    }
}

/// True for an id Qwen Code takes for a session: a hyphenated UUID of version 1 to 5 (a UUIDv7,
/// say, it takes for a title to look up).
pub(crate) fn is_session_id(id: &str) -> bool {
    id.len() == 36 && uuid::Uuid::try_parse(id).is_ok_and(|u| (1..=5).contains(&u.get_version_num()) && u.get_variant() == uuid::Variant::RFC4122)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn qwen_records_are_told_from_claude_code_records() {
        let qwen = json!({"uuid": "u", "parentUuid": null, "sessionId": "s", "type": "user", "message": {"role": "user", "parts": [{"text": "hi"}]}});
        assert!(is_record(qwen.as_object().unwrap()));
        let claude = json!({"uuid": "u", "parentUuid": null, "sessionId": "s", "type": "user", "message": {"role": "user", "content": "hi"}});
        assert!(!is_record(claude.as_object().unwrap()));
        let system = json!({"uuid": "u", "parentUuid": "p", "sessionId": "s", "type": "system", "subtype": "ui_telemetry", "systemPayload": {}});
        assert!(is_record(system.as_object().unwrap()));
    }

    #[test]
    fn malformed_records_name_the_field() {
        let no_parts = json!({"uuid": "u", "type": "user", "message": {"role": "user"}});
        assert_eq!(check_record(&no_parts).err().unwrap().field.as_deref(), Some("message.parts"));
        let bad_part = json!({"uuid": "u", "type": "assistant", "message": {"role": "model", "parts": [{"text": "a"}, 3]}});
        assert_eq!(check_record(&bad_part).err().unwrap().field.as_deref(), Some("message.parts[1]"));
        assert_eq!(check_record(&json!({"type": "user"})).err().unwrap().field.as_deref(), Some("uuid"));
        assert!(check_record(&json!({"uuid": "u", "type": "system", "subtype": "x"})).is_ok());
    }

    #[test]
    fn session_ids_are_uuids_of_versions_one_to_five() {
        assert!(is_session_id("ffd30471-6175-4f0c-b592-7f181077b9b7"));
        assert!(!is_session_id("01a25206-6254-7785-b7e7-e04af78ba47c"), "a UUIDv7");
        assert!(!is_session_id("ffd30471617540fcb5927f181077b9b7"), "not hyphenated");
        assert!(!is_session_id("api-qwen"));
    }
}
