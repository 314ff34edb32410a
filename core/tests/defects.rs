//! The defects adversarial testing found (issue 17), one test each: every test here failed before
//! its fix.

use std::path::Path;

use rusqlite::Connection;
use sna_history::{Options, SourceOutcome, Store};

fn claude_fixture() -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/claude-code/basic");
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_str().unwrap().starts_with("59187973"))
        .unwrap();
    std::fs::read_to_string(file).unwrap()
}

/// Defect 4: a file imported while empty panicked every later import of it (index underflow).
#[test]
fn a_file_imported_while_empty_imports_again_once_it_has_lines() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("59187973-81fd-4be2-8aa9-a21c45c78135.jsonl");
    std::fs::write(&path, "").unwrap();
    let store = Store::open(dir.path().join("h.db")).unwrap();
    let first = store.import_source(&path, Some(sna_history::Runtime::ClaudeCode), &Options::default()).unwrap();
    assert_eq!(first.outcome, SourceOutcome::Imported);
    assert_eq!(first.blocks_added, 0);
    std::fs::write(&path, claude_fixture()).unwrap();
    let second = store.import_source(&path, None, &Options::default()).unwrap();
    assert_eq!(second.outcome, SourceOutcome::Replaced);
    assert!(second.blocks_added > 10, "{}", second.blocks_added);
    assert_eq!(second.session.id(), first.session.id());
}

/// Defect 10: a negative `user_version` panicked on open; it is refused and left untouched.
#[test]
fn a_negative_schema_version_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("odd.db");
    Connection::open(&path).unwrap().execute_batch("PRAGMA user_version = -3;").unwrap();
    let before = std::fs::read(&path).unwrap();
    let err = Store::open(&path).unwrap_err();
    assert_eq!(err.code(), "INVALID_INPUT", "{err}");
    assert!(err.to_string().contains("schema version -3"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), before, "left untouched");
}

/// Defect 11: `prepare_resume` wrote through a predictable temporary name that followed links; a
/// planted link now receives nothing, and a link at the destination is replaced, not written through.
#[cfg(unix)]
#[test]
fn resume_files_are_never_written_through_a_planted_link() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_in_memory().unwrap();
    let session = store.import_native(sna_history::Runtime::ClaudeCode, sna_history::Source::Text(claude_fixture()), &Options::default()).unwrap();
    let home = dir.path().join("home");
    let project = home.join(".claude/projects/-home-dev-project");
    std::fs::create_dir_all(&project).unwrap();
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, "precious").unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o644)).unwrap();
    let name = "59187973-81fd-4be2-8aa9-a21c45c78135.jsonl";
    // The temporary name the writer used to pick, and the destination itself.
    std::os::unix::fs::symlink(&victim, project.join(format!(".{name}.{}.tmp", std::process::id()))).unwrap();
    std::os::unix::fs::symlink(&victim, project.join(name)).unwrap();
    let options = sna_history::ResumeOptions {
        home: Some(home.clone()),
        cwd: Some("/home/dev/project".into()),
        ..Default::default()
    };
    let plan = session.prepare_resume(sna_history::Runtime::ClaudeCode, &options).unwrap();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    let written = &plan.files[0];
    let meta = std::fs::symlink_metadata(written).unwrap();
    assert!(meta.file_type().is_file(), "the link was replaced by the file");
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    assert!(std::fs::read_to_string(written).unwrap().contains("\"sessionId\""));
}

/// Defect 7: a FIFO hung the import; only regular files are read, others refused at once.
#[cfg(unix)]
#[test]
fn a_fifo_is_refused_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe.jsonl");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let store = Store::open_in_memory().unwrap();
    for err in [
        store.import_file(&fifo, None, &Options::default()).unwrap_err(),
        store.import_source(&fifo, Some(sna_history::Runtime::Codex), &Options::default()).unwrap_err(),
        sna_history::native::detect_runtime(&fifo).unwrap_err(),
    ] {
        assert_eq!(err.code(), "INVALID_INPUT", "{err}");
        assert!(err.to_string().contains("not a regular file"), "{err}");
    }
}
