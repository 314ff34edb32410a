//! The cost of a replay after a compaction: a 10,000-block Claude Code session whose `/compact`
//! sits at block 9,000, replayed into Codex, against a 1,000-block session replayed the same way
//! (the floor: what the replayed tail costs). Budget (issue 38): at most 2×. `compaction: none`
//! of the 10,000-block session is measured too, for scale. The ratios are printed at the end
//! (medians of the same run).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::json;
use sna_history::{CompactionMode, Options, Runtime, Session, Store};

/// One turn of four records (prompt, tool call, result, answer) after `parent`; returns the last uuid.
fn turn(out: &mut impl Write, i: usize, parent: Option<String>) -> String {
    let uuid = |k: usize| format!("00000000-0000-4000-8000-{:012}", i * 4 + k);
    let base = |k: usize, parent: Option<String>, ty: &str| {
        json!({"type": ty, "uuid": uuid(k), "parentUuid": parent, "sessionId": "bench", "timestamp": "2026-12-01T10:00:00.000Z",
               "cwd": "/home/dev/project", "version": "2.1.328", "isSidechain": false})
    };
    let mut rows = Vec::new();
    let mut prompt = base(0, parent, "user");
    prompt["message"] = json!({"role": "user", "content": format!("Turn {i}: look at part {i} of the log and say what changed.")});
    rows.push(prompt);
    let mut call = base(1, Some(uuid(0)), "assistant");
    call["message"] = json!({"id": format!("msg_{i}_a"), "role": "assistant", "model": "claude-opus-4-5", "type": "message",
        "content": [{"type": "tool_use", "id": format!("toolu_{i:08}"), "name": "Bash", "input": {"command": format!("sed -n {i}p log")}}],
        "usage": {"input_tokens": 10, "output_tokens": 5}});
    rows.push(call);
    let mut result = base(2, Some(uuid(1)), "user");
    result["message"] = json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("toolu_{i:08}"), "content": format!("line {i}: ").repeat(20)}]});
    rows.push(result);
    let mut answer = base(3, Some(uuid(2)), "assistant");
    answer["message"] = json!({"id": format!("msg_{i}_b"), "role": "assistant", "model": "claude-opus-4-5", "type": "message",
        "content": [{"type": "text", "text": format!("Part {i} shows the retry loop; nothing else changed.")}],
        "usage": {"input_tokens": 10, "output_tokens": 5}});
    rows.push(answer);
    for row in rows {
        writeln!(out, "{row}").unwrap();
    }
    uuid(3)
}

/// A transcript of `before` turns, a `/compact` (boundary and summary row) when `compact`, then
/// `after` turns.
fn transcript(dir: &Path, name: &str, before: usize, compact: bool, after: usize) -> PathBuf {
    let path = dir.join(format!("{name}.jsonl"));
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    let mut parent = None;
    for i in 0..before {
        parent = Some(turn(&mut out, i, parent));
    }
    if compact {
        let boundary = json!({"type": "system", "subtype": "compact_boundary", "uuid": "c0000000-0000-4000-8000-000000000001", "parentUuid": null,
            "logicalParentUuid": parent, "content": "Conversation compacted", "timestamp": "2026-12-01T11:00:00.000Z", "sessionId": "bench",
            "compactMetadata": {"trigger": "auto", "preTokens": 170_000}});
        let summary = json!({"type": "user", "uuid": "c0000000-0000-4000-8000-000000000002", "parentUuid": "c0000000-0000-4000-8000-000000000001",
            "isCompactSummary": true, "isVisibleInTranscriptOnly": true, "timestamp": "2026-12-01T11:00:00.001Z", "sessionId": "bench",
            "message": {"role": "user", "content": "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\nSummary: the log was read part by part."}});
        writeln!(out, "{boundary}\n{summary}").unwrap();
        parent = Some("c0000000-0000-4000-8000-000000000002".to_string());
    }
    for i in before..before + after {
        parent = Some(turn(&mut out, i, parent));
    }
    out.flush().unwrap();
    path
}

fn import(store: &Store, path: &Path) -> Session {
    store.import_file(path, Some(Runtime::ClaudeCode), &Options::default()).unwrap()
}

fn median(mut f: impl FnMut(), runs: usize) -> Duration {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort();
    times[runs / 2]
}

fn replay(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("history.db")).unwrap();
    // 1,000 blocks; 9,000 blocks, the compaction's two, then 998.
    let small = import(&store, &transcript(dir.path(), "small", 250, false, 0));
    let large = import(&store, &transcript(dir.path(), "large", 2_250, true, 250));
    assert_eq!(small.len().unwrap(), 1_000);
    assert_eq!(large.compactions().unwrap()[0].boundary_seq, 9_000);
    let options = Options::default();
    let whole = Options { compaction: CompactionMode::None, ..Options::default() };
    let export = |session: &Session, options: &Options| session.export_json(Runtime::Codex, options).unwrap();
    assert!(!export(&large, &options).0.contains("Turn 0:"), "the replay starts at the compaction");

    let mut group = c.benchmark_group("replay_to_codex");
    group.sample_size(20);
    group.bench_function("floor_1k_blocks", |b| b.iter(|| export(&small, &options)));
    group.bench_function("10k_blocks_compacted_at_9k", |b| b.iter(|| export(&large, &options)));
    group.bench_function("10k_blocks_whole", |b| b.iter(|| export(&large, &whole)));
    group.finish();

    let floor = median(|| drop(export(&small, &options)), 31);
    let compacted = median(|| drop(export(&large, &options)), 31);
    let all = median(|| drop(export(&large, &whole)), 11);
    eprintln!(
        "replay into Codex, medians: 1,000 blocks {:.2} ms; 10,000 blocks compacted at 9,000 {:.2} ms ({:.2}× the floor; budget 2×); the same whole {:.2} ms ({:.2}×)",
        floor.as_secs_f64() * 1e3,
        compacted.as_secs_f64() * 1e3,
        compacted.as_secs_f64() / floor.as_secs_f64(),
        all.as_secs_f64() * 1e3,
        all.as_secs_f64() / floor.as_secs_f64(),
    );
}

criterion_group!(benches, replay);
criterion_main!(benches);
