//! Imports files into a database over and over, for the kill tests.
//!
//! `import_worker DB FILE...` runs `Store::import_source` on each file in turn, forever (until it
//! is killed): new files are imported, grown ones appended to, changed ones replaced.

use sna_history::{Options, Store};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: import_worker DB FILE...");
        std::process::exit(2);
    }
    let store = match Store::open(&args[1]) {
        Ok(store) => store,
        Err(e) => {
            eprintln!("import_worker: {} {e}", e.code());
            std::process::exit(1);
        }
    };
    loop {
        for file in &args[2..] {
            if let Err(e) = store.import_source(file, None, &Options::default()) {
                eprintln!("import_worker: {file}: {} {e}", e.code());
                std::process::exit(1);
            }
        }
    }
}
