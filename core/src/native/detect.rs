//! Recognising a runtime: the only place that decides whose history a file or a record is. It asks
//! each adapter's sniffers (a container header, a JSONL record, a document spread over lines) in
//! the registry's order; `import_file`, `import_source`, the imports' check for another runtime's
//! records and the CLI all detect through here.

use std::path::Path;

use serde_json::Value;

use crate::error::Result;
use crate::model::Runtime;
use crate::native::jsonl;
use crate::native::registry::ADAPTERS;

/// How much of a file detection reads.
const HEAD: usize = 1 << 20;

/// How many leading records detection looks at.
const RECORDS: usize = 5;

/// The runtime whose history a file holds, from its first bytes; `None` when none matches.
pub fn detect_runtime(path: &Path) -> Result<Option<Runtime>> {
    let head = jsonl::head(path, HEAD)?;
    Ok(runtime_of_head(&head))
}

/// The runtime whose database (a file of many sessions, such as `opencode.db`) `path` is, by its
/// header; `None` for any other file.
pub fn detect_database(path: &Path) -> Result<Option<Runtime>> {
    let head = jsonl::head(path, 64)?;
    Ok(ADAPTERS.iter().find(|a| a.sniffers().header(&head)).map(|a| a.runtime()))
}

/// The runtime whose history these first bytes of a file begin.
pub(crate) fn runtime_of_head(head: &[u8]) -> Option<Runtime> {
    let text = String::from_utf8_lossy(head);
    let trimmed = text.trim_start_matches(['\u{feff}', '\0']).trim_start();
    if let Some(adapter) = ADAPTERS.iter().find(|a| a.sniffers().header(trimmed.as_bytes())) {
        return Some(adapter.runtime());
    }
    let records: Vec<Value> = trimmed.lines().filter(|l| !l.trim().is_empty()).take(RECORDS).filter_map(|l| serde_json::from_str(l).ok()).collect();
    if records.iter().any(|r| output_runtime(r).is_some()) {
        return None;
    }
    if let Some(runtime) = records.iter().find_map(record_runtime) {
        return Some(runtime);
    }
    ADAPTERS.iter().find(|a| a.sniffers().document(trimmed)).map(|a| a.runtime())
}

/// The runtime one record (a JSONL line or a document) is unmistakably of.
pub(crate) fn record_runtime(record: &Value) -> Option<Runtime> {
    let map = record.as_object()?;
    ADAPTERS.iter().find(|a| a.sniffers().record(map)).map(|a| a.runtime())
}

/// The runtime whose printed output (an event stream, not history) a record is.
pub(crate) fn output_runtime(record: &Value) -> Option<Runtime> {
    let map = record.as_object()?;
    ADAPTERS.iter().find(|a| a.sniffers().output(map)).map(|a| a.runtime())
}

/// The runtime whose printed output a file's first records are, when they are: what an import that
/// could not detect a runtime names.
pub fn detect_output(path: &Path) -> Result<Option<Runtime>> {
    let head = jsonl::head(path, HEAD)?;
    let text = String::from_utf8_lossy(&head);
    Ok(text.lines().filter(|l| !l.trim().is_empty()).take(RECORDS).filter_map(|l| serde_json::from_str::<Value>(l).ok()).find_map(|r| output_runtime(&r)))
}

/// The runtime other than `importing` that claims a record: what an import of `importing`'s
/// history names when it is given another runtime's.
pub(crate) fn foreign_record(record: &Value, importing: Runtime) -> Option<Runtime> {
    let map = record.as_object()?;
    ADAPTERS.iter().filter(|a| a.runtime() != importing).find(|a| a.sniffers().claims(map)).map(|a| a.runtime())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_runtime_is_recognised_from_its_first_bytes() {
        let claude = br#"{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","message":{"role":"user","content":"hi"}}"#;
        assert_eq!(runtime_of_head(claude), Some(Runtime::ClaudeCode));
        let codex = br#"{"timestamp":"2026-12-02T15:47:38Z","type":"session_meta","payload":{"id":"x"}}"#;
        assert_eq!(runtime_of_head(codex), Some(Runtime::Codex));
        assert_eq!(runtime_of_head(br#"{"type":"message","role":"user","content":[]}"#), Some(Runtime::Codex));
        assert_eq!(runtime_of_head(br#"{"info":{"id":"ses_1"},"messages":[]}"#), Some(Runtime::OpenCode));
        assert_eq!(runtime_of_head(b"{\n  \"info\": {},\n  \"messages\": []\n}\n"), Some(Runtime::OpenCode));
        assert_eq!(runtime_of_head(b"SQLite format 3\0rest"), Some(Runtime::OpenCode));
        assert_eq!(runtime_of_head("\u{feff}".as_bytes().iter().chain(claude).copied().collect::<Vec<u8>>().as_slice()), Some(Runtime::ClaudeCode));
    }

    #[test]
    fn events_and_strangers_are_not_taken_for_history() {
        // What `claude -p --output-format stream-json` prints names `session_id`, not `sessionId`.
        assert_eq!(runtime_of_head(br#"{"type":"system","subtype":"init","session_id":"s"}"#), None);
        // OpenCode's `run --format json` events carry `sessionID`.
        assert_eq!(runtime_of_head(br#"{"type":"reasoning","sessionID":"ses_1","part":{}}"#), None);
        assert_eq!(runtime_of_head(b"hello\n[1,2]\n"), None);
        // Gemini CLI's `-o stream-json` (Codex would take its message events for items).
        let gemini = b"{\"type\":\"init\",\"timestamp\":\"t\",\"session_id\":\"s\",\"model\":\"auto\"}\n{\"type\":\"message\",\"timestamp\":\"t\",\"role\":\"user\",\"content\":\"hi\"}\n";
        assert_eq!(runtime_of_head(gemini), None);
        // Pi's `--mode json` starts with the session header, then events.
        let pi = b"{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"t\",\"cwd\":\"/p\"}\n{\"type\":\"agent_start\"}\n";
        assert_eq!(runtime_of_head(pi), None);
    }

    #[test]
    fn codex_is_asked_first() {
        // Both sniffers take these; detection has always given them to Codex.
        assert_eq!(runtime_of_head(br#"{"type":"message","leafUuid":"x"}"#), Some(Runtime::Codex));
        assert_eq!(runtime_of_head(br#"{"type":"summary","leafUuid":"x","record_type":"state"}"#), Some(Runtime::Codex));
    }

    #[test]
    fn a_record_of_another_runtime_is_named_by_the_importer() {
        let claude: Value = serde_json::json!({"uuid": "u", "message": {}, "type": "other"});
        assert_eq!(foreign_record(&claude, Runtime::Codex), Some(Runtime::ClaudeCode));
        assert_eq!(foreign_record(&claude, Runtime::ClaudeCode), None);
        let codex: Value = serde_json::json!({"type": "response_item", "payload": {}});
        assert_eq!(foreign_record(&codex, Runtime::ClaudeCode), Some(Runtime::Codex));
        assert_eq!(record_runtime(&codex), Some(Runtime::Codex));
    }
}
