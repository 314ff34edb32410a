//! The Anthropic Messages body a resume sends (`messages` format): the active chain of the
//! transcript, parallel calls gathered, what the CLI strips left out.

use std::collections::{HashMap, HashSet};

use serde_json::{json, Map, Value};

use crate::native::types::Options;
use crate::report::{ReportAction, ReportEntry};

use super::export::TranscriptRecord;
use super::records::is_message_type;

struct ApiMessage {
    role: &'static str,
    content: Vec<Value>,
    /// Block id of each content item (None for synthesized items).
    ids: Vec<Option<String>>,
    message_id: Option<String>,
    model: Option<String>,
}

/// `{system, messages}` rebuilt from transcript records the way Claude Code's loader does (leaf,
/// `parentUuid` walk, compaction relink, merging), then made valid for the Messages API.
pub(super) fn messages(mut records: Vec<TranscriptRecord>, options: &Options, report: &mut Vec<ReportEntry>) -> Value {
    let chain = active_chain(&records);
    let mut system: Vec<Value> = Vec::new();
    let mut msgs: Vec<ApiMessage> = Vec::new();
    for &index in &chain {
        let rec = &mut records[index];
        let Some(map) = rec.value.as_object_mut() else { continue };
        let ty = map.get("type").and_then(Value::as_str).unwrap_or("");
        if !is_message_type(ty) || map.get("isApiErrorMessage") == Some(&Value::Bool(true)) {
            continue;
        }
        let role = if ty == "user" { "user" } else { "assistant" };
        let Some(Value::Object(message)) = map.get_mut("message") else { continue };
        let items: Vec<Value> = match message.get_mut("content").map(std::mem::take) {
            Some(Value::String(text)) => vec![obj! { "type" => "text", "text" => text }],
            Some(Value::Array(items)) => items,
            _ => continue,
        };
        let ids: Vec<Option<String>> = (0..items.len()).map(|k| rec.block_ids.get(k).or(rec.block_ids.first()).cloned()).collect();
        if rec.system_text {
            for mut item in items {
                if item.get("type").and_then(Value::as_str) == Some("text") {
                    let text = item.get_mut("text").map(std::mem::take).unwrap_or(Value::Null);
                    system.push(obj! { "type" => "text", "text" => text });
                }
            }
            continue;
        }
        let message_id = message.get("id").and_then(Value::as_str).map(str::to_string);
        let model = message.get("model").and_then(Value::as_str).map(str::to_string);
        let merge = match msgs.last() {
            Some(last) if last.role == role => role == "user" || (message_id.is_some() && last.message_id == message_id),
            _ => false,
        };
        if merge {
            let last = msgs.last_mut().expect("checked");
            last.content.extend(items);
            last.ids.extend(ids);
        } else {
            msgs.push(ApiMessage { role, content: items, ids, message_id, model });
        }
    }
    let mut entry = |action, id: Option<String>, message: String| report.push(ReportEntry { action, block_id: id, message });

    // Item clean-up: no caller, no cache_control, thinking only where it may be replayed.
    for msg in &mut msgs {
        let mut keep_content = Vec::with_capacity(msg.content.len());
        let mut keep_ids = Vec::with_capacity(msg.ids.len());
        for (mut item, id) in std::mem::take(&mut msg.content).into_iter().zip(std::mem::take(&mut msg.ids)) {
            strip_cache_control(&mut item);
            let ty = item.get("type").and_then(Value::as_str).unwrap_or("").to_string();
            if ty == "tool_use" {
                if let Some(map) = item.as_object_mut() {
                    map.remove("caller");
                }
            }
            if ty == "thinking" || ty == "redacted_thinking" {
                let signed = match ty.as_str() {
                    "thinking" => item.get("signature").and_then(Value::as_str).is_some_and(|s| !s.is_empty()),
                    _ => item.get("data").and_then(Value::as_str).is_some_and(|s| !s.is_empty()),
                };
                if !signed {
                    entry(ReportAction::Dropped, id, "thinking without a signature is refused by the API".into());
                    continue;
                }
                if let Some(target) = options.target_model.as_deref() {
                    if msg.model.as_deref() != Some(target) {
                        entry(
                            ReportAction::Dropped,
                            id,
                            format!("thinking signed by {} is not valid for {target}", msg.model.as_deref().unwrap_or("an unnamed model")),
                        );
                        continue;
                    }
                }
            }
            keep_content.push(item);
            keep_ids.push(id);
        }
        msg.content = keep_content;
        msg.ids = keep_ids;
    }
    msgs.retain(|m| !m.content.is_empty());

    // Tool pairing: every tool_use answered first thing in the next user message; no orphan results.
    let mut i = 0;
    while i < msgs.len() {
        if msgs[i].role == "assistant" {
            let calls: Vec<String> = msgs[i]
                .content
                .iter()
                .filter(|c| c.get("type").and_then(Value::as_str) == Some("tool_use"))
                .filter_map(|c| c.get("id").and_then(Value::as_str).map(str::to_string))
                .collect();
            let call_ids: Vec<Option<String>> = msgs[i]
                .content
                .iter()
                .zip(&msgs[i].ids)
                .filter(|(c, _)| c.get("type").and_then(Value::as_str) == Some("tool_use"))
                .map(|(_, id)| id.clone())
                .collect();
            if !calls.is_empty() && msgs.get(i + 1).is_none_or(|m| m.role != "user") {
                msgs.insert(i + 1, ApiMessage { role: "user", content: Vec::new(), ids: Vec::new(), message_id: None, model: None });
            }
            if !calls.is_empty() {
                let next = &mut msgs[i + 1];
                // Results first, in the order they were recorded; then one for each unanswered call.
                let mut results = Vec::new();
                let mut result_ids = Vec::new();
                let mut rest = Vec::new();
                let mut rest_ids = Vec::new();
                for (item, id) in std::mem::take(&mut next.content).into_iter().zip(std::mem::take(&mut next.ids)) {
                    let answers = item.get("type").and_then(Value::as_str) == Some("tool_result")
                        && item.get("tool_use_id").and_then(Value::as_str).is_some_and(|c| calls.iter().any(|k| k == c));
                    if answers {
                        results.push(item);
                        result_ids.push(id);
                    } else {
                        rest.push(item);
                        rest_ids.push(id);
                    }
                }
                for (call, call_block) in calls.iter().zip(call_ids) {
                    let answered = results.iter().any(|r| r.get("tool_use_id").and_then(Value::as_str) == Some(call));
                    if !answered {
                        entry(ReportAction::Synthesized, call_block, format!("tool call {call:?} had no result; an error result was added"));
                        results.push(json!({"type": "tool_result", "tool_use_id": call, "content": "[Tool call interrupted: no result was recorded for this call.]", "is_error": true}));
                        result_ids.push(None);
                    }
                }
                next.content = rest;
                next.ids = rest_ids;
                results.append(&mut next.content);
                result_ids.append(&mut next.ids);
                next.content = results;
                next.ids = result_ids;
            }
        }
        i += 1;
    }
    // Results that answer no call of the previous message are not results.
    for i in 0..msgs.len() {
        if msgs[i].role != "user" {
            continue;
        }
        let previous: HashSet<String> = if i > 0 {
            msgs[i - 1]
                .content
                .iter()
                .filter(|c| c.get("type").and_then(Value::as_str) == Some("tool_use"))
                .filter_map(|c| c.get("id").and_then(Value::as_str).map(str::to_string))
                .collect()
        } else {
            HashSet::new()
        };
        let msg = &mut msgs[i];
        let mut keep = Vec::new();
        let mut keep_ids = Vec::new();
        for (item, id) in std::mem::take(&mut msg.content).into_iter().zip(std::mem::take(&mut msg.ids)) {
            let orphan = item.get("type").and_then(Value::as_str) == Some("tool_result")
                && !item.get("tool_use_id").and_then(Value::as_str).is_some_and(|c| previous.contains(c));
            if orphan {
                entry(ReportAction::Dropped, id, "a tool result that answers no call of the previous message".into());
            } else {
                keep.push(item);
                keep_ids.push(id);
            }
        }
        msg.content = keep;
        msg.ids = keep_ids;
    }
    msgs.retain(|m| !m.content.is_empty());
    // Roles alternate (merge neighbours left by the clean-up), and the first message is the user's.
    let mut merged: Vec<ApiMessage> = Vec::with_capacity(msgs.len());
    for msg in msgs {
        match merged.last_mut() {
            Some(last) if last.role == msg.role => {
                last.content.extend(msg.content);
                last.ids.extend(msg.ids);
            }
            _ => merged.push(msg),
        }
    }
    if merged.first().is_some_and(|m| m.role == "assistant") {
        entry(ReportAction::Synthesized, None, "the conversation starts with the assistant; a user message was added first".into());
        merged.insert(0, ApiMessage { role: "user", content: vec![json!({"type": "text", "text": "(continued)"})], ids: vec![None], message_id: None, model: None });
    }
    let messages: Vec<Value> = merged.into_iter().map(|m| obj! { "role" => m.role, "content" => m.content }).collect();
    let mut out = Map::new();
    if !system.is_empty() {
        out.insert("system".into(), Value::Array(system));
    }
    out.insert("messages".into(), Value::Array(messages));
    Value::Object(out)
}

fn strip_cache_control(item: &mut Value) {
    if let Value::Object(map) = item {
        map.remove("cache_control");
        if let Some(Value::Array(parts)) = map.get_mut("content") {
            for part in parts {
                strip_cache_control(part);
            }
        }
    }
}

/// Indices of the records on the conversation Claude Code resumes, oldest first.
pub(super) fn active_chain(records: &[TranscriptRecord]) -> Vec<usize> {
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut parent: HashMap<&str, Option<&str>> = HashMap::new();
    let mut leaf_pointer: Option<&str> = None;
    let mut last_message: Option<usize> = None;
    let mut last_any_message: Option<usize> = None;
    let mut relinks: Vec<(&str, Vec<&str>)> = Vec::new();
    for (i, rec) in records.iter().enumerate() {
        let Some(map) = rec.value.as_object() else { continue };
        let ty = map.get("type").and_then(Value::as_str).unwrap_or("");
        if ty == "last-prompt" {
            if let Some(leaf) = map.get("leafUuid").and_then(Value::as_str) {
                leaf_pointer = Some(leaf);
            }
            continue;
        }
        if !matches!(ty, "user" | "assistant" | "system" | "attachment" | "progress") {
            continue;
        }
        let Some(uuid) = map.get("uuid").and_then(Value::as_str) else { continue };
        index.insert(uuid, i);
        parent.insert(uuid, map.get("parentUuid").and_then(Value::as_str));
        if is_message_type(ty) {
            last_any_message = Some(i);
            let side = map.get("isSidechain") == Some(&Value::Bool(true)) || map.contains_key("teamName");
            if !side && map.get("isMeta") != Some(&Value::Bool(true)) {
                last_message = Some(i);
            }
        }
        if ty == "system" && map.get("subtype").and_then(Value::as_str) == Some("compact_boundary") {
            if let Some(preserved) = map.get("compactMetadata").and_then(|m| m.get("preservedMessages")) {
                if let (Some(anchor), Some(uuids)) =
                    (preserved.get("anchorUuid").and_then(Value::as_str), preserved.get("uuids").and_then(Value::as_array))
                {
                    let uuids: Vec<&str> = uuids.iter().filter_map(Value::as_str).collect();
                    if !uuids.is_empty() {
                        relinks.push((anchor, uuids));
                    }
                }
            }
        }
    }
    for (anchor, uuids) in relinks {
        let last = *uuids.last().expect("non-empty");
        let preserved: HashSet<&str> = uuids.iter().copied().collect();
        for (child, p) in parent.iter_mut() {
            if *p == Some(anchor) && !preserved.contains(child) {
                *p = Some(last);
            }
        }
        for (k, uuid) in uuids.iter().enumerate() {
            let p = if k == 0 { anchor } else { uuids[k - 1] };
            parent.insert(uuid, Some(p));
        }
    }
    let leaf = leaf_pointer
        .and_then(|l| index.get(l).copied())
        .or(last_message)
        .or(last_any_message);
    let Some(leaf) = leaf else { return Vec::new() };
    let mut chain = Vec::new();
    let mut seen = HashSet::new();
    let mut current = records[leaf].value.get("uuid").and_then(Value::as_str);
    while let Some(uuid) = current {
        if !seen.insert(uuid) {
            break;
        }
        let Some(&i) = index.get(uuid) else { break };
        chain.push(i);
        current = parent.get(uuid).copied().flatten();
    }
    chain.reverse();
    gather_parallel_calls(records, chain)
}

/// Parallel tool calls fork the chain: each result row is parented to the row holding its call, so
/// a walk from the leaf passes through one call row and one result only. Claude Code gathers the
/// other rows of the response and their results back; so does this.
fn gather_parallel_calls(records: &[TranscriptRecord], chain: Vec<usize>) -> Vec<usize> {
    let row = |i: usize| records[i].value.as_object();
    let content = |i: usize| -> Option<&Vec<Value>> { row(i)?.get("message")?.get("content")?.as_array() };
    let is_main = |i: usize| row(i).is_some_and(|m| m.get("isSidechain") != Some(&Value::Bool(true)));
    let mut rows_of_message: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut results_of_call: HashMap<&str, Vec<usize>> = HashMap::new();
    for i in 0..records.len() {
        let Some(map) = row(i) else { continue };
        if !is_main(i) {
            continue;
        }
        match map.get("type").and_then(Value::as_str) {
            Some("assistant") => {
                if let Some(id) = map.get("message").and_then(|m| m.get("id")).and_then(Value::as_str) {
                    rows_of_message.entry(id).or_default().push(i);
                }
            }
            Some("user") => {
                for item in content(i).into_iter().flatten() {
                    if let Some(call) = item.get("tool_use_id").and_then(Value::as_str) {
                        results_of_call.entry(call).or_default().push(i);
                    }
                }
            }
            _ => {}
        }
    }
    let calls_in = |i: usize| -> Vec<&str> {
        content(i)
            .into_iter()
            .flatten()
            .filter(|c| c.get("type").and_then(Value::as_str) == Some("tool_use"))
            .filter_map(|c| c.get("id").and_then(Value::as_str))
            .collect()
    };
    let mut out = Vec::with_capacity(chain.len());
    let mut emitted: HashSet<usize> = HashSet::new();
    let mut last_calls: Vec<&str> = Vec::new();
    for &i in &chain {
        if emitted.contains(&i) {
            continue;
        }
        let map = row(i);
        let ty = map.and_then(|m| m.get("type")).and_then(Value::as_str).unwrap_or("");
        let message_id = map.and_then(|m| m.get("message")).and_then(|m| m.get("id")).and_then(Value::as_str);
        if ty == "assistant" {
            let group = message_id.and_then(|id| rows_of_message.get(id)).cloned().unwrap_or_else(|| vec![i]);
            let group: Vec<usize> = if group.contains(&i) { group } else { vec![i] };
            last_calls = group.iter().flat_map(|&j| calls_in(j)).collect();
            for j in group {
                if emitted.insert(j) {
                    out.push(j);
                }
            }
            continue;
        }
        let answers = ty == "user" && content(i).into_iter().flatten().any(|c| c.get("type").and_then(Value::as_str) == Some("tool_result"));
        if answers && !last_calls.is_empty() {
            let mut rows: Vec<usize> = last_calls.iter().flat_map(|c| results_of_call.get(c).cloned().unwrap_or_default()).collect();
            rows.push(i);
            rows.sort_unstable();
            rows.dedup();
            for j in rows {
                if emitted.insert(j) {
                    out.push(j);
                }
            }
            last_calls.clear();
            continue;
        }
        if emitted.insert(i) {
            out.push(i);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn records(values: Vec<Value>) -> Vec<TranscriptRecord> {
        values.into_iter().map(|value| TranscriptRecord { value, block_ids: Vec::new(), system_text: false, splice: None }).collect()
    }

    fn row(ty: &str, uuid: &str, parent: Option<&str>) -> Value {
        json!({"type": ty, "uuid": uuid, "parentUuid": parent, "message": {"role": ty, "content": "x"}})
    }

    #[test]
    fn the_chain_walks_back_from_the_last_message_and_skips_abandoned_branches() {
        let rows = records(vec![
            row("user", "a", None),
            row("assistant", "b", Some("a")),
            // A retry forked from "a": the first answer "b" is abandoned.
            row("assistant", "c", Some("a")),
            row("user", "d", Some("c")),
        ]);
        assert_eq!(active_chain(&rows), vec![0, 2, 3]);
    }

    #[test]
    fn a_last_prompt_pointer_names_the_leaf() {
        let mut values = vec![row("user", "a", None), row("assistant", "b", Some("a")), row("user", "c", Some("a"))];
        values.push(json!({"type": "last-prompt", "leafUuid": "b"}));
        assert_eq!(active_chain(&records(values)), vec![0, 1]);
    }

    #[test]
    fn sidechain_and_meta_rows_are_not_taken_for_the_leaf_and_a_parent_loop_ends_the_walk() {
        let mut side = row("assistant", "s", Some("b"));
        side["isSidechain"] = json!(true);
        let rows = records(vec![row("user", "a", Some("b")), row("assistant", "b", Some("a")), side]);
        // "b" is the last message outside the sidechain; a → b → a loops and stops.
        assert_eq!(active_chain(&rows), vec![0, 1]);
        assert!(active_chain(&records(vec![json!({"type": "summary"})])).is_empty());
    }
}
