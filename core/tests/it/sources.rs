//! Importing the same file again: nothing when unchanged, only the new lines when it grew, a fresh
//! import in place when it changed otherwise. The tests that are not about SQLite's file run on
//! PostgreSQL too (`--features pg-tests`).

use std::path::{Path, PathBuf};

use sna_test_support::fixture;
use sna_history::{Block, Options, SourceOutcome, Store};

use sna_test_support::on_both_backends;

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

fn grow_and_check(store: &Store, original: &Path, name: &str) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    let text = std::fs::read_to_string(original).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let head = lines.len() - 3;
    std::fs::write(&path, lines[..head].iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
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

on_both_backends! {
    fn claude_code_transcripts_grow_line_by_line(store: Store) {
        let original = first_jsonl("claude-code/tools-thinking", "");
        let name = original.file_name().unwrap().to_str().unwrap().to_string();
        grow_and_check(&store, &original, &name);
    }
}

on_both_backends! {
    fn codex_rollouts_grow_line_by_line(store: Store) {
        let original = first_jsonl("codex/reasoning-exec", "rollout-");
        let name = original.file_name().unwrap().to_str().unwrap().to_string();
        grow_and_check(&store, &original, &name);
    }
}

on_both_backends! {
    fn an_opencode_document_that_changed_is_imported_afresh(store: Store) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("export.json");
        let text = std::fs::read_to_string(fixture("opencode/basic/export.json")).unwrap();
        std::fs::write(&path, &text).unwrap();
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
}

/// Sets the modification time of `path` to `secs_ago` seconds before now.
fn age(path: &Path, secs_ago: u64) -> std::time::SystemTime {
    let when = std::time::SystemTime::now() - std::time::Duration::from_secs(secs_ago);
    std::fs::File::options().write(true).open(path).unwrap().set_modified(when).unwrap();
    when
}

/// Writes `text` over `path` in place (same inode) and puts its modification time back to `when`.
fn overwrite_keeping_time(path: &Path, text: &str, when: std::time::SystemTime) {
    use std::io::Write;
    let mut file = std::fs::File::options().write(true).truncate(true).open(path).unwrap();
    file.write_all(text.as_bytes()).unwrap();
    file.set_modified(when).unwrap();
}

on_both_backends! {
    fn an_unchanged_file_is_known_by_its_look_and_a_fresh_one_by_its_bytes(store: Store) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let original = first_jsonl("claude-code/tools-thinking", "");
        let text = std::fs::read_to_string(&original).unwrap();
        let same_size = text.replace("files", "FILES");
        assert_eq!(same_size.len(), text.len());
        assert_ne!(same_size, text);
        std::fs::write(&path, &text).unwrap();
        let when = age(&path, 3600);
        assert_eq!(store.import_source(&path, None, &Options::default()).unwrap().outcome, SourceOutcome::Imported);

        // Same length, time, inode and device as when it was read, an hour after its last write: the
        // file is not read. (Bytes changed behind a restored time are not seen, as by make or rsync;
        // this is what shows that the look alone decided.)
        overwrite_keeping_time(&path, &same_size, when);
        assert_eq!(store.import_source(&path, None, &Options::default()).unwrap().outcome, SourceOutcome::Unchanged);

        // Any part of the look that differs makes it read: a new time with the original bytes is
        // unchanged by hash (and the look is recorded), the edited bytes under a new time are a change.
        overwrite_keeping_time(&path, &text, when);
        age(&path, 1800);
        assert_eq!(store.import_source(&path, None, &Options::default()).unwrap().outcome, SourceOutcome::Unchanged);
        overwrite_keeping_time(&path, &same_size, std::time::SystemTime::now() - std::time::Duration::from_secs(1200));
        let edited = store.import_source(&path, None, &Options::default()).unwrap();
        assert_eq!(edited.outcome, SourceOutcome::Replaced);
        assert!(edited.session.blocks().unwrap().iter().any(|b| b.content.contains("FILES")));

        // Another file moved into its place (a new inode), same bytes, length and time: read again.
        let when = age(&path, 900);
        let other = dir.path().join("other");
        std::fs::write(&other, &same_size).unwrap();
        std::fs::File::options().write(true).open(&other).unwrap().set_modified(when).unwrap();
        std::fs::rename(&other, &path).unwrap();
        assert_eq!(store.import_source(&path, None, &Options::default()).unwrap().outcome, SourceOutcome::Unchanged);
        // ...and then known by its look: an edit behind the restored time goes unseen again.
        overwrite_keeping_time(&path, &text, when);
        assert_eq!(store.import_source(&path, None, &Options::default()).unwrap().outcome, SourceOutcome::Unchanged);
    }
}

on_both_backends! {
    fn a_file_written_just_before_it_was_read_is_read_again(store: Store) {
        // A write within the file system's timestamp granularity may leave the time as it was: a file
        // modified less than two seconds before it was read is not vouched for by its look.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let text = std::fs::read_to_string(first_jsonl("claude-code/tools-thinking", "")).unwrap();
        std::fs::write(&path, &text).unwrap();
        let when = std::fs::metadata(&path).unwrap().modified().unwrap();
        assert_eq!(store.import_source(&path, None, &Options::default()).unwrap().outcome, SourceOutcome::Imported);
        overwrite_keeping_time(&path, &text.replace("files", "FILES"), when);
        assert_eq!(store.import_source(&path, None, &Options::default()).unwrap().outcome, SourceOutcome::Replaced);
    }
}

#[test]
fn a_version_2_source_record_is_read_once_then_known_by_its_look() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    let text = std::fs::read_to_string(first_jsonl("claude-code/tools-thinking", "")).unwrap();
    std::fs::write(&path, &text).unwrap();
    let when = age(&path, 3600);
    let db = dir.path().join("h.db");
    let store = Store::open(&db).unwrap();
    store.import_source(&path, None, &Options::default()).unwrap();
    store.close().unwrap();
    // As schema v2 left it: no look recorded.
    rusqlite::Connection::open(&db).unwrap().execute_batch("UPDATE sources SET file_len = NULL, mtime_ns = NULL, inode = NULL, device = NULL, stat_at = NULL").unwrap();
    let store = Store::open(&db).unwrap();
    // Without a recorded look the file is read: the edit behind the restored time is seen.
    overwrite_keeping_time(&path, &text.replace("files", "FILES"), when);
    assert_eq!(store.import_source(&path, None, &Options::default()).unwrap().outcome, SourceOutcome::Replaced);
    // That read recorded the look, which now decides alone.
    overwrite_keeping_time(&path, &text, when);
    assert_eq!(store.import_source(&path, None, &Options::default()).unwrap().outcome, SourceOutcome::Unchanged);
}
