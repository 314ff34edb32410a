//! Codex: rollout JSONL (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-…-<id>.jsonl`; paginated,
//! legacy and the pre-envelope format), bare `ResponseItem` lists, `codex exec --json` events and
//! app-server notifications, and resume.
//!
//! Import keeps every line. A `response_item` line becomes one canonical block per content item of
//! a `message`, or one block for any other item; the first block carries the line with the modelled
//! part left out (`native.data.record`), each block the rest of its item (`native.data.item`) with
//! the payloads held in canonical fields (text, arguments, raw tool input, encrypted reasoning,
//! image bytes) left out, so that export puts them back exactly. Every other line (`session_meta`,
//! `turn_context`, `world_state`, `event_msg`, `token_*`, `compacted`, kinds not known today) is
//! one `system`/`status` block carrying the whole line. A line that is not valid becomes an `error`
//! block holding it. See `formats/codex.md` in the shared documentation.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use base64::Engine as _;
use serde_json::{json, Map, Value};

use crate::error::{Error, Location, Result};
use crate::model::{Actor, Block, Embed, Kind, Native, Reasoning, Runtime, Scope, Timestamp};
use crate::native::common::{
    data_url, data_url_embed, take_string,
    at_line, derived_uuid, embed_id, embed_link, is_uuid, lenient_str, malformed, read_line_blocks, str_field,
    truncate_chars, Malformed, B64,
};
use crate::native::jsonl::{Line, Lines};
use crate::native::{ForeignReasoning, Options, ReportAction, ReportEntry, ResumeOptions, ResumePlan, Source};
use crate::store::{ImportTarget, ImportedMeta, Session, Store};

/// The runtime name, as in `native.runtime` and `provider`.
pub const RUNTIME: &str = "codex";
/// The CLI version written into lines this crate makes (the version the format was verified with).
pub const TARGET_VERSION: &str = "0.169.0";

/// `ResponseItem` types of 0.169.0 (anything else is kept opaque).
const ITEM_TYPES: &[&str] = &[
    "message",
    "reasoning",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "local_shell_call",
    "tool_search_call",
    "tool_search_output",
    "web_search_call",
    "image_generation_call",
    "compaction",
    "compaction_summary",
    "context_compaction",
    "additional_tools",
    "agent_message",
    "configuration_update",
    "ghost_snapshot",
    "other",
];

/// Rollout line kinds of 0.169.0.
const LINE_TYPES: &[&str] = &[
    "session_meta",
    "response_item",
    "event_msg",
    "turn_context",
    "world_state",
    "token_usage_record",
    "compacted",
    "inter_agent_communication",
    "inter_agent_communication_metadata",
    "retained_context",
    "security_risk_score",
    "realtime_item",
];

// ----------------------------------------------------------------------------------------------
// Import
// ----------------------------------------------------------------------------------------------

#[derive(Default)]
struct State {
    thread_id: Option<String>,
    cwd: Option<String>,
    model_provider: Option<String>,
    model: Option<String>,
    turn_id: Option<String>,
    first_prompt: Option<String>,
    last_time: Option<Timestamp>,
}

/// Whether a parsed value looks like a rollout line or a bare `ResponseItem`.
pub(crate) fn looks_like_line(value: &Value) -> bool {
    let Some(map) = value.as_object() else { return false };
    let ty = lenient_str(map, "type").unwrap_or("");
    (map.contains_key("payload") && LINE_TYPES.contains(&ty))
        || (!map.contains_key("uuid")
            && !map.contains_key("parentUuid")
            // OpenCode's `run --format json` events (`{type: "reasoning", sessionID, part}`).
            && !map.contains_key("sessionID")
            && ITEM_TYPES.contains(&ty)
            && !map.contains_key("message"))
        || map.contains_key("record_type")
}

/// Imports a rollout (JSONL text, bytes, a file) or a list of rollout lines or `ResponseItem`s.
pub(crate) fn import(store: &Store, source: Source, options: &Options, target: ImportTarget) -> Result<Session> {
    let mut lines = Lines::open(source)?;
    store.import_to(target, |sink| {
        let mut state = State::default();
        // Until a line reads as Codex, each line is checked for being another runtime's record.
        let mut settled = false;
        while let Some(mut line) = lines.next_line()? {
            if !settled {
                if let Ok(value) = &line.parsed {
                    settled = looks_like_line(value);
                    if let Some(other) = other_runtime(value).filter(|_| !settled) {
                        return Err(Error::InvalidInput {
                            message: format!("this is {other} history, not a Codex rollout (the line is a {other} record)"),
                            location: Location { line: Some(line.number), ..Default::default() },
                        });
                    }
                }
            }
            let blocks = line_blocks(&mut line, &mut state, options.strict)?;
            if sink.skips(line.number) {
                continue;
            }
            for block in blocks {
                sink.push(block).map_err(|e| at_line(e, &line))?;
            }
        }
        let title = state.first_prompt.as_ref().map(|p| truncate_chars(p.lines().next().unwrap_or("").trim(), 80));
        Ok(ImportedMeta { id: state.thread_id.clone(), title, cwd: state.cwd.clone() })
    })
}

fn other_runtime(value: &Value) -> Option<&'static str> {
    let map = value.as_object()?;
    if super::claude_code::looks_like_record(value) || (map.contains_key("uuid") && map.contains_key("message")) {
        return Some("Claude Code");
    }
    if map.contains_key("info") && map.contains_key("messages") {
        return Some("OpenCode");
    }
    None
}

fn line_blocks(line: &mut Line<'_>, state: &mut State, strict: bool) -> Result<Vec<Block>> {
    let last_time = state.last_time;
    read_line_blocks(RUNTIME, line, strict, last_time, check_line, |value| line_to_blocks(value, state))
}

fn type_name(value: &Value) -> &'static str {
    super::json_type(value)
}

/// Wrong types that Codex itself would refuse (it skips such a line), reported as malformed.
fn check_line(value: &Value) -> std::result::Result<(), Malformed> {
    let Value::Object(map) = value else {
        return Err(Malformed { reason: format!("a rollout line must be a JSON object, not {}", type_name(value)), field: None });
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
            Some(other) => Err(malformed("type", format!("\"type\" must be a string, not {}", type_name(other)))),
        };
    }
    let ty = match map.get("type") {
        Some(Value::String(ty)) => ty.as_str(),
        None => return Err(malformed("type", "the line has no \"type\"")),
        Some(other) => return Err(malformed("type", format!("\"type\" must be a string, not {}", type_name(other)))),
    };
    str_field(map, "timestamp")?;
    if let Some(ordinal) = map.get("ordinal") {
        if !ordinal.is_u64() {
            return Err(malformed("ordinal", format!("\"ordinal\" must be a non-negative integer, not {}", type_name(ordinal))));
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
        Some(other) => return Err(malformed(at("type"), format!("\"type\" must be a string, not {}", type_name(other)))),
    };
    let string = |key: &str, required: bool| -> std::result::Result<(), Malformed> {
        match item.get(key) {
            Some(Value::String(_)) => Ok(()),
            None if !required => Ok(()),
            None => Err(malformed(at(key), format!("a {ty} item needs \"{key}\""))),
            Some(other) => Err(malformed(at(key), format!("\"{key}\" must be a string, not {}", type_name(other)))),
        }
    };
    let output = || -> std::result::Result<(), Malformed> {
        match item.get("output") {
            Some(Value::String(_) | Value::Array(_)) => Ok(()),
            None => Err(malformed(at("output"), format!("a {ty} item needs \"output\""))),
            Some(other) => Err(malformed(at("output"), format!("\"output\" must be a string or a list, not {}", type_name(other)))),
        }
    };
    match ty {
        "message" => {
            string("role", true)?;
            match item.get("content") {
                Some(Value::Array(parts)) => {
                    for (i, part) in parts.iter().enumerate() {
                        if !part.is_object() {
                            return Err(malformed(at(&format!("content[{i}]")), format!("a content item must be an object, not {}", type_name(part))));
                        }
                    }
                    Ok(())
                }
                None => Err(malformed(at("content"), "a message needs \"content\"")),
                Some(other) => Err(malformed(at("content"), format!("\"content\" must be a list, not {}", type_name(other)))),
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
            Some(other) => Err(malformed(at("summary"), format!("\"summary\" must be a list, not {}", type_name(other)))),
        },
        _ => Ok(()),
    }
}

/// Where a line's modelled part sits; the first block's `native.data.at`.
const AT_CONTENT: &str = "payload.content";
const AT_ITEM: &str = "payload";
const AT_BARE_CONTENT: &str = "content";
const AT_BARE_ITEM: &str = ".";

fn line_to_blocks(mut value: Value, state: &mut State) -> Vec<Block> {
    let Value::Object(map) = &mut value else { return Vec::new() };
    let created_at = lenient_str(map, "timestamp")
        .and_then(|t| Timestamp::parse_rfc3339(t).ok())
        .or(state.last_time)
        .unwrap_or_else(Timestamp::now);
    state.last_time = Some(created_at);
    let enveloped = map.contains_key("payload");
    let ty = lenient_str(map, "type").unwrap_or("").to_string();
    if !enveloped {
        if ITEM_TYPES.contains(&ty.as_str()) {
            let item = std::mem::take(map);
            return item_to_blocks(item, None, state, created_at);
        }
        // The pre-envelope meta line ({id, timestamp, instructions}) or a {"record_type": …} line.
        if map.contains_key("id") && !map.contains_key("record_type") && state.thread_id.is_none() {
            state.thread_id = lenient_str(map, "id").map(str::to_string);
        }
        return vec![status_block(value, "rollout meta".into(), created_at, Actor::System)];
    }
    let payload = map.get("payload").and_then(Value::as_object);
    let sub = payload.and_then(|p| lenient_str(p, "type")).unwrap_or("").to_string();
    match ty.as_str() {
        "session_meta" => {
            if let Some(p) = payload {
                if state.thread_id.is_none() {
                    state.thread_id = lenient_str(p, "id").map(str::to_string);
                }
                if state.cwd.is_none() {
                    state.cwd = lenient_str(p, "cwd").map(str::to_string);
                }
                if let Some(provider) = lenient_str(p, "model_provider") {
                    state.model_provider = Some(provider.to_string());
                }
            }
        }
        "turn_context" => {
            if let Some(p) = payload {
                if let Some(model) = lenient_str(p, "model") {
                    state.model = Some(model.to_string());
                }
                if let Some(turn) = lenient_str(p, "turn_id") {
                    state.turn_id = Some(turn.to_string());
                }
            }
        }
        "event_msg" if sub == "task_started" || sub == "turn_started" => {
            if let Some(turn) = payload.and_then(|p| lenient_str(p, "turn_id")) {
                state.turn_id = Some(turn.to_string());
            }
        }
        "response_item" => {
            let Some(Value::Object(item)) = map.get_mut("payload").map(std::mem::take) else { return Vec::new() };
            return item_to_blocks(item, Some(value), state, created_at);
        }
        _ => {}
    }
    let line = match (ty.as_str(), sub.as_str()) {
        ("event_msg", "") => "event".to_string(),
        ("event_msg", sub) => format!("event: {sub}"),
        ("session_meta", _) => format!("session_meta: {}", payload.and_then(|p| lenient_str(p, "id")).unwrap_or("?")),
        ("turn_context", _) => format!("turn_context: {}", payload.and_then(|p| lenient_str(p, "model")).unwrap_or("?")),
        (ty, _) => ty.to_string(),
    };
    let actor = Actor::System;
    let mut block = status_block(value, line, created_at, actor);
    if ty == "event_msg" && matches!(sub.as_str(), "turn_aborted" | "error" | "stream_error") {
        block.kind = Kind::Error;
    }
    block
        .turn_id
        .clone_from(&state.turn_id);
    vec![block]
}

fn status_block(record: Value, line: String, created_at: Timestamp, actor: Actor) -> Block {
    let mut block = Block::new(actor, Kind::Status, line);
    block.created_at = created_at;
    block.native = Some(Native { runtime: RUNTIME.into(), data: obj! { "record" => record } });
    block
}

/// The attribution of model output in this rollout.
fn attribute(block: &mut Block, state: &State) {
    if block.actor == Actor::Assistant {
        block.provider = Some(RUNTIME.into());
        block.model_provider = state.model_provider.clone();
        block.model = state.model.clone();
    }
    block.turn_id.clone_from(&state.turn_id);
}

/// Text parts (`summary`, `content`, output items) joined into one text; each part's text becomes
/// a `[start, end]` slice of it in the residual.
fn slice_parts(parts: &mut [Value], rendered: &mut String, embeds: &mut std::collections::BTreeMap<String, Embed>) {
    for part in parts.iter_mut() {
        let Value::Object(p) = part else { continue };
        let ty = lenient_str(p, "type").unwrap_or("").to_string();
        if let Some(Value::String(text)) = p.get("text") {
            if !rendered.is_empty() {
                rendered.push_str("\n\n");
            }
            let start = rendered.len();
            rendered.push_str(text);
            p.insert("text".into(), json!([start, rendered.len()]));
        } else if ty == "input_image" {
            if let Some((embed, canonical)) = lenient_str(p, "image_url").and_then(data_url_embed) {
                let id = embed_id(&embed);
                if !rendered.is_empty() {
                    rendered.push_str("\n\n");
                }
                rendered.push_str(&embed_link("image", &id));
                if canonical {
                    p.insert("image_url".into(), json!({ "embed": id }));
                }
                embeds.insert(id, embed);
            }
        }
    }
}

fn item_to_blocks(mut item: Map<String, Value>, record: Option<Value>, state: &mut State, created_at: Timestamp) -> Vec<Block> {
    let ty = lenient_str(&item, "type").unwrap_or("").to_string();
    let item_id = lenient_str(&item, "id").map(str::to_string);
    let mut out: Vec<(Block, Value)> = Vec::new();
    let mut per_content = false;
    match ty.as_str() {
        "message" => {
            let role = lenient_str(&item, "role").unwrap_or("").to_string();
            let actor = match role.as_str() {
                "user" => Actor::User,
                "assistant" => Actor::Assistant,
                _ => Actor::System,
            };
            let parts = match item.get_mut("content").map(std::mem::take) {
                Some(Value::Array(parts)) => parts,
                _ => Vec::new(),
            };
            item.insert("content".into(), Value::Null);
            if !parts.is_empty() {
                per_content = true;
                for part in parts {
                    let Value::Object(mut p) = part else { continue };
                    let pty = lenient_str(&p, "type").unwrap_or("").to_string();
                    let block = match pty.as_str() {
                        "input_text" | "output_text" if matches!(p.get("text"), Some(Value::String(_))) => {
                            let text = take_string(&mut p, "text");
                            p.insert("text".into(), Value::Null);
                            if actor == Actor::User && state.first_prompt.is_none() && !text.starts_with('<') {
                                state.first_prompt = Some(text.clone());
                            }
                            Block::new(actor, Kind::Text, text)
                        }
                        "input_image" => match lenient_str(&p, "image_url").and_then(data_url_embed) {
                            Some((embed, canonical)) => {
                                let id = embed_id(&embed);
                                if canonical {
                                    p.insert("image_url".into(), json!({ "embed": id }));
                                }
                                let mut block = Block::new(actor, Kind::Text, embed_link("image", &id));
                                block.embeds.insert(id, embed);
                                block
                            }
                            None => Block::new(actor, Kind::Status, "[input_image]"),
                        },
                        other => Block::new(actor, Kind::Status, format!("[{other}]")),
                    };
                    out.push((block, Value::Object(p)));
                }
            } else {
                // An empty message: kept whole.
                item.insert("content".into(), json!([]));
                out.push((Block::new(actor, Kind::Status, format!("{role} message without content")), Value::Null));
            }
        }
        "reasoning" => {
            let mut rendered = String::new();
            let mut embeds = Default::default();
            for key in ["summary", "content"] {
                if let Some(Value::Array(parts)) = item.get_mut(key) {
                    slice_parts(parts, &mut rendered, &mut embeds);
                }
            }
            let mut block = Block::new(Actor::Assistant, Kind::Thinking, rendered);
            if lenient_str(&item, "encrypted_content").is_some_and(|s| !s.is_empty()) {
                block.reasoning = Some(Reasoning {
                    format: Reasoning::OPENAI_ENCRYPTED.into(),
                    data: take_string(&mut item, "encrypted_content"),
                    scope: Scope { provider: Some(RUNTIME.into()), model_provider: state.model_provider.clone(), model: state.model.clone() },
                });
                item.insert("encrypted_content".into(), Value::Null);
            }
            out.push((block, Value::Null));
        }
        "function_call" | "custom_tool_call" => {
            let key = if ty == "function_call" { "arguments" } else { "input" };
            let input = take_string(&mut item, key);
            item.insert(key.into(), Value::Null);
            let call = lenient_str(&item, "call_id").unwrap_or("").to_string();
            let name = lenient_str(&item, "name").unwrap_or("").to_string();
            out.push((Block::tool_use(call, name, input), Value::Null));
        }
        "local_shell_call" => {
            let call = lenient_str(&item, "call_id").or(item_id.as_deref()).map(str::to_string);
            match call {
                Some(call) if !call.is_empty() => {
                    let action = item.get_mut("action").map(std::mem::take).unwrap_or(Value::Null);
                    out.push((Block::tool_use(call, "local_shell", action.to_string()), Value::Null));
                }
                _ => out.push((Block::new(Actor::Assistant, Kind::Status, "[local_shell_call]"), Value::Null)),
            }
        }
        "tool_search_call" => match lenient_str(&item, "call_id").map(str::to_string) {
            Some(call) if !call.is_empty() => {
                let arguments = item.get("arguments").map(Value::to_string).unwrap_or_else(|| "null".into());
                out.push((Block::tool_use(call, "tool_search", arguments), Value::Null));
            }
            _ => out.push((Block::new(Actor::Assistant, Kind::Status, "[tool_search_call]"), Value::Null)),
        },
        "function_call_output" | "custom_tool_call_output" => {
            let call = lenient_str(&item, "call_id").unwrap_or("").to_string();
            if call.is_empty() {
                out.push((Block::new(Actor::User, Kind::Status, format!("[{ty} without call_id]")), Value::Null));
            } else {
                let mut block = Block::tool_result(call, "", false);
                match item.get_mut("output") {
                    Some(Value::String(_)) => {
                        block.content = take_string(&mut item, "output");
                        item.insert("output".into(), Value::Null);
                    }
                    Some(Value::Array(parts)) => {
                        let mut rendered = String::new();
                        slice_parts(parts, &mut rendered, &mut block.embeds);
                        block.content = rendered;
                    }
                    _ => {}
                }
                out.push((block, Value::Null));
            }
        }
        "tool_search_output" => match lenient_str(&item, "call_id").map(str::to_string) {
            Some(call) if !call.is_empty() => {
                let tools = item.get("tools").map(Value::to_string).unwrap_or_default();
                out.push((Block::tool_result(call, tools, false), Value::Null));
            }
            _ => out.push((Block::new(Actor::User, Kind::Status, "[tool_search_output]"), Value::Null)),
        },
        "web_search_call" => {
            let action = item.get("action");
            let what = action
                .and_then(|a| a.get("query").or_else(|| a.get("url")))
                .and_then(Value::as_str)
                .unwrap_or("");
            out.push((Block::new(Actor::Assistant, Kind::Status, format!("web search: {what}")), Value::Null));
        }
        "image_generation_call" => match lenient_str(&item, "result").and_then(|r| B64.decode(r.as_bytes()).ok().map(|b| (r.to_string(), b))) {
            Some((text, bytes)) => {
                let embed = Embed::from_bytes("image/png", None, bytes);
                let id = embed_id(&embed);
                if B64.encode(embed.data.as_deref().unwrap_or_default()) == text {
                    item.insert("result".into(), json!({ "embed": id }));
                }
                let mut block = Block::new(Actor::Assistant, Kind::Text, embed_link("generated image", &id));
                block.embeds.insert(id, embed);
                out.push((block, Value::Null));
            }
            None => out.push((Block::new(Actor::Assistant, Kind::Status, "[image_generation_call]"), Value::Null)),
        },
        other => {
            out.push((Block::new(Actor::System, Kind::Status, format!("[{other}]")), Value::Null));
        }
    }
    let parts = out.len();
    // Where the parts go back: a message's content list, or the whole item.
    let (at, mut record, mut single) = match (per_content, record) {
        (true, Some(mut line)) => {
            line["payload"] = Value::Object(item);
            (AT_CONTENT, line, None)
        }
        (false, Some(line)) => (AT_ITEM, line, Some(Value::Object(item))),
        (true, None) => (AT_BARE_CONTENT, Value::Object(item), None),
        (false, None) => (AT_BARE_ITEM, Value::Null, Some(Value::Object(item))),
    };
    let mut blocks = Vec::with_capacity(parts);
    for (i, (mut block, residual)) in out.into_iter().enumerate() {
        attribute(&mut block, state);
        if let Some(id) = &item_id {
            block.message_id = Some(id.clone());
        }
        block.created_at = created_at;
        let residual = single.take().unwrap_or(residual);
        let data = if i == 0 {
            obj! { "record" => std::mem::take(&mut record), "parts" => parts, "at" => at, "item" => residual }
        } else {
            obj! { "item" => residual }
        };
        block.native = Some(Native { runtime: RUNTIME.into(), data });
        blocks.push(block);
    }
    blocks
}

// ----------------------------------------------------------------------------------------------
// Export
// ----------------------------------------------------------------------------------------------

fn native_data(block: &Block) -> Option<&Map<String, Value>> {
    match &block.native {
        Some(native) if native.runtime == RUNTIME => native.data.as_object(),
        _ => None,
    }
}

/// Where lines are written and under which ids.
pub(crate) struct Context {
    pub thread_id: String,
    pub cwd: Option<String>,
    pub model_provider: Option<String>,
    pub model: Option<String>,
    pub created: Timestamp,
}

impl Context {
    pub(crate) fn for_session(session: &Session, blocks: &[Block], options: &Options) -> Result<Context> {
        let mut thread_id = None;
        let mut cwd = None;
        let mut provider = None;
        let mut model = None;
        let mut created = None;
        for block in blocks {
            let Some(record) = native_data(block).and_then(|d| d.get("record")) else {
                if block.actor == Actor::Assistant && model.is_none() {
                    model.clone_from(&block.model);
                }
                continue;
            };
            if record.get("type").and_then(Value::as_str) == Some("session_meta") {
                let p = &record["payload"];
                if thread_id.is_none() {
                    thread_id = p.get("id").and_then(Value::as_str).map(str::to_string);
                    created = p.get("timestamp").and_then(Value::as_str).and_then(|t| Timestamp::parse_rfc3339(t).ok());
                }
                cwd = cwd.or_else(|| p.get("cwd").and_then(Value::as_str).map(str::to_string));
                provider = provider.or_else(|| p.get("model_provider").and_then(Value::as_str).map(str::to_string));
            }
            if record.get("type").and_then(Value::as_str) == Some("turn_context") {
                model = record["payload"].get("model").and_then(Value::as_str).map(str::to_string).or(model);
            }
        }
        let thread_id = match session.binding(Runtime::Codex)? {
            Some(binding) if is_uuid(&binding.native_id) => binding.native_id,
            _ => match thread_id.filter(|id| is_uuid(id)) {
                Some(id) => id,
                None if is_uuid(session.id()) => session.id().to_ascii_lowercase(),
                None => derived_uuid(&[session.id(), "codex-thread"]),
            },
        };
        let cwd = match cwd {
            Some(cwd) => Some(cwd),
            None => session.info()?.cwd,
        };
        let model_provider = options.model_provider.clone().or(provider).or_else(|| {
            blocks.iter().find(|b| b.provider.as_deref() == Some(RUNTIME)).and_then(|b| b.model_provider.clone())
        });
        let model = options.target_model.clone().or(model);
        let created = created.or_else(|| blocks.first().map(|b| b.created_at)).unwrap_or_else(Timestamp::now);
        Ok(Context { thread_id, cwd, model_provider, model, created })
    }
}

struct Writer<'a> {
    session: &'a Session,
    options: &'a Options,
    ctx: &'a Context,
    report: Vec<ReportEntry>,
    lines: Vec<Value>,
    /// Whether the file is paginated (every line needs an ordinal), and the next ordinal.
    paginated: bool,
    next_ordinal: u64,
    last_time: i64,
    wrote_meta: bool,
    turn: Option<String>,
    last_agent_message: Option<String>,
    /// call id → whether the call was custom (freeform) — outputs use the matching variant.
    calls: HashMap<String, bool>,
    answered: HashSet<String>,
    embed_cache: HashMap<String, String>,
}

impl<'a> Writer<'a> {
    fn entry(&mut self, action: ReportAction, block: &Block, message: impl Into<String>) {
        self.report.push(ReportEntry { action, block_id: Some(block.id.clone()), message: message.into() });
    }

    fn embed_url(&mut self, embed_id: &str, mime: &str) -> Result<String> {
        if let Some(hit) = self.embed_cache.get(embed_id) {
            return Ok(hit.clone());
        }
        let url = data_url(mime, &self.session.embed(embed_id)?);
        self.embed_cache.insert(embed_id.to_string(), url.clone());
        Ok(url)
    }

    fn note_native(&mut self, line: &Value) {
        let Some(map) = line.as_object() else { return };
        if let Some(ordinal) = map.get("ordinal").and_then(Value::as_u64) {
            self.next_ordinal = self.next_ordinal.max(ordinal + 1);
        }
        if let Some(ts) = map.get("timestamp").and_then(Value::as_str).and_then(|t| Timestamp::parse_rfc3339(t).ok()) {
            self.last_time = self.last_time.max(ts.as_millis());
        }
        let ty = map.get("type").and_then(Value::as_str).unwrap_or("");
        let payload = map.get("payload");
        match ty {
            "session_meta" => {
                self.wrote_meta = true;
                self.paginated = payload.and_then(|p| p.get("history_mode")).and_then(Value::as_str) == Some("paginated");
            }
            "event_msg" => match payload.and_then(|p| p.get("type")).and_then(Value::as_str) {
                Some("task_started" | "turn_started") => self.turn = payload.and_then(|p| p.get("turn_id")).and_then(Value::as_str).map(str::to_string),
                Some("task_complete" | "turn_complete" | "turn_aborted") => self.turn = None,
                _ => {}
            },
            "response_item" => {
                if let Some(p) = payload {
                    self.note_item(p);
                }
            }
            _ if map.get("payload").is_none() => self.note_item(line),
            _ => {}
        }
    }

    fn note_item(&mut self, item: &Value) {
        let call = item.get("call_id").and_then(Value::as_str).map(str::to_string);
        match item.get("type").and_then(Value::as_str) {
            Some("function_call" | "local_shell_call" | "tool_search_call") => {
                if let Some(call) = call {
                    self.calls.insert(call, false);
                }
            }
            Some("custom_tool_call") => {
                if let Some(call) = call {
                    self.calls.insert(call, true);
                }
            }
            Some("function_call_output" | "custom_tool_call_output" | "tool_search_output") => {
                if let Some(call) = call {
                    self.answered.insert(call);
                }
            }
            _ => {}
        }
    }

    fn native_group(&mut self, blocks: &mut [Block], start: usize) -> Result<Option<usize>> {
        let (parts, at) = {
            let Some(data) = native_data(&blocks[start]) else { return Ok(None) };
            if !data.contains_key("record") {
                return Ok(None);
            }
            match (data.get("parts").and_then(Value::as_u64), data.get("at").and_then(Value::as_str)) {
                (None, _) => (None, String::new()),
                (Some(parts), Some(at)) => {
                    let parts = parts as usize;
                    let fits = parts > 0
                        && start + parts <= blocks.len()
                        && (1..parts).all(|k| native_data(&blocks[start + k]).is_some_and(|d| d.contains_key("item") && !d.contains_key("record")));
                    if !fits {
                        return Ok(None);
                    }
                    (Some(parts), at.to_string())
                }
                _ => return Ok(None),
            }
        };
        let take = |block: &mut Block, key: &str| -> Value {
            match block.native.as_mut().map(|n| &mut n.data) {
                Some(Value::Object(data)) => data.remove(key).unwrap_or(Value::Null),
                _ => Value::Null,
            }
        };
        let mut record = take(&mut blocks[start], "record");
        let Some(parts) = parts else {
            self.note_native(&record);
            self.lines.push(record);
            return Ok(Some(1));
        };
        let mut items = Vec::with_capacity(parts);
        for block in &mut blocks[start..start + parts] {
            let residual = take(block, "item");
            items.push(self.rebuild(residual, block)?);
        }
        match at.as_str() {
            AT_CONTENT => record["payload"]["content"] = Value::Array(items),
            AT_BARE_CONTENT => record["content"] = Value::Array(items),
            AT_ITEM => record["payload"] = items.pop().unwrap_or(Value::Null),
            _ => record = items.pop().unwrap_or(Value::Null),
        }
        self.note_native(&record);
        self.lines.push(record);
        Ok(Some(parts))
    }

    /// Puts the payloads of `block` (used up) back into its residual.
    fn rebuild(&mut self, mut item: Value, block: &mut Block) -> Result<Value> {
        let Value::Object(map) = &mut item else { return Ok(item) };
        let ty = map.get("type").and_then(Value::as_str).unwrap_or("").to_string();
        let content = std::mem::take(&mut block.content);
        let fill = |map: &mut Map<String, Value>, key: &str, value: String| {
            if let Some(slot @ Value::Null) = map.get_mut(key) {
                *slot = Value::String(value);
            }
        };
        match ty.as_str() {
            "input_text" | "output_text" => fill(map, "text", content),
            "input_image" => self.fill_embed(map, "image_url", block, true)?,
            "function_call" => fill(map, "arguments", content),
            "custom_tool_call" => fill(map, "input", content),
            "local_shell_call" if map.get("action") == Some(&Value::Null) => {
                let action = serde_json::from_str(&content)
                    .map_err(|e| Error::Internal(format!("stored shell action of block {} is not JSON: {e}", block.id)))?;
                map.insert("action".into(), action);
            }
            "reasoning" => {
                for key in ["summary", "content"] {
                    if let Some(Value::Array(parts)) = map.get_mut(key) {
                        fill_slices(parts, &content, &block.id)?;
                    }
                }
                if let Some(reasoning) = block.reasoning.take() {
                    fill(map, "encrypted_content", reasoning.data);
                }
            }
            "function_call_output" | "custom_tool_call_output" => match map.get_mut("output") {
                Some(slot @ Value::Null) => *slot = Value::String(content),
                Some(Value::Array(parts)) => {
                    let mut parts = std::mem::take(parts);
                    fill_slices(&mut parts, &content, &block.id)?;
                    for part in parts.iter_mut() {
                        if let Value::Object(p) = part {
                            self.fill_embed(p, "image_url", block, true)?;
                        }
                    }
                    map.insert("output".into(), Value::Array(parts));
                }
                _ => {}
            },
            "image_generation_call" => self.fill_embed(map, "result", block, false)?,
            _ => {}
        }
        Ok(item)
    }

    fn fill_embed(&mut self, map: &mut Map<String, Value>, key: &str, block: &Block, as_url: bool) -> Result<()> {
        let Some(id) = map.get(key).and_then(|v| v.get("embed")).and_then(Value::as_str).map(str::to_string) else {
            return Ok(());
        };
        let text = if as_url {
            let mime = block.embeds.get(&id).map(|e| e.mime.clone()).unwrap_or_else(|| "application/octet-stream".into());
            self.embed_url(&id, &mime)?
        } else {
            B64.encode(self.session.embed(&id)?)
        };
        map.insert(key.into(), Value::String(text));
        Ok(())
    }
}

fn fill_slices(parts: &mut [Value], content: &str, block_id: &str) -> Result<()> {
    for part in parts.iter_mut() {
        if let Some(Value::Array(range)) = part.get("text") {
            if let (Some(s), Some(e)) = (range.first().and_then(Value::as_u64), range.get(1).and_then(Value::as_u64)) {
                let text = content
                    .get(s as usize..e as usize)
                    .ok_or_else(|| Error::Internal(format!("stored parts of block {block_id} do not match its text")))?;
                part["text"] = Value::String(text.to_string());
            }
        }
    }
    Ok(())
}

// -------- lines for blocks without Codex passthrough (legacy-mode rollout, with UI mirrors) --------

impl Writer<'_> {
    fn time(&mut self, block: Option<&Block>) -> String {
        let base = block.map(|b| b.created_at.as_millis()).unwrap_or(self.ctx.created.as_millis());
        let ms = base.max(self.last_time + 1);
        self.last_time = ms;
        Timestamp::from_millis(ms).map(|t| t.to_rfc3339()).unwrap_or_default()
    }

    fn push_line(&mut self, ty: &str, payload: Value, block: Option<&Block>) {
        let mut line = Map::new();
        line.insert("timestamp".into(), Value::String(self.time(block)));
        if self.paginated {
            line.insert("ordinal".into(), json!(self.next_ordinal));
            self.next_ordinal += 1;
        }
        line.insert("type".into(), json!(ty));
        line.insert("payload".into(), payload);
        self.lines.push(Value::Object(line));
    }

    fn ensure_meta(&mut self) {
        if self.wrote_meta {
            return;
        }
        self.wrote_meta = true;
        let mut payload = Map::new();
        payload.insert("id".into(), json!(self.ctx.thread_id));
        payload.insert("timestamp".into(), json!(self.ctx.created.to_rfc3339()));
        payload.insert("cwd".into(), json!(self.ctx.cwd.clone().unwrap_or_else(|| "/".into())));
        payload.insert("originator".into(), json!("sna_history"));
        payload.insert("cli_version".into(), json!(TARGET_VERSION));
        payload.insert("source".into(), json!("cli"));
        if let Some(provider) = &self.ctx.model_provider {
            payload.insert("model_provider".into(), json!(provider));
        }
        self.push_line("session_meta", Value::Object(payload), None);
    }

    fn start_turn(&mut self, block: &Block) {
        self.end_turn(Some(block));
        let turn = derived_uuid(&[&self.ctx.thread_id, &block.id, "turn"]);
        self.push_line("event_msg", obj! { "type" => "task_started", "turn_id" => turn.clone() }, Some(block));
        let mut context = Map::new();
        context.insert("turn_id".into(), json!(turn));
        context.insert("cwd".into(), json!(self.ctx.cwd.clone().unwrap_or_else(|| "/".into())));
        context.insert("approval_policy".into(), json!("never"));
        context.insert("sandbox_policy".into(), json!({"type": "danger-full-access"}));
        if let Some(model) = &self.ctx.model {
            context.insert("model".into(), json!(model));
        }
        context.insert("summary".into(), json!("auto"));
        self.push_line("turn_context", Value::Object(context), Some(block));
        self.turn = Some(turn);
    }

    fn ensure_turn(&mut self, block: &Block) {
        if self.turn.is_none() {
            self.start_turn(block);
        }
    }

    fn end_turn(&mut self, block: Option<&Block>) {
        if let Some(turn) = self.turn.take() {
            let last = self.last_agent_message.take().map(Value::String).unwrap_or(Value::Null);
            self.push_line("event_msg", obj! { "type" => "task_complete", "turn_id" => turn, "last_agent_message" => last }, block);
        }
    }

    fn item(&mut self, item: Value, block: &Block) {
        self.push_line("response_item", item, Some(block));
    }

    /// Content items for text with embed references.
    fn content_items(&mut self, block: &Block, text_type: &str) -> Result<(Vec<Value>, Vec<String>)> {
        let mut items = Vec::new();
        let mut images = Vec::new();
        let mut rest = block.content.as_str();
        let refs: Vec<String> = block.embed_references().into_iter().map(str::to_string).collect();
        for id in refs {
            let link_end = format!("](embed://{id})");
            let Some(pos) = rest.find(&link_end) else { continue };
            let Some(open) = rest[..pos].rfind("![") else { continue };
            let before = &rest[..open];
            if !before.trim().is_empty() {
                items.push(obj! { "type" => text_type, "text" => before });
            }
            rest = &rest[pos + link_end.len()..];
            let embed = &block.embeds[&id];
            if embed.mime.starts_with("image/") && text_type == "input_text" {
                let url = self.embed_url(&id, &embed.mime.clone())?;
                images.push(url.clone());
                items.push(obj! { "type" => "input_image", "image_url" => url });
            } else {
                let name = embed.name.clone().unwrap_or_else(|| id.clone());
                items.push(obj! { "type" => text_type, "text" => format!("[attachment {name} ({}, {} bytes)]", embed.mime, embed.size) });
                self.entry(ReportAction::Degraded, block, format!("embed {id} ({}) written as a text placeholder", embed.mime));
            }
        }
        if !rest.trim().is_empty() || items.is_empty() {
            items.push(obj! { "type" => text_type, "text" => rest });
        }
        Ok((items, images))
    }

    fn thinking(&mut self, block: &Block) {
        let target_provider = self.ctx.model_provider.as_deref();
        let target_model = self.options.target_model.as_deref();
        let verdict = match &block.reasoning {
            Some(r) if r.format == Reasoning::OPENAI_ENCRYPTED && !r.data.is_empty() => {
                let provider_ok = r.scope.model_provider.as_deref() == target_provider || r.scope.model_provider.is_none();
                let model_ok = target_model.is_none_or(|t| r.scope.model.as_deref().or(block.model.as_deref()) == Some(t));
                if provider_ok && model_ok {
                    Ok(r.data.clone())
                } else {
                    Err(format!(
                        "encrypted reasoning from {}/{} cannot be replayed to {}/{}",
                        r.scope.model_provider.as_deref().unwrap_or("?"),
                        r.scope.model.as_deref().unwrap_or("?"),
                        target_provider.unwrap_or("?"),
                        target_model.unwrap_or("?")
                    ))
                }
            }
            Some(r) => Err(format!("{} reasoning cannot travel to Codex", r.format)),
            None => Err("reasoning without encrypted content is not replayed to Codex".to_string()),
        };
        match verdict {
            Ok(data) => {
                self.ensure_turn(block);
                let summary = if block.content.is_empty() { json!([]) } else { json!([{"type": "summary_text", "text": block.content}]) };
                self.item(obj! { "type" => "reasoning", "summary" => summary, "content" => Value::Null, "encrypted_content" => data }, block);
                if !block.content.is_empty() {
                    self.push_line("event_msg", obj! { "type" => "agent_reasoning", "text" => block.content.clone() }, Some(block));
                }
            }
            Err(why) => {
                if self.options.foreign_reasoning == ForeignReasoning::Text && !block.content.trim().is_empty() {
                    self.entry(ReportAction::Degraded, block, format!("{why}; written as text"));
                    let text = Block { kind: Kind::Text, reasoning: None, content: format!("[reasoning] {}", block.content), ..block.clone() };
                    let _ = self.assistant_text(&text);
                } else {
                    self.entry(ReportAction::Dropped, block, why);
                }
            }
        }
    }

    fn assistant_text(&mut self, block: &Block) -> Result<()> {
        self.ensure_turn(block);
        let (content, _) = self.content_items(block, "output_text")?;
        self.item(obj! { "type" => "message", "role" => "assistant", "content" => content }, block);
        self.push_line("event_msg", obj! { "type" => "agent_message", "message" => block.content.clone() }, Some(block));
        self.last_agent_message = Some(block.content.clone());
        Ok(())
    }

    fn tool_result(&mut self, block: &Block, call_id: &str) -> Result<()> {
        let custom = self.calls.get(call_id).copied().unwrap_or(false);
        let output = if block.embeds.is_empty() {
            Value::String(block.content.clone())
        } else {
            Value::Array(self.content_items(block, "input_text")?.0)
        };
        let ty = if custom { "custom_tool_call_output" } else { "function_call_output" };
        self.item(obj! { "type" => ty, "call_id" => call_id, "output" => output }, block);
        self.answered.insert(call_id.to_string());
        Ok(())
    }

    fn synthesize(&mut self, blocks: &[Block], i: usize, used: &mut [bool]) -> Result<()> {
        let block = &blocks[i];
        self.ensure_meta();
        match (block.actor, block.kind) {
            (_, Kind::Status) => {}
            (_, Kind::Error) => self.entry(ReportAction::Dropped, block, "error blocks are not sent to the model"),
            (Actor::System, Kind::Text) => {
                self.ensure_turn(block);
                let (content, _) = self.content_items(block, "input_text")?;
                self.item(obj! { "type" => "message", "role" => "developer", "content" => content }, block);
            }
            (Actor::User, Kind::Text) => {
                self.start_turn(block);
                let (content, images) = self.content_items(block, "input_text")?;
                self.item(obj! { "type" => "message", "role" => "user", "content" => content }, block);
                let text: String = block.content.clone();
                let images: Vec<Value> = images.into_iter().map(Value::String).collect();
                self.push_line("event_msg", obj! { "type" => "user_message", "message" => text, "images" => images }, Some(block));
            }
            (_, Kind::ToolResult) => {
                let call_id = block.tool.as_ref().map(|t| t.call_id.clone()).unwrap_or_default();
                if self.calls.contains_key(&call_id) && !self.answered.contains(&call_id) {
                    self.tool_result(block, &call_id)?;
                } else {
                    self.entry(ReportAction::Degraded, block, format!("result of unknown or answered call {call_id:?} written as text"));
                    self.ensure_turn(block);
                    self.item(obj! { "type" => "message", "role" => "user", "content" => vec![obj! { "type" => "input_text", "text" => block.content.clone() }] }, block);
                }
            }
            (Actor::Assistant, Kind::Text) => self.assistant_text(block)?,
            (Actor::Assistant, Kind::Thinking) => self.thinking(block),
            (Actor::Assistant, Kind::ToolUse) => {
                let Some(tool) = &block.tool else { return Ok(()) };
                self.ensure_turn(block);
                let name = tool.name.clone().unwrap_or_default();
                let call_id = tool.call_id.clone();
                let is_json = serde_json::from_str::<Value>(&block.content).is_ok_and(|v| v.is_object());
                if is_json {
                    self.item(obj! { "type" => "function_call", "name" => name, "arguments" => block.content.clone(), "call_id" => call_id.clone() }, block);
                    self.calls.insert(call_id, false);
                } else {
                    self.item(obj! { "type" => "custom_tool_call", "name" => name, "input" => block.content.clone(), "call_id" => call_id.clone() }, block);
                    self.calls.insert(call_id, true);
                }
                let ends = blocks.get(i + 1).is_none_or(|next| {
                    used[i + 1] || next.actor != Actor::Assistant || next.kind == Kind::Text || native_data(next).is_some()
                });
                if ends {
                    self.answer_calls(blocks, i, used)?;
                }
            }
            (actor, kind) => self.entry(ReportAction::Dropped, block, format!("a {actor} {kind} block has no Codex form")),
        }
        Ok(())
    }

    /// After the calls ending at `blocks[end]`, writes their outputs (pulled forward), or an error
    /// output for a call that has none.
    fn answer_calls(&mut self, blocks: &[Block], end: usize, used: &mut [bool]) -> Result<()> {
        let mut start = end;
        while start > 0 && blocks[start - 1].actor == Actor::Assistant && blocks[start - 1].kind != Kind::Text && native_data(&blocks[start - 1]).is_none() {
            start -= 1;
        }
        let calls: Vec<(usize, String)> = (start..=end)
            .filter(|&j| blocks[j].kind == Kind::ToolUse)
            .filter_map(|j| blocks[j].tool.as_ref().map(|t| (j, t.call_id.clone())))
            .collect();
        for (j, call_id) in calls {
            if self.answered.contains(&call_id) {
                continue;
            }
            let found = (end + 1..blocks.len()).find(|&k| {
                !used[k] && blocks[k].kind == Kind::ToolResult && blocks[k].tool.as_ref().is_some_and(|t| t.call_id == call_id)
            });
            match found {
                Some(k) => {
                    used[k] = true;
                    self.tool_result(&blocks[k], &call_id)?;
                }
                None => {
                    self.entry(ReportAction::Synthesized, &blocks[j], format!("tool call {call_id:?} had no output; an \"aborted\" output was added"));
                    let mut result = Block::tool_result(call_id.clone(), "aborted", true);
                    result.id = format!("{}:output", blocks[j].id);
                    result.created_at = blocks[j].created_at;
                    self.tool_result(&result, &call_id)?;
                }
            }
        }
        Ok(())
    }
}

/// The rollout lines of a session and the fidelity report.
pub(crate) fn rollout(session: &Session, blocks: &mut [Block], options: &Options, ctx: &Context) -> Result<(Vec<Value>, Vec<ReportEntry>)> {
    let mut writer = Writer {
        session,
        options,
        ctx,
        report: Vec::new(),
        lines: Vec::with_capacity(blocks.len()),
        paginated: false,
        next_ordinal: 0,
        last_time: i64::MIN / 2,
        wrote_meta: false,
        turn: None,
        last_agent_message: None,
        calls: HashMap::new(),
        answered: HashSet::new(),
        embed_cache: HashMap::new(),
    };
    let mut used = vec![false; blocks.len()];
    let mut synthesized = false;
    let mut i = 0;
    while i < blocks.len() {
        if used[i] {
            i += 1;
            continue;
        }
        if let Some(n) = writer.native_group(blocks, i)? {
            used[i..i + n].iter_mut().for_each(|u| *u = true);
            i += n;
            continue;
        }
        if native_data(&blocks[i]).is_some_and(|d| d.contains_key("malformed")) {
            writer.entry(ReportAction::Dropped, &blocks[i], "a line that was not JSON is not written back");
            used[i] = true;
            i += 1;
            continue;
        }
        used[i] = true;
        synthesized |= !matches!(blocks[i].kind, Kind::Status);
        writer.synthesize(blocks, i, &mut used)?;
        i += 1;
    }
    if synthesized {
        writer.end_turn(None);
    }
    // The model provider a resume runs with is bound to the thread: name the one the caller asked for.
    if let Some(provider) = &options.model_provider {
        for line in writer.lines.iter_mut() {
            if line.get("type").and_then(Value::as_str) == Some("session_meta") {
                let current = line["payload"].get("model_provider").and_then(Value::as_str).map(str::to_string);
                if current.as_deref() != Some(provider.as_str()) {
                    line["payload"]["model_provider"] = json!(provider);
                }
            }
        }
    }
    Ok((writer.lines, writer.report))
}

/// The `ResponseItem`s a resume of these rollout lines gives the model (compaction replacement
/// history as the base, rolled-back turns left out, every call with its output, no orphan output).
pub(crate) fn items(lines: Vec<Value>, report: &mut Vec<ReportEntry>) -> Value {
    let rolled_back = rolled_back_lines(&lines);
    let mut items: Vec<Value> = Vec::new();
    for (mut line, gone) in lines.into_iter().zip(rolled_back) {
        if gone {
            continue;
        }
        let ty = line.get("type").and_then(Value::as_str).unwrap_or("").to_string();
        if line.get("payload").is_none() {
            if ITEM_TYPES.contains(&ty.as_str()) {
                items.push(line);
            }
            continue;
        }
        match ty.as_str() {
            "response_item" => items.push(std::mem::take(&mut line["payload"])),
            "compacted" => {
                if let Some(Value::Array(history)) = line["payload"].get_mut("replacement_history").map(std::mem::take) {
                    items = history;
                }
            }
            _ => {}
        }
    }
    // Codex drops these on replay; so does the history it is given.
    items.retain(|item| {
        let ty = item.get("type").and_then(Value::as_str).unwrap_or("");
        matches!(
            ty,
            "message" | "reasoning" | "function_call" | "function_call_output" | "custom_tool_call" | "custom_tool_call_output"
                | "local_shell_call" | "tool_search_call" | "tool_search_output" | "web_search_call" | "image_generation_call"
                | "compaction" | "context_compaction" | "compaction_summary" | "additional_tools" | "agent_message"
        )
    });
    // Pairing.
    let output_of = |item: &Value| -> Option<String> {
        match item.get("type").and_then(Value::as_str) {
            Some("function_call_output" | "custom_tool_call_output" | "tool_search_output") => item.get("call_id").and_then(Value::as_str).map(str::to_string),
            _ => None,
        }
    };
    let call_of = |item: &Value| -> Option<(String, bool)> {
        let call = item.get("call_id").and_then(Value::as_str).map(str::to_string)?;
        match item.get("type").and_then(Value::as_str) {
            Some("function_call" | "local_shell_call" | "tool_search_call") => Some((call, false)),
            Some("custom_tool_call") => Some((call, true)),
            _ => None,
        }
    };
    let outputs: HashSet<String> = items.iter().filter_map(output_of).collect();
    let mut seen_calls: HashSet<String> = HashSet::new();
    let mut out: Vec<Value> = Vec::with_capacity(items.len());
    let mut pending: Vec<(String, bool)> = Vec::new();
    for item in items {
        if let Some(call) = output_of(&item) {
            if !seen_calls.contains(&call) {
                report.push(ReportEntry { action: ReportAction::Dropped, block_id: None, message: format!("output for call {call:?} that has no call") });
                continue;
            }
            pending.retain(|(c, _)| *c != call);
            out.push(item);
            continue;
        }
        let is_call = call_of(&item);
        if is_call.is_none() {
            // A call without output is answered before the next non-call item.
            for (call, custom) in pending.drain(..) {
                out.push(aborted(&call, custom, report));
            }
        }
        if let Some((call, custom)) = is_call {
            seen_calls.insert(call.clone());
            if !outputs.contains(&call) {
                pending.push((call, custom));
            }
        }
        out.push(item);
    }
    for (call, custom) in pending {
        out.push(aborted(&call, custom, report));
    }
    Value::Array(out)
}

/// Which lines a `thread_rolled_back { num_turns: N }` takes out of the model's history, as Codex's
/// resume does it: scanning newest to oldest in turn segments (each opened by a `task_started`),
/// every rollback skips the next N segments that hold a user turn. Lines before the first
/// boundary form one segment, so a file without boundaries is one turn.
fn rolled_back_lines(lines: &[Value]) -> Vec<bool> {
    let mut gone = vec![false; lines.len()];
    let (mut pending, mut end, mut user_turn) = (0u64, lines.len(), false);
    for i in (0..lines.len()).rev() {
        let line = &lines[i];
        let payload = &line["payload"];
        let event = if line["type"] == "event_msg" { payload["type"].as_str().unwrap_or("") } else { "" };
        if event == "thread_rolled_back" {
            pending += payload["num_turns"].as_u64().unwrap_or(0);
        }
        user_turn |= event == "user_message" || (line["type"] == "response_item" && is_user_turn_item(payload));
        if event == "task_started" || event == "turn_started" || i == 0 {
            if user_turn && pending > 0 {
                gone[i..end].iter_mut().for_each(|g| *g = true);
                pending -= 1;
            }
            end = i;
            user_turn = false;
        }
    }
    gone
}

/// A user message that starts a turn, not one of the context fragments Codex itself sends as user
/// messages (environment context, AGENTS.md instructions, shell command echoes, abort notes…).
fn is_user_turn_item(item: &Value) -> bool {
    const CONTEXT: [&str; 7] = [
        "<environment_context>",
        "<user_instructions>",
        "# AGENTS.md instructions",
        "<user_shell_command>",
        "<turn_aborted>",
        "<subagent_notification>",
        "<skill>",
    ];
    if item["type"] != "message" || item["role"] != "user" {
        return false;
    }
    let Some(parts) = item["content"].as_array() else { return false };
    !parts.iter().any(|part| part["text"].as_str().is_some_and(|t| CONTEXT.iter().any(|c| t.trim_start().starts_with(c))))
}

fn aborted(call: &str, custom: bool, report: &mut Vec<ReportEntry>) -> Value {
    report.push(ReportEntry { action: ReportAction::Synthesized, block_id: None, message: format!("call {call:?} had no output; an \"aborted\" output was added") });
    let ty = if custom { "custom_tool_call_output" } else { "function_call_output" };
    obj! { "type" => ty, "call_id" => call, "output" => "aborted" }
}

pub(crate) fn export(session: &Session, options: &Options, format: &str) -> Result<(Value, Vec<ReportEntry>)> {
    let (mut blocks, replayed) = crate::replay::load(session, crate::model::Runtime::Codex)?;
    let ctx = Context::for_session(session, &blocks, options)?;
    let (lines, mut report) = rollout(session, &mut blocks, options, &ctx)?;
    report.splice(0..0, replayed);
    let data = if format == "rollout" { Value::Array(lines) } else { items(lines, &mut report) };
    Ok((data, report))
}

// ----------------------------------------------------------------------------------------------
// Live capture: `codex exec --json` events and app-server notifications
// ----------------------------------------------------------------------------------------------

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
pub(crate) fn event_blocks(event: &Value) -> Result<Vec<Block>> {
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
            let mut state = State { turn_id: params.get("turnId").and_then(Value::as_str).map(str::to_string), ..State::default() };
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
                        Some((embed, _)) => {
                            let eid = embed_id(&embed);
                            let mut block = Block::text(Actor::User, embed_link("image", &eid));
                            block.embeds.insert(eid, embed);
                            blocks.push(with_event(block, event));
                        }
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

// ----------------------------------------------------------------------------------------------
// Resume
// ----------------------------------------------------------------------------------------------

/// Writes the rollout under `<codex home>/sessions/YYYY/MM/DD/rollout-<ts>-<id>.jsonl`.
pub(crate) fn prepare_resume(session: &Session, options: &ResumeOptions) -> Result<ResumePlan> {
    let (mut blocks, replayed) = crate::replay::load(session, crate::model::Runtime::Codex)?;
    let last_seq = session.len()?.checked_sub(1);
    let mut ctx = Context::for_session(session, &blocks, &options.options)?;
    if let Some(id) = &options.options.session_id {
        if !is_uuid(id) {
            return Err(Error::invalid_field("session_id", format!("Codex thread ids are UUIDs, not {id:?}")));
        }
        ctx.thread_id = id.to_ascii_lowercase();
    }
    if let Some(cwd) = &options.cwd {
        let text = cwd.to_str().ok_or_else(|| Error::invalid_field("cwd", "cwd must be valid UTF-8"))?;
        if !cwd.is_absolute() {
            return Err(Error::invalid_field("cwd", format!("cwd {text:?} must be an absolute path")));
        }
        ctx.cwd = Some(text.to_string());
    }
    let codex_home = match (&options.codex_home, &options.home) {
        (Some(dir), _) => dir.clone(),
        (None, Some(home)) => home.join(".codex"),
        (None, None) => match std::env::var_os("CODEX_HOME") {
            Some(dir) => PathBuf::from(dir),
            None => super::home_dir()?.join(".codex"),
        },
    };
    let (lines, mut report) = rollout(session, &mut blocks, &options.options, &ctx)?;
    report.splice(0..0, replayed);
    super::check_strict(&options.options, &report)?;
    // Use the thread id the file names itself, when it has one.
    let thread_id = lines
        .iter()
        .find(|l| l.get("type").and_then(Value::as_str) == Some("session_meta"))
        .and_then(|l| l["payload"].get("id").and_then(Value::as_str))
        .filter(|id| is_uuid(id))
        .map(str::to_string)
        .unwrap_or(ctx.thread_id.clone());
    let created = ctx.created.to_datetime();
    let dir = codex_home.join("sessions").join(created.format("%Y").to_string()).join(created.format("%m").to_string()).join(created.format("%d").to_string());
    let file = dir.join(format!("rollout-{}-{thread_id}.jsonl", created.format("%Y-%m-%dT%H-%M-%S")));
    if file.parent() != Some(dir.as_path()) {
        return Err(Error::invalid_field("session_id", "the thread id would escape the sessions folder"));
    }
    // One file per thread: a rollout written earlier for the same thread under another date goes.
    remove_other_rollouts(&codex_home.join("sessions"), &thread_id, &file)?;
    let mut text = String::new();
    for line in &lines {
        text.push_str(&serde_json::to_string(line).map_err(|e| Error::Internal(e.to_string()))?);
        text.push('\n');
    }
    super::write_private(&file, text.as_bytes())?;
    if let Some(last_seq) = last_seq {
        session.bind(Runtime::Codex, &thread_id, last_seq)?;
    }
    let mut env = std::collections::BTreeMap::new();
    if options.codex_home.is_some() {
        env.insert("CODEX_HOME".to_string(), codex_home.display().to_string());
    } else if let Some(home) = &options.home {
        env.insert("HOME".to_string(), home.display().to_string());
    }
    Ok(ResumePlan {
        session_id: thread_id.clone(),
        files: vec![file],
        argv: vec!["codex".into(), "exec".into(), "resume".into(), thread_id],
        cwd: ctx.cwd.map(PathBuf::from),
        env,
        setup: Vec::new(),
        ran: Vec::new(),
    })
}

fn remove_other_rollouts(sessions: &std::path::Path, thread_id: &str, keep: &std::path::Path) -> Result<()> {
    let suffix = format!("-{thread_id}.jsonl");
    let Ok(years) = std::fs::read_dir(sessions) else { return Ok(()) };
    for year in years.flatten() {
        for month in std::fs::read_dir(year.path()).into_iter().flatten().flatten() {
            for day in std::fs::read_dir(month.path()).into_iter().flatten().flatten() {
                for file in std::fs::read_dir(day.path()).into_iter().flatten().flatten() {
                    let path = file.path();
                    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
                    if name.starts_with("rollout-") && name.ends_with(&suffix) && path != keep {
                        std::fs::remove_file(&path)
                            .map_err(|source| Error::Io { context: format!("cannot replace {}", path.display()), source })?;
                    }
                }
            }
        }
    }
    Ok(())
}
