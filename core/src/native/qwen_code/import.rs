//! Reading a Qwen Code chat file (JSONL text, bytes, a file, or a list of records) into blocks.
//! Every line is kept whole with the first block it gives (`native.data = {record, blocks}`):
//! user, assistant and tool_result records give one block per part of their message; system
//! records (telemetry, attribution snapshots, compressions, slash commands) one status block.

use std::collections::HashSet;

use serde_json::{json, Map, Value};

use crate::error::Result;
use crate::model::{Actor, Block, Kind, Native, Runtime, Timestamp};
use crate::native::adapter::{import_lines, ImportRun, LineReader};
use crate::native::common::{lenient_str, model_vendor, read_line_blocks, truncate_chars};
use crate::native::parts::{inline_block, result_text};
use crate::native::jsonl::Line;
use crate::store::{validate_session_id, ImportedMeta, Session};

use super::records::{check_record, is_record, COMPRESSION};
use super::{HISTORY_NAME, RUNTIME};

/// What the importer carries from line to line.
#[derive(Default)]
pub(super) struct ImportState {
    session_id: Option<String>,
    cwd: Option<String>,
    first_prompt: Option<String>,
    last_time: Option<Timestamp>,
    /// Call ids given a result block already.
    answered: HashSet<String>,
}

/// Imports a chat file.
pub(super) fn import(run: ImportRun<'_>) -> Result<Session> {
    import_lines::<RecordReader>(run, |state| ImportedMeta {
        id: state.session_id.clone().filter(|id| validate_session_id(id).is_ok()),
        title: state.first_prompt.clone(),
        cwd: state.cwd.clone(),
        read: None,
    })
}

pub(super) struct RecordReader;

impl LineReader for RecordReader {
    type State = ImportState;
    const RUNTIME: Runtime = Runtime::QwenCode;
    const WHAT: &'static str = HISTORY_NAME;

    fn line_blocks(line: &mut Line<'_>, state: &mut ImportState, strict: bool) -> Result<Vec<Block>> {
        let last_time = state.last_time;
        read_line_blocks(RUNTIME, line, strict, last_time, check_record, |value| record_blocks(value, state))
    }

    fn is_own(record: &Value) -> bool {
        record.as_object().is_some_and(is_record)
    }
}

/// The blocks of a record that passed `check_record`, the first keeping the whole record.
fn record_blocks(value: Value, state: &mut ImportState) -> Vec<Block> {
    let Value::Object(map) = &value else { return Vec::new() };
    let created_at = lenient_str(map, "timestamp").and_then(|t| Timestamp::parse_rfc3339(t).ok()).or(state.last_time).unwrap_or_else(Timestamp::now);
    state.last_time = Some(created_at);
    if state.session_id.is_none() {
        state.session_id = lenient_str(map, "sessionId").map(str::to_string);
    }
    if state.cwd.is_none() {
        state.cwd = lenient_str(map, "cwd").map(str::to_string);
    }
    let ty = lenient_str(map, "type").unwrap_or("");
    let parts: &[Value] = map.get("message").and_then(|m| m.get("parts")).and_then(Value::as_array).map_or(&[], Vec::as_slice);
    let mut blocks = match ty {
        "user" if lenient_str(map, "subtype").is_none() => user_blocks(parts, state),
        "assistant" => {
            // A call id used again (providers that number each response's calls) waits for a
            // result of its own.
            for part in parts {
                if let Some(id) = part.get("functionCall").and_then(|c| c.get("id")).and_then(Value::as_str) {
                    state.answered.remove(id);
                }
            }
            assistant_blocks(map, parts)
        }
        "tool_result" => result_blocks(map, parts, state),
        _ => Vec::new(),
    };
    if blocks.is_empty() {
        blocks.push(Block::new(Actor::System, Kind::Status, status_line(map)));
    }
    let uuid = lenient_str(map, "uuid").map(str::to_string);
    for block in &mut blocks {
        block.created_at = created_at;
        block.message_id = uuid.clone();
    }
    let count = blocks.len();
    blocks[0].native = Some(Native { runtime: RUNTIME.into(), data: json!({"record": value, "blocks": count}) });
    blocks
}

/// What a record that is not conversation says.
fn status_line(map: &Map<String, Value>) -> String {
    let ty = lenient_str(map, "type").unwrap_or("");
    let subtype = lenient_str(map, "subtype");
    let payload = map.get("systemPayload");
    match (ty, subtype) {
        ("system", Some(COMPRESSION)) => {
            let info = payload.and_then(|p| p.get("info"));
            let count = |key: &str| info.and_then(|i| i.get(key)).and_then(Value::as_u64).unwrap_or(0);
            format!("chat compression: {} -> {} tokens", count("originalTokenCount"), count("newTokenCount"))
        }
        ("system", Some("ui_telemetry")) => {
            let event = payload.and_then(|p| p.get("uiEvent")).and_then(|e| e.get("event.name")).and_then(Value::as_str).unwrap_or("");
            format!("telemetry: {event}")
        }
        ("system", Some("slash_command")) => {
            let command = payload.and_then(|p| p.get("rawCommand")).and_then(Value::as_str).unwrap_or("");
            format!("slash command: {}", truncate_chars(command, 120))
        }
        (_, Some(subtype)) => format!("{ty} {subtype}"),
        (_, None) => format!("{ty} record (empty)"),
    }
}

fn user_blocks(parts: &[Value], state: &mut ImportState) -> Vec<Block> {
    let mut blocks = Vec::new();
    for part in parts {
        if let Some(text) = part.get("text").and_then(Value::as_str) {
            if state.first_prompt.is_none() && !text.trim().is_empty() {
                state.first_prompt = Some(truncate_chars(text.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim(), 80));
            }
            blocks.push(Block::text(Actor::User, text));
        } else if let Some(inline) = part.get("inlineData") {
            blocks.push(inline_block(Actor::User, inline));
        } else if let Some(response) = part.get("functionResponse") {
            blocks.push(response_block(response, false, state));
        } else {
            blocks.push(Block::new(Actor::System, Kind::Status, "a part without text"));
        }
    }
    blocks
}

fn assistant_blocks(map: &Map<String, Value>, parts: &[Value]) -> Vec<Block> {
    let model = lenient_str(map, "model").map(str::to_string);
    let vendor = model.as_deref().and_then(model_vendor);
    let mut blocks = Vec::new();
    for part in parts {
        let block = if let Some(call) = part.get("functionCall") {
            let id = call.get("id").and_then(Value::as_str).unwrap_or("").to_string();
            let name = call.get("name").and_then(Value::as_str).unwrap_or("").to_string();
            Block::tool_use(id, name, call.get("args").cloned().unwrap_or(json!({})).to_string())
        } else if let Some(text) = part.get("text").and_then(Value::as_str) {
            let kind = if part.get("thought") == Some(&Value::Bool(true)) { Kind::Thinking } else { Kind::Text };
            Block::new(Actor::Assistant, kind, text)
        } else if let Some(inline) = part.get("inlineData") {
            inline_block(Actor::Assistant, inline)
        } else {
            Block::new(Actor::System, Kind::Status, "a part without text")
        };
        blocks.push(block);
    }
    for block in &mut blocks {
        if block.actor == Actor::Assistant {
            block.provider = Some(RUNTIME.into());
            block.model_provider = vendor.map(str::to_string);
            block.model = model.clone();
        }
    }
    blocks
}

/// A `tool_result` record: its function responses, an error when the response holds `error` or
/// the record's `toolCallResult.status` says so.
fn result_blocks(map: &Map<String, Value>, parts: &[Value], state: &mut ImportState) -> Vec<Block> {
    let failed = map.get("toolCallResult").and_then(|r| r.get("status")).and_then(Value::as_str) == Some("error");
    parts
        .iter()
        .map(|part| match part.get("functionResponse") {
            Some(response) => response_block(response, failed, state),
            None => match part.get("text").and_then(Value::as_str) {
                Some(text) => Block::text(Actor::User, text),
                None => Block::new(Actor::System, Kind::Status, "a part without a function response"),
            },
        })
        .collect()
}

fn response_block(response: &Value, failed: bool, state: &mut ImportState) -> Block {
    let call_id = response.get("id").and_then(Value::as_str).unwrap_or("").to_string();
    if call_id.is_empty() || !state.answered.insert(call_id.clone()) {
        return Block::new(Actor::System, Kind::Status, format!("another copy of the result of {call_id}"));
    }
    let (content, is_error) = result_text(response.get("response"));
    Block::tool_result(call_id, content, is_error || failed)
}
