//! Blocks into Qwen Code chat records: the records an import kept, put back as they were, and
//! records written afresh for every other block — user records with `text` and `inlineData`
//! parts, assistant records with thought, text and `functionCall` parts, and after each assistant
//! step one `tool_result` record per call with its `functionResponse` — each linked to the record
//! before it by `parentUuid`, as Qwen Code walks the chain back from the last record.

use std::collections::{HashMap, HashSet};

use base64::Engine as _;
use serde_json::{json, Map, Value};

use crate::error::Result;
use crate::model::ids::{derived_uuid, is_uuid};
use crate::model::{content_pieces, Actor, Block, Kind, Piece};
use crate::native::common::{pending_results, B64};
use crate::native::parts::{call_args, response_part, step_end, CALL_ARGS_DEGRADED};
use crate::native::types::{ForeignReasoning, Options};
use crate::report::{ReportAction, ReportEntry};
use crate::store::Session;

use super::records::is_session_id;
use super::{RUNTIME, TARGET_VERSION};

/// What every record written afresh carries: the session's id and working directory.
pub(super) struct Context {
    pub session_id: String,
    pub cwd: String,
}

impl Context {
    /// The session's own id when Qwen Code takes it (a UUID of version 1 to 5), else one derived
    /// from it.
    pub(super) fn for_session(session: &Session) -> Context {
        let id = session.id();
        let session_id = if is_session_id(id) { id.to_string() } else { derived_uuid(&["qwen-code session", id]) };
        let cwd = session.info().ok().and_then(|i| i.cwd).unwrap_or_default();
        Context { session_id, cwd }
    }
}

/// What an imported block carries of its line.
enum Kept<'a> {
    /// A whole record, written back as it was.
    Record(&'a Value),
    /// A line that was not JSON: not written back.
    Unreadable,
}

fn kept(block: &Block) -> Option<Kept<'_>> {
    let native = block.native.as_ref().filter(|n| n.runtime == RUNTIME)?;
    let data = native.data.as_object()?;
    match data.get("record") {
        Some(record) => Some(Kept::Record(record)),
        None if data.contains_key("malformed") => Some(Kept::Unreadable),
        None => None,
    }
}

/// The chat records of `blocks`.
pub(super) fn records(session: &Session, blocks: &[Block], options: &Options, ctx: &Context, report: &mut Vec<ReportEntry>) -> Result<Vec<Value>> {
    let mut writer = Writer { session, options, ctx, report, out: Vec::new(), last: None, written: HashSet::new(), names: HashMap::new(), answered: HashSet::new(), user: None };
    let mut used = vec![false; blocks.len()];
    let mut i = 0;
    while i < blocks.len() {
        if used[i] {
            i += 1;
            continue;
        }
        used[i] = true;
        match kept(&blocks[i]) {
            Some(Kept::Record(record)) => {
                writer.flush_user();
                // The blocks of the record's other parts follow it (same message id, no record).
                let id = blocks[i].message_id.as_deref();
                let mut j = i + 1;
                while j < blocks.len() && blocks[j].native.is_none() && id.is_some() && blocks[j].message_id.as_deref() == id {
                    used[j] = true;
                    j += 1;
                }
                for block in &blocks[i..j] {
                    match (&block.tool, block.kind) {
                        (Some(tool), Kind::ToolUse) => {
                            writer.names.insert(tool.call_id.clone(), tool.name.clone().unwrap_or_default());
                        }
                        (Some(tool), _) => {
                            writer.answered.insert(tool.call_id.clone());
                        }
                        _ => {}
                    }
                }
                writer.keep(&blocks[i], record);
                i = j;
                continue;
            }
            Some(Kept::Unreadable) => writer.entry(ReportAction::Dropped, &blocks[i], "a line that was not JSON is not written back"),
            None => writer.fresh(blocks, i, &mut used)?,
        }
        i += 1;
    }
    writer.flush_user();
    Ok(writer.out)
}

struct Writer<'a> {
    session: &'a Session,
    options: &'a Options,
    ctx: &'a Context,
    report: &'a mut Vec<ReportEntry>,
    out: Vec<Value>,
    /// The uuid of the last record written: the next one's `parentUuid`.
    last: Option<String>,
    /// The uuids of the records written.
    written: HashSet<String>,
    /// Tool names by call id, for the responses.
    names: HashMap<String, String>,
    /// Calls given a result already.
    answered: HashSet<String>,
    /// The user record being gathered: the block that starts it, and its parts.
    user: Option<(Block, Vec<Value>)>,
}

impl Writer<'_> {
    fn entry(&mut self, action: ReportAction, block: &Block, message: impl Into<String>) {
        self.report.push(ReportEntry { action, block_id: Some(block.id.clone()), message: message.into() });
    }

    /// A record an import kept, as it was; linked to the record before it instead when its parent
    /// is not in the file (the replay left the records before it out: a compaction, a fold), so
    /// that the chain Qwen Code walks back from the last record still reaches the first.
    fn keep(&mut self, block: &Block, record: &Value) {
        let mut record = record.clone();
        let parent = record.get("parentUuid").and_then(Value::as_str);
        if parent.is_some_and(|p| !self.written.contains(p)) {
            self.entry(ReportAction::Remapped, block, format!("the record's parent {} is not written: it is linked to the record before it", parent.unwrap_or("")));
            record["parentUuid"] = json!(self.last);
        }
        if let Some(uuid) = record.get("uuid").and_then(Value::as_str) {
            self.written.insert(uuid.to_string());
            self.last = Some(uuid.to_string());
        }
        self.out.push(record);
    }

    /// A record of `ty` for `block` with `message`, linked to the one before; `extra` keys after
    /// the envelope.
    fn push(&mut self, block: &Block, ty: &str, message: Value, extra: Option<(&str, Value)>) {
        let uuid = if is_uuid(&block.id) { block.id.clone() } else { derived_uuid(&["qwen-code record", &block.id, ty]) };
        let mut record = Map::new();
        record.insert("uuid".into(), json!(uuid));
        record.insert("parentUuid".into(), json!(self.last));
        record.insert("sessionId".into(), json!(self.ctx.session_id));
        record.insert("timestamp".into(), json!(block.created_at.to_rfc3339()));
        record.insert("type".into(), json!(ty));
        record.insert("cwd".into(), json!(self.ctx.cwd));
        record.insert("version".into(), json!(TARGET_VERSION));
        if let Some((key, value)) = extra {
            record.insert(key.into(), value);
        }
        record.insert("message".into(), message);
        self.written.insert(uuid.clone());
        self.last = Some(uuid);
        self.out.push(Value::Object(record));
    }

    /// Adds a part to the user record being gathered (started by `block`).
    fn user_part(&mut self, block: &Block, part: Value) {
        match self.user.as_mut() {
            Some((_, parts)) => parts.push(part),
            None => self.user = Some((block.clone(), vec![part])),
        }
    }

    fn flush_user(&mut self) {
        if let Some((block, parts)) = self.user.take() {
            self.push(&block, "user", json!({"role": "user", "parts": parts}), None);
        }
    }

    /// The block at `i`, not kept from an import, written afresh (an assistant step takes the
    /// blocks of its message that follow, and its results).
    fn fresh(&mut self, blocks: &[Block], i: usize, used: &mut [bool]) -> Result<()> {
        let block = &blocks[i];
        match (block.actor, block.kind) {
            (_, Kind::Status) => {}
            (_, Kind::Error) => self.entry(ReportAction::Dropped, block, "error blocks are not sent to the model"),
            (Actor::Assistant, _) => self.assistant_step(blocks, i, used)?,
            (_, Kind::ToolResult) => {
                let call = block.tool.as_ref().map(|t| t.call_id.clone()).unwrap_or_default();
                if self.names.contains_key(&call) && self.answered.insert(call.clone()) {
                    // A result that comes late (its call's step was followed by other text).
                    self.flush_user();
                    let part = self.response_part(&call, block);
                    self.push(block, "tool_result", json!({"role": "user", "parts": [part]}), None);
                } else {
                    self.entry(ReportAction::Degraded, block, format!("a result of {call} without its call is written as user text"));
                    self.user_part(block, json!({"text": format!("[tool result of {call}]\n{}", block.content)}));
                }
            }
            (Actor::System, Kind::Text) => {
                self.entry(ReportAction::Degraded, block, "system text written as user text");
                self.user_part(block, json!({"text": block.content}));
            }
            (_, Kind::Thinking | Kind::ToolUse) => self.entry(ReportAction::Dropped, block, format!("a {} of the {} is not written", block.kind, block.actor)),
            (_, Kind::Text) => {
                for piece in content_pieces(block) {
                    let part = match piece {
                        Piece::Text(text) => json!({"text": text}),
                        Piece::Embed(id, embed) => json!({"inlineData": {"data": B64.encode(self.session.embed(id)?), "mimeType": embed.mime}}),
                    };
                    self.user_part(block, part);
                }
            }
        }
        Ok(())
    }

    /// The part of a thinking block: its text as a thought. Opaque reasoning (a signature, an
    /// encrypted payload) has no place in Qwen Code, which keeps reasoning as text: a block that
    /// carries some is left out, or with `foreign_reasoning: text` written as text.
    fn thought(&mut self, block: &Block) -> Option<Value> {
        let Some(reasoning) = block.reasoning.as_ref().filter(|r| !r.data.is_empty()) else {
            return Some(json!({"text": block.content, "thought": true}));
        };
        let why = format!("{} reasoning has no place in Qwen Code, which keeps reasoning as text", reasoning.format);
        if self.options.foreign_reasoning == ForeignReasoning::Text && !block.content.trim().is_empty() {
            self.entry(ReportAction::Degraded, block, format!("{why}; written as text"));
            return Some(json!({"text": format!("[reasoning] {}", block.content)}));
        }
        self.entry(ReportAction::Dropped, block, why);
        None
    }

    /// One assistant record from the assistant blocks starting at `i` (the rest of its message,
    /// or of consecutive assistant blocks without one), then a `tool_result` record per call.
    fn assistant_step(&mut self, blocks: &[Block], i: usize, used: &mut [bool]) -> Result<()> {
        self.flush_user();
        let first = &blocks[i];
        let end = step_end(blocks, i, used, |b| kept(b).is_some());
        let mut parts = Vec::new();
        let mut model = None;
        for block in &blocks[i..=end] {
            model = model.or(block.model.clone());
            let part = match block.kind {
                Kind::Thinking => match self.thought(block) {
                    Some(part) => part,
                    None => continue,
                },
                Kind::Text => {
                    if !block.embeds.is_empty() {
                        self.entry(ReportAction::Degraded, block, "images of an assistant message are not written; their links stay in the text");
                    }
                    json!({"text": block.content})
                }
                Kind::ToolUse => {
                    let tool = block.tool.as_ref();
                    let id = tool.map(|t| t.call_id.clone()).unwrap_or_default();
                    let name = tool.and_then(|t| t.name.clone()).unwrap_or_default();
                    self.names.insert(id.clone(), name.clone());
                    let (args, degraded) = call_args(&block.content);
                    if degraded {
                        self.entry(ReportAction::Degraded, block, CALL_ARGS_DEGRADED);
                    }
                    json!({"functionCall": {"id": id, "name": name, "args": args}})
                }
                _ => {
                    self.entry(ReportAction::Dropped, block, format!("a {} of the assistant is not written", block.kind));
                    continue;
                }
            };
            parts.push(part);
        }
        if !parts.is_empty() {
            let model = model.or_else(|| self.options.target_model.clone());
            self.push(first, "assistant", json!({"role": "model", "parts": parts}), model.map(|m| ("model", json!(m))));
        }
        for (j, call_id, found) in pending_results(blocks, i, end, used, &self.answered) {
            self.answered.insert(call_id.clone());
            let (block, part) = match found {
                Some(k) => (&blocks[k], self.response_part(&call_id, &blocks[k])),
                None => {
                    self.entry(ReportAction::Synthesized, &blocks[j], format!("the call {call_id} had no result; an error result was written"));
                    let name = self.names.get(&call_id).cloned().unwrap_or_default();
                    (&blocks[j], json!({"functionResponse": {"id": call_id, "name": name, "response": {"error": "[no result was recorded for this call]"}}}))
                }
            };
            let mut result = block.clone();
            if found.is_none() {
                result.id = format!("{}-result", block.id);
            }
            self.push(&result, "tool_result", json!({"role": "user", "parts": [part]}), None);
        }
        Ok(())
    }

    fn response_part(&mut self, call_id: &str, result: &Block) -> Value {
        let name = self.names.get(call_id).cloned().unwrap_or_default();
        if !result.embeds.is_empty() {
            self.entry(ReportAction::Degraded, result, "images of a tool result are not carried in a Qwen Code function response; their links stay in the text");
        }
        response_part(call_id, &name, result)
    }
}
