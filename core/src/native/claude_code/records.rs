//! What makes a transcript record malformed (the fields its type needs, of the wrong type), and
//! what an export written from stored text reads of a stored record.

use serde_json::{Map, Value};

use crate::error::Result;
use crate::json::json_type;
use crate::model::Block;
use crate::native::common::{malformed, str_field, Malformed};
use crate::native::splice::{lighten_with, Hole, Splice, StoredRecord};

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

/// Readies a block loaded with its Claude Code data as stored text for
/// [`super::export::transcript`] (a [`crate::native::splice::Lighten`]): the record's stored text
/// becomes its [`Splice`] (the hole at the message's content, which a grouped record gets back from
/// its blocks), and the data keeps only what the writer reads of the record (its type, ids, time,
/// session, working directory and, for messages kept whole, their content).
pub(super) fn lighten(block: &mut Block) -> Result<Option<Splice>> {
    lighten_with(block, light_record)
}

/// What the writer reads of a record, and the span of its message's content.
fn light_record(stored: &StoredRecord<'_>) -> Option<(Value, Option<Hole>)> {
    let mut light = stored.pick(&["type", "isSidechain", "uuid", "timestamp", "sessionId", "cwd"])?;
    let message_kind = matches!(light.get("type").and_then(Value::as_str), Some("user" | "assistant"));
    let mut hole = None;
    if let Some(span) = stored.member("message") {
        let message = match stored.members_of(span.clone()) {
            Some(fields) => {
                let mut light_message = Map::new();
                if let Some((_, content)) = fields.into_iter().find(|(key, _)| *key == "content") {
                    let value = if message_kind { stored.parse(content.clone())? } else { Value::Null };
                    light_message.insert("content".into(), value);
                    hole = Some((content, "/message/content"));
                }
                Value::Object(light_message)
            }
            None => stored.parse(span)?,
        };
        light.insert("message".into(), message);
    }
    Some((Value::Object(light), hole))
}
