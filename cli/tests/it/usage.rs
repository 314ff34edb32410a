//! `sna usage` end to end: the table with its totals, JSON, the price file, errors.
//! (tests/conformance/test_ccusage.py checks the figures against ccusage.)

use predicates::prelude::*;
use crate::{fixtures, sna};

#[test]
fn usage_prints_a_table_with_totals_and_json_and_reads_the_user_price_file() {
    let dir = tempfile::tempdir().unwrap();
    // Importing first, as part of the command: the fixtures of Claude Code and Codex.
    let out = sna(dir.path()).arg("usage").arg(fixtures().join("claude-code")).arg(fixtures().join("codex")).args(["--by", "model", "--tz", "UTC"]).assert().success().get_output().clone();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines[0].starts_with("Model") && lines[0].contains("Input") && lines[0].ends_with("Cost (USD)"), "{stdout}");
    // The mock models have no price: counted, marked, listed.
    let claude = lines.iter().find(|l| l.starts_with("claude-opus-5-5")).unwrap();
    assert!(claude.ends_with("— *"), "{claude}");
    let total = lines.iter().find(|l| l.starts_with("Total")).unwrap();
    assert!(total.contains("*"), "{total}");
    assert!(stdout.contains("* not priced (tokens counted, cost not): claude-opus-5-5"), "{stdout}");
    assert!(String::from_utf8(out.stderr).unwrap().contains("imported"));

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

    sna(dir.path()).args(["usage", "--by", "year"]).assert().failure().stderr(predicate::str::contains("by").and(predicate::str::contains("year")));
    sna(dir.path()).args(["usage", "--tz", "Mars/Olympus"]).assert().failure().stderr(predicate::str::contains("Mars/Olympus"));
    sna(dir.path()).args(["usage", "--prices"]).arg(dir.path().join("none.json")).assert().failure().stderr(predicate::str::contains("none.json"));
}
