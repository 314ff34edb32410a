//! Importing the same file again: nothing when unchanged, only the new lines when it grew, a fresh
//! import in place when it changed otherwise.

use std::path::{Path, PathBuf};

use sna_history::{Block, Options, SourceOutcome, Store};

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures").join(rel)
}

fn first_jsonl(dir: &str, prefix: &str) -> PathBuf {
    std::fs::read_dir(fixture(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let name = p.file_name().unwrap().to_str().unwrap();
            name.ends_with(".jsonl") && name.starts_with(prefix) && name != "events.jsonl" && name != "requests.jsonl"
        })
        .unwrap()
}

fn view(blocks: Vec<Block>) -> Vec<(String, String, String)> {
    blocks.into_iter().map(|b| (b.actor.to_string(), b.kind.to_string(), b.content)).collect()
}

fn grow_and_check(original: &Path, name: &str) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    let text = std::fs::read_to_string(original).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let head = lines.len() - 3;
    std::fs::write(&path, lines[..head].iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
    let store = Store::open(dir.path().join("h.db")).unwrap();
    let first = store.import_source(&path, None, &Options::default()).unwrap();
    assert_eq!(first.outcome, SourceOutcome::Imported);
    let again = store.import_source(&path, None, &Options::default()).unwrap();
    assert_eq!(again.outcome, SourceOutcome::Unchanged);
    assert_eq!(again.session.id(), first.session.id());
    let count = first.session.len().unwrap();

    // The runtime appends its last lines.
    std::fs::write(&path, text.clone()).unwrap();
    let grown = store.import_source(&path, None, &Options::default()).unwrap();
    let SourceOutcome::Appended(added) = grown.outcome else { panic!("{name}: {:?}", grown.outcome) };
    assert!(added > 0);
    assert_eq!(grown.session.len().unwrap(), count + added);
    let fresh = Store::open_in_memory().unwrap().import_file(&path, None, &Options::default()).unwrap();
    assert_eq!(view(grown.session.blocks().unwrap()), view(fresh.blocks().unwrap()), "{name}: appended = imported whole");
    assert_eq!(store.sessions().unwrap().len(), 1);

    // Edited in place: imported afresh under the same id.
    std::fs::write(&path, text.replace("files", "FILES")).unwrap();
    let edited = store.import_source(&path, None, &Options::default()).unwrap();
    assert_eq!(edited.outcome, SourceOutcome::Replaced);
    assert_eq!(edited.session.id(), first.session.id());
    assert!(edited.session.blocks().unwrap().iter().any(|b| b.content.contains("FILES")));
    assert_eq!(store.sessions().unwrap().len(), 1);
    assert_eq!(store.import_source(&path, None, &Options::default()).unwrap().outcome, SourceOutcome::Unchanged);
}

#[test]
fn claude_code_transcripts_grow_line_by_line() {
    let original = first_jsonl("claude-code/tools-thinking", "");
    let name = original.file_name().unwrap().to_str().unwrap().to_string();
    grow_and_check(&original, &name);
}

#[test]
fn codex_rollouts_grow_line_by_line() {
    let original = first_jsonl("codex/reasoning-exec", "rollout-");
    let name = original.file_name().unwrap().to_str().unwrap().to_string();
    grow_and_check(&original, &name);
}

#[test]
fn an_opencode_document_that_changed_is_imported_afresh() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("export.json");
    let text = std::fs::read_to_string(fixture("opencode/basic/export.json")).unwrap();
    std::fs::write(&path, &text).unwrap();
    let store = Store::open_in_memory().unwrap();
    assert_eq!(store.import_source(&path, None, &Options::default()).unwrap().outcome, SourceOutcome::Imported);
    assert_eq!(store.import_source(&path, None, &Options::default()).unwrap().outcome, SourceOutcome::Unchanged);
    std::fs::write(&path, text.replace("Say hello", "Say HELLO")).unwrap();
    let changed = store.import_source(&path, None, &Options::default()).unwrap();
    assert_eq!(changed.outcome, SourceOutcome::Replaced);
    // A file that is gone or not history is an error naming it.
    let err = store.import_source(dir.path().join("nope.jsonl"), None, &Options::default()).unwrap_err();
    assert!(err.to_string().contains("nope.jsonl"), "{err}");
    std::fs::write(dir.path().join("notes.txt"), "just words\n").unwrap();
    let err = store.import_source(dir.path().join("notes.txt"), None, &Options::default()).unwrap_err();
    assert!(err.to_string().contains("could not detect the runtime"), "{err}");
}
