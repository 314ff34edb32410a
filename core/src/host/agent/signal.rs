//! What a runtime's driver reports (its signals), recorded into the agent's session and state.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::model::{Actor, Block, Kind, Runtime};
use crate::native::live::Signal;

use super::{lock, AgentInner, Outcome};

pub(super) fn on_signal(inner: &Arc<AgentInner>, runtime: Runtime, generation: u64, signal: Signal) {
    let current = lock(&inner.state).generation == generation;
    match signal {
        Signal::Event(event) => {
            if current {
                match inner.session.ingest(runtime, &event) {
                    Ok(blocks) => record(inner, blocks),
                    Err(e) => publish(inner, "error", json!({"message": format!("cannot record an event: {e}")})),
                }
            }
        }
        Signal::Blocks(blocks) => {
            if current {
                match inner.session.extend(blocks) {
                    Ok(blocks) => record(inner, blocks),
                    Err(e) => publish(inner, "error", json!({"message": format!("cannot record blocks: {e}")})),
                }
            }
        }
        Signal::Delta { thinking, text } => {
            if current {
                publish(inner, if thinking { "thinking_delta" } else { "assistant_delta" }, json!({"text": text}));
            }
        }
        Signal::Permission(request) => {
            // Checked again under the lock that records it, so that a process ended in between
            // leaves nothing waiting.
            let mut state = lock(&inner.state);
            if state.generation == generation {
                state.asking.insert(request.id.clone());
                state.publish("permission_needed", json!({"id": request.id, "tool": request.tool, "input": request.input, "call_id": request.call_id, "title": request.title}));
                inner.changed.notify_all();
            }
        }
        Signal::NativeId(id) => {
            if current {
                lock(&inner.state).native_id = Some(id);
            }
        }
        Signal::Synced => {
            if current {
                bind(inner, runtime);
            }
        }
        Signal::TurnEnd(end) => {
            if !current {
                return;
            }
            bind(inner, runtime);
            if let Some(usage) = &end.usage {
                // Usage the turn's blocks did not carry (Codex's app-server, Gemini CLI's ACP).
                let blocks = lock(&inner.state).turn.as_ref().map(|t| t.blocks.clone()).unwrap_or_default();
                if let Err(e) = inner.session.record_turn_usage(runtime, &blocks, usage) {
                    publish(inner, "error", json!({"message": format!("cannot record the turn's token usage: {e}")}));
                }
            }
            // The compactions the turn recorded (asked for, or the runtime's own near its limit).
            let first = lock(&inner.state).turn.as_ref().and_then(|t| t.blocks.first().map(|b| b.seq));
            if let Some(first) = first {
                match crate::native::compaction::since(&inner.session, first) {
                    Ok(compactions) => {
                        for compaction in compactions {
                            publish(inner, "compacted", json!({"compaction": compaction}));
                        }
                    }
                    Err(e) => publish(inner, "error", json!({"message": format!("cannot read the turn's compactions: {e}")})),
                }
            }
            let mut state = lock(&inner.state);
            let interrupted = end.interrupted || state.turn.as_ref().is_some_and(|t| t.interrupt_requested);
            match (interrupted, &end.error) {
                (true, _) => state.publish("interrupted", json!({})),
                (false, Some(error)) => state.publish("error", json!({"message": error})),
                (false, None) => state.publish("complete", json!({"usage": end.usage})),
            }
            if let Some(turn) = state.turn.as_mut() {
                turn.outcome = Some(Outcome::Ended(end));
            }
            inner.changed.notify_all();
        }
        Signal::Exited { code, stderr } => {
            let mut state = lock(&inner.state);
            if current {
                state.alive = false;
                state.pid = None;
                state.asking.clear();
            }
            let tail = crate::native::live::last_lines(&stderr);
            state.publish("exited", json!({"code": code, "stderr": tail}));
            if let Some(turn) = state.turn.as_mut().filter(|_| current) {
                if turn.outcome.is_none() {
                    let code = code.map_or("a signal".to_string(), |c| format!("code {c}"));
                    turn.outcome = Some(Outcome::Exited(format!("the {} process exited during the turn ({code}): {}", runtime.display_name(), tail.trim())));
                }
            }
            inner.changed.notify_all();
        }
    }
}

/// Binds the session to the runtime's thread through its last block.
fn bind(inner: &AgentInner, runtime: Runtime) {
    let native_id = lock(&inner.state).native_id.clone();
    if let (Some(id), Ok(len)) = (native_id, inner.session.len()) {
        if len > 0 {
            let _ = inner.session.bind(runtime, &id, len - 1);
        }
    }
}

pub(super) fn publish(inner: &AgentInner, kind: &str, data: Value) {
    let mut state = lock(&inner.state);
    state.publish(kind, data);
    inner.changed.notify_all();
}

fn record(inner: &AgentInner, blocks: Vec<Block>) {
    if blocks.is_empty() {
        return;
    }
    let mut state = lock(&inner.state);
    for block in &blocks {
        state.publish(block_event(block), json!({"block": block}));
    }
    if let Some(turn) = state.turn.as_mut() {
        if blocks.iter().any(|b| b.actor == Actor::User && b.kind == Kind::Text) {
            turn.user_seen = true;
        }
        turn.blocks.extend(blocks);
    }
    inner.changed.notify_all();
}

/// The event type of a recorded block.
fn block_event(block: &Block) -> &'static str {
    match (block.actor, block.kind) {
        // The runtime's own instructions and notices (system text included) are bookkeeping.
        (Actor::System, Kind::Error) => "error",
        (Actor::System, _) => "status",
        (Actor::User, Kind::Text) => "user_message",
        (_, Kind::Text) => "assistant",
        (_, Kind::Thinking) => "thinking",
        (_, Kind::ToolUse) => "tool_use",
        (_, Kind::ToolResult) => "tool_result",
        (_, Kind::Error) => "error",
        _ => "status",
    }
}
