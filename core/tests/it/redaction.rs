//! Redaction (issue 17): with `redact`, no secret leaves the store through any export, any format,
//! or a resume's files — not in content, tool input and output, nor in the native passthrough —
//! each block changed is a `redacted` report entry (accepted in strict mode: it was asked for), and
//! opaque reasoning tokens are never altered.

use serde_json::json;
use sna_history::{Actor, Block, Kind, NewSession, Options, Reasoning, ReportAction, ResumeOptions, Runtime, Scope, Store};

const KEY: &str = "sk-ant-api03-abcDEF1234567890_abcdefghijklmnopqrstuvwxyz-AAAA";
const TOKEN: &str = "ghp_1234567890abcdefghijklmnopqrstuvwxyzAB";
const AWS: &str = "AKIAIOSFODNN7EXAMPLE";

fn secret_session(store: &Store) -> sna_history::Session {
    let session = store.create_session(NewSession::new().id("secrets").cwd("/home/dev/project")).unwrap();
    let mut thinking = Block::new(Actor::Assistant, Kind::Thinking, format!("the user's key is {KEY}"));
    thinking.reasoning = Some(Reasoning { format: "anthropic-signature".into(), data: "c2lnbmF0dXJl".into(), scope: Scope::default() });
    let mut untouched = Block::new(Actor::Assistant, Kind::Thinking, "nothing secret here");
    untouched.reasoning = Some(Reasoning { format: "anthropic-signature".into(), data: "b3BhcXVl".into(), scope: Scope::default() });
    let mut result = Block::tool_result("toolu_01", format!("GITHUB_TOKEN={TOKEN}\nok"), false);
    result.native = Some(sna_history::Native { runtime: "claude-code".into(), data: json!({"record": {"toolUseResult": {"stdout": format!("aws {AWS}")}}}) });
    session
        .extend(vec![
            Block::text(Actor::User, format!("use {KEY} please")),
            thinking.attributed("claude-code", "anthropic", "claude-sonnet-4-6"),
            untouched.attributed("claude-code", "anthropic", "claude-sonnet-4-6"),
            Block::tool_use("toolu_01", "Bash", format!("{{\"command\":\"curl -H 'Authorization: Bearer {TOKEN}' x\"}}"))
                .attributed("claude-code", "anthropic", "claude-sonnet-4-6"),
            result,
        ])
        .unwrap();
    session
}

#[test]
fn no_secret_leaves_through_any_export_or_resume() {
    let store = Store::open_in_memory().unwrap();
    let session = secret_session(&store);
    for runtime in [Runtime::ClaudeCode, Runtime::Codex, Runtime::OpenCode] {
        for format in runtime.formats() {
            let plain = session.export(runtime, &Options { format: Some(format.as_str().into()), ..Options::default() }).unwrap();
            assert!(plain.data.to_string().contains(TOKEN), "{runtime} {format}: the secret is there without redact");
            let options = Options { format: Some(format.as_str().into()), redact: true, ..Options::default() };
            let export = session.export(runtime, &options).unwrap();
            let text = export.data.to_string();
            for secret in [KEY, TOKEN, AWS] {
                assert!(!text.contains(secret), "{runtime} {format}: {secret} leaked: {text}");
            }
            assert!(text.contains("[REDACTED:"), "{runtime} {format}");
            assert!(export.report.entries.iter().any(|e| e.action == ReportAction::Redacted), "{runtime} {format}");
        }
    }
    // Strict mode accepts redactions (they were asked for).
    let plain = store.create_session(NewSession::new().id("plain")).unwrap();
    plain.append(Block::text(Actor::User, format!("use {KEY}"))).unwrap();
    let strict = plain.export(Runtime::Codex, &Options { redact: true, strict: true, ..Options::default() }).unwrap();
    assert_eq!(strict.report.entries.len(), 1);
    // The token of an unredacted thinking block is left as it was.
    let claude = session.to_native(Runtime::ClaudeCode, &Options { redact: true, ..Options::default() }).unwrap().to_string();
    assert!(claude.contains("b3BhcXVl"), "an untouched block keeps its token");
    assert!(!claude.contains("c2lnbmF0dXJl"), "a redacted thinking block loses its token");
    // The files of a resume.
    let home = tempfile::tempdir().unwrap();
    for runtime in [Runtime::ClaudeCode, Runtime::Codex, Runtime::OpenCode] {
        let options = ResumeOptions {
            home: Some(home.path().to_path_buf()),
            options: Options { redact: true, ..Options::default() },
            ..ResumeOptions::default()
        };
        let plan = session.prepare_resume(runtime, &options).unwrap();
        for file in &plan.files {
            let text = std::fs::read_to_string(file).unwrap();
            assert!(!text.contains(TOKEN) && !text.contains(KEY) && !text.contains(AWS), "{runtime}: {}", file.display());
        }
    }
    // The store itself is untouched, and the scan finds what is there.
    assert!(session.blocks().unwrap()[0].content.contains(KEY));
    let found = session.scan_secrets().unwrap();
    let kinds: Vec<&str> = found.iter().map(|f| f.kind).collect();
    for kind in ["anthropic-key", "github-token", "aws-access-key"] {
        assert!(kinds.contains(&kind), "{kind} not in {kinds:?}");
    }
    assert!(found.iter().all(|f| !f.preview.contains("1234567890")), "previews are masked");
}

#[test]
fn redaction_in_place_purges_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("h.db")).unwrap();
    let session = secret_session(&store);
    let before = session.blocks().unwrap();
    let report = session.redact_in_place().unwrap();
    assert_eq!(report.entries.len(), 4, "{report:?}");
    let after = session.blocks().unwrap();
    assert_eq!(after.len(), before.len());
    assert_eq!(after.iter().map(|b| &b.id).collect::<Vec<_>>(), before.iter().map(|b| &b.id).collect::<Vec<_>>(), "ids and order kept");
    assert!(session.scan_secrets().unwrap().is_empty());
    // Not in the database file nor its WAL either: the old pages were overwritten.
    for file in ["h.db", "h.db-wal"] {
        let bytes = std::fs::read(dir.path().join(file)).unwrap_or_default();
        let text = String::from_utf8_lossy(&bytes);
        for secret in [KEY, TOKEN, AWS] {
            assert!(!text.contains(secret), "{secret} still in {file}");
        }
    }
    assert_eq!(after[2].reasoning.as_ref().unwrap().data, "b3BhcXVl", "untouched token kept");
    assert!(after[1].reasoning.is_none());
    assert!(session.redact_in_place().unwrap().entries.is_empty(), "nothing left to redact");
}
