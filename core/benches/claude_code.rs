//! Claude Code conversion benchmarks against the budgets of DESIGN.md §6, each beside a baseline
//! measured in the same run:
//! - import of a transcript of at least 50 MB (the fixture turns repeated with fresh uuids) against
//!   merely parsing its lines with serde_json;
//! - `to_native` (records, written out as JSONL) against serializing the same records;
//! - `to_native` of a 10,000-block session built through the API (budget: 20 ms).
//!
//! `SNA_BENCH_MB` sets the transcript size (default 50). Peak memory of an import into a database
//! file is printed once (VmHWM), to show it does not grow with the file.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

mod common;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use serde_json::Value;
use sna_history::{Options, Runtime, Store};

fn fixture() -> Vec<Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/claude-code/tools-thinking/60aa014b-82fa-4f7d-8a5d-270b96a69979.jsonl");
    std::fs::read_to_string(path).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn fresh(text: &str, copy: usize) -> String {
    format!("{copy:08x}{}", &text[8.min(text.len())..])
}

/// Rewrites every uuid-like id of a record for copy `copy`, so that copies chain one after another.
fn renumber(value: &mut Value, copy: usize) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                match (key.as_str(), &*v) {
                    ("uuid" | "parentUuid" | "leafUuid" | "messageId" | "sourceToolAssistantUUID" | "promptId" | "requestRef", Value::String(s)) => {
                        *v = Value::String(fresh(s, copy));
                    }
                    ("id" | "tool_use_id", Value::String(s)) if s.starts_with("msg_") || s.starts_with("toolu_") => {
                        *v = Value::String(format!("{s}{copy:x}"));
                    }
                    _ => renumber(v, copy),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| renumber(v, copy)),
        _ => {}
    }
}

/// Writes a transcript of at least `mb` megabytes; returns its path and line count.
fn generate(dir: &Path, mb: usize) -> (PathBuf, usize) {
    let records = fixture();
    let path = dir.join("big.jsonl");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    let (mut written, mut lines, mut copy) = (0usize, 0usize, 0usize);
    let mut previous_leaf: Option<String> = None;
    while written < mb << 20 {
        for (i, record) in records.iter().enumerate() {
            let mut record = record.clone();
            renumber(&mut record, copy);
            // The first row of each copy continues the previous copy's chain.
            if i == 2 {
                if let Some(leaf) = &previous_leaf {
                    record["parentUuid"] = Value::String(leaf.clone());
                }
            }
            if record.get("type").and_then(Value::as_str) == Some("last-prompt") {
                previous_leaf = record["leafUuid"].as_str().map(str::to_string);
            }
            let line = serde_json::to_string(&record).unwrap();
            written += line.len() + 1;
            lines += 1;
            out.write_all(line.as_bytes()).unwrap();
            out.write_all(b"\n").unwrap();
        }
        copy += 1;
    }
    out.flush().unwrap();
    (path, lines)
}

fn parse_lines(path: &Path) -> Vec<Value> {
    let file = std::io::BufReader::new(std::fs::File::open(path).unwrap());
    file.split(b'\n').map(|line| serde_json::from_slice(&line.unwrap()).unwrap()).collect()
}

fn import_and_export(c: &mut Criterion) {
    let mb: usize = std::env::var("SNA_BENCH_MB").ok().and_then(|v| v.parse().ok()).unwrap_or(50);
    let dir = tempfile::tempdir().unwrap();
    let (path, lines) = generate(dir.path(), mb);
    let bytes = std::fs::metadata(&path).unwrap().len();
    eprintln!("transcript: {} lines, {:.1} MB", lines, bytes as f64 / (1 << 20) as f64);

    // Peak memory: parse-only first (holds nothing), then an import into a database file.
    {
        let file = std::io::BufReader::new(std::fs::File::open(&path).unwrap());
        let mut n = 0;
        for line in file.split(b'\n') {
            let _: Value = serde_json::from_slice(&line.unwrap()).unwrap();
            n += 1;
        }
        assert_eq!(n, lines);
    }
    common::report_import_peak(dir.path(), &path, Runtime::ClaudeCode);
    common::import_group(c, "claude_import", dir.path(), &path, Runtime::ClaudeCode, || parse_lines(&path));

    let store = Store::open_in_memory().unwrap();
    let session = store.import_file(&path, Some(Runtime::ClaudeCode), &Options::default()).unwrap();
    let records = parse_lines(&path);
    let mut group = c.benchmark_group("claude_to_native");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(bytes));
    group.bench_function("baseline_serialize", |b| {
        b.iter(|| {
            let mut out = String::with_capacity(bytes as usize);
            for record in &records {
                out.push_str(&serde_json::to_string(record).unwrap());
                out.push('\n');
            }
            out
        })
    });
    group.bench_function("sna_to_native_jsonl", |b| {
        b.iter(|| {
            let data = session.to_native(Runtime::ClaudeCode, &Options::default()).unwrap();
            let mut out = String::with_capacity(bytes as usize);
            for record in data.as_array().unwrap() {
                out.push_str(&serde_json::to_string(record).unwrap());
                out.push('\n');
            }
            out
        })
    });
    // The text API, written from the stored records: the file itself, byte for byte.
    assert_eq!(session.to_native_text(Runtime::ClaudeCode, &Options::default()).unwrap(), std::fs::read_to_string(&path).unwrap());
    group.bench_function("sna_to_native_text", |b| b.iter(|| session.to_native_text(Runtime::ClaudeCode, &Options::default()).unwrap()));
    group.finish();
}

fn rebuild_10k(c: &mut Criterion) {
    let store = Store::open_in_memory().unwrap();
    let session = common::api_session(&store, 10_000, ("claude-code", "anthropic", "claude-opus-5-5"), "Bash");
    let mut group = c.benchmark_group("claude_to_native_10k_api_blocks");
    group.sample_size(20);
    group.bench_function("sna_transcript", |b| b.iter(|| session.to_native(Runtime::ClaudeCode, &Options::default()).unwrap()));
    let messages = Options { format: Some("messages".into()), ..Options::default() };
    group.bench_function("sna_messages", |b| b.iter(|| session.to_native(Runtime::ClaudeCode, &messages).unwrap()));
    let blocks = session.blocks().unwrap();
    group.bench_function("baseline_blocks_to_json", |b| b.iter(|| blocks.iter().map(|x| serde_json::to_string(x).unwrap()).collect::<Vec<_>>()));
    group.finish();
}

criterion_group!(benches, import_and_export, rebuild_10k);
criterion_main!(benches);
