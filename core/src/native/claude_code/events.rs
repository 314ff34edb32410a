//! Live capture: the blocks each `--output-format stream-json` event completes.

use serde_json::Value;

use crate::error::{Error, Result};
use crate::model::{Actor, Block, Kind, Native, Timestamp};

use super::RUNTIME;
use crate::native::live::{command_line, COMPACTION_FAILED};
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
    if let Some(command) = local_command(map) {
        // A slash command's own output (`/compact`'s "Not enough messages to compact."): Claude Code
        // sends it as an `assistant` event of the model `<synthetic>`, but no model said it, so it
        // is bookkeeping, never an answer to replay.
        return Ok(vec![status(command)]);
    }
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
                // `/compact` that did not compact says why.
                "status" if map.get("compact_result").and_then(Value::as_str) == Some("failed") => format!(
                    "{COMPACTION_FAILED}{}",
                    map.get("compact_error").and_then(Value::as_str).unwrap_or("Claude Code did not say why")
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

/// The status line of an `assistant` event that carries a local command's output
/// (`local_command_run`): the command and what it printed.
fn local_command(map: &serde_json::Map<String, Value>) -> Option<String> {
    let run = map.get("local_command_run")?.as_object()?;
    let command = run.get("command").and_then(Value::as_str).unwrap_or("?");
    let mut said = String::new();
    match map.get("message").and_then(|m| m.get("content")) {
        Some(Value::String(text)) => said.push_str(text),
        Some(Value::Array(items)) => {
            for text in items.iter().filter_map(|i| i.get("text").and_then(Value::as_str)) {
                said.push_str(text);
            }
        }
        _ => {}
    }
    Some(command_line(command, &said))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::event_blocks;
    use crate::model::{Actor, Kind};

    /// What Claude Code 2.1.328 streamed for `/compact` right after a compaction (seed 2026 of the
    /// chaos campaign, step 1,749), trimmed to the fields that matter.
    #[test]
    fn a_declined_compact_is_bookkeeping_not_an_answer() {
        let failed = json!({"type": "system", "subtype": "status", "status": null, "compact_result": "failed", "compact_error": "Not enough messages to compact.", "session_id": "s", "uuid": "u1"});
        let blocks = event_blocks(&failed).unwrap();
        assert_eq!((blocks[0].actor, blocks[0].kind, blocks[0].content.as_str()), (Actor::System, Kind::Status, "compaction failed: Not enough messages to compact."));

        let said = json!({
            "type": "assistant",
            "message": {"id": "m", "model": "<synthetic>", "role": "assistant", "stop_reason": "end_turn", "type": "message", "usage": {"input_tokens": 0, "output_tokens": 0}, "content": [{"type": "text", "text": "Not enough messages to compact."}]},
            "parent_tool_use_id": null,
            "local_command_source": "<local-command-stdout>Not enough messages to compact.</local-command-stdout>",
            "session_id": "s", "uuid": "u2", "timestamp": "2026-12-07T21:53:07.014Z",
            "local_command_run": {"command": "compact", "args": ""}
        });
        let blocks = event_blocks(&said).unwrap();
        assert_eq!(blocks.len(), 1);
        assert_eq!((blocks[0].actor, blocks[0].kind, blocks[0].content.as_str()), (Actor::System, Kind::Status, "/compact: Not enough messages to compact."));
        assert_eq!((blocks[0].provider.as_deref(), blocks[0].model.as_deref()), (None, None));
        // The whole event is kept.
        assert_eq!(blocks[0].native.as_ref().unwrap().data["event"], said);

        // An answer without `local_command_run` is still an answer.
        let mut answer = said.clone();
        answer.as_object_mut().unwrap().remove("local_command_run");
        assert_eq!(event_blocks(&answer).unwrap()[0].kind, Kind::Text);
    }
}
