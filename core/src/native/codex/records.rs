//! What makes a rollout line or `ResponseItem` malformed (the wrong types Codex itself refuses),
//! and what an export written from stored text reads of a stored line.

use serde_json::{Map, Value};

use crate::error::Result;
use crate::json::json_type;
use crate::model::Block;
use crate::native::common::{malformed, str_field, Malformed};
use crate::native::splice::{lighten_with, Hole, Splice, StoredRecord};

use super::{AT_BARE_CONTENT, AT_CONTENT, AT_ITEM, ITEM_TYPES};

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

/// Readies a block loaded with its Codex data as stored text for [`super::export::rollout`] (a
/// [`crate::native::splice::Lighten`]): the line's stored text becomes its [`Splice`] (the hole where
/// a grouped line's items go back), and the data keeps only what the writer reads of the line (its
/// ordinal, time, type, and its payload's or item's type, turn and call ids). `session_meta` and
/// `turn_context` lines, which the writer reads more of (and may rewrite), are read in full.
pub(super) fn lighten(block: &mut Block) -> Result<Option<Splice>> {
    lighten_with(block, light_line)
}

fn light_line(stored: &StoredRecord<'_>) -> Option<(Value, Option<Hole>)> {
    const READ: &[&str] = &["type", "turn_id", "call_id"];
    let mut light = stored.pick(&["ordinal", "timestamp", "type", "call_id"])?;
    if matches!(light.get("type").and_then(Value::as_str), Some("session_meta" | "turn_context")) {
        return None;
    }
    let mut content = None;
    let payload = stored.member("payload");
    if let Some(span) = payload.clone() {
        let value = match stored.members_of(span.clone()) {
            Some(fields) => {
                let mut light_payload = Map::new();
                for (key, field) in fields {
                    if READ.contains(&key) {
                        light_payload.insert(key.to_string(), stored.parse(field)?);
                    } else if key == "content" {
                        content = Some(field);
                    }
                }
                Value::Object(light_payload)
            }
            None => stored.parse(span)?,
        };
        light.insert("payload".into(), value);
    }
    let hole = match stored.rest.get("at").and_then(Value::as_str) {
        Some(AT_CONTENT) => content.map(|span| (span, "/payload/content")),
        Some(AT_BARE_CONTENT) => stored.member("content").map(|span| (span, "/content")),
        Some(AT_ITEM) => payload.map(|span| (span, "/payload")),
        _ => None,
    };
    Some((Value::Object(light), hole))
}
