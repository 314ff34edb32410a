//! Gemini CLI adapter: lossless round trips of the real session logs, the loader's rules (last
//! version wins, `$set.messages`, `$rewindTo`), tool calls stored twice read as one, the legacy
//! single-JSON file, logs for sessions from elsewhere, the `contents` a resume sends, malformed input
//! and resume files.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use sna_history::{Actor, Block, Embed, Kind, NewSession, Options, Reasoning, ReportAction, ResumeOptions, Runtime, Scope, Source, Store};

fn fixture_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/gemini-cli").join(name)
}

const FIXTURES: [&str; 5] = ["basic", "image", "resume", "tool-error", "tools-thinking"];

/// The session log of a fixture.
fn log(name: &str) -> PathBuf {
    std::fs::read_dir(fixture_dir(name))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_str().unwrap().starts_with("session-"))
        .unwrap()
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
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let header: Value = serde_json::from_str(lines[0]).unwrap();
        assert_eq!(session.id(), header["sessionId"].as_str().unwrap(), "{name}: the session id is the log's");
        let export = session.export(Runtime::GeminiCli, &Options::default()).unwrap();
        assert!(export.report.is_lossless(), "{name}: {:?}", export.report);
        let records = export.data.as_array().unwrap();
        assert_eq!(records.len(), lines.len(), "{name}: line count");
        for (i, (record, line)) in records.iter().zip(&lines).enumerate() {
            assert_eq!(serde_json::to_string(record).unwrap(), *line, "{name}: line {} differs", i + 1);
        }
        // And once more through the text: the export imports to the same blocks.
        let again = store.import_native(Runtime::GeminiCli, Source::Text(sna_history::Format::Log.to_text(&export.data).unwrap()), &Options { session_id: Some(format!("{name}-again")), ..Options::default() }).unwrap();
        let said = |s: &sna_history::Session| conversation(&s.blocks().unwrap()).iter().map(|b| (b.actor, b.kind, b.content.clone())).collect::<Vec<_>>();
        assert_eq!(said(&again), said(&session), "{name}");
    }
}

#[test]
fn tool_calls_stored_twice_are_one_call_and_one_result() {
    let store = Store::open_in_memory().unwrap();
    let session = store.import_file(log("tools-thinking"), Some(Runtime::GeminiCli), &Options::default()).unwrap();
    let blocks = session.blocks().unwrap();
    let said: Vec<(Actor, Kind)> = conversation(&blocks).iter().map(|b| (b.actor, b.kind)).collect();
    assert_eq!(
        said,
        vec![
            (Actor::User, Kind::Text), // <session_context>
            (Actor::User, Kind::Text),
            (Actor::Assistant, Kind::Thinking),
            (Actor::Assistant, Kind::ToolUse),
            (Actor::User, Kind::ToolResult),
            (Actor::Assistant, Kind::Thinking),
            (Actor::Assistant, Kind::ToolUse),
            (Actor::User, Kind::ToolResult),
            (Actor::Assistant, Kind::Thinking),
            (Actor::Assistant, Kind::Text),
        ]
    );
    let conv = conversation(&blocks);
    assert!(sna_history::native::is_harness(conv[0], Runtime::GeminiCli), "the session context is the CLI's own");
    let call = conv[3];
    assert_eq!(call.tool.as_ref().unwrap().name.as_deref(), Some("read_file"));
    assert_eq!(call.tool.as_ref().unwrap().call_id, "read_file__read_file_1796395724636_0");
    assert_eq!(serde_json::from_str::<Value>(&call.content).unwrap(), json!({"file_path": "notes.txt"}));
    assert_eq!((call.provider.as_deref(), call.model_provider.as_deref(), call.model.as_deref()), (Some("gemini-cli"), Some("google"), Some("gemini-3.1-pro-preview")));
    assert_eq!(conv[4].tool.as_ref().unwrap().call_id, call.tool.as_ref().unwrap().call_id);
    assert_eq!(conv[4].content, "hello from notes\n");
    assert_eq!(conv[2].content, "The user wants notes.txt first. I'll read it with read_file.");
    assert!(conv[2].reasoning.is_none(), "the CLI never stores its signatures");
    let info = session.info().unwrap();
    assert_eq!(info.title.as_deref(), Some("Read notes.txt, then list the project files with ls, and tell me what you found."));
    assert_eq!(info.cwd.as_deref(), Some("/home/dev/project"), "the workspace the session context names");
}

#[test]
fn a_failed_shell_command_is_not_an_error_and_images_are_embeds() {
    let store = Store::open_in_memory().unwrap();
    let session = store.import_file(log("tool-error"), None, &Options::default()).unwrap();
    let blocks = session.blocks().unwrap();
    let results: Vec<&Block> = blocks.iter().filter(|b| b.kind == Kind::ToolResult).collect();
    assert!(!results.is_empty());
    assert!(results.iter().any(|r| r.content.contains("Exit Code: 1")), "{:?}", results.iter().map(|r| &r.content).collect::<Vec<_>>());
    assert!(results.iter().all(|r| r.tool.as_ref().unwrap().is_error == Some(false)), "a non-zero exit is not a tool error");

    let session = store.import_file(log("image"), None, &Options::default()).unwrap();
    let blocks = session.blocks().unwrap();
    let image = blocks.iter().find(|b| !b.embeds.is_empty()).expect("an image block");
    let (embed_id, embed) = image.embeds.iter().next().unwrap();
    assert_eq!(embed.mime, "image/png");
    let bytes = session.embed(embed_id).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
}

/// A log from the loader's edge cases: a message re-appended after a later one, `$set.messages`,
/// `$rewindTo`, an info record and an unknown record.
fn edited_log() -> String {
    [
        json!({"sessionId": "11111111-2222-4333-8444-555555555555", "projectHash": "h", "startTime": "2026-12-04T15:00:00.000Z", "lastUpdated": "2026-12-04T15:00:00.000Z", "kind": "main"}),
        json!({"id": "u1", "timestamp": "2026-12-04T15:00:01.000Z", "type": "user", "content": [{"text": "first question"}]}),
        json!({"id": "g1", "timestamp": "2026-12-04T15:00:02.000Z", "type": "gemini", "content": "draft answer", "model": "gemini-3.8-flash"}),
        json!({"id": "u2", "timestamp": "2026-12-04T15:00:03.000Z", "type": "user", "content": [{"text": "second question"}]}),
        json!({"id": "g1", "timestamp": "2026-12-04T15:00:02.000Z", "type": "gemini", "content": "final answer", "model": "gemini-3.8-flash"}),
        json!({"id": "g2", "timestamp": "2026-12-04T15:00:04.000Z", "type": "gemini", "content": "answer two", "model": "gemini-3.8-flash"}),
        json!({"$rewindTo": "u2"}),
        json!({"id": "i1", "timestamp": "2026-12-04T15:00:05.000Z", "type": "info", "content": "Imported session"}),
        json!({"something": "new"}),
        json!({"id": "u3", "timestamp": "2026-12-04T15:00:06.000Z", "type": "user", "content": "third question"}),
    ]
    .iter()
    .map(|v| v.to_string() + "\n")
    .collect()
}

#[test]
fn the_log_loads_as_the_cli_loads_it() {
    let store = Store::open_in_memory().unwrap();
    let session = store.import_native(Runtime::GeminiCli, Source::Text(edited_log()), &Options::default()).unwrap();
    let blocks = session.blocks().unwrap();
    let said: Vec<(Actor, Kind, &str)> = blocks.iter().filter(|b| b.kind != Kind::Status || b.actor != Actor::System || b.native.as_ref().unwrap().data.get("record").and_then(|r| r.get("type")) == Some(&json!("info"))).map(|b| (b.actor, b.kind, b.content.as_str())).collect();
    assert_eq!(
        said,
        vec![
            (Actor::User, Kind::Text, "first question"),
            (Actor::Assistant, Kind::Text, "final answer"),
            (Actor::System, Kind::Status, "Imported session"),
            (Actor::User, Kind::Text, "third question"),
        ],
        "the last version of g1 in its first place; u2 and g2 rewound"
    );
    let export = session.export(Runtime::GeminiCli, &Options::default()).unwrap();
    let lines: Vec<String> = export.data.as_array().unwrap().iter().map(|r| r.to_string() + "\n").collect();
    assert_eq!(lines.concat(), edited_log(), "every line comes back in its place");
    // Into another runtime only the conversation goes.
    let claude = session.to_native(Runtime::ClaudeCode, &Options::default()).unwrap();
    let text = claude.to_string();
    assert!(text.contains("final answer") && text.contains("third question"));
    assert!(!text.contains("draft answer") && !text.contains("second question") && !text.contains("answer two"));
}

#[test]
fn a_rewind_to_nothing_and_a_list_without_ids_are_errors_that_say_so() {
    let bad = [
        json!({"sessionId": "11111111-2222-4333-8444-555555555555", "projectHash": "h"}).to_string(),
        json!({"id": "u1", "timestamp": "2026-12-04T15:00:01.000Z", "type": "user", "content": "hi"}).to_string(),
        json!({"$rewindTo": "nowhere"}).to_string(),
        json!({"$set": {"messages": [{"type": "user", "content": "x"}]}}).to_string(),
        "{not json".to_string(),
    ]
    .join("\n");
    let store = Store::open_in_memory().unwrap();
    let err = store.import_native(Runtime::GeminiCli, Source::Text(bad.clone()), &Options { strict: true, ..Options::default() }).unwrap_err();
    assert_eq!(err.code(), "INVALID_INPUT");
    assert_eq!(err.location().unwrap().line, Some(4), "{err}");
    assert!(err.to_string().contains("refers to nothing"), "{err}");
    let session = store.import_native(Runtime::GeminiCli, Source::Text(bad), &Options::default()).unwrap();
    let errors: Vec<Block> = session.blocks().unwrap().into_iter().filter(|b| b.kind == Kind::Error).collect();
    assert_eq!(errors.len(), 3, "{errors:?}");
    assert!(errors.iter().any(|b| b.native.as_ref().unwrap().data["malformed"]["reason"].as_str().unwrap().contains("\"$rewindTo\" names the message \"nowhere\"")));
    let report = session.import_report().unwrap();
    assert_eq!(report.entries.iter().filter(|e| e.action == ReportAction::Malformed).count(), 3, "{report:?}");
    // The conversation is still there.
    assert!(session.blocks().unwrap().iter().any(|b| b.content == "hi" && b.actor == Actor::User));
}

#[test]
fn detection_tells_gemini_logs_from_claude_transcripts() {
    let store = Store::open_in_memory().unwrap();
    let session = store.import_file(log("basic"), None, &Options::default()).unwrap();
    assert_eq!(session.blocks().unwrap().iter().filter(|b| b.kind == Kind::Error).count(), 0);
    assert_eq!(sna_history::native::detect_runtime(&log("basic")).unwrap(), Some(Runtime::GeminiCli));
    // A Gemini log named as a Claude Code transcript is refused, naming what it is.
    let err = store.import_native(Runtime::ClaudeCode, Source::Path(log("basic")), &Options::default()).unwrap_err();
    assert!(err.to_string().contains("Gemini CLI"), "{err}");
}

#[test]
fn a_legacy_single_json_file_is_read() {
    let document = json!({
        "sessionId": "22222222-2222-4333-8444-555555555555", "projectHash": "h", "startTime": "2026-12-04T15:00:00.000Z", "lastUpdated": "2026-12-04T15:00:00.000Z",
        "messages": [
            {"id": "u1", "timestamp": "2026-12-04T15:00:01.000Z", "type": "user", "content": [{"text": "legacy question"}]},
            {"id": "g1", "timestamp": "2026-12-04T15:00:02.000Z", "type": "gemini", "content": "legacy answer", "model": "gemini-2.5-pro"}
        ]
    });
    let dir = tempdir();
    let path = dir.join("session-legacy.json");
    std::fs::write(&path, serde_json::to_string_pretty(&document).unwrap()).unwrap();
    let store = Store::open_in_memory().unwrap();
    let session = store.import_file(&path, None, &Options::default()).unwrap();
    assert_eq!(session.id(), "22222222-2222-4333-8444-555555555555");
    let conv: Vec<(Actor, String)> = conversation(&session.blocks().unwrap()).iter().map(|b| (b.actor, b.content.clone())).collect();
    assert_eq!(conv, vec![(Actor::User, "legacy question".to_string()), (Actor::Assistant, "legacy answer".to_string())]);
    let export = session.to_native(Runtime::GeminiCli, &Options::default()).unwrap();
    assert_eq!(export, json!([document]), "the document comes back as one record");
}

fn tempdir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sna-gemini-test-{}", uuid_like()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn uuid_like() -> String {
    use std::time::{SystemTime, UNIX_EPOCH};
    format!("{}-{}", std::process::id(), SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos())
}

/// A session made through the API: a prompt with an image, thinking signed for Gemini, a tool
/// call signed for Gemini and its result, an unsigned call without result, a final answer.
fn api_session(store: &Store) -> sna_history::Session {
    let session = store.create_session(NewSession::new().id("api-gemini").cwd("/home/dev/project")).unwrap();
    let png = b"\x89PNG\r\n\x1a\nfake".to_vec();
    let embed = Embed::from_bytes("image/png", None, png);
    let mut user = Block::text(Actor::User, "What is in this picture? ![pic](embed://pic-1)");
    user.embeds.insert("pic-1".into(), embed);
    let scope = Scope { provider: Some("gemini-cli".into()), model_provider: Some("google".into()), model: Some("gemini-3.8-flash".into()) };
    let sig = |data: &str| Some(Reasoning { format: Reasoning::GOOGLE_THOUGHT_SIGNATURE.into(), data: data.into(), scope: scope.clone() });
    let attr = |b: Block| b.attributed("gemini-cli", "google", "gemini-3.8-flash");
    let mut thinking = attr(Block::new(Actor::Assistant, Kind::Thinking, "look at the file"));
    thinking.reasoning = sig("U0lHLVRIT1VHSFQ=");
    thinking.message_id = Some("m1".into());
    let mut call = attr(Block::tool_use("call_1", "read_file", r#"{"file_path":"notes.txt"}"#));
    call.reasoning = sig("U0lHLUNBTEw=");
    call.message_id = Some("m1".into());
    let mut second = attr(Block::tool_use("call_2", "run_shell_command", r#"{"command":"ls"}"#));
    second.message_id = Some("m1".into());
    let result = Block::tool_result("call_1", "hello from notes\n", false);
    let mut answer = attr(Block::text(Actor::Assistant, "A picture and a note."));
    answer.message_id = Some("m2".into());
    session.extend(vec![user, thinking, call, second, result, answer]).unwrap();
    session
}

#[test]
fn a_session_from_elsewhere_becomes_a_log_the_cli_resumes() {
    let store = Store::open_in_memory().unwrap();
    let session = api_session(&store);
    let export = session.export(Runtime::GeminiCli, &Options::default()).unwrap();
    let records = export.data.as_array().unwrap();
    assert_eq!(records[0]["projectHash"], json!(sna_history::model::sha256_hex(b"/home/dev/project")));
    let types: Vec<&str> = records[1..].iter().map(|r| r["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["user", "gemini", "user", "gemini"]);
    let user = &records[1]["content"];
    assert_eq!(user[0], json!({"text": "What is in this picture? "}));
    assert_eq!(user[1]["inlineData"]["mimeType"], "image/png");
    let model = &records[2];
    assert!(model.get("toolCalls").is_none(), "no toolCalls: the CLI would send each result twice");
    assert_eq!(model["content"][0], json!({"text": "look at the file", "thought": true, "thoughtSignature": "U0lHLVRIT1VHSFQ="}));
    assert_eq!(model["content"][1], json!({"functionCall": {"id": "call_1", "name": "read_file", "args": {"file_path": "notes.txt"}}, "thoughtSignature": "U0lHLUNBTEw="}));
    assert_eq!(model["content"][2]["thoughtSignature"], "skip_thought_signature_validator", "an unknown signature gets the placeholder");
    let results = &records[3]["content"];
    assert_eq!(results[0], json!({"functionResponse": {"id": "call_1", "name": "read_file", "response": {"output": "hello from notes\n"}}}));
    assert!(results[1]["functionResponse"]["response"]["error"].is_string(), "the unanswered call gets an error result");
    assert!(export.report.entries.iter().any(|e| e.action == ReportAction::Synthesized));
    // What the resume sends: the contents the CLI builds from this log.
    let contents = session.to_native(Runtime::GeminiCli, &Options { format: Some("contents".into()), ..Options::default() }).unwrap();
    let turns = contents["contents"].as_array().unwrap();
    assert_eq!(turns.iter().map(|t| t["role"].as_str().unwrap()).collect::<Vec<_>>(), ["user", "model", "user", "model"]);
    assert!(turns[1]["parts"].as_array().unwrap().iter().all(|p| p.get("thought").is_none()), "thought parts are not sent");
    // The log imports back to the same conversation.
    let back = store.import_native(Runtime::GeminiCli, Source::Value(export.data.clone()), &Options { session_id: Some("back".into()), ..Options::default() }).unwrap();
    let blocks = back.blocks().unwrap();
    let signed: Vec<&str> = blocks.iter().filter_map(|b| b.reasoning.as_ref()).map(|r| r.data.as_str()).collect();
    assert_eq!(signed, ["U0lHLVRIT1VHSFQ=", "U0lHLUNBTEw=", "skip_thought_signature_validator"]);
    assert_eq!(blocks.iter().filter(|b| b.kind == Kind::ToolResult).count(), 2);
}

#[test]
fn other_vendors_reasoning_is_not_written_as_a_signature() {
    let store = Store::open_in_memory().unwrap();
    let session = store.create_session(NewSession::new().id("from-claude")).unwrap();
    let mut thinking = Block::new(Actor::Assistant, Kind::Thinking, "claude thinks").attributed("claude-code", "anthropic", "claude-opus-5-5");
    thinking.reasoning = Some(Reasoning { format: Reasoning::ANTHROPIC_SIGNATURE.into(), data: "EqQB".into(), scope: Scope { provider: Some("claude-code".into()), model_provider: Some("anthropic".into()), model: Some("claude-opus-5-5".into()) } });
    session.extend(vec![Block::text(Actor::User, "hi"), thinking, Block::text(Actor::Assistant, "hello").attributed("claude-code", "anthropic", "claude-opus-5-5")]).unwrap();
    let export = session.export(Runtime::GeminiCli, &Options::default()).unwrap();
    assert!(!export.data.to_string().contains("EqQB"));
    assert!(export.report.entries.iter().any(|e| e.action == ReportAction::Dropped && e.message.contains("anthropic-signature")));
}

#[test]
fn resume_files_go_where_the_cli_finds_them() {
    let store = Store::open_in_memory().unwrap();
    let session = api_session(&store);
    let home = tempdir();
    let cwd = home.join("work").join("My Project");
    std::fs::create_dir_all(&cwd).unwrap();
    // Without cleanup turned off, the log stays in sna-history's directory and goes in by --session-file.
    let options = ResumeOptions { home: Some(home.clone()), cwd: Some(cwd.clone()), ..ResumeOptions::default() };
    let plan = session.prepare_resume(Runtime::GeminiCli, &options).unwrap();
    assert_eq!(plan.argv[1], "--session-file");
    assert!(plan.notes[0].contains("sessionRetention.enabled: false"), "the plan says why: {:?}", plan.notes);
    assert!(plan.files[0].starts_with(home.join(".local/share/sna-history/gemini-cli")));
    assert!(!home.join(".gemini").exists(), "nothing of the CLI's was touched");
    // With cleanup off, --resume of a log in the project's chats directory, the project registered.
    std::fs::create_dir_all(home.join(".gemini")).unwrap();
    let settings = r#"{"general":{"sessionRetention":{"enabled":false}}}"#;
    std::fs::write(home.join(".gemini/settings.json"), settings).unwrap();
    let plan = session.prepare_resume(Runtime::GeminiCli, &options).unwrap();
    assert_eq!(plan.argv[1..], ["--resume".to_string(), plan.session_id.clone()]);
    let file = &plan.files[0];
    assert!(file.starts_with(home.join(".gemini/tmp/my-project/chats")), "{}", file.display());
    let name = file.file_name().unwrap().to_str().unwrap();
    assert!(name.starts_with("session-") && name.ends_with(&format!("-{}.jsonl", &plan.session_id[..8])), "{name}");
    let root = cwd.to_str().unwrap();
    let projects: Value = serde_json::from_str(&std::fs::read_to_string(home.join(".gemini/projects.json")).unwrap()).unwrap();
    assert_eq!(projects["projects"][root], "my-project");
    assert_eq!(std::fs::read_to_string(home.join(".gemini/tmp/my-project/.project_root")).unwrap(), root);
    assert_eq!(std::fs::read_to_string(home.join(".gemini/settings.json")).unwrap(), settings, "the settings file is never written");
    let header: Value = serde_json::from_str(std::fs::read_to_string(file).unwrap().lines().next().unwrap()).unwrap();
    assert_eq!(header["projectHash"], json!(sna_history::model::sha256_hex(root.as_bytes())));
    // A second resume replaces the first file rather than leaving two logs of one session.
    let again = session.prepare_resume(Runtime::GeminiCli, &options).unwrap();
    let logs = std::fs::read_dir(file.parent().unwrap()).unwrap().count();
    assert_eq!((again.files[0].clone(), logs), (file.clone(), 1));
    std::fs::remove_dir_all(&home).unwrap();
}

/// Found by the chaos campaign: a message the host stored without a record of the CLI's (an
/// interrupted turn) went after the kept lines that followed it, and the lines of the log the CLI
/// wrote after a resume were sorted in among those of the log before it (their line numbers start
/// again). Both now come back in the store's order.
#[test]
fn kept_lines_of_two_logs_and_a_message_without_one_keep_the_store_order() {
    let dir = tempdir();
    let store = Store::open_in_memory().unwrap();
    let mut logs = Vec::new();
    for (n, name) in ["first", "second"].iter().enumerate() {
        let id = format!("3333333{n}-2222-4333-8444-555555555555");
        let lines = [
            json!({"sessionId": id, "projectHash": "h", "startTime": "2026-12-04T15:00:00.000Z", "lastUpdated": "2026-12-04T15:00:00.000Z", "kind": "main"}),
            json!({"id": format!("u{n}"), "timestamp": "2026-12-04T15:00:01.000Z", "type": "user", "content": [{"text": format!("{name} question")}]}),
            json!({"id": format!("g{n}"), "timestamp": "2026-12-04T15:00:02.000Z", "type": "gemini", "content": format!("{name} answer"), "model": "gemini-2.5-pro"}),
        ];
        let path = dir.join(format!("session-{name}.jsonl"));
        std::fs::write(&path, lines.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
        logs.push(store.import_file(&path, None, &Options::default()).unwrap().blocks().unwrap());
    }
    let session = store.create_session(NewSession::new().id("mixed")).unwrap();
    session.append(Block::text(Actor::User, "interrupted question")).unwrap();
    for blocks in &logs {
        for block in blocks.iter().filter(|b| b.kind == Kind::Text) {
            let mut copy = Block::new(block.actor, block.kind, block.content.clone());
            copy.native = block.native.clone();
            session.append(copy).unwrap();
        }
    }
    let export = session.to_native(Runtime::GeminiCli, &Options::default()).unwrap();
    let said: Vec<String> = export
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| match r["type"].as_str() {
            Some("user") => r["content"][0]["text"].as_str().map(str::to_string),
            Some("gemini") => r["content"].as_str().map(str::to_string),
            _ => None,
        })
        .collect();
    assert_eq!(said, ["interrupted question", "first question", "first answer", "second question", "second answer"]);
}
