//! `sna sync` end to end: the report, a second run that copies nothing, conflicts (exit 1), and a
//! sync killed half-way that the next run completes.

use std::os::unix::process::CommandExt;
use std::time::{Duration, Instant};

use predicates::prelude::*;
use sna_history::{Actor, Block, NewSession, Store};
use crate::{sna, snapshots};

fn report(out: &[u8]) -> serde_json::Value {
    serde_json::from_slice(out).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(out)))
}

#[test]
fn sync_reports_what_it_copied_and_copies_nothing_the_second_time() {
    let dir = tempfile::tempdir().unwrap();
    let local = Store::open(dir.path().join("history.db")).unwrap();
    let session = local.create_session(NewSession::new().id("s1").title("One")).unwrap();
    let mut user = Block::text(Actor::User, "see ![d](embed://d)");
    user.embeds.insert("d".into(), sna_history::Embed::from_bytes("image/png", None, b"\x89PNGdot".to_vec()));
    session.extend(vec![user, Block::text(Actor::Assistant, "a dot")]).unwrap();
    let shared = dir.path().join("shared.db");
    // --from defaults to the database.
    // The report: from where to where, sessions created, extended and unchanged, blocks, embeds.
    let text = snapshots::run(dir.path(), &["sync", "--origin", "laptop", "--to", shared.to_str().unwrap()]);
    snapshots::settings(dir.path()).bind(|| insta::assert_snapshot!("sync_report", text));
    let out = sna(dir.path()).args(["sync", "--json", "--to"]).arg(&shared).assert().success().get_output().stdout.clone();
    let again = report(&out);
    assert_eq!((again["blocks"].as_u64(), again["created"].as_u64(), again["unchanged"].as_u64()), (Some(0), Some(0), Some(1)), "{again}");
    // Pulled into another file: --to defaults to the database.
    let other = tempfile::tempdir().unwrap();
    sna(other.path()).args(["sync", "--from"]).arg(&shared).assert().success().stdout(predicate::str::contains("2 blocks copied"));
    let out = sna(other.path()).args(["ls", "--json"]).assert().success().get_output().stdout.clone();
    let list = report(&out);
    assert_eq!(list[0]["origin"], "laptop", "{list}");
    assert_eq!(list[0]["title"], "One");
    sna(dir.path()).args(["sync"]).assert().failure().stderr(predicate::str::contains("sync needs --from or --to"));
    sna(dir.path()).args(["sync", "--to"]).arg(dir.path().join("history.db")).assert().failure().stderr(predicate::str::contains("same store"));
}

#[test]
fn differing_histories_are_listed_and_the_exit_status_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.db"), dir.path().join("b.db"));
    {
        let store = Store::open(&a).unwrap();
        store.create_session(NewSession::new().id("x")).unwrap().append(Block::text(Actor::User, "on a")).unwrap();
        store.create_session(NewSession::new().id("y")).unwrap().append(Block::text(Actor::User, "only on a")).unwrap();
        Store::open(&b).unwrap().create_session(NewSession::new().id("x")).unwrap().append(Block::text(Actor::User, "on b")).unwrap();
    }
    // The conflict listed with the rest of the report, and exit 1 with one line saying why.
    let text = snapshots::run(dir.path(), &["sync", "--from", a.to_str().unwrap(), "--to", b.to_str().unwrap()]);
    let mut filters = snapshots::settings(dir.path());
    snapshots::filter_minted_ids(&mut filters);
    filters.bind(|| insta::assert_snapshot!("sync_conflict", text));
    let store = Store::open(&b).unwrap();
    assert_eq!(store.session("x").unwrap().blocks().unwrap()[0].content, "on b", "the target's history is left as it is");
    assert_eq!(store.session("y").unwrap().len().unwrap(), 1, "the other sessions are copied");
}

#[test]
fn a_sync_killed_half_way_is_completed_by_the_next_run() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.db"), dir.path().join("b.db"));
    const BLOCKS: u64 = 60_000;
    let source = Store::open(&a).unwrap();
    let long = source.create_session(NewSession::new().id("long")).unwrap();
    long.extend((0..BLOCKS).map(|i| Block::text(if i % 2 == 0 { Actor::User } else { Actor::Assistant }, format!("block {i} {}", "x".repeat(200))))).unwrap();
    let target = Store::open(&b).unwrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("sna"))
        .args(["sync", "--from"])
        .arg(&a)
        .arg("--to")
        .arg(&b)
        .stdout(std::process::Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    // Killed once some chunks are in, before the last.
    let started = Instant::now();
    let held = loop {
        let held = target.session("long").map(|s| s.len().unwrap()).unwrap_or(0);
        if held > 0 {
            break held;
        }
        assert!(child.try_wait().unwrap().is_none(), "the sync ended before it could be stopped half-way");
        assert!(started.elapsed() < Duration::from_secs(60), "no block arrived within a minute");
        std::thread::sleep(Duration::from_millis(2));
    };
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert!(!status.success(), "killed, not finished: {status}");
    let held = held.max(target.session("long").unwrap().len().unwrap());
    assert!(held < BLOCKS, "the target holds part of the session ({held} blocks)");
    let prefix = target.session("long").unwrap().blocks().unwrap();
    assert_eq!(prefix.len() as u64 % 2_000, 0, "whole chunks only: {}", prefix.len());
    assert_eq!(prefix, long.blocks_range(0, prefix.len() as u64).unwrap());
    let out = sna(dir.path()).args(["sync", "--json", "--from"]).arg(&a).arg("--to").arg(&b).assert().success().get_output().stdout.clone();
    let done = report(&out);
    assert_eq!(done["blocks"].as_u64(), Some(BLOCKS - prefix.len() as u64), "{done}");
    assert_eq!(target.session("long").unwrap().blocks().unwrap(), long.blocks().unwrap());
    let out = sna(dir.path()).args(["sync", "--json", "--from"]).arg(&a).arg("--to").arg(&b).assert().success().get_output().stdout.clone();
    assert_eq!(report(&out)["blocks"].as_u64(), Some(0));
}
