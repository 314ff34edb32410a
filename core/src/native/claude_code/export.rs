//! Writing a session as transcript records: the passthrough of imported records put back byte for
//! byte, records minted for blocks made elsewhere (ids, parent links, times), tool calls paired.

use std::collections::{HashMap, HashSet};

use base64::Engine as _;
use serde_json::{json, Map, Value};

use crate::error::{Error, Result};
use crate::model::{Actor, Block, Kind, Reasoning, Timestamp};
use crate::model::ids::{derived_uuid, is_uuid, short_hash};
use crate::native::common::{attachment_placeholder, content_pieces, pending_results, Piece, B64};
use crate::native::splice::{Splice, Splices};
use crate::native::types::{ForeignReasoning, Options};
use crate::report::{ReportAction, ReportEntry};
use crate::store::Session;

use super::{MODEL_PROVIDER, RUNTIME, TARGET_VERSION};

/// One record of an export with the blocks it came from.
pub(super) struct TranscriptRecord {
    pub value: Value,
    /// The block of each content item (or of the whole record).
    pub block_ids: Vec<String>,
    /// Canonical system text, carried in the transcript as a meta user row; `system` in `messages`.
    pub system_text: bool,
    /// The stored text the record is written from (then `value` holds only what the export reads).
    pub splice: Option<Splice>,
}

/// Where records are written and under which ids.
pub(super) struct TranscriptContext {
    /// The Claude Code session id written into records.
    pub session_id: String,
    /// The working directory written into records.
    pub cwd: Option<String>,
}

impl TranscriptContext {
    pub(super) fn for_session(session: &Session, blocks: &[Block]) -> Result<TranscriptContext> {
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
        Ok(TranscriptContext { session_id, cwd })
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

struct TranscriptWriter<'a> {
    session: &'a Session,
    options: &'a Options,
    ctx: &'a TranscriptContext,
    report: Vec<ReportEntry>,
    out: Vec<TranscriptRecord>,
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
    /// The stored text of blocks' records, by seq, for an export written from it
    /// ([`super::records::lighten`]).
    splices: Splices,
}

impl<'a> TranscriptWriter<'a> {
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
    /// Returns how many blocks it used; `None` when `blocks[start]` carries no record to rebuild.
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
            self.out.push(TranscriptRecord { value: record, block_ids: vec![blocks[start].id.clone()], system_text: false, splice: self.splices.take(blocks[start].seq) });
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
        let splice = self.splices.take(blocks[start].seq);
        self.out.push(TranscriptRecord { value: record, block_ids, system_text: false, splice });
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
        self.out.push(TranscriptRecord { value: Value::Object(map), block_ids: vec![block.id.clone()], system_text, splice: None });
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
        for piece in content_pieces(block) {
            let (id, embed) = match piece {
                Piece::Text(text) => {
                    items.push(json!({"type": "text", "text": text}));
                    continue;
                }
                Piece::Embed(id, embed) => (id, embed),
            };
            let media = if embed.mime.starts_with("image/") {
                Some("image")
            } else if embed.mime == "application/pdf" {
                Some("document")
            } else {
                None
            };
            match media {
                Some(kind) if allow_media => {
                    let data = self.embed_base64(id)?;
                    items.push(json!({"type": kind, "source": {"type": "base64", "media_type": embed.mime, "data": data}}));
                }
                _ => {
                    items.push(json!({"type": "text", "text": attachment_placeholder(id, embed)}));
                    self.entry(ReportAction::Degraded, block, format!("embed {id} ({}) written as a text placeholder", embed.mime));
                }
            }
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
        for (j, call_id, found) in pending_results(blocks, start, end, used, &self.answered) {
            match found {
                Some(k) => self.tool_result(&blocks[k], &call_id)?,
                None => self.synthetic_result(&blocks[j], &call_id)?,
            }
        }
        Ok(())
    }
}

/// The transcript records of a session and the fidelity report.
///
/// `splices` (empty, or the blocks' from [`super::records::lighten`]) gives the stored text records are written
/// from.
pub(super) fn transcript(
    session: &Session,
    blocks: &mut [Block],
    splices: Splices,
    options: &Options,
    ctx: &TranscriptContext,
) -> Result<(Vec<TranscriptRecord>, Vec<ReportEntry>)> {
    let mut writer = TranscriptWriter {
        splices,
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
            writer.out.push(TranscriptRecord { value: record, block_ids: Vec::new(), system_text: false, splice: None });
        }
    }
    Ok((writer.out, writer.report))
}

#[cfg(test)]
mod tests {
    use super::is_valid_tool_id;

    #[test]
    fn tool_ids_follow_anthropics_constraint() {
        assert!(is_valid_tool_id("toolu_01ABC-def"));
        assert!(!is_valid_tool_id(""));
        assert!(!is_valid_tool_id("call with spaces"));
        assert!(!is_valid_tool_id(&"a".repeat(65)));
        assert!(is_valid_tool_id(&"a".repeat(64)));
    }
}
