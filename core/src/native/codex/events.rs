//! Live capture: the blocks `codex exec --json` events and app-server notifications complete.

use serde_json::{json, Map, Value};

use crate::error::{Error, Result};
use crate::model::{Actor, Block, Kind, Native, Timestamp};
use crate::native::common::{data_url_embed, embed_block};

use super::RUNTIME;
use super::import::{item_to_blocks, RolloutState};

fn event_status(event: &Value, line: String, kind: Kind) -> Block {
    let mut block = Block::new(Actor::System, kind, line);
    block.native = Some(Native { runtime: RUNTIME.into(), data: obj! { "event" => event.clone() } });
    block
}

fn with_event(mut block: Block, event: &Value) -> Block {
    block.native = Some(Native { runtime: RUNTIME.into(), data: obj! { "event" => event.clone() } });
    block
}

fn codex_attributed(mut block: Block) -> Block {
    block.provider = Some(RUNTIME.into());
    block
}

/// The blocks one live event completes (none for deltas and `started` events: the `completed`
/// event carries the whole item).
pub(super) fn event_blocks(event: &Value) -> Result<Vec<Block>> {
    let Value::Object(map) = event else { return Err(Error::invalid("an event must be a JSON object")) };
    if let Some(method) = map.get("method").and_then(Value::as_str) {
        return notification_blocks(event, method, map.get("params").unwrap_or(&Value::Null));
    }
    let ty = match map.get("type") {
        Some(Value::String(ty)) => ty.as_str(),
        _ => return Err(Error::invalid_field("type", "a codex exec --json event needs a string \"type\" (or an app-server \"method\")")),
    };
    match ty {
        "item.completed" => {
            let Some(Value::Object(item)) = map.get("item") else {
                return Err(Error::invalid_field("item", "item.completed needs an \"item\" object"));
            };
            Ok(exec_item_blocks(event, item))
        }
        "item.started" | "item.updated" => Ok(Vec::new()),
        "thread.started" => Ok(vec![event_status(event, format!("thread started: {}", map.get("thread_id").and_then(Value::as_str).unwrap_or("?")), Kind::Status)]),
        "turn.failed" | "error" => {
            let message = map.get("error").and_then(|e| e.get("message")).or_else(|| map.get("message")).and_then(Value::as_str).unwrap_or(ty);
            Ok(vec![event_status(event, message.to_string(), Kind::Error)])
        }
        other => Ok(vec![event_status(event, other.to_string(), Kind::Status)]),
    }
}

fn s<'a>(map: &'a Map<String, Value>, key: &str) -> &'a str {
    map.get(key).and_then(Value::as_str).unwrap_or("")
}

/// `codex exec --json` items (snake_case `type`).
fn exec_item_blocks(event: &Value, item: &Map<String, Value>) -> Vec<Block> {
    let id = s(item, "id").to_string();
    match s(item, "type") {
        "agent_message" => vec![with_event(codex_attributed(Block::text(Actor::Assistant, s(item, "text"))), event)],
        "reasoning" => vec![with_event(codex_attributed(Block::new(Actor::Assistant, Kind::Thinking, s(item, "text"))), event)],
        "command_execution" => {
            let command = s(item, "command");
            let output = s(item, "aggregated_output");
            let failed = item.get("exit_code").and_then(Value::as_i64).is_some_and(|c| c != 0) || s(item, "status") == "failed";
            vec![
                with_event(codex_attributed(Block::tool_use(&id, "exec_command", json!({ "cmd": command }).to_string())), event),
                with_event(Block::tool_result(&id, output, failed), event),
            ]
        }
        "file_change" => {
            let changes = item.get("changes").cloned().unwrap_or(Value::Null);
            let failed = s(item, "status") == "failed";
            vec![
                with_event(codex_attributed(Block::tool_use(&id, "apply_patch", json!({ "changes": changes }).to_string())), event),
                with_event(Block::tool_result(&id, s(item, "status"), failed), event),
            ]
        }
        "mcp_tool_call" => {
            let name = format!("{}.{}", s(item, "server"), s(item, "tool"));
            let arguments = item.get("arguments").cloned().unwrap_or(Value::Null);
            let result = item.get("result").map(Value::to_string).unwrap_or_default();
            let failed = item.get("error").is_some_and(|e| !e.is_null());
            vec![
                with_event(codex_attributed(Block::tool_use(&id, name, arguments.to_string())), event),
                with_event(Block::tool_result(&id, result, failed), event),
            ]
        }
        "web_search" => vec![with_event(codex_attributed(Block::new(Actor::Assistant, Kind::Status, format!("web search: {}", s(item, "query")))), event)],
        "error" => vec![event_status(event, s(item, "message").to_string(), Kind::Error)],
        other => vec![event_status(event, format!("item: {other}"), Kind::Status)],
    }
}

/// App-server notifications (`item/completed` with camelCase `ThreadItem`s, `rawResponseItem/completed`).
fn notification_blocks(event: &Value, method: &str, params: &Value) -> Result<Vec<Block>> {
    match method {
        "item/completed" => {
            let Some(Value::Object(item)) = params.get("item") else {
                return Err(Error::invalid_field("params.item", "item/completed needs params.item"));
            };
            let turn = params.get("turnId").and_then(Value::as_str).map(str::to_string);
            let mut blocks = thread_item_blocks(event, item);
            for block in &mut blocks {
                block.turn_id.clone_from(&turn);
            }
            Ok(blocks)
        }
        "rawResponseItem/completed" => {
            let Some(Value::Object(item)) = params.get("item") else {
                return Err(Error::invalid_field("params.item", "rawResponseItem/completed needs params.item"));
            };
            let mut state = RolloutState { turn_id: params.get("turnId").and_then(Value::as_str).map(str::to_string), ..RolloutState::default() };
            Ok(item_to_blocks(item.clone(), None, &mut state, Timestamp::now()))
        }
        m if m.ends_with("/delta") || m.ends_with("Delta") || m.ends_with("PartAdded") || m == "item/started" => Ok(Vec::new()),
        "error" => Ok(vec![event_status(event, params.get("error").and_then(|e| e.get("message")).and_then(Value::as_str).unwrap_or("error").to_string(), Kind::Error)]),
        other => Ok(vec![event_status(event, other.to_string(), Kind::Status)]),
    }
}

fn thread_item_blocks(event: &Value, item: &Map<String, Value>) -> Vec<Block> {
    let id = s(item, "id").to_string();
    let join = |key: &str| -> String {
        item.get(key)
            .and_then(Value::as_array)
            .map(|parts| parts.iter().filter_map(Value::as_str).collect::<Vec<_>>().join("\n\n"))
            .unwrap_or_default()
    };
    match s(item, "type") {
        "userMessage" => {
            let mut blocks = Vec::new();
            for part in item.get("content").and_then(Value::as_array).into_iter().flatten() {
                let Some(p) = part.as_object() else { continue };
                match s(p, "type") {
                    "text" => blocks.push(with_event(Block::text(Actor::User, s(p, "text")), event)),
                    "image" => match data_url_embed(s(p, "url")) {
                        Some((embed, _)) => blocks.push(with_event(embed_block(Actor::User, "image", embed), event)),
                        None => blocks.push(with_event(Block::new(Actor::User, Kind::Status, format!("image: {}", s(p, "url"))), event)),
                    },
                    other => blocks.push(with_event(Block::new(Actor::User, Kind::Status, format!("[{other}]")), event)),
                }
            }
            blocks
        }
        "agentMessage" => vec![with_event(codex_attributed(Block::text(Actor::Assistant, s(item, "text"))), event)],
        "reasoning" => {
            let summary = join("summary");
            let content = join("content");
            let text = [summary, content].into_iter().filter(|t| !t.is_empty()).collect::<Vec<_>>().join("\n\n");
            vec![with_event(codex_attributed(Block::new(Actor::Assistant, Kind::Thinking, text)), event)]
        }
        "commandExecution" => {
            let failed = item.get("exitCode").and_then(Value::as_i64).is_some_and(|c| c != 0) || matches!(s(item, "status"), "failed" | "declined");
            vec![
                with_event(codex_attributed(Block::tool_use(&id, "exec_command", json!({ "cmd": s(item, "command") }).to_string())), event),
                with_event(Block::tool_result(&id, s(item, "aggregatedOutput"), failed), event),
            ]
        }
        "fileChange" => {
            let changes = item.get("changes").cloned().unwrap_or(Value::Null);
            let failed = matches!(s(item, "status"), "failed" | "declined");
            vec![
                with_event(codex_attributed(Block::tool_use(&id, "apply_patch", json!({ "changes": changes }).to_string())), event),
                with_event(Block::tool_result(&id, s(item, "status"), failed), event),
            ]
        }
        "mcpToolCall" | "dynamicToolCall" => {
            let name = match (item.get("server").and_then(Value::as_str), item.get("namespace").and_then(Value::as_str)) {
                (Some(server), _) => format!("{server}.{}", s(item, "tool")),
                (None, Some(ns)) => format!("{ns}.{}", s(item, "tool")),
                _ => s(item, "tool").to_string(),
            };
            let arguments = item.get("arguments").cloned().unwrap_or(Value::Null);
            let result = item.get("result").or_else(|| item.get("contentItems")).map(Value::to_string).unwrap_or_default();
            let failed = item.get("error").is_some_and(|e| !e.is_null()) || item.get("success") == Some(&Value::Bool(false));
            vec![
                with_event(codex_attributed(Block::tool_use(&id, name, arguments.to_string())), event),
                with_event(Block::tool_result(&id, result, failed), event),
            ]
        }
        "webSearch" => vec![with_event(codex_attributed(Block::new(Actor::Assistant, Kind::Status, format!("web search: {}", s(item, "query")))), event)],
        other => vec![event_status(event, format!("item: {other}"), Kind::Status)],
    }
}
