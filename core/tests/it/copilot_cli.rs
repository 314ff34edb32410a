//! Copilot CLI adapter: lossless round trips of the session logs Copilot CLI 1.0.102 wrote,
//! detection (its printed output refused), blocks with signed thinking, usage and the compaction
//! event, logs for sessions from elsewhere, resume files, grown logs and malformed lines.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use sna_history::{Actor, Block, Kind, NewSession, Options, Reasoning, ReportAction, ResumeOptions, Runtime, Scope, Source, SourceOutcome, Store, Trigger};

const FIXTURES: [&str; 5] = ["basic", "compact", "resume", "tool-error", "tools-thinking"];

fn fixture_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/copilot-cli").join(name)
}

/// The session log of a fixture (named `<session id>.events.jsonl`).
fn log(name: &str) -> PathBuf {
    std::fs::read_dir(fixture_dir(name)).unwrap().map(|e| e.unwrap().path()).find(|p| p.to_str().unwrap().ends_with(".events.jsonl")).unwrap()
}

fn conversation(blocks: &[Block]) -> Vec<&Block> {
    blocks.iter().filter(|b| b.kind != Kind::Status).collect()
}

#[test]
fn every_fixture_round_trips_line_for_line() {
    for name in FIXTURES {
        let path = log(name);
        let store = Store::open_in_memory().unwrap();
        let session = store.import_file(&path, None, &Options::default()).unwrap();
        assert_eq!(session.id(), path.file_name().unwrap().to_str().unwrap().split('.').next().unwrap(), "{name}: the session id is the log's");
        assert_eq!(session.info().unwrap().cwd.as_deref(), Some("/home/dev/project"), "{name}");
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let export = session.export(Runtime::CopilotCli, &Options::default()).unwrap();
        assert!(export.report.is_lossless(), "{name}: {:?}", export.report);
        let records = export.data.as_array().unwrap();
        assert_eq!(records.len(), lines.len(), "{name}: line count");
        for (i, (record, line)) in records.iter().zip(&lines).enumerate() {
            assert_eq!(serde_json::to_string(record).unwrap(), *line, "{name}: line {} differs", i + 1);
        }
        let again = store
            .import_native(Runtime::CopilotCli, Source::Text(sna_history::Format::Events.to_text(&export.data).unwrap()), &Options { session_id: Some(format!("{name}-again")), ..Options::default() })
            .unwrap();
        let said = |s: &sna_history::Session| conversation(&s.blocks().unwrap()).iter().map(|b| (b.actor, b.kind, b.content.clone())).collect::<Vec<_>>();
        assert_eq!(said(&again), said(&session), "{name}");
    }
}

#[test]
fn logs_are_recognised_and_printed_output_is_not_history() {
    for name in FIXTURES {
        assert_eq!(sna_history::native::detect_runtime(&log(name)).unwrap(), Some(Runtime::CopilotCli), "{name}");
        // What `copilot --output-format json` printed: ephemeral events and a result.
        assert_eq!(sna_history::native::detect_runtime(&fixture_dir(name).join("events.jsonl")).unwrap(), None, "{name}");
    }
    let store = Store::open_in_memory().unwrap();
    let err = store.import_file(fixture_dir("basic").join("events.jsonl"), None, &Options::default()).unwrap_err();
    assert!(err.to_string().contains("Copilot CLI"), "the refusal names whose output it is: {err}");
}

#[test]
fn signed_thinking_calls_and_results_are_blocks() {
    let store = Store::open_in_memory().unwrap();
    let session = store.import_file(log("tools-thinking"), None, &Options::default()).unwrap();
    let blocks = session.blocks().unwrap();
    let said: Vec<(Actor, Kind)> = conversation(&blocks).iter().map(|b| (b.actor, b.kind)).collect();
    assert_eq!(said, [(Actor::User, Kind::Text), (Actor::Assistant, Kind::Thinking), (Actor::Assistant, Kind::ToolUse), (Actor::User, Kind::ToolResult), (Actor::Assistant, Kind::Text)]);
    let conv = conversation(&blocks);
    let reasoning = conv[1].reasoning.as_ref().unwrap();
    assert_eq!((reasoning.format.as_str(), reasoning.data.as_str()), (Reasoning::ANTHROPIC_SIGNATURE, "c2lnLWNvcGlsb3QtMQ=="));
    assert_eq!((reasoning.scope.model_provider.as_deref(), reasoning.scope.model.as_deref()), (Some("anthropic"), Some("claude-sonnet-4.5")));
    let call = conv[2].tool.as_ref().unwrap();
    assert_eq!((call.call_id.as_str(), call.name.as_deref()), ("toolu_cpt1", Some("bash")));
    assert_eq!(conv[3].tool.as_ref().unwrap().call_id, "toolu_cpt1");
    assert!(conv[3].content.contains("hello from notes"));
    for block in conv.iter().filter(|b| b.actor == Actor::Assistant) {
        assert_eq!((block.provider.as_deref(), block.model_provider.as_deref(), block.model.as_deref()), (Some("copilot-cli"), Some("anthropic"), Some("claude-sonnet-4.5")));
    }
    assert_eq!(session.info().unwrap().title.as_deref(), Some("What does notes.txt say? Use the shell."));
    let usage = session.usage(None).unwrap();
    assert_eq!(usage.responses.len(), 2, "one per usage record");
    assert!(usage.responses.iter().all(|r| r.model.as_deref() == Some("claude-sonnet-4.5") && r.tokens.input == 10 && r.tokens.output == 5), "{:?}", usage.responses);
    // A failed tool is an error result.
    let session = store.import_file(log("tool-error"), None, &Options::default()).unwrap();
    let result = session.blocks().unwrap().into_iter().find(|b| b.kind == Kind::ToolResult).unwrap();
    assert_eq!(result.tool.as_ref().unwrap().is_error, Some(true));
    assert!(!result.content.is_empty());
}

#[test]
fn a_compaction_event_is_a_compaction() {
    let store = Store::open_in_memory().unwrap();
    let session = store.import_file(log("compact"), None, &Options::default()).unwrap();
    let compactions = session.compactions().unwrap();
    assert_eq!(compactions.len(), 1, "{compactions:?}");
    assert_eq!(compactions[0].runtime, "copilot-cli");
    assert_eq!(compactions[0].trigger, Trigger::Manual);
    assert!(compactions[0].summary.contains("SUMMARY-MARKER-copilot-cli"), "{}", compactions[0].summary);
    let transcript = session.export(Runtime::ClaudeCode, &Options::default()).unwrap().data.to_string();
    assert!(transcript.contains("SUMMARY-MARKER-copilot-cli") && transcript.contains("You asked me to remember PELICAN."));
    assert!(!transcript.contains("There are two files"), "the turns before the compaction are not replayed");
}

fn api_session(store: &Store) -> sna_history::Session {
    let session = store.create_session(NewSession::new().id("api-copilot").cwd("/home/dev/project")).unwrap();
    let scope = |model: &str| Scope { provider: Some("claude-code".into()), model_provider: Some("anthropic".into()), model: Some(model.into()) };
    let attr = |b: Block| b.attributed("claude-code", "anthropic", "claude-sonnet-4.5");
    let mut thinking = attr(Block::new(Actor::Assistant, Kind::Thinking, "look at the file"));
    thinking.reasoning = Some(Reasoning { format: Reasoning::ANTHROPIC_SIGNATURE.into(), data: "U0lHLVNBTUU=".into(), scope: scope("claude-sonnet-4.5") });
    thinking.message_id = Some("m1".into());
    let mut other = attr(Block::new(Actor::Assistant, Kind::Thinking, "another model's thought"));
    other.reasoning = Some(Reasoning { format: Reasoning::ANTHROPIC_SIGNATURE.into(), data: "U0lHLU9USEVS".into(), scope: scope("claude-opus-5-5") });
    other.message_id = Some("m1".into());
    let mut call = attr(Block::tool_use("toolu_1", "Read", r#"{"file_path":"/home/dev/project/notes.txt"}"#));
    call.message_id = Some("m1".into());
    let mut second = attr(Block::tool_use("toolu_2", "Bash", r#"{"command":"ls"}"#));
    second.message_id = Some("m1".into());
    let result = Block::tool_result("toolu_1", "hello from notes\n", false);
    let mut answer = attr(Block::text(Actor::Assistant, "A note."));
    answer.message_id = Some("m2".into());
    session.extend(vec![Block::text(Actor::User, "Read notes.txt"), thinking, other, call, second, result, answer]).unwrap();
    session
}

#[test]
fn a_session_from_elsewhere_becomes_a_chain_of_events() {
    let store = Store::open_in_memory().unwrap();
    let session = api_session(&store);
    let options = Options { target_model: Some("claude-sonnet-4.5".into()), ..Options::default() };
    let export = session.export(Runtime::CopilotCli, &options).unwrap();
    let events = export.data.as_array().unwrap();
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["session.start", "user.message", "assistant.message", "tool.execution_complete", "tool.execution_complete", "assistant.message"]);
    assert_eq!(events[0]["parentId"], Value::Null);
    for pair in events.windows(2) {
        assert_eq!(pair[1]["parentId"], pair[0]["id"]);
    }
    assert_eq!(events[0]["data"]["context"]["cwd"], "/home/dev/project");
    let message = &events[2]["data"];
    // The target model's signature travels, tagged as the CLI tags it; another model's does not.
    assert_eq!(message["reasoningBlocks"], json!({"provider": "anthropic-messages", "blocks": [{"type": "thinking", "thinking": "look at the file", "signature": "U0lHLVNBTUU="}]}));
    assert!(!export.data.to_string().contains("U0lHLU9USEVS"));
    assert!(export.report.entries.iter().any(|e| e.action == ReportAction::Dropped && e.message.contains("claude-opus-5-5")), "{:?}", export.report);
    // Claude Code's tools in Copilot CLI's names.
    assert_eq!(message["toolRequests"][0], json!({"toolCallId": "toolu_1", "name": "view", "arguments": {"path": "/home/dev/project/notes.txt"}, "type": "function"}));
    assert_eq!(message["toolRequests"][1]["name"], "bash");
    assert_eq!(events[3]["data"], json!({"toolCallId": "toolu_1", "success": true, "result": {"content": "hello from notes\n"}}));
    assert_eq!(events[4]["data"]["success"], false, "the unanswered call gets an error result");
    assert!(export.report.entries.iter().any(|e| e.action == ReportAction::Synthesized));
    let back = store.import_native(Runtime::CopilotCli, Source::Value(export.data.clone()), &Options { session_id: Some("back".into()), ..Options::default() }).unwrap();
    let kinds: Vec<Kind> = conversation(&back.blocks().unwrap()).iter().map(|b| b.kind).collect();
    assert_eq!(kinds, [Kind::Text, Kind::Thinking, Kind::ToolUse, Kind::ToolUse, Kind::ToolResult, Kind::ToolResult, Kind::Text]);
}

/// Found in review: a step whose only block is thinking that cannot be written gives no empty
/// message; unsigned thinking is written as text when asked; each log's start has its own id.
#[test]
fn steps_with_nothing_to_write_and_unsigned_thinking() {
    let store = Store::open_in_memory().unwrap();
    let session = store.create_session(NewSession::new().id("thoughts").cwd("/home/dev/project")).unwrap();
    let mut thought = Block::new(Actor::Assistant, Kind::Thinking, "QWEN-THOUGHT").attributed("qwen-code", "alibaba", "qwen3.5-plus");
    thought.message_id = Some("m1".into());
    let mut answer = Block::text(Actor::Assistant, "ANSWER").attributed("qwen-code", "alibaba", "qwen3.5-plus");
    answer.message_id = Some("m2".into());
    session.extend(vec![Block::text(Actor::User, "hi"), thought, answer]).unwrap();
    let export = session.export(Runtime::CopilotCli, &Options::default()).unwrap();
    let types: Vec<&str> = export.data.as_array().unwrap().iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["session.start", "user.message", "assistant.message"], "no empty message for the dropped thought");
    assert!(export.report.entries.iter().any(|e| e.action == ReportAction::Dropped));
    let as_text = session.export(Runtime::CopilotCli, &Options { foreign_reasoning: sna_history::ForeignReasoning::Text, ..Options::default() }).unwrap();
    assert!(as_text.data.to_string().contains("[reasoning] QWEN-THOUGHT"));
    let other = store.create_session(NewSession::new().id("other").cwd("/home/dev/project")).unwrap();
    other.extend(vec![Block::text(Actor::User, "hi")]).unwrap();
    let first = |s: &sna_history::Session| s.export(Runtime::CopilotCli, &Options::default()).unwrap().data[0]["id"].clone();
    assert_ne!(first(&session), first(&other), "each log's session.start has an id of its own");
}

#[test]
fn resume_files_go_where_the_cli_finds_them() {
    let store = Store::open_in_memory().unwrap();
    let session = api_session(&store);
    let home = tempfile::tempdir().unwrap();
    let cwd = home.path().join("work");
    std::fs::create_dir_all(&cwd).unwrap();
    let options = ResumeOptions { home: Some(home.path().to_path_buf()), cwd: Some(cwd.clone()), ..ResumeOptions::default() };
    let plan = session.prepare_resume(Runtime::CopilotCli, &options).unwrap();
    assert_eq!(plan.argv, ["copilot", "--resume", plan.session_id.as_str()]);
    assert_eq!(plan.files[0], home.path().join(".copilot/session-state").join(&plan.session_id).join("events.jsonl"));
    let first: Value = serde_json::from_str(std::fs::read_to_string(&plan.files[0]).unwrap().lines().next().unwrap()).unwrap();
    assert_eq!((first["data"]["sessionId"].as_str(), first["data"]["context"]["cwd"].as_str()), (Some(plan.session_id.as_str()), cwd.to_str()));
    let err = session.prepare_resume(Runtime::CopilotCli, &ResumeOptions { options: Options { session_id: Some("not-a-uuid".into()), ..Options::default() }, ..options }).unwrap_err();
    assert!(err.to_string().contains("UUID"), "{err}");
}

#[test]
fn a_grown_log_imports_its_new_lines() {
    let original = log("resume");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(original.file_name().unwrap());
    let text = std::fs::read_to_string(&original).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let half = lines.len() / 2;
    std::fs::write(&path, lines[..half].iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
    let store = Store::open(dir.path().join("h.db")).unwrap();
    assert_eq!(store.import_source(&path, None, &Options::default()).unwrap().outcome, SourceOutcome::Imported);
    std::fs::write(&path, &text).unwrap();
    let grown = store.import_source(&path, None, &Options::default()).unwrap();
    assert_eq!(grown.outcome, SourceOutcome::Appended((lines.len() - half) as u64));
    let export = grown.session.to_native(Runtime::CopilotCli, &Options::default()).unwrap();
    let written: Vec<String> = export.as_array().unwrap().iter().map(|r| r.to_string()).collect();
    assert_eq!(written, lines);
}

#[test]
fn malformed_lines_say_where() {
    let good = std::fs::read_to_string(log("basic")).unwrap();
    let mut lines: Vec<String> = good.lines().map(str::to_string).collect();
    let mut event: Value = serde_json::from_str(&lines[1]).unwrap();
    event["data"] = json!("not an object");
    lines[1] = event.to_string();
    lines.insert(2, "{not json".into());
    let text = lines.join("\n") + "\n";
    let store = Store::open_in_memory().unwrap();
    let err = store.import_native(Runtime::CopilotCli, Source::Text(text.clone()), &Options { strict: true, ..Options::default() }).unwrap_err();
    let location = err.location().unwrap();
    assert_eq!((location.line, location.field.as_deref()), (Some(2), Some("data")), "{err}");
    let session = store.import_native(Runtime::CopilotCli, Source::Text(text), &Options::default()).unwrap();
    assert_eq!(session.blocks().unwrap().iter().filter(|b| b.kind == Kind::Error).count(), 2);
}
