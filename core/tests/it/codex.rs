//! Codex adapter: lossless round trips of the real rollouts, every ResponseItem variant, the
//! `items` rebuild, sessions built through the API, live capture, malformed input and resume files.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use sna_history::{Actor, Block, Embed, Kind, NewSession, Options, Reasoning, ReportAction, ResumeOptions, Runtime, Scope, Source, Store};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/codex")
}

fn rollouts() -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(fixtures()).unwrap() {
        let dir = entry.unwrap().path();
        for file in std::fs::read_dir(&dir).unwrap() {
            let file = file.unwrap().path();
            if file.file_name().unwrap().to_str().unwrap().starts_with("rollout-") {
                out.push((dir.file_name().unwrap().to_str().unwrap().to_string(), file));
            }
        }
    }
    out.sort();
    assert!(out.len() >= 5, "fixtures missing: {out:?}");
    out
}

fn read_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path).unwrap().lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn options(value: Value) -> Options {
    Options::from_value(value).unwrap()
}

fn rollout(name: &str) -> PathBuf {
    rollouts().into_iter().find(|(n, _)| n == name).unwrap().1
}

#[test]
fn every_fixture_round_trips_line_for_line() {
    for (name, path) in rollouts() {
        let store = Store::open_in_memory().unwrap();
        let session = store.import_file(&path, None, &Options::default()).unwrap();
        let id = path.file_stem().unwrap().to_str().unwrap();
        assert!(id.ends_with(session.id()), "{name}: the thread id is the session id");
        let export = session.export(Runtime::Codex, &options(json!({"format": "rollout"}))).unwrap();
        assert!(export.report.is_lossless(), "{name}: {:?}", export.report);
        let original = read_lines(&path);
        let lines = export.data.as_array().unwrap();
        assert_eq!(lines.len(), original.len(), "{name}");
        let texts: Vec<String> = std::fs::read_to_string(&path).unwrap().lines().map(str::to_string).collect();
        for (i, (a, b)) in lines.iter().zip(&original).enumerate() {
            assert_eq!(a, b, "{name}: line {}", i + 1);
            // Byte for byte: key order, number formatting and escapes as Codex wrote them.
            assert_eq!(serde_json::to_string(a).unwrap(), texts[i], "{name}: line {} text", i + 1);
        }
    }
}

#[test]
fn imported_blocks_are_canonical_and_attributed() {
    let store = Store::open_in_memory().unwrap();
    let session = store.import_file(rollout("reasoning-exec"), None, &Options::default()).unwrap();
    let blocks = session.blocks().unwrap();
    let conversation: Vec<&Block> = blocks.iter().filter(|b| b.kind != Kind::Status).collect();
    let kinds: Vec<(Actor, Kind)> = conversation.iter().map(|b| (b.actor, b.kind)).collect();
    assert_eq!(
        kinds,
        vec![
            (Actor::System, Kind::Text),
            (Actor::System, Kind::Text),
            (Actor::System, Kind::Text),
            (Actor::User, Kind::Text),
            (Actor::User, Kind::Text),
            (Actor::Assistant, Kind::Thinking),
            (Actor::Assistant, Kind::ToolUse),
            (Actor::User, Kind::ToolResult),
            (Actor::Assistant, Kind::Thinking),
            (Actor::Assistant, Kind::Text),
        ]
    );
    let thinking = conversation[5];
    assert_eq!(thinking.content, "**Listing files**\n\nI should list the project directory first.");
    let reasoning = thinking.reasoning.as_ref().unwrap();
    assert_eq!(reasoning.format, Reasoning::OPENAI_ENCRYPTED);
    assert_eq!(reasoning.data, "gAAAAABmZW5jLXJlMWVuYy1yZTFlbmMtcmUxZW5jLXJlMQ==");
    assert_eq!(reasoning.scope.model.as_deref(), Some("gpt-5.5"));
    assert_eq!(reasoning.scope.model_provider.as_deref(), Some("mock"));
    assert_eq!((thinking.provider.as_deref(), thinking.model_provider.as_deref(), thinking.model.as_deref()), (Some("codex"), Some("mock"), Some("gpt-5.5")));
    let call = conversation[6];
    assert_eq!(call.tool.as_ref().unwrap().name.as_deref(), Some("exec_command"));
    assert_eq!(call.content, "{\"cmd\": \"ls\"}", "arguments exactly as given");
    assert_eq!(conversation[7].tool.as_ref().unwrap().call_id, call.tool.as_ref().unwrap().call_id);
    assert!(conversation[7].content.contains("data.csv"));
    assert!(thinking.turn_id.is_some());
    let info = session.info().unwrap();
    assert_eq!(info.cwd.as_deref(), Some("/home/dev/project"));
    assert_eq!(info.title.as_deref(), Some("List the files in this project."));
}

#[test]
fn custom_tool_input_is_kept_exactly_and_images_are_embeds() {
    let store = Store::open_in_memory().unwrap();
    let session = store.import_file(rollout("apply-patch"), None, &Options::default()).unwrap();
    let call = session.blocks().unwrap().into_iter().find(|b| b.kind == Kind::ToolUse).unwrap();
    assert_eq!(call.tool.as_ref().unwrap().name.as_deref(), Some("apply_patch"));
    assert!(call.content.starts_with("*** Begin Patch\n"), "{}", call.content);
    let image_session = store.import_file(rollout("image"), None, &Options::default()).unwrap();
    let image = image_session.blocks().unwrap().into_iter().find(|b| !b.embeds.is_empty()).unwrap();
    let (id, embed) = image.embeds.iter().next().unwrap();
    assert_eq!(embed.mime, "image/png");
    assert_eq!(&image_session.embed(id).unwrap()[1..4], b"PNG");
    assert!(!image.native.as_ref().unwrap().data.to_string().contains("iVBORw0KGgo"), "the bytes are stored once");
}

/// The `input` the fixture's last model request sent, without what Codex adds fresh to every
/// request (the base instructions, the per-turn context) and the ids Codex assigns.
fn last_request_input(dir: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(dir.join("requests.jsonl")).unwrap();
    let last: Value = text.lines().filter(|l| l.contains("\"input\"")).map(|l| serde_json::from_str(l).unwrap()).next_back().unwrap();
    last["body"]["input"].as_array().unwrap().clone()
}

#[test]
fn items_are_what_the_cli_sent() {
    for (name, path) in rollouts() {
        let store = Store::open_in_memory().unwrap();
        let session = store.import_file(&path, None, &Options::default()).unwrap();
        let export = session.export(Runtime::Codex, &Options::default()).unwrap();
        assert!(export.report.is_lossless(), "{name}: {:?}", export.report);
        let ours = export.data.as_array().unwrap().clone();
        let sent = last_request_input(path.parent().unwrap());
        // input[0] is the base-instructions message, never written to the rollout; every item the
        // rollout holds before the last request's reply is in the request, in order.
        let sent_rest: Vec<&Value> = sent[1..].iter().collect();
        let ours_prefix: Vec<&Value> = ours.iter().take(sent_rest.len()).collect();
        let strip = |v: &&Value| {
            let mut v = (*v).clone();
            if let Some(m) = v.as_object_mut() {
                m.remove("internal_chat_message_metadata_passthrough");
            }
            v
        };
        assert_eq!(ours_prefix.iter().map(strip).collect::<Vec<_>>(), sent_rest.iter().map(strip).collect::<Vec<_>>(), "{name}");
    }
}

#[test]
fn pre_envelope_legacy_and_bare_item_forms_load() {
    // The old format: a bare meta line, bare items, state records.
    let old = [
        json!({"id":"5973b6c0-94b8-487b-a530-2aeb6098ae0e","timestamp":"2025-05-01T10:00:00.000Z","instructions":null}),
        json!({"type":"message","role":"user","content":[{"type":"input_text","text":"hello old codex"}]}),
        json!({"record_type":"state"}),
        json!({"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"]}","call_id":"call_1"}),
        json!({"type":"function_call_output","call_id":"call_1","output":"a.txt"}),
        json!({"type":"local_shell_call","call_id":"call_2","status":"completed","action":{"type":"exec","command":["pwd"],"timeout_ms":null,"working_directory":null,"env":null,"user":null}}),
        json!({"type":"function_call_output","call_id":"call_2","output":[{"type":"input_text","text":"/tmp"},{"type":"input_image","image_url":"data:image/png;base64,iVBORw0KGgo="}]}),
        json!({"type":"web_search_call","status":"completed","action":{"type":"search","query":"q"}}),
        json!({"type":"future_item","x":1}),
        json!({"type":"message","role":"assistant","content":[{"type":"output_text","text":"done","annotations":[]}]}),
    ];
    let text: String = old.iter().map(|l| format!("{l}\n")).collect();
    let store = Store::open_in_memory().unwrap();
    let session = store.import_native(Runtime::Codex, Source::Text(text), &Options::default()).unwrap();
    assert_eq!(session.id(), "5973b6c0-94b8-487b-a530-2aeb6098ae0e");
    assert_eq!(session.to_native(Runtime::Codex, &options(json!({"format": "rollout"}))).unwrap(), Value::Array(old.to_vec()));
    let kinds: Vec<Kind> = session.blocks().unwrap().iter().map(|b| b.kind).collect();
    assert_eq!(kinds.iter().filter(|k| **k == Kind::ToolUse).count(), 2);
    assert_eq!(kinds.iter().filter(|k| **k == Kind::ToolResult).count(), 2);

    // Legacy mode envelope (no ordinal) with a compaction whose replacement history becomes the base.
    let legacy = [
        json!({"timestamp":"2025-11-02T09:00:00.000Z","type":"session_meta","payload":{"id":"11111111-2222-4333-8444-555555555555","timestamp":"2025-11-02T09:00:00.000Z","cwd":"/home/dev/project","originator":"codex_cli_rs","cli_version":"0.60.0","source":"cli","model_provider":"openai"}}),
        json!({"timestamp":"2025-11-02T09:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"old question"}]}}),
        json!({"timestamp":"2025-11-02T09:00:02.000Z","type":"compacted","payload":{"message":"","replacement_history":[{"type":"message","role":"user","content":[{"type":"input_text","text":"summary of before"}]}]}}),
        json!({"timestamp":"2025-11-02T09:00:03.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"new question"}]}}),
        json!({"timestamp":"2025-11-02T09:00:04.000Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{}","call_id":"orphan"}}),
        json!({"timestamp":"2025-11-02T09:00:05.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"nobody","output":"x"}}),
    ];
    let list = Value::Array(legacy.to_vec());
    let session = store.import_native(Runtime::Codex, Source::Value(list.clone()), &Options::default()).unwrap();
    assert_eq!(session.to_native(Runtime::Codex, &options(json!({"format": "rollout"}))).unwrap(), list);
    let export = session.export(Runtime::Codex, &Options::default()).unwrap();
    let texts: Vec<&str> = export.data.as_array().unwrap().iter().filter_map(|i| i["content"][0]["text"].as_str()).collect();
    assert_eq!(texts, ["summary of before", "new question"]);
    let items = export.data.as_array().unwrap();
    assert_eq!(items.last().unwrap(), &json!({"type":"function_call_output","call_id":"orphan","output":"aborted"}));
    let actions: Vec<ReportAction> = export.report.entries.iter().map(|e| e.action).collect();
    assert_eq!(actions, [ReportAction::Dropped, ReportAction::Synthesized]);

    // A bare ResponseItem list (what thread/resume takes as history).
    let history = json!([
        {"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]},
        {"type":"message","role":"assistant","content":[{"type":"output_text","text":"hello"}]}
    ]);
    let session = store.import_native(Runtime::Codex, Source::Value(history.clone()), &options(json!({"session_id": "bare"}))).unwrap();
    assert_eq!(session.to_native(Runtime::Codex, &Options::default()).unwrap(), history);
}

#[test]
fn malformed_lines_are_kept_or_refused() {
    let mut lines: Vec<String> = std::fs::read_to_string(rollout("basic")).unwrap().lines().map(str::to_string).collect();
    lines.insert(3, "{\"timestamp\":\"x\",\"type\":\"response_item\",\"payload\":{\"type\":\"function_call_output\",\"call_id\":\"c\",\"output\":{\"content\":\"x\",\"success\":false}}}".into());
    lines.insert(4, "not json at all".into());
    let text = lines.join("\n") + "\n";
    let store = Store::open_in_memory().unwrap();
    let session = store.import_native(Runtime::Codex, Source::Text(text.clone()), &Options::default()).unwrap();
    let report = session.import_report().unwrap();
    assert_eq!(report.entries.len(), 2);
    assert!(report.entries[0].message.contains("line 4") && report.entries[0].message.contains("output"), "{:?}", report.entries[0]);
    assert!(report.entries[1].message.contains("line 5"), "{:?}", report.entries[1]);
    let err = store.import_native(Runtime::Codex, Source::Text(text), &options(json!({"strict": true, "session_id": "s"}))).unwrap_err();
    assert_eq!(err.code(), "INVALID_INPUT");
    assert_eq!(err.location().unwrap().line, Some(4));
    assert_eq!(err.location().unwrap().field.as_deref(), Some("payload.output"));
    assert!(matches!(store.session("s"), Err(e) if e.code() == "NOT_FOUND"));
    // Another runtime's history is refused.
    let claude = r#"{"parentUuid":null,"type":"user","uuid":"u","message":{"role":"user","content":"hi"}}"#;
    let err = store.import_native(Runtime::Codex, Source::Text(claude.into()), &Options::default()).unwrap_err();
    assert!(err.to_string().contains("Claude Code history"), "{err}");
    // Also when the transcript opens with a record that has no chain fields (2.1.x starts with a
    // queue-operation).
    let transcript = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/claude-code/basic/59187973-81fd-4be2-8aa9-a21c45c78135.jsonl");
    let err = store.import_native(Runtime::Codex, Source::Path(transcript), &Options::default()).unwrap_err();
    assert!(err.to_string().contains("Claude Code history"), "{err}");
    assert_eq!(err.location().unwrap().line, Some(1));
}

fn api_session(store: &Store) -> sna_history::Session {
    let session = store.create_session(NewSession::new().id("0193c5a0-0000-7000-8000-0000000000c0").cwd("/home/dev/project")).unwrap();
    let by = |b: Block| b.attributed("codex", "mock", "gpt-5.5");
    let mut user = Block::text(Actor::User, "What is in ![shot](embed://shot) and the project?");
    user.embeds.insert("shot".into(), Embed::from_bytes("image/png", Some("shot.png".into()), b"\x89PNG\r\n\x1a\nfake".to_vec()));
    let mut thinking = by(Block::new(Actor::Assistant, Kind::Thinking, "Look at files."));
    thinking.reasoning = Some(Reasoning {
        format: Reasoning::OPENAI_ENCRYPTED.into(),
        data: "gAAAAB-api".into(),
        scope: Scope { provider: Some("codex".into()), model_provider: Some("mock".into()), model: Some("gpt-5.5".into()) },
    });
    let blocks = vec![
        user,
        thinking,
        by(Block::tool_use("call_a", "exec_command", r#"{"cmd":"ls"}"#)),
        by(Block::tool_use("call_b", "apply_patch", "*** Begin Patch\n*** End Patch\n")),
        Block::tool_result("call_b", "Done", false),
        Block::tool_result("call_a", "a.txt", false),
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
fn api_sessions_become_legacy_rollouts_with_mirrors() {
    let store = Store::open_in_memory().unwrap();
    let session = api_session(&store);
    let export = session.export(Runtime::Codex, &options(json!({"format": "rollout", "model_provider": "mock"}))).unwrap();
    assert!(export.report.is_lossless(), "{:?}", export.report);
    let lines = export.data.as_array().unwrap();
    let kinds: Vec<String> = lines
        .iter()
        .map(|l| format!("{}/{}", l["type"].as_str().unwrap(), l["payload"]["type"].as_str().unwrap_or("")))
        .collect();
    assert_eq!(
        kinds,
        [
            "session_meta/", "event_msg/task_started", "turn_context/", "response_item/message", "event_msg/user_message",
            "response_item/reasoning", "event_msg/agent_reasoning", "response_item/function_call", "response_item/custom_tool_call",
            "response_item/function_call_output", "response_item/custom_tool_call_output", "response_item/message",
            "event_msg/agent_message", "event_msg/task_complete"
        ]
    );
    let meta = &lines[0]["payload"];
    assert_eq!(meta["id"], "0193c5a0-0000-7000-8000-0000000000c0");
    assert_eq!(meta["model_provider"], "mock");
    assert!(lines.iter().all(|l| l.get("ordinal").is_none()), "legacy mode");
    let mut previous = "";
    for line in lines {
        let ts = line["timestamp"].as_str().unwrap();
        assert!(ts > previous, "timestamps increase");
        previous = ts;
    }
    assert_eq!(lines[3]["payload"]["content"][1]["type"], "input_image");
    assert!(lines[3]["payload"]["content"][1]["image_url"].as_str().unwrap().starts_with("data:image/png;base64,"));
    assert_eq!(lines[4]["payload"]["images"].as_array().unwrap().len(), 1);
    assert_eq!(lines[5]["payload"]["encrypted_content"], "gAAAAB-api");
    assert_eq!(lines[9]["payload"]["call_id"], "call_a", "outputs follow the calls in call order");
    assert_eq!(lines[13]["payload"]["last_agent_message"], "All done.");
    // Items: the same conversation; deterministic.
    let items = session.to_native(Runtime::Codex, &Options::default()).unwrap();
    assert_eq!(items.as_array().unwrap().len(), 7);
    assert_eq!(serde_json::to_string(&items).unwrap(), serde_json::to_string(&session.to_native(Runtime::Codex, &Options::default()).unwrap()).unwrap());
    // Reimport gives the conversation back.
    let back = store.import_native(Runtime::Codex, Source::Value(export.data.clone()), &options(json!({"session_id": "back"}))).unwrap();
    let canon = |blocks: Vec<Block>| -> Vec<(Actor, Kind, String)> {
        blocks.into_iter().filter(|b| b.kind != Kind::Status).map(|b| (b.actor, b.kind, b.content)).collect()
    };
    let back = canon(back.blocks().unwrap());
    assert_eq!(back.len(), 9, "{back:?}");
    assert_eq!(back[0].2, "What is in ");
    assert_eq!(back[6].2, "a.txt");

    // Reasoning for another provider or model does not travel.
    let other = session.export(Runtime::Codex, &options(json!({"model_provider": "openai"}))).unwrap();
    assert!(!other.data.to_string().contains("gAAAAB-api"));
    assert_eq!(other.report.entries[0].action, ReportAction::Dropped);
    let err = session.export(Runtime::Codex, &options(json!({"model_provider": "openai", "strict": true}))).unwrap_err();
    assert_eq!(err.code(), "LOSSY");
    let model = session.export(Runtime::Codex, &options(json!({"target_model": "gpt-6"}))).unwrap();
    assert!(!model.data.to_string().contains("gAAAAB-api"));
}

#[test]
fn exec_json_capture_matches_the_rollout_conversation() {
    for (name, path) in rollouts() {
        let store = Store::open_in_memory().unwrap();
        let imported = store.import_file(&path, None, &Options::default()).unwrap();
        let live = store.create_session(NewSession::new()).unwrap();
        for line in std::fs::read_to_string(path.parent().unwrap().join("events.jsonl")).unwrap().lines() {
            let event: Value = serde_json::from_str(line).unwrap();
            // An app-server log (the compaction runs) holds the answers to the client's requests too.
            if event.get("id").is_some() && event.get("method").is_none() {
                continue;
            }
            live.ingest(Runtime::Codex, &event).unwrap();
        }
        // exec --json (and the app-server) carries the model's text, reasoning summaries and commands, not the prompt.
        let view = |blocks: Vec<Block>| -> Vec<(Actor, Kind, String)> {
            blocks
                .into_iter()
                .filter(|b| b.actor == Actor::Assistant && matches!(b.kind, Kind::Text | Kind::Thinking))
                .map(|b| (b.actor, b.kind, b.content))
                .collect()
        };
        // The summary a compaction asked the model for is in the rollout (an assistant item marked
        // `compaction_output`), not among the app-server's items.
        let summary = |b: &Block| b.native.as_ref().is_some_and(|n| n.data["record"]["metadata"]["compaction_output"] == true);
        let imported_blocks: Vec<Block> = imported.blocks().unwrap().into_iter().filter(|b| !summary(b)).collect();
        assert_eq!(view(live.blocks().unwrap()), view(imported_blocks), "{name}");
        let calls = |blocks: &[Block]| blocks.iter().filter(|b| b.kind == Kind::ToolUse).count();
        assert_eq!(calls(&live.blocks().unwrap()), calls(&imported.blocks().unwrap()), "{name}");
    }
}

#[test]
fn app_server_notifications_are_captured() {
    let store = Store::open_in_memory().unwrap();
    let live = store.create_session(NewSession::new()).unwrap();
    let events = [
        json!({"method":"item/completed","params":{"item":{"type":"userMessage","id":"u1","content":[{"type":"text","text":"make notes.md","text_elements":[]}]},"threadId":"t","turnId":"turn1"}}),
        json!({"method":"item/reasoning/summaryTextDelta","params":{"itemId":"rs_S1","delta":"**Thinking** about "}}),
        json!({"method":"item/completed","params":{"item":{"type":"reasoning","id":"rs_S1","summary":["**Thinking** about the patch"],"content":[]},"threadId":"t","turnId":"turn1"}}),
        json!({"method":"item/completed","params":{"item":{"type":"commandExecution","id":"call_exec_1","command":"/bin/bash -lc 'echo hi'","status":"completed","aggregatedOutput":"hi\n","exitCode":0},"threadId":"t","turnId":"turn1"}}),
        json!({"method":"item/completed","params":{"item":{"type":"agentMessage","id":"msg_S5","text":"Created notes.md.","phase":"final_answer"},"threadId":"t","turnId":"turn1"}}),
        json!({"method":"rawResponseItem/completed","params":{"threadId":"t","turnId":"turn1","item":{"type":"reasoning","id":"rs_A1","summary":[{"type":"summary_text","text":"plan"}],"content":null,"encrypted_content":"gAAAA_raw"}}}),
        json!({"method":"turn/completed","params":{"threadId":"t","turn":{"id":"turn1"}}}),
    ];
    for event in &events {
        live.ingest(Runtime::Codex, event).unwrap();
    }
    let blocks = live.blocks().unwrap();
    let kinds: Vec<(Actor, Kind, &str)> = blocks.iter().map(|b| (b.actor, b.kind, b.content.as_str())).collect();
    assert_eq!(kinds[0], (Actor::User, Kind::Text, "make notes.md"));
    assert_eq!(kinds[1], (Actor::Assistant, Kind::Thinking, "**Thinking** about the patch"));
    assert_eq!((kinds[2].1, kinds[3].1), (Kind::ToolUse, Kind::ToolResult));
    assert_eq!(kinds[4], (Actor::Assistant, Kind::Text, "Created notes.md."));
    assert_eq!(blocks[5].reasoning.as_ref().unwrap().data, "gAAAA_raw");
    assert_eq!(blocks[0].turn_id.as_deref(), Some("turn1"));
    assert_eq!(blocks.len(), 7, "deltas add nothing");
    let err = live.ingest(Runtime::Codex, &json!({"no": "type"})).unwrap_err();
    assert_eq!(err.code(), "INVALID_INPUT");
}

#[test]
fn prepare_resume_writes_where_codex_looks() {
    let store = Store::open_in_memory().unwrap();
    let session = api_session(&store);
    let home = tempfile::tempdir().unwrap();
    let plan = session
        .prepare_resume(
            Runtime::Codex,
            &ResumeOptions { home: Some(home.path().into()), options: options(json!({"model_provider": "mock"})), ..Default::default() },
        )
        .unwrap();
    assert_eq!(plan.session_id, "0193c5a0-0000-7000-8000-0000000000c0");
    assert_eq!(plan.argv, ["codex", "exec", "resume", "0193c5a0-0000-7000-8000-0000000000c0"]);
    let file = &plan.files[0];
    let rel = file.strip_prefix(home.path().join(".codex/sessions")).unwrap().to_str().unwrap().to_string();
    assert!(rel.starts_with("2026/05/28/rollout-2026-05-28T"), "{rel}");
    assert!(rel.ends_with("-0193c5a0-0000-7000-8000-0000000000c0.jsonl"), "{rel}");
    assert_eq!(read_lines(file)[0]["payload"]["model_provider"], "mock");
    assert_eq!(session.binding(Runtime::Codex).unwrap().unwrap().native_id, plan.session_id);
    // Writing again replaces the file rather than leaving two rollouts of one thread.
    let again = session
        .prepare_resume(Runtime::Codex, &ResumeOptions { home: Some(home.path().into()), ..Default::default() })
        .unwrap();
    assert_eq!(again.files, plan.files);
    // A rollout of the thread under another name (written by a replay whose first block had
    // another time, or by Codex itself) is the one rewritten: Codex's own index keeps its path and
    // refuses to resume the thread from another ("stale path"; found by the chaos campaign).
    let older = home.path().join(".codex/sessions/2026/05/27/rollout-2026-05-27T08-00-00-0193c5a0-0000-7000-8000-0000000000c0.jsonl");
    std::fs::create_dir_all(older.parent().unwrap()).unwrap();
    std::fs::rename(&plan.files[0], &older).unwrap();
    let again = session.prepare_resume(Runtime::Codex, &ResumeOptions { home: Some(home.path().into()), ..Default::default() }).unwrap();
    assert_eq!(again.files, std::slice::from_ref(&older));
    assert!(!plan.files[0].exists(), "no second rollout of the thread");
    assert_eq!(read_lines(&older)[0]["payload"]["id"], "0193c5a0-0000-7000-8000-0000000000c0");
    let codex_home = tempfile::tempdir().unwrap();
    let plan = session.prepare_resume(Runtime::Codex, &ResumeOptions { codex_home: Some(codex_home.path().into()), ..Default::default() }).unwrap();
    assert!(plan.files[0].starts_with(codex_home.path().join("sessions")));
    assert_eq!(plan.env.get("CODEX_HOME").map(String::as_str), codex_home.path().to_str());
    let err = session
        .prepare_resume(Runtime::Codex, &ResumeOptions { home: Some(home.path().into()), options: options(json!({"session_id": "../x"})), ..Default::default() })
        .unwrap_err();
    assert_eq!(err.code(), "INVALID_INPUT");
}

mod robustness {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]
        #[test]
        fn mutated_rollouts_never_panic(index in 0usize..23, cut in 1usize..3000, junk in proptest::collection::vec(any::<u8>(), 0..30), mode in 0u8..4) {
            let lines: Vec<String> = std::fs::read_to_string(rollout("reasoning-exec")).unwrap().lines().map(str::to_string).collect();
            let index = index % lines.len();
            let mut bytes = Vec::new();
            let mut sure_invalid = false;
            for (i, line) in lines.iter().enumerate() {
                if i == index {
                    match mode {
                        0 => {
                            bytes.extend(&line.as_bytes()[..(cut % line.len()).max(1)]);
                            sure_invalid = true;
                        }
                        1 => {
                            let mut v: Value = serde_json::from_str(line).unwrap();
                            v["type"] = json!(5);
                            bytes.extend(v.to_string().into_bytes());
                            sure_invalid = true;
                        }
                        2 => {
                            let at = cut % line.len();
                            bytes.extend(&line.as_bytes()[..at]);
                            bytes.extend(junk.iter().map(|b| if *b == b'\n' { b' ' } else { *b }));
                            bytes.extend(&line.as_bytes()[at..]);
                        }
                        _ => {
                            bytes.extend("[".repeat(200 + cut).into_bytes());
                            sure_invalid = true;
                        }
                    }
                } else {
                    bytes.extend(line.as_bytes());
                }
                bytes.push(b'\n');
            }
            let store = Store::open_in_memory().unwrap();
            let session = store.import_native(Runtime::Codex, Source::Bytes(bytes.clone()), &Options::default()).unwrap();
            if sure_invalid {
                let report = session.import_report().unwrap();
                prop_assert_eq!(report.entries.len(), 1);
                let wanted = format!("line {}", index + 1);
                prop_assert!(report.entries[0].message.contains(&wanted));
            }
            for format in ["items", "rollout"] {
                session.export(Runtime::Codex, &options(json!({"format": format}))).unwrap();
            }
            match store.import_native(Runtime::Codex, Source::Bytes(bytes), &options(json!({"strict": true, "session_id": "strict"}))) {
                Ok(_) => prop_assert!(!sure_invalid),
                Err(e) => {
                    prop_assert_eq!(e.code(), "INVALID_INPUT");
                    prop_assert_eq!(e.location().unwrap().line, Some(index as u64 + 1));
                }
            }
        }
    }
}

#[test]
fn rolled_back_turns_leave_the_items() {
    let path = rollout("resume");
    let mut lines = read_lines(&path);
    let texts = |items: &Value| -> Vec<String> {
        items
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["type"] == "message" && i["role"] != "developer")
            .map(|i| i["content"][0]["text"].as_str().unwrap().chars().take(30).collect())
            .collect()
    };
    let ordinal = lines.last().unwrap()["ordinal"].as_u64().unwrap() + 1;
    lines.push(json!({"timestamp": "2026-12-02T15:50:00.000Z", "ordinal": ordinal, "type": "event_msg", "payload": {"type": "thread_rolled_back", "num_turns": 1}}));
    let store = Store::open_in_memory().unwrap();
    let session = store.import_native(Runtime::Codex, Source::Value(Value::Array(lines.clone())), &Options::default()).unwrap();
    let items = session.to_native(Runtime::Codex, &Options::default()).unwrap();
    assert_eq!(texts(&items), ["<environment_context>\n  <cwd>/", "Remember the word 'pineapple'.", "Got it, I'll remember \"pineapp"]);
    // The rollback stays in the rollout itself.
    assert_eq!(session.to_native(Runtime::Codex, &options(json!({"format": "rollout"}))).unwrap(), Value::Array(lines.clone()));
    // Two turns rolled back: nothing of either turn is left.
    lines.last_mut().unwrap()["payload"]["num_turns"] = json!(2);
    let again = Options { session_id: Some("two-turns".into()), ..Options::default() };
    let session = store.import_native(Runtime::Codex, Source::Value(Value::Array(lines)), &again).unwrap();
    assert_eq!(texts(&session.to_native(Runtime::Codex, &Options::default()).unwrap()), Vec::<String>::new());
}

#[test]
fn importing_the_same_file_again_gives_the_same_ids_and_exports() {
    // Codex items carry no ids of their own: the blocks' ids are derived at import, and exports
    // derive native ids (Claude uuids, turn ids) from them.
    let path = rollout("reasoning-exec");
    let import = |id: &str| {
        let store = Store::open_in_memory().unwrap();
        let session = store.import_file(&path, None, &options(json!({"session_id": id}))).unwrap();
        let blocks = session.blocks().unwrap();
        let claude = session.to_native(Runtime::ClaudeCode, &Options::default()).unwrap();
        let opencode = session.to_native(Runtime::OpenCode, &Options::default()).unwrap();
        (blocks, claude, opencode)
    };
    let (first, claude_first, opencode_first) = import("one");
    let (again, claude_again, opencode_again) = import("one");
    assert_eq!(first.iter().map(|b| &b.id).collect::<Vec<_>>(), again.iter().map(|b| &b.id).collect::<Vec<_>>());
    assert_eq!(claude_first, claude_again);
    assert_eq!(opencode_first, opencode_again);
    let ids: std::collections::HashSet<_> = first.iter().map(|b| b.id.as_str()).collect();
    assert_eq!(ids.len(), first.len(), "ids are distinct");
    // Another session made from the same file keeps the same block ids: they are unique per session.
    let store = Store::open_in_memory().unwrap();
    let a = store.import_file(&path, None, &options(json!({"session_id": "a"}))).unwrap();
    let b = store.import_file(&path, None, &options(json!({"session_id": "b"}))).unwrap();
    assert_eq!(a.blocks().unwrap()[3].id, b.blocks().unwrap()[3].id);
}

/// Rollout text written from stored lines equals the values' text, for lines stored in shapes an
/// import never writes: `parts` that is not a count (kept whole, payload and all), an unknown
/// `at`, a hole that is missing.
#[test]
fn text_exports_of_odd_stored_lines_equal_the_values_text() {
    let store = Store::open_in_memory().unwrap();
    let session = store.create_session(NewSession::new().id("odd-codex")).unwrap();
    let native = |data: Value| Some(sna_history::Native { runtime: "codex".into(), data });
    let line = |payload: Value| json!({"timestamp": "2026-01-02T03:04:05.000Z", "type": "response_item", "payload": payload});
    let message = json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi \"there\""}]});
    let mut blocks = Vec::new();
    for (at, parts) in [("payload.content", json!(null)), ("payload", json!("1")), ("content", json!(-1)), ("elsewhere", json!(1))] {
        let mut b = Block::text(Actor::User, "");
        b.kind = Kind::Status;
        b.native = native(json!({"record": line(message.clone()), "parts": parts, "at": at, "item": {"type": "input_text", "text": null}}));
        blocks.push(b);
    }
    // A grouped line whose payload has no content to fill.
    let mut b = Block::text(Actor::User, "filled");
    b.native = native(json!({"record": line(json!({"type": "message", "role": "user"})), "parts": 1, "at": "payload.content", "item": {"type": "input_text", "text": null}}));
    blocks.push(b);
    session.extend(blocks).unwrap();
    let options = Options { format: Some("rollout".into()), ..Options::default() };
    let expected = sna_history::Format::Rollout.to_text(&session.to_native(Runtime::Codex, &options).unwrap()).unwrap();
    assert!(expected.contains("hi \\\"there\\\""), "{expected}");
    assert_eq!(session.to_native_text(Runtime::Codex, &options).unwrap(), expected);
    let (json, _) = session.export_json(Runtime::Codex, &options).unwrap();
    assert_eq!(json, serde_json::to_string(&session.to_native(Runtime::Codex, &options).unwrap()).unwrap());
}
