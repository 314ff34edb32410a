//! Times what the bindings' benchmark times, in Rust: `import_file` of a native file into an
//! in-memory store, then `to_native` of the session (the values built, not serialized). Prints
//! the best of `runs` (default 3) in milliseconds: `import <ms> export <ms> text <ms> file <ms>`,
//! the last two being `to_native_text` (the file's text) and `export_to_path` (that text written to
//! a file beside FILE, removed after).
//!
//! `cargo run --release -p sna-history --example roundtrip_timing -- FILE RUNTIME [RUNS]`

use std::time::Instant;

use sna_history::{Options, Runtime, Store};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (file, runtime) = match (args.first(), args.get(1)) {
        (Some(f), Some(r)) => (f.clone(), r.parse::<Runtime>().expect("a runtime")),
        _ => {
            eprintln!("usage: roundtrip_timing FILE RUNTIME [RUNS]");
            std::process::exit(2);
        }
    };
    let runs: usize = args.get(2).and_then(|r| r.parse().ok()).unwrap_or(3);
    let (mut import, mut export, mut text, mut file_ms) = (f64::MAX, f64::MAX, f64::MAX, f64::MAX);
    let out = format!("{file}.export");
    for _ in 0..runs {
        let store = Store::open_in_memory().unwrap();
        let t = Instant::now();
        let session = store.import_file(&file, Some(runtime), &Options::default()).unwrap();
        import = import.min(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        let data = session.to_native(runtime, &Options::default()).unwrap();
        export = export.min(t.elapsed().as_secs_f64() * 1e3);
        drop(data);
        let t = Instant::now();
        let written = session.to_native_text(runtime, &Options::default()).unwrap();
        text = text.min(t.elapsed().as_secs_f64() * 1e3);
        drop(written);
        let t = Instant::now();
        session.export_to_path(&out, runtime, &Options::default()).unwrap();
        file_ms = file_ms.min(t.elapsed().as_secs_f64() * 1e3);
    }
    let _ = std::fs::remove_file(&out);
    println!("import {import:.0} export {export:.0} text {text:.0} file {file_ms:.0}");
}
