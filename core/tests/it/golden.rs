//! Behaviour kept byte for byte: for every fixture (each runtime's real files, their live events, a
//! session built through the API, a file with damaged lines) the imported blocks, the import
//! report, every export (each runtime, each format, with its report), the re-import of each export
//! and the files and plan of every resume, compared with the golden set under `tests/golden`.
//!
//! The golden set was recorded before the adapters were restructured (issue 16) and must not change
//! unless behaviour is meant to change. `SNA_BLESS=1 cargo test -p sna-history --test it golden::` records it anew;
//! review the diff before committing it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use sna_history::{
    Actor, Block, Embed, ForeignReasoning, Kind, NewSession, Options, Reasoning, ResumeOptions, Runtime, Scope, Session, Source,
    Store,
};

const RUNTIMES: &[Runtime] = Runtime::ALL;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// One fixture: its name in the golden set and how to make its session.
struct Case {
    name: String,
    make: Box<dyn Fn(&Store) -> Session>,
}

fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for &runtime in RUNTIMES {
        let dir = root().join("tests/fixtures").join(runtime.as_str());
        let mut scenarios: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
        scenarios.sort();
        for scenario in scenarios {
            let scenario_name = scenario.file_name().unwrap().to_str().unwrap().to_string();
            let mut files: Vec<PathBuf> = std::fs::read_dir(&scenario).unwrap().map(|e| e.unwrap().path()).collect();
            files.sort();
            for file in files {
                let file_name = file.file_name().unwrap().to_str().unwrap().to_string();
                let native = match runtime {
                    Runtime::OpenCode => file_name == "export.json" || file_name == "opencode.db",
                    _ => file_name.ends_with(".jsonl") && !["events.jsonl", "requests.jsonl"].contains(&file_name.as_str()),
                };
                if native {
                    let label = if file_name == "opencode.db" { "db" } else { "file" };
                    let path = file.clone();
                    cases.push(Case {
                        name: format!("{runtime}/{scenario_name}/{label}"),
                        make: Box::new(move |store| store.import_file(&path, None, &Options::default()).unwrap()),
                    });
                }
                // The events of Gemini CLI, Pi, Qwen Code and Copilot CLI are not captured through `ingest` (their live drivers
                // read the session file).
                if file_name == "events.jsonl" && !matches!(runtime, Runtime::GeminiCli | Runtime::Pi | Runtime::QwenCode | Runtime::CopilotCli) {
                    let path = file.clone();
                    cases.push(Case {
                        name: format!("{runtime}/{scenario_name}/events"),
                        make: Box::new(move |store| ingest_events(store, runtime, &path)),
                    });
                }
            }
        }
    }
    cases.push(Case { name: "api/mixed".into(), make: Box::new(api_session) });
    cases.push(Case { name: "damaged/claude-code".into(), make: Box::new(|s| damaged(s, Runtime::ClaudeCode)) });
    cases.push(Case { name: "damaged/codex".into(), make: Box::new(|s| damaged(s, Runtime::Codex)) });
    cases
}

/// A session fed the live events of a fixture, one `ingest` each. Ingested blocks get new ids and,
/// without a time of their own, the time of ingestion; the golden session holds the same blocks with
/// ids `ev-<seq>` and such times replaced by a fixed clock, so that what follows is reproducible.
fn ingest_events(store: &Store, runtime: Runtime, path: &Path) -> Session {
    let started = sna_history::Timestamp::now();
    let scratch = store.create_session(NewSession::new().id("scratch").cwd("/home/dev/project")).unwrap();
    for line in std::fs::read_to_string(path).unwrap().lines().filter(|l| !l.trim().is_empty()) {
        let event: Value = serde_json::from_str(line).unwrap();
        // An app-server log holds the answers to the client's requests too: they are not events.
        if event.get("id").is_some() && event.get("method").is_none() && event.get("type").is_none() {
            continue;
        }
        scratch.ingest(runtime, &event).unwrap();
    }
    let blocks: Vec<Block> = scratch.blocks().unwrap().into_iter().map(|mut block| {
        block.id = format!("ev-{}", block.seq);
        if block.created_at >= started {
            block.created_at = sna_history::Timestamp::from_millis(1_790_000_000_000 + block.seq as i64 * 1000).unwrap();
        }
        block
    }).collect();
    let session = store.create_session(NewSession::new().id(format!("events-{runtime}")).cwd("/home/dev/project")).unwrap();
    session.extend(blocks).unwrap();
    store.delete_session("scratch").unwrap();
    session
}

/// A session built through the API: every kind, three runtimes' attribution, an embed, reasoning
/// of two scopes, an unanswered call and an id the targets must remap.
fn api_session(store: &Store) -> Session {
    let session = store.create_session(NewSession::new().id("api-mixed").title("Mixed").cwd("/home/dev/project")).unwrap();
    let at = |ms: i64| sna_history::Timestamp::from_millis(ms).unwrap();
    let mut blocks = Vec::new();
    let mut push = |mut block: Block, ms: i64| {
        block.created_at = at(ms);
        block.id = format!("api-{ms}");
        blocks.push(block);
    };
    let png = Embed::from_bytes("image/png", Some("dot.png".into()), vec![0x89, b'P', b'N', b'G', 1, 2, 3]);
    let mut with_image = Block::text(Actor::User, format!("What is in ![dot.png](embed://{})?", embed_id(&png)));
    with_image.embeds.insert(embed_id(&png), png);
    push(with_image, 1_780_000_000_000);
    let mut thinking = Block::new(Actor::Assistant, Kind::Thinking, "Look at the picture first.");
    thinking.reasoning = Some(Reasoning { format: "anthropic-signature".into(), data: "c2lnbmF0dXJl".into(), scope: scope("claude-code", "anthropic", "claude-sonnet-4-6") });
    push(thinking.attributed("claude-code", "anthropic", "claude-sonnet-4-6"), 1_780_000_001_000);
    push(Block::text(Actor::Assistant, "A dot. Let me list the files.").attributed("claude-code", "anthropic", "claude-sonnet-4-6"), 1_780_000_002_000);
    push(
        Block::tool_use("call with spaces!", "Bash", r#"{"command":"ls -la"}"#).attributed("claude-code", "anthropic", "claude-sonnet-4-6"),
        1_780_000_003_000,
    );
    push(Block::tool_result("call with spaces!", "a.txt\nb.txt", false), 1_780_000_004_000);
    push(Block::tool_use("call_unanswered", "shell", r#"{"command":["cat","a.txt"]}"#).attributed("codex", "openai", "gpt-5.1-codex"), 1_780_000_005_000);
    push(Block::text(Actor::User, "Now edit it.").attributed("codex", "openai", "gpt-5.1-codex"), 1_780_000_006_000);
    let mut encrypted = Block::new(Actor::Assistant, Kind::Thinking, "Editing a.txt.");
    encrypted.reasoning = Some(Reasoning { format: "openai-encrypted".into(), data: "gAAAAB-opaque".into(), scope: scope("codex", "openai", "gpt-5.1-codex") });
    push(encrypted.attributed("codex", "openai", "gpt-5.1-codex"), 1_780_000_007_000);
    push(Block::tool_use("call_edit", "edit", r#"{"filePath":"/home/dev/project/a.txt","oldString":"a","newString":"b"}"#).attributed("opencode", "anthropic", "claude-sonnet-4-6"), 1_780_000_008_000);
    push(Block::tool_result("call_edit", "no such text", true), 1_780_000_009_000);
    push(Block::new(Actor::System, Kind::Status, "compacted").attributed("opencode", "anthropic", "claude-sonnet-4-6"), 1_780_000_010_000);
    push(Block::new(Actor::Assistant, Kind::Error, "rate limited").attributed("opencode", "anthropic", "claude-sonnet-4-6"), 1_780_000_011_000);
    push(Block::text(Actor::Assistant, "Done.").attributed("opencode", "anthropic", "claude-sonnet-4-6"), 1_780_000_012_000);
    session.extend(blocks).unwrap();
    session
}

fn scope(provider: &str, model_provider: &str, model: &str) -> Scope {
    Scope { provider: Some(provider.into()), model_provider: Some(model_provider.into()), model: Some(model.into()) }
}

fn embed_id(embed: &Embed) -> String {
    format!("sha256-{}", &embed.sha256[..24])
}

/// A fixture transcript with a line that is not JSON and a record of the wrong shape.
fn damaged(store: &Store, runtime: Runtime) -> Session {
    let dir = root().join("tests/fixtures").join(runtime.as_str()).join("basic");
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let name = p.file_name().unwrap().to_str().unwrap();
            name.ends_with(".jsonl") && name != "events.jsonl" && name != "requests.jsonl"
        })
        .unwrap();
    let text = std::fs::read_to_string(file).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines.insert(2, "{\"type\": \"user\", \"message\": ".into());
    let bad = match runtime {
        Runtime::Codex => r#"{"timestamp":"2026-12-02T15:47:38.500Z","type":"response_item","payload":{"type":"message","role":"user","content":"not a list"}}"#,
        _ => r#"{"type":"assistant","uuid":"00000000-0000-4000-8000-000000000001","timestamp":"2026-12-02T15:47:38.500Z","message":{"role":"assistant","content":7}}"#,
    };
    lines.insert(4, bad.into());
    let options = Options { session_id: Some(format!("damaged-{runtime}")), ..Options::default() };
    store.import_native(runtime, Source::Text(lines.join("\n") + "\n"), &options).unwrap()
}

/// A result or its error, as text.
fn shown<T>(result: sna_history::Result<T>, ok: impl FnOnce(T) -> Value) -> Value {
    match result {
        Ok(value) => ok(value),
        Err(e) => json!({ "error": e.code(), "message": e.to_string() }),
    }
}

fn blocks_json(session: &Session) -> Value {
    Value::Array(session.blocks().unwrap().iter().map(|b| serde_json::to_value(b).unwrap()).collect())
}

/// Blocks read back from an export: a format without record ids gets new ones (UUIDv7) and, without
/// times, the time of the import; both are replaced by their place.
fn reproducible(mut blocks: Value, started: sna_history::Timestamp) -> Value {
    for block in blocks.as_array_mut().unwrap() {
        let seq = block["seq"].clone();
        let id = block["id"].as_str().unwrap();
        if uuid::Uuid::try_parse(id).is_ok_and(|u| u.get_version_num() == 7) {
            block["id"] = json!(format!("<new id {seq}>"));
        }
        let at: sna_history::Timestamp = serde_json::from_value(block["created_at"].clone()).unwrap();
        if at >= started {
            block["created_at"] = json!(format!("<import time {seq}>"));
        }
    }
    blocks
}

/// Every artifact of one case, as (file name, text).
fn artifacts(case: &Case, scratch: &Path) -> BTreeMap<String, String> {
    let started = sna_history::Timestamp::now();
    let store = Store::open_in_memory().unwrap();
    // An artifact equal to one already made names it instead of repeating it.
    let mut out = Artifacts::default();
    let session = (case.make)(&store);
    out.put("blocks.json".into(), blocks_json(&session));
    out.put("import_report.json".into(), serde_json::to_value(session.import_report().unwrap()).unwrap());
    let variants: [(&str, Options); 2] = [
        ("default", Options::default()),
        (
            "retarget",
            Options {
                target_model: Some("gpt-5.1-codex".into()),
                foreign_reasoning: ForeignReasoning::Text,
                model_provider: Some("openai".into()),
                ..Options::default()
            },
        ),
    ];
    for &runtime in RUNTIMES {
        for format in runtime.formats() {
            for (variant, base) in &variants {
                let options = Options { format: Some(format.to_string()), ..base.clone() };
                let export = session.export(runtime, &options);
                let exported = export.as_ref().ok().map(|e| e.data.clone());
                // The text written from stored records is the values' text, byte for byte.
                let text = session.to_native_text(runtime, &options);
                match (&export, &text) {
                    (Ok(export), Ok(text)) => {
                        let expected = format.to_text(&export.data).unwrap();
                        assert!(*text == expected, "{}: {runtime} {format} {variant}: to_native_text differs from to_text(to_native)", case.name);
                        let mut written = Vec::new();
                        let report = session.export_to(&mut written, runtime, &options).unwrap();
                        assert!(written == expected.as_bytes(), "{}: {runtime} {format} {variant}: export_to differs", case.name);
                        assert_eq!(report, export.report, "{}: {runtime} {format} {variant}: export_to's report", case.name);
                        let (json, report) = session.export_json(runtime, &options).unwrap();
                        assert!(json == serde_json::to_string(&export.data).unwrap(), "{}: {runtime} {format} {variant}: export_json differs", case.name);
                        assert_eq!(report, export.report, "{}: {runtime} {format} {variant}: export_json's report", case.name);
                    }
                    (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{}: {runtime} {format} {variant}", case.name),
                    _ => panic!("{}: {runtime} {format} {variant}: export {:?} but to_native_text {:?}", case.name, export.as_ref().err(), text.as_ref().err()),
                }
                out.put(format!("export.{runtime}.{format}.{variant}.json"), shown(export, |e| serde_json::to_value(e).unwrap()));
                if *variant != "default" {
                    continue;
                }
                // The export read back into its own runtime, when that format can be imported.
                if let Some(data) = exported {
                    let other = Store::open_in_memory().unwrap();
                    let source = match data {
                        Value::String(text) => Source::Text(text),
                        value => Source::Value(value),
                    };
                    let reimport = other.import_native(runtime, source, &Options { session_id: Some("reimport".into()), ..Options::default() });
                    let read_back = shown(reimport, |s| reproducible(blocks_json(&s), started));
                    out.put(format!("reimport.{runtime}.{format}.json"), read_back);
                }
            }
        }
        let home = scratch.join(format!("home-{runtime}"));
        let options = ResumeOptions {
            home: Some(home.clone()),
            cwd: Some(PathBuf::from("/home/dev/project")),
            ..ResumeOptions::default()
        };
        let plan = session.prepare_resume(runtime, &options);
        let plan_value = shown(plan, |plan| {
            let files: BTreeMap<String, String> = plan
                .files
                .iter()
                .map(|f| (f.strip_prefix(&home).unwrap().display().to_string(), std::fs::read_to_string(f).unwrap()))
                .collect();
            let mut value = serde_json::to_value(&plan).unwrap();
            value["files"] = serde_json::to_value(files).unwrap();
            value
        });
        let text = serde_json::to_string_pretty(&plan_value).unwrap().replace(&home.display().to_string(), "<home>");
        out.put_text(format!("resume.{runtime}.json"), text + "\n");
    }
    out.files
}

#[derive(Default)]
struct Artifacts {
    files: BTreeMap<String, String>,
    seen: BTreeMap<String, String>,
}

impl Artifacts {
    fn put(&mut self, name: String, value: Value) {
        self.put_text(name, serde_json::to_string_pretty(&value).unwrap() + "\n");
    }

    fn put_text(&mut self, name: String, text: String) {
        let text = match self.seen.get(&text) {
            Some(first) => format!("same as {first}\n"),
            None => {
                self.seen.insert(text.clone(), name.clone());
                text
            }
        };
        self.files.insert(name, text);
    }
}

#[test]
fn every_fixture_converts_as_recorded() {
    let bless = std::env::var_os("SNA_BLESS").is_some();
    let golden = root().join("tests/golden");
    let mut failures = Vec::new();
    let mut compared = 0;
    for case in cases() {
        let scratch = tempfile::tempdir().unwrap();
        let dir = golden.join(&case.name);
        let made = artifacts(&case, scratch.path());
        if bless {
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            for (name, text) in &made {
                std::fs::write(dir.join(name), text).unwrap();
            }
            continue;
        }
        let mut recorded: Vec<String> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: no golden set ({e}); record it with SNA_BLESS=1", case.name))
            .map(|e| e.unwrap().file_name().to_str().unwrap().to_string())
            .collect();
        recorded.sort();
        let made_names: Vec<String> = made.keys().cloned().collect();
        if recorded != made_names {
            failures.push(format!("{}: files {made_names:?}, recorded {recorded:?}", case.name));
        }
        for (name, text) in &made {
            let Ok(expected) = std::fs::read_to_string(dir.join(name)) else { continue };
            compared += 1;
            if &expected != text {
                let line = expected.lines().zip(text.lines()).position(|(a, b)| a != b).map_or(0, |i| i + 1);
                failures.push(format!("{}/{name}: differs from line {line}", case.name));
            }
        }
    }
    assert!(failures.is_empty(), "{} of {compared} artifacts differ:\n{}", failures.len(), failures.join("\n"));
    if !bless {
        assert!(compared > 500, "only {compared} artifacts compared");
    }
}

/// A call id repeated within one assistant message is answered once, by its first call, as before
/// the restructuring (one result, nothing synthesized), in every writer.
#[test]
fn a_repeated_call_id_is_answered_once() {
    let store = Store::open_in_memory().unwrap();
    let session = store.create_session(NewSession::new().id("dup").cwd("/home/dev/project")).unwrap();
    let at = |ms: i64| sna_history::Timestamp::from_millis(1_780_000_000_000 + ms).unwrap();
    let mut blocks = vec![
        Block::text(Actor::User, "List twice."),
        Block::tool_use("toolu_dup", "Bash", r#"{"command":"ls"}"#).attributed("claude-code", "anthropic", "claude-sonnet-4-6"),
        Block::tool_use("toolu_dup", "Bash", r#"{"command":"ls -a"}"#).attributed("claude-code", "anthropic", "claude-sonnet-4-6"),
        Block::tool_result("toolu_dup", "a.txt", false),
        Block::text(Actor::Assistant, "Done.").attributed("claude-code", "anthropic", "claude-sonnet-4-6"),
    ];
    for (i, block) in blocks.iter_mut().enumerate() {
        block.created_at = at(i as i64 * 1000);
        block.message_id = (block.actor == Actor::Assistant && block.kind == Kind::ToolUse).then(|| "msg_1".to_string());
    }
    session.extend(blocks).unwrap();
    for runtime in [Runtime::ClaudeCode, Runtime::Codex] {
        let export = session.export(runtime, &Options::default()).unwrap();
        let synthesized = export.report.entries.iter().filter(|e| e.message.contains("toolu_dup")).count();
        assert_eq!(synthesized, 0, "{runtime}: {:?}", export.report);
        let text = export.data.to_string();
        assert_eq!(text.matches("a.txt").count(), 1, "{runtime}: one result: {text}");
    }
}
