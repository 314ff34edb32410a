//! Reading a session document (streamed one message at a time) or a session of an `opencode.db`
//! into blocks: one block per part, the message and session info kept so that export gives the
//! same document back.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value};

use crate::error::{Error, Location, Result};
use crate::json::{depth, MAX_RECORD_DEPTH};
use crate::model::{Actor, Block, Embed, Kind, Native, Reasoning, Scope, Timestamp};
use crate::model::ids::{embed_id, embed_link};
use crate::native::common::{data_url_embed, take_string};
use crate::native::types::{Options, Source};
use crate::store::{ImportSink, ImportTarget, ImportedMeta, ReadRecord, Session, Store};

use super::RUNTIME;
use super::records::{bad, check_message, millis, object, string};

/// Imports a session document (JSON text, bytes, a file, a parsed value) or a session of an
/// `opencode.db` (a path to the database; `options.session_id` picks the session, default: the
/// only one; a database with several sessions needs `session_id`).
pub(super) fn import(store: &Store, source: Source, options: &Options, target: ImportTarget) -> Result<Session> {
    let bytes = match source {
        Source::Path(path) => {
            if is_sqlite(&path)? {
                return import_db(store, &path, options);
            }
            std::fs::read(&path).map_err(|source| Error::Io { context: format!("cannot read {}", path.display()), source })?
        }
        Source::Text(text) => text.into_bytes(),
        Source::Bytes(bytes) => bytes,
        Source::Value(value) => return import_document(store, value, target),
    };
    // A file to remember is recorded as these bytes: the ones imported.
    let read = target.records_source().then(|| ReadRecord::of_bytes(&bytes));
    import_text(store, &bytes, target, read)
}

fn is_sqlite(path: &Path) -> Result<bool> {
    let head = crate::native::jsonl::head(path, 16)?;
    Ok(head.starts_with(b"SQLite format 3\0"))
}

/// Imports a document from its JSON text, one message at a time: the document is never held as
/// a whole tree of values, only its text and the message being converted.
fn import_text(store: &Store, bytes: &[u8], target: ImportTarget, read: Option<ReadRecord>) -> Result<Session> {
    let bytes = bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(bytes);
    store.import_to(target, |sink| {
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
                message: format!("not an OpenCode session document: {}", crate::native::jsonl::json_reason(&e)),
                location: Location { line: Some(e.line() as u64), offset: Some(offset as u64), ..Default::default() },
            }
        })?;
        let mut meta = importer.finish()?;
        meta.read = read;
        Ok(meta)
    })
}

/// Turns the parts of a document into blocks as they arrive.
struct Importer<'s, 't, 'c> {
    sink: &'s mut ImportSink<'t, 'c>,
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

impl<'s, 't, 'c> Importer<'s, 't, 'c> {
    fn new(sink: &'s mut ImportSink<'t, 'c>) -> Self {
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
            // Keys beside info and messages are kept with the session info, in the first block, so
            // they may nest as deep as a record may, and no deeper (as every message is checked).
            if let Some((key, _)) = self.extra.iter().find(|(_, value)| depth(value) > MAX_RECORD_DEPTH) {
                return Err(bad(key, format!("nested more than {MAX_RECORD_DEPTH} levels deep: it could not be read back once stored")));
            }
            let extra = Value::Object(std::mem::take(&mut self.extra));
            let native = Native { runtime: RUNTIME.into(), data: obj! { "session" => info.clone(), "document" => extra } };
            self.sink.set_native(0, &native)?;
        }
        Ok(ImportedMeta {
            id: info["id"].as_str().map(str::to_string),
            title: info["title"].as_str().map(str::to_string),
            cwd: info["directory"].as_str().map(str::to_string),
            read: None,
        })
    }
}

struct DocumentSeed<'i, 's, 't, 'c>(&'i mut Importer<'s, 't, 'c>);

impl<'de> serde::de::DeserializeSeed<'de> for DocumentSeed<'_, '_, '_, '_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> std::result::Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

fn stop<E: serde::de::Error>(importer: &mut Importer<'_, '_, '_>, error: Error) -> E {
    let message = error.to_string();
    importer.failed = Some(error);
    E::custom(message)
}

impl<'de> serde::de::Visitor<'de> for DocumentSeed<'_, '_, '_, '_> {
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

struct MessagesSeed<'i, 's, 't, 'c>(&'i mut Importer<'s, 't, 'c>);

impl<'de> serde::de::DeserializeSeed<'de> for MessagesSeed<'_, '_, '_, '_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> std::result::Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for MessagesSeed<'_, '_, '_, '_> {
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

/// Model provider of an OpenCode `providerID` (OpenCode's own provider ids name the vendor for the
/// bundled providers; a custom provider keeps its id).
pub(super) fn model_provider_of(provider_id: &str) -> String {
    match provider_id {
        "anthropic" | "google-vertex-anthropic" => "anthropic".into(),
        "openai" | "azure" => "openai".into(),
        "google" | "google-vertex" => "google".into(),
        other => other.into(),
    }
}

pub(super) struct MessageContext {
    pub(super) actor: Actor,
    pub(super) id: String,
    pub(super) turn: Option<String>,
    pub(super) created: Timestamp,
    /// `(model_provider, model)` of an assistant message.
    pub(super) model: Option<(String, String)>,
}

/// Imports a parsed document.
fn import_document(store: &Store, document: Value, target: ImportTarget) -> Result<Session> {
    let Value::Object(mut root) = document else {
        return Err(bad("$", format!("expected an object {{info, messages}}, not {}", super::json_type(&document))));
    };
    let info = root.remove("info").ok_or_else(|| bad("info", "missing"))?;
    let messages = match root.remove("messages") {
        Some(Value::Array(messages)) => messages,
        None => return Err(bad("messages", "missing")),
        Some(other) => return Err(bad("messages", format!("expected an array, not {}", super::json_type(&other)))),
    };
    store.import_to(target, |sink| {
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
pub(super) fn part_blocks(part: Value, ctx: &MessageContext) -> Result<Vec<Block>> {
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

/// The session documents of an `opencode.db`, as `opencode export` prints them: `session_id`
/// selects one; otherwise all, most recently updated first.
pub(crate) fn db_documents(path: &Path, session_id: Option<&str>) -> Result<Vec<Value>> {
    let storage = |context: &'static str| move |e: rusqlite::Error| Error::Storage { context: format!("{context} in {}", path.display()), source: Box::new(e) };
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
    import_document(store, document, ImportTarget::new(None))
}

/// Imports every session of an `opencode.db` (most recently updated first); sessions already in
/// the store are skipped, not replaced.
pub(super) fn import_all_db(store: &Store, path: &Path) -> Result<Vec<Session>> {
    if !is_sqlite(path)? {
        return Err(Error::invalid(format!("{} is not an opencode.db (no SQLite header)", path.display())));
    }
    let mut out = Vec::new();
    for document in db_documents(path, None)? {
        let id = document["info"]["id"].as_str().unwrap_or("").to_string();
        match store.session(&id) {
            Ok(_) => continue,
            Err(Error::NotFound(_)) => out.push(import_document(store, document, ImportTarget::new(None))?),
            Err(other) => return Err(other),
        }
    }
    Ok(out)
}
