//! Live capture: the blocks bus events and `opencode run --format json` events complete.

use serde_json::Value;

use crate::error::{Error, Result};
use crate::model::{Actor, Block, Kind, Native, Timestamp};
use crate::store::Session;

use super::RUNTIME;
use super::import::{model_provider_of, part_blocks, MessageContext};
use super::records::{check_part, millis};

fn event_status(event: &Value, line: String) -> Block {
    let mut block = Block::new(Actor::System, Kind::Status, line);
    block.native = Some(Native { runtime: RUNTIME.into(), data: obj! { "event" => event.clone() } });
    block
}

/// The blocks a live event completes. Parts are taken when they are whole (text and reasoning
/// with `time.end`, user text at once, tools when completed or failed); deltas and in-progress
/// updates add nothing, since the final update carries the whole part. Assistant blocks are
/// attributed from the `message.updated` event of their message already ingested.
///
/// A compaction's blocks also keep what an import keeps, which the compaction reader reads
/// (`compaction.rs`) and an export back to OpenCode writes as it was: the block of a `compaction`
/// part keeps the part and its user message's info (`part`, `message`); the `message.updated`
/// block of a summary message (the live driver sends its last update before its parts) keeps the
/// info, and the summary's parts keep their part.
pub(super) fn event_blocks(session: &Session, event: &Value) -> Result<Vec<Block>> {
    let Value::Object(map) = event else { return Err(Error::invalid("an event must be a JSON object")) };
    let ty = match map.get("type") {
        Some(Value::String(ty)) => ty.as_str(),
        _ => return Err(Error::invalid_field("type", "an OpenCode event needs a string \"type\"")),
    };
    let properties = map.get("properties");
    match ty {
        "message.updated" => {
            let info = properties.and_then(|p| p.get("info")).ok_or_else(|| Error::invalid_field("properties.info", "message.updated needs properties.info"))?;
            let role = info["role"].as_str().unwrap_or("?");
            let id = info["id"].as_str().unwrap_or("?");
            let mut block = event_status(event, format!("{role} message {id}"));
            block.message_id = Some(id.to_string());
            if role == "assistant" && info["summary"] == Value::Bool(true) {
                if let Some(Value::Object(data)) = block.native.as_mut().map(|n| &mut n.data) {
                    data.insert("message".into(), info.clone());
                }
            }
            if role == "assistant" {
                if let (Some(p), Some(m)) = (info["providerID"].as_str(), info["modelID"].as_str()) {
                    block.provider = Some(RUNTIME.into());
                    block.model_provider = Some(model_provider_of(p));
                    block.model = Some(m.to_string());
                }
            }
            Ok(vec![block])
        }
        "message.part.updated" => {
            let part = properties.and_then(|p| p.get("part")).ok_or_else(|| Error::invalid_field("properties.part", "message.part.updated needs properties.part"))?;
            live_part(session, event, part)
        }
        "message.part.delta" => Ok(Vec::new()),
        // `opencode run --format json`
        "step_start" | "step_finish" | "text" | "reasoning" | "tool_use" => {
            let part = map.get("part").ok_or_else(|| Error::invalid_field("part", format!("a {ty} event needs a \"part\"")))?;
            live_part(session, event, part)
        }
        "error" => {
            let message = map.get("error").and_then(|e| e.get("data")).and_then(|d| d.get("message")).and_then(Value::as_str).unwrap_or("error");
            let mut block = event_status(event, message.to_string());
            block.kind = Kind::Error;
            Ok(vec![block])
        }
        other => Ok(vec![event_status(event, other.to_string())]),
    }
}

fn live_part(session: &Session, event: &Value, part: &Value) -> Result<Vec<Block>> {
    check_part(part, "part")?;
    let ty = part["type"].as_str().unwrap_or("");
    let complete = match ty {
        "text" | "reasoning" => part.get("time").is_none_or(|t| t.get("end").is_some()),
        "tool" => matches!(part["state"]["status"].as_str(), Some("completed" | "error")),
        _ => true,
    };
    if !complete {
        return Ok(Vec::new());
    }
    let message_id = part["messageID"].as_str().unwrap_or("").to_string();
    // The message.updated event of this part's message, when one was ingested, says the role and
    // the model; `run --format json` prints only the assistant's parts and no message events.
    let known = message_updated(session, &message_id)?;
    // The compaction's blocks keep their part (see `event_blocks`): a compaction part with its
    // message's info (the message has no other part), a summary's parts.
    let native_message = match &known {
        Some(updated) if ty == "compaction" => Some(updated.info.clone()),
        _ => None,
    };
    let keep_part = ty == "compaction" || known.as_ref().is_some_and(|updated| updated.summary);
    let actor = match &known {
        Some(updated) if updated.role == "user" => Actor::User,
        Some(_) => Actor::Assistant,
        None if event.get("properties").is_some() && ty == "text" => Actor::User,
        None => Actor::Assistant,
    };
    let ctx = MessageContext {
        actor,
        id: message_id,
        turn: None,
        created: millis(event.get("timestamp").or_else(|| event.get("properties").and_then(|p| p.get("time")))).unwrap_or_else(Timestamp::now),
        model: known.and_then(|updated| Some((updated.model_provider?, updated.model?))),
    };
    let mut blocks = part_blocks(part.clone(), &ctx)?;
    if let (Some(info), Some(Value::Object(data))) = (native_message, blocks.first_mut().and_then(|b| b.native.as_mut()).map(|n| &mut n.data)) {
        data.insert("message".into(), info);
    }
    for block in &mut blocks {
        if let Some(Value::Object(data)) = block.native.as_mut().map(|n| &mut n.data) {
            // Live blocks keep the event, not a part to rebuild a document from (but a
            // compaction's, above).
            if !keep_part {
                data.remove("part");
                data.remove("result_of");
            }
            data.insert("event".into(), event.clone());
        }
        if block.actor == Actor::Assistant && block.provider.is_none() && block.kind != Kind::Status {
            block.provider = Some(RUNTIME.into());
        }
    }
    Ok(blocks)
}

/// What a `message.updated` event said of a message.
struct MessageUpdated {
    role: String,
    model_provider: Option<String>,
    model: Option<String>,
    /// The message's info as the event gave it.
    info: Value,
    /// True for a compaction's summary message.
    summary: bool,
}

/// What the newest ingested `message.updated` event of a message said.
fn message_updated(session: &Session, message_id: &str) -> Result<Option<MessageUpdated>> {
    let filter = "kind = 'status' AND native LIKE '%\"message.updated\"%'";
    let Some(block) = session.latest_of_message(message_id, filter)? else { return Ok(None) };
    let info = block.native.as_ref().map(|n| n.data["event"]["properties"]["info"].clone()).unwrap_or(Value::Null);
    let role = info["role"].as_str().unwrap_or("").to_string();
    let summary = info["summary"] == Value::Bool(true);
    Ok(Some(MessageUpdated { role, model_provider: block.model_provider, model: block.model, info, summary }))
}
