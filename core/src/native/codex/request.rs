//! The `ResponseItem`s a resume gives the model (`items` format): compaction replacement history
//! as the base, rolled-back turns left out, every call with its output.

use std::collections::HashSet;

use serde_json::Value;

use crate::report::{ReportAction, ReportEntry};

use super::ITEM_TYPES;

/// The `ResponseItem`s a resume of these rollout lines gives the model (compaction replacement
/// history as the base, rolled-back turns left out, every call with its output, no orphan output).
pub(super) fn items(lines: Vec<Value>, report: &mut Vec<ReportEntry>) -> Value {
    let rolled_back = rolled_back_lines(&lines);
    let mut items: Vec<Value> = Vec::new();
    for (mut line, gone) in lines.into_iter().zip(rolled_back) {
        if gone {
            continue;
        }
        let ty = line.get("type").and_then(Value::as_str).unwrap_or("").to_string();
        if line.get("payload").is_none() {
            if ITEM_TYPES.contains(&ty.as_str()) {
                items.push(line);
            }
            continue;
        }
        match ty.as_str() {
            "response_item" => items.push(std::mem::take(&mut line["payload"])),
            "compacted" => {
                if let Some(Value::Array(history)) = line["payload"].get_mut("replacement_history").map(std::mem::take) {
                    items = history;
                }
            }
            _ => {}
        }
    }
    // Codex drops these on replay; so does the history it is given.
    items.retain(|item| {
        let ty = item.get("type").and_then(Value::as_str).unwrap_or("");
        matches!(
            ty,
            "message" | "reasoning" | "function_call" | "function_call_output" | "custom_tool_call" | "custom_tool_call_output"
                | "local_shell_call" | "tool_search_call" | "tool_search_output" | "web_search_call" | "image_generation_call"
                | "compaction" | "context_compaction" | "compaction_summary" | "additional_tools" | "agent_message"
        )
    });
    // Pairing.
    let output_of = |item: &Value| -> Option<String> {
        match item.get("type").and_then(Value::as_str) {
            Some("function_call_output" | "custom_tool_call_output" | "tool_search_output") => item.get("call_id").and_then(Value::as_str).map(str::to_string),
            _ => None,
        }
    };
    let call_of = |item: &Value| -> Option<(String, bool)> {
        let call = item.get("call_id").and_then(Value::as_str).map(str::to_string)?;
        match item.get("type").and_then(Value::as_str) {
            Some("function_call" | "local_shell_call" | "tool_search_call") => Some((call, false)),
            Some("custom_tool_call") => Some((call, true)),
            _ => None,
        }
    };
    let outputs: HashSet<String> = items.iter().filter_map(output_of).collect();
    let mut seen_calls: HashSet<String> = HashSet::new();
    let mut out: Vec<Value> = Vec::with_capacity(items.len());
    let mut pending: Vec<(String, bool)> = Vec::new();
    for item in items {
        if let Some(call) = output_of(&item) {
            if !seen_calls.contains(&call) {
                report.push(ReportEntry { action: ReportAction::Dropped, block_id: None, message: format!("output for call {call:?} that has no call") });
                continue;
            }
            pending.retain(|(c, _)| *c != call);
            out.push(item);
            continue;
        }
        let is_call = call_of(&item);
        if is_call.is_none() {
            // A call without output is answered before the next non-call item.
            for (call, custom) in pending.drain(..) {
                out.push(aborted(&call, custom, report));
            }
        }
        if let Some((call, custom)) = is_call {
            seen_calls.insert(call.clone());
            if !outputs.contains(&call) {
                pending.push((call, custom));
            }
        }
        out.push(item);
    }
    for (call, custom) in pending {
        out.push(aborted(&call, custom, report));
    }
    Value::Array(out)
}

/// Which lines a `thread_rolled_back { num_turns: N }` takes out of the model's history, as Codex's
/// resume does it: scanning newest to oldest in turn segments (each opened by a `task_started` or `turn_started`),
/// every rollback skips the next N segments that hold a user turn. Lines before the first
/// boundary form one segment, so a file without boundaries is one turn.
fn rolled_back_lines(lines: &[Value]) -> Vec<bool> {
    let mut gone = vec![false; lines.len()];
    let (mut pending, mut end, mut user_turn) = (0u64, lines.len(), false);
    for i in (0..lines.len()).rev() {
        let line = &lines[i];
        let payload = &line["payload"];
        let event = if line["type"] == "event_msg" { payload["type"].as_str().unwrap_or("") } else { "" };
        if event == "thread_rolled_back" {
            pending += payload["num_turns"].as_u64().unwrap_or(0);
        }
        user_turn |= event == "user_message" || (line["type"] == "response_item" && is_user_turn_item(payload));
        if event == "task_started" || event == "turn_started" || i == 0 {
            if user_turn && pending > 0 {
                gone[i..end].iter_mut().for_each(|g| *g = true);
                pending -= 1;
            }
            end = i;
            user_turn = false;
        }
    }
    gone
}

/// A user message that starts a turn, not one of the context fragments Codex itself sends as user
/// messages (environment context, AGENTS.md instructions, shell command echoes, abort notes…).
fn is_user_turn_item(item: &Value) -> bool {
    const CONTEXT: [&str; 7] = [
        "<environment_context>",
        "<user_instructions>",
        "# AGENTS.md instructions",
        "<user_shell_command>",
        "<turn_aborted>",
        "<subagent_notification>",
        "<skill>",
    ];
    if item["type"] != "message" || item["role"] != "user" {
        return false;
    }
    let Some(parts) = item["content"].as_array() else { return false };
    !parts.iter().any(|part| part["text"].as_str().is_some_and(|t| CONTEXT.iter().any(|c| t.trim_start().starts_with(c))))
}

fn aborted(call: &str, custom: bool, report: &mut Vec<ReportEntry>) -> Value {
    report.push(ReportEntry { action: ReportAction::Synthesized, block_id: None, message: format!("call {call:?} had no output; an \"aborted\" output was added") });
    let ty = if custom { "custom_tool_call_output" } else { "function_call_output" };
    obj! { "type" => ty, "call_id" => call, "output" => "aborted" }
}
