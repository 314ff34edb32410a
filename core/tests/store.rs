//! The store on disk: schema checks, migrations, atomicity, embeds, several processes.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use rusqlite::Connection;
use sna_history::{Actor, Block, Embed, Kind, NewSession, Store};

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn example(name: &str) -> PathBuf {
    // Integration tests live in target/<profile>/deps; cargo builds examples into target/<profile>/examples.
    let exe = std::env::current_exe().unwrap();
    let path = exe.parent().unwrap().parent().unwrap().join("examples").join(name);
    assert!(path.exists(), "{} is missing: cargo test builds the examples first", path.display());
    path
}

fn raw(path: &Path) -> Connection {
    Connection::open(path).unwrap()
}

#[test]
fn a_newer_schema_is_refused_and_left_untouched() {
    let dir = tmp();
    let path = dir.path().join("h.db");
    Store::open(&path).unwrap().close().unwrap();
    {
        let conn = raw(&path);
        conn.execute_batch("PRAGMA user_version = 7").unwrap();
    }
    let before = std::fs::read(&path).unwrap();
    let err = Store::open(&path).unwrap_err();
    assert_eq!(err.code(), "SCHEMA_TOO_NEW");
    assert!(err.to_string().contains("schema version 7, newer than 3"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), before);
    let version: i64 = raw(&path).query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    assert_eq!(version, 7);
}

#[test]
fn paths_that_are_not_our_database_are_refused() {
    let dir = tmp();
    let err = Store::open(dir.path()).unwrap_err();
    assert_eq!(err.code(), "INVALID_INPUT");
    assert!(err.to_string().contains("is a directory"), "{err}");

    let junk = dir.path().join("junk.db");
    std::fs::write(&junk, b"not a database, only text ".repeat(100)).unwrap();
    let err = Store::open(&junk).unwrap_err();
    assert_eq!(err.code(), "INVALID_INPUT");
    assert!(err.to_string().contains("not an SQLite database"), "{err}");

    let other = dir.path().join("other.db");
    raw(&other).execute_batch("CREATE TABLE notes (x TEXT)").unwrap();
    let err = Store::open(&other).unwrap_err();
    assert_eq!(err.code(), "INVALID_INPUT");
    assert!(err.to_string().contains("another application"), "{err}");

    let err = Store::open(dir.path().join("no/such/dir/h.db")).unwrap_err();
    assert_eq!(err.code(), "IO");
}

#[test]
fn the_v1_fixture_is_the_shipped_schema_and_a_v1_database_opens() {
    let fixture = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/schema_v1.sql")).unwrap();
    let shipped = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/schema/v1.sql")).unwrap();
    assert_eq!(fixture, shipped, "a shipped schema must never change: add a migration instead");

    // A database as version 1 wrote it, built from the fixture rather than by the code under test.
    let dir = tmp();
    let path = dir.path().join("v1.db");
    {
        let conn = raw(&path);
        conn.execute_batch(&fixture).unwrap();
        conn.execute_batch(
            "PRAGMA user_version = 1; PRAGMA application_id = 1397637448;
             INSERT INTO sessions (rowid, id, title, created_at, updated_at, block_count) VALUES (1, 'old', 'Old', 1000, 2000, 1);
             INSERT INTO blocks (session, seq, id, actor, kind, content, created_at, model) VALUES (1, 0, 'b0', 'user', 'text', 'hello', 1000, 'm');
             INSERT INTO session_attribution (session, model) VALUES (1, 'm');",
        )
        .unwrap();
    }
    let store = Store::open(&path).unwrap();
    let infos = store.sessions().unwrap();
    assert_eq!(infos.len(), 1);
    assert_eq!((infos[0].id.as_str(), infos[0].block_count, infos[0].models.clone()), ("old", 1, vec!["m".to_string()]));
    let session = store.session("old").unwrap();
    assert_eq!(session.blocks().unwrap()[0].content, "hello");
    assert_eq!(session.append(Block::text(Actor::Assistant, "hi")).unwrap().seq, 1);
}

#[test]
fn a_fresh_database_gets_wal_and_our_ids() {
    let dir = tmp();
    let path = dir.path().join("h.db");
    let store = Store::open(&path).unwrap();
    store.create_session(NewSession::new().id("s")).unwrap();
    let conn = raw(&path);
    let mode: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
    let app: i64 = conn.query_row("PRAGMA application_id", [], |r| r.get(0)).unwrap();
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    assert_eq!((mode.as_str(), app, version), ("wal", 0x534e_4148, 3));
}

#[test]
fn a_batch_that_fails_half_way_stores_nothing() {
    let store = Store::open_in_memory().unwrap();
    let session = store.create_session(NewSession::new()).unwrap();
    session.append(Block::text(Actor::User, "before")).unwrap();
    let mut blocks: Vec<Block> = (0..100).map(|i| Block::text(Actor::User, format!("b{i}"))).collect();
    blocks[50] = Block::new(Actor::Assistant, Kind::ToolUse, "{}");
    let err = session.extend(blocks.clone()).unwrap_err();
    assert_eq!(err.code(), "INVALID_INPUT");
    assert_eq!(err.location().unwrap().index, Some(50));
    assert_eq!(err.location().unwrap().field.as_deref(), Some("tool.call_id"));

    // A failure found inside the transaction (an id that exists) also rolls everything back.
    let mut blocks: Vec<Block> = (0..100).map(|i| Block::text(Actor::User, format!("c{i}"))).collect();
    blocks[70].id = session.blocks().unwrap()[0].id.clone();
    let err = session.extend(blocks).unwrap_err();
    assert_eq!(err.code(), "CONFLICT");
    assert!(err.to_string().contains("block 70 of the batch"), "{err}");
    assert_eq!(session.len().unwrap(), 1);
    assert_eq!(store.sessions().unwrap()[0].block_count, 1);
}

#[test]
fn embeds_are_content_addressed_and_freed_with_the_last_session() {
    let store = Store::open_in_memory().unwrap();
    let bytes = vec![7u8; 10_000];
    for id in ["a", "b"] {
        let session = store.create_session(NewSession::new().id(id)).unwrap();
        let mut block = Block::text(Actor::User, "![i](embed://img)");
        block.embeds.insert("img".into(), Embed::from_bytes("image/png", None, bytes.clone()));
        let stored = session.append(block).unwrap();
        assert_eq!(stored.embeds["img"].size, 10_000);
        assert!(stored.embeds["img"].data.is_none());
        assert_eq!(session.embed("img").unwrap(), bytes);
    }
    assert_eq!(store.blob_count().unwrap(), 1);
    // Known bytes may be referred to by hash alone.
    let session = store.session("a").unwrap();
    let mut by_hash = Block::text(Actor::User, "again ![i](embed://img)");
    let mut embed = Embed::from_bytes("image/png", None, bytes.clone());
    embed.data = None;
    by_hash.embeds.insert("img".into(), embed);
    session.append(by_hash).unwrap();
    let mut unknown = Block::text(Actor::User, "![j](embed://other)");
    unknown.embeds.insert("other".into(), Embed { sha256: "0".repeat(64), ..Embed::from_bytes("image/png", None, vec![]) });
    unknown.embeds.get_mut("other").unwrap().data = None;
    let err = session.append(unknown).unwrap_err();
    assert_eq!(err.code(), "INVALID_INPUT");
    assert!(err.to_string().contains("carries no bytes"), "{err}");

    store.delete_session("a").unwrap();
    assert_eq!(store.blob_count().unwrap(), 1);
    store.delete_session("b").unwrap();
    assert_eq!(store.blob_count().unwrap(), 0);
}

#[test]
fn a_closed_store_refuses_calls() {
    let store = Store::open_in_memory().unwrap();
    let session = store.create_session(NewSession::new()).unwrap();
    store.close().unwrap();
    store.close().unwrap();
    assert_eq!(session.blocks().unwrap_err().code(), "CLOSED");
    assert_eq!(store.sessions().unwrap_err().code(), "CLOSED");
}

#[test]
fn processes_appending_at_once_keep_seq_dense() {
    let dir = tmp();
    let path = dir.path().join("h.db");
    Store::open(&path).unwrap().create_session(NewSession::new().id("s")).unwrap();
    let worker = example("append_worker");
    let children: Vec<_> = (0..4)
        .map(|i| Command::new(&worker).arg(&path).arg("s").arg("300").arg(format!("p{i}")).spawn().unwrap())
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let blocks = Store::open(&path).unwrap().session("s").unwrap().blocks().unwrap();
    assert_eq!(blocks.iter().map(|b| b.seq).collect::<Vec<_>>(), (0..1200).collect::<Vec<_>>());
    let mut contents: Vec<_> = blocks.iter().map(|b| b.content.clone()).collect();
    contents.sort();
    contents.dedup();
    assert_eq!(contents.len(), 1200);
}

#[test]
fn a_process_killed_during_a_batch_leaves_a_sound_database_without_the_batch() {
    let dir = tmp();
    let path = dir.path().join("h.db");
    let wal = dir.path().join("h.db-wal");
    {
        let store = Store::open(&path).unwrap();
        let session = store.create_session(NewSession::new().id("s")).unwrap();
        session.append(Block::text(Actor::User, "before the batch")).unwrap();
    }
    let wal_before = std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
    let mut child = Command::new(example("append_worker"))
        .arg(&path)
        .arg("s")
        .arg("200000")
        .arg("batch")
        .arg("--batch")
        .spawn()
        .unwrap();
    // Wait until the batch is being written (the WAL grows past the cache), then kill.
    let started = Instant::now();
    loop {
        let size = std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
        if size > wal_before + 8 * 1024 * 1024 {
            break;
        }
        assert!(child.try_wait().unwrap().is_none(), "the worker finished before it could be killed");
        assert!(started.elapsed() < Duration::from_secs(120), "the WAL never grew");
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap(); // SIGKILL on Unix
    let status = child.wait().unwrap();
    assert!(!status.success());

    let conn = raw(&path);
    let check: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(check, "ok");
    drop(conn);
    let store = Store::open(&path).unwrap();
    let blocks = store.session("s").unwrap().blocks().unwrap();
    assert_eq!(blocks.len(), 1);
    assert_eq!(blocks[0].content, "before the batch");
    assert_eq!(store.sessions().unwrap()[0].block_count, 1);
}

#[test]
fn a_session_is_renamed_and_moved_and_its_embeds_name_their_mime_type() {
    let store = Store::open_in_memory().unwrap();
    let session = store.create_session(NewSession::new().id("s").title("Before")).unwrap();
    let info = store.update_session("s", Some("After"), None).unwrap();
    assert_eq!((info.title.as_deref(), info.cwd.as_deref()), (Some("After"), None));
    let info = store.update_session("s", None, Some("/home/dev/project")).unwrap();
    assert_eq!((info.title.as_deref(), info.cwd.as_deref()), (Some("After"), Some("/home/dev/project")));
    let info = store.update_session("s", Some(""), None).unwrap();
    assert_eq!(info.title, None, "an empty title clears it");
    assert_eq!(store.update_session("nobody", Some("x"), None).unwrap_err().code().as_str(), "NOT_FOUND");

    let mut block = Block::text(Actor::User, "![a](embed://img.1:x)");
    block.embeds.insert("img.1:x".into(), Embed::from_bytes("image/webp", None, b"RIFF".to_vec()));
    session.append(block).unwrap();
    assert_eq!(session.embed_mime("img.1:x").unwrap().as_deref(), Some("image/webp"));
    assert_eq!(session.embed_mime("other").unwrap(), None);
    assert_eq!(session.embed("img.1:x").unwrap(), b"RIFF");
}
