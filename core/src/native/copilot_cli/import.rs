//! Reading a Copilot CLI session log (`events.jsonl`: JSONL text, bytes, a file, or a list of
//! events) into blocks. Every line is kept whole with the first block it gives
//! (`native.data = {record, blocks}`): `user.message` is the user's text, `assistant.message` its
//! reasoning, text and tool requests, `tool.execution_complete` a tool's result; every other event
//! (session start and resume, the system prompt, turn marks, usage, compaction, permissions) one
//! status block.

use serde_json::{json, Map, Value};

use crate::error::Result;
use crate::model::{Actor, Block, Kind, Native, Reasoning, Runtime, Scope, Timestamp};
use crate::native::adapter::{import_lines, ImportRun, LineReader};
use crate::native::common::{lenient_str, model_vendor, read_line_blocks, truncate_chars};
use crate::native::jsonl::Line;
use crate::store::{validate_session_id, ImportedMeta, Session};

use super::records::{check_record, is_event};
use super::{HISTORY_NAME, RUNTIME};

/// What the importer carries from line to line.
#[derive(Default)]
pub(super) struct ImportState {
    session_id: Option<String>,
    cwd: Option<String>,
    first_prompt: Option<String>,
    last_time: Option<Timestamp>,
}

/// Imports a session log.
pub(super) fn import(run: ImportRun<'_>) -> Result<Session> {
    import_lines::<EventReader>(run, |state| ImportedMeta {
        id: state.session_id.clone().filter(|id| validate_session_id(id).is_ok()),
        title: state.first_prompt.clone(),
        cwd: state.cwd.clone(),
        read: None,
    })
}

pub(super) struct EventReader;

impl LineReader for EventReader {
    type State = ImportState;
    const RUNTIME: Runtime = Runtime::CopilotCli;
    const WHAT: &'static str = HISTORY_NAME;

    fn line_blocks(line: &mut Line<'_>, state: &mut ImportState, strict: bool) -> Result<Vec<Block>> {
        let last_time = state.last_time;
        read_line_blocks(RUNTIME, line, strict, last_time, check_record, |value| event_blocks(value, state))
    }

    fn is_own(record: &Value) -> bool {
        record.as_object().is_some_and(is_event)
    }
}

/// The blocks of an event that passed `check_record`, the first keeping the whole event.
fn event_blocks(value: Value, state: &mut ImportState) -> Vec<Block> {
    let Value::Object(map) = &value else { return Vec::new() };
    let created_at = lenient_str(map, "timestamp").and_then(|t| Timestamp::parse_rfc3339(t).ok()).or(state.last_time).unwrap_or_else(Timestamp::now);
    state.last_time = Some(created_at);
    let ty = lenient_str(map, "type").unwrap_or("");
    let empty = Map::new();
    let data = map.get("data").and_then(Value::as_object).unwrap_or(&empty);
    let mut blocks = match ty {
        "user.message" => {
            let text = lenient_str(data, "content").unwrap_or("");
            if state.first_prompt.is_none() && !text.trim().is_empty() {
                state.first_prompt = Some(truncate_chars(text.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim(), 80));
            }
            vec![Block::text(Actor::User, text)]
        }
        "assistant.message" => assistant_blocks(data),
        "tool.execution_complete" => {
            let call_id = lenient_str(data, "toolCallId").unwrap_or("").to_string();
            let success = data.get("success").and_then(Value::as_bool).unwrap_or(true);
            let text = data
                .get("result")
                .and_then(|r| r.get("content"))
                .and_then(Value::as_str)
                .or_else(|| data.get("error").and_then(|e| e.get("message")).and_then(Value::as_str))
                .unwrap_or("");
            vec![Block::tool_result(call_id, text, !success)]
        }
        _ => Vec::new(),
    };
    if ty == "session.start" && state.session_id.is_none() {
        state.session_id = lenient_str(data, "sessionId").map(str::to_string);
        state.cwd = data.get("context").and_then(|c| c.get("cwd")).and_then(Value::as_str).map(str::to_string);
    }
    if blocks.is_empty() {
        blocks.push(Block::new(Actor::System, Kind::Status, status_line(ty, data)));
    }
    let id = lenient_str(map, "id").map(str::to_string);
    for block in &mut blocks {
        block.created_at = created_at;
        block.message_id = id.clone();
    }
    let count = blocks.len();
    blocks[0].native = Some(Native { runtime: RUNTIME.into(), data: json!({"record": value, "blocks": count}) });
    blocks
}

/// What an event that is not conversation says.
fn status_line(ty: &str, data: &Map<String, Value>) -> String {
    match ty {
        "session.start" => format!(
            "Copilot CLI session {} in {}",
            lenient_str(data, "sessionId").unwrap_or(""),
            data.get("context").and_then(|c| c.get("cwd")).and_then(Value::as_str).unwrap_or("")
        ),
        "session.compaction_complete" => format!("compaction: {}", truncate_chars(lenient_str(data, "summaryContent").unwrap_or(""), 200)),
        "session.usage_record" => {
            let usage = data.get("usage");
            let count = |key: &str| usage.and_then(|u| u.get(key)).and_then(Value::as_u64).unwrap_or(0);
            format!("usage: {} in, {} out", count("inputTokens"), count("outputTokens"))
        }
        other => other.to_string(),
    }
}

/// An `assistant.message`: its reasoning (`reasoningBlocks`, tagged with the API they came from, or
/// `reasoningText` with `reasoningOpaque`), its text and its tool requests.
fn assistant_blocks(data: &Map<String, Value>) -> Vec<Block> {
    let model = lenient_str(data, "model").map(str::to_string);
    let vendor = model.as_deref().and_then(model_vendor);
    let scope = Scope { provider: Some(RUNTIME.into()), model_provider: vendor.map(str::to_string), model: model.clone() };
    let mut blocks = Vec::new();
    let tagged = data.get("reasoningBlocks");
    let anthropic = tagged.and_then(|r| r.get("provider")).and_then(Value::as_str).is_some_and(|p| p.starts_with("anthropic"));
    match tagged.and_then(|r| r.get("blocks")).and_then(Value::as_array) {
        Some(items) => {
            for item in items {
                let (text, format, token) = match item.get("type").and_then(Value::as_str) {
                    Some("redacted_thinking") => ("", Reasoning::ANTHROPIC_REDACTED, item.get("data")),
                    _ => (item.get("thinking").and_then(Value::as_str).unwrap_or(""), Reasoning::ANTHROPIC_SIGNATURE, item.get("signature")),
                };
                let mut block = Block::new(Actor::Assistant, Kind::Thinking, text);
                if let (true, Some(token)) = (anthropic, token.and_then(Value::as_str).filter(|t| !t.is_empty())) {
                    block.reasoning = Some(Reasoning { format: format.into(), data: token.into(), scope: scope.clone() });
                }
                blocks.push(block);
            }
        }
        None => {
            if let Some(text) = lenient_str(data, "reasoningText").filter(|t| !t.is_empty()) {
                blocks.push(Block::new(Actor::Assistant, Kind::Thinking, text));
            }
        }
    }
    if let Some(text) = lenient_str(data, "content").filter(|t| !t.is_empty()) {
        blocks.push(Block::text(Actor::Assistant, text));
    }
    for request in data.get("toolRequests").and_then(Value::as_array).into_iter().flatten() {
        let id = request.get("toolCallId").and_then(Value::as_str).unwrap_or("").to_string();
        let name = request.get("name").and_then(Value::as_str).unwrap_or("").to_string();
        let input = match request.get("arguments") {
            Some(Value::String(text)) => text.clone(),
            Some(other) => other.to_string(),
            None => "{}".into(),
        };
        blocks.push(Block::tool_use(id, name, input));
    }
    for block in &mut blocks {
        block.provider = Some(RUNTIME.into());
        block.model_provider = vendor.map(str::to_string);
        block.model = model.clone();
    }
    blocks
}
