//! What makes a transcript record malformed (the fields its type needs, of the wrong type), and
//! what an export written from stored text reads of a stored record.

use serde_json::{Map, Value};

use crate::error::Result;
use crate::json::json_type;
use crate::model::Block;
use crate::native::splice::{members_at, object_members, parse_stored, Splice};
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

/// Readies a block loaded with its Claude Code data as stored text for [`transcript`] (a
/// [`crate::native::splice::Lighten`]): the record's stored text becomes its [`Splice`] (the hole
/// at the message's content, which a grouped record gets back from its blocks), and the data keeps
/// only what the writer reads of the record (its type, ids, time, session, working directory and,
/// for messages kept whole, their content). Data the scanner does not follow is parsed in full.
pub(super) fn lighten(block: &mut Block) -> Result<Option<Splice>> {
    let Some(native) = block.native.as_mut() else { return Ok(None) };
    let Value::String(text) = &mut native.data else { return Ok(None) };
    let text = std::mem::take(text);
    Ok(match light_data(&text) {
        Some((data, record, hole)) => {
            native.data = data;
            Some(Splice { text, record, hole })
        }
        None => {
            native.data = parse_stored(&text, &block.id)?;
            None
        }
    })
}

/// The data of a stored text as the writer reads it, with the span of its record and the record's
/// hole; `None` when the data has no record or is not laid out as the store writes it.
fn light_data(text: &str) -> Option<(Value, std::ops::Range<usize>, Option<std::ops::Range<usize>>)> {
    // The data's members, the record's scanned once with its own.
    let b = text.as_bytes();
    if b.first() != Some(&b'{') || b.get(1..11) != Some(b"\"record\":{".as_slice()) {
        return None;
    }
    let (members, end) = members_at(text, 10)?;
    let (light, hole) = light_record(text, &members)?;
    let mut data = Map::new();
    data.insert("record".into(), light);
    let rest = format!("{{{}", text.get(end..)?.strip_prefix(',').unwrap_or("}"));
    for (key, span) in object_members(&rest)? {
        if key.contains('\\') || key == "record" {
            return None;
        }
        data.insert(key.to_string(), serde_json::from_str(&rest[span]).ok()?);
    }
    let record = 10..end;
    // A grouped record gets its content back (it needs the place to put it); a record kept whole
    // is written as it is.
    if !data.contains_key("parts") {
        return Some((Value::Object(data), record, None));
    }
    Some((Value::Object(data), record, Some(hole?)))
}

/// What the writer reads of a record (its `members` in `text`), and the span of its message's
/// content.
fn light_record(text: &str, members: &[(&str, std::ops::Range<usize>)]) -> Option<(Value, Option<std::ops::Range<usize>>)> {
    let parse = |span: &std::ops::Range<usize>| serde_json::from_str::<Value>(&text[span.clone()]).ok();
    let mut light = Map::new();
    for (key, span) in members {
        if matches!(*key, "type" | "isSidechain" | "uuid" | "timestamp" | "sessionId" | "cwd") {
            light.insert(key.to_string(), parse(span)?);
        }
    }
    let message_kind = matches!(light.get("type").and_then(Value::as_str), Some("user" | "assistant"));
    let mut hole = None;
    if let Some((_, span)) = members.iter().find(|(key, _)| *key == "message") {
        let message = match object_members(&text[span.clone()]) {
            Some(fields) => {
                let mut light_message = Map::new();
                if let Some((_, content)) = fields.iter().find(|(key, _)| *key == "content") {
                    let content = span.start + content.start..span.start + content.end;
                    let value = if message_kind { parse(&content)? } else { Value::Null };
                    light_message.insert("content".into(), value);
                    hole = Some(content);
                }
                Value::Object(light_message)
            }
            None => parse(span)?,
        };
        light.insert("message".into(), message);
    }
    Some((Value::Object(light), hole))
}
