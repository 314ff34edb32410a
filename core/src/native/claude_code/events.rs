//! Live capture: the blocks each `--output-format stream-json` event completes.

use serde_json::Value;

use crate::error::{Error, Result};
use crate::model::{Actor, Block, Kind, Native, Timestamp};

use super::RUNTIME;
use super::import::{item_block, MessageAttribution};

/// The blocks one stream-json event completes.
pub(super) fn event_blocks(event: &Value) -> Result<Vec<Block>> {
    let Value::Object(map) = event else {
        return Err(Error::invalid("an event must be a JSON object"));
    };
    let ty = match map.get("type") {
        Some(Value::String(ty)) => ty.as_str(),
        _ => return Err(Error::invalid_field("type", "a stream-json event needs a string \"type\"")),
    };
    let created_at = map
        .get("timestamp")
        .and_then(Value::as_str)
        .and_then(|t| Timestamp::parse_rfc3339(t).ok())
        .unwrap_or_else(Timestamp::now);
    let status = |line: String| {
        let mut block = Block::new(Actor::System, Kind::Status, line);
        block.created_at = created_at;
        block.native = Some(Native { runtime: RUNTIME.into(), data: obj! { "event" => event.clone() } });
        block
    };
    match ty {
        "user" | "assistant" => {
            let message = match map.get("message") {
                Some(Value::Object(message)) => message,
                _ => return Err(Error::invalid_field("message", format!("a {ty} event needs a \"message\" object"))),
            };
            let actor = if ty == "user" { Actor::User } else { Actor::Assistant };
            let attribution = MessageAttribution::of(actor, message, map)
                .map_err(|m| Error::invalid_field(m.field.unwrap_or_default(), m.reason))?;
            let mut envelope = event.clone();
            envelope["message"]["content"] = Value::Null;
            let mut blocks = Vec::new();
            match message.get("content") {
                Some(Value::String(text)) => {
                    let mut block = Block::new(actor, attribution.text_kind(), text.clone());
                    attribution.apply(&mut block);
                    blocks.push(block);
                }
                Some(Value::Array(items)) => {
                    for (i, item) in items.iter().enumerate() {
                        let Value::Object(item) = item else {
                            return Err(Error::invalid_field(format!("message.content[{i}]"), "a content item must be an object"));
                        };
                        let (mut block, residual) = item_block(actor, item.clone(), &attribution);
                        attribution.apply(&mut block);
                        if block.kind == Kind::Status {
                            block.native = Some(Native { runtime: RUNTIME.into(), data: obj! { "item" => residual } });
                        }
                        blocks.push(block);
                    }
                }
                _ => return Err(Error::invalid_field("message.content", "content must be a string or a list")),
            }
            for block in &mut blocks {
                block.created_at = created_at;
                if block.native.is_none() {
                    block.native = Some(Native { runtime: RUNTIME.into(), data: obj! { "event" => envelope.clone() } });
                }
            }
            Ok(blocks)
        }
        // Partial-message events repeat what the whole `assistant` events carry.
        "stream_event" => Ok(Vec::new()),
        "system" => {
            let subtype = map.get("subtype").and_then(Value::as_str).unwrap_or("");
            let line = match subtype {
                "init" => format!(
                    "init: session {} model {}",
                    map.get("session_id").and_then(Value::as_str).unwrap_or("?"),
                    map.get("model").and_then(Value::as_str).unwrap_or("?")
                ),
                "" => "system".into(),
                other => format!("system/{other}"),
            };
            Ok(vec![status(line)])
        }
        "result" => {
            let subtype = map.get("subtype").and_then(Value::as_str).unwrap_or("");
            let is_error = map.get("is_error") == Some(&Value::Bool(true));
            let mut block = status(format!("result: {subtype}"));
            if is_error {
                block.kind = Kind::Error;
            }
            Ok(vec![block])
        }
        other => Ok(vec![status(other.to_string())]),
    }
}
