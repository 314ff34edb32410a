//! Compactions: each runtime's compaction records are read as canonical compactions, and every
//! replay into another runtime starts at the latest one (its summary, its preserved blocks, then
//! everything after), while an export back to the compacting runtime keeps every record.

use serde_json::{json, Value};
use sna_history::{CompactionMode, Options, ReportAction, Runtime, Store, Trigger};

use sna_test_support::on_both_backends;

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

/// A compaction fixture the real CLI made: where, what `compactions()` says of it, and what every
/// replay into another runtime must carry (in this order) and leave out.
struct Made {
    dir: &'static str,
    runtime: Runtime,
    trigger: Trigger,
    tokens_before: Option<u64>,
    /// What the runtime itself sends after its compaction, in its order (the summary marker
    /// among it), ending with the next prompt.
    kept: &'static [&'static str],
    /// What it no longer sends.
    gone: &'static [&'static str],
    /// The contents of the blocks it preserved from before the boundary.
    preserved: &'static [&'static str],
}

const TURN_1: &str = "Read notes.txt and tell me what it says.";
const TURN_2: &str = "Remember the word PELICAN.";
const TURN_3: &str = "What was the word?";
const SUMMARY: &str = "SUMMARY-MARKER";
/// The first turn's answer: what every runtime's compaction summarised away.
const ANSWER_1: &str = "notes.txt says";

const MADE: &[Made] = &[
    Made { dir: "claude-code/compact", runtime: Runtime::ClaudeCode, trigger: Trigger::Manual, tokens_before: Some(15), kept: &[SUMMARY, "Got it, I'll remember PELICAN.", TURN_3], gone: &[TURN_1, TURN_2, ANSWER_1], preserved: &["Got it, I'll remember PELICAN."] },
    Made { dir: "claude-code/compact-auto", runtime: Runtime::ClaudeCode, trigger: Trigger::Auto, tokens_before: Some(990010), kept: &[SUMMARY, "Got it, I'll remember PELICAN.", TURN_3], gone: &[TURN_1, TURN_2, ANSWER_1], preserved: &["Got it, I'll remember PELICAN.", "What was the word?"] },
    Made { dir: "codex/compact", runtime: Runtime::Codex, trigger: Trigger::Unknown, tokens_before: None, kept: &[TURN_1, TURN_2, SUMMARY, TURN_3], gone: &[ANSWER_1, "Got it, I will remember"], preserved: &[] },
    Made { dir: "codex/compact-auto", runtime: Runtime::Codex, trigger: Trigger::Unknown, tokens_before: None, kept: &[TURN_1, TURN_2, SUMMARY, TURN_3], gone: &[ANSWER_1, "Got it, I will remember"], preserved: &[] },
    Made { dir: "opencode/compact", runtime: Runtime::OpenCode, trigger: Trigger::Manual, tokens_before: None, kept: &["What did we do so far?", SUMMARY, TURN_3], gone: &[TURN_1, TURN_2, ANSWER_1], preserved: &[] },
    Made { dir: "opencode/compact-tail", runtime: Runtime::OpenCode, trigger: Trigger::Manual, tokens_before: None, kept: &["What did we do so far?", SUMMARY, TURN_2, "Got it, I will remember PELICAN.", TURN_3], gone: &[TURN_1, ANSWER_1], preserved: &[TURN_2, "Got it, I will remember PELICAN."] },
    Made { dir: "pi/compact", runtime: Runtime::Pi, trigger: Trigger::Unknown, tokens_before: Some(15), kept: &[SUMMARY, TURN_2, "Got it, I'll remember PELICAN.", TURN_3], gone: &[TURN_1, ANSWER_1], preserved: &[TURN_2, "Got it, I'll remember PELICAN."] },
    Made { dir: "gemini-cli/compact", runtime: Runtime::GeminiCli, trigger: Trigger::Unknown, tokens_before: None, kept: &[SUMMARY, TURN_2, "Noted: PELICAN.", TURN_3], gone: &[TURN_1, ANSWER_1], preserved: &[] },
];

/// The native file of a fixture folder.
fn fixture_file(dir: &str) -> std::path::PathBuf {
    let base = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures").join(dir);
    let pick = |name: &str| {
        name.ends_with(".jsonl") && !["events.jsonl", "requests.jsonl", "stdin.jsonl", "http.jsonl"].contains(&name) || name == "export.json"
    };
    std::fs::read_dir(&base).unwrap().map(|e| e.unwrap().path()).find(|p| pick(p.file_name().unwrap().to_str().unwrap())).unwrap_or_else(|| panic!("no native file in {dir}"))
}

on_both_backends! {
    /// Every real compaction fixture reads as one compaction of its runtime.
    fn the_real_clis_compactions_are_read(store: Store) {
        for made in MADE {
            let session = store.import_file(fixture_file(made.dir), None, &Options::default()).unwrap();
            let compactions = session.compactions().unwrap();
            assert_eq!(compactions.len(), 1, "{}: {compactions:#?}", made.dir);
            let c = &compactions[0];
            assert_eq!(c.runtime, made.runtime.as_str(), "{}", made.dir);
            assert_eq!(c.trigger, made.trigger, "{}", made.dir);
            assert_eq!(c.tokens_before, made.tokens_before, "{}", made.dir);
            assert!(c.summary.contains(SUMMARY), "{}: {}", made.dir, c.summary);
            assert!(c.summary_seq >= c.boundary_seq && c.preserved.iter().all(|&s| s < c.boundary_seq), "{}: {c:?}", made.dir);
            // Exactly the records the runtime preserved (their texts; status blocks between them, such
            // as OpenCode's step parts, come along).
            let blocks = session.blocks().unwrap();
            let blocks_preserved: Vec<&str> = c.preserved.iter().map(|&s| &blocks[s as usize]).filter(|b| b.kind == sna_history::Kind::Text).map(|b| b.content.as_str()).collect();
            assert_eq!(blocks_preserved, made.preserved, "{}", made.dir);
            assert!(blocks[c.summary_seq as usize].content.contains(SUMMARY) || c.summary_seq == c.boundary_seq, "{}", made.dir);
        }
    }
}

on_both_backends! {
    /// Every real compaction bounds the replay into every other runtime; the whole history on request.
    fn every_real_compaction_bounds_the_replay_into_every_other_runtime(store: Store) {
        for made in MADE {
            let session = store.import_file(fixture_file(made.dir), None, &Options::default()).unwrap();
            for target in Runtime::ALL.iter().copied().filter(|t| *t != made.runtime) {
                let export = session.export(target, &Options::default()).unwrap();
                let text = conversation(target, &export.data);
                let mut at = 0;
                for kept in made.kept {
                    let needle = serde_json::to_string(kept).unwrap();
                    let needle = &needle[1..needle.len() - 1];
                    let found = text[at..].find(needle).unwrap_or_else(|| panic!("{} → {target}: no {kept:?} after byte {at}", made.dir));
                    at += found + needle.len();
                }
                for gone in made.gone {
                    assert!(!text.contains(gone), "{} → {target}: {gone:?} is from before the compaction", made.dir);
                }
                assert!(export.report.entries.iter().any(|e| e.action == ReportAction::Compacted), "{} → {target}", made.dir);
                // The whole history on request. (A Gemini CLI import is the message list as the CLI
                // loads it: the messages a compression replaced are kept as status blocks with their
                // records, not as conversation, so there is no more to replay.)
                let whole = session.export(target, &Options { compaction: CompactionMode::None, ..Options::default() }).unwrap();
                let whole = conversation(target, &whole.data);
                assert_eq!(whole.contains(ANSWER_1), made.runtime != Runtime::GeminiCli, "{} → {target}", made.dir);
            }
            // Back to the compacting runtime: every record, nothing reported.
            let back = session.export(made.runtime, &Options::default()).unwrap();
            assert!(back.report.entries.iter().all(|e| e.action != ReportAction::Compacted), "{}", made.dir);
        }
    }
}

/// A session of `turns` turns built through the API, each a prompt, a tool call, its result
/// (`size` bytes) and an answer, attributed to Claude Code.
fn long_session(store: &Store, turns: usize, size: usize) -> sna_history::Session {
    use sna_history::{Actor, Block, NewSession};
    let session = store.create_session(NewSession::new().id("long").cwd("/home/dev/project")).unwrap();
    let mut blocks = Vec::new();
    for i in 0..turns {
        blocks.push(Block::text(Actor::User, format!("PROMPT-{i}: look at part {i} of the log")));
        blocks.push(Block::tool_use(format!("toolu_{i:04}"), "Bash", format!(r#"{{"command":"sed -n {i}p log"}}"#)).attributed("claude-code", "anthropic", "claude-opus-4-5"));
        blocks.push(Block::tool_result(format!("toolu_{i:04}"), format!("{i} ").repeat(size / 2), false));
        blocks.push(Block::text(Actor::Assistant, format!("ANSWER-{i}")).attributed("claude-code", "anthropic", "claude-opus-4-5"));
    }
    session.extend(blocks).unwrap();
    session
}

on_both_backends! {
    /// A replay over its context window folds its oldest whole turns into the digest.
    fn a_replay_over_its_context_window_folds_its_oldest_turns(store: Store) {
        let session = long_session(&store, 100, 12_000);
        let options = Options { context_window: Some(100_000), ..Options::default() };
        let export = session.export(Runtime::Codex, &options).unwrap();
        let text = export.data.to_string();
        assert!(text.contains("PROMPT-99") && text.contains("ANSWER-99"), "the newest turn is whole");
        assert!(!text.contains("PROMPT-0:"), "the oldest turn is folded");
        // The digest lists the newest folded turns (the oldest past forty are counted).
        let first_kept = (0..100).find(|i| text.contains(&format!("\"PROMPT-{i}: look"))).unwrap();
        let last_folded = first_kept - 1;
        assert!(text.contains(&format!("{}. PROMPT-{last_folded}: look at part {last_folded} of the log (tools: exec_command)", last_folded + 1)), "the digest names the newest folded turn (its tools as the target names them)");
        assert!(text.contains(&format!("- … {} older turns not listed", first_kept - 40)), "and counts the oldest");
        assert!(text.contains("are in the history store: session long, seq 0–"), "the digest says where the rest is");
        let entry = &export.report.entries[0];
        assert_eq!(entry.action, ReportAction::Degraded);
        assert!(entry.message.contains("folded into one summary to fit the context budget of"), "{}", entry.message);
        let err = session.export(Runtime::Codex, &Options { strict: true, ..options.clone() }).unwrap_err();
        assert_eq!(err.code(), "LOSSY");
        assert!(err.to_string().contains("context budget of"), "{err}");
        // What is left fits: its bytes over the estimate's 3 bytes a token, under the budget.
        let replayed: usize = export.data.as_array().unwrap().iter().map(|item| item.to_string().len()).sum();
        assert!(replayed / 3 < 100_000, "{replayed} bytes");
        // Without a window, a mock model (not in the model table) is not bounded.
        let whole = session.export(Runtime::Codex, &Options { target_model: Some("mock-model".into()), ..Options::default() }).unwrap();
        assert!(whole.data.to_string().contains("PROMPT-0:"));
        // A known model is bounded by its window: gpt-5's 272,000 input tokens.
        let known = session.export(Runtime::Codex, &Options { target_model: Some("gpt-5".into()), ..Options::default() }).unwrap();
        assert!(known.report.entries[0].message.contains("gpt-5 in the model table of"), "{:?}", known.report.entries[0]);
    }
}

#[test]
fn a_summarizer_writes_the_fold_and_its_error_writes_nothing() {
    use sna_history::replay::budget::Summarizer;
    let store = Store::open_in_memory().unwrap();
    let session = long_session(&store, 60, 12_000);
    let seen = std::sync::Arc::new(std::sync::Mutex::new(0usize));
    let counted = seen.clone();
    let summarizer = Summarizer::new(move |blocks: &[sna_history::Block]| {
        *counted.lock().unwrap() = blocks.len();
        Ok(format!("MY-SUMMARY of {} blocks", blocks.len()))
    });
    let options = Options { context_window: Some(100_000), summarizer: Some(summarizer), ..Options::default() };
    let text = session.export(Runtime::Pi, &options).unwrap().data.to_string();
    let folded = *seen.lock().unwrap();
    assert!(folded > 0 && folded.is_multiple_of(4), "whole turns: {folded}");
    assert!(text.contains(&format!("MY-SUMMARY of {folded} blocks")));
    let failing = Summarizer::new(|_: &[sna_history::Block]| Err(sna_history::Error::invalid("the summarizer is out of quota")));
    let options = Options { context_window: Some(100_000), summarizer: Some(failing), ..Options::default() };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.jsonl");
    let err = session.export_to_path(&out, Runtime::Pi, &options).unwrap_err();
    assert!(err.to_string().contains("out of quota"), "{err}");
    assert!(!out.exists(), "nothing is written");
    let resume = sna_history::ResumeOptions { home: Some(dir.path().to_path_buf()), options, ..Default::default() };
    assert!(session.prepare_resume(Runtime::Pi, &resume).is_err());
    assert!(!dir.path().join(".pi").exists(), "nothing is written");
    assert!(session.binding(Runtime::Pi).unwrap().is_none(), "no binding recorded");
}

#[test]
fn a_prelude_made_from_blocks_starts_at_opencodes_own_compaction() {
    let store = Store::open_in_memory().unwrap();
    let session = store.import_file(fixture_file("opencode/compact"), None, &Options::default()).unwrap();
    let prelude = Options::from_value(json!({"format": "prelude"})).unwrap();
    let text = session.export(Runtime::OpenCode, &prelude).unwrap().data.to_string();
    assert!(text.contains(SUMMARY) && text.contains(TURN_3), "{text}");
    assert!(!text.contains(TURN_1) && !text.contains(ANSWER_1), "{text}");
    // The session document keeps every message: OpenCode's loader applies its compaction.
    let document = session.export(Runtime::OpenCode, &Options::default()).unwrap();
    assert!(document.data.to_string().contains(TURN_1) && document.report.entries.is_empty());
}

#[test]
fn a_server_side_codex_compaction_is_replayed_with_what_it_kept_and_reported() {
    let lines = [
        json!({"timestamp": "2026-12-01T10:00:00.000Z", "type": "session_meta", "payload": {"id": "01a20000-0000-7000-8000-000000000001", "cwd": "/home/dev/project", "model_provider": "openai"}}),
        json!({"timestamp": "2026-12-01T10:00:00.100Z", "type": "event_msg", "payload": {"type": "task_started", "turn_id": "t1"}}),
        json!({"timestamp": "2026-12-01T10:00:00.200Z", "type": "response_item", "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "OLD-PROMPT refactor the parser"}]}}),
        json!({"timestamp": "2026-12-01T10:00:00.300Z", "type": "response_item", "payload": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "OLD-ANSWER done"}]}}),
        json!({"timestamp": "2026-12-01T10:00:01.000Z", "type": "event_msg", "payload": {"type": "task_started", "turn_id": "t2"}}),
        json!({"timestamp": "2026-12-01T10:00:01.100Z", "type": "compacted", "payload": {"message": "", "replacement_history": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "OLD-PROMPT refactor the parser"}]},
            {"type": "compaction", "encrypted_content": "gAAAA-server-side-summary"}]}}),
        json!({"timestamp": "2026-12-01T10:00:02.000Z", "type": "response_item", "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "NEW-PROMPT go on"}]}}),
        json!({"timestamp": "2026-12-01T10:00:02.100Z", "type": "response_item", "payload": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "NEW-ANSWER ok"}]}}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let store = Store::open_in_memory().unwrap();
    let session = store.import_native(Runtime::Codex, sna_history::Source::Text(text), &Options::default()).unwrap();
    let compactions = session.compactions().unwrap();
    assert_eq!((compactions.len(), compactions[0].summary.as_str()), (1, ""));
    let export = session.export(Runtime::ClaudeCode, &Options::default()).unwrap();
    let conversation = export.data.to_string();
    assert!(conversation.contains("OLD-PROMPT") && conversation.contains("NEW-PROMPT"), "what Codex kept travels");
    assert!(!conversation.contains("OLD-ANSWER") && !conversation.contains("gAAAA-server-side-summary"));
    let loss = export.report.entries.iter().find(|e| e.action == ReportAction::Degraded).expect("the opaque summary is reported");
    assert!(loss.message.contains("its summary is encrypted"), "{}", loss.message);
    let err = session.export(Runtime::ClaudeCode, &Options { strict: true, ..Options::default() }).unwrap_err();
    assert_eq!(err.code(), "LOSSY");
}
