//! Reading a rollout (JSONL, a file, a list of lines) or bare `ResponseItem`s into blocks: one block
//! per content item of a `message`, one per other item, one status block per other line, the
//! native passthrough that lets export put everything back.

use base64::Engine as _;
use serde_json::{json, Map, Value};

use crate::error::Result;
use crate::model::{Actor, Block, Embed, Kind, Native, Reasoning, Runtime, Scope, Timestamp};
use crate::model::ids::{embed_id, embed_link};
use crate::native::adapter::{import_lines, ImportRun, LineReader};
use crate::native::common::{data_url_embed, lenient_str, read_line_blocks, take_string, truncate_chars, B64};
use crate::native::jsonl::Line;
use crate::store::{ImportedMeta, Session};

use super::{HISTORY_NAME, AT_BARE_CONTENT, AT_BARE_ITEM, AT_CONTENT, AT_ITEM, ITEM_TYPES, RUNTIME, sniff_record};

/// What the importer tracks across lines.
#[derive(Default)]
pub(super) struct RolloutState {
    pub(super) thread_id: Option<String>,
    pub(super) cwd: Option<String>,
    pub(super) model_provider: Option<String>,
    pub(super) model: Option<String>,
    pub(super) turn_id: Option<String>,
    pub(super) first_prompt: Option<String>,
    pub(super) last_time: Option<Timestamp>,
}

/// Imports a rollout (JSONL text, bytes, a file) or a list of rollout lines or `ResponseItem`s.
pub(super) fn import(run: ImportRun<'_>) -> Result<Session> {
    import_lines::<RolloutReader>(run, |state| {
        let title = state.first_prompt.as_ref().map(|p| truncate_chars(p.lines().next().unwrap_or("").trim(), 80));
        ImportedMeta { id: state.thread_id.clone(), title, cwd: state.cwd.clone(), read: None }
    })
}

/// Reads rollout lines.
struct RolloutReader;

impl LineReader for RolloutReader {
    type State = RolloutState;
    const RUNTIME: Runtime = Runtime::Codex;
    const WHAT: &'static str = HISTORY_NAME;

    fn line_blocks(line: &mut Line<'_>, state: &mut RolloutState, strict: bool) -> Result<Vec<Block>> {
        let last_time = state.last_time;
        read_line_blocks(RUNTIME, line, strict, last_time, super::records::check_line, |value| line_to_blocks(value, state))
    }

    fn is_own(record: &Value) -> bool {
        record.as_object().is_some_and(sniff_record)
    }
}


fn line_to_blocks(mut value: Value, state: &mut RolloutState) -> Vec<Block> {
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
fn attribute(block: &mut Block, state: &RolloutState) {
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

pub(super) fn item_to_blocks(mut item: Map<String, Value>, record: Option<Value>, state: &mut RolloutState, created_at: Timestamp) -> Vec<Block> {
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

/// The blocks of complete rollout lines appended to a file since it was last read (live capture
/// tails the rollout Codex writes, so that what it records is what an import of the file gives).
pub(super) fn rollout_tail_blocks(bytes: Vec<u8>, state: &mut RolloutState) -> Result<Vec<Block>> {
    let mut lines = crate::native::jsonl::Lines::open(crate::native::types::Source::Bytes(bytes))?;
    let mut blocks = Vec::new();
    while let Some(mut line) = lines.next_line()? {
        blocks.extend(RolloutReader::line_blocks(&mut line, state, false)?);
    }
    Ok(blocks)
}
