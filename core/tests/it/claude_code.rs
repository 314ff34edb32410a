//! Claude Code adapter: lossless round trips of the real transcripts, the writer recipe for sessions
//! built through the API, the Messages API rebuild, live capture, malformed input and resume files.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use sna_history::native::claude_code::project_slug;
use sna_history::{
    Actor, Block, Embed, Kind, NewSession, Options, Reasoning, ReportAction, ResumeOptions, Runtime, Scope, Source, Store,
};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/claude-code")
}

/// Every fixture transcript: (scenario name, path).
fn transcripts() -> Vec<(String, PathBuf)> {
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
    assert!(out.len() >= 6, "fixtures missing: {out:?}");
    out
}

fn read_records(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn options(value: Value) -> Options {
    Options::from_value(value).unwrap()
}

#[test]
fn every_fixture_round_trips_record_for_record() {
    for (name, path) in transcripts() {
        let store = Store::open_in_memory().unwrap();
        let session = store.import_file(&path, None, &Options::default()).unwrap();
        assert_eq!(session.id(), path.file_stem().unwrap().to_str().unwrap(), "{name}: session id is the file's");
        let original = read_records(&path);
        let export = session.export(Runtime::ClaudeCode, &Options::default()).unwrap();
        assert!(export.report.is_lossless(), "{name}: {:?}", export.report);
        let records = export.data.as_array().unwrap();
        assert_eq!(records.len(), original.len(), "{name}: record count");
        let texts: Vec<String> = std::fs::read_to_string(&path).unwrap().lines().map(str::to_string).collect();
        for (i, (a, b)) in records.iter().zip(&original).enumerate() {
            assert_eq!(a, b, "{name}: record {} differs", i + 1);
            // Byte for byte: key order, number formatting and escapes as Claude Code wrote them.
            assert_eq!(serde_json::to_string(a).unwrap(), texts[i], "{name}: record {} text", i + 1);
        }
        assert!(session.import_report().unwrap().is_lossless());
    }
}

#[test]
fn imported_blocks_are_canonical() {
    let store = Store::open_in_memory().unwrap();
    let path = transcripts().into_iter().find(|(n, _)| n == "tools-thinking").unwrap().1;
    let session = store.import_file(&path, Some(Runtime::ClaudeCode), &Options::default()).unwrap();
    let blocks = session.blocks().unwrap();
    let conversation: Vec<&Block> = blocks.iter().filter(|b| b.kind != Kind::Status).collect();
    let kinds: Vec<(Actor, Kind)> = conversation.iter().map(|b| (b.actor, b.kind)).collect();
    assert_eq!(
        kinds,
        vec![
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
    assert_eq!(reasoning.data, "bW9jay1zaWduYXR1cmU6dHQxOm1vY2stc2lnbmF0dXJlOnR0MTptb2NrLXNpZ25hdHVyZTp0dDE6");
    assert_eq!(reasoning.scope.model.as_deref(), Some("claude-opus-5-5"));
    assert_eq!(reasoning.scope.model_provider.as_deref(), Some("anthropic"));
    assert_eq!(thinking.provider.as_deref(), Some("claude-code"));
    assert_eq!(thinking.model.as_deref(), Some("claude-opus-5-5"));
    assert_eq!(thinking.message_id, conversation[3].message_id, "blocks of one response share message_id");
    let call = conversation[3];
    assert_eq!(call.tool.as_ref().unwrap().name.as_deref(), Some("Bash"));
    let input: Value = serde_json::from_str(&call.content).unwrap();
    assert_eq!(input, json!({"command": "ls", "description": "List project files"}));
    let result = conversation[4];
    assert_eq!(result.tool.as_ref().unwrap().call_id, call.tool.as_ref().unwrap().call_id);
    assert_eq!(result.content, "data.csv\nnotes.txt");
    assert!(conversation[0].provider.is_none(), "user blocks carry no model attribution");
    // Bookkeeping is kept in place as status blocks with the whole record.
    let first = &blocks[0];
    assert_eq!((first.actor, first.kind), (Actor::System, Kind::Status));
    assert_eq!(first.native.as_ref().unwrap().data["record"]["type"], "queue-operation");
    let info = session.info().unwrap();
    assert_eq!(info.cwd.as_deref(), Some("/home/dev/project"));
    assert!(info.title.unwrap().starts_with("What files are in this project?"));
    assert_eq!(session.switches().unwrap().len(), 1);
}

#[test]
fn image_blocks_become_embeds_and_come_back_byte_for_byte() {
    let store = Store::open_in_memory().unwrap();
    let path = transcripts().into_iter().find(|(n, _)| n == "image").unwrap().1;
    let session = store.import_file(&path, None, &Options::default()).unwrap();
    let image = session.blocks().unwrap().into_iter().find(|b| !b.embeds.is_empty()).unwrap();
    let (id, embed) = image.embeds.iter().next().unwrap();
    assert_eq!(embed.mime, "image/png");
    assert_eq!(image.content, format!("![image](embed://{id})"));
    let bytes = session.embed(id).unwrap();
    assert_eq!(&bytes[1..4], b"PNG");
    // The stored native passthrough does not hold the base64 a second time.
    assert!(!image.native.as_ref().unwrap().to_owned().data.to_string().contains("iVBORw0KGgo"));
}

#[test]
fn malformed_lines_are_kept_as_error_blocks_or_fail_in_strict_mode() {
    let good = read_records(&transcripts()[0].1);
    let mut text = String::new();
    for (i, record) in good.iter().enumerate() {
        text.push_str(&record.to_string());
        text.push('\n');
        if i == 2 {
            text.push_str("{\"type\": \"user\", \"message\": \n"); // truncated
            text.push_str("{\"type\":\"assistant\",\"uuid\":\"x\",\"message\":{\"content\":42}}\n"); // wrong type
            text.push_str("[1,2]\n");
            text.push_str("\n   \n"); // blank lines carry nothing
        }
    }
    let store = Store::open_in_memory().unwrap();
    let session = store.import_native(Runtime::ClaudeCode, Source::Text(text.clone()), &Options::default()).unwrap();
    let report = session.import_report().unwrap();
    let lines: Vec<&str> = report.entries.iter().map(|e| e.message.as_str()).collect();
    assert_eq!(report.entries.len(), 3, "{lines:?}");
    assert!(report.entries.iter().all(|e| e.action == ReportAction::Malformed));
    assert!(lines[0].contains("line 4") && lines[0].contains("EOF"), "{}", lines[0]);
    assert!(lines[1].contains("line 5") && lines[1].contains("message.content"), "{}", lines[1]);
    assert!(lines[2].contains("line 6") && lines[2].contains("an array"), "{}", lines[2]);
    let errors: Vec<Block> = session.blocks().unwrap().into_iter().filter(|b| b.kind == Kind::Error).collect();
    assert_eq!(errors[0].content, "{\"type\": \"user\", \"message\": ");
    // Export writes back what was JSON and reports the line that was not.
    let export = session.export(Runtime::ClaudeCode, &Options::default()).unwrap();
    assert_eq!(export.data.as_array().unwrap().len(), good.len() + 2);
    assert_eq!(export.report.entries.len(), 1);
    assert_eq!(export.report.entries[0].action, ReportAction::Dropped);

    let err = store
        .import_native(Runtime::ClaudeCode, Source::Text(text), &options(json!({"strict": true, "session_id": "strict-one"})))
        .unwrap_err();
    assert_eq!(err.code(), "INVALID_INPUT");
    assert_eq!(err.location().unwrap().line, Some(4), "{err}");
    assert!(err.location().unwrap().offset.unwrap() > 0, "{err}");
    assert!(err.to_string().contains("line 4"), "{err}");
    assert!(matches!(store.session("strict-one"), Err(e) if e.code() == "NOT_FOUND"), "strict import stored nothing");
}

#[test]
fn another_runtimes_history_is_refused() {
    let rollout = r#"{"timestamp":"2026-12-02T10:00:00.000Z","type":"session_meta","payload":{"id":"x"}}"#;
    let store = Store::open_in_memory().unwrap();
    let err = store.import_native(Runtime::ClaudeCode, Source::Text(format!("{rollout}\n")), &Options::default()).unwrap_err();
    assert_eq!(err.code(), "INVALID_INPUT");
    assert!(err.to_string().contains("Codex history"), "{err}");
    assert!(store.sessions().unwrap().is_empty());
}

#[test]
fn older_generations_and_unknown_types_load() {
    // Records in the shapes of 1.0.x (inline sidechain, summary title), 2.0.x (compaction) and
    // record types this version does not know.
    let lines = [
        json!({"type":"summary","summary":"Old title","leafUuid":"a2"}),
        json!({"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/home/dev/p","sessionId":"s-old","version":"1.0.98","type":"user","message":{"role":"user","content":"hello"},"uuid":"u1","timestamp":"2025-09-03T00:52:30.000Z"}),
        json!({"parentUuid":"u1","isSidechain":false,"message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-20250514","content":[{"type":"text","text":"hi"},{"type":"tool_use","id":"toolu_1","name":"Task","input":{"prompt":"x"}}],"stop_reason":null,"usage":{"input_tokens":1}},"type":"assistant","uuid":"a1","timestamp":"2025-09-03T00:52:31.000Z"}),
        json!({"parentUuid":null,"isSidechain":true,"type":"user","message":{"role":"user","content":"sub task"},"uuid":"s1","timestamp":"2025-09-03T00:52:32.000Z"}),
        json!({"parentUuid":"a1","type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_1","type":"tool_result","content":[{"type":"text","text":"done"},{"type":"text","text":"agentId: a1"}]}]},"uuid":"r1","timestamp":"2025-09-03T00:52:33.000Z","toolUseResult":{"status":"completed"}}),
        json!({"parentUuid":null,"logicalParentUuid":"r1","type":"system","subtype":"compact_boundary","content":"Conversation compacted","uuid":"c1","timestamp":"2025-09-03T00:53:00.000Z","compactMetadata":{"trigger":"manual","preTokens":100}}),
        json!({"parentUuid":"c1","type":"user","message":{"role":"user","content":"This session is being continued from a previous conversation."},"isCompactSummary":true,"uuid":"u2","timestamp":"2025-09-03T00:53:01.000Z"}),
        json!({"parentUuid":"u2","type":"progress","data":{"type":"hook_progress"},"uuid":"p1","timestamp":"2025-09-03T00:53:02.000Z"}),
        json!({"parentUuid":"p1","type":"assistant","message":{"id":"msg_2","role":"assistant","model":"claude-sonnet-4-20250514","content":"plain string reply"},"uuid":"a2","timestamp":"2025-09-03T00:53:03.000Z"}),
        json!({"type":"some-future-record","payloadish":{"x":[1,2,3]}}),
        json!({"type":"file-history-snapshot","messageId":"u1","snapshot":{"trackedFileBackups":{}}}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let store = Store::open_in_memory().unwrap();
    let session = store.import_native(Runtime::ClaudeCode, Source::Text(text), &Options::default()).unwrap();
    assert_eq!(session.id(), "s-old");
    assert_eq!(session.info().unwrap().title.as_deref(), Some("Old title"));
    let exported = session.to_native(Runtime::ClaudeCode, &Options::default()).unwrap();
    assert_eq!(exported, Value::Array(lines.to_vec()));
    // A tool result with several text parts is one block whose text joins them.
    let result = session.blocks().unwrap().into_iter().find(|b| b.kind == Kind::ToolResult).unwrap();
    assert_eq!(result.content, "done\nagentId: a1");
    // The Messages rebuild starts at the compaction summary, like Claude Code's loader.
    let body = session.to_native(Runtime::ClaudeCode, &options(json!({"format": "messages"}))).unwrap();
    assert_eq!(
        body["messages"],
        json!([
            {"role":"user","content":[{"type":"text","text":"This session is being continued from a previous conversation."}]},
            {"role":"assistant","content":[{"type":"text","text":"plain string reply"}]},
        ])
    );
}

/// The request a fixture's last model call sent, without what Claude Code generates fresh on every
/// request (system messages and `<system-reminder>` parts).
fn last_request_messages(dir: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(dir.join("requests.jsonl")).unwrap();
    let last: Value = text.lines().filter(|l| l.contains("\"messages\"")).map(|l| serde_json::from_str(l).unwrap()).next_back().unwrap();
    harness_free(last["body"]["messages"].as_array().unwrap())
}

fn harness_free(messages: &[Value]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for message in messages {
        if message["role"] == "system" {
            continue;
        }
        let mut message = message.clone();
        // A string content is one text item (the summary row after a compaction is one).
        if let Some(text) = message["content"].as_str() {
            message["content"] = json!([{"type": "text", "text": text}]);
        }
        if let Some(items) = message["content"].as_array() {
            let items: Vec<Value> = items
                .iter()
                .filter(|i| !(i["type"] == "text" && i["text"].as_str().unwrap_or("").starts_with("<system-reminder>")))
                .map(|i| {
                    let mut i = i.clone();
                    i.as_object_mut().unwrap().remove("cache_control");
                    i
                })
                .collect();
            message["content"] = Value::Array(items);
        }
        match out.last_mut() {
            Some(last) if last["role"] == message["role"] => {
                let more = message["content"].as_array().unwrap().clone();
                last["content"].as_array_mut().unwrap().extend(more);
            }
            _ => out.push(message),
        }
    }
    out
}

#[test]
fn messages_rebuild_matches_what_the_cli_sent() {
    for (name, path) in transcripts() {
        let dir = path.parent().unwrap();
        let store = Store::open_in_memory().unwrap();
        let session = store.import_file(&path, None, &Options::default()).unwrap();
        let export = session.export(Runtime::ClaudeCode, &options(json!({"format": "messages"}))).unwrap();
        assert!(export.report.is_lossless(), "{name}: {:?}", export.report);
        let ours = trim_text(export.data["messages"].as_array().unwrap().clone());
        // A live request ends the prompt's text with a newline when Claude Code put its own meta row
        // after it; the transcript holds the text as typed.
        let sent = trim_text(last_request_messages(dir));
        // The last request was sent before the final reply existed.
        assert_eq!(harness_free(&ours[..sent.len()]), sent, "{name}");
        assert_eq!(ours.len(), sent.len() + 1, "{name}: one final reply after the last request");
        assert_eq!(ours[0]["role"], "user");
    }
}

fn trim_text(mut messages: Vec<Value>) -> Vec<Value> {
    for message in &mut messages {
        if let Some(items) = message["content"].as_array_mut() {
            for item in items {
                if let Some(text) = item.get("text").and_then(Value::as_str) {
                    item["text"] = Value::String(text.trim_end().to_string());
                }
            }
        }
    }
    messages
}

fn api_session(store: &Store) -> sna_history::Session {
    let session = store.create_session(NewSession::new().id("0193c5a0-0000-7000-8000-000000000001").cwd("/home/dev/project")).unwrap();
    let model = "claude-opus-5-5";
    let png = {
        let mut p = vec![0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a];
        p.extend_from_slice(&[0u8; 24]);
        p
    };
    let mut user = Block::text(Actor::User, "What is in this picture? ![shot](embed://shot)");
    user.embeds.insert("shot".into(), Embed::from_bytes("image/png", Some("shot.png".into()), png));
    let mut thinking = Block::new(Actor::Assistant, Kind::Thinking, "Let me look.").attributed("claude-code", "anthropic", model);
    thinking.reasoning = Some(Reasoning {
        format: Reasoning::ANTHROPIC_SIGNATURE.into(),
        data: "c2lnLTE=".into(),
        scope: Scope { provider: Some("claude-code".into()), model_provider: Some("anthropic".into()), model: Some(model.into()) },
    });
    thinking.message_id = Some("m1".into());
    let mut text = Block::text(Actor::Assistant, "I'll check two files.").attributed("claude-code", "anthropic", model);
    text.message_id = Some("m1".into());
    let mut call1 = Block::tool_use("call-1", "Bash", r#"{"command":"ls"}"#).attributed("claude-code", "anthropic", model);
    call1.message_id = Some("m1".into());
    let mut call2 = Block::tool_use("call.2", "Read", r#"{"file_path":"/home/dev/project/notes.txt"}"#).attributed("claude-code", "anthropic", model);
    call2.message_id = Some("m1".into());
    let blocks = vec![
        user,
        thinking,
        text,
        call1,
        call2,
        Block::tool_result("call.2", "hello from notes", false),
        Block::tool_result("call-1", "notes.txt", false),
        Block::text(Actor::Assistant, "A picture; notes.txt says hello.").attributed("claude-code", "anthropic", model),
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
    let export = session.export(Runtime::ClaudeCode, &Options::default()).unwrap();
    let records = export.data.as_array().unwrap();
    // One call id had to change for Anthropic's id rules; nothing else was lost.
    assert_eq!(export.report.entries.len(), 1, "{:?}", export.report);
    assert_eq!(export.report.entries[0].action, ReportAction::Remapped);
    let types: Vec<&str> = records.iter().map(|r| r["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["user", "assistant", "assistant", "assistant", "assistant", "user", "user", "assistant", "last-prompt"]);
    let mut previous: Option<&Value> = None;
    for record in &records[..records.len() - 1] {
        for key in ["parentUuid", "isSidechain", "userType", "cwd", "sessionId", "version", "gitBranch", "type", "message", "uuid", "timestamp"] {
            assert!(record.get(key).is_some(), "{key} missing in {record}");
        }
        assert_eq!(record["sessionId"], "0193c5a0-0000-7000-8000-000000000001");
        match previous {
            None => assert_eq!(record["parentUuid"], Value::Null),
            Some(p) => {
                assert_eq!(record["parentUuid"], p["uuid"], "unbroken chain");
                assert!(record["timestamp"].as_str() > p["timestamp"].as_str(), "timestamps increase");
            }
        }
        assert!(!record.to_string().contains("cache_control"));
        previous = Some(record);
    }
    // One response: four records sharing message.id, each with one block, the model named.
    let ids: Vec<&Value> = records[1..5].iter().map(|r| &r["message"]["id"]).collect();
    assert!(ids.iter().all(|id| *id == ids[0]) && ids[0].as_str().unwrap().starts_with("msg_"));
    assert!(records[1..5].iter().all(|r| r["message"]["model"] == "claude-opus-5-5" && r["message"]["content"].as_array().unwrap().len() == 1));
    assert_eq!(records[1]["message"]["content"][0], json!({"type":"thinking","thinking":"Let me look.","signature":"c2lnLTE="}));
    // Results in call order right after the calls, whatever order they were appended in.
    let first_call = records[3]["message"]["content"][0]["id"].as_str().unwrap();
    assert_eq!(first_call, "call-1");
    assert_eq!(records[5]["message"]["content"][0]["tool_use_id"], "call-1");
    assert_eq!(records[5]["sourceToolAssistantUUID"], records[3]["uuid"]);
    let remapped = records[4]["message"]["content"][0]["id"].as_str().unwrap();
    assert!(remapped.starts_with("toolu_"));
    assert_eq!(records[6]["message"]["content"][0]["tool_use_id"], remapped);
    // The user's image is a base64 image block.
    let image = &records[0]["message"]["content"][1];
    assert_eq!(image["type"], "image");
    assert_eq!(image["source"]["media_type"], "image/png");
    let last = records.last().unwrap();
    assert_eq!(last["leafUuid"], records[7]["uuid"]);
    // Deterministic: the same session exports byte-identically twice.
    let again = session.to_native(Runtime::ClaudeCode, &Options::default()).unwrap();
    assert_eq!(serde_json::to_string(&again).unwrap(), serde_json::to_string(&export.data).unwrap());

    // Re-importing the export gives the same conversation back.
    let other = Store::open_in_memory().unwrap();
    let back = other.import_native(Runtime::ClaudeCode, Source::Value(export.data.clone()), &Options::default()).unwrap();
    let canon = |blocks: Vec<Block>| -> Vec<(Actor, Kind, String, Option<String>)> {
        blocks
            .into_iter()
            .filter(|b| b.kind != Kind::Status)
            .map(|b| (b.actor, b.kind, b.content, b.tool.and_then(|t| t.name)))
            .collect()
    };
    let mut original = canon(session.blocks().unwrap());
    // Results come back in call order.
    original.swap(5, 6);
    let roundtrip = canon(back.blocks().unwrap());
    // The user's text and image are separate content items natively.
    assert_eq!(roundtrip[0].2, "What is in this picture? ");
    assert_eq!(roundtrip[1].2.split("](embed://").next(), Some("![image"));
    assert_eq!(&roundtrip[2..], &original[1..]);
}

#[test]
fn messages_obey_the_api_rules() {
    let store = Store::open_in_memory().unwrap();
    let session = api_session(&store);
    session.append(Block::text(Actor::System, "Be brief.")).unwrap();
    session.append(Block::tool_use("dangling", "Bash", r#"{"command":"true"}"#)).unwrap();
    let export = session.export(Runtime::ClaudeCode, &options(json!({"format": "messages", "target_model": "claude-opus-5-5"}))).unwrap();
    let body = &export.data;
    assert_eq!(body["system"], json!([{"type":"text","text":"Be brief."}]));
    let messages = body["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "user", "assistant", "user"]);
    assert_eq!(messages[1]["content"][0]["signature"], "c2lnLTE=");
    let results = messages[2]["content"].as_array().unwrap();
    assert!(results.iter().all(|r| r["type"] == "tool_result"));
    // The unanswered call got a synthetic error result, reported.
    assert_eq!(messages[4]["content"][0]["is_error"], true);
    assert!(export.report.entries.iter().any(|e| e.action == ReportAction::Synthesized));
    // Another target model: the signature is not valid there, so the thinking is dropped.
    let other = session.export(Runtime::ClaudeCode, &options(json!({"format": "messages", "target_model": "claude-haiku-9"}))).unwrap();
    assert!(!other.data.to_string().contains("c2lnLTE="));
    assert!(other.report.entries.iter().any(|e| e.action == ReportAction::Dropped));
    // strict: any loss is LOSSY.
    let err = session.export(Runtime::ClaudeCode, &options(json!({"format": "messages", "target_model": "claude-haiku-9", "strict": true}))).unwrap_err();
    assert_eq!(err.code(), "LOSSY");
}

#[test]
fn stream_json_capture_equals_the_transcript() {
    for (name, path) in transcripts() {
        let dir = path.parent().unwrap();
        let store = Store::open_in_memory().unwrap();
        let imported = store.import_file(&path, None, &Options::default()).unwrap();
        let live = store.create_session(NewSession::new()).unwrap();
        for line in std::fs::read_to_string(dir.join("events.jsonl")).unwrap().lines() {
            let event: Value = serde_json::from_str(line).unwrap();
            live.ingest(Runtime::ClaudeCode, &event).unwrap();
        }
        let conversation = |blocks: Vec<Block>| -> Vec<Value> {
            blocks
                .into_iter()
                .filter(|b| !matches!(b.kind, Kind::Status | Kind::Error))
                // Claude Code's own meta rows (caveats, image paths) are in the file, not on stdout.
                .filter(|b| b.native.as_ref().is_none_or(|n| n.data["record"]["isMeta"] != true))
                .map(|b| json!([b.actor, b.kind, b.content, b.tool, b.reasoning, b.embeds, b.model, b.message_id]))
                .collect()
        };
        let mut expected = conversation(imported.blocks().unwrap());
        let from_events = conversation(live.blocks().unwrap());
        // `claude -p 'prompt'` does not echo the prompt on stdout (stream-json input with
        // --replay-user-messages does): then the file has the prompts the runs were given (and
        // the row `/compact` leaves: the command it ran) as user texts more.
        let echoed = from_events.first().is_some_and(|b| b[0] == "user");
        if !echoed {
            let manifest: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
            let prompts: Vec<&str> = manifest["turns"].as_array().unwrap().iter().map(|t| t["prompt"].as_str().unwrap()).collect();
            let before = expected.len();
            expected.retain(|b| {
                let text = b[2].as_str().unwrap_or("");
                !(b[0] == "user" && b[1] == "text" && (prompts.contains(&text) || text.starts_with("<command-name>/compact</command-name>")))
            });
            assert!(expected.len() < before, "{name}: the file has the prompt");
        }
        assert_eq!(from_events, expected, "{name}");
    }
}

#[test]
fn project_folder_names_follow_claude_code() {
    assert_eq!(project_slug("/home/dev/project"), "-home-dev-project");
    assert_eq!(project_slug("/Users/foo/.config/app"), "-Users-foo--config-app");
    assert_eq!(project_slug("/home/u/My Proj/été/😀.x_y"), "-home-u-My-Proj--t-----x-y");
    let long = format!("/home/dev/{}", "a".repeat(227));
    assert_eq!(long.len(), 237);
    let slug = project_slug(&long);
    assert_eq!(slug.len(), 200 + 1 + slug.rsplit('-').next().unwrap().len());
    assert!(slug.starts_with("-home-dev-aaaa"));
    // Java-style hash of the path, base 36.
    let mut h: i32 = 0;
    for u in long.encode_utf16() {
        h = h.wrapping_mul(31).wrapping_add(u as i32);
    }
    let mut n = (h as i64).unsigned_abs();
    let mut digits = String::new();
    while n > 0 {
        digits.insert(0, std::char::from_digit((n % 36) as u32, 36).unwrap());
        n /= 36;
    }
    assert!(slug.ends_with(&format!("-{digits}")));
}

#[test]
fn prepare_resume_writes_where_claude_looks_and_refuses_escapes() {
    let store = Store::open_in_memory().unwrap();
    let session = api_session(&store);
    let home = tempfile::tempdir().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let plan = session
        .prepare_resume(
            Runtime::ClaudeCode,
            &ResumeOptions { home: Some(home.path().into()), cwd: Some(cwd.path().into()), ..Default::default() },
        )
        .unwrap();
    let physical = std::fs::canonicalize(cwd.path()).unwrap();
    let expected = home.path().join(".claude/projects").join(project_slug(physical.to_str().unwrap())).join(format!("{}.jsonl", plan.session_id));
    assert_eq!(plan.files, vec![expected.clone()]);
    assert_eq!(plan.argv, vec!["claude", "--resume", plan.session_id.as_str()]);
    let written = read_records(&expected);
    assert_eq!(written.len(), 9);
    assert_eq!(written[0]["cwd"], physical.to_str().unwrap());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&expected).unwrap().permissions().mode() & 0o777, 0o600);
    }
    let binding = session.binding(Runtime::ClaudeCode).unwrap().unwrap();
    assert_eq!(binding.native_id, plan.session_id);
    assert_eq!(binding.through_seq, 7);

    let config = tempfile::tempdir().unwrap();
    let plan = session
        .prepare_resume(
            Runtime::ClaudeCode,
            &ResumeOptions { config_dir: Some(config.path().into()), cwd: Some(cwd.path().into()), ..Default::default() },
        )
        .unwrap();
    assert!(plan.files[0].starts_with(config.path().join("projects")));
    assert_eq!(plan.env.get("CLAUDE_CONFIG_DIR").map(String::as_str), config.path().to_str());

    for bad in ["../../etc/passwd", "not-a-uuid"] {
        let err = session
            .prepare_resume(
                Runtime::ClaudeCode,
                &ResumeOptions {
                    home: Some(home.path().into()),
                    cwd: Some(cwd.path().into()),
                    options: options(json!({ "session_id": bad })),
                    ..Default::default()
                },
            )
            .unwrap_err();
        assert_eq!(err.code(), "INVALID_INPUT", "{bad}: {err}");
    }
    let err = session
        .prepare_resume(Runtime::ClaudeCode, &ResumeOptions { home: Some(home.path().into()), cwd: Some("relative/dir".into()), ..Default::default() })
        .unwrap_err();
    assert_eq!(err.code(), "INVALID_INPUT");
}

#[test]
fn lone_surrogates_are_read_as_replacement_characters_and_reported() {
    let line = r#"{"parentUuid":null,"type":"user","message":{"role":"user","content":"cut emoji \ud83d and \udc00 but a pair \ud83d\ude00 and a literal \\ud800"},"uuid":"u1","timestamp":"2026-01-01T00:00:00.000Z","sessionId":"s-sur"}"#;
    let store = Store::open_in_memory().unwrap();
    let session = store.import_native(Runtime::ClaudeCode, Source::Text(format!("{line}\n")), &Options::default()).unwrap();
    let block = &session.blocks().unwrap()[0];
    assert_eq!(block.content, "cut emoji \u{fffd} and \u{fffd} but a pair 😀 and a literal \\ud800");
    let report = session.import_report().unwrap();
    assert_eq!(report.entries.len(), 1);
    assert_eq!(report.entries[0].action, ReportAction::Degraded);
    assert!(report.entries[0].message.contains("line 1"), "{:?}", report.entries[0]);
}

#[test]
fn subagent_transcripts_import_as_their_own_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let parent = "491e126e-1e71-469c-ade2-fcc8af567c74";
    // 2.1.x layout: <sid>/subagents/agent-<id>.jsonl with a .meta.json beside it.
    let sub = dir.path().join(parent).join("subagents");
    std::fs::create_dir_all(&sub).unwrap();
    let rows = [
        json!({"parentUuid":null,"isSidechain":true,"userType":"external","cwd":"/home/dev/project","sessionId":parent,"version":"2.1.39","agentId":"a881341","type":"user","message":{"role":"user","content":"Find the hooks contract."},"uuid":"s1","timestamp":"2026-02-11T21:24:19.366Z"}),
        json!({"parentUuid":"s1","isSidechain":true,"sessionId":parent,"agentId":"a881341","message":{"model":"claude-haiku-4-5-20251001","id":"msg_012W","type":"message","role":"assistant","content":[{"type":"text","text":"Here it is."}],"stop_reason":null},"type":"assistant","uuid":"s2","timestamp":"2026-02-11T21:24:20.000Z"}),
    ];
    let text: String = rows.iter().map(|r| format!("{r}\n")).collect();
    let file = sub.join("agent-a881341.jsonl");
    std::fs::write(&file, &text).unwrap();
    std::fs::write(sub.join("agent-a881341.meta.json"), r#"{"agentType":"Explore","description":"Hooks contract"}"#).unwrap();
    // 2.0.x layout: agent-<id>.jsonl beside the session files.
    let old = dir.path().join("agent-af1ff21.jsonl");
    std::fs::write(&old, &text).unwrap();

    let store = Store::open_in_memory().unwrap();
    let session = store.import_file(&file, None, &Options::default()).unwrap();
    assert_eq!(session.id(), format!("{parent}/agent-a881341"));
    assert_eq!(session.info().unwrap().title.as_deref(), Some("subagent Explore: Hooks contract"));
    assert_eq!(session.to_native(Runtime::ClaudeCode, &Options::default()).unwrap(), Value::Array(rows.to_vec()));
    let body = session.to_native(Runtime::ClaudeCode, &options(json!({"format": "messages"}))).unwrap();
    assert_eq!(body["messages"].as_array().unwrap().len(), 2, "a subagent's own chain is its conversation");
    let old_session = store.import_file(&old, None, &Options::default()).unwrap();
    assert_eq!(old_session.id(), format!("{parent}/agent-af1ff21"));
    assert_eq!(old_session.info().unwrap().title.as_deref(), Some("Find the hooks contract."));
}

mod robustness {
    use super::*;
    use proptest::prelude::*;

    fn lines() -> Vec<String> {
        let path = transcripts().into_iter().find(|(n, _)| n == "tools-thinking").unwrap().1;
        std::fs::read_to_string(path).unwrap().lines().map(str::to_string).collect()
    }

    #[derive(Debug, Clone)]
    enum Mutation {
        Truncate(usize),
        WrongType(usize),
        RandomBytes(Vec<u8>, usize),
        DeepNesting(usize),
        LoneSurrogate(usize),
    }

    fn mutation() -> impl Strategy<Value = Mutation> {
        prop_oneof![
            (1usize..5000).prop_map(Mutation::Truncate),
            (0usize..6).prop_map(Mutation::WrongType),
            (proptest::collection::vec(any::<u8>(), 1..40), 0usize..5000).prop_map(|(b, at)| Mutation::RandomBytes(b, at)),
            (129usize..20000).prop_map(Mutation::DeepNesting),
            (0usize..5000).prop_map(Mutation::LoneSurrogate),
        ]
    }

    /// Applies a mutation to one line; says whether the line is sure to be invalid afterwards.
    fn apply(line: &str, m: &Mutation) -> (Vec<u8>, bool) {
        match m {
            Mutation::Truncate(n) => {
                let cut = n % line.len().max(1);
                (line.as_bytes()[..cut.max(1)].to_vec(), true)
            }
            Mutation::WrongType(k) => {
                let mut value: Value = serde_json::from_str(line).unwrap();
                let map = value.as_object_mut().unwrap();
                let conversation = matches!(map.get("type").and_then(Value::as_str), Some("user" | "assistant"));
                match (k, conversation) {
                    (0, true) => map.insert("message".into(), json!(42)),
                    (1, true) => {
                        map.get_mut("message").unwrap()["content"] = json!({"not": "a list"});
                        None
                    }
                    (2, true) => {
                        map.get_mut("message").unwrap()["content"] = json!([1, 2]);
                        None
                    }
                    (3, _) => map.insert("uuid".into(), json!([])),
                    (4, _) => map.insert("type".into(), json!(7)),
                    _ => map.remove("type"),
                };
                (value.to_string().into_bytes(), true)
            }
            Mutation::RandomBytes(bytes, at) => {
                let mut out = line.as_bytes().to_vec();
                let at = at % (out.len() + 1);
                out.splice(at..at, bytes.iter().copied().map(|b| if b == b'\n' { b' ' } else { b }));
                (out, false)
            }
            Mutation::DeepNesting(depth) => {
                let mut s = "[".repeat(*depth);
                s.push_str(&"]".repeat(*depth));
                (s.into_bytes(), true)
            }
            Mutation::LoneSurrogate(at) => {
                // Inside the first string value after `at`, when there is one.
                let mut start = at % line.len().max(1);
                // A byte offset inside a multi-byte character moves to the character's end.
                while !line.is_char_boundary(start) {
                    start += 1;
                }
                let mut out = line.to_string();
                if let Some(pos) = line[start..].find(":\"").map(|p| p + start + 2) {
                    out.insert_str(pos, "\\udead");
                }
                (out.into_bytes(), false)
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 96, failure_persistence: None, ..ProptestConfig::default() })]
        #[test]
        fn mutated_transcripts_never_panic_and_strict_names_the_line(index in 0usize..35, m in mutation()) {
            let lines = lines();
            let index = index % lines.len();
            let mut bytes = Vec::new();
            let mut sure_invalid = false;
            for (i, line) in lines.iter().enumerate() {
                if i == index {
                    let (mutated, invalid) = apply(line, &m);
                    sure_invalid = invalid;
                    bytes.extend(mutated);
                } else {
                    bytes.extend(line.as_bytes());
                }
                bytes.push(b'\n');
            }
            let store = Store::open_in_memory().unwrap();
            let session = store.import_native(Runtime::ClaudeCode, Source::Bytes(bytes.clone()), &Options::default());
            let session = session.expect("a lenient import keeps every line");
            let report = session.import_report().unwrap();
            if sure_invalid {
                prop_assert_eq!(report.entries.len(), 1);
                let wanted = format!("line {}", index + 1);
                prop_assert!(report.entries[0].message.contains(&wanted), "{:?}", report.entries[0]);
            }
            for format in ["transcript", "messages"] {
                session.export(Runtime::ClaudeCode, &options(json!({"format": format}))).unwrap();
            }
            let strict = store.import_native(
                Runtime::ClaudeCode,
                Source::Bytes(bytes),
                &options(json!({"strict": true, "session_id": "strict"})),
            );
            match strict {
                Ok(_) => prop_assert!(!sure_invalid),
                Err(e) => {
                    prop_assert_eq!(e.code(), "INVALID_INPUT");
                    prop_assert_eq!(e.location().unwrap().line, Some(index as u64 + 1), "{}", e);
                }
            }
        }
    }
}

#[test]
fn input_without_timestamps_imports_to_the_same_ids_every_time() {
    // The Messages API shape has no timestamps: blocks are stamped with the time of import, and
    // their ids must not depend on it.
    let messages = serde_json::json!([
        {"role": "user", "content": "List the files."},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.txt"}]},
        {"role": "assistant", "content": "One file."}
    ]);
    let ids = || {
        let store = Store::open_in_memory().unwrap();
        let options = Options::from_value(serde_json::json!({"format": "messages"})).unwrap();
        let session = store.import_native(Runtime::ClaudeCode, Source::Value(messages.clone()), &options).unwrap();
        session.blocks().unwrap().into_iter().map(|b| b.id).collect::<Vec<_>>()
    };
    let first = ids();
    std::thread::sleep(std::time::Duration::from_millis(5));
    assert_eq!(first.len(), 4);
    assert_eq!(first, ids());
}

/// Text exports are written from the stored records; records the store holds in shapes an import
/// never writes (built through the API) are read in full instead, and every way gives the text of
/// the values.
#[test]
fn text_exports_of_odd_stored_records_equal_the_values_text() {
    let store = Store::open_in_memory().unwrap();
    let session = store.create_session(NewSession::new().id("odd")).unwrap();
    let native = |data: Value| Some(sna_history::Native { runtime: "claude-code".into(), data });
    let record = |ty: &str, uuid: &str, message: Value| {
        json!({"type": ty, "uuid": uuid, "sessionId": "0b2c7a1e-3f4d-4e5f-8a9b-0c1d2e3f4a5b", "timestamp": "2026-01-02T03:04:05.000Z", "message": message})
    };
    let mut blocks = Vec::new();
    // A grouped record whose message has no content key: the content is appended.
    let mut b = Block::text(Actor::User, "no content key \"quoted\"\n");
    b.native = native(json!({"record": record("user", "u1", json!({"role": "user"})), "parts": 1}));
    blocks.push(b);
    // The data's members in another order than an import writes them.
    let mut b = Block::text(Actor::User, "parts first");
    b.native = native(json!({"parts": 1, "record": record("user", "u2", json!({"role": "user", "content": null}))}));
    blocks.push(b);
    // A record kept whole whose message content is inline, with a tool call in it.
    let mut b = Block::text(Actor::Assistant, "");
    b.kind = Kind::Status;
    b.native = native(json!({"record": record("assistant", "u3", json!({"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}]}))}));
    blocks.push(b);
    // Data that is a string, and data that is not an object: not records at all.
    let mut b = Block::text(Actor::User, "string data");
    b.native = native(json!("just a string"));
    blocks.push(b);
    let mut b = Block::text(Actor::User, "array data");
    b.native = native(json!([1, 2, {"record": 3}]));
    blocks.push(b);
    // `parts` that is not a count: the writer keeps the record whole, content and all.
    let mut b = Block::text(Actor::System, "");
    b.kind = Kind::Status;
    b.native = native(json!({"record": record("system", "u5", json!({"role": "user", "content": "kept as it is"})), "parts": null}));
    blocks.push(b);
    // A grouped record in the import's own layout, with escapes around the hole.
    let mut b = Block::text(Actor::User, "ünïcödé \u{1F600} \\ \t");
    b.native = native(json!({"record": record("user", "u4", json!({"role": "user", "content": null, "x": "}\"{"})), "parts": 1}));
    blocks.push(b);
    session.extend(blocks).unwrap();
    let options = Options::default();
    let values = session.to_native(Runtime::ClaudeCode, &options).unwrap();
    let expected = sna_history::Format::Transcript.to_text(&values).unwrap();
    assert!(expected.contains("no content key") && expected.contains("kept as it is"), "{expected}");
    assert_eq!(session.to_native_text(Runtime::ClaudeCode, &options).unwrap(), expected);
    let mut written = Vec::new();
    session.export_to(&mut written, Runtime::ClaudeCode, &options).unwrap();
    assert_eq!(String::from_utf8(written).unwrap(), expected);
}

/// A writer that fails gives an IO error, not a panic or a partial success.
#[test]
fn export_to_a_failing_writer_is_an_io_error() {
    struct Broken;
    impl std::io::Write for Broken {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("disk on fire"))
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let store = Store::open_in_memory().unwrap();
    let (_, path) = transcripts().into_iter().next().unwrap();
    let session = store.import_file(&path, None, &Options::default()).unwrap();
    let err = session.export_to(Broken, Runtime::ClaudeCode, &Options::default()).unwrap_err();
    assert_eq!(err.code(), "IO", "{err}");
    assert!(err.to_string().contains("disk on fire"), "{err}");
}

/// A native column written otherwise than the store writes it (spaces, as another tool might) is
/// read in full, and the text export still equals the values' text.
#[test]
fn native_columns_written_otherwise_are_read_in_full() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("odd.db");
    let store = Store::open(&path).unwrap();
    let session = store.create_session(NewSession::new().id("spaced")).unwrap();
    let native = |data: Value| Some(sna_history::Native { runtime: "claude-code".into(), data });
    let mut string = Block::text(Actor::User, "string data");
    string.native = native(json!("{\"record\": not json"));
    let mut record = Block::text(Actor::User, "grouped");
    record.native = native(json!({"record": {"type": "user", "uuid": "u1", "message": {"role": "user", "content": null}}, "parts": 1}));
    session.extend(vec![string, record]).unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    let respaced = conn
        .execute("UPDATE blocks SET native = replace(replace(native, '\":', '\": '), ',\"', ', \"')", [])
        .unwrap();
    assert_eq!(respaced, 2);
    drop(conn);
    let options = Options::default();
    let expected = sna_history::Format::Transcript.to_text(&session.to_native(Runtime::ClaudeCode, &options).unwrap()).unwrap();
    assert!(expected.contains("grouped") && expected.contains("string data"), "{expected}");
    assert_eq!(session.to_native_text(Runtime::ClaudeCode, &options).unwrap(), expected);
}

/// `export_to_path` replaces a file whole through a link and keeps its permissions; a path that is
/// not a regular file is written to as it is.
#[test]
fn export_to_path_keeps_links_permissions_and_devices() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_in_memory().unwrap();
    let (_, transcript) = transcripts().into_iter().next().unwrap();
    let session = store.import_file(&transcript, None, &Options::default()).unwrap();
    let expected = session.to_native_text(Runtime::ClaudeCode, &Options::default()).unwrap();
    let real = dir.path().join("real.jsonl");
    std::fs::write(&real, "old\n").unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
    let link = dir.path().join("link.jsonl");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    session.export_to_path(&link, Runtime::ClaudeCode, &Options::default()).unwrap();
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link stays a link");
    assert_eq!(std::fs::read_to_string(&real).unwrap(), expected);
    assert_eq!(std::fs::metadata(&real).unwrap().permissions().mode() & 0o777, 0o600);
    let mut names: Vec<String> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    assert_eq!(names, ["link.jsonl", "real.jsonl"], "no temporary file left");
    session.export_to_path("/dev/null", Runtime::ClaudeCode, &Options::default()).unwrap();
    assert!(!std::fs::metadata("/dev/null").unwrap().is_file(), "/dev/null is still a device");
    let err = session.export_to_path(dir.path(), Runtime::ClaudeCode, &Options::default()).unwrap_err();
    assert_eq!(err.code(), "IO", "{err}");
}
