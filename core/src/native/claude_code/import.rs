//! Reading a transcript (JSONL, a file, a list of records) or an Anthropic Messages body into
//! blocks: one block per content item of a `user`/`assistant` record, one status block per other
//! record, the native passthrough that lets export put everything back.

use std::path::Path;

use base64::Engine as _;
use serde_json::{json, Map, Value};

use crate::error::{Error, Result};
use crate::model::{Actor, Block, Embed, Kind, Native, Reasoning, Runtime, Scope, Timestamp};
use crate::model::ids::{embed_id, embed_link};
use crate::native::adapter::{import_lines, ImportRun, LineReader};
use crate::native::common::{lenient_str, read_line_blocks, str_field, truncate_chars, B64, Malformed};
use crate::native::jsonl::Line;
use crate::native::types::Source;
use crate::store::{ImportTarget, ImportedMeta, Session, Store};

use super::{sniff_record, HISTORY_NAME, MODEL_PROVIDER, RUNTIME};

/// What the importer tracks across records.
#[derive(Default)]
struct ImportState {
    session_id: Option<String>,
    cwd: Option<String>,
    custom_title: Option<String>,
    ai_title: Option<String>,
    summary_title: Option<String>,
    first_prompt: Option<String>,
    /// The time of the previous record, for records without a timestamp.
    last_time: Option<Timestamp>,
}

impl ImportState {
    fn title(&self) -> Option<String> {
        self.custom_title.clone().or_else(|| self.ai_title.clone()).or_else(|| self.summary_title.clone()).or_else(|| {
            self.first_prompt.as_ref().map(|p| {
                let line = p.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
                truncate_chars(line, 80)
            })
        })
    }
}

/// Imports a Claude Code transcript (JSONL text, bytes, a file, or a list of records), or an
/// Anthropic Messages API body / message list given as a parsed value.
pub(super) fn import(run: ImportRun<'_>) -> Result<Session> {
    if let Source::Value(value) = &run.source {
        if is_messages_value(value) {
            return import_messages(run.store, value.clone(), run.target);
        }
    }
    let (file_stem, meta_title) = match &run.source {
        Source::Path(path) => (path.file_stem().and_then(|s| s.to_str()).map(str::to_string), subagent_title(path)),
        _ => (None, None),
    };
    import_lines::<TranscriptReader>(run, |state| {
        // A subagent transcript carries its parent's session id; it is named after both.
        let id = match (file_stem, &state.session_id) {
            (Some(stem), Some(parent)) if stem.starts_with("agent-") => Some(format!("{parent}/{stem}")),
            (Some(stem), _) => Some(stem),
            (None, parent) => parent.clone(),
        };
        let id = id.filter(|s| crate::store::validate_session_id(s).is_ok());
        ImportedMeta { id, title: meta_title.or_else(|| state.title()), cwd: state.cwd.clone(), read: None }
    })
}

/// Reads transcript lines.
struct TranscriptReader;

impl LineReader for TranscriptReader {
    type State = ImportState;
    const RUNTIME: Runtime = Runtime::ClaudeCode;
    const WHAT: &'static str = HISTORY_NAME;

    fn line_blocks(line: &mut Line<'_>, state: &mut ImportState, strict: bool) -> Result<Vec<Block>> {
        let last_time = state.last_time;
        read_line_blocks(RUNTIME, line, strict, last_time, super::records::check_record, |value| record_blocks(value, state))
    }

    fn is_own(record: &Value) -> bool {
        record.as_object().is_some_and(sniff_record)
    }
}

/// The blocks of a record that passed `check_record`.
fn record_blocks(mut value: Value, state: &mut ImportState) -> Vec<Block> {
    let Value::Object(map) = &mut value else { return Vec::new() };
    let ty = lenient_str(map, "type").unwrap_or("").to_string();
    let created_at = lenient_str(map, "timestamp")
        .and_then(|text| Timestamp::parse_rfc3339(text).ok())
        .or(state.last_time)
        .unwrap_or_else(Timestamp::now);
    state.last_time = Some(created_at);
    if state.session_id.is_none() {
        state.session_id = lenient_str(map, "sessionId").map(str::to_string);
    }
    if state.cwd.is_none() {
        state.cwd = lenient_str(map, "cwd").map(str::to_string);
    }
    let title = |key: &str| lenient_str(map, key).map(str::to_string);
    match ty.as_str() {
        "custom-title" => state.custom_title = title("customTitle").or(state.custom_title.take()),
        "ai-title" => state.ai_title = title("aiTitle").or(state.ai_title.take()),
        "summary" => state.summary_title = title("summary").or(state.summary_title.take()),
        _ => {}
    }
    if !super::records::is_message_type(&ty) {
        let mut block = Block::new(Actor::System, Kind::Status, status_line(&ty, map));
        block.created_at = created_at;
        block.native = Some(Native { runtime: RUNTIME.into(), data: obj! { "record" => value } });
        return vec![block];
    }
    let actor = if ty == "user" { Actor::User } else { Actor::Assistant };
    let api_error = map.get("isApiErrorMessage") == Some(&Value::Bool(true));
    let is_meta = map.get("isMeta") == Some(&Value::Bool(true));
    let Some(Value::Object(message)) = map.get_mut("message") else { return Vec::new() };
    let attribution = MessageAttribution {
        actor,
        model: lenient_str(message, "model").filter(|m| *m != "<synthetic>").map(str::to_string),
        message_id: lenient_str(message, "id").map(str::to_string),
        api_error,
    };
    let content = message.insert("content".into(), Value::Null).unwrap_or(Value::Null);
    if actor == Actor::User && state.first_prompt.is_none() && !is_meta {
        if let Value::String(text) = &content {
            if !text.starts_with('<') {
                state.first_prompt = Some(text.clone());
            }
        }
    }
    match content {
        Value::String(text) => {
            let mut block = Block::new(actor, attribution.text_kind(), text);
            attribution.apply(&mut block);
            block.created_at = created_at;
            block.native = Some(Native { runtime: RUNTIME.into(), data: obj! { "record" => value, "parts" => 1 } });
            vec![block]
        }
        Value::Array(items) if items.is_empty() => {
            // Nothing to model: the record is kept whole.
            value["message"]["content"] = Value::Array(items);
            let mut block = Block::new(actor, Kind::Status, format!("{ty} record with empty content"));
            block.created_at = created_at;
            block.native = Some(Native { runtime: RUNTIME.into(), data: obj! { "record" => value } });
            vec![block]
        }
        Value::Array(items) => {
            let parts = items.len();
            let mut blocks = Vec::with_capacity(parts);
            let mut envelope = Some(value);
            for (i, item) in items.into_iter().enumerate() {
                let Value::Object(item) = item else { continue };
                let (mut block, residual) = item_block(actor, item.clone(), &attribution);
                attribution.apply(&mut block);
                block.created_at = created_at;
                let data = match envelope.take() {
                    Some(record) if i == 0 => obj! { "record" => record, "parts" => parts, "item" => residual },
                    _ => obj! { "item" => residual },
                };
                block.native = Some(Native { runtime: RUNTIME.into(), data });
                blocks.push(block);
            }
            blocks
        }
        _ => Vec::new(),
    }
}

/// A readable line for a record kept whole.
fn status_line(ty: &str, map: &Map<String, Value>) -> String {
    let sub = |key: &str| map.get(key).and_then(Value::as_str);
    match ty {
        "system" => match (sub("subtype"), sub("content")) {
            (Some(subtype), Some(content)) => format!("system/{subtype}: {}", truncate_chars(content, 200)),
            (Some(subtype), None) => format!("system/{subtype}"),
            (None, Some(content)) => format!("system: {}", truncate_chars(content, 200)),
            (None, None) => "system".into(),
        },
        "attachment" => match map.get("attachment").and_then(|a| a.get("type")).and_then(Value::as_str) {
            Some(kind) => format!("attachment: {kind}"),
            None => "attachment".into(),
        },
        "progress" => match map.get("data").and_then(|d| d.get("type")).and_then(Value::as_str) {
            Some(kind) => format!("progress: {kind}"),
            None => "progress".into(),
        },
        "summary" => format!("summary: {}", sub("summary").unwrap_or("")),
        "custom-title" => format!("title: {}", sub("customTitle").unwrap_or("")),
        "ai-title" => format!("title: {}", sub("aiTitle").unwrap_or("")),
        "last-prompt" => format!("last prompt: {}", truncate_chars(sub("lastPrompt").unwrap_or(""), 200)),
        "queue-operation" => format!("queue-operation: {}", sub("operation").unwrap_or("")),
        other => other.to_string(),
    }
}

/// Attribution and flags of one message.
pub(super) struct MessageAttribution {
    actor: Actor,
    model: Option<String>,
    message_id: Option<String>,
    api_error: bool,
}

impl MessageAttribution {
    pub(super) fn of(actor: Actor, message: &Map<String, Value>, record: &Map<String, Value>) -> std::result::Result<Self, Malformed> {
        let model = str_field(message, "model")?.filter(|m| *m != "<synthetic>").map(str::to_string);
        let message_id = str_field(message, "id")?.map(str::to_string);
        let api_error = record.get("isApiErrorMessage") == Some(&Value::Bool(true));
        Ok(MessageAttribution { actor, model, message_id, api_error })
    }

    pub(super) fn text_kind(&self) -> Kind {
        if self.api_error { Kind::Error } else { Kind::Text }
    }

    pub(super) fn apply(&self, block: &mut Block) {
        if self.actor == Actor::Assistant {
            block.provider = Some(RUNTIME.into());
            block.model_provider = Some(MODEL_PROVIDER.into());
            block.model = self.model.clone();
        }
        block.message_id = self.message_id.clone();
    }

    pub(super) fn scope(&self) -> Scope {
        Scope { provider: Some(RUNTIME.into()), model_provider: Some(MODEL_PROVIDER.into()), model: self.model.clone() }
    }
}

/// A base64 image/document source as an embed; the second value says whether the text is the
/// canonical encoding of the bytes (so it can be left out and rebuilt exactly).
fn source_embed(source: &Map<String, Value>) -> Option<(Embed, bool)> {
    if source.get("type").and_then(Value::as_str) != Some("base64") {
        return None;
    }
    let mime = source.get("media_type").and_then(Value::as_str)?;
    let data = source.get("data").and_then(Value::as_str)?;
    let bytes = B64.decode(data.as_bytes()).ok()?;
    let canonical = B64.encode(&bytes) == data;
    Some((Embed::from_bytes(mime, None, bytes), canonical))
}

/// One content item as a block, and the residual of the item for `native.data.item`: the item
/// with the payloads the block holds left out (null, or a marker), so that export puts them back.
pub(super) fn item_block(actor: Actor, mut item: Map<String, Value>, attribution: &MessageAttribution) -> (Block, Value) {
    let ty = lenient_str(&item, "type").unwrap_or("").to_string();
    let is_str = |item: &Map<String, Value>, key: &str| matches!(item.get(key), Some(Value::String(_)));
    let non_empty = |item: &Map<String, Value>, key: &str| lenient_str(item, key).is_some_and(|s| !s.is_empty());
    let take_str = |item: &mut Map<String, Value>, key: &str| match item.insert(key.to_string(), Value::Null) {
        Some(Value::String(s)) => s,
        _ => String::new(),
    };
    match ty.as_str() {
        "text" if is_str(&item, "text") => {
            let text = take_str(&mut item, "text");
            return (Block::new(actor, attribution.text_kind(), text), Value::Object(item));
        }
        "thinking" if is_str(&item, "thinking") => {
            let text = take_str(&mut item, "thinking");
            let mut block = Block::new(actor, Kind::Thinking, text);
            if non_empty(&item, "signature") {
                block.reasoning = Some(Reasoning {
                    format: Reasoning::ANTHROPIC_SIGNATURE.into(),
                    data: take_str(&mut item, "signature"),
                    scope: attribution.scope(),
                });
            }
            return (block, Value::Object(item));
        }
        "redacted_thinking" if is_str(&item, "data") => {
            let mut block = Block::new(actor, Kind::Thinking, "");
            block.reasoning = Some(Reasoning {
                format: Reasoning::ANTHROPIC_REDACTED.into(),
                data: take_str(&mut item, "data"),
                scope: attribution.scope(),
            });
            return (block, Value::Object(item));
        }
        "tool_use" if non_empty(&item, "id") && non_empty(&item, "name") => {
            let input = match item.get_mut("input") {
                Some(input) => std::mem::take(input).to_string(),
                None => "null".to_string(),
            };
            let call = lenient_str(&item, "id").unwrap_or("").to_string();
            let name = lenient_str(&item, "name").unwrap_or("").to_string();
            return (Block { actor, ..Block::tool_use(call, name, input) }, Value::Object(item));
        }
        "tool_result" if non_empty(&item, "tool_use_id") => {
            let is_error = item.get("is_error").and_then(Value::as_bool).unwrap_or(false);
            let mut block = Block::tool_result(lenient_str(&item, "tool_use_id").unwrap_or(""), "", is_error);
            block.actor = actor;
            match item.get_mut("content") {
                Some(Value::String(_)) => block.content = take_str(&mut item, "content"),
                Some(Value::Array(parts)) => {
                    let mut rendered = String::new();
                    for part in parts.iter_mut() {
                        let Value::Object(p) = part else { continue };
                        let pty = lenient_str(p, "type").unwrap_or("");
                        if pty == "text" {
                            if let Some(Value::String(text)) = p.get("text") {
                                if !rendered.is_empty() {
                                    rendered.push('\n');
                                }
                                let start = rendered.len();
                                rendered.push_str(text);
                                p.insert("text".into(), json!([start, rendered.len()]));
                            }
                        } else if pty == "image" || pty == "document" {
                            let label = pty.to_string();
                            if let Some((embed, canonical)) = p.get("source").and_then(Value::as_object).and_then(source_embed) {
                                let id = embed_id(&embed);
                                if !rendered.is_empty() {
                                    rendered.push('\n');
                                }
                                rendered.push_str(&embed_link(&label, &id));
                                if canonical {
                                    p["source"]["data"] = json!({ "embed": id });
                                }
                                block.embeds.insert(id, embed);
                            }
                        }
                    }
                    block.content = rendered;
                }
                _ => {}
            }
            return (block, Value::Object(item));
        }
        "image" | "document" => {
            if let Some((embed, canonical)) = item.get("source").and_then(Value::as_object).and_then(source_embed) {
                let id = embed_id(&embed);
                if canonical {
                    item["source"]["data"] = json!({ "embed": id });
                }
                let mut block = Block::new(actor, Kind::Text, embed_link(&ty, &id));
                block.embeds.insert(id, embed);
                return (block, Value::Object(item));
            }
        }
        _ => {}
    }
    // Not a shape we model (server tool blocks, citations-only items, future types): kept whole.
    let line = if ty.is_empty() { "content item without a type".to_string() } else { format!("[{ty}]") };
    (Block::new(actor, Kind::Status, line), Value::Object(item))
}

fn is_messages_value(value: &Value) -> bool {
    match value {
        Value::Object(map) => map.contains_key("messages") && !map.contains_key("type"),
        Value::Array(items) => items.first().is_some_and(|first| {
            first.get("role").is_some() && first.get("type").is_none() && first.get("uuid").is_none()
        }),
        _ => false,
    }
}

/// Imports an Anthropic Messages API body (`{system, messages}`) or a bare message list.
fn import_messages(store: &Store, value: Value, target: ImportTarget) -> Result<Session> {
    let (system, messages, model) = match value {
        Value::Object(mut map) => (
            map.remove("system"),
            map.remove("messages").unwrap_or(Value::Null),
            map.get("model").and_then(Value::as_str).map(str::to_string),
        ),
        other => (None, other, None),
    };
    let Value::Array(messages) = messages else {
        return Err(Error::invalid_field("messages", "\"messages\" must be a list"));
    };
    store.import_to(target, |sink| {
        let now = Timestamp::now();
        let push = |mut block: Block, sink: &mut crate::store::ImportSink<'_, '_>| {
            block.created_at = now;
            sink.push(block)
        };
        match system {
            Some(Value::String(text)) => push(Block::text(Actor::System, text), sink)?,
            Some(Value::Array(parts)) => {
                for (i, part) in parts.iter().enumerate() {
                    let text = part.get("text").and_then(Value::as_str).ok_or_else(|| {
                        Error::invalid_field(format!("system[{i}].text"), "a system part must be a text block")
                    })?;
                    push(Block::text(Actor::System, text), sink)?;
                }
            }
            None | Some(Value::Null) => {}
            Some(_) => return Err(Error::invalid_field("system", "\"system\" must be a string or a list of text blocks")),
        }
        for (i, message) in messages.iter().enumerate() {
            let field = |f: &str| format!("messages[{i}]{f}");
            let Value::Object(message) = message else {
                return Err(Error::invalid_field(field(""), "a message must be an object"));
            };
            let actor = match message.get("role").and_then(Value::as_str) {
                Some("user") => Actor::User,
                Some("assistant") => Actor::Assistant,
                _ => return Err(Error::invalid_field(field(".role"), "role must be \"user\" or \"assistant\"")),
            };
            let mut attribution = MessageAttribution { actor, model: model.clone(), message_id: None, api_error: false };
            if actor == Actor::Assistant {
                attribution.message_id = Some(format!("msg-{i}"));
            }
            match message.get("content") {
                Some(Value::String(text)) => {
                    let mut block = Block::new(actor, Kind::Text, text.clone());
                    attribution.apply(&mut block);
                    push(block, sink)?;
                }
                Some(Value::Array(items)) => {
                    for (j, item) in items.iter().enumerate() {
                        let Value::Object(item) = item else {
                            return Err(Error::invalid_field(field(&format!(".content[{j}]")), "a content item must be an object"));
                        };
                        let (mut block, residual) = item_block(actor, item.clone(), &attribution);
                        attribution.apply(&mut block);
                        if block.kind == Kind::Status {
                            block.native = Some(Native { runtime: RUNTIME.into(), data: obj! { "item" => residual } });
                        }
                        push(block, sink)?;
                    }
                }
                _ => return Err(Error::invalid_field(field(".content"), "content must be a string or a list")),
            }
        }
        Ok(ImportedMeta::default())
    })
}

/// True for a subagent transcript by its name: `<sid>/subagents/agent-<id>.jsonl` (2.1.x) or
/// `agent-<id>.jsonl` beside the sessions (2.0.x).
pub fn is_subagent_file(path: &Path) -> bool {
    path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("agent-") && n.ends_with(".jsonl"))
}

/// "subagent <type>: <description>" from the `agent-<id>.meta.json` beside a subagent transcript
/// (2.1.233+), when there is one.
fn subagent_title(path: &Path) -> Option<String> {
    if !is_subagent_file(path) {
        return None;
    }
    let meta = path.with_extension("meta.json");
    let value: Value = serde_json::from_slice(&std::fs::read(meta).ok()?).ok()?;
    let kind = value.get("agentType").and_then(Value::as_str).unwrap_or("agent");
    match value.get("description").and_then(Value::as_str) {
        Some(description) => Some(format!("subagent {kind}: {description}")),
        None => Some(format!("subagent {kind}")),
    }
}
