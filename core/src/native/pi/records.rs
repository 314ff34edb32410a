//! What a Pi session line is: the header, the entry types, what makes an entry malformed, and the
//! vendor and reasoning format behind a message's `api`.

use serde_json::{Map, Value};

use crate::json::json_type;
use crate::model::ids::is_uuid;
use crate::model::Reasoning;
use crate::native::common::{malformed, str_field, Malformed};

/// The header's `type`.
pub(super) const HEADER: &str = "session";

/// Every entry type Pi 0.73 writes after the header.
pub(super) const ENTRY_TYPES: [&str; 9] = [
    "message",
    "model_change",
    "thinking_level_change",
    "compaction",
    "branch_summary",
    "custom",
    "custom_message",
    "label",
    "session_info",
];


/// True for the session header: `{"type":"session","version":N,"id":…,"cwd":…}`.
pub(super) fn is_header(record: &Map<String, Value>) -> bool {
    record.get("type").and_then(Value::as_str) == Some(HEADER)
        && record.get("version").is_some_and(Value::is_u64)
        && record.get("id").is_some_and(Value::is_string)
        && record.get("cwd").is_some_and(Value::is_string)
}

/// True for an entry id as Pi makes them: 8 hex digits (a UUID after repeated collisions).
pub(super) fn is_entry_id(id: &str) -> bool {
    (id.len() == 8 && id.bytes().all(|b| b.is_ascii_hexdigit())) || is_uuid(id)
}

/// True for an ISO 8601 time as JavaScript's `toISOString` writes it (`2026-12-04T14:51:46.454Z`).
fn is_iso_time(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() >= 20 && b[4] == b'-' && b[7] == b'-' && b[10] == b'T' && b[13] == b':' && text.ends_with('Z')
}

/// True for an entry of Pi's tree: a known entry type with a `parentId` key (null or an id), an
/// entry id and an ISO timestamp, and none of the keys of Claude Code (`uuid`, `parentUuid`) or
/// Codex (`payload`) records.
pub(super) fn is_entry(record: &Map<String, Value>) -> bool {
    let ty = record.get("type").and_then(Value::as_str).unwrap_or("");
    ENTRY_TYPES.contains(&ty)
        && matches!(record.get("parentId"), Some(Value::Null | Value::String(_)))
        && record.get("id").and_then(Value::as_str).is_some_and(is_entry_id)
        && record.get("timestamp").and_then(Value::as_str).is_some_and(is_iso_time)
        && !["uuid", "parentUuid", "payload"].iter().any(|k| record.contains_key(*k))
}

/// The checks that make a line malformed: a header without its id, an entry whose tree fields or
/// message have the wrong types.
pub(super) fn check_record(value: &Value) -> std::result::Result<(), Malformed> {
    let Value::Object(map) = value else {
        return Err(Malformed { reason: format!("an entry must be a JSON object, not {}", json_type(value)), field: None });
    };
    let ty = match map.get("type") {
        Some(Value::String(ty)) => ty.as_str(),
        None => return Err(malformed("type", "the entry has no \"type\"")),
        Some(other) => return Err(malformed("type", format!("\"type\" must be a string, not {}", json_type(other)))),
    };
    if ty == HEADER {
        if str_field(map, "id")?.is_none() {
            return Err(malformed("id", "the session header needs a string \"id\""));
        }
        str_field(map, "cwd")?;
        return Ok(());
    }
    for key in ["id", "parentId", "timestamp"] {
        str_field(map, key)?;
    }
    if ty != "message" {
        return Ok(());
    }
    let message = match map.get("message") {
        Some(Value::Object(message)) => message,
        None => return Err(malformed("message", "a message entry needs \"message\"")),
        Some(other) => return Err(malformed("message", format!("\"message\" must be an object, not {}", json_type(other)))),
    };
    let field = |m: Malformed| Malformed { field: m.field.map(|f| format!("message.{f}")), ..m };
    let role = str_field(message, "role").map_err(field)?;
    if role.is_none() {
        return Err(malformed("message.role", "the message has no \"role\""));
    }
    for key in ["api", "provider", "model", "toolCallId", "toolName", "errorMessage"] {
        str_field(message, key).map_err(field)?;
    }
    if !matches!(role, Some("user" | "assistant" | "toolResult")) {
        return Ok(());
    }
    match message.get("content") {
        Some(Value::String(_)) => Ok(()),
        Some(Value::Array(items)) => match items.iter().position(|item| !item.is_object()) {
            Some(i) => Err(malformed(
                format!("message.content[{i}]"),
                format!("a content block must be an object, not {}", json_type(&items[i])),
            )),
            None => Ok(()),
        },
        None => Err(malformed("message.content", "the message has no \"content\"")),
        Some(other) => Err(malformed(
            "message.content",
            format!("\"message.content\" must be a string or a list, not {}", json_type(other)),
        )),
    }
}

/// The vendor behind a pi-ai `api`: `anthropic-messages` → `anthropic`, `openai-*` → `openai`,
/// `google-*` → `google`.
pub(super) fn api_vendor(api: &str) -> Option<&'static str> {
    if api.starts_with("anthropic") {
        Some("anthropic")
    } else if api.starts_with("openai") || api.starts_with("azure-openai") {
        Some("openai")
    } else if api.starts_with("google") {
        Some("google")
    } else {
        None
    }
}

/// The vendor a Pi provider name names, when it is a known one (custom names such as `mockant`
/// are not).
pub(super) fn provider_vendor(provider: &str) -> Option<&'static str> {
    Some(match provider {
        "anthropic" => "anthropic",
        "openai" | "openai-codex" | "azure-openai-responses" => "openai",
        "google" | "google-vertex" | "google-gemini-cli" | "google-antigravity" => "google",
        "xai" => "xai",
        "groq" => "groq",
        "mistral" => "mistral",
        "cerebras" => "cerebras",
        "openrouter" => "openrouter",
        "deepseek" => "deepseek",
        "zai" => "zai",
        _ => return None,
    })
}

/// The model vendor of an assistant message: its `provider` when that names a known vendor, else
/// the vendor behind its `api`.
pub(super) fn message_vendor(api: Option<&str>, provider: Option<&str>) -> Option<&'static str> {
    provider.and_then(provider_vendor).or_else(|| api.and_then(api_vendor))
}

/// The reasoning format a `thinkingSignature` has under `api`; `None` where it is no opaque token
/// (Chat Completions keeps only the name of the field the reasoning came in).
pub(super) fn thinking_format(api: &str, redacted: bool) -> Option<&'static str> {
    match api_vendor(api)? {
        "anthropic" if redacted => Some(Reasoning::ANTHROPIC_REDACTED),
        "anthropic" => Some(Reasoning::ANTHROPIC_SIGNATURE),
        "openai" if api == "openai-responses" || api == "azure-openai-responses" || api == "openai-codex-responses" => {
            Some(Reasoning::OPENAI_ENCRYPTED)
        }
        "google" => Some(crate::model::Reasoning::GOOGLE_THOUGHT_SIGNATURE),
        _ => None,
    }
}

/// The pi-ai `api` a writer names for a model vendor.
pub(super) fn vendor_api(vendor: Option<&str>) -> &'static str {
    match vendor {
        Some("anthropic") => "anthropic-messages",
        Some("openai") => "openai-responses",
        Some("google") => "google-generative-ai",
        _ => "openai-completions",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn headers_and_entries_are_told_from_other_runtimes_records() {
        assert!(is_header(&map(json!({"type":"session","version":3,"id":"s","timestamp":"2026-12-04T14:51:46.454Z","cwd":"/p"}))));
        assert!(!is_header(&map(json!({"type":"session","id":"s"}))));
        let entry = json!({"type":"message","id":"7920de4c","parentId":null,"timestamp":"2026-12-04T14:51:46.470Z","message":{}});
        assert!(is_entry(&map(entry.clone())));
        let mut claude = map(entry.clone());
        claude.insert("parentUuid".into(), Value::Null);
        assert!(!is_entry(&claude));
        assert!(!is_entry(&map(json!({"id":"7920de4c","timestamp":"2026-12-04T14:51:46.470Z","type":"user","content":"hi"}))));
        assert!(!is_entry(&map(json!({"timestamp":"2026-12-04T14:51:46.470Z","type":"message","payload":{}}))));
        assert!(!is_entry(&map(json!({"type":"message","id":"not-hex!","parentId":null,"timestamp":"2026-12-04T14:51:46.470Z"}))));
    }

    #[test]
    fn vendors_and_formats_follow_the_api() {
        assert_eq!(message_vendor(Some("anthropic-messages"), Some("mockant")), Some("anthropic"));
        assert_eq!(message_vendor(Some("openai-completions"), Some("groq")), Some("groq"));
        assert_eq!(message_vendor(Some("google-generative-ai"), None), Some("google"));
        assert_eq!(thinking_format("anthropic-messages", true), Some(Reasoning::ANTHROPIC_REDACTED));
        assert_eq!(thinking_format("openai-responses", false), Some(Reasoning::OPENAI_ENCRYPTED));
        assert_eq!(thinking_format("openai-completions", false), None);
        assert_eq!(thinking_format("google-generative-ai", false), Some(crate::model::Reasoning::GOOGLE_THOUGHT_SIGNATURE));
        assert_eq!(vendor_api(Some("anthropic")), "anthropic-messages");
    }

    #[test]
    fn malformed_entries_name_their_field() {
        let err = check_record(&json!({"type":"session","version":3})).unwrap_err();
        assert_eq!(err.field.as_deref(), Some("id"));
        let err = check_record(&json!({"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":7}})).unwrap_err();
        assert_eq!(err.field.as_deref(), Some("message.content"));
        let err = check_record(&json!({"type":"message","id":"a","parentId":1})).unwrap_err();
        assert_eq!(err.field.as_deref(), Some("parentId"));
        assert!(check_record(&json!({"type":"label","id":"a","parentId":"b","timestamp":"t","targetId":"c"})).is_ok());
        assert!(check_record(&json!({"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"bashExecution","command":"ls"}})).is_ok());
    }
}
