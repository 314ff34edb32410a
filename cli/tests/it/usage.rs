//! `sna usage` end to end: the table with its totals, JSON, the price file, errors.
//! (tests/conformance/test_ccusage.py checks the figures against ccusage.)

use crate::{fixtures, sna, snapshots};

#[test]
fn usage_prints_a_table_with_totals_and_json_and_reads_the_user_price_file() {
    let dir = tempfile::tempdir().unwrap();
    // Importing first, as part of the command: the fixtures of Claude Code and Codex.
    // The table's header, a row per model, the totals; the mock models have no price: counted,
    // marked, listed. On stderr, what the import did.
    let (claude_code, codex) = (fixtures().join("claude-code"), fixtures().join("codex"));
    let text = snapshots::run(dir.path(), &["usage", claude_code.to_str().unwrap(), codex.to_str().unwrap(), "--by", "model", "--tz", "UTC"]);
    snapshots::settings(dir.path()).bind(|| insta::assert_snapshot!("usage_by_model_after_import", text));

    // The runs before 2026-12-06 (the compaction runs' mocks report large prompts on purpose).
    let json = sna(dir.path()).args(["usage", "--json", "--tz", "UTC", "--until", "2026-12-05"]).assert().success().get_output().stdout.clone();
    let report: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(report["by"], "day");
    assert_eq!(report["rows"][0]["key"], "2026-12-02");
    let responses = report["totals"]["responses"].as_u64().unwrap();
    assert!(responses >= 10, "{report}");
    assert_eq!(report["totals"]["input"].as_u64().unwrap(), 11 * responses, "every fixture response reads 11 tokens");

    // $XDG_CONFIG_HOME/sna/prices.json prices the mock model.
    let config = dir.path().join("config");
    std::fs::create_dir_all(config.join("sna")).unwrap();
    std::fs::write(config.join("sna/prices.json"), r#"{"models": {"claude-opus-5-5": {"input": 1000000, "output": 0}}}"#).unwrap();
    let json = sna(dir.path()).env("XDG_CONFIG_HOME", &config).args(["usage", "--json", "--by", "model", "--runtime", "claude-code"]).assert().success().get_output().stdout.clone();
    let report: serde_json::Value = serde_json::from_slice(&json).unwrap();
    let row = report["rows"].as_array().unwrap().iter().find(|r| r["key"] == "claude-opus-5-5").unwrap();
    assert_eq!(row["cost_usd"].as_f64(), Some(row["input"].as_f64().unwrap()));
    assert_eq!(report["prices"]["files"][0].as_str().unwrap(), config.join("sna/prices.json").display().to_string());

    // A file that cannot be imported is named and makes the exit status 1; the report is printed.
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, "not json at all\n").unwrap();
    let out = sna(dir.path()).arg("usage").arg(&bad).arg("--json").assert().failure().get_output().clone();
    assert!(String::from_utf8(out.stderr).unwrap().contains("bad.jsonl"));
    let all = sna(dir.path()).args(["usage", "--json"]).assert().success().get_output().stdout.clone();
    let all = serde_json::from_slice::<serde_json::Value>(&all).unwrap()["totals"]["responses"].as_u64();
    assert_eq!(serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()["totals"]["responses"].as_u64(), all);

    // A bad grouping, time zone or price file: exit 1, one line naming it.
    let none = dir.path().join("none.json");
    let none = none.to_str().unwrap();
    let text = snapshots::runs(dir.path(), &[&["usage", "--by", "year"], &["usage", "--tz", "Mars/Olympus"], &["usage", "--prices", none]]);
    snapshots::settings(dir.path()).bind(|| insta::assert_snapshot!("usage_errors", text));
}
