//! `Store::sync_to` (issue 22): between database files here, and through a PostgreSQL server with
//! `--features pg-tests` (two machines' histories pushed to one server and pulled to a third).

use std::path::Path;

use sna_test_support::fixture;
use sna_history::{Actor, Block, Embed, Error, NewSession, Options, Runtime, Store, SyncOptions, SyncReport};

#[cfg(feature = "pg-tests")]
use sna_test_support as pg;

fn origin(name: &str) -> SyncOptions {
    SyncOptions { origin: Some(name.into()) }
}

/// A session's id, title, cwd, block count, models and blocks.
type Contents = (String, Option<String>, Option<String>, u64, Vec<String>, Vec<Block>);

/// Every session of `store` by id.
fn contents(store: &Store) -> Vec<Contents> {
    let mut out: Vec<_> = store
        .sessions()
        .unwrap()
        .into_iter()
        .map(|info| {
            let blocks = store.session(&info.id).unwrap().blocks().unwrap();
            (info.id, info.title, info.cwd, info.block_count, info.models, blocks)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// A history with an embed, an attributed reply and 30 blocks in a second session.
fn machine(path: &Path, tag: &str) -> Store {
    let store = Store::open(path).unwrap();
    let session = store.create_session(NewSession::new().id(format!("{tag}-chat")).title(format!("{tag} chat")).cwd("/home/dev/p")).unwrap();
    let mut user = Block::text(Actor::User, format!("{tag}: what is in ![shot](embed://shot)?"));
    user.embeds.insert("shot".into(), Embed::from_bytes("image/png", Some("shot.png".into()), format!("{tag}-png-bytes").into_bytes()));
    session.extend(vec![user, Block::text(Actor::Assistant, "a cat").attributed("claude-code", "anthropic", "claude-sonnet-4-5")]).unwrap();
    let long = store.create_session(NewSession::new().id(format!("{tag}-long"))).unwrap();
    long.extend((0..30).map(|i| Block::text(if i % 2 == 0 { Actor::User } else { Actor::Assistant }, format!("{tag} {i}")))).unwrap();
    store
}

fn nothing_copied(report: &SyncReport) {
    assert_eq!((report.created, report.extended, report.blocks, report.embeds), (0, 0, 0, 0), "{report:?}");
    assert!(report.conflicts.is_empty(), "{report:?}");
}

#[test]
fn a_sync_copies_sessions_blocks_and_embeds_once() {
    let dir = tempfile::tempdir().unwrap();
    let a = machine(&dir.path().join("a.db"), "a");
    let b = Store::open(dir.path().join("b.db")).unwrap();
    let report = a.sync_to(&b, &origin("alpha")).unwrap();
    assert_eq!((report.sessions, report.created, report.blocks, report.embeds, report.embed_bytes), (2, 2, 32, 1, 11), "{report:?}");
    assert_eq!(contents(&a), contents(&b));
    let chat = b.session("a-chat").unwrap();
    assert_eq!(chat.embed("shot").unwrap(), b"a-png-bytes");
    assert_eq!(chat.embed_mime("shot").unwrap().as_deref(), Some("image/png"));
    let info = chat.info().unwrap();
    assert_eq!(info.origin.as_deref(), Some("alpha"), "a session brought by sync names the machine it came from");
    assert_eq!(a.session("a-chat").unwrap().info().unwrap().origin, None, "the source's own sessions have no origin");
    assert_eq!((info.created_at, info.updated_at), {
        let there = a.session("a-chat").unwrap().info().unwrap();
        (there.created_at, there.updated_at)
    });

    // Again: nothing to copy, every session unchanged.
    let again = a.sync_to(&b, &origin("alpha")).unwrap();
    nothing_copied(&again);
    assert_eq!(again.unchanged, 2);

    // New blocks on the source: only they are copied.
    a.session("a-long").unwrap().extend(vec![Block::text(Actor::User, "more"), Block::text(Actor::Assistant, "ok")]).unwrap();
    let more = a.sync_to(&b, &origin("alpha")).unwrap();
    assert_eq!((more.extended, more.blocks, more.unchanged, more.created), (1, 2, 1, 0), "{more:?}");
    assert_eq!(contents(&a), contents(&b));

    // Synced back the other way: the sessions are there already, origins stay as they are.
    let back = b.sync_to(&a, &origin("beta")).unwrap();
    nothing_copied(&back);
    assert_eq!(a.session("a-chat").unwrap().info().unwrap().origin, None);
}

#[test]
fn a_target_ahead_is_listed_and_a_sync_back_brings_its_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let a = machine(&dir.path().join("a.db"), "a");
    let b = Store::open(dir.path().join("b.db")).unwrap();
    a.sync_to(&b, &origin("alpha")).unwrap();
    // The shared store goes on with the conversation.
    b.session("a-chat").unwrap().append(Block::text(Actor::User, "continued elsewhere")).unwrap();
    let report = a.sync_to(&b, &origin("alpha")).unwrap();
    nothing_copied(&report);
    assert_eq!(report.target_ahead, vec!["a-chat".to_string()]);
    let back = b.sync_to(&a, &origin("beta")).unwrap();
    assert_eq!((back.extended, back.blocks), (1, 1), "{back:?}");
    assert_eq!(contents(&a), contents(&b));
    assert!(a.sync_to(&b, &origin("alpha")).unwrap().target_ahead.is_empty());
}

#[test]
fn histories_that_differ_are_reported_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let a = machine(&dir.path().join("a.db"), "a");
    let b = Store::open(dir.path().join("b.db")).unwrap();
    a.sync_to(&b, &origin("alpha")).unwrap();
    let ours = a.session("a-chat").unwrap().append(Block::text(Actor::User, "said here")).unwrap();
    let theirs = b.session("a-chat").unwrap().extend(vec![Block::text(Actor::User, "said there"), Block::text(Actor::Assistant, "yes")]).unwrap();
    let (before_a, before_b) = (contents(&a), contents(&b));
    for (from, to) in [(&a, &b), (&b, &a)] {
        let report = from.sync_to(to, &origin("x")).unwrap();
        assert_eq!(report.conflicts.len(), 1, "{report:?}");
        let conflict = &report.conflicts[0];
        assert_eq!((conflict.session_id.as_str(), conflict.seq), ("a-chat", 2));
        let (source_id, target_id) = if std::ptr::eq(from, &a) { (&ours.id, &theirs[0].id) } else { (&theirs[0].id, &ours.id) };
        assert_eq!((&conflict.source_block_id, &conflict.target_block_id), (source_id, target_id));
        assert_eq!(report.blocks, 0);
    }
    assert_eq!((contents(&a), contents(&b)), (before_a, before_b), "neither side is changed");
    // A session made on both sides under one id with different blocks is a conflict at seq 0.
    a.create_session(NewSession::new().id("same")).unwrap().append(Block::text(Actor::User, "one")).unwrap();
    b.create_session(NewSession::new().id("same")).unwrap().append(Block::text(Actor::User, "two")).unwrap();
    let report = a.sync_to(&b, &origin("alpha")).unwrap();
    assert!(report.conflicts.iter().any(|c| c.session_id == "same" && c.seq == 0), "{report:?}");
}

#[test]
fn long_sessions_are_copied_in_chunks_and_a_partial_copy_is_completed() {
    let dir = tempfile::tempdir().unwrap();
    let a = Store::open(dir.path().join("a.db")).unwrap();
    let long = a.create_session(NewSession::new().id("long")).unwrap();
    long.extend((0..4_500).map(|i| Block::text(Actor::User, format!("block {i}")))).unwrap();
    // A target that holds the first blocks already (as a stopped run leaves it, without watermark).
    let b = Store::open(dir.path().join("b.db")).unwrap();
    let there = b.create_session(NewSession::new().id("long")).unwrap();
    there.extend(long.blocks_range(0, 1_234).unwrap()).unwrap();
    let report = a.sync_to(&b, &origin("alpha")).unwrap();
    assert_eq!((report.extended, report.blocks), (1, 4_500 - 1_234), "{report:?}");
    assert_eq!(b.session("long").unwrap().blocks().unwrap(), long.blocks().unwrap());
    let c = Store::open(dir.path().join("c.db")).unwrap();
    assert_eq!(a.sync_to(&c, &origin("alpha")).unwrap().blocks, 4_500);
    assert_eq!(c.session("long").unwrap().blocks().unwrap(), long.blocks().unwrap());
    nothing_copied(&a.sync_to(&c, &origin("alpha")).unwrap());
}

#[test]
fn a_store_cannot_sync_with_itself_and_origins_are_names() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.db");
    let a = machine(&path, "a");
    let err = a.sync_to(&a, &SyncOptions::default()).unwrap_err();
    assert!(matches!(err, Error::InvalidInput { .. }), "{err}");
    let again = Store::open(&path).unwrap();
    assert!(a.sync_to(&again, &SyncOptions::default()).unwrap_err().to_string().contains("same store"));
    // A copied file keeps the store's id (copied closed, so that the file holds everything).
    a.close().unwrap();
    again.close().unwrap();
    std::fs::copy(&path, dir.path().join("copy.db")).unwrap();
    let a = Store::open(&path).unwrap();
    let copy = Store::open(dir.path().join("copy.db")).unwrap();
    assert!(a.sync_to(&copy, &SyncOptions::default()).unwrap_err().to_string().contains("copies of one store"));
    let b = Store::open(dir.path().join("b.db")).unwrap();
    assert_ne!(a.store_id().unwrap(), b.store_id().unwrap());
    assert_eq!(a.store_id().unwrap().len(), 32);
    let err = a.sync_to(&b, &origin(" ")).unwrap_err();
    assert_eq!(err.location().unwrap().field.as_deref(), Some("origin"));
    // Without a name, the origin is this machine's.
    a.sync_to(&b, &SyncOptions::default()).unwrap();
    let named = b.session("a-chat").unwrap().info().unwrap().origin.unwrap();
    assert!(!named.is_empty() && named != "unknown", "{named}");
}

/// Imports the fixtures `paths` into a new database file at `path`.
fn imported(path: &Path, paths: &[&str]) -> Store {
    let store = Store::open(path).unwrap();
    for p in paths {
        store.import_source(fixture(p), None, &Options::default()).unwrap();
    }
    store
}

/// Each session's export to the runtime it came from (or Claude Code for one made by hand).
fn exports(store: &Store) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for info in store.sessions().unwrap() {
        let session = store.session(&info.id).unwrap();
        for runtime in [Runtime::ClaudeCode, Runtime::Codex, Runtime::OpenCode] {
            out.push((format!("{} {runtime:?}", info.id), session.to_native_text(runtime, &Options::default()).unwrap()));
        }
    }
    out.sort();
    out
}

/// Two machines' histories through a shared store to a third: identical blocks, embeds and exports.
fn two_machines_through(shared: &Store, dir: &Path) {
    let m1 = imported(&dir.join("m1.db"), &["claude-code/image/b6b6a6ab-9d63-4e44-ba5d-64a220daeb88.jsonl", "codex/basic/rollout-2026-12-02T15-47-38-01a23770-a56e-7aa2-983a-2aa2cbed9afd.jsonl"]);
    let m2 = imported(&dir.join("m2.db"), &["codex/image/rollout-2026-12-02T15-47-41-01a23770-ad92-7630-b78a-457bf2266736.jsonl"]);
    let own = m2.create_session(NewSession::new().id("m2-own")).unwrap();
    let mut user = Block::text(Actor::User, "see ![x](embed://x)");
    user.embeds.insert("x".into(), Embed::from_bytes("image/jpeg", None, vec![0xff, 0xd8, 0, 1, 2]));
    own.append(user).unwrap();
    let pushed1 = m1.sync_to(shared, &origin("machine-one")).unwrap();
    let pushed2 = m2.sync_to(shared, &origin("machine-two")).unwrap();
    assert_eq!(pushed1.created + pushed2.created, 4, "{pushed1:?} {pushed2:?}");
    let m3 = Store::open(dir.join("m3.db")).unwrap();
    let pulled = shared.sync_to(&m3, &SyncOptions::default()).unwrap();
    assert_eq!(pulled.created, 4, "{pulled:?}");
    let mut both = [contents(&m1), contents(&m2)].concat();
    both.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(contents(&m3), both);
    assert_eq!(contents(shared), both);
    let mut exported = [exports(&m1), exports(&m2)].concat();
    exported.sort();
    assert_eq!(exports(&m3), exported);
    for info in m3.sessions().unwrap() {
        let want = if m1.session(&info.id).is_ok() { "machine-one" } else { "machine-two" };
        assert_eq!(info.origin.as_deref(), Some(want), "{}", info.id);
        let from = if want == "machine-one" { &m1 } else { &m2 };
        let session = from.session(&info.id).unwrap();
        for block in session.blocks().unwrap() {
            for embed_id in block.embeds.keys() {
                assert_eq!(m3.session(&info.id).unwrap().embed(embed_id).unwrap(), session.embed(embed_id).unwrap());
            }
        }
    }
    // Again, every way: nothing copied.
    nothing_copied(&m1.sync_to(shared, &origin("machine-one")).unwrap());
    nothing_copied(&m2.sync_to(shared, &origin("machine-two")).unwrap());
    nothing_copied(&shared.sync_to(&m3, &SyncOptions::default()).unwrap());
}

#[test]
fn two_machines_through_a_shared_file_to_a_third() {
    let dir = tempfile::tempdir().unwrap();
    let shared = Store::open(dir.path().join("shared.db")).unwrap();
    two_machines_through(&shared, dir.path());
}

#[cfg(feature = "pg-tests")]
#[test]
fn two_machines_through_postgresql_to_a_third() {
    let db = pg::TestDb::new("sync");
    let dir = tempfile::tempdir().unwrap();
    let shared = Store::open(&db.url).unwrap();
    two_machines_through(&shared, dir.path());
    // The server's sessions name the machines they came from; pulled from the server, a session
    // keeps that name rather than the server's.
    let origins: std::collections::BTreeSet<_> = shared.sessions().unwrap().into_iter().filter_map(|i| i.origin).collect();
    assert_eq!(origins.into_iter().collect::<Vec<_>>(), vec!["machine-one".to_string(), "machine-two".to_string()]);
}

#[cfg(feature = "pg-tests")]
#[test]
fn a_session_made_on_the_server_is_pulled_with_the_server_as_its_origin() {
    let db = pg::TestDb::new("sync_origin");
    let dir = tempfile::tempdir().unwrap();
    let shared = Store::open(&db.url).unwrap();
    shared.create_session(NewSession::new().id("on-server")).unwrap().append(Block::text(Actor::User, "hi")).unwrap();
    let local = Store::open(dir.path().join("l.db")).unwrap();
    shared.sync_to(&local, &SyncOptions::default()).unwrap();
    let origin = local.session("on-server").unwrap().info().unwrap().origin.unwrap();
    assert!(origin.starts_with("127.0.0.1:") && origin.ends_with(&db.name), "{origin}");
    assert!(!origin.contains("sna-test"), "no password in an origin: {origin}");
}
