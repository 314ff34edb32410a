//! Reading a Gemini CLI session log (or the older single-JSON session file) into blocks.
//!
//! The log is read whole, then loaded as the CLI loads it (`records::load`): the conversation is
//! the final message list, each message read from its last version, in the place its id first
//! appeared. Every line is kept: a line that holds the final version of a message travels with that
//! message's first block (`native.data = {line, record}`); every other line (the header, `$set`s,
//! `$rewindTo`s, earlier versions, messages rewound or replaced) is a `system/status` block with the
//! whole record, placed before the next message; messages loaded from a list (`$set.messages`)
//! point at the line that holds them (`{line, index}`). Export puts the lines back in file order.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use serde_json::{json, Map, Value};

use crate::error::{Error, Location, Result};
use crate::model::{Actor, Block, Kind, Native, Reasoning, Scope, Timestamp};
use crate::native::adapter::ImportRun;
use crate::json::{depth, MAX_RECORD_DEPTH};
use crate::native::common::{lenient_str, malformed_block, too_deep, truncate_chars};
use crate::native::parts::{inline_block, result_text};
use crate::native::jsonl::Lines;
use crate::native::types::Source;
use crate::store::{ImportedMeta, Session};

use super::records::{self, classify, From, Record};
use super::{is_context, sniff_record, MODEL_PROVIDER, RUNTIME};

/// A line as read: a record, or the error block of a line that could not be read.
enum Item {
    Record { number: u64, value: Value, sanitized: bool },
    Bad(Box<Block>),
}

/// Imports a session log (JSONL text, bytes, a file, a list of records) or a legacy session
/// document (a file, text, or a parsed object).
pub(super) fn import(run: ImportRun<'_>) -> Result<Session> {
    let ImportRun { store, source, options, target, foreign } = run;
    let root = match &source {
        Source::Path(path) => project_root(path),
        _ => None,
    };
    let source = match source {
        Source::Value(document @ Value::Object(_)) => Source::Value(Value::Array(vec![document])),
        other => other,
    };
    let mut lines = Lines::open(source)?.limited(options.max_record_bytes);
    if target.records_source() {
        lines = lines.recording(target.holds_partial_lines());
    }
    let strict = options.strict;
    store.import_to(target, |sink| {
        let mut settled = false;
        let (mut items, unread, mut deferred) = read_items(&mut lines, strict, |line, value| {
            if settled {
                return Ok(());
            }
            settled = value.as_object().is_some_and(sniff_record);
            match foreign(value, crate::model::Runtime::GeminiCli).filter(|_| !settled) {
                Some(other) => {
                    let other = other.display_name();
                    Err(Error::InvalidInput {
                        message: format!("this is {other} history, not {} (the line is a {other} record)", super::HISTORY_NAME),
                        location: Location { line: Some(line), ..Default::default() },
                    })
                }
                None => Ok(()),
            }
        })?;
        if !items.iter().any(|i| matches!(i, Item::Record { .. })) {
            // A legacy session document written over several lines.
            if let Ok(document @ Value::Object(_)) = serde_json::from_str::<Value>(&unread) {
                if document.as_object().is_some_and(records::is_header) {
                    if depth(&document) > MAX_RECORD_DEPTH {
                        return Err(Error::invalid(format!("the session document is nested more than {MAX_RECORD_DEPTH} levels deep")));
                    }
                    records::check_record(&document).map_err(|m| Error::invalid_field(m.field.unwrap_or_default(), m.reason))?;
                    items = vec![Item::Record { number: 1, value: document, sanitized: false }];
                    deferred = None;
                }
            }
        }
        if let Some(error) = deferred {
            return Err(error);
        }
        let (blocks, meta, _) = blocks_of(items, strict, root)?;
        for block in blocks {
            sink.push(block)?;
        }
        let mut meta = meta;
        meta.read = lines.read_record();
        Ok(meta)
    })
}

/// Reads every line: records, and error blocks for lines that cannot be read (in strict mode the
/// first such error is returned, or deferred when the line is not JSON: a pretty-printed legacy
/// document reads whole). `first` sees each record first, by line number.
fn read_items(lines: &mut Lines, strict: bool, mut first: impl FnMut(u64, &Value) -> Result<()>) -> Result<(Vec<Item>, String, Option<Error>)> {
    let mut items = Vec::new();
    // The text of lines that did not read as JSON: a pretty-printed legacy document.
    let mut unread = String::new();
    let mut deferred: Option<Error> = None;
    let mut last_time = None;
    while let Some(mut line) = lines.next_line()? {
        if let Ok(value) = &line.parsed {
            first(line.number, value)?;
        }
        match std::mem::replace(&mut line.parsed, Ok(Value::Null)) {
            Err(e) => {
                unread.push_str(&line.text());
                unread.push('\n');
                if strict && deferred.is_none() {
                    deferred = Some(line.error(format!("not JSON: {}", e.reason), None, e.column_offset));
                }
                items.push(Item::Bad(Box::new(malformed_block(RUNTIME, &line, &e.reason, None, None, last_time))));
            }
            Ok(value) => {
                if let Some(block) = too_deep(RUNTIME, &line, &value, strict, last_time)? {
                    items.push(Item::Bad(Box::new(block)));
                    continue;
                }
                if let Err(m) = records::check_record(&value) {
                    if strict {
                        return Err(line.error(&m.reason, m.field.clone(), 0));
                    }
                    items.push(Item::Bad(Box::new(malformed_block(RUNTIME, &line, &m.reason, m.field.as_deref(), Some(value), last_time))));
                    continue;
                }
                if let Some(time) = record_time(&value) {
                    last_time = Some(time);
                }
                items.push(Item::Record { number: line.number, value, sanitized: line.sanitized });
            }
        }
    }
    Ok((items, unread, deferred))
}

/// The messages of the log at `path` as the CLI loads it, each with its blocks (the first carrying
/// its line, as an import gives them): what a live driver records of a turn, the messages it has
/// not recorded yet.
pub(super) fn file_messages(path: &Path) -> Result<Vec<(String, Vec<Block>)>> {
    let mut lines = Lines::open(Source::Path(path.to_path_buf()))?;
    let (items, _, _) = read_items(&mut lines, false, |_, _| Ok(()))?;
    let (blocks, _, ranges) = blocks_of(items, false, None)?;
    Ok(ranges.into_iter().map(|(id, from, to)| (id, blocks[from..to].to_vec())).collect())
}

/// The project root of a log under `~/.gemini/tmp/<short>/chats/`, from the `.project_root` marker.
fn project_root(path: &Path) -> Option<String> {
    let chats = path.parent()?;
    let marker = chats.parent()?.join(".project_root");
    let root = std::fs::read_to_string(marker).ok()?;
    let root = root.trim();
    (!root.is_empty()).then(|| root.to_string())
}

/// Where the blocks of each message are: its id, from, to.
type Ranges = Vec<(String, usize, usize)>;

/// The blocks of the read lines, the session's id, title and cwd, and where each message's blocks
/// are.
fn blocks_of(items: Vec<Item>, strict: bool, root: Option<String>) -> Result<(Vec<Block>, ImportedMeta, Ranges)> {
    let maps: Vec<Option<&Map<String, Value>>> = items
        .iter()
        .map(|i| match i {
            Item::Record { value, .. } => value.as_object(),
            Item::Bad(_) => None,
        })
        .collect();
    let loaded = records::load(&maps);
    let number = |i: usize| match &items[i] {
        Item::Record { number, .. } => *number,
        Item::Bad(_) => 0,
    };
    if strict {
        if let Some((i, why)) = loaded.refused.first() {
            return Err(Error::InvalidInput { message: why.clone(), location: Location { line: Some(number(*i)), field: Some("$rewindTo".into()), ..Default::default() } });
        }
    }
    let refused: HashMap<usize, String> = loaded.refused.iter().cloned().collect();
    let carriers: HashMap<usize, usize> = loaded.messages.iter().enumerate().filter(|(_, (_, f))| f.index.is_none()).map(|(m, (_, f))| (f.record, m)).collect();
    let finals: HashSet<&str> = loaded.messages.iter().map(|(id, _)| id.as_str()).collect();
    let messages: Vec<(&str, From, &Map<String, Value>)> =
        loaded.messages.iter().filter_map(|(id, from)| records::message_at(&maps, *from).map(|m| (id.as_str(), *from, m))).collect();
    // Calls answered by a separate user record: their `toolCalls[].result` copy is not a second result.
    let separate: HashSet<String> = messages
        .iter()
        .filter(|(_, _, m)| lenient_str(m, "type") == Some("user"))
        .flat_map(|(_, _, m)| parts(m).iter().filter_map(|p| p.get("functionResponse")?.get("id")?.as_str().map(str::to_string)).collect::<Vec<_>>())
        .collect();
    let mut reader = Reader { separate, answered: HashSet::new(), last_time: None, first_prompt: None };
    let mut out = Vec::new();
    let mut next = 0;
    let mut ranges = Vec::new();
    let flush = |upto: usize, out: &mut Vec<Block>, reader: &mut Reader, next: &mut usize| {
        while *next < upto.min(items.len()) {
            let i = *next;
            *next += 1;
            if carriers.contains_key(&i) {
                continue;
            }
            match &items[i] {
                Item::Bad(block) => out.push((**block).clone()),
                Item::Record { number, value, sanitized } => {
                    let mut block = match refused.get(&i) {
                        Some(why) => {
                            let mut block = Block::new(Actor::System, Kind::Error, value.to_string());
                            block.native = Some(Native { runtime: RUNTIME.into(), data: json!({"malformed": {"line": number, "offset": 0, "reason": why, "field": "$rewindTo"}, "line": number, "record": value}) });
                            block
                        }
                        None => {
                            let mut block = Block::new(Actor::System, Kind::Status, status_line(value, &finals));
                            block.native = Some(Native { runtime: RUNTIME.into(), data: json!({"line": number, "record": value}) });
                            block
                        }
                    };
                    block.created_at = record_time(value).or(reader.last_time).unwrap_or_else(Timestamp::now);
                    reader.last_time = Some(block.created_at);
                    mark_sanitized(&mut block, *sanitized, *number);
                    out.push(block);
                }
            }
        }
    };
    for (id, from, message) in &messages {
        flush(if from.index.is_none() { from.record } else { from.record + 1 }, &mut out, &mut reader, &mut next);
        let mut blocks = reader.message_blocks(message);
        let native = match from.index {
            None => {
                let Item::Record { number, value, sanitized } = &items[from.record] else { continue };
                let mut data = json!({"line": number, "record": value});
                if *sanitized {
                    data["sanitized"] = json!({"line": number});
                }
                data
            }
            Some(index) => json!({"line": number(from.record), "index": index}),
        };
        if blocks.is_empty() {
            let mut block = Block::new(Actor::System, Kind::Status, format!("{} message (empty)", lenient_str(message, "type").unwrap_or("a")));
            block.created_at = map_time(message).or(reader.last_time).unwrap_or_else(Timestamp::now);
            block.message_id = lenient_str(message, "id").map(str::to_string);
            blocks.push(block);
        }
        let mut native = native;
        native["blocks"] = json!(blocks.len());
        blocks[0].native = Some(Native { runtime: RUNTIME.into(), data: native });
        ranges.push((id.to_string(), out.len(), out.len() + blocks.len()));
        out.extend(blocks);
    }
    flush(usize::MAX, &mut out, &mut reader, &mut next);
    let id = lenient_str(&loaded.meta, "sessionId").map(str::to_string).filter(|s| crate::store::validate_session_id(s).is_ok());
    let cwd = root.or_else(|| messages.iter().find_map(|(_, _, m)| workspace_of(m)));
    let title = reader.first_prompt.clone().or_else(|| lenient_str(&loaded.meta, "summary").map(|s| truncate_chars(s.lines().next().unwrap_or(""), 80)));
    Ok((out, ImportedMeta { id, title, cwd, read: None }, ranges))
}

fn mark_sanitized(block: &mut Block, sanitized: bool, number: u64) {
    if sanitized {
        if let Some(Value::Object(data)) = block.native.as_mut().map(|n| &mut n.data) {
            data.insert("sanitized".into(), json!({"line": number}));
        }
    }
}

/// The time a record names: a message's `timestamp`, a header's `startTime`, a `$set`'s
/// `lastUpdated`.
fn record_time(value: &Value) -> Option<Timestamp> {
    value.as_object().and_then(map_time)
}

/// [`record_time`] of a record's map.
fn map_time(value: &Map<String, Value>) -> Option<Timestamp> {
    let text = value
        .get("timestamp")
        .or_else(|| value.get("startTime"))
        .or_else(|| value.get("$set").and_then(|s| s.get("lastUpdated")))
        .and_then(Value::as_str)?;
    Timestamp::parse_rfc3339(text).ok()
}

/// What a line that is not a message of the conversation says.
fn status_line(value: &Value, finals: &HashSet<&str>) -> String {
    let Value::Object(record) = value else { return String::new() };
    match classify(record) {
        Record::Header => format!("session {}", lenient_str(record, "sessionId").unwrap_or("")),
        Record::Set => {
            let keys: Vec<&str> = record["$set"].as_object().map(|s| s.keys().map(String::as_str).collect()).unwrap_or_default();
            format!("set {}", keys.join(", "))
        }
        Record::Rewind => format!("rewind to {}", lenient_str(record, "$rewindTo").unwrap_or("")),
        Record::Message => {
            let id = lenient_str(record, "id").unwrap_or("");
            if finals.contains(id) {
                format!("earlier version of message {id}")
            } else {
                format!("message {id} (rewound or replaced)")
            }
        }
        Record::Other => "unknown record".into(),
    }
}

/// The parts of a message's `content` (a string is one text part).
fn parts(message: &Map<String, Value>) -> Vec<Value> {
    match message.get("content") {
        Some(Value::Array(parts)) => parts.clone(),
        Some(Value::String(text)) if !text.is_empty() => vec![json!({"text": text})],
        _ => Vec::new(),
    }
}

/// The first workspace directory the `<session_context>` of a message names.
fn workspace_of(message: &Map<String, Value>) -> Option<String> {
    let text = parts(message).into_iter().find_map(|p| p.get("text").and_then(Value::as_str).filter(|t| t.starts_with("<session_context>")).map(str::to_string))?;
    let mut lines = text.lines().skip_while(|l| !l.contains("**Workspace Directories:**"));
    lines.next()?;
    let path = lines.next()?.trim().strip_prefix("- ")?.trim();
    path.starts_with('/').then(|| path.to_string())
}

/// What is carried from message to message.
struct Reader {
    /// Call ids answered by a separate user record.
    separate: HashSet<String>,
    /// Call ids given a result block already.
    answered: HashSet<String>,
    last_time: Option<Timestamp>,
    first_prompt: Option<String>,
}

impl Reader {
    fn message_blocks(&mut self, message: &Map<String, Value>) -> Vec<Block> {
        let time = map_time(message).or(self.last_time).unwrap_or_else(Timestamp::now);
        self.last_time = Some(time);
        let ty = lenient_str(message, "type").unwrap_or("");
        let mut blocks = match ty {
            "user" => self.user_blocks(message),
            "gemini" => self.model_blocks(message),
            _ => {
                let kind = if ty == "error" { Kind::Error } else { Kind::Status };
                let text = match message.get("content") {
                    Some(Value::String(s)) => s.clone(),
                    Some(other) => other.to_string(),
                    None => String::new(),
                };
                vec![Block::new(Actor::System, kind, text)]
            }
        };
        let id = lenient_str(message, "id").map(str::to_string);
        for block in &mut blocks {
            block.created_at = time;
            block.message_id = id.clone();
        }
        blocks
    }

    fn user_blocks(&mut self, message: &Map<String, Value>) -> Vec<Block> {
        let mut blocks = Vec::new();
        for part in parts(message) {
            if let Some(text) = part.get("text").and_then(Value::as_str) {
                if self.first_prompt.is_none() && !is_context(text) && !text.trim().is_empty() {
                    self.first_prompt = Some(truncate_chars(text.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim(), 80));
                }
                blocks.push(Block::text(Actor::User, text));
            } else if let Some(inline) = part.get("inlineData") {
                blocks.push(inline_block(Actor::User, inline));
            } else if let Some(response) = part.get("functionResponse") {
                let call_id = response.get("id").and_then(Value::as_str).unwrap_or("").to_string();
                if call_id.is_empty() || !self.answered.insert(call_id.clone()) {
                    blocks.push(Block::new(Actor::System, Kind::Status, format!("another copy of the result of {call_id}")));
                    continue;
                }
                let (content, is_error) = result_text(response.get("response"));
                blocks.push(Block::tool_result(call_id, content, is_error));
            } else {
                blocks.push(Block::new(Actor::System, Kind::Status, "a part without text"));
            }
        }
        blocks
    }

    fn model_blocks(&mut self, message: &Map<String, Value>) -> Vec<Block> {
        let model = lenient_str(message, "model").map(str::to_string);
        let scope = Scope { provider: Some(RUNTIME.into()), model_provider: Some(MODEL_PROVIDER.into()), model: model.clone() };
        let signed = |part: &Value, block: &mut Block| {
            if let Some(signature) = part.get("thoughtSignature").and_then(Value::as_str) {
                block.reasoning = Some(Reasoning { format: Reasoning::GOOGLE_THOUGHT_SIGNATURE.into(), data: signature.into(), scope: scope.clone() });
            }
        };
        let content = parts(message);
        let mut blocks = Vec::new();
        let has_thought_parts = content.iter().any(|p| p.get("thought") == Some(&Value::Bool(true)));
        if !has_thought_parts {
            for thought in message.get("thoughts").and_then(Value::as_array).into_iter().flatten() {
                let text = thought.get("description").and_then(Value::as_str).unwrap_or("");
                blocks.push(Block::new(Actor::Assistant, Kind::Thinking, text));
            }
        }
        let mut calls = HashSet::new();
        for part in &content {
            let mut block = if let Some(call) = part.get("functionCall") {
                let id = call.get("id").and_then(Value::as_str).unwrap_or("").to_string();
                let name = call.get("name").and_then(Value::as_str).unwrap_or("").to_string();
                calls.insert(id.clone());
                Block::tool_use(id, name, call.get("args").cloned().unwrap_or(json!({})).to_string())
            } else if let Some(text) = part.get("text").and_then(Value::as_str) {
                let kind = if part.get("thought") == Some(&Value::Bool(true)) { Kind::Thinking } else { Kind::Text };
                Block::new(Actor::Assistant, kind, text)
            } else if let Some(inline) = part.get("inlineData") {
                inline_block(Actor::Assistant, inline)
            } else {
                Block::new(Actor::System, Kind::Status, "a part without text")
            };
            signed(part, &mut block);
            blocks.push(block);
        }
        let mut results = Vec::new();
        for call in message.get("toolCalls").and_then(Value::as_array).into_iter().flatten() {
            let id = call.get("id").and_then(Value::as_str).unwrap_or("").to_string();
            if !calls.contains(&id) {
                let name = call.get("name").and_then(Value::as_str).unwrap_or("").to_string();
                blocks.push(Block::tool_use(id.clone(), name, call.get("args").cloned().unwrap_or(json!({})).to_string()));
            }
            if self.separate.contains(&id) || !self.answered.insert(id.clone()) {
                continue;
            }
            let status = call.get("status").and_then(Value::as_str).unwrap_or("");
            let response = match call.get("result") {
                Some(Value::Array(parts)) => parts.iter().find_map(|p| p.get("functionResponse")?.get("response").cloned()),
                Some(Value::String(text)) => Some(json!({"output": text})),
                _ => None,
            };
            let (content, is_error) = result_text(response.as_ref());
            results.push(Block::tool_result(id, content, is_error || matches!(status, "error" | "cancelled")));
        }
        blocks.extend(results);
        for block in &mut blocks {
            if block.actor == Actor::Assistant {
                block.provider = Some(RUNTIME.into());
                block.model_provider = Some(MODEL_PROVIDER.into());
                block.model = model.clone();
            }
        }
        blocks
    }
}
