//! Token usage and cost (issue 23): what each runtime's records report, counted once per response;
//! the report's groupings, time zones, filters and prices; usage kept with imports, appends of
//! grown files and deletions, and made for stores older than it. Every store test runs on SQLite
//! and (`--features pg-tests`) PostgreSQL. tests/conformance/test_ccusage.py checks the counts
//! against ccusage on generated trees.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use sna_test_support::fixture;
use sna_history::{Options, Runtime, Source, Store, Tokens, UsageBy, UsageOptions, UsageReport};

use sna_test_support::on_both_backends;

fn jsonl(records: &[Value]) -> String {
    records.iter().map(|r| format!("{r}\n")).collect()
}

fn utc(by: UsageBy) -> UsageOptions {
    UsageOptions { by, tz: Some("UTC".into()), prices: Some(empty_prices()), ..UsageOptions::default() }
}

/// A price file that adds nothing (so that no user file of the machine's is read).
fn empty_prices() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/no-prices.json")
}

fn tokens(input: u64, output: u64, cache_read: u64, cache_write: u64, reasoning: u64) -> Tokens {
    Tokens { input, output, cache_read, cache_write, reasoning }
}

fn import(store: &Store, runtime: Runtime, text: String) {
    store.import_native(runtime, Source::Text(text), &Options::default()).unwrap();
}

/// An assistant record of a Claude Code transcript: one content item of response `id`.
fn claude(session: &str, id: &str, request: Option<&str>, at: &str, model: &str, usage: Value, item: Value) -> Value {
    let mut record = json!({
        "type": "assistant", "uuid": format!("{id}-{at}"), "parentUuid": null, "sessionId": session, "timestamp": at,
        "cwd": "/home/dev/p", "version": "2.0.55",
        "message": {"id": id, "type": "message", "role": "assistant", "model": model, "content": [item], "usage": usage},
    });
    if let Some(request) = request {
        record["requestId"] = json!(request);
    }
    record
}

fn text(t: &str) -> Value {
    json!({"type": "text", "text": t})
}

on_both_backends! {
    /// A response written once per content record counts once, the largest copy (the final
    /// output count) winning; `requestRef` (Claude Code 2.1) is the request id too; a copy in
    /// another session (a resume) counts once; a side chain's copy loses to the main one.
    fn claude_code_counts_each_response_once(store: Store) {
        let usage = |output: u64| json!({"input_tokens": 100, "cache_creation_input_tokens": 20, "cache_read_input_tokens": 3000, "output_tokens": output});
        let first = jsonl(&[
            claude("s1", "msg_a", Some("req_a"), "2026-11-30T10:00:00.000Z", "claude-sonnet-4-5", usage(5), json!({"type": "thinking", "thinking": "x", "signature": "s"})),
            claude("s1", "msg_a", Some("req_a"), "2026-11-30T10:00:00.000Z", "claude-sonnet-4-5", usage(50), text("a")),
            claude("s1", "msg_b", None, "2026-11-30T10:01:00.000Z", "claude-sonnet-4-5", usage(7), text("b")),
            claude("s1", "msg_b", None, "2026-11-30T10:01:00.010Z", "claude-sonnet-4-5", usage(7), text("b2")),
        ])
        .replace("\"uuid\":\"msg_b-2026-11-30T10:01:00.010Z\"", "\"requestRef\":\"ref_b\",\"uuid\":\"b2\"")
        .replace("\"uuid\":\"msg_b-2026-11-30T10:01:00.000Z\"", "\"requestRef\":\"ref_b\",\"uuid\":\"b1\"");
        import(&store, Runtime::ClaudeCode, first);
        let mut side = claude("s2", "msg_a", Some("req_a"), "2026-11-30T10:00:00.000Z", "claude-sonnet-4-5", usage(500), text("a"));
        side["isSidechain"] = json!(true);
        let second = jsonl(&[
            claude("s2", "msg_a", Some("req_a"), "2026-11-30T10:00:00.000Z", "claude-sonnet-4-5", usage(50), text("a")),
            side,
            claude("s2", "msg_c", Some("req_c"), "2026-12-01T09:00:00.000Z", "claude-foo-9", usage(1), text("c")),
        ]);
        import(&store, Runtime::ClaudeCode, second);
        let report = store.usage(&utc(UsageBy::Day)).unwrap();
        assert_eq!(report.rows.len(), 2);
        let day = &report.rows[0];
        assert_eq!(day.key.as_deref(), Some("2026-11-30"));
        assert_eq!(day.responses, 2, "msg_a once (50, not the side chain's 500), msg_b once");
        assert_eq!(day.tokens, tokens(200, 57, 6000, 40, 0));
        assert_eq!(day.total, 200 + 57 + 6000 + 40);
        // claude-sonnet-4-5: $3 in, $15 out, $0.30 cache read, $3.75 cache write per million.
        let cost = (200.0 * 3.0 + 57.0 * 15.0 + 6000.0 * 0.3 + 40.0 * 3.75) / 1e6;
        assert!((day.cost_usd.unwrap() - cost).abs() < 1e-12, "{:?} vs {cost}", day.cost_usd);
        let unpriced = &report.rows[1];
        assert_eq!((unpriced.cost_usd, unpriced.unpriced_models.clone()), (None, vec!["claude-foo-9".to_string()]));
        assert_eq!(report.unpriced_models, vec!["claude-foo-9".to_string()]);
        assert_eq!(report.totals.cost_usd.map(|c| (c * 1e9).round()), Some((cost * 1e9).round()), "an unpriced model adds nothing");
        assert_eq!(report.totals.responses, 3);
    }
}

on_both_backends! {
    /// Codex writes running totals: a count whose total did not move is no new response; one
    /// without `last_token_usage` is the difference of the totals; input excludes the cached
    /// tokens, output includes the reasoning; the model is the turn context's. A rollout that grew
    /// goes on from the total stored.
    fn codex_token_counts_follow_the_running_total(store: Store) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rollout-2026-11-30T10-00-00-0199aaaa-0000-7000-8000-000000000001.jsonl");
        let meta = json!({"timestamp": "2026-11-30T10:00:00.000Z", "type": "session_meta", "payload": {"id": "0199aaaa-0000-7000-8000-000000000001", "timestamp": "2026-11-30T10:00:00.000Z", "cwd": "/home/dev/p", "originator": "codex_cli_rs", "cli_version": "0.169.0", "model_provider": "openai"}});
        let context = |model: &str| json!({"timestamp": "2026-11-30T10:00:01.000Z", "type": "turn_context", "payload": {"cwd": "/home/dev/p", "model": model}});
        let count = |at: &str, total: [u64; 4], last: Option<[u64; 4]>| {
            let usage = |[input, cached, output, reasoning]: [u64; 4]| json!({"input_tokens": input, "cached_input_tokens": cached, "output_tokens": output, "reasoning_output_tokens": reasoning, "total_tokens": input + output});
            let mut info = json!({"total_token_usage": usage(total)});
            if let Some(last) = last {
                info["last_token_usage"] = usage(last);
            }
            json!({"timestamp": at, "type": "event_msg", "payload": {"type": "token_count", "info": info}})
        };
        let answer = json!({"timestamp": "2026-11-30T10:00:01.500Z", "type": "response_item", "payload": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}});
        let part1 = jsonl(&[
            meta,
            context("gpt-5"),
            answer,
            count("2026-11-30T10:00:02.000Z", [1000, 400, 100, 30], Some([1000, 400, 100, 30])),
            // The same total again: skipped.
            count("2026-11-30T10:00:02.100Z", [1000, 400, 100, 30], Some([1000, 400, 100, 30])),
            // A total only: the difference.
            count("2026-11-30T10:00:03.000Z", [3000, 900, 300, 30], None),
        ]);
        std::fs::write(&path, &part1).unwrap();
        store.import_source(&path, Some(Runtime::Codex), &Options::default()).unwrap();
        let part2 = jsonl(&[context("gpt-5-mini"), count("2026-11-30T10:00:04.000Z", [3500, 900, 350, 30], Some([500, 0, 50, 0]))]);
        std::fs::write(&path, format!("{part1}{part2}")).unwrap();
        let grown = store.import_source(&path, Some(Runtime::Codex), &Options::default()).unwrap();
        assert!(matches!(grown.outcome, sna_history::SourceOutcome::Appended(_)), "{:?}", grown.outcome);
        let report = store.usage(&utc(UsageBy::Model)).unwrap();
        let rows: Vec<(Option<String>, Tokens, u64)> = report.rows.iter().map(|r| (r.key.clone(), r.tokens, r.responses)).collect();
        assert_eq!(
            rows,
            vec![
                (Some("gpt-5".into()), tokens(600 + 1500, 100 + 200, 400 + 500, 0, 30), 2),
                (Some("gpt-5-mini".into()), tokens(500, 50, 0, 0, 0), 1),
            ]
        );
        assert_eq!(report.rows[0].cost_usd.map(|c| (c * 1e9).round()), Some(((2100.0 * 1.25 + 300.0 * 10.0 + 900.0 * 0.125) * 1e3_f64).round()));
        let by_provider = store.usage(&utc(UsageBy::Provider)).unwrap();
        assert_eq!(by_provider.rows.iter().map(|r| r.key.clone()).collect::<Vec<_>>(), vec![Some("openai".to_string())]);
    }
}

on_both_backends! {
    /// OpenCode's step-finish parts (its own cost wins over the table; reasoning is output),
    /// Gemini CLI's `tokens` (its input includes the cached tokens), Pi's `usage`, from the
    /// fixtures the real CLIs wrote.
    fn opencode_gemini_and_pi_report_their_responses(store: Store) {
        let mut export: Value = serde_json::from_str(&std::fs::read_to_string(fixture("opencode/basic/export.json")).unwrap()).unwrap();
        let mut finishes = 0;
        for message in export["messages"].as_array_mut().unwrap() {
            for part in message["parts"].as_array_mut().unwrap() {
                if part["type"] == "step-finish" {
                    part["cost"] = json!(0.5);
                    part["tokens"] = json!({"input": 10, "output": 20, "reasoning": 5, "cache": {"read": 30, "write": 40}});
                    finishes += 1;
                }
            }
        }
        assert!(finishes >= 1);
        store.import_native(Runtime::OpenCode, Source::Value(export), &Options::default()).unwrap();
        store.import_source(fixture("gemini-cli/basic/session-2026-12-04T14-48-dc901c24.jsonl"), None, &Options::default()).unwrap();
        let pi = std::fs::read_dir(fixture("pi/basic")).unwrap().map(|e| e.unwrap().path()).find(|p| p.file_name().unwrap().to_str().unwrap().starts_with("2026")).unwrap();
        store.import_source(&pi, None, &Options::default()).unwrap();
        let report = store.usage(&UsageOptions { runtime: Some("opencode".into()), ..utc(UsageBy::Model) }).unwrap();
        assert_eq!(report.rows.len(), 1);
        assert_eq!(report.rows[0].key.as_deref(), Some("claude-sonnet-4-5"));
        assert_eq!(report.rows[0].tokens, tokens(10 * finishes, 25 * finishes, 30 * finishes, 40 * finishes, 5 * finishes));
        assert_eq!(report.rows[0].cost_usd, Some(0.5 * finishes as f64));
        let gemini = store.usage(&UsageOptions { runtime: Some("gemini-cli".into()), ..utc(UsageBy::Model) }).unwrap();
        assert_eq!(gemini.rows.iter().map(|r| (r.key.clone(), r.tokens)).collect::<Vec<_>>(), vec![(Some("gemini-3.1-pro-preview".into()), tokens(11, 7, 0, 0, 0))]);
        assert!(gemini.rows[0].cost_usd.unwrap() > 0.0);
        let pi = store.usage(&UsageOptions { runtime: Some("pi".into()), ..utc(UsageBy::Model) }).unwrap();
        assert_eq!(pi.rows.len(), 1);
        assert_eq!(pi.rows[0].key.as_deref(), Some("mock-claude"));
        assert_eq!(pi.rows[0].tokens.input, 11 * pi.rows[0].responses);
        // Pi priced the mock model at $0 for the tokens: that is no price, not a cost of $0.
        assert_eq!((pi.rows[0].cost_usd, pi.unpriced_models.clone()), (None, vec!["mock-claude".to_string()]));
    }
}

/// Two sessions in two projects, three days, two models.
fn spread(store: &Store) {
    let usage = |n: u64| json!({"input_tokens": n, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": n});
    let mut a = vec![
        claude("a", "m1", Some("r1"), "2026-11-29T23:30:00.000Z", "claude-sonnet-4-5", usage(1), text("1")),
        claude("a", "m2", Some("r2"), "2026-11-30T00:30:00.000Z", "claude-opus-4-1", usage(10), text("2")),
    ];
    a.insert(0, json!({"type": "user", "uuid": "u0", "sessionId": "a", "timestamp": "2026-11-29T23:29:00.000Z", "cwd": "/home/dev/alpha", "message": {"role": "user", "content": "hi"}}));
    import(store, Runtime::ClaudeCode, jsonl(&a));
    let b = vec![
        json!({"type": "user", "uuid": "u1", "sessionId": "b", "timestamp": "2026-12-01T12:00:00.000Z", "cwd": "/home/dev/beta", "message": {"role": "user", "content": "hi"}}),
        claude("b", "m3", Some("r3"), "2026-12-07T12:00:00.000Z", "claude-sonnet-4-5", usage(100), text("3")),
    ];
    import(store, Runtime::ClaudeCode, jsonl(&b).replace("/home/dev/p", "/home/dev/beta"));
}

fn keys(report: &UsageReport) -> Vec<(String, u64)> {
    report.rows.iter().map(|r| (r.key.clone().unwrap_or_default(), r.tokens.input)).collect()
}

on_both_backends! {
    /// Days, weeks (from Monday) and months in the time zone asked for; sessions, projects,
    /// models; since and until (a date is a day in the zone, `until` included); filters.
    fn reports_group_by_time_session_project_and_model(store: Store) {
        spread(&store);
        let k = |s: &str, n: u64| (s.to_string(), n);
        assert_eq!(keys(&store.usage(&utc(UsageBy::Day)).unwrap()), vec![k("2026-11-29", 1), k("2026-11-30", 10), k("2026-12-07", 100)]);
        let tokyo = UsageOptions { tz: Some("Asia/Tokyo".into()), ..utc(UsageBy::Day) };
        let report = store.usage(&tokyo).unwrap();
        assert_eq!(keys(&report), vec![k("2026-11-30", 11), k("2026-12-07", 100)]);
        assert_eq!(report.tz, "Asia/Tokyo");
        assert_eq!(keys(&store.usage(&utc(UsageBy::Week)).unwrap()), vec![k("2026-11-23", 1), k("2026-11-30", 10), k("2026-12-07", 100)]);
        assert_eq!(keys(&store.usage(&utc(UsageBy::Month)).unwrap()), vec![k("2026-11", 11), k("2026-12", 100)]);
        assert_eq!(keys(&store.usage(&utc(UsageBy::Session)).unwrap()), vec![k("a", 11), k("b", 100)]);
        assert_eq!(keys(&store.usage(&utc(UsageBy::Project)).unwrap()), vec![k("/home/dev/beta", 100), k("/home/dev/alpha", 11)]);
        let by_model = store.usage(&utc(UsageBy::Model)).unwrap();
        // Sonnet: 101 × ($3 + $15) per million; Opus: 10 × ($15 + $75).
        assert_eq!(keys(&by_model), vec![k("claude-sonnet-4-5", 101), k("claude-opus-4-1", 10)], "most expensive first");
        let since = UsageOptions { since: Some("2026-11-30".into()), until: Some("2026-11-30".into()), ..utc(UsageBy::Day) };
        assert_eq!(keys(&store.usage(&since).unwrap()), vec![k("2026-11-30", 10)]);
        let since_tokyo = UsageOptions { since: Some("2026-11-30".into()), until: Some("2026-11-30".into()), ..tokyo.clone() };
        assert_eq!(keys(&store.usage(&since_tokyo).unwrap()), vec![k("2026-11-30", 11)]);
        let instant = UsageOptions { until: Some("2026-11-30T00:30:00Z".into()), ..utc(UsageBy::Day) };
        assert_eq!(keys(&store.usage(&instant).unwrap()), vec![k("2026-11-29", 1)], "an instant is exclusive");
        let model = UsageOptions { model: Some("claude-sonnet-4-5".into()), ..utc(UsageBy::Month) };
        assert_eq!(keys(&store.usage(&model).unwrap()), vec![k("2026-11", 1), k("2026-12", 100)]);
        assert!(store.usage(&UsageOptions { runtime: Some("codex".into()), ..utc(UsageBy::Day) }).unwrap().rows.is_empty());
        // A deleted session leaves the report.
        store.delete_session("b").unwrap();
        assert_eq!(keys(&store.usage(&utc(UsageBy::Session)).unwrap()), vec![k("a", 11)]);
    }
}

on_both_backends! {
    /// A user's price file overrides the table model by model; bad options and files are
    /// INVALID_INPUT naming the field.
    fn prices_and_bad_options(store: Store) {
        spread(&store);
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("prices.json");
        std::fs::write(&file, r#"{"date": "2026-12-01", "models": {"claude-opus-4-1": {"input": 1000000, "output": 0}}}"#).unwrap();
        let report = store.usage(&UsageOptions { prices: Some(file.clone()), ..utc(UsageBy::Model) }).unwrap();
        assert_eq!(report.rows[0].key.as_deref(), Some("claude-opus-4-1"));
        assert_eq!(report.rows[0].cost_usd, Some(10.0));
        assert_eq!(report.prices.files, vec![file.display().to_string()]);
        assert_eq!(report.prices.date, "2026-12-06");
        let err = |options: UsageOptions| store.usage(&options).unwrap_err();
        let e = err(UsageOptions { tz: Some("Mars/Olympus".into()), ..utc(UsageBy::Day) });
        assert_eq!((e.code().as_str(), e.location().and_then(|l| l.field.as_deref())), ("INVALID_INPUT", Some("tz")), "{e}");
        let e = err(UsageOptions { since: Some("yesterday".into()), ..utc(UsageBy::Day) });
        assert_eq!(e.location().and_then(|l| l.field.as_deref()), Some("since"), "{e}");
        let e = err(UsageOptions { runtime: Some("vim".into()), ..utc(UsageBy::Day) });
        assert_eq!(e.location().and_then(|l| l.field.as_deref()), Some("runtime"), "{e}");
        std::fs::write(&file, r#"{"models": {"x": {"input": 1, "output": 1, "cache_reed": 1}}}"#).unwrap();
        let e = err(UsageOptions { prices: Some(file.clone()), ..utc(UsageBy::Day) });
        assert!(e.to_string().contains("cache_reed") && e.to_string().contains("line 1"), "{e}");
        let e = err(UsageOptions { prices: Some(dir.path().join("missing.json")), ..utc(UsageBy::Day) });
        assert!(e.to_string().contains("missing.json"), "{e}");
        let e = UsageOptions::from_value(json!({"by": "year"})).unwrap_err();
        assert_eq!(e.location().and_then(|l| l.field.as_deref()), Some("by"), "{e}");
        let e = UsageOptions::from_value(json!({"zone": "UTC"})).unwrap_err();
        assert!(e.to_string().contains("zone"), "{e}");
    }
}

#[test]
fn an_older_database_gets_its_usage_when_opened() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.db");
    let before = {
        let store = Store::open(&path).unwrap();
        spread(&store);
        // A Codex rollout of 6,000 records whose counts carry totals only: the build reads it in two
        // batches, the second going on from the total the first stored.
        let mut records = vec![json!({"timestamp": "2026-11-30T10:00:00.000Z", "type": "session_meta", "payload": {"id": "0199aaaa-0000-7000-8000-000000000002", "cwd": "/home/dev/c", "model_provider": "openai"}})];
        for i in 0..3000u64 {
            records.push(json!({"timestamp": "2026-11-30T10:00:01.000Z", "type": "turn_context", "payload": {"model": if i < 2600 { "gpt-5" } else { "gpt-5-mini" }}}));
            let total = json!({"input_tokens": 10 * (i + 1), "cached_input_tokens": 0, "output_tokens": i + 1, "reasoning_output_tokens": 0, "total_tokens": 11 * (i + 1)});
            records.push(json!({"timestamp": "2026-11-30T10:00:02.000Z", "type": "event_msg", "payload": {"type": "token_count", "info": {"total_token_usage": total}}}));
        }
        import(&store, Runtime::Codex, jsonl(&records));
        store.usage(&utc(UsageBy::Model)).unwrap()
    };
    // As a store of schema 6 is after the migration to 7: no usage rows, the build pending.
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch("DELETE FROM usage; INSERT INTO store_meta (key, value) VALUES ('usage_from', '0');").unwrap();
    drop(conn);
    let store = Store::open(&path).unwrap();
    assert_eq!(store.usage(&utc(UsageBy::Model)).unwrap(), before);
    assert_eq!(before.totals.responses, 3 + 3000);
    let mini = before.rows.iter().find(|r| r.key.as_deref() == Some("gpt-5-mini")).unwrap();
    assert_eq!((mini.tokens.input, mini.tokens.output, mini.responses), (4000, 400, 400));
    let left: i64 = rusqlite::Connection::open(&path).unwrap().query_row("SELECT count(*) FROM store_meta WHERE key = 'usage_from'", [], |r| r.get(0)).unwrap();
    assert_eq!(left, 0, "the build is done");
}

on_both_backends! {
    /// A sync brings the usage with the blocks: the target reports what the source does.
    fn a_sync_brings_the_usage(store: Store) {
        let source = Store::open_in_memory().unwrap();
        spread(&source);
        store.import_source(fixture("codex/basic/rollout-2026-12-02T15-47-38-01a23770-a56e-7aa2-983a-2aa2cbed9afd.jsonl"), None, &Options::default()).unwrap();
        let local = store.usage(&utc(UsageBy::Session)).unwrap();
        source.sync_to(&store, &sna_history::SyncOptions { origin: Some("laptop".into()) }).unwrap();
        let both = store.usage(&utc(UsageBy::Session)).unwrap();
        let from = source.usage(&utc(UsageBy::Session)).unwrap();
        assert_eq!(both.totals.tokens, { let mut t = local.totals.tokens; t.add(&from.totals.tokens); t });
        assert_eq!(both.rows.len(), local.rows.len() + from.rows.len());
        // Again: nothing more.
        source.sync_to(&store, &sna_history::SyncOptions { origin: Some("laptop".into()) }).unwrap();
        assert_eq!(store.usage(&utc(UsageBy::Session)).unwrap(), both);
    }
}
