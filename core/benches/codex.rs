//! Codex conversion benchmarks against the budgets of docs/design.md §6, each beside a baseline measured
//! in the same run:
//! - import of a rollout of at least 50 MB (the `reasoning-exec` fixture's turn repeated with fresh
//!   item, call and turn ids) against merely parsing its lines with serde_json;
//! - `to_native(format="rollout")` written as JSONL against serializing the same lines;
//! - `to_native` (`items`, what `thread/resume` takes as `history`) of the imported session.
//!
//! `SNA_BENCH_MB` sets the rollout size (default 50).

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
    let (path, lines) = common::inputs::codex::generate(dir.path(), mb);
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
