//! `sna search` and `sna show --at` end to end.

use predicates::prelude::*;
use crate::{fixtures, sna};

const TRANSCRIPT: &str = "60aa014b-82fa-4f7d-8a5d-270b96a69979";

#[test]
fn search_prints_where_and_a_marked_snippet_and_show_at_opens_the_context() {
    let dir = tempfile::tempdir().unwrap();
    sna(dir.path()).arg("import").arg(fixtures().join("claude-code")).arg(fixtures().join("codex")).assert().success();
    // The fixtures made before 2026-12-06 (the compaction runs came later and say the same).
    let out = sna(dir.path()).args(["search", "\"hello from notes\"", "--kind", "text", "--until", "2026-12-05"]).assert().success().get_output().clone();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.starts_with(&format!("{TRANSCRIPT} #31  2026-12-02 15:47  assistant text  claude-code claude-opus-5-5\n")), "{stdout}");
    assert!(stdout.contains("says: \"«hello from notes»\""), "{stdout}");
    assert!(String::from_utf8(out.stderr).unwrap().contains(&format!("sna show {TRANSCRIPT} --at 31")));

    let json = sna(dir.path()).args(["search", "notes*", "--runtime", "claude-code", "--limit", "2", "--until", "2026-12-05", "--json"]).assert().success().get_output().stdout.clone();
    let hits: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(hits.as_array().unwrap().len(), 2);
    assert_eq!(hits[0]["session_id"], TRANSCRIPT);
    assert!(hits[0]["snippet"].as_str().unwrap().contains('«'));
    let none = sna(dir.path()).args(["search", "notes", "--since", "2027-01-01", "--json"]).assert().success().get_output().stdout.clone();
    assert_eq!(serde_json::from_slice::<serde_json::Value>(&none).unwrap(), serde_json::json!([]));

    let shown = sna(dir.path()).args(["show", TRANSCRIPT, "--at", "31", "--context", "1"]).assert().success().get_output().stdout.clone();
    let shown = String::from_utf8(shown).unwrap();
    assert!(shown.contains("▶  31 ") && shown.contains("   30 ") && shown.contains("   32 ") && !shown.contains("   29 "), "{shown}");
    sna(dir.path()).args(["show", TRANSCRIPT, "--at", "999"]).assert().code(1).stderr(predicate::str::contains("no block at seq 999"));
}

#[test]
fn malformed_queries_and_options_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    sna(dir.path()).args(["search", "(a OR b"]).assert().code(1).stderr(predicate::str::contains("sna: field \"query\": the '(' at character 1 is not closed"));
    sna(dir.path()).args(["search", "a", "--since", "soon"]).assert().code(1).stderr(predicate::str::contains("field \"since\""));
    sna(dir.path()).args(["search", "a", "--kind", "poem"]).assert().code(1).stderr(predicate::str::contains("field \"kinds\""));
    sna(dir.path()).args(["search", "nothing"]).assert().success().stdout("").stderr(predicate::str::contains("no block matches"));
}
