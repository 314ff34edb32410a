//! What makes a rollout line or `ResponseItem` malformed: the wrong types Codex itself refuses.

use serde_json::{Map, Value};

use crate::json::json_type;
use crate::native::common::{malformed, str_field, Malformed};

use super::ITEM_TYPES;

/// Wrong types that Codex itself would refuse (it skips such a line), reported as malformed.
pub(super) fn check_line(value: &Value) -> std::result::Result<(), Malformed> {
    let Value::Object(map) = value else {
        return Err(Malformed { reason: format!("a rollout line must be a JSON object, not {}", json_type(value)), field: None });
    };
    if map.contains_key("record_type") {
        return Ok(());
    }
    if !map.contains_key("payload") {
        // A bare ResponseItem (pre-envelope rollouts, ResponseItem lists) or the old meta line.
        return match map.get("type") {
            None if map.contains_key("id") => Ok(()),
            None => Err(malformed("type", "the line has no \"type\"")),
            Some(Value::String(ty)) if ITEM_TYPES.contains(&ty.as_str()) => check_item(map, ""),
            Some(Value::String(_)) => Ok(()),
            Some(other) => Err(malformed("type", format!("\"type\" must be a string, not {}", json_type(other)))),
        };
    }
    let ty = match map.get("type") {
        Some(Value::String(ty)) => ty.as_str(),
        None => return Err(malformed("type", "the line has no \"type\"")),
        Some(other) => return Err(malformed("type", format!("\"type\" must be a string, not {}", json_type(other)))),
    };
    str_field(map, "timestamp")?;
    if let Some(ordinal) = map.get("ordinal") {
        if !ordinal.is_u64() {
            return Err(malformed("ordinal", format!("\"ordinal\" must be a non-negative integer, not {}", json_type(ordinal))));
        }
    }
    if ty == "response_item" {
        let Some(Value::Object(item)) = map.get("payload") else {
            return Err(malformed("payload", "a response_item payload must be an object"));
        };
        return check_item(item, "payload.");
    }
    Ok(())
}

fn check_item(item: &Map<String, Value>, prefix: &str) -> std::result::Result<(), Malformed> {
    let at = |f: &str| format!("{prefix}{f}");
    let ty = match item.get("type") {
        Some(Value::String(ty)) => ty.as_str(),
        None => return Err(malformed(at("type"), "the item has no \"type\"")),
        Some(other) => return Err(malformed(at("type"), format!("\"type\" must be a string, not {}", json_type(other)))),
    };
    let string = |key: &str, required: bool| -> std::result::Result<(), Malformed> {
        match item.get(key) {
            Some(Value::String(_)) => Ok(()),
            None if !required => Ok(()),
            None => Err(malformed(at(key), format!("a {ty} item needs \"{key}\""))),
            Some(other) => Err(malformed(at(key), format!("\"{key}\" must be a string, not {}", json_type(other)))),
        }
    };
    let output = || -> std::result::Result<(), Malformed> {
        match item.get("output") {
            Some(Value::String(_) | Value::Array(_)) => Ok(()),
            None => Err(malformed(at("output"), format!("a {ty} item needs \"output\""))),
            Some(other) => Err(malformed(at("output"), format!("\"output\" must be a string or a list, not {}", json_type(other)))),
        }
    };
    match ty {
        "message" => {
            string("role", true)?;
            match item.get("content") {
                Some(Value::Array(parts)) => {
                    for (i, part) in parts.iter().enumerate() {
                        if !part.is_object() {
                            return Err(malformed(at(&format!("content[{i}]")), format!("a content item must be an object, not {}", json_type(part))));
                        }
                    }
                    Ok(())
                }
                None => Err(malformed(at("content"), "a message needs \"content\"")),
                Some(other) => Err(malformed(at("content"), format!("\"content\" must be a list, not {}", json_type(other)))),
            }
        }
        "function_call" => {
            string("name", true)?;
            string("arguments", true)?;
            string("call_id", true)
        }
        "custom_tool_call" => {
            string("name", true)?;
            string("input", true)?;
            string("call_id", true)
        }
        "function_call_output" => {
            string("call_id", false)?;
            output()
        }
        "custom_tool_call_output" => {
            string("call_id", true)?;
            output()
        }
        "reasoning" => match item.get("summary") {
            Some(Value::Array(_)) | None => string("encrypted_content", false).or_else(|e| {
                if item.get("encrypted_content") == Some(&Value::Null) { Ok(()) } else { Err(e) }
            }),
            Some(other) => Err(malformed(at("summary"), format!("\"summary\" must be a list, not {}", json_type(other)))),
        },
        _ => Ok(()),
    }
}
