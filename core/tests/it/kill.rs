//! Kill -9 at random moments of import, re-import and replacement (issue 17): after every kill the
//! database passes `PRAGMA integrity_check`, every session is whole (its count matches its blocks),
//! no session imported before is lost, and the next import converges to what a fresh import of the
//! files gives.

use std::path::Path;
use std::time::Duration;

use sna_test_support::{assert_sound, example};
use sna_history::{Options, Runtime, Source, Store};

fn fixture(dir: &str, prefix: &str) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures").join(dir);
    let file = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).find(|p| p.file_name().unwrap().to_str().unwrap().starts_with(prefix)).unwrap();
    std::fs::read_to_string(file).unwrap()
}

#[test]
fn kill_9_during_imports_never_leaves_a_partial_or_lost_session() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let claude = dir.path().join("59187973-81fd-4be2-8aa9-a21c45c78135.jsonl");
    let codex = dir.path().join("rollout-01a23770-a56e-7aa2-983a-2aa2cbed9afd.jsonl");
    let opencode = dir.path().join("export.json");
    let claude_text = fixture("claude-code/basic", "59187973");
    let codex_text = fixture("codex/basic", "rollout-");
    let opencode_text = fixture("opencode/basic", "export.json");
    std::fs::write(&claude, "").unwrap();
    std::fs::write(&codex, &codex_text).unwrap();
    std::fs::write(&opencode, &opencode_text).unwrap();
    Store::open(&db).unwrap();
    let mut seen: Vec<String> = Vec::new();
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let rounds = 30;
    for round in 0..rounds {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        // The files change between kills: the transcript grows, the rollout is rewritten, the
        // export alternates between two versions (a replacement each time).
        let lines: Vec<&str> = claude_text.lines().collect();
        let upto = ((round + 1) * lines.len() / rounds).max(1);
        std::fs::write(&claude, lines[..upto].join("\n") + "\n").unwrap();
        // A large rollout whose first line changes every round: replaced each time, which takes a
        // while, so that kills land inside replacements.
        let first = codex_text.lines().next().unwrap().replacen("\"timestamp\":\"", &format!("\"timestamp\":\"{}", round % 2), 1);
        let rest: String = codex_text.lines().skip(1).map(|l| format!("{l}\n")).collect::<String>().repeat(60);
        std::fs::write(&codex, format!("{first}\n{rest}")).unwrap();
        let doc = if round % 2 == 0 { opencode_text.clone() } else { opencode_text.replacen("\"title\"", "\"title\": \"renamed\", \"x-title\"", 1) };
        std::fs::write(&opencode, doc).unwrap();
        let mut child = std::process::Command::new(example("import_worker"))
            .arg(&db)
            .args([&claude, &codex, &opencode])
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(1_000 + rng % 300_000));
        if let Ok(Some(status)) = child.try_wait() {
            let mut err = String::new();
            std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
            panic!("round {round}: the worker ended by itself ({status}): {err}");
        }
        child.kill().unwrap(); // SIGKILL on Unix
        child.wait().unwrap();
        assert_sound(&db);
        let store = Store::open(&db).unwrap();
        let ids: Vec<String> = store.sessions().unwrap().into_iter().map(|s| s.id).collect();
        for id in &seen {
            assert!(ids.contains(id), "round {round}: session {id} was lost");
        }
        seen = ids;
    }
    // The next import converges: each file's session is what a fresh import gives.
    let store = Store::open(&db).unwrap();
    for (path, runtime) in [(&claude, Runtime::ClaudeCode), (&codex, Runtime::Codex), (&opencode, Runtime::OpenCode)] {
        let done = store.import_source(path, None, &Options::default()).unwrap();
        let fresh = Store::open_in_memory().unwrap().import_native(runtime, Source::Path(path.clone()), &Options::default()).unwrap();
        assert_eq!(done.session.len().unwrap(), fresh.len().unwrap(), "{}", path.display());
        assert_eq!(store.import_source(path, None, &Options::default()).unwrap().outcome, sna_history::SourceOutcome::Unchanged);
    }
    assert_eq!(store.sessions().unwrap().len(), 3, "one session per file");
}
