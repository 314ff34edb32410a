//! The Gemini API `contents` a Gemini CLI resume of a log sends the model (gemini-cli.md §4.2,
//! §4.3): the loaded messages rebuilt as the CLI rebuilds them, then hardened as the CLI hardens
//! them. The CLI also puts a fresh `<session_context>` in front of the first user turn and sends its
//! own system instruction and tools; neither is here.

use serde_json::{json, Map, Value};

use super::records;
use super::{is_context, SIGNATURE_PLACEHOLDER};

/// `{"contents": [...]}` for the log `records`.
pub(super) fn contents(records: &[Value]) -> Value {
    let maps: Vec<Option<&Map<String, Value>>> = records.iter().map(Value::as_object).collect();
    let loaded = records::load(&maps);
    let mut turns: Vec<(String, Vec<Value>)> = Vec::new();
    for (_, from) in &loaded.messages {
        let Some(message) = records::message_at(&maps, *from) else { continue };
        let parts = content_parts(message.get("content"));
        match message.get("type").and_then(Value::as_str) {
            Some("user") => {
                let rendered: String = parts.iter().map(render).collect::<Vec<_>>().join("");
                let rendered = rendered.trim();
                if rendered.is_empty() || rendered.starts_with('/') || rendered.starts_with('?') || is_context(rendered) {
                    continue;
                }
                turns.push(("user".into(), parts));
            }
            Some("gemini") => {
                let verbatim = parts.iter().any(|p| p.get("functionCall").is_some() || p.get("thought") == Some(&Value::Bool(true)));
                let mut built = Vec::new();
                if verbatim {
                    built = parts;
                } else {
                    for thought in message.get("thoughts").and_then(Value::as_array).into_iter().flatten() {
                        let subject = thought.get("subject").and_then(Value::as_str).unwrap_or("");
                        let description = thought.get("description").and_then(Value::as_str).unwrap_or("");
                        let text = if subject.is_empty() { description.to_string() } else { format!("**{subject}** {description}") };
                        built.push(json!({"text": text, "thought": true}));
                    }
                    built.extend(parts);
                    for call in message.get("toolCalls").and_then(Value::as_array).into_iter().flatten() {
                        built.push(json!({"functionCall": {"id": call.get("id"), "name": call.get("name"), "args": call.get("args")}}));
                    }
                }
                turns.push(("model".into(), built));
                let results: Vec<Value> = message
                    .get("toolCalls")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|c| c.get("result").and_then(Value::as_array))
                    .flatten()
                    .filter(|p| p.get("functionResponse").is_some())
                    .cloned()
                    .collect();
                if !results.is_empty() {
                    turns.push(("user".into(), results));
                }
            }
            _ => {}
        }
    }
    Value::Object(Map::from_iter([("contents".to_string(), Value::Array(harden(turns)))]))
}

/// A message's `content` as parts.
fn content_parts(content: Option<&Value>) -> Vec<Value> {
    match content {
        Some(Value::Array(parts)) => parts.clone(),
        Some(Value::String(text)) if !text.is_empty() => vec![json!({"text": text})],
        _ => Vec::new(),
    }
}

/// How the CLI renders a part to decide whether a user record is empty or ignored.
fn render(part: &Value) -> String {
    if let Some(text) = part.get("text").and_then(Value::as_str) {
        return text.to_string();
    }
    if let Some(name) = part.get("functionResponse").and_then(|r| r.get("name")).and_then(Value::as_str) {
        return format!("[Function Response: {name}]");
    }
    if let Some(mime) = part.get("inlineData").and_then(|d| d.get("mimeType")).and_then(Value::as_str) {
        return format!("[Image: {mime}]");
    }
    String::new()
}

/// The CLI's hardening: thought parts out, empty turns dropped, neighbours of one role merged,
/// `<name>__` id prefixes stripped, parts reduced to the fields the API takes, and the first
/// unsigned call of a model step that had thought parts given the placeholder signature: what
/// the CLI sent on resume in every observed case (0.61.0: steps with thoughts got it, a step
/// without any did not).
fn harden(turns: Vec<(String, Vec<Value>)>) -> Vec<Value> {
    let mut merged: Vec<(String, Vec<Value>)> = Vec::new();
    for (role, parts) in turns {
        let thought = parts.iter().any(|p| p.get("thought") == Some(&Value::Bool(true)));
        let mut parts: Vec<Value> = parts.into_iter().filter(|p| p.get("thought") != Some(&Value::Bool(true))).map(reduce).filter(|p| p.as_object().is_some_and(|m| !m.is_empty())).collect();
        if thought {
            if let Some(call) = parts.iter_mut().find(|p| p.get("functionCall").is_some() && p.get("thoughtSignature").is_none()) {
                call["thoughtSignature"] = json!(SIGNATURE_PLACEHOLDER);
            }
        }
        if parts.is_empty() {
            continue;
        }
        match merged.last_mut() {
            Some((last, existing)) if *last == role => existing.extend(parts),
            _ => merged.push((role, parts)),
        }
    }
    merged
        .into_iter()
        .map(|(role, parts)| json!({"role": role, "parts": parts}))
        .collect()
}

/// A part with only the fields the API takes, its call or response id without the CLI's
/// `<name>__` prefix.
fn reduce(part: Value) -> Value {
    let Value::Object(map) = part else { return part };
    let mut out = Map::new();
    for (key, value) in map {
        match key.as_str() {
            "text" | "inlineData" | "fileData" | "executableCode" | "codeExecutionResult" | "thoughtSignature" => {
                out.insert(key, value);
            }
            "functionCall" | "functionResponse" => {
                let mut inner = Map::new();
                let name = value.get("name").and_then(Value::as_str).unwrap_or("").to_string();
                for field in ["id", "name", "args", "response"] {
                    if let Some(v) = value.get(field) {
                        let v = match (field, v.as_str()) {
                            ("id", Some(id)) => json!(id.strip_prefix(&format!("{name}__")).unwrap_or(id)),
                            _ => v.clone(),
                        };
                        inner.insert(field.to_string(), v);
                    }
                }
                out.insert(key, Value::Object(inner));
            }
            _ => {}
        }
    }
    Value::Object(out)
}
