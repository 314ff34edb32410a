//! Runs store operations read from stdin under a file-size limit, for the failing-disk tests.
//!
//! `disk_worker DB` opens the store `DB` and reads one JSON command a line; it answers each with
//! one JSON line on stdout: `{"ok": …}`, or `{"code": "STORAGE", "message": "…"}` when the call
//! failed. The commands:
//!
//! - `{"op": "limit", "bytes": N}` sets this process's file-size limit (`RLIMIT_FSIZE`) to N bytes;
//!   `"bytes": null` lifts it. No write may then reach past byte N of any file: the disk is full
//!   as far as the store can tell. `SIGXFSZ` is ignored, so such a write fails instead of
//!   killing the process.
//! - `{"op": "import", "path": P}`: `Store::import_file(P)`; answers the session id.
//! - `{"op": "append", "session": ID, "tag": T, "count": N, "size": S}`: N text blocks `T-i`
//!   followed by S bytes of filler, in one batch (`Session::extend`); with `"one": true` the first
//!   of them alone (`Session::append`). Answers how many blocks were stored.
//! - `{"op": "sync", "target": P}`: `Store::sync_to` the store at P (opened on first use, then
//!   kept open); answers the report.

use std::collections::HashMap;
use std::io::{BufRead, Write};

use serde_json::{json, Value};
use sna_history::{Actor, Block, Options, Store, SyncOptions};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 2 {
        eprintln!("usage: disk_worker DB  (commands on stdin, one JSON object a line)");
        std::process::exit(2);
    }
    // A write past the limit then fails with EFBIG instead of the signal ending the process.
    // SAFETY: setting a signal's disposition to "ignore" before any other thread exists.
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
    let store = match Store::open(&args[1]) {
        Ok(store) => store,
        Err(e) => {
            eprintln!("disk_worker: {} {e}", e.code());
            std::process::exit(1);
        }
    };
    let mut targets: HashMap<String, Store> = HashMap::new();
    let stdout = std::io::stdout();
    for line in std::io::stdin().lock().lines() {
        let line = line.unwrap_or_else(|e| fail(&format!("cannot read stdin: {e}")));
        let command: Value = serde_json::from_str(&line).unwrap_or_else(|e| fail(&format!("not a JSON command: {e}: {line}")));
        let answer = match run(&store, &mut targets, &command) {
            Ok(value) => json!({ "ok": value }),
            Err(e) => json!({ "code": e.code().as_str(), "message": e.to_string() }),
        };
        let mut out = stdout.lock();
        writeln!(out, "{answer}").and_then(|()| out.flush()).unwrap_or_else(|e| fail(&format!("cannot answer: {e}")));
    }
}

fn fail(message: &str) -> ! {
    eprintln!("disk_worker: {message}");
    std::process::exit(2)
}

fn field<'v>(command: &'v Value, key: &str) -> &'v Value {
    command.get(key).unwrap_or_else(|| fail(&format!("the command has no \"{key}\": {command}")))
}

fn text<'v>(command: &'v Value, key: &str) -> &'v str {
    field(command, key).as_str().unwrap_or_else(|| fail(&format!("\"{key}\" is not a string: {command}")))
}

fn number(command: &Value, key: &str) -> u64 {
    field(command, key).as_u64().unwrap_or_else(|| fail(&format!("\"{key}\" is not a number: {command}")))
}

fn run(store: &Store, targets: &mut HashMap<String, Store>, command: &Value) -> sna_history::Result<Value> {
    match text(command, "op") {
        "limit" => {
            let bytes = field(command, "bytes").as_u64();
            set_file_size_limit(bytes);
            Ok(json!(bytes))
        }
        "import" => Ok(json!(store.import_file(text(command, "path"), None, &Options::default())?.id())),
        "append" => {
            let session = store.session(text(command, "session"))?;
            let filler = "x".repeat(number(command, "size") as usize);
            let tag = text(command, "tag");
            let blocks = (0..number(command, "count")).map(|i| Block::text(Actor::User, format!("{tag}-{i} {filler}")));
            if command.get("one").and_then(Value::as_bool) == Some(true) {
                let first = blocks.take(1).next().unwrap_or_else(|| fail("\"count\" is 0"));
                session.append(first)?;
                Ok(json!(1))
            } else {
                Ok(json!(session.extend(blocks)?.len()))
            }
        }
        "sync" => {
            let path = text(command, "target");
            if !targets.contains_key(path) {
                targets.insert(path.to_string(), Store::open(path)?);
            }
            let report = store.sync_to(&targets[path], &SyncOptions::default())?;
            Ok(serde_json::to_value(report).unwrap_or_else(|e| fail(&format!("cannot write the report: {e}"))))
        }
        other => fail(&format!("unknown op {other:?}")),
    }
}

/// Sets the soft file-size limit (the hard one stays as it is); `None` raises it to the hard one.
fn set_file_size_limit(bytes: Option<u64>) {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit and setrlimit only read and write the struct passed to them.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_FSIZE, &mut limit) != 0 {
            fail(&format!("getrlimit: {}", std::io::Error::last_os_error()));
        }
        limit.rlim_cur = bytes.map_or(limit.rlim_max, |b| b.min(limit.rlim_max));
        if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
            fail(&format!("setrlimit: {}", std::io::Error::last_os_error()));
        }
    }
}
