//! OpenCode conversion benchmarks against the budgets of docs/design.md §6, each beside a baseline
//! measured in the same run:
//! - import of a session document of at least 50 MB (the `tools-reasoning` fixture's messages
//!   repeated with fresh message and part ids) against merely parsing it with serde_json;
//! - `to_native` (the document), serialized, against serializing the parsed document;
//! - `to_native` of a 10,000-block session built through the API (budget: 20 ms).
//!
//! `SNA_BENCH_MB` sets the document size (default 50).


mod common;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use serde_json::Value;
use sna_history::{Options, Runtime, Store};

fn import_and_export(c: &mut Criterion) {
    let mb: usize = std::env::var("SNA_BENCH_MB").ok().and_then(|v| v.parse().ok()).unwrap_or(50);
    let dir = tempfile::tempdir().unwrap();
    let (path, messages) = common::inputs::opencode::generate(dir.path(), mb);
    let bytes = std::fs::metadata(&path).unwrap().len();
    eprintln!("document: {messages} messages, {:.1} MB", bytes as f64 / (1 << 20) as f64);

    common::report_import_peak(dir.path(), &path, Runtime::OpenCode);
    if std::env::var_os("SNA_BENCH_RSS_ONLY").is_some() {
        return;
    }
    common::import_group(c, "opencode_import", dir.path(), &path, Runtime::OpenCode, || {
        serde_json::from_slice::<Value>(&std::fs::read(&path).unwrap()).unwrap()
    });

    let store = Store::open_in_memory().unwrap();
    let session = store.import_file(&path, Some(Runtime::OpenCode), &Options::default()).unwrap();
    let original: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert!(session.to_native(Runtime::OpenCode, &Options::default()).unwrap() == original, "the export is the original document");
    let mut group = c.benchmark_group("opencode_to_native");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(bytes));
    group.bench_function("baseline_serialize", |b| b.iter(|| serde_json::to_string(&original).unwrap()));
    group.bench_function("sna_document_serialized", |b| {
        b.iter(|| serde_json::to_string(&session.to_native(Runtime::OpenCode, &Options::default()).unwrap()).unwrap())
    });
    group.finish();
}

fn rebuild_10k(c: &mut Criterion) {
    if std::env::var_os("SNA_BENCH_RSS_ONLY").is_some() {
        return;
    }
    // A database file, so that plain rusqlite can read the same rows for the floor.
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("api.db")).unwrap();
    let session = common::api_session(&store, 10_000, ("opencode", "anthropic", "claude-sonnet-4-5"), "bash");
    let mut group = c.benchmark_group("opencode_to_native_10k_api_blocks");
    group.sample_size(20);
    group.bench_function("sna_document", |b| b.iter(|| session.to_native(Runtime::OpenCode, &Options::default()).unwrap()));
    let prelude = Options { format: Some("prelude".into()), ..Options::default() };
    group.bench_function("sna_prelude", |b| b.iter(|| session.to_native(Runtime::OpenCode, &prelude).unwrap()));
    group.bench_function("sna_to_native_text", |b| b.iter(|| session.to_native_text(Runtime::OpenCode, &Options::default()).unwrap()));
    let conn = rusqlite::Connection::open(dir.path().join("api.db")).unwrap();
    assert_eq!(common::rusqlite_read_rows(&conn, session.id()), 10_000);
    group.bench_function("baseline_rusqlite_read_rows", |b| b.iter(|| common::rusqlite_read_rows(&conn, session.id())));
    let blocks = session.blocks().unwrap();
    group.bench_function("baseline_blocks_to_json", |b| b.iter(|| blocks.iter().map(|x| serde_json::to_string(x).unwrap()).collect::<Vec<_>>()));
    group.finish();
}

criterion_group!(benches, import_and_export, rebuild_10k);
criterion_main!(benches);
