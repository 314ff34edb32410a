//! The store when SQLite itself answers that the database is full: the store's connection capped
//! at the database's size (`PRAGMA max_page_count`), so that a write needing more room fails with
//! `SQLITE_FULL`, the code SQLite gives when the disk has no space left. An import, an append and
//! a sync each fail with a `STORAGE` error naming the cause and the file, change nothing, and work
//! once the cap is lifted. `core/tests/it/disk.rs` does the same with a file-size limit and a
//! database made read-only, in a process of its own.

use std::path::{Path, PathBuf};

use sna_test_support::{assert_sound, fixture_file};

use crate::error::{Code, Error};
use crate::model::{Actor, Block};
use crate::native::Options;
use crate::store::{SessionInfo, Store, SyncOptions};

/// Caps `store` at its present size plus two pages, or lifts the cap (`false`).
fn capped(store: &Store, on: bool) {
    store
        .with_conn(|conn| {
            conn.cap_pages(on.then_some(2));
            Ok(())
        })
        .unwrap();
}

/// Every session of the store with its blocks, by id.
fn contents(store: &Store) -> Vec<(SessionInfo, Vec<Block>)> {
    let mut all: Vec<(SessionInfo, Vec<Block>)> = store.sessions().unwrap().into_iter().map(|info| (info.clone(), store.session(&info.id).unwrap().blocks().unwrap())).collect();
    all.sort_by(|a, b| a.0.id.cmp(&b.0.id));
    all
}

fn assert_full(err: Error, db: &Path) {
    assert_eq!(err.code(), Code::Storage, "{err}");
    let message = err.to_string();
    let cause = format!("the disk is full or the database reached its size limit: {} cannot grow", db.display());
    assert!(message.contains(&cause), "{cause:?} is not in: {message}");
    assert!(message.contains("SQLite: database or disk is full"), "{message}");
}

/// A store at `dir/name` holding one imported session with blocks appended to it.
fn store_with_history(dir: &Path, name: &str) -> (Store, PathBuf) {
    let db = dir.join(name);
    let store = Store::open(&db).unwrap();
    let session = store.import_file(fixture_file("claude-code/basic", "59187973"), None, &Options::default()).unwrap();
    session.extend((0..3).map(|i| Block::text(Actor::User, format!("before-{i}")))).unwrap();
    (store, db)
}

/// The largest transcript among the fixtures.
fn large() -> PathBuf {
    fixture_file("claude-code/compact", "e4e2453c")
}

#[test]
fn an_import_into_a_full_database_stores_nothing_and_works_once_there_is_room() {
    let dir = tempfile::tempdir().unwrap();
    let (store, db) = store_with_history(dir.path(), "h.db");
    let before = contents(&store);
    capped(&store, true);
    assert_full(store.import_file(large(), None, &Options::default()).unwrap_err(), &db);
    assert_sound(&db);
    assert_eq!(contents(&store), before);
    assert!(!store.source_unchanged(large()).unwrap(), "the failed import recorded its file");
    capped(&store, false);
    let session = store.import_file(large(), None, &Options::default()).unwrap();
    assert!(store.source_unchanged(large()).unwrap());
    let fresh = Store::open_in_memory().unwrap().import_file(large(), None, &Options::default()).unwrap();
    assert_eq!(session.blocks().unwrap(), fresh.blocks().unwrap());
    assert_eq!(contents(&store).len(), before.len() + 1);
    assert_sound(&db);
}

#[test]
fn an_append_to_a_full_database_stores_nothing_and_works_once_there_is_room() {
    let dir = tempfile::tempdir().unwrap();
    let (store, db) = store_with_history(dir.path(), "h.db");
    let session = store.session(&store.sessions().unwrap()[0].id).unwrap();
    let before = contents(&store);
    let filler = "x".repeat(4096);
    let batch = || (0..200).map(|i| Block::text(Actor::User, format!("batch-{i} {filler}")));
    let one = || Block::text(Actor::User, format!("one {}", "y".repeat(1 << 20)));
    capped(&store, true);
    assert_full(session.extend(batch()).unwrap_err(), &db);
    assert_full(session.append(one()).unwrap_err(), &db);
    assert_sound(&db);
    assert_eq!(contents(&store), before);
    capped(&store, false);
    assert_eq!(session.extend(batch()).unwrap().len(), 200);
    session.append(one()).unwrap();
    assert_eq!(session.len().unwrap(), before[0].1.len() as u64 + 201);
    assert_sound(&db);
}

#[test]
fn a_sync_into_a_full_database_changes_nothing_there_and_works_once_there_is_room() {
    let dir = tempfile::tempdir().unwrap();
    let (source, _) = store_with_history(dir.path(), "h.db");
    source.import_file(large(), None, &Options::default()).unwrap();
    let target_db = dir.path().join("target.db");
    let target = Store::open(&target_db).unwrap();
    let own = Options { session_id: Some("own".into()), ..Options::default() };
    target.import_file(fixture_file("codex/basic", "rollout-"), None, &own).unwrap();
    let before = contents(&target);
    capped(&target, true);
    assert_full(source.sync_to(&target, &SyncOptions::default()).unwrap_err(), &target_db);
    assert_sound(&target_db);
    assert_eq!(contents(&target), before);
    capped(&target, false);
    assert_eq!(source.sync_to(&target, &SyncOptions::default()).unwrap().created, 2);
    assert_sound(&target_db);
    let after = contents(&target);
    for (info, blocks) in contents(&source) {
        assert_eq!(after.iter().find(|(i, _)| i.id == info.id).map(|(_, b)| b), Some(&blocks), "session {}", info.id);
    }
    assert!(after.contains(&before[0]), "the target's own session is kept");
}
