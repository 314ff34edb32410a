//! Cross-runtime replay: a real transcript of each runtime exported to each other runtime keeps
//! its conversation, drops the origin's harness context and foreign opaque reasoning (reported),
//! translates tools with an equivalent, and exports identically twice.

use std::path::{Path, PathBuf};

use serde_json::Value;
use sna_history::{Kind, Options, ReportAction, Runtime, Store};

fn origin(runtime: Runtime) -> PathBuf {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
    let (dir, pick): (&str, fn(&str) -> bool) = match runtime {
        Runtime::ClaudeCode => ("claude-code/tools-thinking", |n| n.ends_with(".jsonl") && n.len() > 40),
        Runtime::Codex => ("codex/reasoning-exec", |n| n.starts_with("rollout-")),
        Runtime::OpenCode => ("opencode/tools-reasoning", |n| n == "export.json"),
        Runtime::GeminiCli => ("gemini-cli/tools-thinking", |n| n.starts_with("session-")),
        Runtime::Pi => ("pi/tools-thinking", |n| n.ends_with(".jsonl") && !n.starts_with("events") && !n.starts_with("requests")),
        Runtime::QwenCode => ("qwen-code/tools-thinking", |n| n.ends_with(".jsonl") && !n.starts_with("events") && !n.starts_with("requests")),
        Runtime::CopilotCli => ("copilot-cli/tools-thinking", |n| n.ends_with(".events.jsonl")),
        other => unreachable!("no fixture for {other}"),
    };
    std::fs::read_dir(base.join(dir)).unwrap().map(|e| e.unwrap().path()).find(|p| pick(p.file_name().unwrap().to_str().unwrap())).unwrap()
}

fn target_model(runtime: Runtime) -> &'static str {
    match runtime {
        Runtime::ClaudeCode => "claude-opus-5-5",
        Runtime::Codex => "gpt-5.5",
        Runtime::OpenCode => "claude-sonnet-4-5",
        Runtime::GeminiCli => "gemini-3.1-pro-preview",
        Runtime::Pi => "mock-claude",
        Runtime::QwenCode => "qwen3.5-plus",
        Runtime::CopilotCli => "claude-sonnet-4.5",
        other => unreachable!("no model for {other}"),
    }
}

#[test]
fn every_origin_exports_to_every_target() {
    for from in Runtime::ALL.iter().copied() {
        for to in Runtime::ALL.iter().copied().filter(|t| *t != from) {
            let store = Store::open_in_memory().unwrap();
            let session = store.import_file(origin(from), None, &Options::default()).unwrap();
            let options = Options { target_model: Some(target_model(to).into()), model_provider: (to == Runtime::Codex).then(|| "mock".into()), ..Options::default() };
            let export = session.export(to, &options).unwrap();
            let text = serde_json::to_string(&export.data).unwrap();
            let again = serde_json::to_string(&session.export(to, &options).unwrap().data).unwrap();
            assert_eq!(text, again, "{from} → {to}: deterministic");
            let blocks = session.blocks().unwrap();
            // Every user and assistant text that is not the origin's harness travels.
            for block in &blocks {
                if block.kind == Kind::Text && !sna_history::native::is_harness(block, from) {
                    let needle = serde_json::to_string(block.content.trim()).unwrap();
                    let needle = &needle[1..needle.len() - 1];
                    assert!(text.contains(needle), "{from} → {to}: missing text {needle}");
                }
                if block.kind == Kind::ToolResult {
                    let needle = serde_json::to_string(block.content.trim_end()).unwrap();
                    assert!(text.contains(&needle[1..needle.len() - 1]), "{from} → {to}: missing result");
                }
            }
            // No opaque reasoning of another scope.
            for block in blocks.iter().filter(|b| b.reasoning.is_some()) {
                let reasoning = block.reasoning.as_ref().unwrap();
                let valid = reasoning.scope.model.as_deref() == Some(target_model(to)) && (reasoning.format == "openai-encrypted") == (to == Runtime::Codex);
                assert_eq!(text.contains(&reasoning.data), valid, "{from} → {to}: reasoning token");
            }
            // Harness context of the origin is reported as dropped.
            let harness = blocks.iter().filter(|b| sna_history::native::is_harness(b, from)).count();
            let reported = export.report.entries.iter().filter(|e| e.action == ReportAction::Dropped && e.message.contains("harness")).count();
            assert_eq!(harness, reported, "{from} → {to}: {:?}", export.report.entries);
            if from == Runtime::Codex {
                assert!(harness >= 4, "Codex's instructions, skills, tools and environment context");
            }
            // Shell calls speak the target's tool.
            let shell = match to {
                Runtime::ClaudeCode => "\"Bash\"",
                Runtime::Codex => "\"exec_command\"",
                Runtime::OpenCode | Runtime::Pi | Runtime::CopilotCli => "\"bash\"",
                Runtime::GeminiCli | Runtime::QwenCode => "\"run_shell_command\"",
                other => unreachable!("no shell tool for {other}"),
            };
            assert!(text.contains(shell), "{from} → {to}: no {shell} call");
            let _: Value = serde_json::from_str(&text).unwrap();
        }
    }
}
