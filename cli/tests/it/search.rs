//! `sna search` and `sna show --at` end to end.

use predicates::prelude::*;
use crate::{fixtures, sna, snapshots};

const TRANSCRIPT: &str = "60aa014b-82fa-4f7d-8a5d-270b96a69979";

#[test]
fn search_prints_where_and_a_marked_snippet_and_show_at_opens_the_context() {
    let dir = tempfile::tempdir().unwrap();
    sna(dir.path()).arg("import").arg(fixtures().join("claude-code")).arg(fixtures().join("codex")).assert().success();
    // The fixtures made before 2026-12-06 (the compaction runs came later and say the same).
    // Each hit: session, seq, time, actor, kind and attribution, then its snippet with the
    // matches marked; on stderr, the command that opens the first hit's context.
    let text = snapshots::run(dir.path(), &["search", "\"hello from notes\"", "--kind", "text", "--until", "2026-12-05"]);
    snapshots::settings(dir.path()).bind(|| insta::assert_snapshot!("search_phrase", text));

    let json = sna(dir.path()).args(["search", "notes*", "--runtime", "claude-code", "--limit", "2", "--until", "2026-12-05", "--json"]).assert().success().get_output().stdout.clone();
    let hits: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(hits.as_array().unwrap().len(), 2);
    assert_eq!(hits[0]["session_id"], TRANSCRIPT);
    assert!(hits[0]["snippet"].as_str().unwrap().contains('«'));
    let none = sna(dir.path()).args(["search", "notes", "--since", "2027-01-01", "--json"]).assert().success().get_output().stdout.clone();
    assert_eq!(serde_json::from_slice::<serde_json::Value>(&none).unwrap(), serde_json::json!([]));

    // Block 31 marked, one block on each side.
    let shown = snapshots::run(dir.path(), &["show", TRANSCRIPT, "--at", "31", "--context", "1"]);
    snapshots::settings(dir.path()).bind(|| insta::assert_snapshot!("show_at", shown));
    sna(dir.path()).args(["show", TRANSCRIPT, "--at", "999"]).assert().code(1).stderr(predicate::str::contains("no block at seq 999"));
}

#[test]
fn malformed_queries_and_options_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    // Exit 1 and one line naming the field; no hit is no error, and nothing on stdout.
    let text = snapshots::runs(dir.path(), &[&["search", "(a OR b"], &["search", "a", "--since", "soon"], &["search", "a", "--kind", "poem"], &["search", "nothing"]]);
    snapshots::settings(dir.path()).bind(|| insta::assert_snapshot!("search_errors", text));
}
