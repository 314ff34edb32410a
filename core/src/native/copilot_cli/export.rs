//! Blocks into Copilot CLI events: the events an import kept, put back as they were, and events
//! written afresh for every other block — a `session.start` first when the log has none,
//! `user.message` for user text, one `assistant.message` per model step (its text, its tool
//! requests, and Anthropic thinking with its signature when it is the target model's, tagged
//! `anthropic-messages` as the CLI tags it) and a `tool.execution_complete` for each call's
//! result — each linked to the event before it by `parentId`.

use std::collections::HashSet;

use serde_json::{json, Map, Value};

use crate::model::ids::{derived_uuid, is_uuid};
use crate::model::{content_pieces, Actor, Block, Kind, Piece, Reasoning};
use crate::native::common::{attachment_placeholder, pending_results};
use crate::native::parts::step_end;
use crate::native::types::{ForeignReasoning, Options};
use crate::report::{ReportAction, ReportEntry};
use crate::store::Session;

use super::{RUNTIME, TARGET_VERSION};

/// What the events written afresh carry: the session's id and working directory.
pub(super) struct Context {
    pub session_id: String,
    pub cwd: String,
}

impl Context {
    /// The session's own id when it is a UUID (as Copilot CLI's are), else one derived from it.
    pub(super) fn for_session(session: &Session) -> Context {
        let id = session.id();
        let session_id = if is_uuid(id) { id.to_string() } else { derived_uuid(&["copilot-cli session", id]) };
        let cwd = session.info().ok().and_then(|i| i.cwd).unwrap_or_default();
        Context { session_id, cwd }
    }
}

/// The event an imported block keeps, when it keeps one (or `Err` for a line that was not JSON).
fn kept(block: &Block) -> Option<std::result::Result<&Value, ()>> {
    let native = block.native.as_ref().filter(|n| n.runtime == RUNTIME)?;
    let data = native.data.as_object()?;
    match data.get("record") {
        Some(record) => Some(Ok(record)),
        None if data.contains_key("malformed") => Some(Err(())),
        None => None,
    }
}

/// The events of `blocks`.
pub(super) fn events(blocks: &[Block], options: &Options, ctx: &Context, report: &mut Vec<ReportEntry>) -> Vec<Value> {
    let mut writer = Writer { options, ctx, report, out: Vec::new(), last: None, calls: HashSet::new(), answered: HashSet::new() };
    if !blocks.iter().any(|b| kept(b).and_then(Result::ok).is_some_and(|r| r["type"] == "session.start")) {
        writer.start(blocks);
    }
    let mut used = vec![false; blocks.len()];
    let mut i = 0;
    while i < blocks.len() {
        if used[i] {
            i += 1;
            continue;
        }
        used[i] = true;
        match kept(&blocks[i]) {
            Some(Ok(record)) => {
                // The blocks of the event's other parts follow it (same message id, no record).
                let id = blocks[i].message_id.as_deref();
                let mut j = i + 1;
                while j < blocks.len() && blocks[j].native.is_none() && id.is_some() && blocks[j].message_id.as_deref() == id {
                    used[j] = true;
                    j += 1;
                }
                for block in &blocks[i..j] {
                    if let Some(tool) = &block.tool {
                        let ids = if block.kind == Kind::ToolUse { &mut writer.calls } else { &mut writer.answered };
                        ids.insert(tool.call_id.clone());
                    }
                }
                writer.last = record.get("id").and_then(Value::as_str).map(str::to_string).or(writer.last.take());
                writer.out.push(record.clone());
                i = j;
                continue;
            }
            Some(Err(())) => writer.entry(ReportAction::Dropped, &blocks[i], "a line that was not JSON is not written back"),
            None => writer.fresh(blocks, i, &mut used),
        }
        i += 1;
    }
    writer.out
}

struct Writer<'a> {
    options: &'a Options,
    ctx: &'a Context,
    report: &'a mut Vec<ReportEntry>,
    out: Vec<Value>,
    /// The id of the last event written: the next one's `parentId`.
    last: Option<String>,
    /// Calls of the events an import kept.
    calls: HashSet<String>,
    /// Calls given a result already.
    answered: HashSet<String>,
}

impl Writer<'_> {
    fn entry(&mut self, action: ReportAction, block: &Block, message: impl Into<String>) {
        self.report.push(ReportEntry { action, block_id: Some(block.id.clone()), message: message.into() });
    }

    /// An event of `ty` with `data` for `block`, linked to the one before.
    fn push(&mut self, block: &Block, ty: &str, data: Value, time: String) {
        let id = derived_uuid(&["copilot-cli event", &block.id, ty]);
        let mut event = Map::new();
        event.insert("type".into(), json!(ty));
        event.insert("data".into(), data);
        event.insert("id".into(), json!(id));
        event.insert("timestamp".into(), json!(time));
        event.insert("parentId".into(), json!(self.last));
        self.last = Some(id);
        self.out.push(Value::Object(event));
    }

    /// The `session.start` of a log written afresh.
    fn start(&mut self, blocks: &[Block]) {
        let time = blocks.first().map(|b| b.created_at.to_rfc3339()).unwrap_or_default();
        let model = self.options.target_model.clone().or_else(|| blocks.iter().rev().find_map(|b| b.model.clone()));
        let data = json!({
            "sessionId": self.ctx.session_id,
            "version": 1,
            "producer": "copilot-agent",
            "copilotVersion": TARGET_VERSION,
            "startTime": time,
            "selectedModel": model,
            "context": {"cwd": self.ctx.cwd},
        });
        let mut anchor = Block::text(Actor::System, String::new());
        anchor.id = format!("session {}", self.ctx.session_id);
        self.push(&anchor, "session.start", data, time);
    }

    /// The block at `i`, not kept from an import, written afresh (an assistant step takes the
    /// blocks of its message that follow, and its results).
    fn fresh(&mut self, blocks: &[Block], i: usize, used: &mut [bool]) {
        let block = &blocks[i];
        let time = block.created_at.to_rfc3339();
        match (block.actor, block.kind) {
            (_, Kind::Status) => {}
            (_, Kind::Error) => self.entry(ReportAction::Dropped, block, "error blocks are not sent to the model"),
            (Actor::Assistant, _) => self.assistant_step(blocks, i, used),
            (_, Kind::ToolResult) if block.tool.as_ref().is_some_and(|t| self.calls.contains(&t.call_id) && !self.answered.contains(&t.call_id)) => {
                // The result of a call an imported event made (a turn the host recorded).
                let call = block.tool.as_ref().map(|t| t.call_id.clone()).unwrap_or_default();
                self.answered.insert(call.clone());
                self.push(block, "tool.execution_complete", result_data(&call, block), time);
            }
            (_, Kind::ToolResult) => {
                let call = block.tool.as_ref().map(|t| t.call_id.clone()).unwrap_or_default();
                self.entry(ReportAction::Degraded, block, format!("a result of {call} without its call is written as user text"));
                let text = format!("[tool result of {call}]\n{}", block.content);
                self.push(block, "user.message", json!({"content": text}), time);
            }
            (_, Kind::Thinking | Kind::ToolUse) => self.entry(ReportAction::Dropped, block, format!("a {} of the {} is not written", block.kind, block.actor)),
            (actor, Kind::Text) => {
                if actor == Actor::System {
                    self.entry(ReportAction::Degraded, block, "system text written as user text");
                }
                let mut text = String::new();
                for piece in content_pieces(block) {
                    match piece {
                        Piece::Text(t) => text.push_str(t),
                        Piece::Embed(id, embed) => {
                            self.entry(ReportAction::Degraded, block, "an image is not written into a Copilot CLI log; a placeholder names it");
                            text.push_str(&attachment_placeholder(id, embed));
                        }
                    }
                }
                self.push(block, "user.message", json!({"content": text}), time);
            }
        }
    }

    /// The reasoning of a thinking block as Copilot CLI keeps it: Anthropic thinking signed for the
    /// target model (or, when no target is named, by Anthropic); anything else is left out or,
    /// with `foreign_reasoning: text`, written as text, and reported.
    fn thinking(&mut self, block: &Block, text: &mut String) -> Option<Value> {
        let reasoning = block.reasoning.as_ref().filter(|r| !r.data.is_empty());
        let scope_model = reasoning.and_then(|r| r.scope.model.as_deref()).or(block.model.as_deref());
        let target = self.options.target_model.as_deref();
        let anthropic = |r: &Reasoning| r.scope.model_provider.as_deref().or(block.model_provider.as_deref()).is_none_or(|p| p == "anthropic");
        match reasoning {
            Some(r) if [Reasoning::ANTHROPIC_SIGNATURE, Reasoning::ANTHROPIC_REDACTED].contains(&r.format.as_str()) && anthropic(r) && target.is_none_or(|t| scope_model == Some(t)) => {
                Some(if r.format == Reasoning::ANTHROPIC_REDACTED {
                    json!({"type": "redacted_thinking", "data": r.data})
                } else {
                    json!({"type": "thinking", "thinking": block.content, "signature": r.data})
                })
            }
            Some(r) => {
                let why = format!("{} reasoning of {} cannot be replayed to {}", r.format, scope_model.unwrap_or("?"), target.unwrap_or("another model"));
                if self.options.foreign_reasoning == ForeignReasoning::Text && !block.content.trim().is_empty() {
                    self.entry(ReportAction::Degraded, block, format!("{why}; written as text"));
                    text.push_str(&format!("[reasoning] {}\n\n", block.content));
                } else {
                    self.entry(ReportAction::Dropped, block, why);
                }
                None
            }
            None => {
                let why = "thinking without a signature has no place in an Anthropic request";
                if self.options.foreign_reasoning == ForeignReasoning::Text && !block.content.trim().is_empty() {
                    self.entry(ReportAction::Degraded, block, format!("{why}; written as text"));
                    text.push_str(&format!("[reasoning] {}\n\n", block.content));
                } else {
                    self.entry(ReportAction::Dropped, block, why);
                }
                None
            }
        }
    }

    /// One `assistant.message` from the assistant blocks starting at `i`, then a
    /// `tool.execution_complete` per call.
    fn assistant_step(&mut self, blocks: &[Block], i: usize, used: &mut [bool]) {
        let end = step_end(blocks, i, used, |b| kept(b).is_some());
        let first = &blocks[i];
        let mut thinking = Vec::new();
        let mut text = String::new();
        let mut requests = Vec::new();
        let mut model = None;
        for block in &blocks[i..=end] {
            model = model.or(block.model.clone());
            match block.kind {
                Kind::Thinking => thinking.extend(self.thinking(block, &mut text)),
                Kind::Text => text.push_str(&block.content),
                Kind::ToolUse => {
                    let tool = block.tool.as_ref();
                    let arguments = match serde_json::from_str::<Value>(&block.content) {
                        Ok(value @ Value::Object(_)) => value,
                        _ => {
                            self.entry(ReportAction::Degraded, block, "a tool input that is not a JSON object is written as {\"input\": <text>}");
                            json!({"input": block.content})
                        }
                    };
                    requests.push(json!({
                        "toolCallId": tool.map(|t| t.call_id.clone()).unwrap_or_default(),
                        "name": tool.and_then(|t| t.name.clone()).unwrap_or_default(),
                        "arguments": arguments,
                        "type": "function",
                    }));
                }
                _ => self.entry(ReportAction::Dropped, block, format!("a {} of the assistant is not written", block.kind)),
            }
        }
        if text.is_empty() && requests.is_empty() && thinking.is_empty() {
            // Nothing of the step can be written (its thinking was left out, reported).
            return;
        }
        let model = self.options.target_model.clone().or(model);
        let mut data = json!({"messageId": derived_uuid(&["copilot-cli message", &first.id]), "model": model, "content": text, "toolRequests": requests});
        if !thinking.is_empty() {
            data["reasoningBlocks"] = json!({"provider": "anthropic-messages", "blocks": thinking});
        }
        self.push(first, "assistant.message", data, first.created_at.to_rfc3339());
        for (j, call_id, found) in pending_results(blocks, i, end, used, &self.answered) {
            self.answered.insert(call_id.clone());
            let (block, data) = match found {
                Some(k) => {
                    let result = &blocks[k];
                    if !result.embeds.is_empty() {
                        self.entry(ReportAction::Degraded, result, "images of a tool result are not carried in a Copilot CLI log; their links stay in the text");
                    }
                    (result, result_data(&call_id, result))
                }
                None => {
                    self.entry(ReportAction::Synthesized, &blocks[j], format!("the call {call_id} had no result; an error result was written"));
                    (&blocks[j], json!({"toolCallId": call_id, "success": false, "error": {"message": "[no result was recorded for this call]"}}))
                }
            };
            self.push(block, "tool.execution_complete", data, block.created_at.to_rfc3339());
        }
    }
}

/// The `data` of the `tool.execution_complete` of `result`: `result.content`, or for an error
/// result `success: false` and `error.message`.
fn result_data(call_id: &str, result: &Block) -> Value {
    if result.tool.as_ref().and_then(|t| t.is_error) == Some(true) {
        json!({"toolCallId": call_id, "success": false, "error": {"message": result.content}})
    } else {
        json!({"toolCallId": call_id, "success": true, "result": {"content": result.content}})
    }
}
