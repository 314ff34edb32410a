//! Reading a Pi session file (JSONL text, bytes, a file, or a list of entries) into blocks: the
//! message entries of the active branch as conversation, one block per content block; every other
//! line (the header, model and thinking-level changes, compactions, labels, entries off the active
//! branch, roles sna does not model) as a status block keeping the whole entry.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read};

use base64::Engine as _;

use serde_json::{json, Map, Value};

use crate::error::{Error, Result};
use crate::model::ids::{embed_id, embed_link};
use crate::model::{Actor, Block, Embed, Kind, Native, Reasoning, Runtime, Scope, Timestamp};
use crate::native::adapter::{import_lines_with, ImportRun, LineReader};
use crate::native::common::{lenient_str, read_line_blocks, truncate_chars, B64};
use crate::native::jsonl::{Line, MAX_RECORD_BYTES};
use crate::native::types::Source;
use crate::store::{validate_session_id, ImportedMeta, Session};

use super::records::{check_record, is_entry, is_header, message_vendor, thinking_format, HEADER};
use super::{HISTORY_NAME, RUNTIME};

/// Which entries lie on the active branch (the path from the last entry back to a root).
#[derive(Debug, Default)]
pub(super) struct Branch {
    /// The entry ids on the path; `None` when the file is one linear chain (every entry is on it).
    ids: Option<HashSet<String>>,
}

impl Branch {
    /// True when the entry `id` is on the active branch.
    fn holds(&self, id: Option<&str>) -> bool {
        match (&self.ids, id) {
            (None, _) => true,
            (Some(ids), Some(id)) => ids.contains(id),
            (Some(_), None) => false,
        }
    }

    /// The branch of entries given as (id, parentId) in file order: the leaf is the last entry;
    /// the walk up stops at an entry whose parent is missing (it acts as a root).
    pub(super) fn of(entries: &[(String, Option<String>)]) -> Branch {
        let linear = entries.windows(2).all(|w| w[1].1.as_deref() == Some(w[0].0.as_str()));
        if linear {
            return Branch { ids: None };
        }
        let parents: std::collections::HashMap<&str, Option<&str>> =
            entries.iter().map(|(id, parent)| (id.as_str(), parent.as_deref())).collect();
        let mut ids = HashSet::new();
        let mut at = entries.last().map(|(id, _)| id.as_str());
        while let Some(id) = at {
            // A cycle of parent links ends the walk too.
            if !ids.insert(id.to_string()) {
                break;
            }
            at = parents.get(id).copied().flatten().filter(|p| parents.contains_key(p));
        }
        Branch { ids: Some(ids) }
    }
}

/// The tree fields of one line, read without the rest of the entry.
#[derive(serde::Deserialize)]
struct TreeFields {
    #[serde(rename = "type", default)]
    ty: Option<String>,
    #[serde(default)]
    id: Option<String>,
    #[serde(rename = "parentId", default)]
    parent_id: Option<String>,
}

/// The active branch of `source`: a first pass that reads only each line's tree fields (lines
/// that do not read are left out, as Pi skips them).
pub(super) fn active_branch(source: &Source, limit: u64) -> Result<Branch> {
    let mut entries: Vec<(String, Option<String>)> = Vec::new();
    let mut take = |line: &[u8]| {
        let mut line = line;
        while let [0, rest @ ..] = line {
            line = rest;
        }
        let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        if let Ok(TreeFields { ty, id: Some(id), parent_id }) = serde_json::from_slice::<TreeFields>(line) {
            if ty.as_deref() != Some(HEADER) {
                entries.push((id, parent_id));
            }
        }
    };
    match source {
        Source::Text(text) => text.as_bytes().split(|b| *b == b'\n').for_each(&mut take),
        Source::Bytes(bytes) => bytes.split(|b| *b == b'\n').for_each(&mut take),
        Source::Value(Value::Array(items)) => {
            for item in items {
                let id = item.get("id").and_then(Value::as_str);
                if let (Some(id), false) = (id, item.get("type").and_then(Value::as_str) == Some(HEADER)) {
                    entries.push((id.to_string(), item.get("parentId").and_then(Value::as_str).map(str::to_string)));
                }
            }
        }
        Source::Value(_) => {}
        Source::Path(path) => {
            let io = |source| Error::Io { context: format!("cannot read {}", path.display()), source };
            let mut reader = BufReader::with_capacity(1 << 16, std::fs::File::open(path).map_err(io)?);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                // A line past the limit is not read whole here; the import proper refuses it.
                let n = (&mut reader).take(limit + 1).read_until(b'\n', &mut buf).map_err(io)?;
                if n == 0 {
                    break;
                }
                if n as u64 > limit {
                    break;
                }
                take(&buf);
            }
        }
    }
    Ok(Branch::of(&entries))
}

/// What the importer tracks across lines.
#[derive(Default)]
pub(super) struct ImportState {
    /// The active branch, found by a first pass over the input (which entries are on it is known
    /// only from the last line).
    branch: Option<Branch>,
    /// True once the first line was read.
    started: bool,
    session_id: Option<String>,
    cwd: Option<String>,
    /// The latest `session_info` name.
    name: Option<String>,
    first_prompt: Option<String>,
    /// The time of the previous entry, for entries without a timestamp.
    last_time: Option<Timestamp>,
    /// The ids of the entries read, to tell an entry written again.
    seen: HashSet<String>,
}

impl ImportState {
    fn title(&self) -> Option<String> {
        self.name.clone().filter(|n| !n.trim().is_empty()).or_else(|| {
            self.first_prompt.as_ref().map(|p| {
                // The `<file name="…">` blocks Pi puts in front of the text for `@file` attachments
                // are not the prompt.
                let line = p.lines().find(|l| !l.trim().is_empty() && !l.trim_start().starts_with("<file ") && !l.trim_start().starts_with("</file>")).unwrap_or("").trim();
                truncate_chars(line, 80)
            })
        })
    }
}

/// Imports a Pi session file.
pub(super) fn import(run: ImportRun<'_>) -> Result<Session> {
    let branch = active_branch(&run.source, run.options.max_record_bytes.unwrap_or(MAX_RECORD_BYTES))?;
    let state = ImportState { branch: Some(branch), ..ImportState::default() };
    import_lines_with::<EntryReader>(run, state, |state| ImportedMeta {
        id: state.session_id.clone().filter(|id| validate_session_id(id).is_ok()),
        title: state.title(),
        cwd: state.cwd.clone(),
        read: None,
    })
}

/// A session file read as it grows (the live driver). Every line a running Pi appends hangs off
/// the leaf before it, so each is on the active branch.
pub(super) type Growth = crate::native::adapter::Growth<EntryReader>;

/// Reads session lines.
pub(super) struct EntryReader;

impl LineReader for EntryReader {
    type State = ImportState;
    const RUNTIME: Runtime = Runtime::Pi;
    const WHAT: &'static str = HISTORY_NAME;

    fn line_blocks(line: &mut Line<'_>, state: &mut ImportState, strict: bool) -> Result<Vec<Block>> {
        let mut missing_header = None;
        if !state.started {
            state.started = true;
            if let Ok(value) = &line.parsed {
                if value.get("type").and_then(Value::as_str) != Some(HEADER) {
                    let reason = "the first line of a Pi session file must be its header {\"type\":\"session\",…}";
                    if strict {
                        return Err(line.error(reason, Some("type".into()), 0));
                    }
                    missing_header = Some(missing_header_block(line, reason));
                }
            }
        }
        let last_time = state.last_time;
        let mut blocks = read_line_blocks(RUNTIME, line, strict, last_time, check_record, |value| entry_blocks(value, state))?;
        if let Some(mut block) = missing_header {
            block.created_at = blocks.first().map_or_else(Timestamp::now, |b| b.created_at);
            blocks.insert(0, block);
        }
        Ok(blocks)
    }

    fn is_own(record: &Value) -> bool {
        record.as_object().is_some_and(|map| is_header(map) || is_entry(map))
    }
}

/// The `error` block that says a file has no header (its first line is kept as read): listed by
/// the import report, never written back; an export writes a header of its own.
fn missing_header_block(line: &Line<'_>, reason: &str) -> Block {
    let mut block = Block::new(Actor::System, Kind::Error, "no Pi session header: the file starts with an entry");
    let info = json!({ "line": line.number, "offset": line.offset, "reason": reason, "field": "type" });
    block.native = Some(Native { runtime: RUNTIME.into(), data: json!({ "malformed": info, "missing_header": true }) });
    block
}

/// A status (or other kind) block keeping a whole entry.
fn whole(actor: Actor, kind: Kind, content: String, record: Value, created_at: Timestamp) -> Block {
    let mut block = Block::new(actor, kind, content);
    block.created_at = created_at;
    block.native = Some(Native { runtime: RUNTIME.into(), data: json!({ "record": record }) });
    block
}

/// The blocks of an entry that passed `check_record`.
fn entry_blocks(mut value: Value, state: &mut ImportState) -> Vec<Block> {
    let Value::Object(map) = &mut value else { return Vec::new() };
    let ty = lenient_str(map, "type").unwrap_or("").to_string();
    let created_at = lenient_str(map, "timestamp")
        .and_then(|text| Timestamp::parse_rfc3339(text).ok())
        .or(state.last_time)
        .unwrap_or_else(Timestamp::now);
    state.last_time = Some(created_at);
    // Pi writes every entry of a file it resumed again when that file held no assistant message
    // (its session manager appends all it holds at the first answer): an entry with the id of one
    // read before is kept whole, as a status line, not said twice.
    if ty != HEADER {
        if let Some(id) = lenient_str(map, "id") {
            if !state.seen.insert(id.to_string()) {
                let line = format!("entry {id} ({ty}) written again");
                return vec![whole(Actor::System, Kind::Status, line, value, created_at)];
            }
        }
    }
    let text = |key: &str| lenient_str(map, key).unwrap_or("");
    let line = match ty.as_str() {
        HEADER => {
            if state.session_id.is_none() {
                state.session_id = lenient_str(map, "id").map(str::to_string);
                state.cwd = lenient_str(map, "cwd").map(str::to_string);
            }
            format!("Pi session {} in {}", text("id"), text("cwd"))
        }
        "model_change" => format!("model: {}/{}", text("provider"), text("modelId")),
        "thinking_level_change" => format!("thinking level: {}", text("thinkingLevel")),
        "compaction" => format!("compaction: {}", truncate_chars(text("summary"), 200)),
        "branch_summary" => format!("branch summary: {}", truncate_chars(text("summary"), 200)),
        "label" => match lenient_str(map, "label") {
            Some(label) => format!("label {}: {label}", text("targetId")),
            None => format!("label {} cleared", text("targetId")),
        },
        "session_info" => {
            state.name = lenient_str(map, "name").map(str::to_string);
            format!("session name: {}", text("name"))
        }
        "custom" => format!("custom: {}", text("customType")),
        "custom_message" => format!("custom message: {}", text("customType")),
        "message" => return message_blocks(value, state, created_at),
        other => other.to_string(),
    };
    vec![whole(Actor::System, Kind::Status, line, value, created_at)]
}

/// Attribution of one assistant message.
struct Attribution {
    api: String,
    vendor: Option<&'static str>,
    model: Option<String>,
}

impl Attribution {
    fn of(message: &Map<String, Value>) -> Attribution {
        let api = lenient_str(message, "api").unwrap_or("").to_string();
        let vendor = message_vendor(Some(&api), lenient_str(message, "provider"));
        Attribution { api, vendor, model: lenient_str(message, "model").map(str::to_string) }
    }

    fn apply(&self, block: &mut Block) {
        block.provider = Some(RUNTIME.into());
        block.model_provider = self.vendor.map(str::to_string);
        block.model = self.model.clone();
    }

    fn scope(&self) -> Scope {
        Scope { provider: Some(RUNTIME.into()), model_provider: self.vendor.map(str::to_string), model: self.model.clone() }
    }
}

/// A readable preview of a message's content, for status lines.
fn preview(message: &Map<String, Value>) -> String {
    let text = match message.get("content") {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(items)) => items.iter().filter_map(|i| i.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join(" "),
        _ => String::new(),
    };
    truncate_chars(text.lines().next().unwrap_or(""), 120)
}

/// The blocks of a `message` entry.
fn message_blocks(mut value: Value, state: &mut ImportState, created_at: Timestamp) -> Vec<Block> {
    let entry_id = value.get("id").and_then(Value::as_str).map(str::to_string);
    let on_branch = state.branch.as_ref().is_none_or(|b| b.holds(entry_id.as_deref()));
    let Some(Value::Object(message)) = value.get_mut("message") else { return Vec::new() };
    let role = lenient_str(message, "role").unwrap_or("").to_string();
    if !on_branch {
        let line = format!("off the active branch: {role} message {}", preview(message));
        let mut block = whole(Actor::System, Kind::Status, line.trim_end().to_string(), value, created_at);
        if let Some(Value::Object(data)) = block.native.as_mut().map(|n| &mut n.data) {
            data.insert("branch".into(), json!("off"));
        }
        return vec![block];
    }
    let (actor, attribution) = match role.as_str() {
        "user" => (Actor::User, None),
        "assistant" => (Actor::Assistant, Some(Attribution::of(message))),
        "toolResult" => return vec![tool_result_block(value, created_at, entry_id)],
        "bashExecution" => {
            let line = format!("bash: {}", truncate_chars(lenient_str(message, "command").unwrap_or(""), 200));
            return vec![whole(Actor::User, Kind::Status, line, value, created_at)];
        }
        "custom" => {
            let line = format!("custom message: {}", lenient_str(message, "customType").unwrap_or(""));
            return vec![whole(Actor::System, Kind::Status, line, value, created_at)];
        }
        other => return vec![whole(Actor::System, Kind::Status, format!("{other} message"), value, created_at)],
    };
    let error_message = lenient_str(message, "errorMessage").map(str::to_string);
    let content = message.insert("content".into(), Value::Null).unwrap_or(Value::Null);
    if actor == Actor::User && state.first_prompt.is_none() {
        state.first_prompt = match &content {
            Value::String(text) => Some(text.clone()),
            Value::Array(items) => items.iter().find_map(|i| i.get("text").and_then(Value::as_str)).map(str::to_string),
            _ => None,
        };
    }
    let finish = |block: &mut Block| {
        if let Some(attribution) = &attribution {
            attribution.apply(block);
        }
        block.created_at = created_at;
        block.message_id = entry_id.clone();
    };
    let mut blocks = match content {
        Value::String(text) => {
            let mut block = Block::new(actor, Kind::Text, text);
            finish(&mut block);
            block.native = Some(Native { runtime: RUNTIME.into(), data: json!({ "record": value, "parts": 1 }) });
            vec![block]
        }
        Value::Array(items) if !items.is_empty() => {
            let parts = items.len();
            let mut blocks = Vec::with_capacity(parts + 1);
            let mut envelope = Some(value);
            for item in items {
                let Value::Object(item) = item else { continue };
                let (mut block, residual) = item_block(actor, item, attribution.as_ref());
                finish(&mut block);
                let data = match envelope.take() {
                    Some(record) => json!({ "record": record, "parts": parts, "item": residual }),
                    None => json!({ "item": residual }),
                };
                block.native = Some(Native { runtime: RUNTIME.into(), data });
                blocks.push(block);
            }
            blocks
        }
        empty => {
            // Nothing to model (an errored or aborted reply without content): kept whole.
            value["message"]["content"] = empty;
            let (kind, line) = match &error_message {
                Some(error) => (Kind::Error, error.clone()),
                None => (Kind::Status, format!("{role} message without content")),
            };
            let mut block = whole(actor, kind, line, value, created_at);
            finish(&mut block);
            return vec![block];
        }
    };
    if let Some(error) = error_message {
        // The reply ended in an error: said in a block of its own, which export leaves out (the
        // message keeps its `errorMessage`).
        let mut block = Block::new(actor, Kind::Error, error);
        finish(&mut block);
        block.native = Some(Native { runtime: RUNTIME.into(), data: json!({ "derived": "errorMessage" }) });
        blocks.push(block);
    }
    blocks
}

/// An `image` content block's bytes as an embed, and whether `data` is their canonical base64.
fn image_embed(item: &Map<String, Value>) -> Option<(Embed, bool)> {
    let mime = lenient_str(item, "mimeType")?;
    let data = lenient_str(item, "data")?;
    let bytes = B64.decode(data.as_bytes()).ok()?;
    let canonical = B64.encode(&bytes) == data;
    Some((Embed::from_bytes(mime, None, bytes), canonical))
}

/// Takes the string at `key` out of `item`, leaving `null`.
fn take_str(item: &mut Map<String, Value>, key: &str) -> String {
    match item.insert(key.to_string(), Value::Null) {
        Some(Value::String(s)) => s,
        _ => String::new(),
    }
}

/// One content block of a user or assistant message as a block, and its residual for
/// `native.data.item`: the content block with the payloads the block holds set to null (image
/// data to `{"embed": id}`), so that export puts them back.
fn item_block(actor: Actor, mut item: Map<String, Value>, attribution: Option<&Attribution>) -> (Block, Value) {
    let ty = lenient_str(&item, "type").unwrap_or("").to_string();
    let is_str = |item: &Map<String, Value>, key: &str| matches!(item.get(key), Some(Value::String(_)));
    let signature = |item: &Map<String, Value>, key: &str| lenient_str(item, key).is_some_and(|s| !s.is_empty());
    match (ty.as_str(), attribution) {
        // A `textSignature` (Responses message id, Google thought signature) stays in the
        // residual: canonical reasoning is carried by thinking blocks only.
        ("text", _) if is_str(&item, "text") => {
            return (Block::new(actor, Kind::Text, take_str(&mut item, "text")), Value::Object(item));
        }
        ("thinking", Some(attribution)) if is_str(&item, "thinking") => {
            let mut block = Block::new(actor, Kind::Thinking, take_str(&mut item, "thinking"));
            let redacted = item.get("redacted") == Some(&Value::Bool(true));
            if let (Some(format), true) = (thinking_format(&attribution.api, redacted), signature(&item, "thinkingSignature")) {
                block.reasoning =
                    Some(Reasoning { format: format.into(), data: take_str(&mut item, "thinkingSignature"), scope: attribution.scope() });
            }
            return (block, Value::Object(item));
        }
        ("toolCall", Some(_)) if signature(&item, "id") && signature(&item, "name") => {
            let input = match item.get_mut("arguments") {
                Some(arguments) => std::mem::take(arguments).to_string(),
                None => "null".to_string(),
            };
            let call = lenient_str(&item, "id").unwrap_or("").to_string();
            let name = lenient_str(&item, "name").unwrap_or("").to_string();
            // A Google `thoughtSignature` stays in the residual, restored by export: canonical
            // reasoning is carried by thinking blocks only.
            return (Block { actor, ..Block::tool_use(call, name, input) }, Value::Object(item));
        }
        ("image", _) => {
            if let Some((embed, canonical)) = image_embed(&item) {
                let id = embed_id(&embed);
                if canonical {
                    item.insert("data".into(), json!({ "embed": id }));
                }
                let mut block = Block::new(actor, Kind::Text, embed_link("image", &id));
                block.embeds.insert(id, embed);
                return (block, Value::Object(item));
            }
        }
        _ => {}
    }
    // Not a shape sna models: kept whole.
    let line = if ty.is_empty() { "content block without a type".to_string() } else { format!("[{ty}]") };
    (Block::new(actor, Kind::Status, line), Value::Object(item))
}

/// A `toolResult` message as one `tool_result` block: its text blocks joined by newlines (each
/// kept in the residual as its `[start, end]` range), its images as embeds.
fn tool_result_block(mut value: Value, created_at: Timestamp, entry_id: Option<String>) -> Block {
    let Some(Value::Object(message)) = value.get_mut("message") else { return Block::new(Actor::User, Kind::Status, "") };
    let call_id = lenient_str(message, "toolCallId").unwrap_or("").to_string();
    let is_error = message.get("isError").and_then(Value::as_bool).unwrap_or(false);
    let mut block = Block::tool_result(call_id, "", is_error);
    block.created_at = created_at;
    block.message_id = entry_id;
    let content = message.insert("content".into(), Value::Null).unwrap_or(Value::Null);
    let data = match content {
        Value::String(text) => {
            block.content = text;
            json!({ "record": value, "parts": 1 })
        }
        Value::Array(mut parts) => {
            let mut rendered = String::new();
            for part in parts.iter_mut() {
                let Value::Object(p) = part else { continue };
                let separate = |rendered: &mut String| {
                    if !rendered.is_empty() {
                        rendered.push('\n');
                    }
                };
                match lenient_str(p, "type") {
                    Some("text") if matches!(p.get("text"), Some(Value::String(_))) => {
                        separate(&mut rendered);
                        let start = rendered.len();
                        rendered.push_str(&take_str(p, "text"));
                        p.insert("text".into(), json!([start, rendered.len()]));
                    }
                    Some("image") => {
                        if let Some((embed, canonical)) = image_embed(p) {
                            let id = embed_id(&embed);
                            separate(&mut rendered);
                            rendered.push_str(&embed_link("image", &id));
                            if canonical {
                                p.insert("data".into(), json!({ "embed": id }));
                            }
                            block.embeds.insert(id, embed);
                        }
                    }
                    _ => {}
                }
            }
            block.content = rendered;
            json!({ "record": value, "parts": 1, "item": parts })
        }
        other => {
            // No content list: the message is kept as it was.
            value["message"]["content"] = other;
            json!({ "record": value })
        }
    };
    block.native = Some(Native { runtime: RUNTIME.into(), data });
    block
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(pairs: &[(&str, Option<&str>)]) -> Vec<(String, Option<String>)> {
        pairs.iter().map(|(id, p)| (id.to_string(), p.map(str::to_string))).collect()
    }

    #[test]
    fn a_linear_file_is_all_on_the_branch() {
        let branch = Branch::of(&entries(&[("a", None), ("b", Some("a")), ("c", Some("b"))]));
        assert!(branch.ids.is_none());
        assert!(branch.holds(Some("zzz")));
    }

    #[test]
    fn the_last_entry_decides_the_branch() {
        // a ← b ← c, then a fork at b: d's parent is a.
        let branch = Branch::of(&entries(&[("a", None), ("b", Some("a")), ("c", Some("b")), ("d", Some("a"))]));
        assert!(branch.holds(Some("a")) && branch.holds(Some("d")));
        assert!(!branch.holds(Some("b")) && !branch.holds(Some("c")) && !branch.holds(None));
        // A missing parent ends the walk; a cycle does too.
        let branch = Branch::of(&entries(&[("a", None), ("b", Some("x")), ("c", Some("b")), ("b2", Some("c2"))]));
        assert_eq!(branch.ids.unwrap().len(), 1);
        let branch = Branch::of(&entries(&[("a", Some("b")), ("c", None), ("b", Some("a"))]));
        assert!(branch.holds(Some("a")) && branch.holds(Some("b")));
    }

    #[test]
    fn the_first_pass_reads_only_tree_fields() {
        let text = "{\"type\":\"session\",\"id\":\"s\"}\n{\"type\":\"message\",\"id\":\"a\",\"parentId\":null}\nnot json\n{\"type\":\"label\",\"id\":\"b\",\"parentId\":\"x\"}\n";
        let branch = active_branch(&Source::Text(text.into()), 1 << 20).unwrap();
        assert!(branch.holds(Some("b")) && !branch.holds(Some("a")));
    }
}
