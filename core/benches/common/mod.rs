#![allow(dead_code)] // each benchmark uses its own part of this module
//! What the conversion benchmarks share: the peak-memory reading and the import group (a
//! baseline, then imports into an in-memory database and into database files).

pub mod inputs;

use std::path::Path;

use criterion::{BatchSize, Criterion, Throughput};
use sna_history::{Actor, Block, Kind, NewSession, Options, Runtime, Session, Store, ToolRef};

/// Peak resident memory of this process so far (VmHWM), in kB.
pub fn peak_rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Imports `path` into a database file once and prints the peak memory before and after.
pub fn report_import_peak(dir: &Path, path: &Path, runtime: Runtime) {
    let bytes = std::fs::metadata(path).unwrap().len();
    let before = peak_rss_kb();
    let store = Store::open(dir.join("rss.db")).unwrap();
    store.import_file(path, Some(runtime), &Options::default()).unwrap();
    drop(store);
    if let (Some(before), Some(after)) = (before, peak_rss_kb()) {
        eprintln!("peak RSS: {} MB before the import, {} MB after importing {:.1} MB into a database file", before >> 10, after >> 10, bytes as f64 / (1 << 20) as f64);
    }
}

/// The group `name`: `baseline` (what parsing the input costs), then the import of `path` into
/// an in-memory database and into a fresh database file under `dir`.
pub fn import_group<T>(c: &mut Criterion, name: &str, dir: &Path, path: &Path, runtime: Runtime, baseline: impl Fn() -> T) {
    let bytes = std::fs::metadata(path).unwrap().len();
    let mut group = c.benchmark_group(name);
    group.sample_size(10);
    group.throughput(Throughput::Bytes(bytes));
    group.bench_function("baseline_serde_parse", |b| b.iter(&baseline));
    group.bench_function("sna_import_memory_db", |b| {
        b.iter_batched(|| Store::open_in_memory().unwrap(), |store| store.import_file(path, Some(runtime), &Options::default()).unwrap(), BatchSize::PerIteration)
    });
    let mut k = 0;
    group.bench_function("sna_import_file_db", |b| {
        b.iter_batched(
            || {
                k += 1;
                Store::open(dir.join(format!("import-{k}.db"))).unwrap()
            },
            |store| store.import_file(path, Some(runtime), &Options::default()).unwrap(),
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

/// A session of `n` blocks as a host builds it through the API: question, answer, a shell call
/// (`shell`, the runtime's own tool name) and its result, again and again, attributed to
/// `(provider, model_provider, model)`; answer and call of one turn share a message id.
pub fn api_session(store: &Store, n: usize, attribution: (&str, &str, &str), shell: &str) -> Session {
    let (provider, model_provider, model) = attribution;
    let session = store.create_session(NewSession::new()).unwrap();
    let mut blocks = Vec::with_capacity(n);
    let mut i = 0;
    while blocks.len() < n {
        blocks.push(Block::text(Actor::User, format!("question {i}: {}", "words ".repeat(20))));
        let mut text = Block::text(Actor::Assistant, format!("answer {i}: {}", "more words ".repeat(30))).attributed(provider, model_provider, model);
        text.message_id = Some(format!("m{i}"));
        let mut call = Block::tool_use(format!("call_{i}"), shell, r#"{"command":"ls -la","description":"List"}"#).attributed(provider, model_provider, model);
        call.message_id = Some(format!("m{i}"));
        let result = Block { tool: Some(ToolRef::result(format!("call_{i}"), false)), ..Block::new(Actor::User, Kind::ToolResult, "a.txt\nb.txt\n".repeat(10)) };
        blocks.extend([text, call, result]);
        i += 1;
    }
    blocks.truncate(n);
    session.extend(blocks).unwrap();
    session
}

/// The floor of a rebuild from the store: the session's block rows read with plain rusqlite from
/// the database file at `path`, every column copied out (texts and blobs as owned values), in
/// order. Returns how many rows were read.
pub fn rusqlite_read_rows(conn: &rusqlite::Connection, session_id: &str) -> usize {
    use rusqlite::types::ValueRef;
    let mut stmt = conn
        .prepare_cached("SELECT b.* FROM blocks b JOIN sessions s ON s.rowid = b.session WHERE s.id = ?1 ORDER BY b.pk")
        .unwrap();
    let columns = stmt.column_count();
    let mut rows = stmt.query([session_id]).unwrap();
    let mut read: Vec<Vec<rusqlite::types::Value>> = Vec::new();
    while let Some(row) = rows.next().unwrap() {
        let mut values = Vec::with_capacity(columns);
        for i in 0..columns {
            values.push(match row.get_ref(i).unwrap() {
                ValueRef::Null => rusqlite::types::Value::Null,
                ValueRef::Integer(n) => rusqlite::types::Value::Integer(n),
                ValueRef::Real(x) => rusqlite::types::Value::Real(x),
                ValueRef::Text(t) => rusqlite::types::Value::Text(String::from_utf8(t.to_vec()).unwrap()),
                ValueRef::Blob(b) => rusqlite::types::Value::Blob(b.to_vec()),
            });
        }
        read.push(values);
    }
    read.len()
}
