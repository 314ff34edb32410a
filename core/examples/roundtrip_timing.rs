//! Times what the bindings' benchmark times, in Rust: `import_file` of a native file into an
//! in-memory store, then `to_native` of the session (the values built, not serialized). Prints
//! the best of `runs` (default 3) in milliseconds: `import <ms> export <ms>`.
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
    let (mut import, mut export) = (f64::MAX, f64::MAX);
    for _ in 0..runs {
        let store = Store::open_in_memory().unwrap();
        let t = Instant::now();
        let session = store.import_file(&file, Some(runtime), &Options::default()).unwrap();
        import = import.min(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        let data = session.to_native(runtime, &Options::default()).unwrap();
        export = export.min(t.elapsed().as_secs_f64() * 1e3);
        drop(data);
    }
    println!("import {import:.0} export {export:.0}");
}
