//! Codex conversion benchmarks against the budgets of DESIGN.md §6, each beside a baseline measured
//! in the same run:
//! - import of a rollout of at least 50 MB (the `reasoning-exec` fixture's turn repeated with fresh
//!   item, call and turn ids) against merely parsing its lines with serde_json;
//! - `to_native(format="rollout")` written as JSONL against serializing the same lines;
//! - `to_native` (`items`, what `thread/resume` takes as `history`) of the imported session.
//!
//! `SNA_BENCH_MB` sets the rollout size (default 50).

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

mod common;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use serde_json::Value;
use sna_history::{Options, Runtime, Store};

fn fixture() -> Vec<Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/codex/reasoning-exec/rollout-2026-12-02T15-47-39-01a23770-a7b0-7463-80bd-dee5a5ec5236.jsonl");
    std::fs::read_to_string(path).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// Makes the ids of a line unique to copy `copy`: item ids, call ids and turn ids.
fn renumber(value: &mut Value, copy: usize) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                match (key.as_str(), &*v) {
                    ("id" | "call_id" | "turn_id" | "root_turn_id" | "response_id", Value::String(s)) if !s.is_empty() => {
                        *v = Value::String(format!("{s}-{copy:x}"));
                    }
                    _ => renumber(v, copy),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| renumber(v, copy)),
        _ => {}
    }
}

/// Writes a rollout of at least `mb` megabytes: the session_meta line once, then the turn's lines
/// again and again with consecutive ordinals. Returns its path and line count.
fn generate(dir: &Path, mb: usize) -> (PathBuf, usize) {
    let lines = fixture();
    let path = dir.join("rollout-2026-12-02T15-47-39-01a23770-a7b0-7463-80bd-dee5a5ec5236.jsonl");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    let mut write = |line: &Value, written: &mut usize| {
        let text = serde_json::to_string(line).unwrap();
        *written += text.len() + 1;
        out.write_all(text.as_bytes()).unwrap();
        out.write_all(b"\n").unwrap();
    };
    let (mut written, mut ordinal, mut copy) = (0usize, 0u64, 0usize);
    write(&lines[0], &mut written);
    while written < mb << 20 {
        for line in &lines[1..] {
            let mut line = line.clone();
            renumber(&mut line, copy);
            ordinal += 1;
            line["ordinal"] = Value::from(ordinal);
            write(&line, &mut written);
        }
        copy += 1;
    }
    out.flush().unwrap();
    (path, ordinal as usize + 1)
}

fn parse_lines(path: &Path) -> Vec<Value> {
    let file = std::io::BufReader::new(std::fs::File::open(path).unwrap());
    file.split(b'\n').map(|line| serde_json::from_slice(&line.unwrap()).unwrap()).collect()
}

fn jsonl(values: &[Value], capacity: usize) -> String {
    let mut out = String::with_capacity(capacity);
    for value in values {
        out.push_str(&serde_json::to_string(value).unwrap());
        out.push('\n');
    }
    out
}

fn import_and_export(c: &mut Criterion) {
    let mb: usize = std::env::var("SNA_BENCH_MB").ok().and_then(|v| v.parse().ok()).unwrap_or(50);
    let dir = tempfile::tempdir().unwrap();
    let (path, lines) = generate(dir.path(), mb);
    let bytes = std::fs::metadata(&path).unwrap().len();
    eprintln!("rollout: {} lines, {:.1} MB", lines, bytes as f64 / (1 << 20) as f64);

    {
        let store = Store::open_in_memory().unwrap();
        let session = store.import_file(&path, Some(Runtime::Codex), &Options::default()).unwrap();
        assert!(session.import_report().unwrap().entries.is_empty(), "the generated rollout imports cleanly");
    }
    common::report_import_peak(dir.path(), &path, Runtime::Codex);
    if std::env::var_os("SNA_BENCH_RSS_ONLY").is_some() {
        return;
    }
    common::import_group(c, "codex_import", dir.path(), &path, Runtime::Codex, || parse_lines(&path));

    let store = Store::open_in_memory().unwrap();
    let session = store.import_file(&path, Some(Runtime::Codex), &Options::default()).unwrap();
    let original = parse_lines(&path);
    let rollout = Options { format: Some("rollout".into()), ..Options::default() };
    // The export is the original, line for line, before it is timed.
    assert_eq!(session.to_native(Runtime::Codex, &rollout).unwrap().as_array().unwrap(), &original);
    let mut group = c.benchmark_group("codex_to_native");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(bytes));
    group.bench_function("baseline_serialize", |b| b.iter(|| jsonl(&original, bytes as usize)));
    group.bench_function("sna_rollout_jsonl", |b| {
        b.iter(|| {
            let data = session.to_native(Runtime::Codex, &rollout).unwrap();
            jsonl(data.as_array().unwrap(), bytes as usize)
        })
    });
    // The text API, written from the stored lines: the file itself, byte for byte.
    assert_eq!(session.to_native_text(Runtime::Codex, &rollout).unwrap(), std::fs::read_to_string(&path).unwrap());
    group.bench_function("sna_to_native_text", |b| b.iter(|| session.to_native_text(Runtime::Codex, &rollout).unwrap()));
    group.bench_function("sna_items", |b| b.iter(|| session.to_native(Runtime::Codex, &Options::default()).unwrap()));
    group.finish();
}

criterion_group!(benches, import_and_export);
criterion_main!(benches);
