//! Appends blocks to one session of a database, for the multi-process tests.
//!
//! `append_worker DB SESSION N TAG` appends N text blocks `TAG-0` … one transaction each;
//! `append_worker DB SESSION N TAG --batch` appends them in a single batch (one transaction).

use sna_history::{Actor, Block, Store};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 5 {
        eprintln!("usage: append_worker DB SESSION N TAG [--batch]");
        std::process::exit(2);
    }
    let n: usize = match args[3].parse() {
        Ok(n) => n,
        Err(e) => {
            eprintln!("append_worker: N must be a number: {e}");
            std::process::exit(2);
        }
    };
    let batch = args.get(5).is_some_and(|a| a == "--batch");
    if let Err(e) = run(&args[1], &args[2], n, &args[4], batch) {
        eprintln!("append_worker: {} {e}", e.code());
        std::process::exit(1);
    }
}

fn run(db: &str, session: &str, n: usize, tag: &str, batch: bool) -> sna_history::Result<()> {
    let store = Store::open(db)?;
    let session = store.session(session)?;
    if batch {
        // Large blocks, so that the transaction spills to the WAL long before it commits.
        let filler = "x".repeat(2048);
        session.extend((0..n).map(|i| Block::text(Actor::User, format!("{tag}-{i} {filler}"))))?;
    } else {
        for i in 0..n {
            session.append(Block::text(Actor::User, format!("{tag}-{i}")))?;
        }
    }
    Ok(())
}
