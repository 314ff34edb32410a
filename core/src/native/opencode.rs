//! OpenCode (1.x): the session document `opencode export` prints and `opencode import` takes
//! (`{info, messages: [{info, parts}]}`), sessions read straight from an `opencode.db`, the
//! prompt prelude for a fresh session, live capture of bus and `run --format json` events, and the
//! files a resume needs. Formats: `../shared/formats/opencode.md` (verified with 1.18.33).
//!
//! Import gives one block per part (a `tool` part gives a `tool_use` and, once it finished, a
//! `tool_result`); bookkeeping parts (`step-start`, `step-finish`, `snapshot`, `patch`, `agent`,
//! `subtask`, `retry`, `compaction`, unknown types) are `status` blocks. Each block keeps the part
//! with its canonical payloads taken out (`native.data.part`, payload slots set to `null`, data URLs
//! as `{"embed": id}`); the first block of a message keeps the message info (`native.data.message`),
//! and a first `status` block keeps the session info (`native.data.session`), so that an imported
//! session exports back to the same document.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::error::{Error, Location, Result};
use crate::model::{Actor, Block, Embed, Kind, Native, Reasoning, Scope, Timestamp};
use crate::native::common::{data_url, data_url_embed, embed_id, embed_link, parts_digest, take_string, truncate_chars};
use crate::native::{ForeignReasoning, Options, ReportAction, ReportEntry, ResumeOptions, ResumePlan, Source};
use crate::store::{ImportSink, ImportedMeta, Session, Store};

/// The runtime name, as in `native.runtime` and `provider`.
pub const RUNTIME: &str = "opencode";
/// The OpenCode version written into documents this crate makes (the version the format was verified with).
pub const TARGET_VERSION: &str = "1.18.33";

/// What OpenCode sends in place of the result of a call that never finished.
const INTERRUPTED: &str = "[Tool execution was interrupted]";

// ----------------------------------------------------------------------------------------------
// Import
// ----------------------------------------------------------------------------------------------

/// Imports a session document (JSON text, bytes, a file, a parsed value) or a session of an
/// `opencode.db` (a path to the database; `options.session_id` picks the session, default: the
/// only one, or the most recently updated).
pub(crate) fn import(store: &Store, source: Source, options: &Options) -> Result<Session> {
    let bytes = match source {
        Source::Path(path) => {
            if is_sqlite(&path)? {
                return import_db(store, &path, options);
            }
            std::fs::read(&path).map_err(|source| Error::Io { context: format!("cannot read {}", path.display()), source })?
        }
        Source::Text(text) => text.into_bytes(),
        Source::Bytes(bytes) => bytes,
        Source::Value(value) => return import_document(store, value, options.session_id.clone()),
    };
    import_text(store, &bytes, options.session_id.clone())
}

fn is_sqlite(path: &Path) -> Result<bool> {
    let head = crate::native::jsonl::head(path, 16)?;
    Ok(head.starts_with(b"SQLite format 3\0"))
}

/// Imports a document from its JSON text, one message at a time: the document is never held as
/// a whole tree of values, only its text and the message being converted.
fn import_text(store: &Store, bytes: &[u8], session_id: Option<String>) -> Result<Session> {
    let bytes = bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(bytes);
    store.import_session(session_id, |sink| {
        let mut importer = Importer::new(sink);
        let mut de = serde_json::Deserializer::from_slice(bytes);
        let parsed = serde::de::DeserializeSeed::deserialize(DocumentSeed(&mut importer), &mut de).and_then(|()| de.end());
        if let Some(error) = importer.failed.take() {
            return Err(error);
        }
        parsed.map_err(|e| {
            // serde_json counts lines and columns from 1.
            let offset = line_offset(bytes, e.line()) + e.column().saturating_sub(1);
            Error::InvalidInput {
                message: format!("not an OpenCode session document: {}", super::common::json_reason(&e)),
                location: Location { line: Some(e.line() as u64), offset: Some(offset as u64), ..Default::default() },
            }
        })?;
        importer.finish()
    })
}

/// Turns the parts of a document into blocks as they arrive.
struct Importer<'s, 't> {
    sink: &'s mut ImportSink<'t>,
    info: Option<Value>,
    /// Messages that came before `info` (OpenCode writes `info` first), held until it comes.
    early: Vec<Value>,
    extra: Map<String, Value>,
    messages_seen: bool,
    index: usize,
    last: Timestamp,
    /// The error that stopped the parse (serde's own error type cannot carry it).
    failed: Option<Error>,
}

impl<'s, 't> Importer<'s, 't> {
    fn new(sink: &'s mut ImportSink<'t>) -> Self {
        Importer { sink, info: None, early: Vec::new(), extra: Map::new(), messages_seen: false, index: 0, last: Timestamp::now(), failed: None }
    }

    fn head(&mut self, info: Value) -> Result<()> {
        let info_map = object(&info, "info")?;
        string(info_map, "id", "info")?;
        let created = millis(info.get("time").and_then(|t| t.get("created"))).unwrap_or_else(Timestamp::now);
        let mut head = Block::new(Actor::System, Kind::Status, format!("opencode session {}", info["id"].as_str().unwrap_or("?")));
        head.created_at = created;
        self.last = created;
        self.info = Some(info.clone());
        head.native = Some(Native { runtime: RUNTIME.into(), data: obj! { "session" => info } });
        self.sink.push(head)?;
        for message in std::mem::take(&mut self.early) {
            self.message(message)?;
        }
        Ok(())
    }

    fn message(&mut self, message: Value) -> Result<()> {
        if self.info.is_none() {
            self.early.push(message);
            return Ok(());
        }
        let index = self.index;
        self.index += 1;
        check_message(&message, index)?;
        for block in message_blocks(message, &mut self.last).map_err(|e| in_message(e, index))? {
            self.sink.push(block).map_err(|e| in_message(e, index))?;
        }
        Ok(())
    }

    fn finish(mut self) -> Result<ImportedMeta> {
        let Some(info) = self.info.take() else {
            return Err(bad("info", "missing"));
        };
        if !self.messages_seen {
            return Err(bad("messages", "missing"));
        }
        if !self.extra.is_empty() {
            // Keys beside info and messages are kept with the session info, in the first block.
            let extra = Value::Object(std::mem::take(&mut self.extra));
            let native = Native { runtime: RUNTIME.into(), data: obj! { "session" => info.clone(), "document" => extra } };
            self.sink.set_native(0, &native)?;
        }
        Ok(ImportedMeta {
            id: info["id"].as_str().map(str::to_string),
            title: info["title"].as_str().map(str::to_string),
            cwd: info["directory"].as_str().map(str::to_string),
        })
    }
}

struct DocumentSeed<'i, 's, 't>(&'i mut Importer<'s, 't>);

impl<'de> serde::de::DeserializeSeed<'de> for DocumentSeed<'_, '_, '_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> std::result::Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

fn stop<E: serde::de::Error>(importer: &mut Importer<'_, '_>, error: Error) -> E {
    let message = error.to_string();
    importer.failed = Some(error);
    E::custom(message)
}

impl<'de> serde::de::Visitor<'de> for DocumentSeed<'_, '_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an OpenCode session document {info, messages}")
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> std::result::Result<(), A::Error> {
        let importer = self.0;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "info" => {
                    let info: Value = map.next_value()?;
                    importer.head(info).map_err(|e| stop(importer, e))?;
                }
                "messages" => {
                    importer.messages_seen = true;
                    map.next_value_seed(MessagesSeed(&mut *importer))?;
                }
                _ => {
                    let value: Value = map.next_value()?;
                    importer.extra.insert(key, value);
                }
            }
        }
        Ok(())
    }
}

struct MessagesSeed<'i, 's, 't>(&'i mut Importer<'s, 't>);

impl<'de> serde::de::DeserializeSeed<'de> for MessagesSeed<'_, '_, '_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> std::result::Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for MessagesSeed<'_, '_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("\"messages\" as an array")
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<(), A::Error> {
        let importer = self.0;
        while let Some(message) = seq.next_element::<Value>()? {
            importer.message(message).map_err(|e| stop(importer, e))?;
        }
        Ok(())
    }
}

fn line_offset(bytes: &[u8], line: usize) -> usize {
    if line <= 1 {
        return 0;
    }
    bytes.iter().enumerate().filter(|(_, b)| **b == b'\n').nth(line - 2).map(|(i, _)| i + 1).unwrap_or(0)
}

/// An `INVALID_INPUT` naming the JSON path of the offending value.
fn bad(path: &str, message: impl Into<String>) -> Error {
    Error::InvalidInput {
        message: message.into(),
        location: Location { field: Some(path.to_string()), ..Default::default() },
    }
}

fn object<'a>(value: &'a Value, path: &str) -> Result<&'a Map<String, Value>> {
    value.as_object().ok_or_else(|| bad(path, format!("expected an object, not {}", super::json_type(value))))
}

fn string<'a>(map: &'a Map<String, Value>, key: &str, path: &str) -> Result<&'a str> {
    match map.get(key) {
        Some(Value::String(s)) => Ok(s),
        None => Err(bad(&format!("{path}.{key}"), "missing")),
        Some(other) => Err(bad(&format!("{path}.{key}"), format!("expected a string, not {}", super::json_type(other)))),
    }
}

fn opt_string<'a>(map: &'a Map<String, Value>, key: &str, path: &str) -> Result<Option<&'a str>> {
    match map.get(key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(bad(&format!("{path}.{key}"), format!("expected a string, not {}", super::json_type(other)))),
    }
}

fn millis(value: Option<&Value>) -> Option<Timestamp> {
    let ms = value?.as_f64()?;
    Timestamp::from_millis(ms as i64).ok()
}

/// Checks the shape OpenCode itself requires of a message before anything of it is stored.
fn check_message(message: &Value, i: usize) -> Result<()> {
    let path = format!("messages[{i}]");
    let map = object(message, &path)?;
    let info = object(map.get("info").unwrap_or(&Value::Null), &format!("{path}.info"))?;
    string(info, "id", &format!("{path}.info"))?;
    string(info, "role", &format!("{path}.info"))?;
    opt_string(info, "parentID", &format!("{path}.info"))?;
    let parts = match map.get("parts") {
        Some(Value::Array(parts)) => parts,
        None => return Err(bad(&format!("{path}.parts"), "missing")),
        Some(other) => return Err(bad(&format!("{path}.parts"), format!("expected an array, not {}", super::json_type(other)))),
    };
    for (j, part) in parts.iter().enumerate() {
        check_part(part, &format!("{path}.parts[{j}]"))?;
    }
    Ok(())
}

fn check_part(part: &Value, path: &str) -> Result<()> {
    let map = object(part, path)?;
    let ty = string(map, "type", path)?;
    match ty {
        "text" | "reasoning" => {
            string(map, "text", path)?;
        }
        "tool" => {
            string(map, "callID", path)?;
            string(map, "tool", path)?;
            let state = object(map.get("state").unwrap_or(&Value::Null), &format!("{path}.state"))?;
            let status = string(state, "status", &format!("{path}.state"))?;
            match status {
                "completed" => {
                    string(state, "output", &format!("{path}.state"))?;
                }
                "error" => {
                    string(state, "error", &format!("{path}.state"))?;
                }
                _ => {}
            }
            if let Some(attachments) = state.get("attachments") {
                let Value::Array(list) = attachments else {
                    return Err(bad(&format!("{path}.state.attachments"), "expected an array"));
                };
                for (k, a) in list.iter().enumerate() {
                    check_part(a, &format!("{path}.state.attachments[{k}]"))?;
                }
            }
        }
        "file" => {
            string(map, "url", path)?;
            string(map, "mime", path)?;
        }
        _ => {}
    }
    Ok(())
}

/// Model provider of an OpenCode `providerID` (OpenCode's own provider ids name the vendor for the
/// bundled providers; a custom provider keeps its id).
fn model_provider_of(provider_id: &str) -> String {
    match provider_id {
        "anthropic" | "google-vertex-anthropic" => "anthropic".into(),
        "openai" | "azure" => "openai".into(),
        "google" | "google-vertex" => "google".into(),
        other => other.into(),
    }
}

struct MessageContext {
    actor: Actor,
    id: String,
    turn: Option<String>,
    created: Timestamp,
    /// `(model_provider, model)` of an assistant message.
    model: Option<(String, String)>,
}

/// Imports a parsed document.
fn import_document(store: &Store, document: Value, session_id: Option<String>) -> Result<Session> {
    let Value::Object(mut root) = document else {
        return Err(bad("$", format!("expected an object {{info, messages}}, not {}", super::json_type(&document))));
    };
    let info = root.remove("info").ok_or_else(|| bad("info", "missing"))?;
    let messages = match root.remove("messages") {
        Some(Value::Array(messages)) => messages,
        None => return Err(bad("messages", "missing")),
        Some(other) => return Err(bad("messages", format!("expected an array, not {}", super::json_type(&other)))),
    };
    store.import_session(session_id, |sink| {
        let mut importer = Importer::new(sink);
        importer.head(info)?;
        importer.messages_seen = true;
        for message in messages {
            importer.message(message)?;
        }
        importer.extra = root;
        importer.finish()
    })
}

/// An error inside `scope` (a JSON path such as `messages[2]`): its field made a path from there
/// (the message names it through the location).
fn within(e: Error, scope: &str) -> Error {
    match e {
        Error::InvalidInput { message, mut location } => {
            let field = location.field.take().map(|f| format!("{scope}.{f}")).unwrap_or_else(|| scope.to_string());
            Error::InvalidInput { message, location: Location { field: Some(field), ..location } }
        }
        other => other,
    }
}

fn in_message(e: Error, index: usize) -> Error {
    within(e, &format!("messages[{index}]"))
}

/// The blocks of one `{info, parts}` message.
fn message_blocks(message: Value, last: &mut Timestamp) -> Result<Vec<Block>> {
    let Value::Object(mut message) = message else { unreachable!("checked") };
    let info = message.remove("info").unwrap_or(Value::Null);
    let parts = match message.remove("parts") {
        Some(Value::Array(parts)) => parts,
        _ => Vec::new(),
    };
    let role = info["role"].as_str().unwrap_or("");
    let created = millis(info.get("time").and_then(|t| t.get("created"))).unwrap_or(*last);
    *last = created;
    let ctx = MessageContext {
        actor: match role {
            "user" => Actor::User,
            "assistant" => Actor::Assistant,
            _ => Actor::System,
        },
        id: info["id"].as_str().unwrap_or("").to_string(),
        turn: if role == "user" { info["id"].as_str().map(str::to_string) } else { info["parentID"].as_str().map(str::to_string) },
        created,
        model: match (info["providerID"].as_str(), info["modelID"].as_str()) {
            (Some(p), Some(m)) if role == "assistant" => Some((model_provider_of(p), m.to_string())),
            _ => None,
        },
    };
    let mut blocks = Vec::with_capacity(parts.len() + 1);
    for (j, part) in parts.into_iter().enumerate() {
        blocks.extend(part_blocks(part, &ctx).map_err(|e| within(e, &format!("parts[{j}]")))?);
    }
    let extra = if message.is_empty() { None } else { Some(Value::Object(message)) };
    if blocks.is_empty() {
        let mut block = Block::new(Actor::System, Kind::Status, format!("{role} message {} without parts", ctx.id));
        block.created_at = created;
        block.message_id = Some(ctx.id.clone());
        block.native = Some(Native { runtime: RUNTIME.into(), data: obj! { "message" => info } });
        blocks.push(block);
    } else if let Some(Value::Object(data)) = blocks[0].native.as_mut().map(|n| &mut n.data) {
        data.insert("message".into(), info);
    }
    if let (Some(extra), Some(Value::Object(data))) = (extra, blocks[0].native.as_mut().map(|n| &mut n.data)) {
        data.insert("message_extra".into(), extra);
    }
    Ok(blocks)
}

fn attribute(mut block: Block, ctx: &MessageContext) -> Block {
    if ctx.actor == Actor::Assistant {
        block.provider = Some(RUNTIME.into());
        if let Some((model_provider, model)) = &ctx.model {
            block.model_provider = Some(model_provider.clone());
            block.model = Some(model.clone());
        }
    }
    block.message_id = Some(ctx.id.clone());
    block.turn_id = ctx.turn.clone();
    block
}

fn with_part(mut block: Block, part: Value) -> Block {
    block.native = Some(Native { runtime: RUNTIME.into(), data: obj! { "part" => part } });
    block
}

/// A `data:` URL in `map[key]` as an embed, the URL replaced by `{"embed": id}` when the bytes
/// give it back exactly.
fn take_data_url(map: &mut Map<String, Value>, key: &str) -> Option<(String, Embed)> {
    let url = map.get(key)?.as_str()?;
    let (mut embed, canonical) = data_url_embed(url)?;
    embed.name = map.get("filename").and_then(Value::as_str).map(str::to_string);
    let id = embed_id(&embed);
    if canonical {
        map.insert(key.into(), obj! { "embed" => id.clone() });
    }
    Some((id, embed))
}

fn part_time(part: &Map<String, Value>, ctx: &MessageContext) -> Timestamp {
    millis(part.get("time").and_then(|t| t.get("start"))).unwrap_or(ctx.created)
}

/// The blocks of one part.
fn part_blocks(part: Value, ctx: &MessageContext) -> Result<Vec<Block>> {
    let Value::Object(mut map) = part else { unreachable!("checked") };
    let ty = map.get("type").and_then(Value::as_str).unwrap_or("").to_string();
    let at = part_time(&map, ctx);
    let timed = |mut block: Block| {
        block.created_at = at;
        block
    };
    let actor = if ctx.actor == Actor::System { Actor::User } else { ctx.actor };
    match ty.as_str() {
        "text" => {
            let text = take_string(&mut map, "text");
            Ok(vec![with_part(timed(attribute(Block::text(actor, text), ctx)), Value::Object(map))])
        }
        "reasoning" => {
            let text = take_string(&mut map, "text");
            let mut block = attribute(Block::new(Actor::Assistant, Kind::Thinking, text), ctx);
            block.reasoning = reasoning_of(&map, ctx);
            Ok(vec![with_part(timed(block), Value::Object(map))])
        }
        "tool" => {
            let call = map.get("callID").and_then(Value::as_str).unwrap_or("").to_string();
            let name = map.get("tool").and_then(Value::as_str).unwrap_or("").to_string();
            let Some(Value::Object(state)) = map.get_mut("state") else { unreachable!("checked") };
            let status = state.get("status").and_then(Value::as_str).unwrap_or("").to_string();
            let input = match state.get_mut("input") {
                Some(slot @ Value::Object(_)) => std::mem::replace(slot, Value::Null).to_string(),
                _ => String::new(),
            };
            let (output, is_error) = match status.as_str() {
                "completed" => (Some(take_string(state, "output")), false),
                "error" => (Some(take_string(state, "error")), true),
                _ => (None, false),
            };
            let mut embeds = Vec::new();
            if let Some(Value::Array(attachments)) = state.get_mut("attachments") {
                for attachment in attachments.iter_mut() {
                    if let Value::Object(a) = attachment {
                        if let Some(embed) = take_data_url(a, "url") {
                            embeds.push(embed);
                        }
                    }
                }
            }
            let started = millis(state.get("time").and_then(|t| t.get("start"))).unwrap_or(ctx.created);
            let ended = millis(state.get("time").and_then(|t| t.get("end"))).unwrap_or(started);
            let mut call_block = attribute(Block::tool_use(&call, &name, input), ctx);
            call_block.created_at = started;
            let mut blocks = vec![with_part(call_block, Value::Object(map))];
            if let Some(output) = output {
                let mut content = output;
                for (id, embed) in &embeds {
                    content.push('\n');
                    content.push_str(&embed_link(embed.name.as_deref().unwrap_or("attachment"), id));
                }
                let mut result = Block::tool_result(&call, content, is_error);
                result.created_at = ended;
                result.message_id = Some(ctx.id.clone());
                result.turn_id = ctx.turn.clone();
                result.embeds = embeds.into_iter().collect();
                result.native = Some(Native { runtime: RUNTIME.into(), data: obj! { "result_of" => call } });
                blocks.push(result);
            }
            Ok(blocks)
        }
        "file" => {
            let mime = map.get("mime").and_then(Value::as_str).unwrap_or("").to_string();
            let name = map.get("filename").and_then(Value::as_str).unwrap_or("file").to_string();
            match take_data_url(&mut map, "url") {
                Some((id, embed)) => {
                    let mut block = attribute(Block::text(actor, embed_link(&name, &id)), ctx);
                    block.embeds.insert(id, embed);
                    Ok(vec![with_part(timed(block), Value::Object(map))])
                }
                None => {
                    let url = map.get("url").and_then(Value::as_str).unwrap_or("");
                    let line = format!("file {name} ({mime}): {url}");
                    Ok(vec![with_part(timed(attribute(Block::new(Actor::System, Kind::Status, line), ctx)), Value::Object(map))])
                }
            }
        }
        other => {
            let line = status_line(other, &map);
            let kind = if other == "retry" { Kind::Error } else { Kind::Status };
            let mut block = attribute(Block::new(Actor::System, kind, line), ctx);
            block.provider = None;
            block.model_provider = None;
            block.model = None;
            Ok(vec![with_part(timed(block), Value::Object(map))])
        }
    }
}

fn status_line(ty: &str, part: &Map<String, Value>) -> String {
    let s = |key: &str| part.get(key).and_then(Value::as_str).unwrap_or("");
    match ty {
        "step-start" => "step start".into(),
        "step-finish" => format!("step finish: {}", s("reason")),
        "snapshot" => format!("snapshot {}", s("snapshot")),
        "patch" => format!("patch {} ({} files)", s("hash"), part.get("files").and_then(Value::as_array).map_or(0, Vec::len)),
        "agent" => format!("agent {}", s("name")),
        "subtask" => format!("subtask for {}: {}", s("agent"), s("description")),
        "retry" => {
            let message = part.get("error").and_then(|e| e.get("data")).and_then(|d| d.get("message")).and_then(Value::as_str).unwrap_or("");
            format!("retry {}: {message}", part.get("attempt").and_then(Value::as_u64).unwrap_or(0))
        }
        "compaction" => "compaction".into(),
        other => format!("[{other} part]"),
    }
}

/// The opaque reasoning of a reasoning part's provider metadata.
fn reasoning_of(part: &Map<String, Value>, ctx: &MessageContext) -> Option<Reasoning> {
    let metadata = part.get("metadata")?;
    let scope = |model_provider: &str| Scope {
        provider: Some(RUNTIME.into()),
        model_provider: Some(ctx.model.as_ref().map(|m| m.0.clone()).unwrap_or_else(|| model_provider.into())),
        model: ctx.model.as_ref().map(|m| m.1.clone()),
    };
    if let Some(signature) = metadata.get("anthropic").and_then(|a| a.get("signature")).and_then(Value::as_str) {
        return Some(Reasoning { format: Reasoning::ANTHROPIC_SIGNATURE.into(), data: signature.into(), scope: scope("anthropic") });
    }
    if let Some(data) = metadata.get("anthropic").and_then(|a| a.get("redactedData")).and_then(Value::as_str) {
        return Some(Reasoning { format: Reasoning::ANTHROPIC_REDACTED.into(), data: data.into(), scope: scope("anthropic") });
    }
    if let Some(data) = metadata.get("openai").and_then(|a| a.get("reasoningEncryptedContent")).and_then(Value::as_str) {
        return Some(Reasoning { format: Reasoning::OPENAI_ENCRYPTED.into(), data: data.into(), scope: scope("openai") });
    }
    None
}

// ----------------------------------------------------------------------------------------------
// opencode.db (read-only)
// ----------------------------------------------------------------------------------------------

/// The session documents of an `opencode.db`, as `opencode export` prints them: `session_id`
/// selects one; otherwise all, most recently updated first.
pub(crate) fn db_documents(path: &Path, session_id: Option<&str>) -> Result<Vec<Value>> {
    let storage = |context: &'static str| move |e: rusqlite::Error| Error::Storage { context: format!("{context} in {}", path.display()), source: e };
    let conn = rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX)
        .map_err(storage("cannot open the OpenCode database"))?;
    let has_session: bool = conn
        .query_row("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('session', 'message', 'part')", [], |r| r.get::<_, i64>(0))
        .map(|n| n == 3)
        .map_err(storage("cannot read the OpenCode database"))?;
    if !has_session {
        return Err(Error::invalid(format!("{} is an SQLite database without OpenCode's session, message and part tables", path.display())));
    }
    let columns: Vec<String> = {
        let mut stmt = conn.prepare("SELECT name FROM pragma_table_info('session')").map_err(storage("cannot read the session table"))?;
        let rows = stmt.query_map([], |r| r.get(0)).map_err(storage("cannot read the session table"))?;
        rows.collect::<std::result::Result<_, _>>().map_err(storage("cannot read the session table"))?
    };
    let ids: Vec<String> = match session_id {
        Some(id) => {
            let found: Option<String> = conn
                .query_row("SELECT id FROM session WHERE id = ?1", [id], |r| r.get(0))
                .map(Some)
                .or_else(|e| if matches!(e, rusqlite::Error::QueryReturnedNoRows) { Ok(None) } else { Err(e) })
                .map_err(storage("cannot read the session table"))?;
            match found {
                Some(id) => vec![id],
                None => return Err(Error::NotFound(format!("no session {id:?} in {}", path.display()))),
            }
        }
        None => {
            let mut stmt = conn.prepare("SELECT id FROM session ORDER BY time_updated DESC, id").map_err(storage("cannot read the session table"))?;
            let rows = stmt.query_map([], |r| r.get(0)).map_err(storage("cannot read the session table"))?;
            rows.collect::<std::result::Result<_, _>>().map_err(storage("cannot read the session table"))?
        }
    };
    let mut documents = Vec::with_capacity(ids.len());
    for id in ids {
        let info = session_row(&conn, &id, &columns).map_err(storage("cannot read a session row"))?;
        let mut messages = Vec::new();
        let mut stmt = conn
            .prepare_cached("SELECT id, data FROM message WHERE session_id = ?1 ORDER BY time_created, id")
            .map_err(storage("cannot read messages"))?;
        let rows: Vec<(String, String)> = stmt
            .query_map([&id], |r| Ok((r.get(0)?, r.get(1)?)))
            .and_then(|rows| rows.collect())
            .map_err(storage("cannot read messages"))?;
        let mut parts_stmt = conn
            .prepare_cached("SELECT id, data FROM part WHERE message_id = ?1 ORDER BY id")
            .map_err(storage("cannot read parts"))?;
        for (message_id, data) in rows {
            let mut info = row_json(&data, &format!("message {message_id}"))?;
            if let Value::Object(map) = &mut info {
                map.insert("id".into(), Value::String(message_id.clone()));
                map.insert("sessionID".into(), Value::String(id.clone()));
            }
            let part_rows: Vec<(String, String)> = parts_stmt
                .query_map([&message_id], |r| Ok((r.get(0)?, r.get(1)?)))
                .and_then(|rows| rows.collect())
                .map_err(storage("cannot read parts"))?;
            let mut parts = Vec::with_capacity(part_rows.len());
            for (part_id, data) in part_rows {
                let mut part = row_json(&data, &format!("part {part_id}"))?;
                if let Value::Object(map) = &mut part {
                    map.insert("id".into(), Value::String(part_id));
                    map.insert("sessionID".into(), Value::String(id.clone()));
                    map.insert("messageID".into(), Value::String(message_id.clone()));
                }
                parts.push(part);
            }
            messages.push(obj! { "info" => info, "parts" => Value::Array(parts) });
        }
        documents.push(obj! { "info" => info, "messages" => Value::Array(messages) });
    }
    Ok(documents)
}

fn row_json(data: &str, what: &str) -> Result<Value> {
    serde_json::from_str(data).map_err(|e| Error::invalid(format!("the data of {what} in the OpenCode database is not JSON: {e}")))
}

/// A `session` row as the `Session` info `opencode export` prints (its field order).
fn session_row(conn: &rusqlite::Connection, id: &str, columns: &[String]) -> rusqlite::Result<Value> {
    let list = columns.iter().map(|c| format!("\"{}\"", c.replace('"', ""))).collect::<Vec<_>>().join(", ");
    conn.query_row(&format!("SELECT {list} FROM session WHERE id = ?1"), [id], |row| {
        let mut values: HashMap<&str, Value> = HashMap::new();
        for (i, name) in columns.iter().enumerate() {
            let value = match row.get_ref(i)? {
                rusqlite::types::ValueRef::Null => Value::Null,
                rusqlite::types::ValueRef::Integer(n) => Value::from(n),
                rusqlite::types::ValueRef::Real(x) => serde_json::Number::from_f64(x).map(Value::Number).unwrap_or(Value::Null),
                rusqlite::types::ValueRef::Text(t) => Value::String(String::from_utf8_lossy(t).into_owned()),
                rusqlite::types::ValueRef::Blob(_) => Value::Null,
            };
            values.insert(name.as_str(), value);
        }
        let mut take = |name: &str| values.remove(name).filter(|v| !v.is_null());
        let json_of = |v: Option<Value>| v.and_then(|v| v.as_str().and_then(|s| serde_json::from_str::<Value>(s).ok()));
        let mut info = Map::new();
        let put = |info: &mut Map<String, Value>, key: &str, value: Option<Value>| {
            if let Some(value) = value {
                info.insert(key.into(), value);
            }
        };
        put(&mut info, "id", take("id"));
        put(&mut info, "slug", take("slug"));
        put(&mut info, "projectID", take("project_id"));
        put(&mut info, "workspaceID", take("workspace_id"));
        put(&mut info, "directory", take("directory"));
        put(&mut info, "path", take("path"));
        put(&mut info, "parentID", take("parent_id"));
        put(&mut info, "title", take("title"));
        put(&mut info, "agent", take("agent"));
        put(&mut info, "model", json_of(take("model")));
        put(&mut info, "version", take("version"));
        let additions = take("summary_additions");
        let deletions = take("summary_deletions");
        let files = take("summary_files");
        let diffs = json_of(take("summary_diffs"));
        if additions.is_some() || deletions.is_some() || files.is_some() || diffs.is_some() {
            let mut summary = Map::new();
            summary.insert("additions".into(), additions.unwrap_or(Value::from(0)));
            summary.insert("deletions".into(), deletions.unwrap_or(Value::from(0)));
            summary.insert("files".into(), files.unwrap_or(Value::from(0)));
            if let Some(diffs) = diffs {
                summary.insert("diffs".into(), diffs);
            }
            info.insert("summary".into(), Value::Object(summary));
        }
        put(&mut info, "share", take("share_url").map(|url| obj! { "url" => url }));
        put(&mut info, "cost", take("cost").map(|c| c.as_f64().and_then(serde_json::Number::from_f64).map(Value::Number).unwrap_or(c)));
        let number = |v: Option<Value>| v.unwrap_or(Value::from(0));
        let tokens = obj! {
            "input" => number(take("tokens_input")),
            "output" => number(take("tokens_output")),
            "reasoning" => number(take("tokens_reasoning")),
            "cache" => obj! { "read" => number(take("tokens_cache_read")), "write" => number(take("tokens_cache_write")) },
        };
        info.insert("tokens".into(), tokens);
        put(&mut info, "metadata", json_of(take("metadata")));
        put(&mut info, "permission", json_of(take("permission")));
        put(&mut info, "revert", json_of(take("revert")));
        let mut time = Map::new();
        for (key, column) in [("created", "time_created"), ("updated", "time_updated"), ("compacting", "time_compacting"), ("archived", "time_archived")] {
            if let Some(v) = take(column) {
                time.insert(key.into(), v);
            }
        }
        info.insert("time".into(), Value::Object(time));
        Ok(Value::Object(info))
    })
}

fn import_db(store: &Store, path: &Path, options: &Options) -> Result<Session> {
    let mut documents = db_documents(path, options.session_id.as_deref())?;
    if documents.len() > 1 {
        return Err(Error::invalid(format!(
            "{} holds {} sessions: name one with session_id (for instance {:?}), or import them all with import_opencode_db",
            path.display(),
            documents.len(),
            documents[0]["info"]["id"].as_str().unwrap_or("")
        )));
    }
    let Some(document) = documents.pop() else {
        return Err(Error::NotFound(format!("{} holds no session", path.display())));
    };
    import_document(store, document, None)
}

/// Imports every session of an `opencode.db` (most recently updated first); sessions already in
/// the store are skipped, not replaced.
pub(crate) fn import_all_db(store: &Store, path: &Path) -> Result<Vec<Session>> {
    let mut out = Vec::new();
    for document in db_documents(path, None)? {
        let id = document["info"]["id"].as_str().unwrap_or("").to_string();
        match store.session(&id) {
            Ok(_) => continue,
            Err(Error::NotFound(_)) => out.push(import_document(store, document, None)?),
            Err(other) => return Err(other),
        }
    }
    Ok(out)
}

// ----------------------------------------------------------------------------------------------
// Export: the session document
// ----------------------------------------------------------------------------------------------

const BASE62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// An id in OpenCode's format: `prefix_` + 12 hex digits of `ms * 4096 + counter` (complemented
/// for descending `ses_` ids) + 14 base62 characters, here derived from `seed` so that exports are
/// deterministic.
fn opencode_id(prefix: &str, ms: i64, counter: u64, descending: bool, seed: &[&str]) -> String {
    let v = (ms.max(0) as u64).wrapping_mul(4096).wrapping_add(counter);
    let v = if descending { !v } else { v } & 0xffff_ffff_ffff;
    let digest = parts_digest(seed);
    let random: String = digest.iter().take(14).map(|b| BASE62[(*b as usize) % 62] as char).collect();
    format!("{prefix}_{v:012x}{random}")
}

/// The `ms * 4096 + counter` an ascending OpenCode id encodes (its low 48 bits).
fn id_value(id: &str) -> Option<u64> {
    let hex = id.split_once('_')?.1.get(..12)?;
    u64::from_str_radix(hex, 16).ok()
}

struct Context {
    session_id: String,
    cwd: String,
    title: String,
    created: Timestamp,
    /// `(providerID, modelID)` for messages made here.
    model: (String, String),
}

impl Context {
    fn for_session(session: &Session, blocks: &[Block], options: &Options) -> Result<Context> {
        let info = session.info()?;
        let native_info = blocks.iter().find_map(|b| b.native.as_ref().filter(|n| n.runtime == RUNTIME).and_then(|n| n.data.get("session")));
        let created = blocks.first().map(|b| b.created_at).unwrap_or(info.created_at);
        let session_id = match native_info.and_then(|i| i["id"].as_str()) {
            Some(id) => id.to_string(),
            None if info.id.starts_with("ses_") && info.id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') => info.id.clone(),
            None => opencode_id("ses", created.as_millis(), 1, true, &[&info.id]),
        };
        let attributed = blocks.iter().rev().find(|b| b.actor == Actor::Assistant && b.model.is_some());
        // The provider of the messages made here is an OpenCode provider id: the caller's, else
        // the one OpenCode itself last used in this session, else the vendor of the model.
        let own = blocks.iter().rev().find(|b| b.provider.as_deref() == Some(RUNTIME) && b.model_provider.is_some());
        let provider_id = options
            .model_provider
            .clone()
            .or_else(|| own.and_then(|b| b.model_provider.clone()))
            .or_else(|| options.target_model.as_deref().and_then(vendor_of_model))
            .or_else(|| attributed.and_then(|b| b.model.as_deref()).and_then(vendor_of_model))
            .or_else(|| attributed.and_then(|b| b.model_provider.clone()))
            .unwrap_or_else(|| "anthropic".into());
        let model_id = options.target_model.clone().or_else(|| attributed.and_then(|b| b.model.clone())).unwrap_or_else(|| "unknown".into());
        let title = info
            .title
            .clone()
            .filter(|t| !t.trim().is_empty() && !t.starts_with("New session - "))
            .or_else(|| {
                blocks
                    .iter()
                    .find(|b| b.actor == Actor::User && b.kind == Kind::Text)
                    .map(|b| truncate_chars(b.content.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim(), 60))
            })
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| "Imported conversation".into());
        let cwd = info.cwd.clone().unwrap_or_else(|| "/".into());
        Ok(Context { session_id, cwd, title, created, model: (provider_id, model_id) })
    }
}

/// The vendor (OpenCode provider id of its bundled provider) of a model, by its name.
fn vendor_of_model(model: &str) -> Option<String> {
    let model = model.rsplit('/').next().unwrap_or(model);
    if model.starts_with("claude") {
        Some("anthropic".into())
    } else if model.starts_with("gpt-") || model.starts_with("o1") || model.starts_with("o3") || model.starts_with("o4") || model.contains("codex") {
        Some("openai".into())
    } else if model.starts_with("gemini") {
        Some("google".into())
    } else {
        None
    }
}

struct Message {
    info: Value,
    parts: Vec<Value>,
    /// Keys of the message object beside `info` and `parts`.
    extra: Option<Value>,
    /// Made here (not passed through): more blocks may be added to it.
    ours: bool,
}

struct Writer<'a> {
    session: &'a Session,
    options: &'a Options,
    ctx: &'a Context,
    report: Vec<ReportEntry>,
    info: Option<Value>,
    document_extra: Option<Value>,
    messages: Vec<Message>,
    /// The last `ms * 4096 + counter` of a message id, and the last message time.
    last_id: u64,
    last_time: i64,
    /// The user message the next assistant step answers.
    user: Option<String>,
    /// Index of the open assistant step made here, and whether a result closed a call in it.
    step: Option<usize>,
    step_answered: bool,
    /// call id → (message index, part index) of an unanswered tool part made here.
    calls: HashMap<String, (usize, usize)>,
    embed_cache: HashMap<String, String>,
}

impl<'a> Writer<'a> {
    fn new(session: &'a Session, options: &'a Options, ctx: &'a Context) -> Writer<'a> {
        Writer {
            session,
            options,
            ctx,
            report: Vec::new(),
            info: None,
            document_extra: None,
            messages: Vec::new(),
            last_id: 0,
            last_time: 0,
            user: None,
            step: None,
            step_answered: false,
            calls: HashMap::new(),
            embed_cache: HashMap::new(),
        }
    }

    fn entry(&mut self, action: ReportAction, block: &Block, message: impl Into<String>) {
        self.report.push(ReportEntry { action, block_id: Some(block.id.clone()), message: message.into() });
    }

    fn embed_url(&mut self, id: &str, mime: &str) -> Result<String> {
        if let Some(url) = self.embed_cache.get(id) {
            return Ok(url.clone());
        }
        let url = data_url(mime, &self.session.embed(id)?);
        self.embed_cache.insert(id.to_string(), url.clone());
        Ok(url)
    }

    /// Puts data URLs back where `{"embed": id}` stands.
    fn fill_url(&mut self, map: &mut Map<String, Value>, embeds: &BTreeMap<String, Embed>) -> Result<()> {
        let Some(id) = map.get("url").and_then(|u| u.get("embed")).and_then(Value::as_str).map(str::to_string) else {
            return Ok(());
        };
        let mime = embeds.get(&id).map(|e| e.mime.clone()).or_else(|| map.get("mime").and_then(Value::as_str).map(str::to_string));
        let url = self.embed_url(&id, mime.as_deref().unwrap_or("application/octet-stream"))?;
        map.insert("url".into(), Value::String(url));
        Ok(())
    }

    fn note_message(&mut self, info: &Value) {
        if let Some(v) = info["id"].as_str().and_then(id_value) {
            self.last_id = self.last_id.max(v);
        }
        if let Some(t) = info["time"]["created"].as_f64() {
            self.last_time = self.last_time.max(t as i64);
        }
        if info["role"] == "user" {
            self.user = info["id"].as_str().map(str::to_string);
        }
    }

    fn write(mut self, blocks: &mut [Block]) -> Result<(Value, Vec<ReportEntry>)> {
        let mut i = 0;
        while i < blocks.len() {
            i += self.block(blocks, i)?;
        }
        self.close_step();
        self.finish_calls();
        let ctx = self.ctx;
        let info = self.info.take().unwrap_or_else(|| {
            let created = ctx.created.as_millis();
            obj! {
                "id" => ctx.session_id.clone(),
                "slug" => format!("sna-{}", &crate::native::common::short_hash(&[&ctx.session_id], 8)),
                "projectID" => "global",
                "directory" => ctx.cwd.clone(),
                "path" => "",
                "title" => ctx.title.clone(),
                "version" => TARGET_VERSION,
                // What `opencode import` adds when they are missing.
                "cost" => 0,
                "tokens" => obj! { "input" => 0, "output" => 0, "reasoning" => 0, "cache" => obj! { "read" => 0, "write" => 0 } },
                "time" => obj! { "created" => created, "updated" => self.last_time.max(created) },
            }
        });
        let messages: Vec<Value> = self
            .messages
            .into_iter()
            .map(|m| {
                let mut message = obj! { "info" => m.info, "parts" => Value::Array(m.parts) };
                if let (Value::Object(map), Some(Value::Object(extra))) = (&mut message, m.extra) {
                    map.extend(extra);
                }
                message
            })
            .collect();
        let mut document = obj! { "info" => info, "messages" => Value::Array(messages) };
        if let (Value::Object(map), Some(Value::Object(extra))) = (&mut document, self.document_extra) {
            map.extend(extra);
        }
        Ok((document, self.report))
    }

    /// Writes the block at `i` (and the result block a passed-through tool part takes with it);
    /// returns how many blocks were used.
    fn block(&mut self, blocks: &mut [Block], i: usize) -> Result<usize> {
        let native = if blocks[i].native.as_ref().is_some_and(|n| n.runtime == RUNTIME) { blocks[i].native.take() } else { None };
        if let Some(Native { data: Value::Object(mut data), .. }) = native {
            if let Some(info) = data.remove("session") {
                if self.info.is_none() {
                    self.info = Some(info);
                    self.document_extra = data.remove("document");
                }
                return Ok(1);
            }
            if let Some(info) = data.remove("message") {
                self.close_step();
                self.note_message(&info);
                self.messages.push(Message { info, parts: Vec::new(), extra: data.remove("message_extra"), ours: false });
            }
            if let Some(part) = data.remove("part") {
                if self.messages.last().is_none_or(|m| m.ours) {
                    // A part without its message (a message boundary was cut): it goes to a message of its own.
                    self.entry(ReportAction::Dropped, &blocks[i], "an OpenCode part whose message info is missing");
                    return Ok(1);
                }
                let (part, used) = self.rebuild(part, blocks, i)?;
                if let Some(m) = self.messages.last_mut() {
                    m.parts.push(part);
                }
                return Ok(used);
            }
            if data.contains_key("message") || blocks[i].kind == Kind::Status {
                return Ok(1);
            }
        }
        self.canonical(&mut blocks[i])?;
        Ok(1)
    }

    /// Puts the canonical payloads of block `i` back into its part; a tool part takes its result
    /// block along.
    fn rebuild(&mut self, mut part: Value, blocks: &mut [Block], i: usize) -> Result<(Value, usize)> {
        let Value::Object(map) = &mut part else { return Ok((part, 1)) };
        let ty = map.get("type").and_then(Value::as_str).unwrap_or("").to_string();
        let block = &mut blocks[i];
        let content = std::mem::take(&mut block.content);
        let mut used = 1;
        match ty.as_str() {
            "text" | "reasoning" => {
                if let Some(slot @ Value::Null) = map.get_mut("text") {
                    *slot = Value::String(content);
                }
                if ty == "reasoning" {
                    self.check_scope(map, block);
                }
            }
            "file" => {
                let embeds = &blocks[i].embeds;
                self.fill_url(map, embeds)?;
            }
            "tool" => {
                let call = map.get("callID").and_then(Value::as_str).unwrap_or("").to_string();
                let has_result = blocks.get(i + 1).is_some_and(|b| {
                    b.kind == Kind::ToolResult && b.native.as_ref().is_some_and(|n| n.runtime == RUNTIME && n.data.get("result_of").and_then(Value::as_str) == Some(call.as_str()))
                });
                let result = if has_result {
                    let b = &mut blocks[i + 1];
                    Some((std::mem::take(&mut b.content), std::mem::take(&mut b.embeds)))
                } else {
                    None
                };
                if let Some(Value::Object(state)) = map.get_mut("state") {
                    if let Some(slot @ Value::Null) = state.get_mut("input") {
                        *slot = serde_json::from_str(&content).map_err(|e| Error::Internal(format!("stored tool input of block {} is not JSON: {e}", blocks[i].id)))?;
                    }
                    if let Some((mut output, result_embeds)) = result {
                        used = 2;
                        // The links to the attachments were added after the output on import.
                        let links: String = result_embeds
                            .iter()
                            .map(|(id, e)| format!("\n{}", embed_link(e.name.as_deref().unwrap_or("attachment"), id)))
                            .collect();
                        if !links.is_empty() && output.ends_with(&links) {
                            output.truncate(output.len() - links.len());
                        } else if !result_embeds.is_empty() {
                            // Links in another order: take each one out.
                            for (id, e) in &result_embeds {
                                output = output.replace(&format!("\n{}", embed_link(e.name.as_deref().unwrap_or("attachment"), id)), "");
                            }
                        }
                        for key in ["output", "error"] {
                            if let Some(slot @ Value::Null) = state.get_mut(key) {
                                *slot = Value::String(std::mem::take(&mut output));
                            }
                        }
                        if let Some(Value::Array(attachments)) = state.get_mut("attachments") {
                            let mut list = std::mem::take(attachments);
                            for attachment in list.iter_mut() {
                                if let Value::Object(a) = attachment {
                                    self.fill_url(a, &result_embeds)?;
                                }
                            }
                            state.insert("attachments".into(), Value::Array(list));
                        }
                    }
                }
            }
            _ => {}
        }
        Ok((part, used))
    }

    /// Opaque reasoning metadata of a passed-through reasoning part stays only where its scope
    /// matches the model the resume uses.
    fn check_scope(&mut self, map: &mut Map<String, Value>, block: &Block) {
        let Some(reasoning) = &block.reasoning else { return };
        let Some(target) = &self.options.target_model else { return };
        if reasoning.scope.model.as_deref() == Some(target.as_str()) {
            return;
        }
        if let Some(Value::Object(metadata)) = map.get_mut("metadata") {
            metadata.remove("anthropic");
            metadata.remove("openai");
            if metadata.is_empty() {
                map.remove("metadata");
            }
        }
        self.entry(ReportAction::Dropped, block, format!("{} reasoning token for {} does not travel to {target}", reasoning.format, reasoning.scope.model.as_deref().unwrap_or("another model")));
    }

    /// The next `time.created`: the block's time, never in the future (OpenCode treats a future
    /// message as the latest), and strictly after the previous message's.
    fn next_time(&mut self, at: Timestamp) -> i64 {
        let t = at.as_millis().min(Timestamp::now().as_millis()).max(self.last_time + 1);
        self.last_time = t;
        t
    }

    fn next_message_id(&mut self, t: i64, seed: &str) -> String {
        let v = ((t.max(0) as u64) * 4096 + 1).max(self.last_id + 1) & 0xffff_ffff_ffff;
        self.last_id = v;
        opencode_id("msg", (v / 4096) as i64, v % 4096, false, &[&self.ctx.session_id, seed])
    }

    fn part_id(&self, message: usize, index: usize, seed: &str) -> String {
        let info = &self.messages[message].info;
        let base = info["id"].as_str().and_then(id_value).unwrap_or(0);
        let v = base + index as u64 + 1;
        opencode_id("prt", (v / 4096) as i64, v % 4096, false, &[&self.ctx.session_id, seed, &index.to_string()])
    }

    fn push_part(&mut self, message: usize, mut part: Map<String, Value>, seed: &str) -> usize {
        let index = self.messages[message].parts.len();
        let id = self.part_id(message, index, seed);
        let message_id = self.messages[message].info["id"].clone();
        part.insert("id".into(), Value::String(id));
        part.insert("sessionID".into(), Value::String(self.ctx.session_id.clone()));
        part.insert("messageID".into(), message_id);
        self.messages[message].parts.push(Value::Object(part));
        index
    }

    /// The open user message made here, or a new one.
    fn user_message(&mut self, block: &Block) -> usize {
        self.close_step();
        if let Some(last) = self.messages.last() {
            if last.ours && last.info["role"] == "user" {
                return self.messages.len() - 1;
            }
        }
        let t = self.next_time(block.created_at);
        let id = self.next_message_id(t, &block.id);
        let (provider, model) = &self.ctx.model;
        let info = obj! {
            "role" => "user",
            "time" => obj! { "created" => t },
            "agent" => "build",
            "model" => obj! { "providerID" => provider.clone(), "modelID" => model.clone() },
            "id" => id.clone(),
            "sessionID" => self.ctx.session_id.clone(),
        };
        self.user = Some(id);
        self.messages.push(Message { info, parts: Vec::new(), extra: None, ours: true });
        self.messages.len() - 1
    }

    /// The open assistant step, or a new one (after a tool result, a step ends).
    fn assistant_step(&mut self, block: &Block) -> usize {
        if let Some(step) = self.step {
            if !self.step_answered {
                return step;
            }
            self.end_step(step, "tool-calls");
        }
        if self.user.is_none() {
            let index = self.user_message(block);
            let mut text = Map::new();
            text.insert("type".into(), "text".into());
            text.insert("text".into(), "(The conversation continues.)".into());
            text.insert("synthetic".into(), true.into());
            self.push_part(index, text, &format!("{}-opening", block.id));
            self.entry(ReportAction::Synthesized, block, "OpenCode needs a user message before the first assistant step: a synthetic one was added");
        }
        let t = self.next_time(block.created_at);
        let id = self.next_message_id(t, &block.id);
        let (provider, model) = match (&block.model_provider, &block.model) {
            (Some(p), Some(m)) if self.options.target_model.is_none() && self.options.model_provider.is_none() => (p.clone(), m.clone()),
            _ => self.ctx.model.clone(),
        };
        let info = obj! {
            "parentID" => self.user.clone().unwrap_or_default(),
            "role" => "assistant",
            "mode" => "build",
            "agent" => "build",
            "path" => obj! { "cwd" => self.ctx.cwd.clone(), "root" => self.ctx.cwd.clone() },
            "cost" => 0,
            "tokens" => zero_tokens(),
            "modelID" => model,
            "providerID" => provider,
            "time" => obj! { "created" => t },
            "id" => id,
            "sessionID" => self.ctx.session_id.clone(),
        };
        self.messages.push(Message { info, parts: Vec::new(), extra: None, ours: true });
        let index = self.messages.len() - 1;
        let mut start = Map::new();
        start.insert("type".into(), "step-start".into());
        self.push_part(index, start, &format!("{}-start", block.id));
        self.step = Some(index);
        self.step_answered = false;
        index
    }

    fn end_step(&mut self, step: usize, finish: &str) {
        let mut end = Map::new();
        end.insert("reason".into(), finish.into());
        end.insert("type".into(), "step-finish".into());
        end.insert("tokens".into(), zero_tokens());
        end.insert("cost".into(), 0.into());
        let seed = format!("{}-finish", self.messages[step].info["id"].as_str().unwrap_or(""));
        self.push_part(step, end, &seed);
        let completed = self.last_time.max(self.messages[step].info["time"]["created"].as_i64().unwrap_or(0));
        if let Value::Object(info) = &mut self.messages[step].info {
            // Field order as OpenCode writes it: time before finish, ids last.
            let id = info.remove("id");
            let session = info.remove("sessionID");
            if let Some(Value::Object(time)) = info.get_mut("time") {
                time.insert("completed".into(), completed.into());
            }
            info.insert("finish".into(), finish.into());
            info.extend([("id".to_string(), id.unwrap_or_default()), ("sessionID".to_string(), session.unwrap_or_default())]);
        }
        self.step = None;
        self.step_answered = false;
    }

    fn close_step(&mut self) {
        if let Some(step) = self.step {
            self.finish_calls();
            self.end_step(step, "stop");
        }
    }

    /// Calls still without a result get an error result, as OpenCode itself sends them.
    fn finish_calls(&mut self) {
        let mut open: Vec<(String, (usize, usize))> = self.calls.drain().collect();
        open.sort_by_key(|(_, at)| *at);
        for (call, (m, p)) in open {
            if let Some(Value::Object(state)) = self.messages[m].parts[p].get_mut("state") {
                let input = state.remove("input").unwrap_or_else(|| Value::Object(Map::new()));
                let start = state.get("time").and_then(|t| t.get("start")).cloned().unwrap_or(Value::from(self.last_time));
                state.clear();
                state.insert("status".into(), "error".into());
                state.insert("input".into(), input);
                state.insert("error".into(), INTERRUPTED.into());
                state.insert("time".into(), obj! { "start" => start.clone(), "end" => start });
            }
            self.report.push(ReportEntry {
                action: ReportAction::Synthesized,
                block_id: None,
                message: format!("call {call:?} had no result; it is written as interrupted ({INTERRUPTED})"),
            });
        }
    }

    /// Text with embed links: the text between them as text parts, the embeds as file parts.
    fn text_and_files(&mut self, message: usize, block: &Block, synthetic: bool) -> Result<()> {
        let refs: Vec<String> = block.embed_references().into_iter().map(str::to_string).collect();
        let mut rest = block.content.as_str();
        let mut pieces: Vec<(Option<String>, String)> = Vec::new();
        for id in &refs {
            let Some(embed) = block.embeds.get(id) else { continue };
            let link = embed_link(embed.name.as_deref().unwrap_or(""), id);
            let (before, after) = match rest.find(&link) {
                Some(at) => (&rest[..at], &rest[at + link.len()..]),
                None => match find_embed_link(rest, id) {
                    Some((at, len)) => (&rest[..at], &rest[at + len..]),
                    None => continue,
                },
            };
            pieces.push((None, before.to_string()));
            pieces.push((Some(id.clone()), String::new()));
            rest = after;
        }
        pieces.push((None, rest.to_string()));
        for (k, (embed, text)) in pieces.into_iter().enumerate() {
            let seed = format!("{}-{k}", block.id);
            match embed {
                None if text.trim().is_empty() => {}
                None => {
                    let mut part = Map::new();
                    part.insert("type".into(), "text".into());
                    part.insert("text".into(), text.into());
                    if synthetic {
                        part.insert("synthetic".into(), true.into());
                    }
                    self.push_part(message, part, &seed);
                }
                Some(id) => {
                    let embed = block.embeds[&id].clone();
                    let url = self.embed_url(&id, &embed.mime)?;
                    let mut part = Map::new();
                    part.insert("type".into(), "file".into());
                    part.insert("mime".into(), embed.mime.clone().into());
                    part.insert("filename".into(), embed.name.clone().unwrap_or_else(|| id.clone()).into());
                    part.insert("url".into(), url.into());
                    self.push_part(message, part, &seed);
                }
            }
        }
        Ok(())
    }

    /// A block without OpenCode passthrough (appended through the API or from another runtime).
    fn canonical(&mut self, block: &mut Block) -> Result<()> {
        match (block.actor, block.kind) {
            (_, Kind::Status) => Ok(()),
            (_, Kind::Error) => {
                self.entry(ReportAction::Dropped, block, "an error block has no place in an OpenCode history");
                Ok(())
            }
            (Actor::User | Actor::System, Kind::Text) => {
                let message = self.user_message(block);
                self.text_and_files(message, block, block.actor == Actor::System)
            }
            (Actor::Assistant, Kind::Text) => {
                let step = self.assistant_step(block);
                let t = self.last_time;
                let mut part = Map::new();
                part.insert("type".into(), "text".into());
                part.insert("text".into(), block.content.clone().into());
                part.insert("time".into(), obj! { "start" => t, "end" => t });
                self.push_part(step, part, &block.id);
                if !block.embeds.is_empty() {
                    self.entry(ReportAction::Degraded, block, "OpenCode keeps no files in assistant messages: the embeds stay links in the text");
                }
                Ok(())
            }
            (_, Kind::Thinking) => {
                let matches = block.reasoning.as_ref().is_some_and(|r| self.scope_matches(r));
                if !matches {
                    let what = if block.reasoning.is_some() { "reasoning for another model" } else { "reasoning without a token" };
                    if self.options.foreign_reasoning == ForeignReasoning::Text && !block.content.trim().is_empty() {
                        let step = self.assistant_step(block);
                        let mut part = Map::new();
                        part.insert("type".into(), "text".into());
                        part.insert("text".into(), format!("[reasoning] {}", block.content).into());
                        self.push_part(step, part, &block.id);
                        self.entry(ReportAction::Degraded, block, format!("{what} written as text"));
                    } else {
                        self.entry(ReportAction::Dropped, block, format!("{what} is not replayed"));
                    }
                    return Ok(());
                }
                let step = self.assistant_step(block);
                let t = self.last_time;
                let reasoning = block.reasoning.clone().expect("matched");
                let metadata = match reasoning.format.as_str() {
                    Reasoning::ANTHROPIC_SIGNATURE => obj! { "anthropic" => obj! { "signature" => reasoning.data } },
                    Reasoning::ANTHROPIC_REDACTED => obj! { "anthropic" => obj! { "redactedData" => reasoning.data } },
                    _ => obj! { "openai" => obj! { "reasoningEncryptedContent" => reasoning.data } },
                };
                let mut part = Map::new();
                part.insert("type".into(), "reasoning".into());
                part.insert("text".into(), block.content.clone().into());
                part.insert("time".into(), obj! { "start" => t, "end" => t });
                part.insert("metadata".into(), metadata);
                self.push_part(step, part, &block.id);
                Ok(())
            }
            (_, Kind::ToolUse) => {
                let step = self.assistant_step(block);
                let Some(tool) = &block.tool else { return Ok(()) };
                let input = match serde_json::from_str::<Value>(&block.content) {
                    Ok(value @ Value::Object(_)) => value,
                    _ => {
                        self.entry(ReportAction::Degraded, block, "OpenCode tool input must be an object: the raw input is under \"input\"");
                        obj! { "input" => block.content.clone() }
                    }
                };
                let t = self.last_time;
                let mut part = Map::new();
                part.insert("type".into(), "tool".into());
                part.insert("tool".into(), tool.name.clone().unwrap_or_default().into());
                part.insert("callID".into(), tool.call_id.clone().into());
                part.insert("state".into(), obj! { "status" => "running", "input" => input, "time" => obj! { "start" => t } });
                let index = self.push_part(step, part, &block.id);
                self.calls.insert(tool.call_id.clone(), (step, index));
                Ok(())
            }
            (_, Kind::ToolResult) => {
                let Some(tool) = &block.tool else { return Ok(()) };
                let Some((m, p)) = self.calls.remove(&tool.call_id) else {
                    self.entry(ReportAction::Dropped, block, format!("result for call {:?} that has no call before it", tool.call_id));
                    return Ok(());
                };
                let t = self.next_time(block.created_at);
                let mut output = block.content.clone();
                let mut attachments = Vec::new();
                let refs: Vec<String> = block.embed_references().into_iter().map(str::to_string).collect();
                for (k, id) in refs.iter().enumerate() {
                    let Some(embed) = block.embeds.get(id).cloned() else { continue };
                    if let Some((at, len)) = find_embed_link(&output, id) {
                        output.replace_range(at..at + len, "");
                    }
                    let url = self.embed_url(id, &embed.mime)?;
                    let message_id = self.messages[m].info["id"].clone();
                    let part_id = opencode_id("prt", t, 2048 + k as u64, false, &[&self.ctx.session_id, &block.id, id]);
                    attachments.push(obj! {
                        "id" => part_id,
                        "sessionID" => self.ctx.session_id.clone(),
                        "messageID" => message_id,
                        "type" => "file",
                        "mime" => embed.mime.clone(),
                        "filename" => embed.name.clone().unwrap_or_else(|| id.clone()),
                        "url" => url,
                    });
                }
                let output = output.trim_end().to_string();
                if let Some(Value::Object(state)) = self.messages[m].parts[p].get_mut("state") {
                    let input = state.remove("input").unwrap_or_else(|| Value::Object(Map::new()));
                    let start = state.get("time").and_then(|t| t.get("start")).cloned().unwrap_or(Value::from(t));
                    state.clear();
                    if tool.is_error == Some(true) {
                        state.insert("status".into(), "error".into());
                        state.insert("input".into(), input);
                        state.insert("error".into(), output.into());
                    } else {
                        state.insert("status".into(), "completed".into());
                        state.insert("input".into(), input);
                        state.insert("output".into(), output.into());
                        state.insert("title".into(), tool.name.clone().unwrap_or_default().into());
                        state.insert("metadata".into(), Value::Object(Map::new()));
                    }
                    state.insert("time".into(), obj! { "start" => start, "end" => t });
                    if !attachments.is_empty() {
                        state.insert("attachments".into(), Value::Array(attachments));
                    }
                }
                if self.step == Some(m) && self.calls.values().all(|(cm, _)| *cm != m) {
                    self.step_answered = true;
                }
                Ok(())
            }
        }
    }

    fn scope_matches(&self, reasoning: &Reasoning) -> bool {
        let target_model = self.options.target_model.as_deref();
        match reasoning.format.as_str() {
            Reasoning::ANTHROPIC_SIGNATURE | Reasoning::ANTHROPIC_REDACTED | Reasoning::OPENAI_ENCRYPTED => {
                target_model.is_none_or(|t| reasoning.scope.model.as_deref() == Some(t))
            }
            _ => false,
        }
    }
}

fn zero_tokens() -> Value {
    obj! { "total" => 0, "input" => 0, "output" => 0, "reasoning" => 0, "cache" => obj! { "write" => 0, "read" => 0 } }
}

/// Where `![…](embed://id)` stands in `text` (any label), and its length.
fn find_embed_link(text: &str, id: &str) -> Option<(usize, usize)> {
    let tail = format!("](embed://{id})");
    let end = text.find(&tail)?;
    let start = text[..end].rfind("![")?;
    Some((start, end + tail.len() - start))
}

/// The session document, with the fidelity report.
pub(crate) fn document(session: &Session, options: &Options) -> Result<(Value, Vec<ReportEntry>)> {
    let (mut blocks, replayed) = crate::replay::load(session, crate::model::Runtime::OpenCode)?;
    let ctx = Context::for_session(session, &blocks, options)?;
    let (document, mut report) = Writer::new(session, options, &ctx).write(&mut blocks)?;
    report.splice(0..0, replayed);
    Ok((document, report))
}

// ----------------------------------------------------------------------------------------------
// Export: the prompt prelude
// ----------------------------------------------------------------------------------------------

/// The prompt prelude: the conversation as text for the first prompt of a fresh session, when an
/// import is not possible. Format 1 (README, "OpenCode"):
///
/// ```text
/// <conversation-history format="sna-history prelude 1">
/// [user]
/// …text…
///
/// [assistant]
/// …text…
///
/// [assistant tool call bash id=call_1]
/// {"command":"ls"}
///
/// [tool result id=call_1]            ([tool error id=…] for a failed call)
/// …output…
///
/// [attachment shot.png image/png 1234 bytes sha256:…]
/// </conversation-history>
/// ```
///
/// Reasoning, status and error blocks are left out (reported), embeds are listed as attachments.
pub(crate) fn prelude(session: &Session, options: &Options) -> Result<(Value, Vec<ReportEntry>)> {
    let (blocks, mut report) = crate::replay::load(session, crate::model::Runtime::OpenCode)?;
    let mut out = String::from("<conversation-history format=\"sna-history prelude 1\">\n");
    let mut first = true;
    for block in &blocks {
        let header = match (block.actor, block.kind) {
            (_, Kind::Status) => continue,
            (_, Kind::Error) | (_, Kind::Thinking) => {
                if block.kind == Kind::Thinking && options.foreign_reasoning == ForeignReasoning::Text {
                    "[assistant reasoning]".to_string()
                } else {
                    let what = if block.kind == Kind::Error { "error block" } else { "reasoning" };
                    report.push(ReportEntry { action: ReportAction::Dropped, block_id: Some(block.id.clone()), message: format!("{what} is not part of the prelude") });
                    continue;
                }
            }
            (actor, Kind::Text) => format!("[{actor}]"),
            (_, Kind::ToolUse) => {
                let tool = block.tool.as_ref();
                format!("[assistant tool call {} id={}]", tool.and_then(|t| t.name.as_deref()).unwrap_or("?"), tool.map(|t| t.call_id.as_str()).unwrap_or("?"))
            }
            (_, Kind::ToolResult) => {
                let tool = block.tool.as_ref();
                let word = if tool.is_some_and(|t| t.is_error == Some(true)) { "error" } else { "result" };
                format!("[tool {word} id={}]", tool.map(|t| t.call_id.as_str()).unwrap_or("?"))
            }
        };
        if !first {
            out.push('\n');
        }
        first = false;
        out.push_str(&header);
        out.push('\n');
        let mut text = block.content.clone();
        let mut attachments = Vec::new();
        for id in block.embed_references() {
            let Some(embed) = block.embeds.get(id) else { continue };
            if let Some((at, len)) = find_embed_link(&text, id) {
                let name = embed.name.clone().unwrap_or_else(|| id.to_string());
                text.replace_range(at..at + len, &format!("[attachment {name}]"));
            }
            attachments.push(format!("[attachment {} {} {} bytes sha256:{}]", embed.name.as_deref().unwrap_or(id), embed.mime, embed.size, embed.sha256));
        }
        out.push_str(text.trim_end());
        out.push('\n');
        for line in attachments {
            out.push_str(&line);
            out.push('\n');
        }
    }
    out.push_str("</conversation-history>\n");
    Ok((Value::String(out), report))
}

/// Export in `format` (`session` or `prelude`).
pub(crate) fn export(session: &Session, options: &Options, format: &str) -> Result<(Value, Vec<ReportEntry>)> {
    match format {
        "prelude" => prelude(session, options),
        _ => document(session, options),
    }
}

// ----------------------------------------------------------------------------------------------
// Live capture: bus events and `opencode run --format json`
// ----------------------------------------------------------------------------------------------

fn event_status(event: &Value, line: String) -> Block {
    let mut block = Block::new(Actor::System, Kind::Status, line);
    block.native = Some(Native { runtime: RUNTIME.into(), data: obj! { "event" => event.clone() } });
    block
}

/// The blocks a live event completes. Parts are taken when they are whole (text and reasoning
/// with `time.end`, user text at once, tools when completed or failed); deltas and in-progress
/// updates add nothing, since the final update carries the whole part. Assistant blocks are
/// attributed from the `message.updated` event of their message already ingested.
pub(crate) fn event_blocks(session: &Session, event: &Value) -> Result<Vec<Block>> {
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
    let known = session.message_event(&message_id)?;
    let actor = match &known {
        Some((role, _, _)) if role == "user" => Actor::User,
        Some(_) => Actor::Assistant,
        None if event.get("properties").is_some() && ty == "text" => Actor::User,
        None => Actor::Assistant,
    };
    let ctx = MessageContext {
        actor,
        id: message_id,
        turn: None,
        created: millis(event.get("timestamp").or_else(|| event.get("properties").and_then(|p| p.get("time")))).unwrap_or_else(Timestamp::now),
        model: known.and_then(|(_, mp, m)| Some((mp?, m?))),
    };
    let mut blocks = part_blocks(part.clone(), &ctx)?;
    for block in &mut blocks {
        if let Some(Value::Object(data)) = block.native.as_mut().map(|n| &mut n.data) {
            // Live blocks keep the event, not a part to rebuild a document from.
            data.remove("part");
            data.remove("result_of");
            data.insert("event".into(), event.clone());
        }
        if block.actor == Actor::Assistant && block.provider.is_none() && block.kind != Kind::Status {
            block.provider = Some(RUNTIME.into());
        }
    }
    Ok(blocks)
}

// ----------------------------------------------------------------------------------------------
// Resume
// ----------------------------------------------------------------------------------------------

fn valid_session_id(id: &str) -> bool {
    id.starts_with("ses") && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Writes the session document to `<home>/.local/share/sna-history/opencode/<ses_id>.json` and
/// returns the commands: `opencode import <file>` (run in the cwd), then `opencode run --session
/// <id>`. With `run_import` (and the `opencode` binary named by `opencode_bin`, else found on
/// `PATH`), runs the import and reports its outcome.
pub(crate) fn prepare_resume(session: &Session, options: &ResumeOptions) -> Result<ResumePlan> {
    let (document, report) = document(session, &options.options)?;
    crate::native::check_strict(&options.options, &report)?;
    let id = document["info"]["id"].as_str().unwrap_or("").to_string();
    if !valid_session_id(&id) {
        return Err(Error::invalid_field("session_id", format!("{id:?} is not an OpenCode session id (ses_ followed by letters and digits)")));
    }
    let home = match &options.home {
        Some(home) => home.clone(),
        None => crate::native::home_dir()?,
    };
    let cwd = options.cwd.clone().or_else(|| session.info().ok().and_then(|i| i.cwd.map(PathBuf::from)));
    let file = home.join(".local").join("share").join("sna-history").join("opencode").join(format!("{id}.json"));
    let text = serde_json::to_string_pretty(&document).map_err(|e| Error::Internal(format!("cannot write the document: {e}")))?;
    crate::native::write_private(&file, text.as_bytes())?;
    let program = options.opencode_bin.clone().map(|p| p.display().to_string()).unwrap_or_else(|| "opencode".into());
    let import = vec![program.clone(), "import".into(), file.display().to_string()];
    let mut plan = ResumePlan {
        session_id: id.clone(),
        files: vec![file],
        argv: vec![program.clone(), "run".into(), "--session".into(), id.clone()],
        cwd: cwd.clone(),
        env: std::collections::BTreeMap::new(),
        setup: vec![import.clone()],
        ran: Vec::new(),
    };
    if options.home.is_some() {
        plan.env.insert("HOME".into(), home.display().to_string());
    }
    if options.run_import {
        let mut command = std::process::Command::new(&program);
        command.args(&import[1..]).stdin(std::process::Stdio::null());
        if let Some(cwd) = &cwd {
            command.current_dir(cwd);
        }
        for (key, value) in &plan.env {
            command.env(key, value);
        }
        for key in ["OPENCODE_DISABLE_AUTOUPDATE", "OPENCODE_DISABLE_MODELS_FETCH", "OPENCODE_DISABLE_SHARE"] {
            command.env(key, "1");
        }
        let output = command.output().map_err(|source| Error::Io { context: format!("cannot run {program}"), source })?;
        let outcome = crate::native::CommandOutcome {
            argv: import.clone(),
            status: output.status.code(),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        };
        if !output.status.success() {
            return Err(Error::Io {
                context: format!("`{}` failed ({})", import.join(" "), outcome.status.map(|c| format!("exit {c}")).unwrap_or_else(|| "killed".into())),
                source: std::io::Error::other(outcome.stderr.trim().to_string()),
            });
        }
        plan.setup.clear();
        plan.ran.push(outcome);
    }
    let last = session.len()?.checked_sub(1);
    if let Some(through) = last {
        session.bind(crate::model::Runtime::OpenCode, &id, through)?;
    }
    Ok(plan)
}
