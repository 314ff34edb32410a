//! Claude Code: transcript JSONL (`~/.claude/projects/<slug>/<session>.jsonl`, every generation),
//! Anthropic Messages API `{system, messages}`, `--output-format stream-json` events, and resume.
//!
//! Import keeps every record. A `user`/`assistant` record becomes one canonical block per content
//! item; the first of them carries the record's envelope (`native.data.record`, with
//! `message.content` set to null) and each carries the rest of its item (`native.data.item`) with the
//! payloads that live in canonical fields (text, thinking, signature, tool input, image bytes) left
//! out, so that export puts them back exactly. Every other record (attachments, bookkeeping, titles,
//! system rows, record types not known today) becomes one `system`/`status` block carrying the whole
//! record. A line that is not a valid record becomes an `error` block holding the raw line.
//!
//! See `formats/claude-code.md` in the shared documentation for the format itself.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde_json::{json, Map, Value};

use crate::error::{Error, Result};
use crate::model::{Actor, Block, Embed, Kind, Native, Reasoning, Scope, Timestamp};
use crate::native::common::{
    at_line, derived_uuid, embed_id, embed_link, is_uuid, lenient_str, malformed, read_line_blocks, short_hash, str_field,
    truncate_chars, Malformed, B64,
};
use crate::native::jsonl::{Line, Lines};
use crate::native::{ForeignReasoning, Options, ReportAction, ReportEntry, ResumeOptions, ResumePlan, Source};
use crate::store::{ImportTarget, ImportedMeta, Session, Store};

/// The runtime name, as in `native.runtime` and `provider`.
pub const RUNTIME: &str = "claude-code";
/// The model vendor of every Claude Code response.
pub const MODEL_PROVIDER: &str = "anthropic";
/// The CLI version written into records this crate makes (the version the format was verified with).
pub const TARGET_VERSION: &str = "2.1.328";


// ----------------------------------------------------------------------------------------------
// Import
// ----------------------------------------------------------------------------------------------

/// Record types that hold a conversation message.
fn is_message_type(ty: &str) -> bool {
    ty == "user" || ty == "assistant"
}

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
pub(crate) fn import(store: &Store, source: Source, options: &Options, target: ImportTarget) -> Result<Session> {
    if let Source::Value(value) = &source {
        if is_messages_value(value) {
            return import_messages(store, value.clone(), options);
        }
    }
    let (file_stem, meta_title) = match &source {
        Source::Path(path) => (path.file_stem().and_then(|s| s.to_str()).map(str::to_string), subagent_title(path)),
        _ => (None, None),
    };
    let mut lines = Lines::open(source)?;
    store.import_to(target, |sink| {
        let mut state = ImportState::default();
        // Until a line reads as Claude Code, each line is checked for being another runtime's record.
        let mut settled = false;
        while let Some(mut line) = lines.next_line()? {
            if !settled {
                if let Ok(value) = &line.parsed {
                    settled = looks_like_record(value);
                    if let Some(other) = other_runtime(value).filter(|_| !settled) {
                        return Err(Error::InvalidInput {
                            message: format!("this is {other} history, not a Claude Code transcript (the line is a {other} record)"),
                            location: crate::error::Location { line: Some(line.number), ..Default::default() },
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
        // A subagent transcript carries its parent's session id; it is named after both.
        let id = match (file_stem, &state.session_id) {
            (Some(stem), Some(parent)) if stem.starts_with("agent-") => Some(format!("{parent}/{stem}")),
            (Some(stem), _) => Some(stem),
            (None, parent) => parent.clone(),
        };
        let id = id.filter(|s| crate::store::validate_session_id(s).is_ok());
        Ok(ImportedMeta { id, title: meta_title.or_else(|| state.title()), cwd: state.cwd.clone() })
    })
}

/// The blocks of one transcript line.
fn line_blocks(line: &mut Line<'_>, state: &mut ImportState, strict: bool) -> Result<Vec<Block>> {
    let last_time = state.last_time;
    read_line_blocks(RUNTIME, line, strict, last_time, check_record, |value| record_blocks(value, state))
}

/// The checks that make a record malformed: what its type needs, of the wrong type.
fn check_record(value: &Value) -> std::result::Result<(), Malformed> {
    let Value::Object(map) = value else {
        return Err(Malformed { reason: format!("a record must be a JSON object, not {}", super::json_type(value)), field: None });
    };
    let ty = match map.get("type") {
        Some(Value::String(ty)) => ty.as_str(),
        None => return Err(malformed("type", "the record has no \"type\"")),
        Some(other) => return Err(malformed("type", format!("\"type\" must be a string, not {}", super::json_type(other)))),
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
        Some(other) => return Err(malformed("message", format!("\"message\" must be an object, not {}", super::json_type(other)))),
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
                        format!("a content item must be an object, not {}", super::json_type(item)),
                    ));
                }
            }
            Ok(())
        }
        None => Err(malformed("message.content", "the message has no \"content\"")),
        Some(other) => Err(malformed(
            "message.content",
            format!("\"message.content\" must be a string or a list, not {}", super::json_type(other)),
        )),
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
    if !is_message_type(&ty) {
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
struct MessageAttribution {
    actor: Actor,
    model: Option<String>,
    message_id: Option<String>,
    api_error: bool,
}

impl MessageAttribution {
    fn of(actor: Actor, message: &Map<String, Value>, record: &Map<String, Value>) -> std::result::Result<Self, Malformed> {
        let model = str_field(message, "model")?.filter(|m| *m != "<synthetic>").map(str::to_string);
        let message_id = str_field(message, "id")?.map(str::to_string);
        let api_error = record.get("isApiErrorMessage") == Some(&Value::Bool(true));
        Ok(MessageAttribution { actor, model, message_id, api_error })
    }

    fn text_kind(&self) -> Kind {
        if self.api_error { Kind::Error } else { Kind::Text }
    }

    fn apply(&self, block: &mut Block) {
        if self.actor == Actor::Assistant {
            block.provider = Some(RUNTIME.into());
            block.model_provider = Some(MODEL_PROVIDER.into());
            block.model = self.model.clone();
        }
        block.message_id = self.message_id.clone();
    }

    fn scope(&self) -> Scope {
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
fn item_block(actor: Actor, mut item: Map<String, Value>, attribution: &MessageAttribution) -> (Block, Value) {
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

// ----------------------------------------------------------------------------------------------
// Anthropic Messages import
// ----------------------------------------------------------------------------------------------

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
fn import_messages(store: &Store, value: Value, options: &Options) -> Result<Session> {
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
    store.import_session(options.session_id.clone(), |sink| {
        let now = Timestamp::now();
        let push = |mut block: Block, sink: &mut crate::store::ImportSink<'_>| {
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

// ----------------------------------------------------------------------------------------------
// Export: transcript records
// ----------------------------------------------------------------------------------------------

/// One record of an export with the blocks it came from.
pub(crate) struct OutRecord {
    pub value: Value,
    /// The block of each content item (or of the whole record).
    pub block_ids: Vec<String>,
    /// Canonical system text, carried in the transcript as a meta user row; `system` in `messages`.
    pub system_text: bool,
}

/// Where records are written and under which ids.
pub(crate) struct Context {
    /// The Claude Code session id written into records.
    pub session_id: String,
    /// The working directory written into records.
    pub cwd: Option<String>,
}

impl Context {
    pub(crate) fn for_session(session: &Session, blocks: &[Block]) -> Result<Context> {
        let mut native_id = None;
        let mut cwd = None;
        for block in blocks {
            if let Some(record) = native_record(block) {
                if native_id.is_none() {
                    native_id = record.get("sessionId").and_then(Value::as_str).map(str::to_string);
                }
                if let Some(c) = record.get("cwd").and_then(Value::as_str) {
                    cwd = Some(c.to_string());
                }
            }
        }
        let session_id = match session.binding(crate::model::Runtime::ClaudeCode)? {
            Some(binding) if is_uuid(&binding.native_id) => binding.native_id,
            _ => match native_id.filter(|id| is_uuid(id)) {
                Some(id) => id,
                None if is_uuid(session.id()) => session.id().to_ascii_lowercase(),
                None => derived_uuid(&[session.id(), "claude-code-session"]),
            },
        };
        let cwd = match cwd { Some(cwd) => Some(cwd), None => session.info()?.cwd };
        Ok(Context { session_id, cwd })
    }
}

fn native_data(block: &Block) -> Option<&Map<String, Value>> {
    match &block.native {
        Some(native) if native.runtime == RUNTIME => native.data.as_object(),
        _ => None,
    }
}

fn native_record(block: &Block) -> Option<&Map<String, Value>> {
    native_data(block)?.get("record")?.as_object()
}

/// Anthropic's tool-use id constraint.
fn is_valid_tool_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

struct Writer<'a> {
    session: &'a Session,
    options: &'a Options,
    ctx: &'a Context,
    report: Vec<ReportEntry>,
    out: Vec<OutRecord>,
    /// uuid of the last record on the main chain.
    last_uuid: Option<String>,
    last_time: i64,
    last_user_text: Option<String>,
    wrote_synthesized: bool,
    /// call id → (uuid of the row holding the tool_use, the id written)
    calls: HashMap<String, (String, String)>,
    answered: HashSet<String>,
    /// The assistant message being written: (group key, message id, model).
    open_message: Option<(Option<String>, String, Option<String>)>,
    embed_cache: HashMap<String, String>,
}

impl<'a> Writer<'a> {
    fn entry(&mut self, action: ReportAction, block: &Block, message: impl Into<String>) {
        self.report.push(ReportEntry { action, block_id: Some(block.id.clone()), message: message.into() });
    }

    fn embed_base64(&mut self, embed_id: &str) -> Result<String> {
        if let Some(hit) = self.embed_cache.get(embed_id) {
            return Ok(hit.clone());
        }
        let text = B64.encode(self.session.embed(embed_id)?);
        self.embed_cache.insert(embed_id.to_string(), text.clone());
        Ok(text)
    }

    fn note_native(&mut self, record: &Value) {
        let map = match record.as_object() {
            Some(map) => map,
            None => return,
        };
        let ty = map.get("type").and_then(Value::as_str).unwrap_or("");
        let chain = matches!(ty, "user" | "assistant" | "system" | "attachment" | "progress");
        if chain && map.get("isSidechain") != Some(&Value::Bool(true)) {
            if let Some(uuid) = map.get("uuid").and_then(Value::as_str) {
                self.last_uuid = Some(uuid.to_string());
            }
        }
        if let Some(ts) = map.get("timestamp").and_then(Value::as_str).and_then(|t| Timestamp::parse_rfc3339(t).ok()) {
            self.last_time = self.last_time.max(ts.as_millis());
        }
        if ty == "assistant" {
            if let Some(content) = map.get("message").and_then(|m| m.get("content")).and_then(Value::as_array) {
                for item in content {
                    if item.get("type").and_then(Value::as_str) == Some("tool_use") {
                        if let (Some(id), Some(uuid)) = (item.get("id").and_then(Value::as_str), map.get("uuid").and_then(Value::as_str)) {
                            self.calls.insert(id.to_string(), (uuid.to_string(), id.to_string()));
                        }
                    }
                }
            }
        }
        if ty == "user" {
            if let Some(content) = map.get("message").and_then(|m| m.get("content")) {
                match content {
                    Value::String(text) => self.last_user_text = Some(text.clone()),
                    Value::Array(items) => {
                        for item in items {
                            if let Some(id) = item.get("tool_use_id").and_then(Value::as_str) {
                                self.answered.insert(id.to_string());
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        self.open_message = None;
    }

    /// Rebuilds the native records of imported blocks, `blocks[start..]` beginning with a record.
    /// Returns how many blocks it used.
    fn native_group(&mut self, blocks: &mut [Block], start: usize) -> Result<Option<usize>> {
        // Check the group first; then take its data out of the blocks (they are not used again).
        let parts = {
            let Some(data) = native_data(&blocks[start]) else { return Ok(None) };
            if !data.contains_key("record") {
                return Ok(None);
            }
            match data.get("parts").and_then(Value::as_u64) {
                None => None,
                Some(parts) => {
                    let parts = parts as usize;
                    let fits = parts > 0 && start + parts <= blocks.len();
                    let shaped = fits
                        && (data.get("item").is_some() || parts == 1)
                        && (1..parts).all(|k| {
                            let block = &blocks[start + k];
                            native_data(block).is_some_and(|d| d.contains_key("item") && !d.contains_key("record"))
                        });
                    if !shaped || !matches!(data.get("record").and_then(|r| r.get("message")), Some(Value::Object(_))) {
                        return Ok(None);
                    }
                    Some(parts)
                }
            }
        };
        let take = |block: &mut Block, key: &str| -> Value {
            match block.native.as_mut().map(|n| &mut n.data) {
                Some(Value::Object(data)) => data.remove(key).unwrap_or(Value::Null),
                _ => Value::Null,
            }
        };
        let Some(parts) = parts else {
            // Kept whole (bookkeeping, or a malformed line that was JSON).
            let record = take(&mut blocks[start], "record");
            self.note_native(&record);
            self.out.push(OutRecord { value: record, block_ids: vec![blocks[start].id.clone()], system_text: false });
            return Ok(Some(1));
        };
        let mut record = take(&mut blocks[start], "record");
        let block_ids: Vec<String> = blocks[start..start + parts].iter().map(|b| b.id.clone()).collect();
        let content = match take(&mut blocks[start], "item") {
            Value::Null if parts == 1 => Value::String(std::mem::take(&mut blocks[start].content)),
            first => {
                let mut items = Vec::with_capacity(parts);
                items.push(self.rebuild_item(first, &mut blocks[start])?);
                for block in &mut blocks[start + 1..start + parts] {
                    let item = take(block, "item");
                    items.push(self.rebuild_item(item, block)?);
                }
                Value::Array(items)
            }
        };
        if let Some(Value::Object(message)) = record.get_mut("message") {
            message.insert("content".into(), content);
        }
        self.note_native(&record);
        self.out.push(OutRecord { value: record, block_ids, system_text: false });
        Ok(Some(parts))
    }

    /// Puts the canonical payloads of `block` (which is used up) back into an item residual.
    fn rebuild_item(&mut self, mut item: Value, block: &mut Block) -> Result<Value> {
        let Value::Object(map) = &mut item else { return Ok(item) };
        let ty = map.get("type").and_then(Value::as_str).unwrap_or("").to_string();
        let fill = |map: &mut Map<String, Value>, key: &str, value: String| {
            if let Some(slot @ Value::Null) = map.get_mut(key) {
                *slot = Value::String(value);
            }
        };
        match ty.as_str() {
            "text" => fill(map, "text", std::mem::take(&mut block.content)),
            "thinking" => {
                fill(map, "thinking", std::mem::take(&mut block.content));
                if let Some(reasoning) = block.reasoning.take() {
                    fill(map, "signature", reasoning.data);
                }
            }
            "redacted_thinking" => {
                if let Some(reasoning) = block.reasoning.take() {
                    fill(map, "data", reasoning.data);
                }
            }
            "tool_use" if map.get("input") == Some(&Value::Null) => {
                let input = serde_json::from_str::<Value>(&block.content)
                    .map_err(|e| Error::Internal(format!("stored tool input of block {} is not JSON: {e}", block.id)))?;
                map.insert("input".into(), input);
            }
            "tool_result" => match map.get_mut("content") {
                Some(slot @ Value::Null) => *slot = Value::String(std::mem::take(&mut block.content)),
                Some(Value::Array(parts)) => {
                    let mut parts = std::mem::take(parts);
                    for part in parts.iter_mut() {
                        if let Some(Value::Array(range)) = part.get("text") {
                            if let (Some(s), Some(e)) = (range.first().and_then(Value::as_u64), range.get(1).and_then(Value::as_u64)) {
                                let text = block.content.get(s as usize..e as usize).ok_or_else(|| {
                                    Error::Internal(format!("stored tool result of block {} does not match its parts", block.id))
                                })?;
                                part["text"] = Value::String(text.to_string());
                            }
                        }
                        self.fill_source(part)?;
                    }
                    map.insert("content".into(), Value::Array(parts));
                }
                _ => {}
            },
            "image" | "document" => self.fill_source(&mut item)?,
            _ => {}
        }
        Ok(item)
    }

    fn fill_source(&mut self, part: &mut Value) -> Result<()> {
        let id = match part.get("source").and_then(|s| s.get("data")).and_then(|d| d.get("embed")).and_then(Value::as_str) {
            Some(id) => id.to_string(),
            None => return Ok(()),
        };
        let data = self.embed_base64(&id)?;
        part["source"]["data"] = Value::String(data);
        Ok(())
    }

    // -------- records for blocks without Claude Code passthrough (the writer recipe) --------

    fn next_time(&mut self, block: &Block) -> String {
        let ms = block.created_at.as_millis().max(self.last_time + 1);
        self.last_time = ms;
        Timestamp::from_millis(ms).unwrap_or(block.created_at).to_rfc3339()
    }

    fn envelope(&mut self, block: &Block, ty: &str, message: Value, k: usize) -> (Map<String, Value>, String) {
        let uuid = derived_uuid(&[&self.ctx.session_id, &block.id, &k.to_string()]);
        let mut map = Map::new();
        map.insert("parentUuid".into(), self.last_uuid.clone().map(Value::String).unwrap_or(Value::Null));
        map.insert("isSidechain".into(), Value::Bool(false));
        map.insert("userType".into(), json!("external"));
        if let Some(cwd) = &self.ctx.cwd {
            map.insert("cwd".into(), json!(cwd));
        }
        map.insert("sessionId".into(), json!(self.ctx.session_id));
        map.insert("version".into(), json!(TARGET_VERSION));
        map.insert("gitBranch".into(), json!(""));
        map.insert("type".into(), json!(ty));
        map.insert("message".into(), message);
        map.insert("uuid".into(), json!(uuid));
        let time = self.next_time(block);
        map.insert("timestamp".into(), json!(time));
        self.last_uuid = Some(uuid.clone());
        self.wrote_synthesized = true;
        (map, uuid)
    }

    fn push_synth(&mut self, map: Map<String, Value>, block: &Block, system_text: bool) {
        self.out.push(OutRecord { value: Value::Object(map), block_ids: vec![block.id.clone()], system_text });
    }

    fn tool_id(&mut self, block: &Block, call_id: &str) -> String {
        if let Some((_, written)) = self.calls.get(call_id) {
            return written.clone();
        }
        if is_valid_tool_id(call_id) {
            return call_id.to_string();
        }
        let mapped = format!("toolu_{}", short_hash(&[call_id], 24));
        self.entry(ReportAction::Remapped, block, format!("tool call id {call_id:?} written as {mapped:?} (Anthropic ids are [A-Za-z0-9_-]{{1,64}})"));
        mapped
    }

    /// Content items for text with embed references: the embeds as image/document blocks and the
    /// text around them as text blocks.
    fn rich_content(&mut self, block: &Block, allow_media: bool) -> Result<Vec<Value>> {
        let mut items = Vec::new();
        let mut rest = block.content.as_str();
        let refs: Vec<String> = block.embed_references().into_iter().map(str::to_string).collect();
        for id in refs {
            let link_end = format!("](embed://{id})");
            let Some(pos) = rest.find(&link_end) else { continue };
            let Some(open) = rest[..pos].rfind("![") else { continue };
            let before = &rest[..open];
            if !before.trim().is_empty() {
                items.push(json!({"type": "text", "text": before}));
            }
            rest = &rest[pos + link_end.len()..];
            let embed = &block.embeds[&id];
            let media = if embed.mime.starts_with("image/") {
                Some("image")
            } else if embed.mime == "application/pdf" {
                Some("document")
            } else {
                None
            };
            match media {
                Some(kind) if allow_media => {
                    let data = self.embed_base64(&id)?;
                    items.push(json!({"type": kind, "source": {"type": "base64", "media_type": embed.mime, "data": data}}));
                }
                _ => {
                    let name = embed.name.clone().unwrap_or_else(|| id.clone());
                    items.push(json!({"type": "text", "text": format!("[attachment {name} ({}, {} bytes)]", embed.mime, embed.size)}));
                    self.entry(ReportAction::Degraded, block, format!("embed {id} ({}) written as a text placeholder", embed.mime));
                }
            }
        }
        if !rest.trim().is_empty() || items.is_empty() {
            items.push(json!({"type": "text", "text": rest}));
        }
        Ok(items)
    }

    fn user_text(&mut self, block: &Block, meta: bool) -> Result<()> {
        let content = if block.embeds.is_empty() {
            Value::String(block.content.clone())
        } else {
            Value::Array(self.rich_content(block, true)?)
        };
        if !meta {
            self.last_user_text = Some(block.content.clone());
        }
        let (mut map, _) = self.envelope(block, "user", obj! { "role" => "user", "content" => content }, 0);
        if meta {
            map.insert("isMeta".into(), Value::Bool(true));
        }
        self.push_synth(map, block, meta);
        self.open_message = None;
        Ok(())
    }

    fn tool_result(&mut self, block: &Block, call_id: &str) -> Result<()> {
        let id = self.tool_id(block, call_id);
        let is_error = block.tool.as_ref().and_then(|t| t.is_error).unwrap_or(false);
        let content = if block.embeds.is_empty() {
            Value::String(block.content.clone())
        } else {
            Value::Array(self.rich_content(block, true)?)
        };
        let source = self.calls.get(call_id).map(|(uuid, _)| uuid.clone());
        let item = obj! { "tool_use_id" => id, "type" => "tool_result", "content" => content, "is_error" => is_error };
        let (mut map, _) = self.envelope(block, "user", obj! { "role" => "user", "content" => vec![item] }, 0);
        if let Some(source) = source {
            map.insert("sourceToolAssistantUUID".into(), json!(source));
        }
        self.answered.insert(call_id.to_string());
        self.push_synth(map, block, false);
        self.open_message = None;
        Ok(())
    }

    fn synthetic_result(&mut self, call_block: &Block, call_id: &str) -> Result<()> {
        let mut result = Block::tool_result(call_id, "[Tool call interrupted: no result was recorded for this call.]", true);
        result.id = format!("{}:result", call_block.id);
        result.created_at = call_block.created_at;
        self.entry(ReportAction::Synthesized, call_block, format!("tool call {call_id:?} had no result; an error result was added"));
        self.tool_result(&result, call_id)
    }

    fn assistant_item(&mut self, block: &Block, item: Value) {
        let group_key = block.message_id.clone();
        let model = block.model.clone().or_else(|| self.options.target_model.clone());
        let (message_id, model) = match &self.open_message {
            Some((key, id, m)) if *key == group_key => {
                (id.clone(), m.clone().or(model))
            }
            _ => {
                let id = match &block.message_id {
                    Some(id) if id.starts_with("msg_") => id.clone(),
                    _ => format!("msg_{}", short_hash(&[&self.ctx.session_id, &block.id], 24)),
                };
                (id, model)
            }
        };
        let is_tool = item.get("type").and_then(Value::as_str) == Some("tool_use");
        let mut message = Map::new();
        message.insert("id".into(), json!(message_id));
        message.insert("type".into(), json!("message"));
        message.insert("role".into(), json!("assistant"));
        if let Some(model) = &model {
            message.insert("model".into(), json!(model));
        }
        let written_id = if is_tool { item.get("id").and_then(Value::as_str).map(str::to_string) } else { None };
        message.insert("content".into(), Value::Array(vec![item]));
        message.insert("stop_reason".into(), json!(if is_tool { "tool_use" } else { "end_turn" }));
        message.insert("stop_sequence".into(), Value::Null);
        message.insert("usage".into(), json!({"input_tokens": 0, "output_tokens": 0}));
        let (map, uuid) = self.envelope(block, "assistant", Value::Object(message), 0);
        if is_tool {
            if let (Some(tool), Some(id)) = (&block.tool, written_id) {
                self.calls.insert(tool.call_id.clone(), (uuid, id));
            }
        }
        self.push_synth(map, block, false);
        self.open_message = Some((group_key, message_id, model));
    }

    fn thinking(&mut self, block: &Block) {
        let target = self.options.target_model.as_deref();
        let model = block.model.as_deref();
        let verdict = match &block.reasoning {
            Some(r) if (r.format == Reasoning::ANTHROPIC_SIGNATURE || r.format == Reasoning::ANTHROPIC_REDACTED) && !r.data.is_empty() => {
                let vendor_ok = r.scope.model_provider.as_deref().is_none_or(|p| p == MODEL_PROVIDER);
                let scope_model = r.scope.model.as_deref().or(model);
                let model_ok = target.is_none_or(|t| scope_model == Some(t));
                if vendor_ok && model_ok {
                    Ok(r)
                } else {
                    Err(format!(
                        "reasoning scoped to {}/{} cannot be replayed to {}",
                        r.scope.model_provider.as_deref().unwrap_or("?"),
                        scope_model.unwrap_or("?"),
                        target.unwrap_or("this model")
                    ))
                }
            }
            Some(r) => Err(format!("{} reasoning is not an Anthropic signature", r.format)),
            None => Err("thinking without a signature cannot be replayed to Claude".to_string()),
        };
        match verdict {
            Ok(r) => {
                let item = if r.format == Reasoning::ANTHROPIC_REDACTED {
                    obj! { "type" => "redacted_thinking", "data" => r.data.clone() }
                } else {
                    obj! { "type" => "thinking", "thinking" => block.content.clone(), "signature" => r.data.clone() }
                };
                self.assistant_item(block, item);
            }
            Err(why) => {
                if self.options.foreign_reasoning == ForeignReasoning::Text && !block.content.trim().is_empty() {
                    self.entry(ReportAction::Degraded, block, format!("{why}; written as text"));
                    self.assistant_item(block, json!({"type": "text", "text": format!("[reasoning] {}", block.content)}));
                } else {
                    self.entry(ReportAction::Dropped, block, why);
                }
            }
        }
    }

    fn synthesize(&mut self, blocks: &[Block], i: usize, used: &mut [bool]) -> Result<()> {
        let block = &blocks[i];
        match (block.actor, block.kind) {
            (_, Kind::Status) => {}
            (_, Kind::Error) => self.entry(ReportAction::Dropped, block, "error blocks are not sent to the model"),
            (Actor::System, _) => {
                if block.kind == Kind::Text {
                    self.entry(ReportAction::Degraded, block, "system text written as a meta user message");
                    self.user_text(block, true)?;
                } else {
                    self.entry(ReportAction::Dropped, block, format!("a system {} block has no Claude Code form", block.kind));
                }
            }
            (Actor::User, Kind::Text) => self.user_text(block, false)?,
            (Actor::User, Kind::ToolResult) | (Actor::Assistant, Kind::ToolResult) => {
                let call_id = block.tool.as_ref().map(|t| t.call_id.clone()).unwrap_or_default();
                if self.calls.contains_key(&call_id) && !self.answered.contains(&call_id) {
                    self.tool_result(block, &call_id)?;
                } else {
                    self.entry(ReportAction::Degraded, block, format!("result of unknown or answered call {call_id:?} written as text"));
                    let text = Block { kind: Kind::Text, tool: None, actor: Actor::User, ..block.clone() };
                    self.user_text(&text, false)?;
                }
            }
            (Actor::User, Kind::ToolUse) => {
                self.entry(ReportAction::Dropped, block, "a tool call by the user has no Claude Code form");
            }
            (Actor::User, Kind::Thinking) => self.entry(ReportAction::Dropped, block, "user thinking has no Claude Code form"),
            (Actor::Assistant, Kind::Text) => {
                if block.embeds.is_empty() {
                    self.assistant_item(block, obj! { "type" => "text", "text" => block.content.clone() });
                } else {
                    for item in self.rich_content(block, false)? {
                        self.assistant_item(block, item);
                    }
                }
            }
            (Actor::Assistant, Kind::Thinking) => self.thinking(block),
            (Actor::Assistant, Kind::ToolUse) => {
                let Some(tool) = &block.tool else { return Ok(()) };
                let call_id = tool.call_id.clone();
                let id = self.tool_id(block, &call_id);
                let input = match serde_json::from_str::<Value>(&block.content) {
                    Ok(value @ Value::Object(_)) => value,
                    _ => {
                        self.entry(ReportAction::Degraded, block, "tool input is not a JSON object; written as {\"input\": <text>}");
                        json!({ "input": block.content })
                    }
                };
                let name = tool.name.clone().unwrap_or_default();
                self.assistant_item(block, obj! { "type" => "tool_use", "id" => id, "name" => name, "input" => input });
                // The results follow their calls: once the assistant message ends, pull each call's
                // result forward, or synthesize an error result for a call that has none.
                let message_ends = blocks.get(i + 1).is_none_or(|next| {
                    used[i + 1] || next.actor != Actor::Assistant || next.message_id != block.message_id || native_data(next).is_some()
                });
                if message_ends {
                    self.answer_calls(blocks, i, used)?;
                }
            }
        }
        Ok(())
    }

    /// After the assistant message ending at `blocks[end]`, writes the results of its calls.
    fn answer_calls(&mut self, blocks: &[Block], end: usize, used: &mut [bool]) -> Result<()> {
        let mut start = end;
        while start > 0 && blocks[start - 1].actor == Actor::Assistant && blocks[start - 1].message_id == blocks[end].message_id && native_data(&blocks[start - 1]).is_none() {
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
                None => self.synthetic_result(&blocks[j], &call_id)?,
            }
        }
        Ok(())
    }
}

/// The transcript records of a session and the fidelity report.
pub(crate) fn transcript(session: &Session, blocks: &mut [Block], options: &Options, ctx: &Context) -> Result<(Vec<OutRecord>, Vec<ReportEntry>)> {
    let mut writer = Writer {
        session,
        options,
        ctx,
        report: Vec::new(),
        out: Vec::with_capacity(blocks.len()),
        last_uuid: None,
        last_time: i64::MIN / 2,
        last_user_text: None,
        wrote_synthesized: false,
        calls: HashMap::new(),
        answered: HashSet::new(),
        open_message: None,
        embed_cache: HashMap::new(),
    };
    let mut used = vec![false; blocks.len()];
    let mut i = 0;
    while i < blocks.len() {
        if used[i] {
            i += 1;
            continue;
        }
        if let Some(n) = writer.native_group(blocks, i)? {
            for u in used.iter_mut().skip(i).take(n) {
                *u = true;
            }
            i += n;
            continue;
        }
        if let Some(data) = native_data(&blocks[i]) {
            if data.contains_key("malformed") {
                writer.entry(ReportAction::Dropped, &blocks[i], "a line that was not JSON is not written back");
                used[i] = true;
                i += 1;
                continue;
            }
        }
        used[i] = true;
        writer.synthesize(blocks, i, &mut used)?;
        i += 1;
    }
    if writer.wrote_synthesized {
        if let Some(leaf) = writer.last_uuid.clone() {
            let record = json!({
                "type": "last-prompt",
                "lastPrompt": writer.last_user_text.clone().unwrap_or_default(),
                "leafUuid": leaf,
                "sessionId": ctx.session_id,
            });
            writer.out.push(OutRecord { value: record, block_ids: Vec::new(), system_text: false });
        }
    }
    Ok((writer.out, writer.report))
}

// ----------------------------------------------------------------------------------------------
// Export: Anthropic Messages (what a resume sends)
// ----------------------------------------------------------------------------------------------

struct Message {
    role: &'static str,
    content: Vec<Value>,
    /// Block id of each content item (None for synthesized items).
    ids: Vec<Option<String>>,
    message_id: Option<String>,
    model: Option<String>,
}

/// `{system, messages}` rebuilt from transcript records the way Claude Code's loader does (leaf,
/// `parentUuid` walk, compaction relink, merging), then made valid for the Messages API.
pub(crate) fn messages(mut records: Vec<OutRecord>, options: &Options, report: &mut Vec<ReportEntry>) -> Value {
    let chain = active_chain(&records);
    let mut system: Vec<Value> = Vec::new();
    let mut msgs: Vec<Message> = Vec::new();
    for &index in &chain {
        let rec = &mut records[index];
        let Some(map) = rec.value.as_object_mut() else { continue };
        let ty = map.get("type").and_then(Value::as_str).unwrap_or("");
        if !is_message_type(ty) || map.get("isApiErrorMessage") == Some(&Value::Bool(true)) {
            continue;
        }
        let role = if ty == "user" { "user" } else { "assistant" };
        let Some(Value::Object(message)) = map.get_mut("message") else { continue };
        let items: Vec<Value> = match message.get_mut("content").map(std::mem::take) {
            Some(Value::String(text)) => vec![obj! { "type" => "text", "text" => text }],
            Some(Value::Array(items)) => items,
            _ => continue,
        };
        let ids: Vec<Option<String>> = (0..items.len()).map(|k| rec.block_ids.get(k).or(rec.block_ids.first()).cloned()).collect();
        if rec.system_text {
            for mut item in items {
                if item.get("type").and_then(Value::as_str) == Some("text") {
                    let text = item.get_mut("text").map(std::mem::take).unwrap_or(Value::Null);
                    system.push(obj! { "type" => "text", "text" => text });
                }
            }
            continue;
        }
        let message_id = message.get("id").and_then(Value::as_str).map(str::to_string);
        let model = message.get("model").and_then(Value::as_str).map(str::to_string);
        let merge = match msgs.last() {
            Some(last) if last.role == role => role == "user" || (message_id.is_some() && last.message_id == message_id),
            _ => false,
        };
        if merge {
            let last = msgs.last_mut().expect("checked");
            last.content.extend(items);
            last.ids.extend(ids);
        } else {
            msgs.push(Message { role, content: items, ids, message_id, model });
        }
    }
    let mut entry = |action, id: Option<String>, message: String| report.push(ReportEntry { action, block_id: id, message });

    // Item clean-up: no caller, no cache_control, thinking only where it may be replayed.
    for msg in &mut msgs {
        let mut keep_content = Vec::with_capacity(msg.content.len());
        let mut keep_ids = Vec::with_capacity(msg.ids.len());
        for (mut item, id) in std::mem::take(&mut msg.content).into_iter().zip(std::mem::take(&mut msg.ids)) {
            strip_cache_control(&mut item);
            let ty = item.get("type").and_then(Value::as_str).unwrap_or("").to_string();
            if ty == "tool_use" {
                if let Some(map) = item.as_object_mut() {
                    map.remove("caller");
                }
            }
            if ty == "thinking" || ty == "redacted_thinking" {
                let signed = match ty.as_str() {
                    "thinking" => item.get("signature").and_then(Value::as_str).is_some_and(|s| !s.is_empty()),
                    _ => item.get("data").and_then(Value::as_str).is_some_and(|s| !s.is_empty()),
                };
                if !signed {
                    entry(ReportAction::Dropped, id, "thinking without a signature is refused by the API".into());
                    continue;
                }
                if let Some(target) = options.target_model.as_deref() {
                    if msg.model.as_deref() != Some(target) {
                        entry(
                            ReportAction::Dropped,
                            id,
                            format!("thinking signed by {} is not valid for {target}", msg.model.as_deref().unwrap_or("an unnamed model")),
                        );
                        continue;
                    }
                }
            }
            keep_content.push(item);
            keep_ids.push(id);
        }
        msg.content = keep_content;
        msg.ids = keep_ids;
    }
    msgs.retain(|m| !m.content.is_empty());

    // Tool pairing: every tool_use answered first thing in the next user message; no orphan results.
    let mut i = 0;
    while i < msgs.len() {
        if msgs[i].role == "assistant" {
            let calls: Vec<String> = msgs[i]
                .content
                .iter()
                .filter(|c| c.get("type").and_then(Value::as_str) == Some("tool_use"))
                .filter_map(|c| c.get("id").and_then(Value::as_str).map(str::to_string))
                .collect();
            let call_ids: Vec<Option<String>> = msgs[i]
                .content
                .iter()
                .zip(&msgs[i].ids)
                .filter(|(c, _)| c.get("type").and_then(Value::as_str) == Some("tool_use"))
                .map(|(_, id)| id.clone())
                .collect();
            if !calls.is_empty() && msgs.get(i + 1).is_none_or(|m| m.role != "user") {
                msgs.insert(i + 1, Message { role: "user", content: Vec::new(), ids: Vec::new(), message_id: None, model: None });
            }
            if !calls.is_empty() {
                let next = &mut msgs[i + 1];
                // Results first, in the order they were recorded; then one for each unanswered call.
                let mut results = Vec::new();
                let mut result_ids = Vec::new();
                let mut rest = Vec::new();
                let mut rest_ids = Vec::new();
                for (item, id) in std::mem::take(&mut next.content).into_iter().zip(std::mem::take(&mut next.ids)) {
                    let answers = item.get("type").and_then(Value::as_str) == Some("tool_result")
                        && item.get("tool_use_id").and_then(Value::as_str).is_some_and(|c| calls.iter().any(|k| k == c));
                    if answers {
                        results.push(item);
                        result_ids.push(id);
                    } else {
                        rest.push(item);
                        rest_ids.push(id);
                    }
                }
                for (call, call_block) in calls.iter().zip(call_ids) {
                    let answered = results.iter().any(|r| r.get("tool_use_id").and_then(Value::as_str) == Some(call));
                    if !answered {
                        entry(ReportAction::Synthesized, call_block, format!("tool call {call:?} had no result; an error result was added"));
                        results.push(json!({"type": "tool_result", "tool_use_id": call, "content": "[Tool call interrupted: no result was recorded for this call.]", "is_error": true}));
                        result_ids.push(None);
                    }
                }
                next.content = rest;
                next.ids = rest_ids;
                results.append(&mut next.content);
                result_ids.append(&mut next.ids);
                next.content = results;
                next.ids = result_ids;
            }
        }
        i += 1;
    }
    // Results that answer no call of the previous message are not results.
    for i in 0..msgs.len() {
        if msgs[i].role != "user" {
            continue;
        }
        let previous: HashSet<String> = if i > 0 {
            msgs[i - 1]
                .content
                .iter()
                .filter(|c| c.get("type").and_then(Value::as_str) == Some("tool_use"))
                .filter_map(|c| c.get("id").and_then(Value::as_str).map(str::to_string))
                .collect()
        } else {
            HashSet::new()
        };
        let msg = &mut msgs[i];
        let mut keep = Vec::new();
        let mut keep_ids = Vec::new();
        for (item, id) in std::mem::take(&mut msg.content).into_iter().zip(std::mem::take(&mut msg.ids)) {
            let orphan = item.get("type").and_then(Value::as_str) == Some("tool_result")
                && !item.get("tool_use_id").and_then(Value::as_str).is_some_and(|c| previous.contains(c));
            if orphan {
                entry(ReportAction::Dropped, id, "a tool result that answers no call of the previous message".into());
            } else {
                keep.push(item);
                keep_ids.push(id);
            }
        }
        msg.content = keep;
        msg.ids = keep_ids;
    }
    msgs.retain(|m| !m.content.is_empty());
    // Roles alternate (merge neighbours left by the clean-up), and the first message is the user's.
    let mut merged: Vec<Message> = Vec::with_capacity(msgs.len());
    for msg in msgs {
        match merged.last_mut() {
            Some(last) if last.role == msg.role => {
                last.content.extend(msg.content);
                last.ids.extend(msg.ids);
            }
            _ => merged.push(msg),
        }
    }
    if merged.first().is_some_and(|m| m.role == "assistant") {
        entry(ReportAction::Synthesized, None, "the conversation starts with the assistant; a user message was added first".into());
        merged.insert(0, Message { role: "user", content: vec![json!({"type": "text", "text": "(continued)"})], ids: vec![None], message_id: None, model: None });
    }
    let messages: Vec<Value> = merged.into_iter().map(|m| obj! { "role" => m.role, "content" => m.content }).collect();
    let mut out = Map::new();
    if !system.is_empty() {
        out.insert("system".into(), Value::Array(system));
    }
    out.insert("messages".into(), Value::Array(messages));
    Value::Object(out)
}

fn strip_cache_control(item: &mut Value) {
    if let Value::Object(map) = item {
        map.remove("cache_control");
        if let Some(Value::Array(parts)) = map.get_mut("content") {
            for part in parts {
                strip_cache_control(part);
            }
        }
    }
}

/// Indices of the records on the conversation Claude Code resumes, oldest first.
pub(crate) fn active_chain(records: &[OutRecord]) -> Vec<usize> {
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut parent: HashMap<&str, Option<&str>> = HashMap::new();
    let mut leaf_pointer: Option<&str> = None;
    let mut last_message: Option<usize> = None;
    let mut last_any_message: Option<usize> = None;
    let mut relinks: Vec<(&str, Vec<&str>)> = Vec::new();
    for (i, rec) in records.iter().enumerate() {
        let Some(map) = rec.value.as_object() else { continue };
        let ty = map.get("type").and_then(Value::as_str).unwrap_or("");
        if ty == "last-prompt" {
            if let Some(leaf) = map.get("leafUuid").and_then(Value::as_str) {
                leaf_pointer = Some(leaf);
            }
            continue;
        }
        if !matches!(ty, "user" | "assistant" | "system" | "attachment" | "progress") {
            continue;
        }
        let Some(uuid) = map.get("uuid").and_then(Value::as_str) else { continue };
        index.insert(uuid, i);
        parent.insert(uuid, map.get("parentUuid").and_then(Value::as_str));
        if is_message_type(ty) {
            last_any_message = Some(i);
            let side = map.get("isSidechain") == Some(&Value::Bool(true)) || map.contains_key("teamName");
            if !side && map.get("isMeta") != Some(&Value::Bool(true)) {
                last_message = Some(i);
            }
        }
        if ty == "system" && map.get("subtype").and_then(Value::as_str) == Some("compact_boundary") {
            if let Some(preserved) = map.get("compactMetadata").and_then(|m| m.get("preservedMessages")) {
                if let (Some(anchor), Some(uuids)) =
                    (preserved.get("anchorUuid").and_then(Value::as_str), preserved.get("uuids").and_then(Value::as_array))
                {
                    let uuids: Vec<&str> = uuids.iter().filter_map(Value::as_str).collect();
                    if !uuids.is_empty() {
                        relinks.push((anchor, uuids));
                    }
                }
            }
        }
    }
    for (anchor, uuids) in relinks {
        let last = *uuids.last().expect("non-empty");
        let preserved: HashSet<&str> = uuids.iter().copied().collect();
        for (child, p) in parent.iter_mut() {
            if *p == Some(anchor) && !preserved.contains(child) {
                *p = Some(last);
            }
        }
        for (k, uuid) in uuids.iter().enumerate() {
            let p = if k == 0 { anchor } else { uuids[k - 1] };
            parent.insert(uuid, Some(p));
        }
    }
    let leaf = leaf_pointer
        .and_then(|l| index.get(l).copied())
        .or(last_message)
        .or(last_any_message);
    let Some(leaf) = leaf else { return Vec::new() };
    let mut chain = Vec::new();
    let mut seen = HashSet::new();
    let mut current = records[leaf].value.get("uuid").and_then(Value::as_str);
    while let Some(uuid) = current {
        if !seen.insert(uuid) {
            break;
        }
        let Some(&i) = index.get(uuid) else { break };
        chain.push(i);
        current = parent.get(uuid).copied().flatten();
    }
    chain.reverse();
    gather_parallel_calls(records, chain)
}

/// Parallel tool calls fork the chain: each result row is parented to the row holding its call, so
/// a walk from the leaf passes through one call row and one result only. Claude Code gathers the
/// other rows of the response and their results back; so does this.
fn gather_parallel_calls(records: &[OutRecord], chain: Vec<usize>) -> Vec<usize> {
    let row = |i: usize| records[i].value.as_object();
    let content = |i: usize| -> Option<&Vec<Value>> { row(i)?.get("message")?.get("content")?.as_array() };
    let is_main = |i: usize| row(i).is_some_and(|m| m.get("isSidechain") != Some(&Value::Bool(true)));
    let mut rows_of_message: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut results_of_call: HashMap<&str, Vec<usize>> = HashMap::new();
    for i in 0..records.len() {
        let Some(map) = row(i) else { continue };
        if !is_main(i) {
            continue;
        }
        match map.get("type").and_then(Value::as_str) {
            Some("assistant") => {
                if let Some(id) = map.get("message").and_then(|m| m.get("id")).and_then(Value::as_str) {
                    rows_of_message.entry(id).or_default().push(i);
                }
            }
            Some("user") => {
                for item in content(i).into_iter().flatten() {
                    if let Some(call) = item.get("tool_use_id").and_then(Value::as_str) {
                        results_of_call.entry(call).or_default().push(i);
                    }
                }
            }
            _ => {}
        }
    }
    let calls_in = |i: usize| -> Vec<&str> {
        content(i)
            .into_iter()
            .flatten()
            .filter(|c| c.get("type").and_then(Value::as_str) == Some("tool_use"))
            .filter_map(|c| c.get("id").and_then(Value::as_str))
            .collect()
    };
    let mut out = Vec::with_capacity(chain.len());
    let mut emitted: HashSet<usize> = HashSet::new();
    let mut last_calls: Vec<&str> = Vec::new();
    for &i in &chain {
        if emitted.contains(&i) {
            continue;
        }
        let map = row(i);
        let ty = map.and_then(|m| m.get("type")).and_then(Value::as_str).unwrap_or("");
        let message_id = map.and_then(|m| m.get("message")).and_then(|m| m.get("id")).and_then(Value::as_str);
        if ty == "assistant" {
            let group = message_id.and_then(|id| rows_of_message.get(id)).cloned().unwrap_or_else(|| vec![i]);
            let group: Vec<usize> = if group.contains(&i) { group } else { vec![i] };
            last_calls = group.iter().flat_map(|&j| calls_in(j)).collect();
            for j in group {
                if emitted.insert(j) {
                    out.push(j);
                }
            }
            continue;
        }
        let answers = ty == "user" && content(i).into_iter().flatten().any(|c| c.get("type").and_then(Value::as_str) == Some("tool_result"));
        if answers && !last_calls.is_empty() {
            let mut rows: Vec<usize> = last_calls.iter().flat_map(|c| results_of_call.get(c).cloned().unwrap_or_default()).collect();
            rows.push(i);
            rows.sort_unstable();
            rows.dedup();
            for j in rows {
                if emitted.insert(j) {
                    out.push(j);
                }
            }
            last_calls.clear();
            continue;
        }
        if emitted.insert(i) {
            out.push(i);
        }
    }
    out
}

// ----------------------------------------------------------------------------------------------
// Live capture: --output-format stream-json events
// ----------------------------------------------------------------------------------------------

/// The blocks one stream-json event completes.
pub(crate) fn event_blocks(event: &Value) -> Result<Vec<Block>> {
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

// ----------------------------------------------------------------------------------------------
// Resume
// ----------------------------------------------------------------------------------------------

/// The folder name Claude Code gives a working directory under `projects/` (formats §1.2): every
/// UTF-16 unit outside `[A-Za-z0-9]` becomes `-`; past 200 units the name is cut and a base-36 hash
/// of the path is appended.
pub fn project_slug(cwd: &str) -> String {
    let units: Vec<u16> = cwd.encode_utf16().collect();
    let slug: String = units
        .iter()
        .map(|&u| if u < 128 && (u as u8).is_ascii_alphanumeric() { u as u8 as char } else { '-' })
        .collect();
    if units.len() <= 200 {
        return slug;
    }
    let mut h: i32 = 0;
    for &u in &units {
        h = h.wrapping_mul(31).wrapping_add(u as i32);
    }
    let mut n = (h as i64).unsigned_abs();
    let mut digits = Vec::new();
    loop {
        let d = (n % 36) as u8;
        digits.push(if d < 10 { b'0' + d } else { b'a' + d - 10 });
        n /= 36;
        if n == 0 {
            break;
        }
    }
    digits.reverse();
    format!("{}-{}", &slug[..200], String::from_utf8(digits).unwrap_or_default())
}

/// Writes the transcript under `<config>/projects/<slug(cwd)>/<session>.jsonl` and returns the plan.
pub(crate) fn prepare_resume(session: &Session, options: &ResumeOptions) -> Result<ResumePlan> {
    let (mut blocks, replayed) = crate::replay::load(session, crate::model::Runtime::ClaudeCode)?;
    let last_seq = session.len()?.checked_sub(1);
    let mut ctx = Context::for_session(session, &blocks)?;
    let cwd = match options.cwd.clone() {
        Some(cwd) => cwd,
        None => match &ctx.cwd {
            Some(cwd) => PathBuf::from(cwd),
            None => std::env::current_dir()
                .map_err(|source| Error::Io { context: "cannot read the current directory".into(), source })?,
        },
    };
    let cwd_text = cwd.to_str().ok_or_else(|| Error::invalid_field("cwd", "cwd must be valid UTF-8"))?;
    if !cwd.is_absolute() {
        return Err(Error::invalid_field("cwd", format!("cwd {cwd_text:?} must be an absolute path")));
    }
    // Claude Code names the folder after the physical path.
    let physical = std::fs::canonicalize(&cwd).unwrap_or_else(|_| cwd.clone());
    let physical_text = physical.to_str().unwrap_or(cwd_text).to_string();
    if let Some(id) = &options.options.session_id {
        if !is_uuid(id) {
            return Err(Error::invalid_field("session_id", format!("Claude Code session ids are UUIDs, not {id:?}")));
        }
        ctx.session_id = id.to_ascii_lowercase();
    }
    if !is_uuid(&ctx.session_id) {
        return Err(Error::invalid_field("session_id", format!("Claude Code session ids are UUIDs, not {:?}", ctx.session_id)));
    }
    ctx.cwd = Some(physical_text.clone());
    let config_dir = match (&options.config_dir, &options.home) {
        (Some(dir), _) => dir.clone(),
        (None, Some(home)) => home.join(".claude"),
        (None, None) => match std::env::var_os("CLAUDE_CONFIG_DIR") {
            Some(dir) => PathBuf::from(dir),
            None => super::home_dir()?.join(".claude"),
        },
    };
    let dir = config_dir.join("projects").join(project_slug(&physical_text));
    let file = dir.join(format!("{}.jsonl", ctx.session_id));
    if file.parent() != Some(dir.as_path()) {
        return Err(Error::invalid_field("session_id", "the session id would escape the projects folder"));
    }
    let (records, mut report) = transcript(session, &mut blocks, &options.options, &ctx)?;
    report.splice(0..0, replayed);
    super::check_strict(&options.options, &report)?;
    let mut text = String::new();
    for record in &records {
        text.push_str(&serde_json::to_string(&record.value).map_err(|e| Error::Internal(e.to_string()))?);
        text.push('\n');
    }
    super::write_private(&file, text.as_bytes())?;
    if let Some(last_seq) = last_seq {
        session.bind(crate::model::Runtime::ClaudeCode, &ctx.session_id, last_seq)?;
    }
    let mut env = std::collections::BTreeMap::new();
    if options.config_dir.is_some() {
        env.insert("CLAUDE_CONFIG_DIR".to_string(), config_dir.display().to_string());
    } else if let Some(home) = &options.home {
        env.insert("HOME".to_string(), home.display().to_string());
    }
    Ok(ResumePlan {
        session_id: ctx.session_id.clone(),
        files: vec![file],
        argv: vec!["claude".into(), "--resume".into(), ctx.session_id],
        cwd: Some(cwd),
        env,
        setup: Vec::new(),
        ran: Vec::new(),
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

/// The runtime a record belongs to when it is clearly not Claude Code's.
fn other_runtime(value: &Value) -> Option<&'static str> {
    let map = value.as_object()?;
    let ty = map.get("type").and_then(Value::as_str).unwrap_or("");
    if (map.contains_key("payload") && matches!(ty, "session_meta" | "response_item" | "event_msg" | "turn_context" | "compacted"))
        || super::codex::looks_like_line(value)
    {
        return Some("Codex");
    }
    if map.contains_key("info") && map.contains_key("messages") {
        return Some("OpenCode");
    }
    None
}

/// Whether a first record looks like Claude Code's.
pub(crate) fn looks_like_record(value: &Value) -> bool {
    let Some(map) = value.as_object() else { return false };
    // A `stream-json` event (what `claude -p` prints, for `ingest`) names its session
    // `session_id`; a transcript record names it `sessionId`.
    if map.contains_key("session_id") && !map.contains_key("sessionId") {
        return false;
    }
    let ty = map.get("type").and_then(Value::as_str).unwrap_or("");
    let known = matches!(
        ty,
        "user" | "assistant" | "system" | "attachment" | "progress" | "summary" | "last-prompt" | "queue-operation"
            | "file-history-snapshot" | "custom-title" | "ai-title" | "cost-state" | "mode" | "permission-mode"
    ) || ty.starts_with("api-request");
    known && !map.contains_key("payload") || map.contains_key("parentUuid") || map.contains_key("leafUuid")
}
