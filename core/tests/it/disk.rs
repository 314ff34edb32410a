//! The store on a failing disk (issue 47): the disk fills up, or the database becomes read-only,
//! while a process has the store open. An import, an append and a sync each fail then with a
//! `STORAGE` error that says what happened and names the database file; the file stays sound
//! (`PRAGMA integrity_check`, every session whole), keeps every session and block it held and holds
//! nothing of the failed call; once there is room again (or the file may be written again) the same
//! call, in the same process, works.
//!
//! The store runs in a worker process (`examples/disk_worker.rs`), driven one command at a time.
//! A full disk is the worker's file-size limit (`RLIMIT_FSIZE`), set just above the size of the
//! database's files: every write past it fails as on a full disk (with `EFBIG`), and nothing needs
//! mounting. A read-only database is the database file and its write-ahead log made immutable
//! (`chattr +i`), which stops root too, even through the descriptors the store opened before (on
//! ext4, xfs or btrfs: the tests work under cargo's target folder, not tmpfs); a read-only remount
//! of a bind mount, which would be closer, is refused while a file on it is open for writing, and
//! permissions do not stop root. SQLite's own `SQLITE_FULL`, which a disk with no space left gives,
//! is checked through the store in `core/src/api/disk_full.rs` (the store's connection capped with
//! `PRAGMA max_page_count`), and `SQLITE_READONLY` by `defects::a_database_opens_read_only`.

#![cfg(target_os = "linux")]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{json, Value};
use sna_history::{Block, Options, SessionInfo, Store};
use sna_test_support::{assert_sound, example, fixture_file, Immutable};

/// Room left on the "disk" when it is full: enough for a call to start writing, far too little for
/// the calls that fail (each writes some hundreds of kilobytes).
const ROOM: u64 = 16 << 10;

/// The store of one database in a worker process.
struct Worker {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl Worker {
    fn start(db: &Path) -> Worker {
        let mut child = Command::new(example("disk_worker")).arg(db).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().expect("the worker starts");
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        Worker { child, input, output }
    }

    /// The worker's answer to `command`: `{"ok": …}` or `{"code": …, "message": …}`.
    fn call(&mut self, command: Value) -> Value {
        writeln!(self.input, "{command}").and_then(|()| self.input.flush()).expect("the worker reads its commands");
        let mut line = String::new();
        self.output.read_line(&mut line).expect("the worker answers");
        assert!(!line.is_empty(), "the worker ended without answering {command}");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
    }

    /// The value of a call that must succeed.
    fn ok(&mut self, command: Value) -> Value {
        let answer = self.call(command.clone());
        answer.get("ok").cloned().unwrap_or_else(|| panic!("{command} failed: {answer}"))
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How the disk fails.
#[derive(Clone, Copy, Debug)]
enum Fault {
    Full,
    ReadOnly,
}

/// A fault in force on the database `db` until [`Fault::clear`].
enum InForce {
    Full,
    ReadOnly(Immutable),
}

impl Fault {
    /// Makes the disk under `db` fail for the worker.
    fn start(self, worker: &mut Worker, db: &Path) -> InForce {
        match self {
            Fault::Full => {
                let largest = files(db).iter().map(|f| std::fs::metadata(f).unwrap().len()).max().unwrap();
                worker.ok(json!({"op": "limit", "bytes": largest + ROOM}));
                InForce::Full
            }
            Fault::ReadOnly => {
                refuses_open_writers(db.parent().unwrap());
                InForce::ReadOnly(Immutable::seal(files(db).into_iter().filter(|f| !f.to_string_lossy().ends_with("-shm"))))
            }
        }
    }

    /// What the error of a failed call says, the database named.
    fn cause(self, db: &Path) -> Vec<String> {
        match self {
            Fault::Full => vec![format!("{} cannot grow", db.display()), "file-size limit".into(), "File too large".into()],
            Fault::ReadOnly => vec![format!("the database {} is read-only", db.display()), "Operation not permitted".into()],
        }
    }
}

impl InForce {
    /// Room again, or the file writable again.
    fn clear(self, worker: &mut Worker) {
        match self {
            InForce::Full => {
                worker.ok(json!({"op": "limit", "bytes": null}));
            }
            InForce::ReadOnly(sealed) => drop(sealed),
        }
    }
}

/// A temporary folder under cargo's target folder: on the disk of the checkout, where an immutable
/// file refuses writes through descriptors opened before (tmpfs, often `/tmp`, lets those through).
fn scratch() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

/// Panics, saying why, unless the file system of `dir` refuses writes to a file made immutable
/// through a descriptor opened before, as the read-only tests need.
fn refuses_open_writers(dir: &Path) {
    let probe = dir.join("probe");
    let mut file = std::fs::File::create(&probe).unwrap();
    let sealed = Immutable::seal([&probe]);
    let written = file.write_all(b"x");
    drop(sealed);
    assert!(written.is_err(), "the file system of {} lets a descriptor opened before write an immutable file (tmpfs does): the read-only tests need ext4, xfs or btrfs", dir.display());
}

/// The database file and the files SQLite keeps beside it, those that exist.
fn files(db: &Path) -> Vec<PathBuf> {
    let name = db.file_name().unwrap().to_string_lossy().into_owned();
    ["", "-wal", "-shm"].iter().map(|suffix| db.with_file_name(format!("{name}{suffix}"))).filter(|f| f.exists()).collect()
}

/// Every session of the database with its blocks, by id.
fn contents(db: &Path) -> Vec<(SessionInfo, Vec<Block>)> {
    let store = Store::open_read_only(db).unwrap();
    let mut all: Vec<(SessionInfo, Vec<Block>)> = store.sessions().unwrap().into_iter().map(|info| (info.clone(), store.session(&info.id).unwrap().blocks().unwrap())).collect();
    all.sort_by(|a, b| a.0.id.cmp(&b.0.id));
    all
}

fn claude_basic() -> PathBuf {
    fixture_file("claude-code/basic", "59187973")
}

/// The largest transcript among the fixtures: its import writes far more than [`ROOM`].
fn claude_compact() -> PathBuf {
    fixture_file("claude-code/compact", "e4e2453c")
}

fn codex_basic() -> PathBuf {
    fixture_file("codex/basic", "rollout-")
}

/// Asserts that `answer` is the failure `fault` makes, a `STORAGE` error naming the cause and `db`.
fn assert_fails(answer: &Value, fault: Fault, db: &Path) {
    assert_eq!(answer["code"], "STORAGE", "{answer}");
    let message = answer["message"].as_str().unwrap();
    for words in fault.cause(db) {
        assert!(message.contains(&words), "{words:?} is not in: {message}");
    }
}

/// A worker on `dir/h.db` holding two sessions already, one of them with blocks appended.
fn store_with_history(dir: &Path) -> (Worker, PathBuf, String) {
    let db = dir.join("h.db");
    let mut worker = Worker::start(&db);
    let earlier = worker.ok(json!({"op": "import", "path": claude_basic()})).as_str().unwrap().to_string();
    worker.ok(json!({"op": "import", "path": codex_basic()}));
    worker.ok(json!({"op": "append", "session": earlier, "tag": "before", "count": 3, "size": 10}));
    (worker, db, earlier)
}

fn import(fault: Fault) {
    let dir = scratch();
    let (mut worker, db, _) = store_with_history(dir.path());
    let before = contents(&db);
    let command = json!({"op": "import", "path": claude_compact()});
    let fault_in_force = fault.start(&mut worker, &db);
    assert_fails(&worker.call(command.clone()), fault, &db);
    fault_in_force.clear(&mut worker);
    assert_sound(&db);
    assert_eq!(contents(&db), before, "the failed import changed the database");
    // The same import, with room again: the whole session.
    let id = worker.ok(command);
    let after = contents(&db);
    let fresh = Store::open_in_memory().unwrap().import_file(claude_compact(), None, &Options::default()).unwrap();
    let (imported, kept): (Vec<_>, Vec<_>) = after.into_iter().partition(|(info, _)| info.id == id);
    assert_eq!(kept, before);
    assert_eq!(imported[0].1, fresh.blocks().unwrap());
    assert_sound(&db);
}

fn append(fault: Fault) {
    let dir = scratch();
    let (mut worker, db, earlier) = store_with_history(dir.path());
    let before = contents(&db);
    // A batch of 200 blocks of 4 KiB, and one block of 1 MiB alone.
    let batch = json!({"op": "append", "session": earlier, "tag": "batch", "count": 200, "size": 4096});
    let one = json!({"op": "append", "session": earlier, "tag": "one", "count": 1, "size": 1 << 20, "one": true});
    let fault_in_force = fault.start(&mut worker, &db);
    assert_fails(&worker.call(batch.clone()), fault, &db);
    assert_fails(&worker.call(one.clone()), fault, &db);
    fault_in_force.clear(&mut worker);
    assert_sound(&db);
    assert_eq!(contents(&db), before, "the failed appends changed the database");
    assert_eq!(worker.ok(batch), 200);
    assert_eq!(worker.ok(one), 1);
    assert_sound(&db);
    let after = contents(&db);
    for ((was, old), (now, new)) in before.iter().zip(&after) {
        assert_eq!(was.id, now.id);
        if was.id != earlier {
            assert_eq!(old, new, "session {} changed", was.id);
            continue;
        }
        assert_eq!(new[..old.len()], old[..], "the blocks there before are kept");
        let added: Vec<String> = new[old.len()..].iter().map(|b| b.content.split(' ').next().unwrap().to_string()).collect();
        let expected: Vec<String> = (0..200).map(|i| format!("batch-{i}")).chain(["one-0".to_string()]).collect();
        assert_eq!(added, expected);
    }
}

fn sync(fault: Fault) {
    let dir = scratch();
    let (mut worker, _, _) = store_with_history(dir.path());
    // The target has a session of its own and what a first sync brought.
    let target = dir.path().join("target.db");
    Store::open(&target).unwrap().import_file(codex_basic(), None, &Options { session_id: Some("own".into()), ..Options::default() }).unwrap();
    let command = json!({"op": "sync", "target": target});
    worker.ok(command.clone());
    // The source gains a large session, which the next sync copies.
    worker.ok(json!({"op": "import", "path": claude_compact()}));
    let before = contents(&target);
    let fault_in_force = fault.start(&mut worker, &target);
    assert_fails(&worker.call(command.clone()), fault, &target);
    fault_in_force.clear(&mut worker);
    assert_sound(&target);
    assert_eq!(contents(&target), before, "the failed sync changed the target");
    let report = worker.ok(command);
    assert_eq!(report["created"], 1, "{report}");
    assert_sound(&target);
    let after = contents(&target);
    let source = contents(&dir.path().join("h.db"));
    for (info, blocks) in &source {
        let (_, copied) = after.iter().find(|(i, _)| i.id == info.id).unwrap_or_else(|| panic!("session {} was not synced", info.id));
        assert_eq!(copied, blocks, "session {}", info.id);
    }
    let own = after.iter().find(|(i, _)| i.id == "own").unwrap();
    assert_eq!(Some(own), before.iter().find(|(i, _)| i.id == "own"), "the target's own session is kept");
    assert_eq!(after.len(), source.len() + 1);
}

#[test]
fn a_full_disk_fails_an_import_and_loses_nothing() {
    import(Fault::Full);
}

#[test]
fn a_full_disk_fails_an_append_and_loses_nothing() {
    append(Fault::Full);
}

#[test]
fn a_full_disk_fails_a_sync_and_loses_nothing() {
    sync(Fault::Full);
}

#[test]
fn a_database_made_read_only_fails_an_import_and_loses_nothing() {
    import(Fault::ReadOnly);
}

#[test]
fn a_database_made_read_only_fails_an_append_and_loses_nothing() {
    append(Fault::ReadOnly);
}

#[test]
fn a_database_made_read_only_fails_a_sync_and_loses_nothing() {
    sync(Fault::ReadOnly);
}
