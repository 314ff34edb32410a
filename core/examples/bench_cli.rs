//! What `scripts/bench-cli.sh` needs besides the release `sna`: the inputs, and the floor to
//! measure `sna import` and `sna export` against (a serde_json program reading, parsing,
//! serializing and writing the same file in the same run).
//!
//! - `bench_cli inputs DIR MB`: writes the three inputs the conversion benchmarks use (a Claude Code
//!   transcript, a Codex rollout, an OpenCode export document, each of at least `MB` megabytes) in
//!   `DIR` and prints their paths, one per line.
//! - `bench_cli parse FILE`: reads and parses FILE as an import reads it (JSONL line by line, each
//!   value dropped before the next; a document whole) and prints the milliseconds that took.
//! - `bench_cli write FILE OUT`: parses FILE (not timed), then serializes it as the export writes
//!   that runtime's format (JSONL compact, a document pretty) into OUT and prints the milliseconds
//!   that took.
//! - `bench_cli store FILE DB`: stores FILE's bytes in a new SQLite database DB as the store's
//!   pragmas have it (WAL, `synchronous = NORMAL`), one row per line (a document: per 4 KiB), in one
//!   transaction, without parsing anything, closes it (the checkpoint included) and prints the
//!   milliseconds: the least an import that keeps the bytes in SQLite writes.
//! - `bench_cli noop`: starts and ends (the process start the floor adds).

use std::io::{BufRead, Write};
use std::path::Path;
use std::time::Instant;

use serde_json::Value;

#[path = "../benches/common/inputs.rs"]
mod inputs;

fn is_jsonl(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "jsonl")
}

fn parse(path: &Path) -> Vec<Value> {
    if is_jsonl(path) {
        let file = std::io::BufReader::with_capacity(1 << 16, std::fs::File::open(path).unwrap());
        file.split(b'\n').map(|line| serde_json::from_slice(&line.unwrap()).unwrap()).collect()
    } else {
        vec![serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()]
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| args.get(i).map(String::as_str).unwrap_or_else(|| panic!("usage: see the header of bench_cli.rs"));
    match arg(0) {
        "inputs" => {
            let dir = Path::new(arg(1));
            let mb: usize = arg(2).parse().unwrap();
            std::fs::create_dir_all(dir).unwrap();
            for (name, (path, _)) in [
                ("claude-code", inputs::claude_code::generate(dir, mb)),
                ("codex", inputs::codex::generate(dir, mb)),
                ("opencode", inputs::opencode::generate(dir, mb)),
            ] {
                println!("{name} {}", path.display());
            }
        }
        "parse" => {
            // As an import reads: JSONL one line at a time, each value dropped before the next.
            let path = Path::new(arg(1));
            let t = Instant::now();
            if is_jsonl(path) {
                let file = std::io::BufReader::with_capacity(1 << 16, std::fs::File::open(path).unwrap());
                for line in file.split(b'\n') {
                    drop(serde_json::from_slice::<Value>(&line.unwrap()).unwrap());
                }
                println!("{:.1}", t.elapsed().as_secs_f64() * 1e3);
            } else {
                let values = parse(path);
                println!("{:.1}", t.elapsed().as_secs_f64() * 1e3);
                std::mem::forget(values);
            }
        }
        "write" => {
            let path = Path::new(arg(1));
            let values = parse(path);
            let t = Instant::now();
            let mut out = std::io::BufWriter::with_capacity(1 << 16, std::fs::File::create(arg(2)).unwrap());
            if is_jsonl(path) {
                for value in &values {
                    serde_json::to_writer(&mut out, value).unwrap();
                    out.write_all(b"\n").unwrap();
                }
            } else {
                serde_json::to_writer_pretty(&mut out, &values[0]).unwrap();
                out.write_all(b"\n").unwrap();
            }
            out.into_inner().unwrap().sync_all().ok();
            println!("{:.1}", t.elapsed().as_secs_f64() * 1e3);
            std::mem::forget(values);
        }
        "store" => {
            let path = Path::new(arg(1));
            let bytes = std::fs::read(path).unwrap();
            let t = Instant::now();
            let mut conn = rusqlite::Connection::open(arg(2)).unwrap();
            conn.execute_batch("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA cache_size = -32768; CREATE TABLE t (id INTEGER PRIMARY KEY, text TEXT NOT NULL);").unwrap();
            let tx = conn.transaction().unwrap();
            {
                let mut insert = tx.prepare("INSERT INTO t (text) VALUES (?1)").unwrap();
                let rows: Vec<&[u8]> = if is_jsonl(path) { bytes.split(|b| *b == b'\n').collect() } else { bytes.chunks(4096).collect() };
                for row in rows {
                    insert.execute([std::str::from_utf8(row).unwrap_or("")]).unwrap();
                }
            }
            tx.commit().unwrap();
            conn.close().unwrap();
            println!("{:.1}", t.elapsed().as_secs_f64() * 1e3);
        }
        "noop" => {}
        other => panic!("unknown command {other:?}"),
    }
}
