//! Writing a session as the document `opencode import` reads: the info and parts of imported
//! messages put back, messages and parts minted for blocks made elsewhere (OpenCode ids, steps,
//! tool parts).

use std::collections::{BTreeMap, HashMap};

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::model::{Actor, Block, Embed, Kind, Native, Reasoning, Timestamp};
use crate::model::ids::embed_link;
use crate::native::common::{data_url, truncate_chars};
use crate::native::types::{ForeignReasoning, Options};
use crate::report::{ReportAction, ReportEntry};
use crate::store::Session;

use super::{find_embed_link, id_value, opencode_id, vendor_of_model, INTERRUPTED, RUNTIME, TARGET_VERSION};

struct DocumentContext {
    session_id: String,
    cwd: String,
    title: String,
    created: Timestamp,
    /// `(providerID, modelID)` for messages made here.
    model: (String, String),
}

impl DocumentContext {
    fn for_session(session: &Session, blocks: &[Block], options: &Options) -> Result<DocumentContext> {
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
        Ok(DocumentContext { session_id, cwd, title, created, model: (provider_id, model_id) })
    }
}

struct DocumentMessage {
    info: Value,
    parts: Vec<Value>,
    /// Keys of the message object beside `info` and `parts`.
    extra: Option<Value>,
    /// Made here (not passed through): more blocks may be added to it.
    ours: bool,
}

struct DocumentWriter<'a> {
    session: &'a Session,
    options: &'a Options,
    ctx: &'a DocumentContext,
    report: Vec<ReportEntry>,
    info: Option<Value>,
    document_extra: Option<Value>,
    messages: Vec<DocumentMessage>,
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

impl<'a> DocumentWriter<'a> {
    fn new(session: &'a Session, options: &'a Options, ctx: &'a DocumentContext) -> DocumentWriter<'a> {
        DocumentWriter {
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
                "slug" => format!("sna-{}", &crate::model::ids::short_hash(&[&ctx.session_id], 8)),
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
                self.messages.push(DocumentMessage { info, parts: Vec::new(), extra: data.remove("message_extra"), ours: false });
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
                    // An input that was not an object (null) stayed in place on import, with no
                    // canonical text to put back.
                    if let Some(slot @ Value::Null) = state.get_mut("input").filter(|_| !content.is_empty()) {
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
        self.messages.push(DocumentMessage { info, parts: Vec::new(), extra: None, ours: true });
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
        self.messages.push(DocumentMessage { info, parts: Vec::new(), extra: None, ours: true });
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

/// The session document of `blocks` (the session's, after the replay rules).
pub(super) fn document(session: &Session, blocks: &mut [Block], options: &Options, report: &mut Vec<ReportEntry>) -> Result<Value> {
    let ctx = DocumentContext::for_session(session, blocks, options)?;
    let (document, entries) = DocumentWriter::new(session, options, &ctx).write(blocks)?;
    report.extend(entries);
    Ok(document)
}
