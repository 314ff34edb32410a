//! What the conversion benchmarks share: the peak-memory reading and the import group (a
//! baseline, then imports into an in-memory database and into database files).

use std::path::Path;

use criterion::{BatchSize, Criterion, Throughput};
use sna_history::{Options, Runtime, Store};

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
