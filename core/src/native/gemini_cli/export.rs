//! Blocks into Gemini CLI log records: the lines an import kept, put back in file order, and
//! records written afresh for every other block (gemini-cli.md §5.2): a header, user records with
//! text and `inlineData` parts, model records whose `content` is a `Part[]` (thought parts,
//! text, `functionCall` parts, each with its `thoughtSignature` where one is valid for the target),
//! and after each model step with calls one user record with their `functionResponse`s, in call
//! order. No `toolCalls` are written: the CLI would send every result twice.

use std::collections::{HashMap, HashSet};

use serde_json::{json, Map, Value};

use crate::error::Result;
use crate::model::ids::derived_uuid;
use crate::model::{Actor, Block, Kind, Reasoning};
use crate::native::common::{content_pieces, pending_results, Piece, B64};
use crate::native::parts::{call_args, response_part, step_end, CALL_ARGS_DEGRADED};
use base64::Engine as _;
use crate::native::types::{ForeignReasoning, Options};
use crate::report::{ReportAction, ReportEntry};
use crate::store::Session;

use super::{MODEL_PROVIDER, RUNTIME, SIGNATURE_PLACEHOLDER};

/// What an imported block carries of its line.
enum Kept<'a> {
    /// A whole record (and how many blocks, this one first, it covers).
    Record(&'a Value, usize),
    /// Blocks whose record is part of another kept line (a `$set.messages` list).
    Covered(usize),
    /// A line that was not JSON: not written back.
    Unreadable,
}

fn kept(block: &Block) -> Option<Kept<'_>> {
    let native = block.native.as_ref().filter(|n| n.runtime == RUNTIME)?;
    let data = native.data.as_object()?;
    data.get("line")?;
    let count = data.get("blocks").and_then(Value::as_u64).unwrap_or(1).max(1) as usize;
    Some(match data.get("record") {
        Some(record) => Kept::Record(record, count),
        None if data.contains_key("index") => Kept::Covered(count),
        None => Kept::Unreadable,
    })
}

/// The log records of `blocks`.
pub(super) fn log(session: &Session, blocks: &[Block], options: &Options, report: &mut Vec<ReportEntry>) -> Result<Vec<Value>> {
    let mut writer = Writer { session, options, report, out: Vec::new(), names: HashMap::new(), answered: HashSet::new(), user: None };
    let mut i = 0;
    let mut used = vec![false; blocks.len()];
    while i < blocks.len() {
        if used[i] {
            i += 1;
            continue;
        }
        match kept(&blocks[i]) {
            Some(Kept::Record(_, _)) | Some(Kept::Covered(_)) => {
                // A user record still being gathered from blocks made here comes first: it was
                // said before the kept lines (found by the chaos campaign: an interrupted message,
                // stored by the host, went after the turns that followed it).
                writer.flush_user();
                // A run of kept lines goes back in file order. The lines of one file come in
                // order; a line number not above the one before is another file's (the log the
                // runtime wrote after a resume from a file of ours): a run of its own, after this.
                let mut run: Vec<(u64, usize, Value)> = Vec::new();
                let mut last_line: Option<u64> = None;
                while i < blocks.len() {
                    let (n, record) = match kept(&blocks[i]) {
                        Some(Kept::Record(record, n)) => (n, Some(record.clone())),
                        Some(Kept::Covered(n)) => (n, None),
                        _ => break,
                    };
                    let line = blocks[i].native.as_ref().and_then(|n| n.data.get("line")).and_then(Value::as_u64).unwrap_or(0);
                    if record.is_some() && last_line.is_some_and(|last| line <= last) {
                        break;
                    }
                    if record.is_some() {
                        last_line = Some(line);
                    }
                    for block in &blocks[i..(i + n).min(blocks.len())] {
                        if let Some(tool) = &block.tool {
                            writer.answered.insert(tool.call_id.clone());
                        }
                    }
                    if let Some(record) = record {
                        run.push((line, run.len(), record));
                    }
                    for u in used.iter_mut().skip(i).take(n) {
                        *u = true;
                    }
                    i += n;
                }
                run.sort_by_key(|(line, k, _)| (*line, *k));
                writer.out.extend(run.into_iter().map(|(_, _, r)| r));
            }
            Some(Kept::Unreadable) => {
                writer.entry(ReportAction::Dropped, &blocks[i], "a line that was not JSON is not written back");
                used[i] = true;
                i += 1;
            }
            None => {
                used[i] = true;
                writer.fresh(blocks, i, &mut used)?;
                i += 1;
            }
        }
    }
    writer.flush_user();
    let mut out = std::mem::take(&mut writer.out);
    let starts_with_header = out.first().and_then(Value::as_object).is_some_and(super::records::is_header);
    if !starts_with_header && !out.is_empty() {
        out.insert(0, writer.header(blocks));
    }
    Ok(out)
}

struct Writer<'a> {
    session: &'a Session,
    options: &'a Options,
    report: &'a mut Vec<ReportEntry>,
    out: Vec<Value>,
    /// Tool names by call id, for the responses.
    names: HashMap<String, String>,
    /// Calls given a result already.
    answered: HashSet<String>,
    /// The user record being gathered: its id, its time, and its parts.
    user: Option<(String, String, Vec<Value>)>,
}


impl Writer<'_> {
    fn entry(&mut self, action: ReportAction, block: &Block, message: impl Into<String>) {
        self.report.push(ReportEntry { action, block_id: Some(block.id.clone()), message: message.into() });
    }

    fn header(&self, blocks: &[Block]) -> Value {
        let info = self.session.info().ok();
        let id = self.session.id();
        let session_id = if crate::model::ids::is_uuid(id) { id.to_string() } else { derived_uuid(&["gemini-cli session", id]) };
        let cwd = info.as_ref().and_then(|i| i.cwd.clone()).unwrap_or_default();
        let start = blocks.first().map(|b| b.created_at.to_rfc3339()).unwrap_or_default();
        let last = blocks.last().map(|b| b.created_at.to_rfc3339()).unwrap_or_default();
        json!({"sessionId": session_id, "projectHash": project_hash(&cwd), "startTime": start, "lastUpdated": last, "kind": "main"})
    }

    /// Adds a part to the user record being gathered (started by `block`).
    fn user_part(&mut self, block: &Block, part: Value) {
        match self.user.as_mut() {
            Some((_, _, parts)) => parts.push(part),
            None => self.user = Some((block.id.clone(), block.created_at.to_rfc3339(), vec![part])),
        }
    }

    /// Writes the user record being gathered.
    fn flush_user(&mut self) {
        if let Some((id, time, parts)) = self.user.take() {
            self.out.push(json!({"id": id, "timestamp": time, "type": "user", "content": parts}));
        }
    }

    /// The block at `i`, not kept from an import, written afresh (a model step takes the blocks of
    /// its message that follow, and its results).
    fn fresh(&mut self, blocks: &[Block], i: usize, used: &mut [bool]) -> Result<()> {
        let block = &blocks[i];
        match (block.actor, block.kind) {
            (_, Kind::Status) => {}
            (_, Kind::Error) => self.entry(ReportAction::Dropped, block, "error blocks are not sent to the model"),
            (Actor::Assistant, _) => self.model_step(blocks, i, used)?,
            (_, Kind::ToolResult) => {
                let call = block.tool.as_ref().map(|t| t.call_id.clone()).unwrap_or_default();
                if self.answered.insert(call.clone()) && self.names.contains_key(&call) {
                    // A result that comes late (its call's step was followed by other text).
                    let part = self.response_part(&call, block);
                    self.flush_user();
                    self.user_part(block, part);
                    self.flush_user();
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
            (_, Kind::Text) => self.user_text(block)?,
        }
        Ok(())
    }

    fn user_text(&mut self, block: &Block) -> Result<()> {
        for piece in content_pieces(block) {
            let part = match piece {
                Piece::Text(text) => self.text_part(block, text),
                Piece::Embed(id, embed) => json!({"inlineData": {"data": B64.encode(self.session.embed(id)?), "mimeType": embed.mime}}),
            };
            self.user_part(block, part);
        }
        Ok(())
    }

    /// A user text part; text the CLI would not send on resume (it starts with `/` or `?`) gets a
    /// zero-width space in front.
    fn text_part(&mut self, block: &Block, text: &str) -> Value {
        let trimmed = text.trim_start();
        if trimmed.starts_with('/') || trimmed.starts_with('?') {
            self.entry(ReportAction::Degraded, block, "user text starting with '/' or '?' is not sent on a Gemini CLI resume; a zero-width space was put in front");
            return json!({"text": format!("\u{200b}{text}")});
        }
        json!({"text": text})
    }

    /// The signature of `block` when valid for the target model (Gemini's, of the same model
    /// when a target is named); reports one that is not.
    fn signature(&mut self, block: &Block) -> Option<String> {
        let reasoning = block.reasoning.as_ref()?;
        let target = self.options.target_model.as_deref();
        let scope_model = reasoning.scope.model.as_deref().or(block.model.as_deref());
        let google = reasoning.format == Reasoning::GOOGLE_THOUGHT_SIGNATURE && reasoning.scope.model_provider.as_deref().is_none_or(|p| p == MODEL_PROVIDER);
        if google && target.is_none_or(|t| scope_model == Some(t)) {
            return Some(reasoning.data.clone());
        }
        let why = if google {
            format!("a thought signature of {} cannot be replayed to {}", scope_model.unwrap_or("?"), target.unwrap_or("?"))
        } else {
            format!("{} reasoning has no place in Gemini", reasoning.format)
        };
        self.entry(ReportAction::Dropped, block, why);
        None
    }

    /// One model record from the assistant blocks starting at `i` (the rest of its message, or
    /// of consecutive assistant blocks without one), then its results.
    fn model_step(&mut self, blocks: &[Block], i: usize, used: &mut [bool]) -> Result<()> {
        self.flush_user();
        let first = &blocks[i];
        let end = step_end(blocks, i, used, |b| super::export::kept(b).is_some());
        let mut parts = Vec::new();
        let mut model = None;
        for block in &blocks[i..=end] {
            if block.model_provider.as_deref() == Some(MODEL_PROVIDER) {
                model = model.or(block.model.clone());
            }
            let signature = self.signature(block);
            let mut part = match block.kind {
                Kind::Thinking => {
                    if self.options.foreign_reasoning == ForeignReasoning::Text && block.reasoning.is_some() && signature.is_none() && !block.content.trim().is_empty() {
                        json!({"text": format!("[reasoning] {}", block.content)})
                    } else {
                        json!({"text": block.content, "thought": true})
                    }
                }
                Kind::Text => json!({"text": block.content}),
                Kind::ToolUse => {
                    let tool = block.tool.as_ref();
                    let id = tool.map(|t| t.call_id.clone()).unwrap_or_default();
                    let name = tool.and_then(|t| t.name.clone()).unwrap_or_default();
                    self.names.insert(id.clone(), name.clone());
                    let (args, degraded) = call_args(&block.content);
                    if degraded {
                        self.entry(ReportAction::Degraded, block, CALL_ARGS_DEGRADED);
                    }
                    let mut part = json!({"functionCall": {"id": id, "name": name, "args": args}});
                    if signature.is_none() {
                        part["thoughtSignature"] = json!(SIGNATURE_PLACEHOLDER);
                    }
                    part
                }
                _ => {
                    self.entry(ReportAction::Dropped, block, format!("a {} of the assistant is not written", block.kind));
                    continue;
                }
            };
            if let Some(signature) = signature {
                part["thoughtSignature"] = json!(signature);
            }
            parts.push(part);
        }
        let mut record = Map::new();
        record.insert("id".into(), json!(first.id));
        record.insert("timestamp".into(), json!(first.created_at.to_rfc3339()));
        record.insert("type".into(), json!("gemini"));
        record.insert("content".into(), Value::Array(parts));
        if let Some(model) = model.or_else(|| self.options.target_model.clone()) {
            record.insert("model".into(), json!(model));
        }
        self.out.push(Value::Object(record));
        let pending = pending_results(blocks, i, end, used, &self.answered);
        if pending.is_empty() {
            return Ok(());
        }
        let mut responses = Vec::new();
        for (j, call_id, found) in pending {
            self.answered.insert(call_id.clone());
            match found {
                Some(k) => responses.push(self.response_part(&call_id, &blocks[k])),
                None => {
                    self.entry(ReportAction::Synthesized, &blocks[j], format!("the call {call_id} had no result; an error result was written"));
                    let name = self.names.get(&call_id).cloned().unwrap_or_default();
                    responses.push(json!({"functionResponse": {"id": call_id, "name": name, "response": {"error": "[no result was recorded for this call]"}}}));
                }
            }
        }
        self.out.push(json!({"id": format!("{}-results", first.id), "timestamp": blocks[end].created_at.to_rfc3339(), "type": "user", "content": responses}));
        Ok(())
    }

    fn response_part(&mut self, call_id: &str, result: &Block) -> Value {
        let name = self.names.get(call_id).cloned().unwrap_or_default();
        if !result.embeds.is_empty() {
            self.entry(ReportAction::Degraded, result, "images of a tool result are not carried in a Gemini function response; their links stay in the text");
        }
        response_part(call_id, &name, result)
    }
}

/// `projectHash`: the lower-case hex SHA-256 of the project root.
pub(super) fn project_hash(root: &str) -> String {
    crate::model::sha256_hex(root.as_bytes())
}
