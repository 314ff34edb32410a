//! OpenCode adapter: lossless round trips of the real exports, reading `opencode.db`, the document
//! for sessions built through the API, the prelude, live capture, malformed input and resume files.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use sna_history::{Actor, Block, Embed, Kind, NewSession, Options, Reasoning, ReportAction, ResumeOptions, Runtime, Scope, Source, Store};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/opencode").join(name)
}

const FIXTURES: [&str; 3] = ["basic", "resume", "tools-reasoning"];

fn document(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(fixture(name).join("export.json")).unwrap()).unwrap()
}

fn options(value: Value) -> Options {
    Options::from_value(value).unwrap()
}

type Said = (Actor, Kind, String, Option<String>, Option<String>, Option<String>);

/// What a block says, without ids, times and passthrough.
fn said(blocks: &[Block]) -> Vec<Said> {
    blocks
        .iter()
        .filter(|b| b.kind != Kind::Status)
        .map(|b| {
            (
                b.actor,
                b.kind,
                b.content.clone(),
                b.tool.as_ref().map(|t| format!("{}:{:?}:{:?}", t.call_id, t.name, t.is_error)),
                b.reasoning.as_ref().map(|r| format!("{}:{}", r.format, r.data)),
                b.model.clone(),
            )
        })
        .collect()
}

#[test]
fn every_fixture_round_trips_to_the_same_document() {
    for name in FIXTURES {
        let store = Store::open_in_memory().unwrap();
        let session = store.import_file(fixture(name).join("export.json"), None, &Options::default()).unwrap();
        let original = document(name);
        assert_eq!(session.id(), original["info"]["id"].as_str().unwrap(), "{name}: the OpenCode id is the session id");
        let export = session.export(Runtime::OpenCode, &Options::default()).unwrap();
        assert!(export.report.is_lossless(), "{name}: {:?}", export.report);
        assert_eq!(export.data, original, "{name}");
        // Same key order too (what `opencode export` printed).
        assert_eq!(serde_json::to_string(&export.data).unwrap(), serde_json::to_string(&original).unwrap(), "{name}");
        let info = session.info().unwrap();
        assert_eq!(info.title.as_deref(), original["info"]["title"].as_str());
        assert_eq!(info.cwd.as_deref(), Some("/home/dev/project"));
    }
}

#[test]
fn the_database_gives_the_same_session_as_the_export() {
    for name in FIXTURES {
        let store = Store::open_in_memory().unwrap();
        let from_export = store.import_file(fixture(name).join("export.json"), None, &Options::default()).unwrap();
        let other = Store::open_in_memory().unwrap();
        let from_db = other.import_file(fixture(name).join("opencode.db"), None, &Options::default()).unwrap();
        assert_eq!(from_db.id(), from_export.id(), "{name}");
        assert_eq!(said(&from_db.blocks().unwrap()), said(&from_export.blocks().unwrap()), "{name}");
        assert_eq!(from_db.to_native(Runtime::OpenCode, &Options::default()).unwrap(), document(name), "{name}");
    }
    // A database and a session it does not hold.
    let store = Store::open_in_memory().unwrap();
    let err = store.import_file(fixture("basic").join("opencode.db"), None, &options(json!({"session_id": "ses_nope"}))).unwrap_err();
    assert_eq!(err.code(), "NOT_FOUND", "{err}");
    let all = store.import_opencode_db(fixture("basic").join("opencode.db")).unwrap();
    assert_eq!(all.len(), 1);
    assert!(store.import_opencode_db(fixture("basic").join("opencode.db")).unwrap().is_empty(), "already imported: skipped");
}

#[test]
fn parts_become_canonical_blocks() {
    let store = Store::open_in_memory().unwrap();
    let session = store.import_file(fixture("tools-reasoning").join("export.json"), None, &Options::default()).unwrap();
    let blocks = session.blocks().unwrap();
    let conversation: Vec<&Block> = blocks.iter().filter(|b| b.kind != Kind::Status).collect();
    let kinds: Vec<(Actor, Kind)> = conversation.iter().map(|b| (b.actor, b.kind)).collect();
    assert_eq!(
        kinds,
        [
            (Actor::User, Kind::Text),
            (Actor::Assistant, Kind::Thinking),
            (Actor::Assistant, Kind::Text),
            (Actor::Assistant, Kind::ToolUse),
            (Actor::User, Kind::ToolResult),
            (Actor::Assistant, Kind::Thinking),
            (Actor::Assistant, Kind::ToolUse),
            (Actor::User, Kind::ToolResult),
            (Actor::Assistant, Kind::Text),
        ]
    );
    let thinking = conversation[1];
    let reasoning = thinking.reasoning.as_ref().unwrap();
    assert_eq!(reasoning.format, Reasoning::ANTHROPIC_SIGNATURE);
    assert_eq!(reasoning.scope.model.as_deref(), Some("claude-sonnet-4-5"));
    assert_eq!(reasoning.scope.model_provider.as_deref(), Some("anthropic"));
    assert_eq!((thinking.provider.as_deref(), thinking.model.as_deref()), (Some("opencode"), Some("claude-sonnet-4-5")));
    let call = conversation[3];
    assert_eq!(call.tool.as_ref().unwrap().name.as_deref(), Some("read"));
    assert_eq!(call.content, r#"{"filePath":"/home/dev/project/notes.txt"}"#);
    assert!(conversation[4].content.contains("hello from notes"));
    assert_eq!(conversation[4].tool.as_ref().unwrap().call_id, "toolu_01OtRead00000000000000001");
    // Steps are status blocks in place.
    let statuses: Vec<&str> = blocks.iter().filter(|b| b.kind == Kind::Status).map(|b| b.content.as_str()).collect();
    assert!(statuses.contains(&"step start") && statuses.contains(&"step finish: tool-calls"), "{statuses:?}");
    // A user turn groups its blocks.
    assert_eq!(conversation[8].turn_id, conversation[0].turn_id);
}

fn rich_document() -> Value {
    json!({
        "info": {"id": "ses_dc0000000001richDocument00", "slug": "rich", "projectID": "global", "directory": "/home/dev/project", "title": "Rich", "version": "1.18.33", "time": {"created": 1796224400000u64, "updated": 1796224500000u64}},
        "messages": [
            {"info": {"role": "user", "time": {"created": 1796224400100u64}, "agent": "build", "model": {"providerID": "anthropic", "modelID": "claude-sonnet-4-5"}, "id": "msg_1", "sessionID": "ses_dc0000000001richDocument00"},
             "parts": [
                {"type": "text", "text": "Describe this", "id": "prt_1", "sessionID": "ses_dc0000000001richDocument00", "messageID": "msg_1"},
                {"type": "file", "mime": "image/png", "filename": "dot.png", "url": "data:image/png;base64,iVBORw0KGgo=", "id": "prt_2", "sessionID": "ses_dc0000000001richDocument00", "messageID": "msg_1"},
                {"type": "file", "mime": "text/plain", "filename": "notes.txt", "url": "file:///home/dev/project/notes.txt", "id": "prt_3", "sessionID": "ses_dc0000000001richDocument00", "messageID": "msg_1"},
                {"type": "agent", "name": "explore", "id": "prt_4", "sessionID": "ses_dc0000000001richDocument00", "messageID": "msg_1"},
                {"type": "brand-new", "what": 1, "id": "prt_5", "sessionID": "ses_dc0000000001richDocument00", "messageID": "msg_1"}
             ]},
            {"info": {"parentID": "msg_1", "role": "assistant", "mode": "build", "agent": "build", "path": {"cwd": "/home/dev/project", "root": "/"}, "cost": 0, "tokens": {"input": 1, "output": 1, "reasoning": 0, "cache": {"read": 0, "write": 0}}, "modelID": "claude-sonnet-4-5", "providerID": "anthropic", "time": {"created": 1796224400200u64}, "error": {"name": "MessageAbortedError", "data": {"message": "aborted"}}, "id": "msg_2", "sessionID": "ses_dc0000000001richDocument00"},
             "parts": [
                {"type": "tool", "tool": "screenshot", "callID": "toolu_A", "state": {"status": "completed", "input": {"region": "all"}, "output": "Captured", "title": "shot", "metadata": {}, "time": {"start": 1796224400300u64, "end": 1796224400400u64},
                    "attachments": [{"type": "file", "mime": "image/png", "filename": "screen.png", "url": "data:image/png;base64,iVBORw0KGgoAAAA=", "id": "prt_7", "sessionID": "ses_dc0000000001richDocument00", "messageID": "msg_2"}]}, "id": "prt_6", "sessionID": "ses_dc0000000001richDocument00", "messageID": "msg_2"},
                {"type": "tool", "tool": "bash", "callID": "toolu_B", "state": {"status": "error", "input": {"command": "false"}, "error": "exit 1", "time": {"start": 1796224400500u64, "end": 1796224400600u64}}, "id": "prt_8", "sessionID": "ses_dc0000000001richDocument00", "messageID": "msg_2"},
                {"type": "tool", "tool": "bash", "callID": "toolu_C", "state": {"status": "running", "input": {"command": "sleep 100"}, "time": {"start": 1796224400700u64}}, "id": "prt_9", "sessionID": "ses_dc0000000001richDocument00", "messageID": "msg_2"},
                {"type": "retry", "attempt": 1, "error": {"name": "APIError", "data": {"message": "Overloaded", "isRetryable": true}}, "time": {"created": 1796224400800u64}, "id": "prt_10", "sessionID": "ses_dc0000000001richDocument00", "messageID": "msg_2"}
             ]},
            {"info": {"role": "user", "time": {"created": 1796224400900u64}, "agent": "build", "model": {"providerID": "anthropic", "modelID": "claude-sonnet-4-5"}, "id": "msg_3", "sessionID": "ses_dc0000000001richDocument00"}, "parts": []}
        ]
    })
}

#[test]
fn every_part_type_is_kept_and_comes_back() {
    let store = Store::open_in_memory().unwrap();
    let original = rich_document();
    let session = store.import_native(Runtime::OpenCode, Source::Value(original.clone()), &Options::default()).unwrap();
    assert_eq!(session.to_native(Runtime::OpenCode, &Options::default()).unwrap(), original);
    let blocks = session.blocks().unwrap();
    let image = blocks.iter().find(|b| b.kind == Kind::Text && !b.embeds.is_empty()).unwrap();
    let (id, embed) = image.embeds.iter().next().unwrap();
    assert_eq!((embed.mime.as_str(), embed.name.as_deref()), ("image/png", Some("dot.png")));
    assert!(image.content.contains(&format!("embed://{id}")));
    assert!(!image.native.as_ref().unwrap().data.to_string().contains("iVBORw0KGgo="), "the bytes are stored once");
    let result = blocks.iter().find(|b| b.kind == Kind::ToolResult && !b.embeds.is_empty()).unwrap();
    assert!(result.content.starts_with("Captured\n![screen.png](embed://"), "{}", result.content);
    let failed = blocks.iter().find(|b| b.kind == Kind::ToolResult && b.tool.as_ref().unwrap().is_error == Some(true)).unwrap();
    assert_eq!(failed.content, "exit 1");
    let calls = blocks.iter().filter(|b| b.kind == Kind::ToolUse).count();
    let results = blocks.iter().filter(|b| b.kind == Kind::ToolResult).count();
    assert_eq!((calls, results), (3, 2), "the running call has no result yet");
    assert!(blocks.iter().any(|b| b.kind == Kind::Error && b.content.contains("Overloaded")));
    assert!(blocks.iter().any(|b| b.content == "[brand-new part]"));
    assert!(blocks.iter().any(|b| b.content.starts_with("user message msg_3 without parts")));
    // Read as text, in another key order and with a key OpenCode does not write: all kept.
    let text = format!(r#"{{"messages": {}, "x_extra": {{"kept": true}}, "info": {}}}"#, original["messages"], original["info"]);
    let session = store.import_native(Runtime::OpenCode, Source::Text(text), &options(json!({"session_id": "as-text"}))).unwrap();
    let mut expected = original.clone();
    expected["x_extra"] = json!({"kept": true});
    assert_eq!(session.to_native(Runtime::OpenCode, &Options::default()).unwrap(), expected);
}

#[test]
fn malformed_documents_are_refused_with_the_json_path() {
    let store = Store::open_in_memory().unwrap();
    let err = store.import_native(Runtime::OpenCode, Source::Text("{\n  \"info\": {\"id\": \"ses_x\"},\n  \"messages\": [\n".into()), &Options::default()).unwrap_err();
    assert_eq!(err.code(), "INVALID_INPUT");
    assert!(err.location().unwrap().line.is_some(), "{err}");
    let mut doc = rich_document();
    doc["messages"][1]["parts"][0].as_object_mut().unwrap().remove("callID");
    let err = store.import_native(Runtime::OpenCode, Source::Value(doc), &Options::default()).unwrap_err();
    assert_eq!(err.location().unwrap().field.as_deref(), Some("messages[1].parts[0].callID"), "{err}");
    assert!(err.to_string().contains("field \"messages[1].parts[0].callID\": missing"), "{err}");
    let mut doc = rich_document();
    doc["messages"][0]["parts"][0]["text"] = json!(5);
    let err = store.import_native(Runtime::OpenCode, Source::Value(doc), &Options::default()).unwrap_err();
    assert_eq!(err.location().unwrap().field.as_deref(), Some("messages[0].parts[0].text"), "{err}");
    let mut doc = rich_document();
    doc.as_object_mut().unwrap().remove("messages");
    let err = store.import_native(Runtime::OpenCode, Source::Value(doc), &Options::default()).unwrap_err();
    assert_eq!(err.location().unwrap().field.as_deref(), Some("messages"), "{err}");
    assert!(store.sessions().unwrap().is_empty(), "nothing stored");
}

fn api_session(store: &Store) -> sna_history::Session {
    let session = store.create_session(NewSession::new().id("0193c5a0-0000-7000-8000-0000000000d0").cwd("/home/dev/project").title("Built here")).unwrap();
    let by = |b: Block| b.attributed("opencode", "anthropic", "claude-sonnet-4-5");
    let mut user = Block::text(Actor::User, "What is in ![shot](embed://shot) and the project?");
    user.embeds.insert("shot".into(), Embed::from_bytes("image/png", Some("shot.png".into()), b"\x89PNG\r\n\x1a\nfake".to_vec()));
    let mut thinking = by(Block::new(Actor::Assistant, Kind::Thinking, "Look at files."));
    thinking.reasoning = Some(Reasoning {
        format: Reasoning::ANTHROPIC_SIGNATURE.into(),
        data: "SIG==".into(),
        scope: Scope { provider: Some("opencode".into()), model_provider: Some("anthropic".into()), model: Some("claude-sonnet-4-5".into()) },
    });
    let blocks = vec![
        user,
        thinking,
        by(Block::tool_use("toolu_a", "bash", r#"{"command":"ls"}"#)),
        by(Block::tool_use("toolu_b", "read", r#"{"filePath":"a.txt"}"#)),
        Block::tool_result("toolu_a", "a.txt", false),
        Block::tool_result("toolu_b", "hello", false),
        by(Block::text(Actor::Assistant, "All done.")),
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
fn api_sessions_become_documents_opencode_accepts() {
    let store = Store::open_in_memory().unwrap();
    let session = api_session(&store);
    let export = session.export(Runtime::OpenCode, &Options::default()).unwrap();
    assert!(export.report.is_lossless(), "{:?}", export.report);
    let doc = &export.data;
    let id = doc["info"]["id"].as_str().unwrap();
    assert!(id.starts_with("ses_") && id.len() == 30, "{id}");
    assert_eq!(doc["info"]["title"], "Built here");
    let messages = doc["messages"].as_array().unwrap();
    let shape: Vec<(String, Vec<String>)> = messages
        .iter()
        .map(|m| (m["info"]["role"].as_str().unwrap().to_string(), m["parts"].as_array().unwrap().iter().map(|p| p["type"].as_str().unwrap().to_string()).collect()))
        .collect();
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert_eq!(
        shape,
        [
            ("user".to_string(), s(&["text", "file", "text"])),
            ("assistant".to_string(), s(&["step-start", "reasoning", "tool", "tool", "step-finish"])),
            ("assistant".to_string(), s(&["step-start", "text", "step-finish"])),
        ]
    );
    let user_id = messages[0]["info"]["id"].as_str().unwrap();
    assert_eq!(messages[1]["info"]["parentID"], user_id);
    assert_eq!(messages[1]["info"]["finish"], "tool-calls");
    assert_eq!(messages[2]["info"]["finish"], "stop");
    assert_eq!(messages[2]["parts"][2]["reason"], "stop");
    assert_eq!(messages[1]["parts"][1]["metadata"]["anthropic"]["signature"], "SIG==");
    assert_eq!(messages[1]["parts"][2]["state"]["status"], "completed");
    assert_eq!(messages[1]["parts"][2]["state"]["output"], "a.txt");
    assert_eq!(messages[1]["parts"][2]["state"]["input"], json!({"command": "ls"}));
    assert!(messages[0]["parts"][1]["url"].as_str().unwrap().starts_with("data:image/png;base64,"));
    // Ids in OpenCode's format, ascending; times strictly increasing and never null.
    let mut previous_message = String::new();
    let mut previous_time = 0;
    for m in messages {
        let mid = m["info"]["id"].as_str().unwrap().to_string();
        assert!(mid.starts_with("msg_") && mid.len() == 30 && mid > previous_message, "{mid}");
        let t = m["info"]["time"]["created"].as_i64().unwrap();
        assert!(t > previous_time);
        previous_time = t;
        previous_message = mid.clone();
        let mut previous_part = String::new();
        for p in m["parts"].as_array().unwrap() {
            let pid = p["id"].as_str().unwrap().to_string();
            assert!(pid.starts_with("prt_") && pid > previous_part, "{pid}");
            assert_eq!(p["messageID"].as_str(), Some(mid.as_str()));
            previous_part = pid;
        }
    }
    assert!(!doc.to_string().contains("null"), "OpenCode refuses null for optional fields");
    // Deterministic.
    assert_eq!(serde_json::to_string(doc).unwrap(), serde_json::to_string(&session.to_native(Runtime::OpenCode, &Options::default()).unwrap()).unwrap());
    // And it reads back as the same conversation.
    let back = store.import_native(Runtime::OpenCode, Source::Value(doc.clone()), &Options::default()).unwrap();
    let text = |blocks: Vec<Block>| -> Vec<(Kind, String)> { blocks.into_iter().filter(|b| b.kind != Kind::Status).map(|b| (b.kind, b.content)).collect() };
    let mut ours = text(session.blocks().unwrap());
    let theirs = text(back.blocks().unwrap());
    // The user text around the image comes back as three parts.
    ours[0].1 = "What is in ".into();
    assert_eq!(theirs[0].1, "What is in ");
    assert_eq!(theirs[1].1.split("](").next().unwrap(), "![shot.png");
    assert_eq!(theirs[2].1, " and the project?");
    // A tool part holds the call and its result, so each result comes back right after its call.
    ours.swap(3, 4);
    assert_eq!(&theirs[3..], &ours[1..]);
    // Another target model: the signature does not travel.
    let other = session.export(Runtime::OpenCode, &options(json!({"target_model": "gpt-5.5", "model_provider": "openai"}))).unwrap();
    assert!(!other.data.to_string().contains("SIG=="));
    assert_eq!(other.report.entries[0].action, ReportAction::Dropped);
    assert_eq!(session.export(Runtime::OpenCode, &options(json!({"target_model": "gpt-5.5", "strict": true}))).unwrap_err().code(), "LOSSY");
}

#[test]
fn unanswered_calls_are_written_as_interrupted() {
    let store = Store::open_in_memory().unwrap();
    let session = store.create_session(NewSession::new()).unwrap();
    session.extend(vec![Block::text(Actor::User, "go"), Block::tool_use("c1", "bash", r#"{"command":"sleep 9"}"#), Block::tool_result("orphan", "x", false)]).unwrap();
    let export = session.export(Runtime::OpenCode, &Options::default()).unwrap();
    let state = &export.data["messages"][1]["parts"][1]["state"];
    assert_eq!(state["status"], "error");
    assert_eq!(state["error"], "[Tool execution was interrupted]");
    let actions: Vec<ReportAction> = export.report.entries.iter().map(|e| e.action).collect();
    assert_eq!(actions, [ReportAction::Dropped, ReportAction::Synthesized]);
    // A block stamped in the future is written at the present.
    let later = store.create_session(NewSession::new()).unwrap();
    let mut future = Block::text(Actor::User, "from the future");
    future.created_at = sna_history::Timestamp::from_millis(sna_history::Timestamp::now().as_millis() + 86_400_000).unwrap();
    later.append(future).unwrap();
    let created = later.to_native(Runtime::OpenCode, &Options::default()).unwrap()["messages"][0]["info"]["time"]["created"].as_i64().unwrap();
    assert!(created <= sna_history::Timestamp::now().as_millis());
}

#[test]
fn the_prelude_is_readable_text() {
    let store = Store::open_in_memory().unwrap();
    let session = api_session(&store);
    let export = session.export(Runtime::OpenCode, &options(json!({"format": "prelude"}))).unwrap();
    let text = export.data.as_str().unwrap();
    let expected_start = "<conversation-history format=\"sna-history prelude 1\">\n[user]\nWhat is in [attachment shot.png] and the project?\n[attachment shot.png image/png 12 bytes sha256:";
    assert!(text.starts_with(expected_start), "{text}");
    assert!(text.contains("\n[assistant tool call bash id=toolu_a]\n{\"command\":\"ls\"}\n"), "{text}");
    assert!(text.contains("\n[tool result id=toolu_b]\nhello\n"), "{text}");
    assert!(text.ends_with("[assistant]\nAll done.\n</conversation-history>\n"), "{text}");
    assert_eq!(export.report.entries.len(), 1, "the reasoning is left out");
    assert_eq!(session.to_native(Runtime::OpenCode, &options(json!({"format": "prelude"}))).unwrap(), export.data);
}

#[test]
fn run_json_events_are_captured_like_the_export() {
    for name in FIXTURES {
        let store = Store::open_in_memory().unwrap();
        let imported = store.import_file(fixture(name).join("export.json"), None, &Options::default()).unwrap();
        let live = store.create_session(NewSession::new()).unwrap();
        for line in std::fs::read_to_string(fixture(name).join("events.jsonl")).unwrap().lines() {
            live.ingest(Runtime::OpenCode, &serde_json::from_str(line).unwrap()).unwrap();
        }
        // `run --format json` prints the assistant's parts, not the prompt.
        let assistant = |blocks: Vec<Block>| -> Vec<(Kind, String)> {
            blocks.into_iter().filter(|b| b.actor == Actor::Assistant && b.kind != Kind::Status).map(|b| (b.kind, b.content)).collect()
        };
        assert_eq!(assistant(live.blocks().unwrap()), assistant(imported.blocks().unwrap()), "{name}");
        let results = |blocks: Vec<Block>| blocks.into_iter().filter(|b| b.kind == Kind::ToolResult).map(|b| b.content).collect::<Vec<_>>();
        assert_eq!(results(live.blocks().unwrap()), results(imported.blocks().unwrap()), "{name}");
    }
}

#[test]
fn bus_events_fold_into_whole_parts() {
    let store = Store::open_in_memory().unwrap();
    let live = store.create_session(NewSession::new()).unwrap();
    let s = "ses_dc8a";
    let events = [
        json!({"type": "message.updated", "properties": {"sessionID": s, "info": {"id": "msg_u", "role": "user", "sessionID": s, "time": {"created": 1}, "agent": "build", "model": {"providerID": "mock", "modelID": "m"}}}}),
        json!({"type": "message.part.updated", "properties": {"sessionID": s, "part": {"type": "text", "text": "Now list", "messageID": "msg_u", "sessionID": s, "id": "prt_1"}, "time": 2}}),
        json!({"type": "message.updated", "properties": {"sessionID": s, "info": {"id": "msg_a", "role": "assistant", "sessionID": s, "parentID": "msg_u", "providerID": "anthropic", "modelID": "claude-sonnet-4-5", "time": {"created": 3}}}}),
        json!({"type": "message.part.updated", "properties": {"sessionID": s, "part": {"id": "prt_2", "messageID": "msg_a", "sessionID": s, "type": "reasoning", "text": "", "time": {"start": 4}}, "time": 4}}),
        json!({"type": "message.part.delta", "properties": {"sessionID": s, "messageID": "msg_a", "partID": "prt_2", "field": "text", "delta": "Thinking."}}),
        json!({"type": "message.part.updated", "properties": {"sessionID": s, "part": {"id": "prt_2", "messageID": "msg_a", "sessionID": s, "type": "reasoning", "text": "Thinking.", "time": {"start": 4, "end": 5}, "metadata": {"anthropic": {"signature": "SIG"}}}, "time": 5}}),
        json!({"type": "message.part.updated", "properties": {"sessionID": s, "part": {"id": "prt_3", "messageID": "msg_a", "sessionID": s, "type": "tool", "tool": "bash", "callID": "c3", "state": {"status": "pending", "input": {}, "raw": ""}}, "time": 6}}),
        json!({"type": "message.part.updated", "properties": {"sessionID": s, "part": {"id": "prt_3", "messageID": "msg_a", "sessionID": s, "type": "tool", "tool": "bash", "callID": "c3", "state": {"status": "running", "input": {"command": "ls"}, "time": {"start": 7}}}, "time": 7}}),
        json!({"type": "message.part.updated", "properties": {"sessionID": s, "part": {"id": "prt_3", "messageID": "msg_a", "sessionID": s, "type": "tool", "tool": "bash", "callID": "c3", "state": {"status": "completed", "input": {"command": "ls"}, "output": "README.md\n", "metadata": {}, "title": "ls", "time": {"start": 7, "end": 8}}}, "time": 8}}),
        json!({"type": "session.idle", "properties": {"sessionID": s}}),
    ];
    for event in &events {
        live.ingest(Runtime::OpenCode, event).unwrap();
    }
    let blocks: Vec<Block> = live.blocks().unwrap().into_iter().filter(|b| b.kind != Kind::Status).collect();
    let kinds: Vec<(Actor, Kind, &str)> = blocks.iter().map(|b| (b.actor, b.kind, b.content.as_str())).collect();
    assert_eq!(
        kinds,
        [
            (Actor::User, Kind::Text, "Now list"),
            (Actor::Assistant, Kind::Thinking, "Thinking."),
            (Actor::Assistant, Kind::ToolUse, r#"{"command":"ls"}"#),
            (Actor::User, Kind::ToolResult, "README.md\n"),
        ]
    );
    assert_eq!(blocks[1].model.as_deref(), Some("claude-sonnet-4-5"));
    assert_eq!(blocks[1].reasoning.as_ref().unwrap().data, "SIG");
    assert!(live.ingest(Runtime::OpenCode, &json!({"no": "type"})).is_err());
    assert!(live.ingest(Runtime::OpenCode, &json!({"type": "message.part.updated", "properties": {}})).is_err());
}

#[test]
fn prepare_resume_writes_the_document_and_the_commands() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_in_memory().unwrap();
    let session = api_session(&store);
    let plan = session
        .prepare_resume(Runtime::OpenCode, &ResumeOptions { home: Some(dir.path().into()), cwd: Some(dir.path().into()), ..ResumeOptions::default() })
        .unwrap();
    assert!(plan.session_id.starts_with("ses_"));
    let file = &plan.files[0];
    assert!(file.starts_with(dir.path()));
    let written: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    assert_eq!(written, session.to_native(Runtime::OpenCode, &Options::default()).unwrap());
    assert_eq!(plan.setup, vec![vec!["opencode".to_string(), "import".into(), file.display().to_string()]]);
    assert_eq!(plan.argv, ["opencode", "run", "--session", plan.session_id.as_str()]);
    assert_eq!(plan.env.get("HOME").map(String::as_str), Some(dir.path().to_str().unwrap()));
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(file).unwrap().permissions().mode() & 0o777, 0o600);
    assert_eq!(session.binding(Runtime::OpenCode).unwrap().unwrap().native_id, plan.session_id);
    // A failing import is an error that says what the program printed.
    let fail = dir.path().join("fake-opencode");
    std::fs::write(&fail, "#!/bin/sh\necho 'Missing key at [\"agent\"]' >&2\nexit 1\n").unwrap();
    std::fs::set_permissions(&fail, std::fs::Permissions::from_mode(0o755)).unwrap();
    let err = session
        .prepare_resume(
            Runtime::OpenCode,
            &ResumeOptions { home: Some(dir.path().into()), cwd: Some(dir.path().into()), run_import: true, opencode_bin: Some(fail), ..ResumeOptions::default() },
        )
        .unwrap_err();
    assert!(err.to_string().contains("Missing key at [\"agent\"]") && err.to_string().contains("exit 1"), "{err}");
    // An imported session keeps its OpenCode id; a bad one is refused.
    let bad = store.import_native(Runtime::OpenCode, Source::Value(json!({"info": {"id": "../x"}, "messages": []})), &options(json!({"session_id": "odd"}))).unwrap();
    let err = bad.prepare_resume(Runtime::OpenCode, &ResumeOptions { home: Some(dir.path().into()), ..ResumeOptions::default() }).unwrap_err();
    assert_eq!(err.code(), "INVALID_INPUT", "{err}");
}

mod robustness {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]
        #[test]
        fn mutated_documents_never_panic(cut in 1usize..6000, junk in proptest::collection::vec(any::<u8>(), 0..30), mode in 0u8..3, path in 0usize..40) {
            let text = std::fs::read_to_string(fixture("tools-reasoning").join("export.json")).unwrap();
            let store = Store::open_in_memory().unwrap();
            let result = match mode {
                0 => store.import_native(Runtime::OpenCode, Source::Text(text[..cut.min(text.len() - 1)].to_string()), &Options::default()).map(|_| ()),
                1 => {
                    let at = cut % text.len();
                    let mut bytes = text.as_bytes()[..at].to_vec();
                    bytes.extend(&junk);
                    bytes.extend(&text.as_bytes()[at..]);
                    store.import_native(Runtime::OpenCode, Source::Bytes(bytes), &Options::default()).map(|_| ())
                }
                _ => {
                    // Replace one value somewhere in the document with junk of another type.
                    let mut doc: Value = serde_json::from_str(&text).unwrap();
                    let mut slots = Vec::new();
                    collect(&doc, String::new(), &mut slots);
                    let target = slots[path % slots.len()].clone();
                    if let Some(slot) = doc.pointer_mut(&target) {
                        *slot = json!(junk.len());
                    }
                    store.import_native(Runtime::OpenCode, Source::Value(doc), &Options::default()).map(|_| ())
                }
            };
            match result {
                Ok(()) => {
                    let session = &store.sessions().unwrap()[0];
                    let session = store.session(&session.id).unwrap();
                    session.to_native(Runtime::OpenCode, &Options::default()).unwrap();
                    session.to_native(Runtime::OpenCode, &options(json!({"format": "prelude"}))).unwrap();
                }
                Err(e) => prop_assert_eq!(e.code(), "INVALID_INPUT", "{}", e),
            }
        }
    }

    fn collect(value: &Value, at: String, out: &mut Vec<String>) {
        match value {
            Value::Object(map) => map.iter().for_each(|(k, v)| {
                let here = format!("{at}/{k}");
                out.push(here.clone());
                collect(v, here, out);
            }),
            Value::Array(items) => items.iter().enumerate().for_each(|(i, v)| {
                let here = format!("{at}/{i}");
                out.push(here.clone());
                collect(v, here, out);
            }),
            _ => {}
        }
    }
}

#[test]
fn import_database_detects_the_runtime_from_the_header() {
    let store = Store::open_in_memory().unwrap();
    let db = fixture("basic").join("opencode.db");
    assert_eq!(sna_history::native::detect::detect_database(&db).unwrap(), Some(Runtime::OpenCode));
    assert_eq!(sna_history::native::detect::detect_database(&fixture("basic").join("export.json")).unwrap(), None);
    let sessions = store.import_database(&db, None).unwrap();
    assert_eq!(sessions.iter().map(|s| s.id().to_string()).collect::<Vec<_>>(), [document("basic")["info"]["id"].as_str().unwrap()]);
    assert!(store.import_database(&db, Some(Runtime::OpenCode)).unwrap().is_empty(), "already held: skipped");
    let err = store.import_database(&db, Some(Runtime::Codex)).unwrap_err();
    assert_eq!(err.code(), "UNSUPPORTED", "{err}");
    let err = store.import_database(fixture("basic").join("export.json"), None).unwrap_err();
    assert_eq!(err.code(), "INVALID_INPUT", "{err}");
}

#[test]
fn a_strict_resume_reports_the_loss_before_the_id() {
    let store = Store::open_in_memory().unwrap();
    let session = store.create_session(NewSession::new().id("strict-first").cwd("/home/dev/project")).unwrap();
    let mut info = Block::new(Actor::System, Kind::Status, "session");
    info.native = Some(sna_history::Native { runtime: "opencode".into(), data: json!({"session": {"id": "not an id!"}}) });
    // An error block has no place in an OpenCode history: a loss.
    let error = Block::new(Actor::Assistant, Kind::Error, "rate limited").attributed("opencode", "anthropic", "claude-sonnet-4-6");
    session.extend([info, Block::text(Actor::User, "hi"), error]).unwrap();
    let home = tempfile::tempdir().unwrap();
    let lenient = ResumeOptions { home: Some(home.path().to_path_buf()), ..ResumeOptions::default() };
    assert_eq!(session.prepare_resume(Runtime::OpenCode, &lenient).unwrap_err().code(), "INVALID_INPUT", "the id is refused");
    let strict = ResumeOptions { options: options(json!({"strict": true})), ..lenient };
    let err = session.prepare_resume(Runtime::OpenCode, &strict).unwrap_err();
    assert_eq!(err.code(), "LOSSY", "{err}");
    assert!(std::fs::read_dir(home.path()).unwrap().next().is_none(), "nothing written");
}

#[test]
fn a_text_file_is_not_taken_for_a_database() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fake.db");
    std::fs::write(&path, "SQLite format 3 is what this text says\n").unwrap();
    let err = Store::open_in_memory().unwrap().import_opencode_db(&path).unwrap_err();
    assert_eq!(err.code(), "INVALID_INPUT", "{err}");
    assert!(err.to_string().contains("no SQLite header"), "{err}");
}
