//! What makes a transcript record malformed: the fields its type needs, of the wrong type.

use serde_json::Value;

use crate::json::json_type;
use crate::native::common::{malformed, str_field, Malformed};

/// Record types that hold a conversation message.
pub(super) fn is_message_type(ty: &str) -> bool {
    ty == "user" || ty == "assistant"
}

/// The checks that make a record malformed: what its type needs, of the wrong type.
pub(super) fn check_record(value: &Value) -> std::result::Result<(), Malformed> {
    let Value::Object(map) = value else {
        return Err(Malformed { reason: format!("a record must be a JSON object, not {}", json_type(value)), field: None });
    };
    let ty = match map.get("type") {
        Some(Value::String(ty)) => ty.as_str(),
        None => return Err(malformed("type", "the record has no \"type\"")),
        Some(other) => return Err(malformed("type", format!("\"type\" must be a string, not {}", json_type(other)))),
    };
    for key in ["uuid", "parentUuid", "sessionId", "timestamp"] {
        str_field(map, key)?;
    }
    if !is_message_type(ty) {
        return Ok(());
    }
    let message = match map.get("message") {
        Some(Value::Object(message)) => message,
        None => return Err(malformed("message", format!("a {ty} record needs \"message\""))),
        Some(other) => return Err(malformed("message", format!("\"message\" must be an object, not {}", json_type(other)))),
    };
    for key in ["model", "id"] {
        str_field(message, key).map_err(|mut m| {
            m.field = m.field.map(|f| format!("message.{f}"));
            m
        })?;
    }
    match message.get("content") {
        Some(Value::String(_)) => Ok(()),
        Some(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                if !item.is_object() {
                    return Err(malformed(
                        format!("message.content[{i}]"),
                        format!("a content item must be an object, not {}", json_type(item)),
                    ));
                }
            }
            Ok(())
        }
        None => Err(malformed("message.content", "the message has no \"content\"")),
        Some(other) => Err(malformed(
            "message.content",
            format!("\"message.content\" must be a string or a list, not {}", json_type(other)),
        )),
    }
}
