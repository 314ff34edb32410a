//! Qwen Code adapter: lossless round trips of the chat files Qwen Code 0.24.4 wrote, detection
//! against Claude Code and Gemini CLI, blocks, usage and the compression record, files for
//! sessions from elsewhere, resume files, grown files and malformed lines.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use sna_history::{Actor, Block, Embed, Kind, NewSession, Options, Reasoning, ReportAction, ResumeOptions, Runtime, Scope, Source, SourceOutcome, Store, Trigger};

const FIXTURES: [&str; 6] = ["basic", "compact", "image", "resume", "tool-error", "tools-thinking"];

fn fixture_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/qwen-code").join(name)
}

/// The chat file of a fixture (named `<session id>.jsonl`).
fn chat(name: &str) -> PathBuf {
    std::fs::read_dir(fixture_dir(name))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "jsonl") && !["events.jsonl", "requests.jsonl"].contains(&p.file_name().unwrap().to_str().unwrap()))
        .unwrap()
}

fn conversation(blocks: &[Block]) -> Vec<&Block> {
    blocks.iter().filter(|b| b.kind != Kind::Status).collect()
}

#[test]
fn every_fixture_round_trips_line_for_line() {
    for name in FIXTURES {
        let path = chat(name);
        let store = Store::open_in_memory().unwrap();
        let session = store.import_file(&path, None, &Options::default()).unwrap();
        assert_eq!(session.id(), path.file_stem().unwrap().to_str().unwrap(), "{name}: the session id is the file's");
        assert_eq!(session.info().unwrap().cwd.as_deref(), Some("/home/dev/project"), "{name}");
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let export = session.export(Runtime::QwenCode, &Options::default()).unwrap();
        assert!(export.report.is_lossless(), "{name}: {:?}", export.report);
        let records = export.data.as_array().unwrap();
        assert_eq!(records.len(), lines.len(), "{name}: line count");
        for (i, (record, line)) in records.iter().zip(&lines).enumerate() {
            assert_eq!(serde_json::to_string(record).unwrap(), *line, "{name}: line {} differs", i + 1);
        }
        // And once more through the text: the export imports to the same blocks.
        let again = store
            .import_native(Runtime::QwenCode, Source::Text(sna_history::Format::Chat.to_text(&export.data).unwrap()), &Options { session_id: Some(format!("{name}-again")), ..Options::default() })
            .unwrap();
        let said = |s: &sna_history::Session| conversation(&s.blocks().unwrap()).iter().map(|b| (b.actor, b.kind, b.content.clone())).collect::<Vec<_>>();
        assert_eq!(said(&again), said(&session), "{name}");
    }
}

#[test]
fn chat_files_are_told_from_claude_code_and_gemini_cli() {
    for name in FIXTURES {
        assert_eq!(sna_history::native::detect_runtime(&chat(name)).unwrap(), Some(Runtime::QwenCode), "{name}");
    }
    // Claude Code's transcripts stay Claude Code's.
    let claude = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/claude-code/basic");
    let transcript = std::fs::read_dir(&claude).unwrap().map(|e| e.unwrap().path()).find(|p| p.extension().is_some_and(|e| e == "jsonl") && !p.ends_with("events.jsonl") && !p.ends_with("requests.jsonl")).unwrap();
    assert_eq!(sna_history::native::detect_runtime(&transcript).unwrap(), Some(Runtime::ClaudeCode));
    // Asked to read a Qwen Code file as Claude Code's, the import says whose it is.
    let store = Store::open_in_memory().unwrap();
    let err = store.import_file(chat("basic"), Some(Runtime::ClaudeCode), &Options::default()).unwrap_err();
    assert!(err.to_string().contains("Qwen Code history"), "{err}");
    let err = store.import_file(&transcript, Some(Runtime::QwenCode), &Options::default()).unwrap_err();
    assert!(err.to_string().contains("Claude Code history"), "{err}");
    // Also a file that starts with a system record (Claude Code has `system` records too).
    let err = store.import_file(chat("image"), Some(Runtime::ClaudeCode), &Options::default()).unwrap_err();
    assert!(err.to_string().contains("Qwen Code history"), "{err}");
}

/// Found in review: records kept from a file whose earlier records a replay left out still form
/// one chain (Qwen Code walks it back from the last record), and the result of a call a kept record
/// made, stored by a host, is written as its `tool_result`.
#[test]
fn kept_records_stay_one_chain_and_late_results_follow_their_calls() {
    let store = Store::open_in_memory().unwrap();
    let imported = store.import_file(chat("tools-thinking"), None, &Options::default()).unwrap();
    let blocks = imported.blocks().unwrap();
    // The records after the first two, as a replay that folded the oldest would give them.
    let tail: Vec<Block> = blocks.iter().skip_while(|b| b.native.as_ref().and_then(|n| n.data["record"]["type"].as_str()) != Some("assistant")).cloned().collect();
    let session = store.create_session(NewSession::new().id("tail").cwd("/home/dev/project")).unwrap();
    session.extend(tail).unwrap();
    let export = session.export(Runtime::QwenCode, &Options::default()).unwrap();
    let records = export.data.as_array().unwrap();
    assert_eq!(records[0]["parentUuid"], Value::Null, "the first record written starts the chain");
    for pair in records.windows(2) {
        assert_eq!(pair[1]["parentUuid"], pair[0]["uuid"]);
    }
    assert!(export.report.entries.iter().any(|e| e.action == ReportAction::Remapped));
    // A file cut after the call, and the result the host stored.
    let text = std::fs::read_to_string(chat("tools-thinking")).unwrap();
    let upto: Vec<&str> = text.lines().take_while(|l| !l.contains("\"type\":\"tool_result\"")).collect();
    let cut = store.import_native(Runtime::QwenCode, Source::Text(upto.join("\n") + "\n"), &Options { session_id: Some("cut".into()), ..Options::default() }).unwrap();
    cut.extend(vec![Block::tool_result("call_qt1", "hello from notes\n", false)]).unwrap();
    let export = cut.export(Runtime::QwenCode, &Options::default()).unwrap();
    let last = export.data.as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["type"], "tool_result");
    assert_eq!(last["message"]["parts"][0]["functionResponse"]["id"], "call_qt1");
    assert_eq!(last["message"]["parts"][0]["functionResponse"]["name"], "run_shell_command");
}

#[test]
fn reasoning_calls_and_results_are_blocks_attributed_to_the_model() {
    let store = Store::open_in_memory().unwrap();
    let session = store.import_file(chat("tools-thinking"), None, &Options::default()).unwrap();
    let blocks = session.blocks().unwrap();
    let said: Vec<(Actor, Kind)> = conversation(&blocks).iter().map(|b| (b.actor, b.kind)).collect();
    assert_eq!(
        said,
        [
            (Actor::User, Kind::Text),
            (Actor::Assistant, Kind::Thinking),
            (Actor::Assistant, Kind::ToolUse),
            (Actor::User, Kind::ToolResult),
            (Actor::Assistant, Kind::Thinking),
            (Actor::Assistant, Kind::Text),
        ]
    );
    let conv = conversation(&blocks);
    assert_eq!(conv[1].content, "I will read the notes with cat.");
    assert!(conv[1].reasoning.is_none(), "Chat Completions reasoning has no signature");
    let call = conv[2].tool.as_ref().unwrap();
    assert_eq!((call.call_id.as_str(), call.name.as_deref()), ("call_qt1", Some("run_shell_command")));
    assert_eq!(serde_json::from_str::<Value>(&conv[2].content).unwrap()["command"], "cat notes.txt");
    assert_eq!(conv[3].tool.as_ref().unwrap().call_id, "call_qt1");
    assert!(conv[3].content.contains("hello from notes"), "{}", conv[3].content);
    assert_eq!(conv[3].tool.as_ref().unwrap().is_error, Some(false));
    for block in conv.iter().filter(|b| b.actor == Actor::Assistant) {
        assert_eq!(
            (block.provider.as_deref(), block.model_provider.as_deref(), block.model.as_deref()),
            (Some("qwen-code"), Some("alibaba"), Some("qwen3.5-plus"))
        );
    }
    assert_eq!(session.info().unwrap().title.as_deref(), Some("What does notes.txt say? Use the shell."));
    // Usage: each assistant record's usageMetadata, once.
    let usage = session.usage(None).unwrap();
    assert_eq!(usage.responses.len(), 2);
    assert!(usage.responses.iter().all(|r| r.model.as_deref() == Some("qwen3.5-plus") && r.tokens.input == 10 && r.tokens.output == 5), "{:?}", usage.responses);
}

#[test]
fn a_failed_tool_and_an_image_are_read() {
    let store = Store::open_in_memory().unwrap();
    let session = store.import_file(chat("tool-error"), None, &Options::default()).unwrap();
    let blocks = session.blocks().unwrap();
    let result = blocks.iter().find(|b| b.kind == Kind::ToolResult).unwrap();
    assert_eq!(result.tool.as_ref().unwrap().is_error, Some(true));
    assert!(result.content.starts_with("File not found"), "{}", result.content);
    let session = store.import_file(chat("image"), None, &Options::default()).unwrap();
    let blocks = session.blocks().unwrap();
    let image = blocks.iter().find(|b| !b.embeds.is_empty()).unwrap();
    assert_eq!(image.actor, Actor::User);
    let embed = image.embeds.values().next().unwrap();
    assert_eq!((embed.mime.as_str(), embed.name.as_deref()), ("image/jpeg", Some("pixel.png")));
    assert!(embed.size > 100);
}

#[test]
fn a_compression_is_a_compaction() {
    let store = Store::open_in_memory().unwrap();
    let session = store.import_file(chat("compact"), None, &Options::default()).unwrap();
    let compactions = session.compactions().unwrap();
    assert_eq!(compactions.len(), 1, "{compactions:?}");
    let compaction = &compactions[0];
    assert_eq!(compaction.runtime, "qwen-code");
    assert_eq!(compaction.trigger, Trigger::Manual);
    assert_eq!(compaction.tokens_before, Some(60000));
    assert!(compaction.summary.contains("SUMMARY-MARKER-qwen-code"), "{}", compaction.summary);
    // A replay elsewhere starts from the summary: what was said before it is not sent again.
    let transcript = session.export(Runtime::ClaudeCode, &Options::default()).unwrap();
    let text = transcript.data.to_string();
    assert!(text.contains("SUMMARY-MARKER-qwen-code"));
    assert!(!text.contains("There are two files"), "the turns before the compression are not replayed");
    assert!(text.contains("You asked me to remember PELICAN."));
}

/// A session made through the API: a prompt with an image, Claude thinking with a signature, a
/// call and its result, a call without a result, an answer.
fn api_session(store: &Store) -> sna_history::Session {
    let session = store.create_session(NewSession::new().id("api-qwen").cwd("/home/dev/project")).unwrap();
    let embed = Embed::from_bytes("image/png", None, b"\x89PNG\r\n\x1a\nfake".to_vec());
    let mut user = Block::text(Actor::User, "What is in this picture? ![pic](embed://pic-1)");
    user.embeds.insert("pic-1".into(), embed);
    let attr = |b: Block| b.attributed("claude-code", "anthropic", "claude-sonnet-4-5");
    let mut thinking = attr(Block::new(Actor::Assistant, Kind::Thinking, "look at the file"));
    thinking.reasoning = Some(Reasoning {
        format: Reasoning::ANTHROPIC_SIGNATURE.into(),
        data: "U0lHLUNMQVVERQ==".into(),
        scope: Scope { provider: Some("claude-code".into()), model_provider: Some("anthropic".into()), model: Some("claude-sonnet-4-5".into()) },
    });
    thinking.message_id = Some("m1".into());
    let mut plain = attr(Block::new(Actor::Assistant, Kind::Thinking, "and list the folder"));
    plain.message_id = Some("m1".into());
    let mut call = attr(Block::tool_use("toolu_1", "Read", r#"{"file_path":"/home/dev/project/notes.txt"}"#));
    call.message_id = Some("m1".into());
    let mut second = attr(Block::tool_use("toolu_2", "Bash", r#"{"command":"ls"}"#));
    second.message_id = Some("m1".into());
    let result = Block::tool_result("toolu_1", "hello from notes\n", false);
    let mut answer = attr(Block::text(Actor::Assistant, "A picture and a note."));
    answer.message_id = Some("m2".into());
    session.extend(vec![user, thinking, plain, call, second, result, answer]).unwrap();
    session
}

#[test]
fn a_session_from_elsewhere_becomes_a_chain_of_records() {
    let store = Store::open_in_memory().unwrap();
    let session = api_session(&store);
    let export = session.export(Runtime::QwenCode, &Options::default()).unwrap();
    let records = export.data.as_array().unwrap();
    let types: Vec<&str> = records.iter().map(|r| r["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["user", "assistant", "tool_result", "tool_result", "assistant"]);
    // One chain, from the first record to the last, in one session.
    assert_eq!(records[0]["parentUuid"], Value::Null);
    for pair in records.windows(2) {
        assert_eq!(pair[1]["parentUuid"], pair[0]["uuid"]);
    }
    let session_id = records[0]["sessionId"].as_str().unwrap();
    assert!(records.iter().all(|r| r["sessionId"] == session_id && r["cwd"] == "/home/dev/project"));
    assert_eq!(records[0]["message"]["parts"][0], json!({"text": "What is in this picture? "}));
    assert_eq!(records[0]["message"]["parts"][1]["inlineData"]["mimeType"], "image/png");
    // The signed Claude thinking has no place here: left out and reported; the plain one is a thought.
    let parts = &records[1]["message"]["parts"];
    assert_eq!(parts[0], json!({"text": "and list the folder", "thought": true}));
    assert!(!export.data.to_string().contains("U0lHLUNMQVVERQ=="));
    assert!(export.report.entries.iter().any(|e| e.action == ReportAction::Dropped && e.message.contains("anthropic-signature")), "{:?}", export.report);
    // Claude Code's tools in Qwen Code's names (Qwen Code's `offset` is 0-based).
    assert_eq!(parts[1], json!({"functionCall": {"id": "toolu_1", "name": "read_file", "args": {"file_path": "/home/dev/project/notes.txt"}}}));
    assert_eq!(parts[2]["functionCall"]["name"], "run_shell_command");
    assert_eq!(records[2]["message"]["parts"][0], json!({"functionResponse": {"id": "toolu_1", "name": "read_file", "response": {"output": "hello from notes\n"}}}));
    assert!(records[3]["message"]["parts"][0]["functionResponse"]["response"]["error"].is_string(), "the unanswered call gets an error result");
    assert!(export.report.entries.iter().any(|e| e.action == ReportAction::Synthesized));
    // The records import back to the same conversation.
    let back = store.import_native(Runtime::QwenCode, Source::Value(export.data.clone()), &Options { session_id: Some("back".into()), ..Options::default() }).unwrap();
    let blocks = back.blocks().unwrap();
    let kinds: Vec<Kind> = blocks.iter().map(|b| b.kind).collect();
    assert_eq!(kinds, [Kind::Text, Kind::Text, Kind::Thinking, Kind::ToolUse, Kind::ToolUse, Kind::ToolResult, Kind::ToolResult, Kind::Text]);
}

#[test]
fn resume_files_go_where_the_cli_finds_them() {
    let store = Store::open_in_memory().unwrap();
    let session = api_session(&store);
    let home = tempfile::tempdir().unwrap();
    let cwd = home.path().join("work").join("My Project");
    std::fs::create_dir_all(&cwd).unwrap();
    let options = ResumeOptions { home: Some(home.path().to_path_buf()), cwd: Some(cwd.clone()), ..ResumeOptions::default() };
    let plan = session.prepare_resume(Runtime::QwenCode, &options).unwrap();
    assert_eq!(plan.argv, ["qwen", "--resume", plan.session_id.as_str()]);
    let folder = sna_history::native::qwen_code::project_folder(cwd.to_str().unwrap());
    assert_eq!(plan.files[0], home.path().join(".qwen/projects").join(folder).join("chats").join(format!("{}.jsonl", plan.session_id)));
    let written = std::fs::read_to_string(&plan.files[0]).unwrap();
    for line in written.lines() {
        let record: Value = serde_json::from_str(line).unwrap();
        assert_eq!((record["sessionId"].as_str(), record["cwd"].as_str()), (Some(plan.session_id.as_str()), cwd.to_str()), "every record names the session and the cwd resumed");
    }
    assert_eq!(plan.cwd.as_deref(), Some(cwd.as_path()));
    // A session id Qwen Code cannot take is refused, naming the field.
    let err = session.prepare_resume(Runtime::QwenCode, &ResumeOptions { options: Options { session_id: Some("not-a-uuid".into()), ..Options::default() }, ..options }).unwrap_err();
    assert!(err.to_string().contains("UUID"), "{err}");
}

#[test]
fn a_grown_file_imports_its_new_lines() {
    let original = chat("resume");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(original.file_name().unwrap());
    let text = std::fs::read_to_string(&original).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // The first run wrote the first half; the resumed run appended the rest.
    let half = lines.len() / 2;
    std::fs::write(&path, lines[..half].iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
    let store = Store::open(dir.path().join("h.db")).unwrap();
    let first = store.import_source(&path, None, &Options::default()).unwrap();
    assert_eq!(first.outcome, SourceOutcome::Imported);
    assert_eq!(store.import_source(&path, None, &Options::default()).unwrap().outcome, SourceOutcome::Unchanged);
    std::fs::write(&path, &text).unwrap();
    let grown = store.import_source(&path, None, &Options::default()).unwrap();
    assert_eq!(grown.outcome, SourceOutcome::Appended((lines.len() - half) as u64));
    let fresh = Store::open_in_memory().unwrap().import_file(&path, None, &Options::default()).unwrap();
    let view = |blocks: Vec<Block>| -> Vec<(Actor, Kind, String)> { blocks.into_iter().map(|b| (b.actor, b.kind, b.content)).collect() };
    assert_eq!(view(grown.session.blocks().unwrap()), view(fresh.blocks().unwrap()), "appended = imported whole");
    let export = grown.session.to_native(Runtime::QwenCode, &Options::default()).unwrap();
    let written: Vec<String> = export.as_array().unwrap().iter().map(|r| r.to_string()).collect();
    assert_eq!(written, lines);
    assert_eq!(store.sessions().unwrap().len(), 1);
}

#[test]
fn malformed_lines_say_where() {
    let good = std::fs::read_to_string(chat("basic")).unwrap();
    let mut lines: Vec<String> = good.lines().map(str::to_string).collect();
    let mut record: Value = serde_json::from_str(&lines[0]).unwrap();
    record["message"]["parts"] = json!("not a list");
    lines[0] = record.to_string();
    lines.insert(1, "{not json".into());
    let text = lines.join("\n") + "\n";
    let store = Store::open_in_memory().unwrap();
    let err = store.import_native(Runtime::QwenCode, Source::Text(text.clone()), &Options { strict: true, ..Options::default() }).unwrap_err();
    assert_eq!(err.code(), "INVALID_INPUT");
    let location = err.location().unwrap();
    assert_eq!((location.line, location.field.as_deref()), (Some(1), Some("message.parts")), "{err}");
    let session = store.import_native(Runtime::QwenCode, Source::Text(text), &Options::default()).unwrap();
    let errors: Vec<Block> = session.blocks().unwrap().into_iter().filter(|b| b.kind == Kind::Error).collect();
    assert_eq!(errors.len(), 2, "the bad record and the line that is not JSON are kept as errors");
}
