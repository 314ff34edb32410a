//! Claude Code conversion benchmarks against the budgets of docs/design.md §6, each beside a baseline
//! measured in the same run:
//! - import of a transcript of at least 50 MB (the fixture turns repeated with fresh uuids) against
//!   merely parsing its lines with serde_json;
//! - `to_native` (records, written out as JSONL) against serializing the same records;
//! - `to_native` of a 10,000-block session built through the API (budget: 20 ms).
//!
//! `SNA_BENCH_MB` sets the transcript size (default 50). Peak memory of an import into a database
//! file is printed once (VmHWM), to show it does not grow with the file.

use std::io::BufRead;
use std::path::Path;

mod common;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use serde_json::Value;
use sna_history::{Options, Runtime, Store};

fn parse_lines(path: &Path) -> Vec<Value> {
    let file = std::io::BufReader::new(std::fs::File::open(path).unwrap());
    file.split(b'\n').map(|line| serde_json::from_slice(&line.unwrap()).unwrap()).collect()
}

fn import_and_export(c: &mut Criterion) {
    let mb: usize = std::env::var("SNA_BENCH_MB").ok().and_then(|v| v.parse().ok()).unwrap_or(50);
    let dir = tempfile::tempdir().unwrap();
    let (path, lines) = common::inputs::claude_code::generate(dir.path(), mb);
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
    // A database file, so that plain rusqlite can read the same rows for the floor.
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("api.db")).unwrap();
    let session = common::api_session(&store, 10_000, ("claude-code", "anthropic", "claude-opus-5-5"), "Bash");
    let mut group = c.benchmark_group("claude_to_native_10k_api_blocks");
    group.sample_size(20);
    group.bench_function("sna_transcript", |b| b.iter(|| session.to_native(Runtime::ClaudeCode, &Options::default()).unwrap()));
    let messages = Options { format: Some("messages".into()), ..Options::default() };
    group.bench_function("sna_messages", |b| b.iter(|| session.to_native(Runtime::ClaudeCode, &messages).unwrap()));
    group.bench_function("sna_to_native_text", |b| b.iter(|| session.to_native_text(Runtime::ClaudeCode, &Options::default()).unwrap()));
    let conn = rusqlite::Connection::open(dir.path().join("api.db")).unwrap();
    assert_eq!(common::rusqlite_read_rows(&conn, session.id()), 10_000);
    group.bench_function("baseline_rusqlite_read_rows", |b| b.iter(|| common::rusqlite_read_rows(&conn, session.id())));
    let blocks = session.blocks().unwrap();
    group.bench_function("baseline_blocks_to_json", |b| b.iter(|| blocks.iter().map(|x| serde_json::to_string(x).unwrap()).collect::<Vec<_>>()));
    group.finish();
}

criterion_group!(benches, import_and_export, rebuild_10k);
criterion_main!(benches);
