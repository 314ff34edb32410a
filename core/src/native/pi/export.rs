//! Writing a session as Pi entries: the passthrough of imported lines put back byte for byte, and
//! for blocks made elsewhere the entries a writer should produce (FORMAT.md): a v3 header, one
//! linear chain of 8-hex ids derived from block ids, assistant messages grouped by message, each
//! tool result right after its call's message.

use std::collections::{HashMap, HashSet};

use base64::Engine as _;
use serde_json::{json, Map, Value};

use crate::error::{Error, Result};
use crate::model::ids::{derived_uuid, short_hash};
use crate::model::{Actor, Block, Kind, Reasoning, Runtime, Timestamp};
use crate::native::common::{attachment_placeholder, content_pieces, pending_results, Piece, B64};
use crate::native::types::{ForeignReasoning, Options};
use crate::report::{ReportAction, ReportEntry};
use crate::store::Session;

use super::records::{api_vendor, thinking_format, vendor_api, HEADER};
use super::RUNTIME;

/// The session a writer writes: its Pi id and working directory.
pub(super) struct EntryContext {
    /// The header's `id`.
    pub session_id: String,
    /// The header's `cwd`.
    pub cwd: String,
}

/// True for a session id Pi can be given and a file name can hold: 1 to 128 characters of
/// `[A-Za-z0-9._-]`, not starting with a dot.
pub(super) fn is_acceptable_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 128 && !id.starts_with('.') && id.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

impl EntryContext {
    /// The id and cwd of an imported header, else of the session (its Pi binding, its own id when
    /// acceptable, else an id derived from it).
    pub(super) fn for_session(session: &Session, blocks: &[Block]) -> Result<EntryContext> {
        let header = blocks.iter().filter_map(native_record).find(|r| r.get("type").and_then(Value::as_str) == Some(HEADER));
        let header_id = header.and_then(|h| h.get("id")).and_then(Value::as_str).map(str::to_string);
        let header_cwd = header.and_then(|h| h.get("cwd")).and_then(Value::as_str).map(str::to_string);
        let session_id = match header_id {
            Some(id) => id,
            None => match session.binding(Runtime::Pi)? {
                Some(binding) if is_acceptable_id(&binding.native_id) => binding.native_id,
                _ if is_acceptable_id(session.id()) => session.id().to_string(),
                _ => derived_uuid(&[session.id(), "pi-session"]),
            },
        };
        let cwd = match header_cwd.or(session.info()?.cwd) {
            Some(cwd) => cwd,
            None => std::env::current_dir().map(|d| d.display().to_string()).unwrap_or_else(|_| "/".into()),
        };
        Ok(EntryContext { session_id, cwd })
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

/// The Pi fields of an assistant message: `api`, `provider`, `model`.
struct MessageModel {
    api: &'static str,
    provider: String,
    model: String,
}

struct EntryWriter<'a> {
    session: &'a Session,
    options: &'a Options,
    ctx: &'a EntryContext,
    report: Vec<ReportEntry>,
    out: Vec<Value>,
    /// A block said the imported file had no header.
    header_missing: bool,
    /// The id of the last entry written: the parent of the next.
    last_id: Option<String>,
    ids: HashSet<String>,
    last_time: i64,
    /// call id → tool name, for the results.
    calls: HashMap<String, String>,
    answered: HashSet<String>,
    embed_cache: HashMap<String, String>,
}

impl EntryWriter<'_> {
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

    /// Takes note of a line written back: the chain, the ids in use, the calls and results.
    fn note_native(&mut self, record: &Value) {
        let Some(map) = record.as_object() else { return };
        let ty = map.get("type").and_then(Value::as_str).unwrap_or("");
        if let (false, Some(id)) = (ty == HEADER, map.get("id").and_then(Value::as_str)) {
            self.ids.insert(id.to_string());
            self.last_id = Some(id.to_string());
        }
        if let Some(ts) = map.get("timestamp").and_then(Value::as_str).and_then(|t| Timestamp::parse_rfc3339(t).ok()) {
            self.last_time = self.last_time.max(ts.as_millis());
        }
        let Some(message) = map.get("message").and_then(Value::as_object) else { return };
        match message.get("role").and_then(Value::as_str) {
            Some("assistant") => {
                for item in message.get("content").and_then(Value::as_array).into_iter().flatten() {
                    if item.get("type").and_then(Value::as_str) == Some("toolCall") {
                        if let (Some(id), Some(name)) = (item.get("id").and_then(Value::as_str), item.get("name").and_then(Value::as_str)) {
                            self.calls.insert(id.to_string(), name.to_string());
                        }
                    }
                }
            }
            Some("toolResult") => {
                if let Some(id) = message.get("toolCallId").and_then(Value::as_str) {
                    self.answered.insert(id.to_string());
                }
            }
            _ => {}
        }
    }

    /// Rebuilds the line of imported blocks, `blocks[start..]` beginning with an entry. Returns how
    /// many blocks it used; `None` when `blocks[start]` carries no entry to rebuild.
    fn native_group(&mut self, blocks: &mut [Block], start: usize) -> Result<Option<usize>> {
        let parts = {
            let Some(data) = native_data(&blocks[start]) else { return Ok(None) };
            if !data.contains_key("record") {
                return Ok(None);
            }
            match data.get("parts").and_then(Value::as_u64) {
                None => None,
                Some(parts) => {
                    let parts = parts as usize;
                    let shaped = parts > 0
                        && start + parts <= blocks.len()
                        && (1..parts).all(|k| native_data(&blocks[start + k]).is_some_and(|d| d.contains_key("item") && !d.contains_key("record")));
                    if !shaped || !matches!(data.get("record").and_then(|r| r.get("message")), Some(Value::Object(_))) {
                        return Ok(None);
                    }
                    Some(parts)
                }
            }
        };
        let take = |block: &mut Block, key: &str| -> Option<Value> {
            match block.native.as_mut().map(|n| &mut n.data) {
                Some(Value::Object(data)) => data.remove(key),
                _ => None,
            }
        };
        let mut record = take(&mut blocks[start], "record").unwrap_or(Value::Null);
        let Some(parts) = parts else {
            // Kept whole: bookkeeping, an entry off the branch, or a malformed line that was JSON.
            self.note_native(&record);
            self.out.push(record);
            return Ok(Some(1));
        };
        let is_result = record["message"].get("role").and_then(Value::as_str) == Some("toolResult");
        let content = match take(&mut blocks[start], "item") {
            None => Value::String(std::mem::take(&mut blocks[start].content)),
            Some(Value::Array(parts)) if is_result => Value::Array(self.rebuild_result(parts, &blocks[start])?),
            Some(first) => {
                let mut items = Vec::with_capacity(parts);
                items.push(self.rebuild_item(first, &mut blocks[start])?);
                for block in &mut blocks[start + 1..start + parts] {
                    let item = take(block, "item").unwrap_or(Value::Null);
                    items.push(self.rebuild_item(item, block)?);
                }
                Value::Array(items)
            }
        };
        if let Some(Value::Object(message)) = record.get_mut("message") {
            message.insert("content".into(), content);
        }
        self.note_native(&record);
        self.out.push(record);
        Ok(Some(parts))
    }

    /// Puts the canonical payloads of `block` (which is used up) back into a content block residual.
    fn rebuild_item(&mut self, mut item: Value, block: &mut Block) -> Result<Value> {
        let Value::Object(map) = &mut item else { return Ok(item) };
        let fill = |map: &mut Map<String, Value>, key: &str, value: String| {
            if let Some(slot @ Value::Null) = map.get_mut(key) {
                *slot = Value::String(value);
            }
        };
        let ty = map.get("type").and_then(Value::as_str).unwrap_or("");
        match ty {
            "text" => fill(map, "text", std::mem::take(&mut block.content)),
            "thinking" => {
                fill(map, "thinking", std::mem::take(&mut block.content));
                if let Some(reasoning) = block.reasoning.take() {
                    fill(map, "thinkingSignature", reasoning.data);
                }
            }
            "toolCall" if map.get("arguments") == Some(&Value::Null) => {
                let input = serde_json::from_str::<Value>(&block.content)
                    .map_err(|e| Error::Internal(format!("stored tool input of block {} is not JSON: {e}", block.id)))?;
                map.insert("arguments".into(), input);
            }
            "image" => self.fill_image(map)?,
            _ => {}
        }
        Ok(item)
    }

    /// A tool result's content list from its residual: text ranges cut from the block's content,
    /// images from the embeds.
    fn rebuild_result(&mut self, mut parts: Vec<Value>, block: &Block) -> Result<Vec<Value>> {
        for part in parts.iter_mut() {
            let Value::Object(map) = part else { continue };
            if let Some(Value::Array(range)) = map.get("text") {
                let (Some(s), Some(e)) = (range.first().and_then(Value::as_u64), range.get(1).and_then(Value::as_u64)) else { continue };
                let text = block.content.get(s as usize..e as usize).ok_or_else(|| {
                    Error::Internal(format!("stored tool result of block {} does not match its parts", block.id))
                })?;
                map.insert("text".into(), Value::String(text.to_string()));
            }
            self.fill_image(map)?;
        }
        Ok(parts)
    }

    fn fill_image(&mut self, map: &mut Map<String, Value>) -> Result<()> {
        let Some(id) = map.get("data").and_then(|d| d.get("embed")).and_then(Value::as_str).map(str::to_string) else { return Ok(()) };
        let data = self.embed_base64(&id)?;
        map.insert("data".into(), Value::String(data));
        Ok(())
    }

    // -------- entries for blocks without Pi passthrough (the writer recipe) --------

    fn next_time(&mut self, block: &Block) -> i64 {
        let ms = block.created_at.as_millis().max(self.last_time);
        self.last_time = ms;
        ms
    }

    /// Appends a message entry for `block` to the chain.
    fn push_message(&mut self, block: &Block, mut message: Map<String, Value>) {
        let mut k = 0u32;
        let id = loop {
            let id = short_hash(&[&self.ctx.session_id, &block.id, &k.to_string()], 8);
            if self.ids.insert(id.clone()) {
                break id;
            }
            k += 1;
        };
        let ms = self.next_time(block);
        let iso = Timestamp::from_millis(ms).unwrap_or(block.created_at).to_rfc3339();
        message.insert("timestamp".into(), json!(ms));
        let entry = json!({
            "type": "message",
            "id": id,
            "parentId": self.last_id.clone(),
            "timestamp": iso,
            "message": Value::Object(message),
        });
        self.last_id = Some(id);
        self.out.push(entry);
    }

    /// Content blocks for text with embed references: images as image blocks (where `media` is
    /// allowed), other embeds as text placeholders, the text around them as text blocks.
    fn rich_content(&mut self, block: &Block, media: bool) -> Result<Vec<Value>> {
        let mut items = Vec::new();
        for piece in content_pieces(block) {
            match piece {
                Piece::Text(text) => items.push(json!({"type": "text", "text": text})),
                Piece::Embed(id, embed) if media && embed.mime.starts_with("image/") => {
                    let data = self.embed_base64(id)?;
                    items.push(json!({"type": "image", "mimeType": embed.mime, "data": data}));
                }
                Piece::Embed(id, embed) => {
                    items.push(json!({"type": "text", "text": attachment_placeholder(id, embed)}));
                    let why = format!("embed {id} ({}) written as a text placeholder", embed.mime);
                    self.entry(ReportAction::Degraded, block, why);
                }
            }
        }
        Ok(items)
    }

    /// A user message of the text blocks `blocks[from..=to]`.
    fn user_message(&mut self, blocks: &[Block], from: usize, to: usize) -> Result<()> {
        let mut content = Vec::new();
        for block in &blocks[from..=to] {
            if block.actor == Actor::System {
                self.entry(ReportAction::Degraded, block, "system text written as a user message (Pi files hold no system role)");
            }
            if block.embeds.is_empty() {
                content.push(json!({"type": "text", "text": block.content}));
            } else {
                content.extend(self.rich_content(block, true)?);
            }
        }
        self.push_message(&blocks[from], obj_map(json!({"role": "user", "content": content})));
        Ok(())
    }

    /// The Pi model fields for an assistant message of `block`: its true vendor and model, or the
    /// configured provider name when the block is of the target model.
    fn message_model(&self, block: &Block) -> MessageModel {
        let vendor = block.model_provider.as_deref().or_else(|| block.reasoning.as_ref().and_then(|r| r.scope.model_provider.as_deref()));
        let model = block.model.clone().or_else(|| self.options.target_model.clone()).unwrap_or_else(|| "unknown".into());
        let of_target = self.options.target_model.as_deref().is_none_or(|t| t == model);
        let provider = match (&self.options.model_provider, of_target) {
            (Some(name), true) => name.clone(),
            _ => vendor.unwrap_or("unknown").to_string(),
        };
        MessageModel { api: vendor_api(vendor), provider, model }
    }

    /// Why `reasoning` cannot be replayed in a message of `api` (its format belongs elsewhere, or
    /// its scope is another model than the target); `None` when it can.
    fn foreign(&self, reasoning: &Reasoning, block: &Block, api: &str) -> Option<String> {
        let redacted = reasoning.format == Reasoning::ANTHROPIC_REDACTED;
        let fits = thinking_format(api, redacted) == Some(reasoning.format.as_str());
        let scope_model = reasoning.scope.model.as_deref().or(block.model.as_deref());
        let vendor_ok = reasoning.scope.model_provider.as_deref().is_none_or(|p| Some(p) == api_vendor(api));
        let target = self.options.target_model.as_deref();
        let model_ok = target.is_none_or(|t| scope_model == Some(t));
        if fits && vendor_ok && model_ok {
            return None;
        }
        Some(format!(
            "{} reasoning scoped to {}/{} cannot be replayed to {}",
            reasoning.format,
            reasoning.scope.model_provider.as_deref().unwrap_or("?"),
            scope_model.unwrap_or("?"),
            target.unwrap_or(api)
        ))
    }

    /// The content block of one assistant block, or `None` when it is left out.
    fn assistant_item(&mut self, block: &Block, api: &str) -> Result<Option<Value>> {
        match block.kind {
            Kind::Thinking => match block.reasoning.as_ref().filter(|r| !r.data.is_empty()).map(|r| (r, self.foreign(r, block, api))) {
                None => Ok(Some(json!({"type": "thinking", "thinking": block.content}))),
                Some((r, None)) => {
                    let mut item = obj_map(json!({"type": "thinking", "thinking": block.content, "thinkingSignature": r.data}));
                    if r.format == Reasoning::ANTHROPIC_REDACTED {
                        item.insert("redacted".into(), Value::Bool(true));
                    }
                    Ok(Some(Value::Object(item)))
                }
                Some((_, Some(why))) => {
                    if self.options.foreign_reasoning == ForeignReasoning::Text && !block.content.trim().is_empty() {
                        self.entry(ReportAction::Degraded, block, format!("{why}; written as text"));
                        Ok(Some(json!({"type": "text", "text": format!("[reasoning] {}", block.content)})))
                    } else {
                        self.entry(ReportAction::Dropped, block, why);
                        Ok(None)
                    }
                }
            },
            Kind::Text => {
                if block.embeds.is_empty() {
                    return Ok(Some(json!({"type": "text", "text": block.content})));
                }
                // Assistant content holds no images: embeds become placeholders in one text.
                let items = self.rich_content(block, false)?;
                let text: Vec<&str> = items.iter().filter_map(|i| i.get("text").and_then(Value::as_str)).collect();
                Ok(Some(json!({"type": "text", "text": text.join("")})))
            }
            Kind::ToolUse => {
                let Some(tool) = &block.tool else { return Ok(None) };
                let arguments = match serde_json::from_str::<Value>(&block.content) {
                    Ok(value @ Value::Object(_)) => value,
                    _ => {
                        self.entry(ReportAction::Degraded, block, "tool input is not a JSON object; written as {\"input\": <text>}");
                        json!({ "input": block.content })
                    }
                };
                let name = tool.name.clone().unwrap_or_default();
                self.calls.insert(tool.call_id.clone(), name.clone());
                Ok(Some(json!({"type": "toolCall", "id": tool.call_id, "name": name, "arguments": arguments})))
            }
            _ => Ok(None),
        }
    }

    /// An assistant message of `blocks[from..=to]`, then the results of its calls.
    fn assistant_message(&mut self, blocks: &[Block], from: usize, to: usize, used: &mut [bool]) -> Result<()> {
        let model = self.message_model(&blocks[from]);
        let mut content = Vec::new();
        for block in &blocks[from..=to] {
            if let Some(item) = self.assistant_item(block, model.api)? {
                content.push(item);
            }
        }
        let calls = content.iter().any(|i| i.get("type").and_then(Value::as_str) == Some("toolCall"));
        if !content.is_empty() {
            let message = json!({
                "role": "assistant",
                "content": content,
                "api": model.api,
                "provider": model.provider,
                "model": model.model,
                "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
                          "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
                "stopReason": if calls { "toolUse" } else { "stop" },
            });
            self.push_message(&blocks[from], obj_map(message));
        }
        for (j, call_id, found) in pending_results(blocks, from, to, used, &self.answered) {
            match found {
                Some(k) => self.tool_result(&blocks[k], &call_id)?,
                None => {
                    let mut result = Block::tool_result(&call_id, "No result provided", true);
                    result.id = format!("{}:result", blocks[j].id);
                    result.created_at = blocks[j].created_at;
                    self.entry(ReportAction::Synthesized, &blocks[j], format!("tool call {call_id:?} had no result; an error result was added"));
                    self.tool_result(&result, &call_id)?;
                }
            }
        }
        Ok(())
    }

    fn tool_result(&mut self, block: &Block, call_id: &str) -> Result<()> {
        let content = if block.embeds.is_empty() { vec![json!({"type": "text", "text": block.content})] } else { self.rich_content(block, true)? };
        let message = json!({
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": self.calls.get(call_id).cloned().unwrap_or_default(),
            "content": content,
            "isError": block.tool.as_ref().and_then(|t| t.is_error).unwrap_or(false),
        });
        self.answered.insert(call_id.to_string());
        self.push_message(block, obj_map(message));
        Ok(())
    }

    /// Writes `blocks[i]` (and the blocks of its message) without passthrough.
    fn synthesize(&mut self, blocks: &[Block], i: usize, used: &mut [bool]) -> Result<()> {
        let block = &blocks[i];
        // The blocks of one message: consecutive, same actor and message id, none imported from Pi.
        let group_end = |kinds: &[Kind]| {
            let mut end = i;
            while end + 1 < blocks.len() {
                let next = &blocks[end + 1];
                let same = !used[end + 1] && next.actor == block.actor && kinds.contains(&next.kind) && native_data(next).is_none();
                if !same || next.message_id != block.message_id || (block.actor == Actor::User && block.message_id.is_none()) {
                    break;
                }
                end += 1;
            }
            end
        };
        match (block.actor, block.kind) {
            (_, Kind::Status) => {}
            (_, Kind::Error) => self.entry(ReportAction::Dropped, block, "error blocks are not sent to the model"),
            (Actor::System, Kind::Text) => self.user_message(blocks, i, i)?,
            (Actor::System, kind) => self.entry(ReportAction::Dropped, block, format!("a system {kind} block has no Pi form")),
            (Actor::User, Kind::Text) => {
                let end = group_end(&[Kind::Text]);
                used[i..=end].iter_mut().for_each(|u| *u = true);
                self.user_message(blocks, i, end)?;
            }
            (_, Kind::ToolResult) => {
                let call_id = block.tool.as_ref().map(|t| t.call_id.clone()).unwrap_or_default();
                if self.calls.contains_key(&call_id) && !self.answered.contains(&call_id) {
                    self.tool_result(block, &call_id)?;
                } else {
                    self.entry(ReportAction::Degraded, block, format!("result of unknown or answered call {call_id:?} written as text"));
                    let text = Block { kind: Kind::Text, tool: None, actor: Actor::User, ..block.clone() };
                    self.user_message(std::slice::from_ref(&text), 0, 0)?;
                }
            }
            (Actor::User, kind) => self.entry(ReportAction::Dropped, block, format!("a user {kind} block has no Pi form")),
            (Actor::Assistant, _) => {
                let end = group_end(&[Kind::Text, Kind::Thinking, Kind::ToolUse]);
                used[i..=end].iter_mut().for_each(|u| *u = true);
                self.assistant_message(blocks, i, end, used)?;
            }
        }
        Ok(())
    }
}

/// The object of a `json!` object literal.
fn obj_map(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// The entries of a session and the fidelity report.
pub(super) fn entries(session: &Session, blocks: &mut [Block], options: &Options, ctx: &EntryContext) -> Result<(Vec<Value>, Vec<ReportEntry>)> {
    let mut writer = EntryWriter {
        session,
        options,
        ctx,
        report: Vec::new(),
        out: Vec::with_capacity(blocks.len()),
        header_missing: false,
        last_id: None,
        ids: HashSet::new(),
        last_time: i64::MIN / 2,
        calls: HashMap::new(),
        answered: HashSet::new(),
        embed_cache: HashMap::new(),
    };
    let mut used = vec![false; blocks.len()];
    let mut i = 0;
    while i < blocks.len() {
        if used[i] {
            i += 1;
            continue;
        }
        if let Some(data) = native_data(&blocks[i]) {
            if data.contains_key("derived") || data.contains_key("missing_header") {
                // Said again by the entry it comes from, or by a header written below.
                writer.header_missing |= data.contains_key("missing_header");
                used[i] = true;
                i += 1;
                continue;
            }
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
        writer.synthesize(blocks, i, &mut used)?;
        i += 1;
    }
    // Pi reads the first line as the header: one is written there unless the first line is one
    // (a header of Pi's further on, after blocks from elsewhere, stays where it is: Pi reads past
    // it, as it does in a file it resumed and wrote again).
    let first_is_header = writer.out.first().and_then(|r| r.get("type")).and_then(Value::as_str) == Some(HEADER);
    if !first_is_header {
        let time = blocks.first().map_or_else(Timestamp::now, |b| b.created_at);
        let header = json!({"type": HEADER, "version": 3, "id": ctx.session_id, "timestamp": time.to_rfc3339(), "cwd": ctx.cwd});
        writer.out.insert(0, header);
        if writer.header_missing {
            writer.report.push(ReportEntry {
                action: ReportAction::Synthesized,
                block_id: None,
                message: "the imported file had no session header; one was written".into(),
            });
        }
    }
    Ok((writer.out, writer.report))
}

#[cfg(test)]
mod tests {
    use super::is_acceptable_id;

    #[test]
    fn session_ids_must_make_a_file_name() {
        assert!(is_acceptable_id("01a2418a-3596-72ce-b1dd-f362a724cc59"));
        assert!(is_acceptable_id("ses_1.a"));
        assert!(!is_acceptable_id(""));
        assert!(!is_acceptable_id("../x"));
        assert!(!is_acceptable_id(".hidden"));
        assert!(!is_acceptable_id(&"a".repeat(129)));
    }
}
