//! OpenCode conversion benchmarks against the budgets of DESIGN.md §6, each beside a baseline
//! measured in the same run:
//! - import of a session document of at least 50 MB (the `tools-reasoning` fixture's messages
//!   repeated with fresh message and part ids) against merely parsing it with serde_json;
//! - `to_native` (the document), serialized, against serializing the parsed document;
//! - `to_native` of a 10,000-block session built through the API (budget: 20 ms).
//!
//! `SNA_BENCH_MB` sets the document size (default 50).

use std::path::{Path, PathBuf};

mod common;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use serde_json::Value;
use sna_history::{Options, Runtime, Store};

fn fixture() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/opencode/tools-reasoning/export.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Gives the ids of a message copy a suffix unique to copy `copy`.
fn renumber(value: &mut Value, copy: usize) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                match (key.as_str(), &*v) {
                    ("id" | "messageID" | "parentID" | "callID", Value::String(s)) if !s.starts_with("ses_") => {
                        *v = Value::String(format!("{s}{copy:06x}"));
                    }
                    _ => renumber(v, copy),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| renumber(v, copy)),
        _ => {}
    }
}

/// Writes a document of at least `mb` megabytes, message by message (the whole document is never
/// in memory, so that the import's peak memory can be read); returns its path and message count.
fn generate(dir: &Path, mb: usize) -> (PathBuf, usize) {
    use std::io::Write;
    let doc = fixture();
    let messages = doc["messages"].as_array().unwrap();
    let path = dir.join("big-export.json");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    write!(out, "{{\"info\":{},\"messages\":[", doc["info"]).unwrap();
    let (mut written, mut count, mut copy) = (0usize, 0usize, 0usize);
    while written < mb << 20 {
        for message in messages {
            let mut message = message.clone();
            renumber(&mut message, copy);
            let text = serde_json::to_string(&message).unwrap();
            if count > 0 {
                out.write_all(b",").unwrap();
            }
            out.write_all(text.as_bytes()).unwrap();
            written += text.len() + 1;
            count += 1;
        }
        copy += 1;
    }
    out.write_all(b"]}").unwrap();
    out.flush().unwrap();
    (path, count)
}

fn import_and_export(c: &mut Criterion) {
    let mb: usize = std::env::var("SNA_BENCH_MB").ok().and_then(|v| v.parse().ok()).unwrap_or(50);
    let dir = tempfile::tempdir().unwrap();
    let (path, messages) = generate(dir.path(), mb);
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
    let store = Store::open_in_memory().unwrap();
    let session = common::api_session(&store, 10_000, ("opencode", "anthropic", "claude-sonnet-4-5"), "bash");
    let mut group = c.benchmark_group("opencode_to_native_10k_api_blocks");
    group.sample_size(20);
    group.bench_function("sna_document", |b| b.iter(|| session.to_native(Runtime::OpenCode, &Options::default()).unwrap()));
    let prelude = Options { format: Some("prelude".into()), ..Options::default() };
    group.bench_function("sna_prelude", |b| b.iter(|| session.to_native(Runtime::OpenCode, &prelude).unwrap()));
    let blocks = session.blocks().unwrap();
    group.bench_function("baseline_blocks_to_json", |b| b.iter(|| blocks.iter().map(|x| serde_json::to_string(x).unwrap()).collect::<Vec<_>>()));
    group.finish();
}

criterion_group!(benches, import_and_export, rebuild_10k);
criterion_main!(benches);
