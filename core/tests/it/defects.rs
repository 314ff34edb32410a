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

/// Defect 1: a file that grew while it was imported got duplicated blocks (hashed with one read,
/// imported with another). Now the record is what the import read, and a last line still being
/// written waits: a writer appending while imports run ends with the blocks of one import. (A
/// stress check of the real case; whether the old race shows depends on timing. The deterministic
/// checks are the next test and `native::tests::the_source_record_is_what_the_import_read`.)
#[test]
fn a_file_growing_during_imports_gets_each_line_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("59187973-81fd-4be2-8aa9-a21c45c78135.jsonl");
    let lines: Vec<String> = claude_fixture().lines().map(str::to_string).collect();
    // A file of some size already, so that each import reads for a while as lines arrive.
    std::fs::write(&path, claude_fixture().repeat(10)).unwrap();
    let writer = {
        let path = path.clone();
        let lines = lines.clone();
        std::thread::spawn(move || {
            use std::io::Write;
            let mut file = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
            for round in 0..16 {
                for line in &lines {
                    // Each line in two writes, so that imports see lines half written.
                    let (a, b) = line.split_at(line.len() / 2);
                    file.write_all(a.as_bytes()).unwrap();
                    file.flush().unwrap();
                    std::thread::sleep(std::time::Duration::from_millis(1));
                    file.write_all(b.as_bytes()).unwrap();
                    file.write_all(b"\n").unwrap();
                    file.flush().unwrap();
                }
                let _ = round;
            }
        })
    };
    let store = Store::open(dir.path().join("h.db")).unwrap();
    let mut imports = 0;
    while !writer.is_finished() {
        store.import_source(&path, Some(sna_history::Runtime::ClaudeCode), &Options::default()).unwrap();
        imports += 1;
    }
    writer.join().unwrap();
    let last = store.import_source(&path, Some(sna_history::Runtime::ClaudeCode), &Options::default()).unwrap();
    let fresh = Store::open_in_memory().unwrap();
    let whole = fresh
        .import_native(sna_history::Runtime::ClaudeCode, sna_history::Source::Bytes(std::fs::read(&path).unwrap()), &Options::default())
        .unwrap();
    assert!(imports >= 1, "an import ran while the file grew");
    assert_eq!(last.session.len().unwrap(), whole.len().unwrap(), "after {imports} imports");
    assert_eq!(last.session.import_report().unwrap().entries.len(), 0, "no half line was taken for a malformed record");
    let again = store.import_source(&path, None, &Options::default()).unwrap();
    assert_eq!(again.outcome, SourceOutcome::Unchanged);
}

/// Defect 1, the last line: one without its newline that does not read as JSON waits for the next
/// import, which reads it once it is complete.
#[test]
fn a_half_written_last_line_waits_for_its_end() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("59187973-81fd-4be2-8aa9-a21c45c78135.jsonl");
    let text = claude_fixture();
    let cut = text.trim_end().rfind('\n').unwrap() + 1 + 40;
    std::fs::write(&path, &text[..cut]).unwrap();
    let store = Store::open(dir.path().join("h.db")).unwrap();
    let first = store.import_source(&path, None, &Options::default()).unwrap();
    assert!(first.session.import_report().unwrap().entries.is_empty(), "the half line is not a malformed record");
    assert_eq!(store.import_source(&path, None, &Options::default()).unwrap().outcome, SourceOutcome::Unchanged);
    std::fs::write(&path, &text).unwrap();
    let second = store.import_source(&path, None, &Options::default()).unwrap();
    assert!(matches!(second.outcome, SourceOutcome::Appended(n) if n > 0), "{:?}", second.outcome);
    let whole = Store::open_in_memory().unwrap().import_native(sna_history::Runtime::ClaudeCode, sna_history::Source::Text(text), &Options::default()).unwrap();
    assert_eq!(second.session.len().unwrap(), whole.len().unwrap());
}

/// Defect 5: re-importing a changed file deleted the old session before the new import succeeded;
/// a failed replacement now leaves the session as it was.
#[test]
fn a_failed_replacement_keeps_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("export.json");
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/opencode/basic/export.json")).unwrap();
    std::fs::write(&path, &doc).unwrap();
    let store = Store::open(dir.path().join("h.db")).unwrap();
    let first = store.import_source(&path, None, &Options::default()).unwrap();
    let blocks = first.session.blocks().unwrap();
    // A truncated export: the replacement fails.
    std::fs::write(&path, &doc[..doc.len() / 2]).unwrap();
    let err = store.import_source(&path, Some(sna_history::Runtime::OpenCode), &Options::default()).unwrap_err();
    assert_eq!(err.code(), "INVALID_INPUT", "{err}");
    let kept = store.session(first.session.id()).unwrap();
    assert_eq!(kept.blocks().unwrap(), blocks, "the session is as it was");
    // Restored, the file is known again as it was.
    std::fs::write(&path, &doc).unwrap();
    assert_eq!(store.import_source(&path, None, &Options::default()).unwrap().outcome, SourceOutcome::Unchanged);
}

/// Defect 6: a session stored without its source record (imported with `import_file`, or a kill
/// between two writes) failed every later `import_source` with CONFLICT. A file imported through
/// any API is remembered, and a session of the same name that holds no file is taken over.
#[test]
fn a_file_imported_by_any_call_is_known_to_import_source() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("59187973-81fd-4be2-8aa9-a21c45c78135.jsonl");
    std::fs::write(&path, claude_fixture()).unwrap();
    let store = Store::open(dir.path().join("h.db")).unwrap();
    let session = store.import_file(&path, None, &Options::default()).unwrap();
    let again = store.import_source(&path, None, &Options::default()).unwrap();
    assert_eq!(again.outcome, SourceOutcome::Unchanged);
    assert_eq!(again.session.id(), session.id());
    // A session of that name holding no file (as a kill between the two writes used to leave).
    let other = Store::open(dir.path().join("h2.db")).unwrap();
    other.import_native(sna_history::Runtime::ClaudeCode, sna_history::Source::Text(claude_fixture()), &Options::default()).unwrap();
    let taken = other.import_source(&path, None, &Options::default()).unwrap();
    assert_eq!(taken.outcome, SourceOutcome::Imported);
    assert_eq!(other.sessions().unwrap().len(), 1, "the session was taken over, not doubled");
    assert_eq!(other.import_source(&path, None, &Options::default()).unwrap().outcome, SourceOutcome::Unchanged);
}

/// Also: a UTF-8 byte order mark before the first record is not taken for part of it.
#[test]
fn a_byte_order_mark_before_the_first_record_is_skipped() {
    for runtime in [sna_history::Runtime::ClaudeCode, sna_history::Runtime::Codex] {
        let text = match runtime {
            sna_history::Runtime::ClaudeCode => claude_fixture(),
            _ => std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/codex/basic"))
                .unwrap()
                .map(|e| e.unwrap().path())
                .find(|p| p.file_name().unwrap().to_str().unwrap().starts_with("rollout-"))
                .map(|p| std::fs::read_to_string(p).unwrap())
                .unwrap(),
        };
        let store = Store::open_in_memory().unwrap();
        let plain = store.import_native(runtime, sna_history::Source::Text(text.clone()), &Options::default()).unwrap();
        let strict = Options { strict: true, session_id: Some("bom".into()), ..Options::default() };
        let bom = store.import_native(runtime, sna_history::Source::Text(format!("\u{feff}{text}")), &strict).unwrap();
        assert_eq!(bom.len().unwrap(), plain.len().unwrap(), "{runtime}");
        assert!(bom.import_report().unwrap().entries.is_empty(), "{runtime}");
    }
}

/// Defect 2: a record nested ~126 levels deep parsed, was stored two levels deeper and made the
/// whole session unreadable. What is accepted reads back; a record too deep is kept as text in an
/// error block, or refused in strict mode naming its line; a block's native data too deep is refused.
#[test]
fn a_deeply_nested_record_never_makes_a_session_unreadable() {
    let deep = format!("{{\"type\":\"progress\",\"data\":{}{}}}", "[".repeat(124), "]".repeat(124));
    let mut lines: Vec<String> = claude_fixture().lines().map(str::to_string).collect();
    lines.insert(3, deep.clone());
    let text = lines.join("\n") + "\n";
    let store = Store::open_in_memory().unwrap();
    let session = store.import_native(sna_history::Runtime::ClaudeCode, sna_history::Source::Text(text.clone()), &Options::default()).unwrap();
    let blocks = session.blocks().unwrap();
    let kept = blocks.iter().find(|b| b.kind == sna_history::Kind::Error).expect("kept as an error block");
    assert_eq!(kept.content, deep, "the line itself");
    let report = session.import_report().unwrap();
    assert!(report.entries[0].message.contains("line 4") && report.entries[0].message.contains("nested more than"), "{report:?}");
    for runtime in [sna_history::Runtime::ClaudeCode, sna_history::Runtime::Codex, sna_history::Runtime::OpenCode] {
        session.export(runtime, &Options::default()).unwrap();
    }
    let strict = Options { strict: true, session_id: Some("strict".into()), ..Options::default() };
    let err = store.import_native(sna_history::Runtime::ClaudeCode, sna_history::Source::Text(text), &strict).unwrap_err();
    assert_eq!(err.code(), "INVALID_INPUT");
    assert_eq!(err.location().unwrap().line, Some(4), "{err}");
    // Parsed data (what Python and Node pass) too.
    let value: serde_json::Value = serde_json::from_str(&deep).unwrap();
    let listed = store
        .import_native(sna_history::Runtime::ClaudeCode, sna_history::Source::Value(serde_json::json!([value.clone()])), &Options { session_id: Some("listed".into()), ..Options::default() })
        .unwrap();
    assert_eq!(listed.blocks().unwrap()[0].content, value.to_string());
    let mut block = sna_history::Block::text(sna_history::Actor::User, "hi");
    block.native = Some(sna_history::Native { runtime: "claude-code".into(), data: serde_json::json!({"record": value}) });
    let err = listed.append(block).unwrap_err();
    assert_eq!(err.code(), "INVALID_INPUT");
    assert_eq!(err.location().unwrap().field.as_deref(), Some("native.data"));
    assert_eq!(listed.blocks().unwrap().len(), 1, "readable, nothing added");
}

/// Defect 2 on another path (issue 47): a key beside `info` and `messages` of an OpenCode export
/// document, nested 124 levels deep, was accepted (as text or parsed) and kept with the first
/// block, after the block's own check; from then on every read of the session failed. Such a key
/// is refused like a record as deep, naming it, whichever way the document comes; one that is deep
/// but within the limit is kept and reads back.
#[test]
fn a_deeply_nested_top_level_key_of_an_opencode_document_is_refused() {
    let fixture = sna_test_support::fixture("opencode/basic/export.json");
    let document: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(fixture).unwrap()).unwrap();
    let nested = |levels: usize| (0..levels).fold(serde_json::json!(1), |inner, _| serde_json::json!({ "k": inner }));
    let store = Store::open_in_memory().unwrap();
    for (levels, accepted) in [(124, false), (101, false), (100, true)] {
        let mut deep = document.clone();
        deep["extra"] = nested(levels);
        let sources = [("text", sna_history::Source::Text(deep.to_string())), ("parsed", sna_history::Source::Value(deep.clone()))];
        for (how, source) in sources {
            let id = format!("deep-{levels}-{how}");
            let options = Options { session_id: Some(id.clone()), ..Options::default() };
            let imported = store.import_native(sna_history::Runtime::OpenCode, source, &options);
            if accepted {
                let session = imported.unwrap_or_else(|e| panic!("{levels} levels, {how}: {e}"));
                assert_eq!(session.blocks().unwrap().len(), 5, "{how}");
                let back = session.to_native(sna_history::Runtime::OpenCode, &Options::default()).unwrap();
                assert_eq!(back["extra"], deep["extra"], "{how}: the key comes back");
                continue;
            }
            let err = imported.err().unwrap_or_else(|| panic!("{levels} levels, {how}: accepted"));
            assert_eq!(err.code(), "INVALID_INPUT", "{how}: {err}");
            assert_eq!(err.location().unwrap().field.as_deref(), Some("extra"), "{how}: {err}");
            assert!(err.to_string().contains("nested more than 100 levels deep"), "{how}: {err}");
            assert!(store.session(&id).is_err(), "{how}: nothing of it is stored");
        }
    }
    // Every session that was accepted reads back.
    for info in store.sessions().unwrap() {
        store.session(&info.id).unwrap().blocks().unwrap();
    }
}

/// The same limit at every place a record comes from: a key nested 124 levels deep added to the
/// first record of each runtime's history (a header or a message) is kept as the line's text in an
/// error block and the session reads back and exports; strict mode refuses it naming the line. (Gemini
/// CLI used to keep the record itself as the error block's native data, which the store refused:
/// the whole import failed in lenient mode.)
#[test]
fn a_record_nested_too_deep_is_kept_the_same_way_by_every_runtime() {
    use sna_history::Runtime;
    let nested = (0..124).fold(serde_json::json!(1), |inner, _| serde_json::json!({ "k": inner }));
    let histories = [
        (Runtime::ClaudeCode, "claude-code/basic", "59187973"),
        (Runtime::Codex, "codex/basic", "rollout-"),
        (Runtime::GeminiCli, "gemini-cli/basic", "session-"),
        (Runtime::Pi, "pi/basic", "2026-"),
    ];
    let store = Store::open_in_memory().unwrap();
    for (runtime, dir, prefix) in histories {
        let text = std::fs::read_to_string(sna_test_support::fixture_file(dir, prefix)).unwrap();
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        let mut first: serde_json::Value = serde_json::from_str(&lines[0]).unwrap();
        first["deep"] = nested.clone();
        lines[0] = first.to_string();
        let text = lines.join("\n") + "\n";
        let options = Options { session_id: Some(format!("deep-{runtime}")), ..Options::default() };
        let session = store.import_native(runtime, sna_history::Source::Text(text.clone()), &options).unwrap_or_else(|e| panic!("{runtime}: {e}"));
        let blocks = session.blocks().unwrap();
        let kept = blocks.iter().find(|b| b.kind == sna_history::Kind::Error).unwrap_or_else(|| panic!("{runtime}: no error block"));
        assert_eq!(kept.content, lines[0], "{runtime}: the line itself");
        session.export(runtime, &Options::default()).unwrap_or_else(|e| panic!("{runtime}: {e}"));
        let strict = Options { strict: true, session_id: Some(format!("strict-{runtime}")), ..Options::default() };
        let err = store.import_native(runtime, sna_history::Source::Text(text), &strict).unwrap_err();
        assert_eq!(err.code(), "INVALID_INPUT", "{runtime}: {err}");
        assert_eq!(err.location().unwrap().line, Some(1), "{runtime}: {err}");
        assert!(err.to_string().contains("nested more than 100 levels deep"), "{runtime}: {err}");
    }
}

/// Defect 14: a Codex `input_text` part with `"text": null` came back as `"[input_text]"`, even in
/// strict mode; it round-trips exactly.
#[test]
fn a_codex_text_part_without_text_round_trips() {
    let line = r#"{"timestamp":"2026-12-02T15:47:38.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":null},{"type":"input_text","text":"hi"}]}}"#;
    let store = Store::open_in_memory().unwrap();
    let strict = Options { strict: true, ..Options::default() };
    let session = store.import_native(sna_history::Runtime::Codex, sna_history::Source::Text(format!("{line}\n")), &strict).unwrap();
    let rollout = session.to_native(sna_history::Runtime::Codex, &Options { format: Some("rollout".into()), strict: true, ..Options::default() }).unwrap();
    let original: serde_json::Value = serde_json::from_str(line).unwrap();
    assert_eq!(rollout[0], original);
}

/// Defect 13: integers outside 64 bits came back as floats (`10**30` → `1e+30`); numbers are kept
/// as they were written.
#[test]
fn numbers_beyond_64_bits_round_trip_exactly() {
    let mut lines: Vec<String> = claude_fixture().lines().map(str::to_string).collect();
    let mut record: serde_json::Value = serde_json::from_str(&lines[0]).unwrap();
    let big: serde_json::Value = serde_json::from_str("1000000000000000000000000000000").unwrap();
    let precise: serde_json::Value = serde_json::from_str("0.1000000000000000055511151231257827").unwrap();
    record["bigCounter"] = big.clone();
    record["precise"] = precise.clone();
    lines[0] = record.to_string();
    let text = lines.join("\n") + "\n";
    let store = Store::open(tempfile::tempdir().unwrap().path().join("h.db")).unwrap();
    let session = store.import_native(sna_history::Runtime::ClaudeCode, sna_history::Source::Text(text.clone()), &Options::default()).unwrap();
    let back = session.to_native(sna_history::Runtime::ClaudeCode, &Options::default()).unwrap();
    assert_eq!(back[0]["bigCounter"].to_string(), "1000000000000000000000000000000");
    assert_eq!(back[0]["precise"].to_string(), "0.1000000000000000055511151231257827");
    let written: Vec<String> = back.as_array().unwrap().iter().map(|r| r.to_string()).collect();
    assert_eq!(written.join("\n") + "\n", text, "the transcript comes back byte for byte");
}

/// Also: a database the user may only read opens read-only (`Store::open` falls back to it when
/// the file or its directory cannot be written), so that listing, showing and exporting work;
/// writes are refused, saying so.
#[test]
fn a_database_opens_read_only() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("é #1.db");
    {
        let store = Store::open(&db).unwrap();
        store.import_native(sna_history::Runtime::ClaudeCode, sna_history::Source::Text(claude_fixture()), &Options::default()).unwrap();
    }
    let store = Store::open_read_only(&db).unwrap();
    let [info] = store.sessions().unwrap().try_into().unwrap();
    let session = store.session(&info.id).unwrap();
    assert!(session.len().unwrap() > 10);
    session.to_native(sna_history::Runtime::Codex, &Options::default()).unwrap();
    let err = store.create_session(sna_history::NewSession::new()).unwrap_err();
    assert_eq!(err.code(), "STORAGE");
    assert!(err.to_string().contains("readonly"), "{err}");
    assert!(err.to_string().contains(&format!("the database {} is read-only", db.display())), "{err}");
}

/// Defect 9: the record size limit is configurable (`max_record_bytes`); a longer line is refused
/// with its line, in lenient mode too (it is not read into memory).
#[test]
fn the_record_size_limit_is_an_option() {
    let text = claude_fixture();
    let longest = text.lines().map(str::len).max().unwrap() as u64;
    let store = Store::open_in_memory().unwrap();
    let small = Options { max_record_bytes: Some(longest - 1), ..Options::default() };
    let err = store.import_native(sna_history::Runtime::ClaudeCode, sna_history::Source::Text(text.clone()), &small).unwrap_err();
    assert_eq!(err.code(), "INVALID_INPUT");
    assert!(err.to_string().contains(&format!("longer than {} bytes", longest - 1)), "{err}");
    assert!(err.location().unwrap().line.is_some());
    let enough = Options { max_record_bytes: Some(longest + 1), ..Options::default() };
    store.import_native(sna_history::Runtime::ClaudeCode, sna_history::Source::Text(text), &enough).unwrap();
    assert_eq!(sna_history::native::MAX_RECORD_BYTES, 256 << 20);
}

/// Also: `Store::open` itself falls back to read-only for a database in a directory that cannot
/// be written (made immutable here, as root may write anything else), so that reading works.
#[cfg(target_os = "linux")]
#[test]
fn open_falls_back_to_read_only() {
    let dir = tempfile::tempdir().unwrap();
    let sealed = dir.path().join("sealed");
    std::fs::create_dir(&sealed).unwrap();
    let db = sealed.join("h.db");
    {
        let store = Store::open(&db).unwrap();
        store.import_native(sna_history::Runtime::ClaudeCode, sna_history::Source::Text(claude_fixture()), &Options::default()).unwrap();
    }
    let _guard = sna_test_support::Immutable::seal([&sealed]);
    let store = Store::open(&db).unwrap();
    let [info] = store.sessions().unwrap().try_into().unwrap();
    assert!(store.session(&info.id).unwrap().len().unwrap() > 10);
    let err = store.create_session(sna_history::NewSession::new()).unwrap_err();
    assert_eq!(err.code(), "STORAGE", "{err}");
}

/// Found while probing the host (issue 19): an OpenCode tool part whose `state.input` is `null`
/// made `to_native` fail with INTERNAL; it comes back as it was.
#[test]
fn an_opencode_tool_part_with_null_input_exports_back() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/opencode/tools-reasoning/export.json");
    let mut doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let part = doc["messages"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .flat_map(|m| m["parts"].as_array_mut().unwrap().iter_mut())
        .find(|p| p["type"] == "tool")
        .unwrap();
    part["state"]["input"] = serde_json::Value::Null;
    let store = Store::open_in_memory().unwrap();
    let session = store.import_native(sna_history::Runtime::OpenCode, sna_history::Source::Value(doc.clone()), &Options::default()).unwrap();
    assert_eq!(session.to_native(sna_history::Runtime::OpenCode, &Options::default()).unwrap(), doc);
}
