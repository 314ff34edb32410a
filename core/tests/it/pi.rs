//! Pi adapter: lossless round trips of the session files Pi 0.73.1 wrote, the active branch of a
//! tree, the writer recipe for sessions built through the API, malformed input, cross-runtime
//! exports and resume files.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use sna_history::native::detect_runtime;
use sna_history::native::pi::session_dir_name;
use sna_history::{
    Actor, Block, Embed, Kind, NewSession, Options, Reasoning, ReportAction, ResumeOptions, Runtime, Scope, Source, SourceOutcome, Store,
};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/pi")
}

/// Every fixture session file: (scenario name, path).
fn sessions() -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(fixtures()).unwrap() {
        let dir = entry.unwrap().path();
        for file in std::fs::read_dir(&dir).unwrap() {
            let file = file.unwrap().path();
            let name = file.file_name().unwrap().to_str().unwrap().to_string();
            if name.ends_with(".jsonl") && name != "events.jsonl" && name != "requests.jsonl" {
                out.push((dir.file_name().unwrap().to_str().unwrap().to_string(), file));
            }
        }
    }
    out.sort();
    assert_eq!(out.len(), 6, "fixtures missing: {out:?}");
    out
}

fn session_file(name: &str) -> PathBuf {
    sessions().into_iter().find(|(n, _)| n == name).unwrap().1
}

fn options(value: Value) -> Options {
    Options::from_value(value).unwrap()
}

/// The lines of an export, as text.
fn export_lines(data: &Value) -> Vec<String> {
    data.as_array().unwrap().iter().map(|r| serde_json::to_string(r).unwrap()).collect()
}

fn conversation(blocks: &[Block]) -> Vec<&Block> {
    blocks.iter().filter(|b| !matches!(b.kind, Kind::Status | Kind::Error)).collect()
}

#[test]
fn every_fixture_round_trips_line_for_line() {
    for (name, path) in sessions() {
        assert_eq!(detect_runtime(&path).unwrap(), Some(Runtime::Pi), "{name}: detected");
        let store = Store::open_in_memory().unwrap();
        let session = store.import_file(&path, None, &Options::default()).unwrap();
        let header: Value = serde_json::from_str(std::fs::read_to_string(&path).unwrap().lines().next().unwrap()).unwrap();
        assert_eq!(session.id(), header["id"].as_str().unwrap(), "{name}: session id is the header's");
        assert_eq!(session.info().unwrap().cwd.as_deref(), Some("/home/dev/project"));
        assert!(session.import_report().unwrap().is_lossless(), "{name}");
        let export = session.export(Runtime::Pi, &Options::default()).unwrap();
        assert!(export.report.is_lossless(), "{name}: {:?}", export.report);
        let text = std::fs::read_to_string(&path).unwrap();
        let original: Vec<&str> = text.lines().collect();
        assert_eq!(export_lines(&export.data), original, "{name}: byte for byte, line for line");
        // Exporting twice gives the same lines.
        assert_eq!(session.to_native(Runtime::Pi, &Options::default()).unwrap(), export.data);
    }
}

#[test]
fn imported_blocks_say_what_the_file_says() {
    let store = Store::open_in_memory().unwrap();
    let session = store.import_file(session_file("tools-thinking"), Some(Runtime::Pi), &Options::default()).unwrap();
    let blocks = session.blocks().unwrap();
    // Header, model change, thinking level: status blocks keeping the whole line, in place.
    assert_eq!(blocks[0].native.as_ref().unwrap().data["record"]["type"], "session");
    assert_eq!(blocks[1].content, "model: mockant/mock-claude");
    assert_eq!(blocks[2].content, "thinking level: high");
    assert!(blocks[..3].iter().all(|b| (b.actor, b.kind) == (Actor::System, Kind::Status)));
    let talk = conversation(&blocks);
    let kinds: Vec<(Actor, Kind)> = talk.iter().map(|b| (b.actor, b.kind)).collect();
    assert_eq!(
        kinds,
        [
            (Actor::User, Kind::Text),
            (Actor::Assistant, Kind::Thinking),
            (Actor::Assistant, Kind::ToolUse),
            (Actor::User, Kind::ToolResult),
            (Actor::Assistant, Kind::Thinking),
            (Actor::Assistant, Kind::Text),
            (Actor::Assistant, Kind::ToolUse),
            (Actor::User, Kind::ToolResult),
            (Actor::Assistant, Kind::Text),
        ]
    );
    let thinking = talk[1];
    assert_eq!(thinking.content, "The user wants notes.txt first. I'll use the read tool.");
    let reasoning = thinking.reasoning.as_ref().unwrap();
    assert_eq!(reasoning.format, Reasoning::ANTHROPIC_SIGNATURE);
    assert_eq!(reasoning.data, "bW9jay1zaWduYXR1cmU6cHQxOm1vY2stc2lnbmF0dXJlOnB0MTptb2NrLXNpZ25hdHVyZTpwdDE6");
    assert_eq!(reasoning.scope, Scope { provider: Some("pi".into()), model_provider: Some("anthropic".into()), model: Some("mock-claude".into()) });
    // `mockant` names no vendor: the `api` (anthropic-messages) decides.
    assert_eq!((thinking.provider.as_deref(), thinking.model_provider.as_deref(), thinking.model.as_deref()), (Some("pi"), Some("anthropic"), Some("mock-claude")));
    assert_eq!(thinking.message_id.as_deref(), Some("897c123c"), "the entry id groups a message's blocks");
    assert_eq!(talk[2].message_id, thinking.message_id);
    let call = talk[2].tool.as_ref().unwrap();
    assert_eq!((call.call_id.as_str(), call.name.as_deref()), ("toolu_01PiRead00000000000000001", Some("read")));
    assert_eq!(serde_json::from_str::<Value>(&talk[2].content).unwrap(), json!({"path": "notes.txt"}));
    let result = talk[3];
    assert_eq!(result.tool.as_ref().unwrap().call_id, call.call_id);
    assert_eq!(result.tool.as_ref().unwrap().is_error, Some(false));
    assert_eq!(result.content, "hello from notes\n");
    assert!(talk[0].provider.is_none() && result.provider.is_none(), "user-side blocks carry no model attribution");
    assert_eq!(talk[5].content, "Listing the files now.");
    let info = session.info().unwrap();
    assert_eq!(info.title.as_deref(), Some("Read notes.txt, then list the project files with ls, and tell me what you found."));
    assert_eq!(session.switches().unwrap().len(), 1);

    // A failing command: the result says so.
    let session = store.import_file(session_file("tool-error"), None, &Options::default()).unwrap();
    let blocks = session.blocks().unwrap();
    let result = blocks.iter().find(|b| b.kind == Kind::ToolResult).unwrap();
    assert_eq!(result.tool.as_ref().unwrap().is_error, Some(true));
    assert!(result.content.ends_with("Command exited with code 1"), "{}", result.content);

    // The image is an embed with the file's bytes.
    let session = store.import_file(session_file("image"), None, &Options::default()).unwrap();
    let blocks = session.blocks().unwrap();
    let image = blocks.iter().find(|b| !b.embeds.is_empty()).unwrap();
    assert_eq!(image.actor, Actor::User);
    let (id, embed) = image.embeds.iter().next().unwrap();
    assert_eq!(embed.mime, "image/png");
    assert_eq!(image.content, format!("![image](embed://{id})"));
    let bytes = session.embed(id).unwrap();
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "the PNG signature");
    assert_eq!(bytes.len() as u64, embed.size);
    let text = std::fs::read_to_string(session_file("image")).unwrap();
    let line: Value = serde_json::from_str(text.lines().nth(3).unwrap()).unwrap();
    use base64::Engine as _;
    let data = line["message"]["content"][1]["data"].as_str().unwrap();
    assert_eq!(bytes, base64::engine::general_purpose::STANDARD.decode(data).unwrap());
}

#[test]
fn a_file_that_grew_is_imported_by_its_new_lines() {
    let original = session_file("resume");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(original.file_name().unwrap());
    let text = std::fs::read_to_string(&original).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // The first run ended after line 5; the resumed run appended the last two.
    std::fs::write(&path, lines[..5].iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
    let store = Store::open(dir.path().join("h.db")).unwrap();
    let first = store.import_source(&path, None, &Options::default()).unwrap();
    assert_eq!(first.outcome, SourceOutcome::Imported);
    assert_eq!(store.import_source(&path, None, &Options::default()).unwrap().outcome, SourceOutcome::Unchanged);
    let count = first.session.len().unwrap();
    std::fs::write(&path, &text).unwrap();
    let grown = store.import_source(&path, None, &Options::default()).unwrap();
    assert_eq!(grown.outcome, SourceOutcome::Appended(2));
    assert_eq!(grown.session.len().unwrap(), count + 2);
    let fresh = Store::open_in_memory().unwrap().import_file(&path, None, &Options::default()).unwrap();
    let view = |blocks: Vec<Block>| -> Vec<(Actor, Kind, String)> { blocks.into_iter().map(|b| (b.actor, b.kind, b.content)).collect() };
    assert_eq!(view(grown.session.blocks().unwrap()), view(fresh.blocks().unwrap()), "appended = imported whole");
    assert_eq!(export_lines(&grown.session.to_native(Runtime::Pi, &Options::default()).unwrap()), lines);
    assert_eq!(store.sessions().unwrap().len(), 1);
}

/// The tools-thinking file with a branch: back at the thinking-level entry the user asked
/// something else (a new child of `47b49327`), a label on the old user message, and the answer.
/// Everything from the first question on is now off the active branch.
fn branched_text() -> String {
    let mut text = std::fs::read_to_string(session_file("tools-thinking")).unwrap();
    text.push_str(r#"{"type":"label","id":"1abe1000","parentId":"da6ea32c","timestamp":"2026-12-04T14:52:10.000Z","targetId":"cb9e9238","label":"first try"}"#);
    text.push('\n');
    text.push_str(r#"{"type":"message","id":"f0f0f0f0","parentId":"47b49327","timestamp":"2026-12-04T14:52:11.000Z","message":{"role":"user","content":[{"type":"text","text":"Just say hi instead."}],"timestamp":1796395931000}}"#);
    text.push('\n');
    text.push_str(r#"{"type":"message","id":"f1f1f1f1","parentId":"f0f0f0f0","timestamp":"2026-12-04T14:52:12.000Z","message":{"role":"assistant","content":[{"type":"text","text":"Hi."}],"api":"anthropic-messages","provider":"mockant","model":"mock-claude","usage":{"input":11,"output":7,"cacheRead":0,"cacheWrite":0,"totalTokens":18,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1796395932000,"responseId":"msg_mock0009"}}"#);
    text.push('\n');
    text
}

#[test]
fn only_the_active_branch_is_conversation() {
    let text = branched_text();
    let store = Store::open_in_memory().unwrap();
    let session = store.import_native(Runtime::Pi, Source::Text(text.clone()), &Options::default()).unwrap();
    let blocks = session.blocks().unwrap();
    let talk: Vec<(Actor, Kind, &str)> = conversation(&blocks).iter().map(|b| (b.actor, b.kind, b.content.as_str())).collect();
    assert_eq!(talk, [(Actor::User, Kind::Text, "Just say hi instead."), (Actor::Assistant, Kind::Text, "Hi.")]);
    // The old branch is kept, marked, as status blocks holding the whole entries.
    let off: Vec<&Block> = blocks.iter().filter(|b| b.native.as_ref().is_some_and(|n| n.data["branch"] == "off")).collect();
    assert_eq!(off.len(), 6);
    assert!(off[0].content.starts_with("off the active branch: user message Read notes.txt"), "{}", off[0].content);
    assert_eq!(off[1].native.as_ref().unwrap().data["record"]["message"]["content"][0]["thinkingSignature"].as_str().map(str::len), Some(76));
    assert_eq!(session.info().unwrap().title.as_deref(), Some("Just say hi instead."));

    // Back to Pi: the same file, byte for byte.
    let export = session.export(Runtime::Pi, &Options::default()).unwrap();
    assert!(export.report.is_lossless(), "{:?}", export.report);
    assert_eq!(export_lines(&export.data), text.lines().collect::<Vec<_>>());

    // To Claude Code: the active branch only.
    let records = session.to_native(Runtime::ClaudeCode, &Options::default()).unwrap();
    let said = records.to_string();
    assert!(said.contains("Just say hi instead.") && said.contains("\"Hi.\""));
    assert!(!said.contains("notes.txt") && !said.contains("bW9jay1zaWduYXR1cmU6"), "nothing of the old branch: {said}");
    let messages = session.to_native(Runtime::ClaudeCode, &options(json!({"format": "messages"}))).unwrap();
    assert_eq!(messages["messages"].as_array().unwrap().len(), 2);
    let items = session.to_native(Runtime::Codex, &Options::default()).unwrap();
    assert!(!items.to_string().contains("notes.txt"));
}

/// A session built through the API: user text and an image, thinking signed by model X, a call
/// and its result, then the answer.
fn api_session(store: &Store) -> sna_history::Session {
    let session = store.create_session(NewSession::new().id("0193c5a0-0000-7000-8000-0000000000a1").cwd("/home/dev/project")).unwrap();
    let model = "claude-opus-5-5";
    let png = {
        let mut p = vec![0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a];
        p.extend_from_slice(&[7u8; 24]);
        p
    };
    let mut user = Block::text(Actor::User, "What is in this picture? ![shot](embed://shot)");
    user.embeds.insert("shot".into(), Embed::from_bytes("image/png", Some("shot.png".into()), png));
    let mut thinking = Block::new(Actor::Assistant, Kind::Thinking, "Let me look.").attributed("host", "anthropic", model);
    thinking.reasoning = Some(Reasoning {
        format: Reasoning::ANTHROPIC_SIGNATURE.into(),
        data: "c2lnLTE=".into(),
        scope: Scope { provider: Some("host".into()), model_provider: Some("anthropic".into()), model: Some(model.into()) },
    });
    thinking.message_id = Some("m1".into());
    let mut call = Block::tool_use("call-1", "Bash", r#"{"command":"ls"}"#).attributed("host", "anthropic", model);
    call.message_id = Some("m1".into());
    let blocks = vec![
        user,
        thinking,
        call,
        Block::tool_result("call-1", "notes.txt", false),
        Block::text(Actor::Assistant, "A picture; the folder holds notes.txt.").attributed("host", "anthropic", model),
    ];
    let mut t = 1_780_000_000_000;
    let blocks: Vec<Block> = blocks
        .into_iter()
        .map(|mut b| {
            b.created_at = sna_history::Timestamp::from_millis(t).unwrap();
            t += 1000;
            b
        })
        .collect();
    session.extend(blocks).unwrap();
    session
}

#[test]
fn api_sessions_follow_the_writer_recipe() {
    let store = Store::open_in_memory().unwrap();
    let session = api_session(&store);
    let export = session.export(Runtime::Pi, &options(json!({"target_model": "claude-opus-5-5", "model_provider": "mockant"}))).unwrap();
    assert!(export.report.is_lossless(), "{:?}", export.report);
    let entries = export.data.as_array().unwrap();
    assert_eq!(entries[0], json!({"type":"session","version":3,"id":"0193c5a0-0000-7000-8000-0000000000a1","timestamp":"2026-05-28T20:26:40.000Z","cwd":"/home/dev/project"}));
    let roles: Vec<&str> = entries[1..].iter().map(|e| e["message"]["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "toolResult", "assistant"]);
    let mut parent = Value::Null;
    for entry in &entries[1..] {
        assert_eq!(entry["type"], "message");
        let id = entry["id"].as_str().unwrap();
        assert!(id.len() == 8 && id.bytes().all(|b| b.is_ascii_hexdigit()), "{id}");
        assert_eq!(entry["parentId"], parent, "one linear chain");
        assert!(entry["timestamp"].as_str().unwrap().ends_with('Z'));
        assert!(entry["message"]["timestamp"].is_u64());
        parent = entry["id"].clone();
    }
    let user = &entries[1]["message"]["content"];
    assert_eq!(user[0], json!({"type": "text", "text": "What is in this picture? "}));
    assert_eq!(user[1]["type"], "image");
    assert_eq!(user[1]["mimeType"], "image/png");
    assert!(user[1]["data"].as_str().unwrap().starts_with("iVBORw0KGgo"));
    let assistant = &entries[2]["message"];
    assert_eq!(assistant["content"][0], json!({"type":"thinking","thinking":"Let me look.","thinkingSignature":"c2lnLTE="}));
    // The host's Bash is Pi's bash.
    assert_eq!(assistant["content"][1], json!({"type":"toolCall","id":"call-1","name":"bash","arguments":{"command":"ls"}}));
    assert_eq!((assistant["api"].as_str(), assistant["provider"].as_str(), assistant["model"].as_str()), (Some("anthropic-messages"), Some("mockant"), Some("claude-opus-5-5")));
    assert_eq!(assistant["stopReason"], "toolUse");
    assert_eq!(assistant["usage"]["totalTokens"], 0);
    assert_eq!(assistant["usage"]["cost"]["total"], 0);
    assert_eq!(entries[3]["message"], json!({"role":"toolResult","toolCallId":"call-1","toolName":"bash","content":[{"type":"text","text":"notes.txt"}],"isError":false,"timestamp":1_780_000_003_000_u64}));
    assert_eq!(entries[4]["message"]["stopReason"], "stop");
    assert_eq!(entries[4]["message"]["content"], json!([{"type":"text","text":"A picture; the folder holds notes.txt."}]));
    // Deterministic.
    let again = session.export(Runtime::Pi, &options(json!({"target_model": "claude-opus-5-5", "model_provider": "mockant"}))).unwrap();
    assert_eq!(export_lines(&again.data), export_lines(&export.data));

    // Read back, the file gives the conversation back.
    let back = Store::open_in_memory().unwrap().import_native(Runtime::Pi, Source::Value(export.data.clone()), &Options::default()).unwrap();
    let blocks = back.blocks().unwrap();
    let talk = conversation(&blocks);
    assert_eq!(talk.len(), 6, "text, image, thinking, call, result, answer");
    assert_eq!(talk[2].reasoning.as_ref().unwrap().data, "c2lnLTE=");
    assert_eq!(talk[3].tool.as_ref().unwrap().name.as_deref(), Some("bash"));
    assert_eq!(back.embed(talk[1].embeds.keys().next().unwrap()).unwrap(), session.embed("shot").unwrap());
    assert_eq!(export_lines(&back.to_native(Runtime::Pi, &Options::default()).unwrap()), export_lines(&export.data));

    // Another target model: the signature is not valid there.
    let other = session.export(Runtime::Pi, &options(json!({"target_model": "gpt-9"}))).unwrap();
    assert!(!other.data.to_string().contains("c2lnLTE="));
    let dropped: Vec<_> = other.report.entries.iter().filter(|e| e.action == ReportAction::Dropped).collect();
    assert_eq!(dropped.len(), 1, "{:?}", other.report);
    assert!(dropped[0].message.contains("cannot be replayed to gpt-9"), "{}", dropped[0].message);
    let text = session.export(Runtime::Pi, &options(json!({"target_model": "gpt-9", "foreign_reasoning": "text"}))).unwrap();
    assert_eq!(text.data[2]["message"]["content"][0], json!({"type": "text", "text": "[reasoning] Let me look."}));
    let err = session.export(Runtime::Pi, &options(json!({"target_model": "gpt-9", "strict": true}))).unwrap_err();
    assert_eq!(err.code(), "LOSSY");

    // A call without a result gets one, reported.
    session.append(Block::tool_use("dangling", "Bash", r#"{"command":"true"}"#).attributed("host", "anthropic", "claude-opus-5-5")).unwrap();
    let export = session.export(Runtime::Pi, &Options::default()).unwrap();
    let last = export.data.as_array().unwrap().last().unwrap();
    assert_eq!(last["message"]["isError"], true);
    assert_eq!(last["message"]["toolCallId"], "dangling");
    assert!(export.report.entries.iter().any(|e| e.action == ReportAction::Synthesized));
}

#[test]
fn malformed_lines_are_error_blocks_or_strict_errors() {
    let text = std::fs::read_to_string(session_file("basic")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut broken = String::new();
    for (i, line) in lines.iter().enumerate() {
        broken.push_str(line);
        broken.push('\n');
        if i == 2 {
            broken.push_str("{\"type\":\"message\",\"id\":\"deadbeef\",\n");
            broken.push_str("{\"type\":\"message\",\"id\":\"deadbee0\",\"parentId\":null,\"timestamp\":\"2026-12-04T14:51:46.470Z\",\"message\":{\"role\":\"user\",\"content\":7}}\n");
            broken.push_str("{\"type\":\"mystery\",\"id\":\"deadbee1\",\"parentId\":\"e10aa005\",\"timestamp\":\"2026-12-04T14:51:46.470Z\",\"x\":1}\n");
        }
    }
    let store = Store::open_in_memory().unwrap();
    let session = store.import_native(Runtime::Pi, Source::Text(broken.clone()), &Options::default()).unwrap();
    let report = session.import_report().unwrap();
    let messages: Vec<&str> = report.entries.iter().map(|e| e.message.as_str()).collect();
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(messages[0].contains("line 4") && messages[0].contains("EOF"), "{}", messages[0]);
    assert!(messages[1].contains("line 5") && messages[1].contains("message.content"), "{}", messages[1]);
    // An entry type not known today is kept.
    assert!(session.blocks().unwrap().iter().any(|b| b.kind == Kind::Status && b.content == "mystery"));
    let export = session.export(Runtime::Pi, &Options::default()).unwrap();
    assert_eq!(export.data.as_array().unwrap().len(), lines.len() + 2, "what was JSON is written back");
    assert_eq!(export.report.entries.len(), 1);
    assert_eq!(export.report.entries[0].action, ReportAction::Dropped);

    let err = store.import_native(Runtime::Pi, Source::Text(broken), &options(json!({"strict": true, "session_id": "strict"}))).unwrap_err();
    assert_eq!(err.code(), "INVALID_INPUT");
    assert_eq!(err.location().unwrap().line, Some(4), "{err}");
    assert!(matches!(store.session("strict"), Err(e) if e.code() == "NOT_FOUND"));

    // A header without its id.
    let bad_header = text.replacen("\"id\":\"01a2418a-3596-72ce-b1dd-f362a724cc59\",", "", 1);
    let session = store.import_native(Runtime::Pi, Source::Text(bad_header.clone()), &options(json!({"session_id": "bad-header"}))).unwrap();
    let report = session.import_report().unwrap();
    assert_eq!(report.entries.len(), 1);
    assert!(report.entries[0].message.contains("line 1") && report.entries[0].message.contains("\"id\""), "{:?}", report);
    let err = store.import_native(Runtime::Pi, Source::Text(bad_header), &options(json!({"strict": true}))).unwrap_err();
    assert_eq!((err.location().unwrap().line, err.location().unwrap().field.as_deref()), (Some(1), Some("id")), "{err}");
    // A resume would hand Pi a file it truncates: the header is mended first.
    let home = tempfile::tempdir().unwrap();
    let plan = session.prepare_resume(Runtime::Pi, &ResumeOptions { home: Some(home.path().into()), ..Default::default() }).unwrap();
    let written = std::fs::read_to_string(&plan.files[0]).unwrap();
    let first: Value = serde_json::from_str(written.lines().next().unwrap()).unwrap();
    assert_eq!((first["type"].as_str(), first["id"].as_str()), (Some("session"), Some("bad-header")));

    // No header at all.
    let headless: String = lines[1..].iter().map(|l| format!("{l}\n")).collect();
    let session = store.import_native(Runtime::Pi, Source::Text(headless.clone()), &options(json!({"session_id": "headless"}))).unwrap();
    assert_eq!(session.import_report().unwrap().entries.len(), 1);
    assert_eq!(conversation(&session.blocks().unwrap()).len(), 2, "the entries are read all the same");
    let export = session.export(Runtime::Pi, &Options::default()).unwrap();
    assert_eq!(export.data[0]["type"], "session");
    assert_eq!(export.data[0]["id"], "headless");
    assert_eq!(export_lines(&export.data)[1..], lines[1..]);
    assert_eq!(export.report.entries[0].action, ReportAction::Synthesized);
    let err = store.import_native(Runtime::Pi, Source::Text(headless), &options(json!({"strict": true}))).unwrap_err();
    assert_eq!(err.location().unwrap().line, Some(1), "{err}");
    assert!(err.to_string().contains("header"), "{err}");
}

#[test]
fn cut_and_damaged_files_never_panic() {
    for (name, path) in sessions() {
        let text = std::fs::read_to_string(&path).unwrap();
        let bytes = text.as_bytes();
        for cut in (0..bytes.len()).step_by(97) {
            let mut damaged = bytes[..cut].to_vec();
            damaged.extend_from_slice(b"\n");
            damaged.extend_from_slice(&bytes[cut..(cut + 200).min(bytes.len())]);
            let store = Store::open_in_memory().unwrap();
            let Ok(session) = store.import_native(Runtime::Pi, Source::Bytes(damaged.clone()), &Options::default()) else { continue };
            for runtime in [Runtime::Pi, Runtime::ClaudeCode, Runtime::Codex, Runtime::OpenCode] {
                session.export(runtime, &Options::default()).unwrap_or_else(|e| panic!("{name} cut at {cut}, {runtime}: {e}"));
            }
            if let Err(err) = store.import_native(Runtime::Pi, Source::Bytes(damaged), &options(json!({"strict": true, "session_id": "s"}))) {
                assert!(err.location().and_then(|l| l.line).is_some(), "{name} cut at {cut}: {err}");
            }
        }
    }
}

#[test]
fn other_runtimes_read_pi_sessions_and_pi_reads_theirs() {
    // Pi → Claude Code, Codex, OpenCode.
    for (name, path) in sessions() {
        let store = Store::open_in_memory().unwrap();
        let session = store.import_file(&path, None, &Options::default()).unwrap();
        for runtime in [Runtime::ClaudeCode, Runtime::Codex, Runtime::OpenCode] {
            let export = session.export(runtime, &Options::default()).unwrap_or_else(|e| panic!("{name} → {runtime}: {e}"));
            assert!(!export.data.to_string().contains("model_change"), "{name} → {runtime}: Pi bookkeeping stays home");
        }
    }
    let store = Store::open_in_memory().unwrap();
    let session = store.import_file(session_file("tools-thinking"), None, &Options::default()).unwrap();
    let records = session.to_native(Runtime::ClaudeCode, &Options::default()).unwrap();
    let said = records.to_string();
    assert!(said.contains("\"name\":\"Read\"") && said.contains("\"name\":\"Bash\""), "tools translated: {said}");
    assert!(said.contains("bW9jay1zaWduYXR1cmU6cHQxOm1vY2stc2lnbmF0dXJlOnB0MTptb2NrLXNpZ25hdHVyZTpwdDE6"), "Anthropic signature kept for Anthropic");

    // Claude Code → Pi.
    let claude = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/claude-code/tools-thinking");
    let file = std::fs::read_dir(&claude)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "jsonl") && !p.ends_with("events.jsonl") && !p.ends_with("requests.jsonl"))
        .unwrap();
    let session = store.import_file(&file, Some(Runtime::ClaudeCode), &Options::default()).unwrap();
    let export = session.export(Runtime::Pi, &Options::default()).unwrap();
    assert!(export.report.is_lossless(), "{:?}", export.report);
    let entries = export.data.as_array().unwrap();
    assert_eq!(entries[0]["type"], "session");
    assert_eq!(entries[0]["cwd"], "/home/dev/project");
    let messages: Vec<&Value> = entries[1..].iter().map(|e| &e["message"]).collect();
    let roles: Vec<&str> = messages.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "toolResult", "assistant", "toolResult", "assistant"]);
    assert_eq!(messages[1]["api"], "anthropic-messages");
    assert_eq!(messages[1]["provider"], "anthropic");
    assert_eq!(messages[1]["model"], "claude-opus-5-5");
    assert_eq!(messages[1]["content"][0]["thinkingSignature"], "bW9jay1zaWduYXR1cmU6dHQxOm1vY2stc2lnbmF0dXJlOnR0MTptb2NrLXNpZ25hdHVyZTp0dDE6");
    let call = messages[1]["content"].as_array().unwrap().iter().find(|i| i["type"] == "toolCall").unwrap();
    assert_eq!(call["name"], "bash");
    assert_eq!(messages[2]["toolCallId"], call["id"]);
    // Read back by Pi's own importer.
    let back = Store::open_in_memory().unwrap().import_native(Runtime::Pi, Source::Value(export.data.clone()), &Options::default()).unwrap();
    assert_eq!(conversation(&back.blocks().unwrap()).len(), 9);
}

#[test]
fn prepare_resume_writes_where_pi_looks() {
    let store = Store::open_in_memory().unwrap();
    let path = session_file("tools-thinking");
    let session = store.import_file(&path, None, &Options::default()).unwrap();
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join(".pi/agent/sessions").join(session_dir_name("/home/dev/project"));
    std::fs::create_dir_all(&dir).unwrap();
    let stale = dir.join("2020-01-01T00-00-00-000Z_01a2418a-39c0-7367-8255-e55e375c7852.jsonl");
    std::fs::write(&stale, "old\n").unwrap();
    let plan = session.prepare_resume(Runtime::Pi, &ResumeOptions { home: Some(home.path().into()), ..Default::default() }).unwrap();
    let file = dir.join(path.file_name().unwrap());
    assert_eq!(plan.files, std::slice::from_ref(&file));
    assert_eq!(plan.session_id, "01a2418a-39c0-7367-8255-e55e375c7852");
    assert_eq!(plan.argv, ["pi".to_string(), "--session".into(), file.display().to_string()]);
    assert_eq!(plan.cwd.as_deref(), Some(Path::new("/home/dev/project")));
    assert_eq!(plan.env.get("HOME").map(String::as_str), home.path().to_str());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), std::fs::read_to_string(&path).unwrap(), "the file as Pi wrote it");
    assert!(!stale.exists(), "the older copy of the session is replaced");

    // Another cwd, a model: the header follows, the flags name the model.
    let plan = session
        .prepare_resume(
            Runtime::Pi,
            &ResumeOptions {
                home: Some(home.path().into()),
                cwd: Some("/srv/work".into()),
                options: options(json!({"target_model": "mock-claude", "model_provider": "mockant"})),
                ..Default::default()
            },
        )
        .unwrap();
    assert!(plan.files[0].starts_with(home.path().join(".pi/agent/sessions/--srv-work--")));
    assert_eq!(&plan.argv[3..], ["--provider", "mockant", "--model", "mock-claude"]);
    let written = std::fs::read_to_string(&plan.files[0]).unwrap();
    let header: Value = serde_json::from_str(written.lines().next().unwrap()).unwrap();
    assert_eq!(header["cwd"], "/srv/work");
    assert!(written.contains("bW9jay1zaWduYXR1cmU6cHQxOm1vY2stc2lnbmF0dXJlOnB0MTptb2NrLXNpZ25hdHVyZTpwdDE6"), "same model: signatures stay");

    // A config dir (PI_CODING_AGENT_DIR) of the caller's choosing.
    let agent = home.path().join("agent");
    let plan = session.prepare_resume(Runtime::Pi, &ResumeOptions { config_dir: Some(agent.clone()), ..Default::default() }).unwrap();
    assert!(plan.files[0].starts_with(agent.join("sessions")));
    assert_eq!(plan.env.get("PI_CODING_AGENT_DIR").map(String::as_str), agent.to_str());

    // Ids that would escape the folder, and relative cwds, are refused.
    let err = session
        .prepare_resume(Runtime::Pi, &ResumeOptions { home: Some(home.path().into()), options: options(json!({"session_id": "../x"})), ..Default::default() })
        .unwrap_err();
    assert_eq!(err.code(), "INVALID_INPUT");
    let err = session.prepare_resume(Runtime::Pi, &ResumeOptions { home: Some(home.path().into()), cwd: Some("rel".into()), ..Default::default() }).unwrap_err();
    assert_eq!(err.code(), "INVALID_INPUT");

    // An API session gets a file of its own id.
    let api = api_session(&store);
    let plan = api.prepare_resume(Runtime::Pi, &ResumeOptions { home: Some(home.path().into()), ..Default::default() }).unwrap();
    let name = plan.files[0].file_name().unwrap().to_str().unwrap().to_string();
    assert_eq!(name, "2026-05-28T20-26-40-000Z_0193c5a0-0000-7000-8000-0000000000a1.jsonl");
}

#[test]
fn detection_tells_pi_from_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        detect_runtime(&path).unwrap()
    };
    let entry = r#"{"type":"message","id":"7920de4c","parentId":null,"timestamp":"2026-12-04T14:51:46.470Z","message":{"role":"user","content":"hi"}}"#;
    assert_eq!(write("entry.jsonl", &format!("{entry}\n")), Some(Runtime::Pi), "an entry without its header");
    let claude = r#"{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","timestamp":"2026-12-04T14:51:46.470Z","message":{"role":"user","content":"hi"}}"#;
    assert_eq!(write("claude.jsonl", &format!("{claude}\n")), Some(Runtime::ClaudeCode));
    let codex = r#"{"timestamp":"2026-12-04T14:51:46.470Z","type":"response_item","payload":{"type":"message","role":"user","content":[]}}"#;
    assert_eq!(write("codex.jsonl", &format!("{codex}\n")), Some(Runtime::Codex));
    let gemini = r#"{"id":"m1","timestamp":"2026-12-04T14:51:46.470Z","type":"user","content":[{"text":"hi"}]}"#;
    assert_ne!(write("gemini.jsonl", &format!("{gemini}\n")), Some(Runtime::Pi));
    // A Claude Code transcript is refused by Pi's import, naming Claude Code.
    let store = Store::open_in_memory().unwrap();
    let err = store.import_native(Runtime::Pi, Source::Text(format!("{claude}\n")), &Options::default()).unwrap_err();
    assert!(err.to_string().contains("Claude Code"), "{err}");
}

/// Entries of every kind the fixtures do not show: other APIs' signatures, redacted thinking,
/// errors, string content, images in results, shell runs, extension and bookkeeping entries.
const CRAFTED: &str = r#"{"type":"session","version":3,"id":"01a2418a-0000-7000-8000-00000000c0de","timestamp":"2026-12-04T15:00:00.000Z","cwd":"/home/dev/project"}
{"type":"model_change","id":"c0000001","parentId":null,"timestamp":"2026-12-04T15:00:00.001Z","provider":"mockoai","modelId":"mock-gpt"}
{"type":"session_info","id":"c0000002","parentId":"c0000001","timestamp":"2026-12-04T15:00:00.002Z","name":"Crafted session"}
{"type":"message","id":"c0000003","parentId":"c0000002","timestamp":"2026-12-04T15:00:01.000Z","message":{"role":"user","content":"Plain string content, é😀\ttab","timestamp":1796396401000}}
{"type":"message","id":"c0000004","parentId":"c0000003","timestamp":"2026-12-04T15:00:02.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"chat-reasoning","thinkingSignature":"reasoning_content"},{"type":"toolCall","id":"call_oai_1","name":"bash","arguments":{"command":"echo rpc-ok","timeout":1.5}}],"api":"openai-completions","provider":"mockoai","model":"mock-gpt","usage":{"input":11,"output":7,"cacheRead":0,"cacheWrite":0,"totalTokens":18,"cost":{"input":0.0000123,"output":1e-7,"cacheRead":0,"cacheWrite":0,"total":0.0000124}},"stopReason":"toolUse","timestamp":1796396402000,"responseId":"chatcmpl-1"}}
{"type":"message","id":"c0000005","parentId":"c0000004","timestamp":"2026-12-04T15:00:03.000Z","message":{"role":"toolResult","toolCallId":"call_oai_1","toolName":"bash","content":[{"type":"text","text":"rpc-ok\n"},{"type":"image","data":"AAECAw==","mimeType":"image/png"}],"details":{"truncated":false},"isError":false,"timestamp":1796396403000}}
{"type":"message","id":"c0000006","parentId":"c0000005","timestamp":"2026-12-04T15:00:04.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"responses-reasoning","thinkingSignature":"{\"type\":\"reasoning\",\"id\":\"rs_1\",\"encrypted_content\":\"gAAAA\"}"},{"type":"text","text":"Via Responses.","textSignature":"{\"v\":1,\"id\":\"msg_1\"}"}],"api":"openai-responses","provider":"openai","model":"gpt-5.4","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1796396404000}}
{"type":"message","id":"c0000007","parentId":"c0000006","timestamp":"2026-12-04T15:00:05.000Z","message":{"role":"user","content":[{"type":"text","text":"Now Gemini."}],"timestamp":1796396405000}}
{"type":"message","id":"c0000008","parentId":"c0000007","timestamp":"2026-12-04T15:00:06.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"gemini-thought","thinkingSignature":"Z3NpZy10aGluaw=="},{"type":"toolCall","id":"read_1","name":"read","arguments":{"path":"notes.txt"},"thoughtSignature":"Z3NpZy1jYWxs"}],"api":"google-generative-ai","provider":"google","model":"gemini-3-pro","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":1796396406000}}
{"type":"message","id":"c0000009","parentId":"c0000008","timestamp":"2026-12-04T15:00:07.000Z","message":{"role":"toolResult","toolCallId":"read_1","toolName":"read","content":[{"type":"text","text":"hello"}],"isError":false,"timestamp":1796396407000}}
{"type":"message","id":"c000000a","parentId":"c0000009","timestamp":"2026-12-04T15:00:08.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"","thinkingSignature":"RURBQ1RFRA==","redacted":true},{"type":"text","text":"Done."}],"api":"anthropic-messages","provider":"anthropic","model":"claude-opus-5-5","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1796396408000}}
{"type":"message","id":"c000000b","parentId":"c000000a","timestamp":"2026-12-04T15:00:09.000Z","message":{"role":"assistant","content":[],"api":"anthropic-messages","provider":"anthropic","model":"claude-opus-5-5","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"error","errorMessage":"overloaded_error: Overloaded","timestamp":1796396409000}}
{"type":"message","id":"c000000c","parentId":"c000000b","timestamp":"2026-12-04T15:00:10.000Z","message":{"role":"assistant","content":[{"type":"text","text":"Partial ans"}],"api":"anthropic-messages","provider":"anthropic","model":"claude-opus-5-5","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"aborted","errorMessage":"Request was aborted","timestamp":1796396410000}}
{"type":"message","id":"c000000d","parentId":"c000000c","timestamp":"2026-12-04T15:00:11.000Z","message":{"role":"bashExecution","command":"ls","output":"notes.txt\n","exitCode":0,"cancelled":false,"truncated":false,"timestamp":1796396411000}}
{"type":"message","id":"c000000e","parentId":"c000000d","timestamp":"2026-12-04T15:00:12.000Z","message":{"role":"custom","customType":"ext","content":"from an extension","display":true,"timestamp":1796396412000}}
{"type":"custom_message","id":"c000000f","parentId":"c000000e","timestamp":"2026-12-04T15:00:13.000Z","customType":"ext","content":"injected","display":false}
{"type":"compaction","id":"c0000010","parentId":"c000000f","timestamp":"2026-12-04T15:00:14.000Z","summary":"We read notes.","firstKeptEntryId":"c0000007","tokensBefore":1234,"details":{"readFiles":["notes.txt"],"modifiedFiles":[]}}
{"type":"branch_summary","id":"c0000011","parentId":"c0000010","timestamp":"2026-12-04T15:00:15.000Z","fromId":"root","summary":"Elsewhere."}
{"type":"label","id":"c0000012","parentId":"c0000011","timestamp":"2026-12-04T15:00:16.000Z","targetId":"c0000003","label":"start"}
{"type":"custom","id":"c0000013","parentId":"c0000012","timestamp":"2026-12-04T15:00:17.000Z","customType":"ext-state","data":{"n":1}}
{"type":"thinking_level_change","id":"c0000014","parentId":"c0000013","timestamp":"2026-12-04T15:00:18.000Z","thinkingLevel":"off"}
"#;

#[test]
fn entries_of_every_kind_round_trip() {
    let store = Store::open_in_memory().unwrap();
    let session = store.import_native(Runtime::Pi, Source::Text(CRAFTED.into()), &Options::default()).unwrap();
    assert!(session.import_report().unwrap().is_lossless());
    let export = session.export(Runtime::Pi, &Options::default()).unwrap();
    assert!(export.report.is_lossless(), "{:?}", export.report);
    assert_eq!(export_lines(&export.data), CRAFTED.lines().collect::<Vec<_>>());
    assert_eq!(session.info().unwrap().title.as_deref(), Some("Crafted session"), "session_info names the session");

    let blocks = session.blocks().unwrap();
    let find = |content: &str| blocks.iter().find(|b| b.content == content).unwrap_or_else(|| panic!("no block {content:?}"));
    assert_eq!(find("Plain string content, é😀\ttab").actor, Actor::User);
    // Chat Completions: the signature is only a field name, no opaque token.
    let chat = find("chat-reasoning");
    assert!(chat.reasoning.is_none());
    assert_eq!((chat.model_provider.as_deref(), chat.model.as_deref()), (Some("openai"), Some("mock-gpt")));
    assert_eq!(chat.native.as_ref().unwrap().data["item"]["thinkingSignature"], "reasoning_content");
    let result = blocks.iter().find(|b| b.kind == Kind::ToolResult).unwrap();
    assert!(result.content.starts_with("rpc-ok\n\n![image](embed://"), "{}", result.content);
    assert_eq!(session.embed(result.embeds.keys().next().unwrap()).unwrap(), [0, 1, 2, 3]);
    let responses = find("responses-reasoning").reasoning.as_ref().unwrap();
    assert_eq!(responses.format, Reasoning::OPENAI_ENCRYPTED);
    assert!(responses.data.contains("encrypted_content"));
    let gemini = find("gemini-thought");
    assert_eq!(gemini.reasoning.as_ref().unwrap().format, "google-thought-signature");
    assert_eq!(gemini.model_provider.as_deref(), Some("google"));
    let call = blocks.iter().find(|b| b.tool.as_ref().is_some_and(|t| t.call_id == "read_1") && b.kind == Kind::ToolUse).unwrap();
    assert!(call.reasoning.is_none(), "reasoning is carried by thinking blocks only");
    assert_eq!(call.native.as_ref().unwrap().data["item"]["thoughtSignature"], "Z3NpZy1jYWxs", "the call's thoughtSignature stays native");
    let redacted = blocks.iter().find(|b| b.reasoning.as_ref().is_some_and(|r| r.format == Reasoning::ANTHROPIC_REDACTED)).unwrap();
    assert_eq!(redacted.reasoning.as_ref().unwrap().data, "RURBQ1RFRA==");
    // Errors: the message without content is an error block; the aborted one keeps its text and
    // says why in a block of its own.
    assert_eq!(find("overloaded_error: Overloaded").kind, Kind::Error);
    assert_eq!(find("Request was aborted").kind, Kind::Error);
    assert_eq!(find("Partial ans").kind, Kind::Text);
    // Shell runs, extension messages and bookkeeping: status blocks.
    for line in ["bash: ls", "custom message: ext", "compaction: We read notes.", "branch summary: Elsewhere.", "label c0000003: start", "custom: ext-state", "thinking level: off", "session name: Crafted session"] {
        assert_eq!(find(line).kind, Kind::Status, "{line}");
    }
    // Other runtimes: every export works, no Pi bookkeeping, no error text as conversation.
    for runtime in [Runtime::ClaudeCode, Runtime::Codex, Runtime::OpenCode] {
        let data = session.to_native(runtime, &Options::default()).unwrap().to_string();
        assert!(!data.contains("firstKeptEntryId") && !data.contains("overloaded_error"), "{runtime}: {data}");
    }
}

#[test]
fn blocks_appended_to_an_imported_session_continue_its_chain() {
    let store = Store::open_in_memory().unwrap();
    let path = session_file("basic");
    let session = store.import_file(&path, None, &Options::default()).unwrap();
    session.append(Block::text(Actor::User, "And goodbye?")).unwrap();
    let mut reply = Block::text(Actor::Assistant, "Goodbye!").attributed("claude-code", "anthropic", "mock-claude");
    reply.message_id = Some("r2".into());
    session.append(reply).unwrap();
    let export = session.export(Runtime::Pi, &options(json!({"model_provider": "mockant", "target_model": "mock-claude"}))).unwrap();
    assert!(export.report.is_lossless(), "{:?}", export.report);
    let text = std::fs::read_to_string(&path).unwrap();
    let original: Vec<&str> = text.lines().collect();
    let lines = export_lines(&export.data);
    assert_eq!(lines[..original.len()], original[..], "what Pi wrote stays as it was");
    let entries = export.data.as_array().unwrap();
    let (user, answer) = (&entries[original.len()], &entries[original.len() + 1]);
    assert_eq!(user["parentId"], "14263849", "the new entries hang under the old leaf");
    assert_eq!(answer["parentId"], user["id"]);
    assert_eq!(user["message"]["content"], json!([{"type": "text", "text": "And goodbye?"}]));
    assert_eq!((answer["message"]["provider"].as_str(), answer["message"]["model"].as_str()), (Some("mockant"), Some("mock-claude")));
    assert!(user["timestamp"].as_str() >= entries[original.len() - 1]["timestamp"].as_str(), "time does not go back");
}

#[test]
fn an_attachment_block_is_not_the_title() {
    let store = Store::open_in_memory().unwrap();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/pi/image");
    let file = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).find(|p| p.file_name().unwrap().to_str().unwrap().starts_with("2026-")).unwrap();
    let session = store.import_file(&file, None, &Options::default()).unwrap();
    assert_eq!(session.info().unwrap().title.as_deref(), Some("What colour is this image?"));
}

/// Pi 0.73.1 resumed from a file that holds no assistant message appends every entry it holds
/// again at the first answer (header included): found by the chaos campaign, where a replay after
/// a compaction gave Pi a summary and a message not yet answered, and the message was stored twice.
/// An entry with the id of one read before is kept whole, as a status line; each message is said
/// once; the file comes back line for line.
#[test]
fn entries_pi_writes_again_are_kept_and_said_once() {
    let header = r#"{"type":"session","version":3,"id":"01a2418a-3596-72ce-b1dd-f362a724cc60","timestamp":"2026-12-04T14:51:46.454Z","cwd":"/home/dev/project"}"#;
    let asked = r#"{"type":"message","id":"7920de4c","parentId":null,"timestamp":"2026-12-04T14:51:46.470Z","message":{"role":"user","content":[{"type":"text","text":"First question."}],"timestamp":1796395906469}}"#;
    let again = r#"{"type":"message","id":"8a20de4c","parentId":"7920de4c","timestamp":"2026-12-04T14:51:47.470Z","message":{"role":"user","content":[{"type":"text","text":"Second question."}],"timestamp":1796395907469}}"#;
    let answer = r#"{"type":"message","id":"14263849","parentId":"8a20de4c","timestamp":"2026-12-04T14:51:48.532Z","message":{"role":"assistant","content":[{"type":"text","text":"An answer."}],"api":"anthropic-messages","provider":"mockant","model":"mock-claude","usage":{"input":11,"output":7,"cacheRead":0,"cacheWrite":0,"totalTokens":18,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1796395908532}}"#;
    let text = [header, asked, header, asked, again, answer].map(|l| format!("{l}\n")).concat();
    let store = Store::open_in_memory().unwrap();
    let session = store.import_native(Runtime::Pi, Source::Text(text.clone()), &Options::default()).unwrap();
    let blocks = session.blocks().unwrap();
    let said: Vec<(Actor, &str)> = conversation(&blocks).iter().map(|b| (b.actor, b.content.as_str())).collect();
    assert_eq!(said, [(Actor::User, "First question."), (Actor::User, "Second question."), (Actor::Assistant, "An answer.")]);
    assert!(blocks.iter().any(|b| b.kind == Kind::Status && b.content == "entry 7920de4c (message) written again"), "{blocks:?}");
    let export = session.export(Runtime::Pi, &Options::default()).unwrap();
    assert_eq!(export_lines(&export.data), text.lines().collect::<Vec<_>>());
}

/// A Pi header that comes after blocks from elsewhere (a replay into Pi, whose own lines follow
/// another runtime's turns) does not make the first line: the written file starts with a header
/// Pi accepts, and the session resumes (found by the chaos campaign: "the first line of the
/// written file would not be a Pi session header").
#[test]
fn a_header_after_blocks_from_elsewhere_still_gets_one_first() {
    let store = Store::open_in_memory().unwrap();
    let pi = store.import_file(session_file("basic"), Some(Runtime::Pi), &Options::default()).unwrap();
    let session = store.create_session(NewSession::new().id("mixed").cwd("/home/dev/project")).unwrap();
    session.append(Block::text(Actor::User, "said in another runtime")).unwrap();
    for block in pi.blocks().unwrap() {
        let mut copy = Block::new(block.actor, block.kind, block.content.clone());
        copy.native = block.native.clone();
        (copy.provider, copy.model_provider, copy.model) = (block.provider.clone(), block.model_provider.clone(), block.model.clone());
        session.append(copy).unwrap();
    }
    let records = session.to_native(Runtime::Pi, &Options::default()).unwrap();
    let records = records.as_array().unwrap();
    assert_eq!(records[0]["type"], "session", "{}", records[0]);
    assert_eq!(records.iter().filter(|r| r["type"] == "session").count(), 2);
    let home = tempfile::tempdir().unwrap();
    session.prepare_resume(Runtime::Pi, &ResumeOptions { home: Some(home.path().into()), ..Default::default() }).unwrap();
}
