//! Compactions: each runtime's compaction records are read as canonical compactions, and every
//! replay into another runtime starts at the latest one (its summary, its preserved blocks, then
//! everything after), while an export back to the compacting runtime keeps every record.

use serde_json::{json, Value};
use sna_history::{CompactionMode, Options, ReportAction, Runtime, Store, Trigger};

/// A Claude Code 2.1.3xx transcript: two turns, a manual `/compact` that preserves the last
/// assistant row, the summary row, then a third turn.
fn claude_transcript() -> String {
    let base = |uuid: &str, parent: Option<&str>, ts: &str| {
        json!({"parentUuid": parent, "isSidechain": false, "type": "user", "uuid": uuid, "timestamp": ts,
               "sessionId": "a6fd51a3-8eb7-4526-92ad-6993aa35bf98", "cwd": "/home/dev/project", "version": "2.1.328"})
    };
    let user = |uuid: &str, parent: Option<&str>, ts: &str, text: &str| {
        let mut row = base(uuid, parent, ts);
        row["message"] = json!({"role": "user", "content": text});
        row
    };
    let assistant = |uuid: &str, parent: &str, ts: &str, id: &str, text: &str| {
        let mut row = base(uuid, Some(parent), ts);
        row["type"] = json!("assistant");
        row["message"] = json!({"id": id, "type": "message", "role": "assistant", "model": "claude-opus-5-5",
                                "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
                                "usage": {"input_tokens": 10, "output_tokens": 5}});
        row
    };
    let mut boundary = base("b0000000-0000-4000-8000-000000000005", None, "2026-12-02T15:22:56.089Z");
    boundary["type"] = json!("system");
    boundary["subtype"] = json!("compact_boundary");
    boundary["content"] = json!("Conversation compacted");
    boundary["logicalParentUuid"] = json!("a0000000-0000-4000-8000-000000000004");
    boundary["compactMetadata"] = json!({"trigger": "manual", "preTokens": 15321,
        "preservedSegment": {"headUuid": "a0000000-0000-4000-8000-000000000004", "anchorUuid": "s0000000-0000-4000-8000-000000000006", "tailUuid": "a0000000-0000-4000-8000-000000000004"},
        "preservedMessages": {"anchorUuid": "s0000000-0000-4000-8000-000000000006", "uuids": ["a0000000-0000-4000-8000-000000000004"]}});
    let mut summary = user("s0000000-0000-4000-8000-000000000006", Some("b0000000-0000-4000-8000-000000000005"), "2026-12-02T15:22:56.091Z",
        "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\nSUMMARY-MARKER: notes.txt says hello; the word is PELICAN.");
    summary["isCompactSummary"] = json!(true);
    summary["isVisibleInTranscriptOnly"] = json!(true);
    let rows = [
        user("u0000000-0000-4000-8000-000000000001", None, "2026-12-02T15:20:00.000Z", "FIRST-PROMPT read notes.txt"),
        assistant("a0000000-0000-4000-8000-000000000002", "u0000000-0000-4000-8000-000000000001", "2026-12-02T15:20:01.000Z", "msg_1", "It says hello from notes."),
        user("u0000000-0000-4000-8000-000000000003", Some("a0000000-0000-4000-8000-000000000002"), "2026-12-02T15:21:00.000Z", "SECOND-PROMPT remember PELICAN"),
        assistant("a0000000-0000-4000-8000-000000000004", "u0000000-0000-4000-8000-000000000003", "2026-12-02T15:21:01.000Z", "msg_2", "PRESERVED-REPLY I will remember."),
        boundary,
        summary,
        user("u0000000-0000-4000-8000-000000000007", Some("s0000000-0000-4000-8000-000000000006"), "2026-12-02T15:23:00.000Z", "THIRD-PROMPT what was the word?"),
        assistant("a0000000-0000-4000-8000-000000000008", "u0000000-0000-4000-8000-000000000007", "2026-12-02T15:23:01.000Z", "msg_3", "FINAL-REPLY PELICAN"),
    ];
    rows.iter().map(|r| format!("{r}\n")).collect()
}

fn import_claude(store: &Store) -> sna_history::Session {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a6fd51a3-8eb7-4526-92ad-6993aa35bf98.jsonl");
    std::fs::write(&path, claude_transcript()).unwrap();
    store.import_file(&path, Some(Runtime::ClaudeCode), &Options::default()).unwrap()
}

#[test]
fn a_claude_code_compaction_is_read_with_its_summary_and_preserved_row() {
    let store = Store::open_in_memory().unwrap();
    let session = import_claude(&store);
    let compactions = session.compactions().unwrap();
    assert_eq!(compactions.len(), 1, "{compactions:?}");
    let c = &compactions[0];
    assert_eq!((c.runtime.as_str(), c.boundary_seq, c.summary_seq), ("claude-code", 4, 5));
    assert_eq!(c.preserved, vec![3]);
    assert_eq!(c.trigger, Trigger::Manual);
    assert_eq!(c.tokens_before, Some(15321));
    assert!(c.summary.contains("SUMMARY-MARKER"), "{}", c.summary);
    assert_eq!(c.created_at.to_rfc3339(), "2026-12-02T15:22:56.089Z");
}

/// The conversation of an export as text: an OpenCode document's messages (its title names the
/// session's first prompt, which is not sent to the model), else all of it.
fn conversation(target: Runtime, data: &Value) -> String {
    match target {
        Runtime::OpenCode => data["messages"].to_string(),
        _ => data.to_string(),
    }
}

#[test]
fn a_replay_into_another_runtime_starts_at_the_latest_compaction() {
    let store = Store::open_in_memory().unwrap();
    let session = import_claude(&store);
    for target in [Runtime::Codex, Runtime::OpenCode, Runtime::GeminiCli, Runtime::Pi] {
        let export = session.export(target, &Options::default()).unwrap();
        let text = conversation(target, &export.data);
        for gone in ["FIRST-PROMPT", "SECOND-PROMPT", "hello from notes."] {
            assert!(!text.contains(gone), "{target}: {gone} is before the compaction");
        }
        let order: Vec<usize> = ["SUMMARY-MARKER", "PRESERVED-REPLY", "THIRD-PROMPT", "FINAL-REPLY"].iter().map(|n| text.find(n).unwrap_or_else(|| panic!("{target}: no {n}"))).collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{target}: summary, preserved, then later: {order:?}");
        let entries: Vec<_> = export.report.entries.iter().filter(|e| e.action == ReportAction::Compacted).collect();
        assert_eq!(entries.len(), 1, "{target}: {:?}", export.report.entries);
        assert_eq!(entries[0].message, "3 blocks before the compaction at seq 4 are not replayed; the runtime's summary stands in for them");
        // Strict mode does not refuse it: the source runtime itself no longer sent those blocks.
        let strict = session.export(target, &Options { strict: true, ..Options::default() });
        assert!(strict.is_ok(), "{target}: {:?}", strict.err());
        // The text written from stored text agrees.
        let written = session.to_native_text(target, &Options::default()).unwrap();
        let written: Value = serde_json::from_str(&written)
            .unwrap_or_else(|_| Value::Array(written.lines().map(|l| serde_json::from_str(l).unwrap()).collect()));
        let written = conversation(target, &written);
        assert!(!written.contains("FIRST-PROMPT") && written.contains("SUMMARY-MARKER"), "{target}");
        // `compaction: none` replays the whole history.
        let whole = session.export(target, &Options { compaction: CompactionMode::None, ..Options::default() }).unwrap();
        assert!(whole.data.to_string().contains("FIRST-PROMPT"), "{target}");
        assert!(whole.report.entries.iter().all(|e| e.action != ReportAction::Compacted));
    }
}

#[test]
fn an_export_back_to_the_compacting_runtime_keeps_every_record() {
    let store = Store::open_in_memory().unwrap();
    let session = import_claude(&store);
    let back = session.to_native_text(Runtime::ClaudeCode, &Options::default()).unwrap();
    let lines = |text: &str| text.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()).collect::<Vec<_>>();
    assert_eq!(lines(&back), lines(&claude_transcript()));
    assert!(session.export(Runtime::ClaudeCode, &Options::default()).unwrap().report.entries.is_empty());
}

#[test]
fn the_compaction_option_is_checked() {
    let err = Options::from_value(json!({"compaction": "oldest"})).unwrap_err();
    assert_eq!(err.code(), "INVALID_INPUT");
    assert!(err.to_string().contains("compaction"), "{err}");
    assert_eq!(Options::from_value(json!({"compaction": "none"})).unwrap().compaction, CompactionMode::None);
}
