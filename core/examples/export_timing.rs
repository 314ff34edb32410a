//! Times an export written as text: `import_file` of a native file into a store, then the session
//! written in the same runtime's format. Prints the best of `runs` in milliseconds.
//!
//! `cargo run --release -p sna-history --example export_timing -- FILE RUNTIME [RUNS] [DB]`

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// Counts allocations, so that `SNA_ONLY_TEXT` can say how many an export makes.
struct Counting;
static ALLOCS: AtomicUsize = AtomicUsize::new(0);
static BYTES: AtomicUsize = AtomicUsize::new(0);

unsafe impl std::alloc::GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(layout.size(), Ordering::Relaxed);
        unsafe { std::alloc::System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(new_size, Ordering::Relaxed);
        unsafe { std::alloc::System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

use sna_history::{Options, Runtime, Store};

/// The options: `SNA_FORMAT` names the format (default: the runtime's).
fn opts() -> Options {
    Options { format: std::env::var("SNA_FORMAT").ok(), ..Options::default() }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (file, runtime) = match (args.first(), args.get(1)) {
        (Some(f), Some(r)) => (f.clone(), r.parse::<Runtime>().expect("a runtime")),
        _ => {
            eprintln!("usage: export_timing FILE RUNTIME [RUNS] [DB]");
            std::process::exit(2);
        }
    };
    let runs: usize = args.get(2).and_then(|r| r.parse().ok()).unwrap_or(3);
    let store = match args.get(3) {
        Some(db) => Store::open(db).unwrap(),
        None => Store::open_in_memory().unwrap(),
    };
    // A database given that holds a session already: that one (so that a profile sees no import).
    let held = store.sessions().unwrap().first().map(|info| store.session(&info.id).unwrap());
    let session = match held {
        Some(session) => session,
        None => store.import_file(&file, Some(runtime), &Options::default()).unwrap(),
    };
    if let Some(n) = std::env::var("SNA_ONLY_TEXT").ok().and_then(|n| n.parse::<usize>().ok()) {
        // For a profiler: only the text export, `n` times.
        for _ in 0..n {
            let (a, b) = (ALLOCS.load(Ordering::Relaxed), BYTES.load(Ordering::Relaxed));
            let t = Instant::now();
            std::hint::black_box(session.to_native_text(runtime, &opts()).unwrap());
            let ms = t.elapsed().as_secs_f64() * 1e3;
            let (a, b) = (ALLOCS.load(Ordering::Relaxed) - a, BYTES.load(Ordering::Relaxed) - b);
            eprintln!("to_native_text {ms:.0} ms: {a} allocations, {} MB allocated", b >> 20);
        }
        return;
    }
    if std::env::var("SNA_PHASES").is_ok() {
        for _ in 0..runs {
            let t = Instant::now();
            let blocks = session.blocks().unwrap();
            let load = t.elapsed().as_secs_f64() * 1e3;
            let t = Instant::now();
            let data = session.to_native(runtime, &opts()).unwrap();
            let native = t.elapsed().as_secs_f64() * 1e3;
            let t = Instant::now();
            let text = opts().format_for(runtime).unwrap().to_text(&data).unwrap();
            let write = t.elapsed().as_secs_f64() * 1e3;
            println!("phases: load {load:.0} ms ({} blocks), to_native (load included) {native:.0} ms, to_text {write:.0} ms ({} bytes)", blocks.len(), text.len());
        }
    }
    let mut best = f64::MAX;
    let mut bytes = 0;
    for _ in 0..runs {
        let t = Instant::now();
        let data = session.to_native(runtime, &opts()).unwrap();
        let text = opts().format_for(runtime).unwrap().to_text(&data).unwrap();
        best = best.min(t.elapsed().as_secs_f64() * 1e3);
        bytes = text.len();
    }
    let mut best_text = f64::MAX;
    for _ in 0..runs {
        let t = Instant::now();
        let text = session.to_native_text(runtime, &opts()).unwrap();
        best_text = best_text.min(t.elapsed().as_secs_f64() * 1e3);
        assert_eq!(text.len(), bytes);
    }
    let mut best_sink = f64::MAX;
    for _ in 0..runs {
        let t = Instant::now();
        session.export_to(std::io::sink(), runtime, &opts()).unwrap();
        best_sink = best_sink.min(t.elapsed().as_secs_f64() * 1e3);
    }
    let mut best_load = f64::MAX;
    for _ in 0..runs {
        let t = Instant::now();
        std::hint::black_box(session.blocks().unwrap());
        best_load = best_load.min(t.elapsed().as_secs_f64() * 1e3);
    }
    eprintln!("export_to(sink) {best_sink:.0} ms; blocks() {best_load:.0} ms");
    // The floor: the file's records, already parsed, serialized as JSONL.
    let values: Vec<serde_json::Value> =
        std::fs::read_to_string(&file).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let mut floor = f64::MAX;
    for _ in 0..runs {
        let t = Instant::now();
        let mut text = String::new();
        for v in &values {
            text.push_str(&serde_json::to_string(v).unwrap());
            text.push('\n');
        }
        floor = floor.min(t.elapsed().as_secs_f64() * 1e3);
        assert!(!text.is_empty());
    }
    println!(
        "to_native + to_text {best:.0} ms, {bytes} bytes; to_native_text {best_text:.0} ms; serialize floor {floor:.0} ms; ratios {:.2} and {:.2}",
        best / floor,
        best_text / floor
    );
}
