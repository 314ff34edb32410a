//! Writing a session as rollout lines: the passthrough of imported lines put back byte for byte,
//! lines minted for blocks made elsewhere (turns, UI mirrors, ids), calls paired with outputs.

use std::collections::{HashMap, HashSet};

use base64::Engine as _;
use serde_json::{json, Map, Value};

use crate::error::{Error, Result};
use crate::model::{Actor, Block, Kind, Reasoning, Runtime, Timestamp};
use crate::model::ids::{derived_uuid, is_uuid};
use crate::native::common::{attachment_placeholder, content_pieces, data_url, pending_results, Piece, B64};
use crate::native::splice::{Splices, TextRecord};
use crate::native::types::{ForeignReasoning, Options};
use crate::report::{ReportAction, ReportEntry};
use crate::store::Session;

use super::{AT_BARE_CONTENT, AT_CONTENT, AT_ITEM, RUNTIME, TARGET_VERSION};

fn native_data(block: &Block) -> Option<&Map<String, Value>> {
    match &block.native {
        Some(native) if native.runtime == RUNTIME => native.data.as_object(),
        _ => None,
    }
}

/// Where lines are written and under which ids.
pub(super) struct RolloutContext {
    pub thread_id: String,
    pub cwd: Option<String>,
    pub model_provider: Option<String>,
    pub model: Option<String>,
    pub created: Timestamp,
}

impl RolloutContext {
    pub(super) fn for_session(session: &Session, blocks: &[Block], options: &Options) -> Result<RolloutContext> {
        let mut thread_id = None;
        let mut cwd = None;
        let mut provider = None;
        let mut model = None;
        let mut created = None;
        for block in blocks {
            let Some(record) = native_data(block).and_then(|d| d.get("record")) else {
                if block.actor == Actor::Assistant && model.is_none() {
                    model.clone_from(&block.model);
                }
                continue;
            };
            if record.get("type").and_then(Value::as_str) == Some("session_meta") {
                let p = &record["payload"];
                if thread_id.is_none() {
                    thread_id = p.get("id").and_then(Value::as_str).map(str::to_string);
                    created = p.get("timestamp").and_then(Value::as_str).and_then(|t| Timestamp::parse_rfc3339(t).ok());
                }
                cwd = cwd.or_else(|| p.get("cwd").and_then(Value::as_str).map(str::to_string));
                provider = provider.or_else(|| p.get("model_provider").and_then(Value::as_str).map(str::to_string));
            }
            if record.get("type").and_then(Value::as_str) == Some("turn_context") {
                model = record["payload"].get("model").and_then(Value::as_str).map(str::to_string).or(model);
            }
        }
        let thread_id = match session.binding(Runtime::Codex)? {
            Some(binding) if is_uuid(&binding.native_id) => binding.native_id,
            _ => match thread_id.filter(|id| is_uuid(id)) {
                Some(id) => id,
                None if is_uuid(session.id()) => session.id().to_ascii_lowercase(),
                None => derived_uuid(&[session.id(), "codex-thread"]),
            },
        };
        let cwd = match cwd {
            Some(cwd) => Some(cwd),
            None => session.info()?.cwd,
        };
        let model_provider = options.model_provider.clone().or(provider).or_else(|| {
            blocks.iter().find(|b| b.provider.as_deref() == Some(RUNTIME)).and_then(|b| b.model_provider.clone())
        });
        let model = options.target_model.clone().or(model);
        let created = created.or_else(|| blocks.first().map(|b| b.created_at)).unwrap_or_else(Timestamp::now);
        Ok(RolloutContext { thread_id, cwd, model_provider, model, created })
    }
}

struct RolloutWriter<'a> {
    session: &'a Session,
    options: &'a Options,
    ctx: &'a RolloutContext,
    report: Vec<ReportEntry>,
    lines: Vec<TextRecord>,
    /// The stored text of blocks' lines, by seq, for an export written from it
    /// ([`super::records::lighten`]).
    splices: Splices,
    /// Whether the file is paginated (every line needs an ordinal), and the next ordinal.
    paginated: bool,
    next_ordinal: u64,
    last_time: i64,
    wrote_meta: bool,
    turn: Option<String>,
    last_agent_message: Option<String>,
    /// call id → whether the call was custom (freeform) — outputs use the matching variant.
    calls: HashMap<String, bool>,
    answered: HashSet<String>,
    embed_cache: HashMap<String, String>,
}

impl<'a> RolloutWriter<'a> {
    fn entry(&mut self, action: ReportAction, block: &Block, message: impl Into<String>) {
        self.report.push(ReportEntry { action, block_id: Some(block.id.clone()), message: message.into() });
    }

    fn embed_url(&mut self, embed_id: &str, mime: &str) -> Result<String> {
        if let Some(hit) = self.embed_cache.get(embed_id) {
            return Ok(hit.clone());
        }
        let url = data_url(mime, &self.session.embed(embed_id)?);
        self.embed_cache.insert(embed_id.to_string(), url.clone());
        Ok(url)
    }

    fn note_native(&mut self, line: &Value) {
        let Some(map) = line.as_object() else { return };
        if let Some(ordinal) = map.get("ordinal").and_then(Value::as_u64) {
            self.next_ordinal = self.next_ordinal.max(ordinal + 1);
        }
        if let Some(ts) = map.get("timestamp").and_then(Value::as_str).and_then(|t| Timestamp::parse_rfc3339(t).ok()) {
            self.last_time = self.last_time.max(ts.as_millis());
        }
        let ty = map.get("type").and_then(Value::as_str).unwrap_or("");
        let payload = map.get("payload");
        match ty {
            "session_meta" => {
                self.wrote_meta = true;
                self.paginated = payload.and_then(|p| p.get("history_mode")).and_then(Value::as_str) == Some("paginated");
            }
            "event_msg" => match payload.and_then(|p| p.get("type")).and_then(Value::as_str) {
                Some("task_started" | "turn_started") => self.turn = payload.and_then(|p| p.get("turn_id")).and_then(Value::as_str).map(str::to_string),
                Some("task_complete" | "turn_complete" | "turn_aborted") => self.turn = None,
                _ => {}
            },
            "response_item" => {
                if let Some(p) = payload {
                    self.note_item(p);
                }
            }
            _ if map.get("payload").is_none() => self.note_item(line),
            _ => {}
        }
    }

    fn note_item(&mut self, item: &Value) {
        let call = item.get("call_id").and_then(Value::as_str).map(str::to_string);
        match item.get("type").and_then(Value::as_str) {
            Some("function_call" | "local_shell_call" | "tool_search_call") => {
                if let Some(call) = call {
                    self.calls.insert(call, false);
                }
            }
            Some("custom_tool_call") => {
                if let Some(call) = call {
                    self.calls.insert(call, true);
                }
            }
            Some("function_call_output" | "custom_tool_call_output" | "tool_search_output") => {
                if let Some(call) = call {
                    self.answered.insert(call);
                }
            }
            _ => {}
        }
    }

    fn native_group(&mut self, blocks: &mut [Block], start: usize) -> Result<Option<usize>> {
        let (parts, at) = {
            let Some(data) = native_data(&blocks[start]) else { return Ok(None) };
            if !data.contains_key("record") {
                return Ok(None);
            }
            match (data.get("parts").and_then(Value::as_u64), data.get("at").and_then(Value::as_str)) {
                (None, _) => (None, String::new()),
                (Some(parts), Some(at)) => {
                    let parts = parts as usize;
                    let fits = parts > 0
                        && start + parts <= blocks.len()
                        && (1..parts).all(|k| native_data(&blocks[start + k]).is_some_and(|d| d.contains_key("item") && !d.contains_key("record")));
                    if !fits {
                        return Ok(None);
                    }
                    (Some(parts), at.to_string())
                }
                _ => return Ok(None),
            }
        };
        let take = |block: &mut Block, key: &str| -> Value {
            match block.native.as_mut().map(|n| &mut n.data) {
                Some(Value::Object(data)) => data.remove(key).unwrap_or(Value::Null),
                _ => Value::Null,
            }
        };
        let mut record = take(&mut blocks[start], "record");
        let splice = self.splices.take(blocks[start].seq);
        let Some(parts) = parts else {
            self.note_native(&record);
            self.lines.push(TextRecord { value: record, splice });
            return Ok(Some(1));
        };
        let mut items = Vec::with_capacity(parts);
        for block in &mut blocks[start..start + parts] {
            let residual = take(block, "item");
            items.push(self.rebuild(residual, block)?);
        }
        match at.as_str() {
            AT_CONTENT => record["payload"]["content"] = Value::Array(items),
            AT_BARE_CONTENT => record["content"] = Value::Array(items),
            AT_ITEM => record["payload"] = items.pop().unwrap_or(Value::Null),
            _ => record = items.pop().unwrap_or(Value::Null),
        }
        self.note_native(&record);
        self.lines.push(TextRecord { value: record, splice });
        Ok(Some(parts))
    }

    /// Puts the payloads of `block` (used up) back into its residual.
    fn rebuild(&mut self, mut item: Value, block: &mut Block) -> Result<Value> {
        let Value::Object(map) = &mut item else { return Ok(item) };
        let ty = map.get("type").and_then(Value::as_str).unwrap_or("").to_string();
        let content = std::mem::take(&mut block.content);
        let fill = |map: &mut Map<String, Value>, key: &str, value: String| {
            if let Some(slot @ Value::Null) = map.get_mut(key) {
                *slot = Value::String(value);
            }
        };
        match ty.as_str() {
            // A part whose text was not a string was kept as it was (its block is a status line).
            "input_text" | "output_text" if block.kind == Kind::Text => fill(map, "text", content),
            "input_text" | "output_text" => {}
            "input_image" => self.fill_embed(map, "image_url", block, true)?,
            "function_call" => fill(map, "arguments", content),
            "custom_tool_call" => fill(map, "input", content),
            "local_shell_call" if map.get("action") == Some(&Value::Null) => {
                let action = serde_json::from_str(&content)
                    .map_err(|e| Error::Internal(format!("stored shell action of block {} is not JSON: {e}", block.id)))?;
                map.insert("action".into(), action);
            }
            "reasoning" => {
                for key in ["summary", "content"] {
                    if let Some(Value::Array(parts)) = map.get_mut(key) {
                        fill_slices(parts, &content, &block.id)?;
                    }
                }
                if let Some(reasoning) = block.reasoning.take() {
                    fill(map, "encrypted_content", reasoning.data);
                }
            }
            "function_call_output" | "custom_tool_call_output" => match map.get_mut("output") {
                Some(slot @ Value::Null) => *slot = Value::String(content),
                Some(Value::Array(parts)) => {
                    let mut parts = std::mem::take(parts);
                    fill_slices(&mut parts, &content, &block.id)?;
                    for part in parts.iter_mut() {
                        if let Value::Object(p) = part {
                            self.fill_embed(p, "image_url", block, true)?;
                        }
                    }
                    map.insert("output".into(), Value::Array(parts));
                }
                _ => {}
            },
            "image_generation_call" => self.fill_embed(map, "result", block, false)?,
            _ => {}
        }
        Ok(item)
    }

    fn fill_embed(&mut self, map: &mut Map<String, Value>, key: &str, block: &Block, as_url: bool) -> Result<()> {
        let Some(id) = map.get(key).and_then(|v| v.get("embed")).and_then(Value::as_str).map(str::to_string) else {
            return Ok(());
        };
        let text = if as_url {
            let mime = block.embeds.get(&id).map(|e| e.mime.clone()).unwrap_or_else(|| "application/octet-stream".into());
            self.embed_url(&id, &mime)?
        } else {
            B64.encode(self.session.embed(&id)?)
        };
        map.insert(key.into(), Value::String(text));
        Ok(())
    }
}

fn fill_slices(parts: &mut [Value], content: &str, block_id: &str) -> Result<()> {
    for part in parts.iter_mut() {
        if let Some(Value::Array(range)) = part.get("text") {
            if let (Some(s), Some(e)) = (range.first().and_then(Value::as_u64), range.get(1).and_then(Value::as_u64)) {
                let text = content
                    .get(s as usize..e as usize)
                    .ok_or_else(|| Error::Internal(format!("stored parts of block {block_id} do not match its text")))?;
                part["text"] = Value::String(text.to_string());
            }
        }
    }
    Ok(())
}

// Lines for blocks without Codex passthrough (legacy-mode rollout, with UI mirrors).

impl RolloutWriter<'_> {
    fn time(&mut self, block: Option<&Block>) -> String {
        let base = block.map(|b| b.created_at.as_millis()).unwrap_or(self.ctx.created.as_millis());
        let ms = base.max(self.last_time + 1);
        self.last_time = ms;
        Timestamp::from_millis(ms).map(|t| t.to_rfc3339()).unwrap_or_default()
    }

    fn push_line(&mut self, ty: &str, payload: Value, block: Option<&Block>) {
        let mut line = Map::new();
        line.insert("timestamp".into(), Value::String(self.time(block)));
        if self.paginated {
            line.insert("ordinal".into(), json!(self.next_ordinal));
            self.next_ordinal += 1;
        }
        line.insert("type".into(), json!(ty));
        line.insert("payload".into(), payload);
        self.lines.push(TextRecord::value(Value::Object(line)));
    }

    fn ensure_meta(&mut self) {
        if self.wrote_meta {
            return;
        }
        self.wrote_meta = true;
        let mut payload = Map::new();
        payload.insert("id".into(), json!(self.ctx.thread_id));
        payload.insert("timestamp".into(), json!(self.ctx.created.to_rfc3339()));
        payload.insert("cwd".into(), json!(self.ctx.cwd.clone().unwrap_or_else(|| "/".into())));
        payload.insert("originator".into(), json!("sna_history"));
        payload.insert("cli_version".into(), json!(TARGET_VERSION));
        payload.insert("source".into(), json!("cli"));
        if let Some(provider) = &self.ctx.model_provider {
            payload.insert("model_provider".into(), json!(provider));
        }
        self.push_line("session_meta", Value::Object(payload), None);
    }

    fn start_turn(&mut self, block: &Block) {
        self.end_turn(Some(block));
        let turn = derived_uuid(&[&self.ctx.thread_id, &block.id, "turn"]);
        self.push_line("event_msg", obj! { "type" => "task_started", "turn_id" => turn.clone() }, Some(block));
        let mut context = Map::new();
        context.insert("turn_id".into(), json!(turn));
        context.insert("cwd".into(), json!(self.ctx.cwd.clone().unwrap_or_else(|| "/".into())));
        context.insert("approval_policy".into(), json!("never"));
        context.insert("sandbox_policy".into(), json!({"type": "danger-full-access"}));
        if let Some(model) = &self.ctx.model {
            context.insert("model".into(), json!(model));
        }
        context.insert("summary".into(), json!("auto"));
        self.push_line("turn_context", Value::Object(context), Some(block));
        self.turn = Some(turn);
    }

    fn ensure_turn(&mut self, block: &Block) {
        if self.turn.is_none() {
            self.start_turn(block);
        }
    }

    fn end_turn(&mut self, block: Option<&Block>) {
        if let Some(turn) = self.turn.take() {
            let last = self.last_agent_message.take().map(Value::String).unwrap_or(Value::Null);
            self.push_line("event_msg", obj! { "type" => "task_complete", "turn_id" => turn, "last_agent_message" => last }, block);
        }
    }

    fn item(&mut self, item: Value, block: &Block) {
        self.push_line("response_item", item, Some(block));
    }

    /// Content items for text with embed references.
    fn content_items(&mut self, block: &Block, text_type: &str) -> Result<(Vec<Value>, Vec<String>)> {
        let mut items = Vec::new();
        let mut images = Vec::new();
        for piece in content_pieces(block) {
            match piece {
                Piece::Text(text) => items.push(obj! { "type" => text_type, "text" => text }),
                Piece::Embed(id, embed) if embed.mime.starts_with("image/") && text_type == "input_text" => {
                    let url = self.embed_url(id, &embed.mime)?;
                    images.push(url.clone());
                    items.push(obj! { "type" => "input_image", "image_url" => url });
                }
                Piece::Embed(id, embed) => {
                    items.push(obj! { "type" => text_type, "text" => attachment_placeholder(id, embed) });
                    self.entry(ReportAction::Degraded, block, format!("embed {id} ({}) written as a text placeholder", embed.mime));
                }
            }
        }
        Ok((items, images))
    }

    fn thinking(&mut self, block: &Block) {
        let target_provider = self.ctx.model_provider.as_deref();
        let target_model = self.options.target_model.as_deref();
        let verdict = match &block.reasoning {
            Some(r) if r.format == Reasoning::OPENAI_ENCRYPTED && !r.data.is_empty() => {
                let provider_ok = r.scope.model_provider.as_deref() == target_provider || r.scope.model_provider.is_none();
                let model_ok = target_model.is_none_or(|t| r.scope.model.as_deref().or(block.model.as_deref()) == Some(t));
                if provider_ok && model_ok {
                    Ok(r.data.clone())
                } else {
                    Err(format!(
                        "encrypted reasoning from {}/{} cannot be replayed to {}/{}",
                        r.scope.model_provider.as_deref().unwrap_or("?"),
                        r.scope.model.as_deref().unwrap_or("?"),
                        target_provider.unwrap_or("?"),
                        target_model.unwrap_or("?")
                    ))
                }
            }
            Some(r) => Err(format!("{} reasoning cannot travel to Codex", r.format)),
            None => Err("reasoning without encrypted content is not replayed to Codex".to_string()),
        };
        match verdict {
            Ok(data) => {
                self.ensure_turn(block);
                let summary = if block.content.is_empty() { json!([]) } else { json!([{"type": "summary_text", "text": block.content}]) };
                self.item(obj! { "type" => "reasoning", "summary" => summary, "content" => Value::Null, "encrypted_content" => data }, block);
                if !block.content.is_empty() {
                    self.push_line("event_msg", obj! { "type" => "agent_reasoning", "text" => block.content.clone() }, Some(block));
                }
            }
            Err(why) => {
                if self.options.foreign_reasoning == ForeignReasoning::Text && !block.content.trim().is_empty() {
                    self.entry(ReportAction::Degraded, block, format!("{why}; written as text"));
                    let text = Block { kind: Kind::Text, reasoning: None, content: format!("[reasoning] {}", block.content), ..block.clone() };
                    let _ = self.assistant_text(&text);
                } else {
                    self.entry(ReportAction::Dropped, block, why);
                }
            }
        }
    }

    fn assistant_text(&mut self, block: &Block) -> Result<()> {
        self.ensure_turn(block);
        let (content, _) = self.content_items(block, "output_text")?;
        self.item(obj! { "type" => "message", "role" => "assistant", "content" => content }, block);
        self.push_line("event_msg", obj! { "type" => "agent_message", "message" => block.content.clone() }, Some(block));
        self.last_agent_message = Some(block.content.clone());
        Ok(())
    }

    fn tool_result(&mut self, block: &Block, call_id: &str) -> Result<()> {
        let custom = self.calls.get(call_id).copied().unwrap_or(false);
        let output = if block.embeds.is_empty() {
            Value::String(block.content.clone())
        } else {
            Value::Array(self.content_items(block, "input_text")?.0)
        };
        let ty = if custom { "custom_tool_call_output" } else { "function_call_output" };
        self.item(obj! { "type" => ty, "call_id" => call_id, "output" => output }, block);
        self.answered.insert(call_id.to_string());
        Ok(())
    }

    fn synthesize(&mut self, blocks: &[Block], i: usize, used: &mut [bool]) -> Result<()> {
        let block = &blocks[i];
        self.ensure_meta();
        match (block.actor, block.kind) {
            (_, Kind::Status) => {}
            (_, Kind::Error) => self.entry(ReportAction::Dropped, block, "error blocks are not sent to the model"),
            (Actor::System, Kind::Text) => {
                self.ensure_turn(block);
                let (content, _) = self.content_items(block, "input_text")?;
                self.item(obj! { "type" => "message", "role" => "developer", "content" => content }, block);
            }
            (Actor::User, Kind::Text) => {
                self.start_turn(block);
                let (content, images) = self.content_items(block, "input_text")?;
                self.item(obj! { "type" => "message", "role" => "user", "content" => content }, block);
                let text: String = block.content.clone();
                let images: Vec<Value> = images.into_iter().map(Value::String).collect();
                self.push_line("event_msg", obj! { "type" => "user_message", "message" => text, "images" => images }, Some(block));
            }
            (_, Kind::ToolResult) => {
                let call_id = block.tool.as_ref().map(|t| t.call_id.clone()).unwrap_or_default();
                if self.calls.contains_key(&call_id) && !self.answered.contains(&call_id) {
                    self.tool_result(block, &call_id)?;
                } else {
                    self.entry(ReportAction::Degraded, block, format!("result of unknown or answered call {call_id:?} written as text"));
                    self.ensure_turn(block);
                    self.item(obj! { "type" => "message", "role" => "user", "content" => vec![obj! { "type" => "input_text", "text" => block.content.clone() }] }, block);
                }
            }
            (Actor::Assistant, Kind::Text) => self.assistant_text(block)?,
            (Actor::Assistant, Kind::Thinking) => self.thinking(block),
            (Actor::Assistant, Kind::ToolUse) => {
                let Some(tool) = &block.tool else { return Ok(()) };
                self.ensure_turn(block);
                let name = tool.name.clone().unwrap_or_default();
                let call_id = tool.call_id.clone();
                let is_json = serde_json::from_str::<Value>(&block.content).is_ok_and(|v| v.is_object());
                if is_json {
                    self.item(obj! { "type" => "function_call", "name" => name, "arguments" => block.content.clone(), "call_id" => call_id.clone() }, block);
                    self.calls.insert(call_id, false);
                } else {
                    self.item(obj! { "type" => "custom_tool_call", "name" => name, "input" => block.content.clone(), "call_id" => call_id.clone() }, block);
                    self.calls.insert(call_id, true);
                }
                let ends = blocks.get(i + 1).is_none_or(|next| {
                    used[i + 1] || next.actor != Actor::Assistant || next.kind == Kind::Text || native_data(next).is_some()
                });
                if ends {
                    self.answer_calls(blocks, i, used)?;
                }
            }
            (actor, kind) => self.entry(ReportAction::Dropped, block, format!("a {actor} {kind} block has no Codex form")),
        }
        Ok(())
    }

    /// After the calls ending at `blocks[end]`, writes their outputs (pulled forward), or an error
    /// output for a call that has none.
    fn answer_calls(&mut self, blocks: &[Block], end: usize, used: &mut [bool]) -> Result<()> {
        let mut start = end;
        while start > 0 && blocks[start - 1].actor == Actor::Assistant && blocks[start - 1].kind != Kind::Text && native_data(&blocks[start - 1]).is_none() {
            start -= 1;
        }
        for (j, call_id, found) in pending_results(blocks, start, end, used, &self.answered) {
            match found {
                Some(k) => self.tool_result(&blocks[k], &call_id)?,
                None => {
                    self.entry(ReportAction::Synthesized, &blocks[j], format!("tool call {call_id:?} had no output; an \"aborted\" output was added"));
                    let mut result = Block::tool_result(call_id.clone(), "aborted", true);
                    result.id = format!("{}:output", blocks[j].id);
                    result.created_at = blocks[j].created_at;
                    self.tool_result(&result, &call_id)?;
                }
            }
        }
        Ok(())
    }
}

/// The rollout lines of a session and the fidelity report. `splices` (empty, or the blocks' from
/// [`super::records::lighten`]) gives the stored text lines are written from.
pub(super) fn rollout(
    session: &Session,
    blocks: &mut [Block],
    splices: Splices,
    options: &Options,
    ctx: &RolloutContext,
) -> Result<(Vec<TextRecord>, Vec<ReportEntry>)> {
    let mut writer = RolloutWriter {
        splices,
        session,
        options,
        ctx,
        report: Vec::new(),
        lines: Vec::with_capacity(blocks.len()),
        paginated: false,
        next_ordinal: 0,
        last_time: i64::MIN / 2,
        wrote_meta: false,
        turn: None,
        last_agent_message: None,
        calls: HashMap::new(),
        answered: HashSet::new(),
        embed_cache: HashMap::new(),
    };
    let mut used = vec![false; blocks.len()];
    let mut synthesized = false;
    let mut i = 0;
    while i < blocks.len() {
        if used[i] {
            i += 1;
            continue;
        }
        if let Some(n) = writer.native_group(blocks, i)? {
            used[i..i + n].iter_mut().for_each(|u| *u = true);
            i += n;
            continue;
        }
        if native_data(&blocks[i]).is_some_and(|d| d.contains_key("malformed")) {
            writer.entry(ReportAction::Dropped, &blocks[i], "a line that was not JSON is not written back");
            used[i] = true;
            i += 1;
            continue;
        }
        used[i] = true;
        synthesized |= !matches!(blocks[i].kind, Kind::Status);
        writer.synthesize(blocks, i, &mut used)?;
        i += 1;
    }
    if synthesized {
        writer.end_turn(None);
    }
    // The model provider a resume runs with is bound to the thread: name the one the caller asked for.
    if let Some(provider) = &options.model_provider {
        // (`session_meta` lines are never written from stored text.)
        for line in writer.lines.iter_mut().map(|l| &mut l.value) {
            if line.get("type").and_then(Value::as_str) == Some("session_meta") {
                let current = line["payload"].get("model_provider").and_then(Value::as_str).map(str::to_string);
                if current.as_deref() != Some(provider.as_str()) {
                    line["payload"]["model_provider"] = json!(provider);
                }
            }
        }
    }
    Ok((writer.lines, writer.report))
}
