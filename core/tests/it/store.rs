//! The store on disk: schema checks, migrations, atomicity, embeds, several processes. The tests
//! that are not about SQLite's file run on PostgreSQL too (`--features pg-tests`): each is a
//! module with a `sqlite` and a `postgres` test.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use rusqlite::Connection;
use sna_test_support::example;
use sna_test_support::tmp;
use sna_history::{Actor, Binding, Block, Embed, Kind, NewSession, Reasoning, Runtime, Store};

fn raw(path: &Path) -> Connection {
    Connection::open(path).unwrap()
}

#[cfg(feature = "pg-tests")]
use sna_test_support as pg;

use sna_test_support::on_both_backends;

#[test]
fn a_newer_schema_is_refused_and_left_untouched() {
    let dir = tmp();
    let path = dir.path().join("h.db");
    Store::open(&path).unwrap().close().unwrap();
    {
        let conn = raw(&path);
        conn.execute_batch("PRAGMA user_version = 9").unwrap();
    }
    let before = std::fs::read(&path).unwrap();
    let err = Store::open(&path).unwrap_err();
    assert_eq!(err.code(), "SCHEMA_TOO_NEW");
    assert!(err.to_string().contains("schema version 9, newer than 8"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), before);
    let version: i64 = raw(&path).query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    assert_eq!(version, 9);
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
    assert_eq!((mode.as_str(), app, version), ("wal", 0x534e_4148, 8));
}

on_both_backends! {
    fn a_batch_that_fails_half_way_stores_nothing(store: Store) {
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
}

on_both_backends! {
    fn embeds_are_content_addressed_and_freed_with_the_last_session(store: Store) {
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
}

on_both_backends! {
    fn a_closed_store_refuses_calls(store: Store) {
        let session = store.create_session(NewSession::new()).unwrap();
        store.close().unwrap();
        store.close().unwrap();
        assert_eq!(session.blocks().unwrap_err().code(), "CLOSED");
        assert_eq!(store.sessions().unwrap_err().code(), "CLOSED");
    }
}

/// Four processes append to one session at once; `seq` stays dense. On a database file, and
/// (`--features pg-tests`) on PostgreSQL, where the worker gets the URL.
mod processes_appending_at_once_keep_seq_dense {
    use super::*;

    fn run(place: &str) {
        Store::open(place).unwrap().create_session(NewSession::new().id("s")).unwrap();
        let worker = example("append_worker");
        let children: Vec<_> =
            (0..4).map(|i| Command::new(&worker).arg(place).arg("s").arg("300").arg(format!("p{i}")).spawn().unwrap()).collect();
        for mut child in children {
            assert!(child.wait().unwrap().success());
        }
        let blocks = Store::open(place).unwrap().session("s").unwrap().blocks().unwrap();
        assert_eq!(blocks.iter().map(|b| b.seq).collect::<Vec<_>>(), (0..1200).collect::<Vec<_>>());
        let mut contents: Vec<_> = blocks.iter().map(|b| b.content.clone()).collect();
        contents.sort();
        contents.dedup();
        assert_eq!(contents.len(), 1200);
    }

    #[test]
    fn sqlite() {
        let dir = tmp();
        run(dir.path().join("h.db").to_str().unwrap());
    }

    #[cfg(feature = "pg-tests")]
    #[test]
    fn postgres() {
        let db = pg::TestDb::new("processes");
        run(&db.url);
    }
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

on_both_backends! {
    fn a_session_is_renamed_and_moved_and_its_embeds_name_their_mime_type(store: Store) {
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
}

/// Block ids of every shape a caller may give: the lowercase hyphenated UUID form (stored as 16
/// bytes from schema v4 on) and texts that only look like it (stored as text).
const ODD_IDS: &[&str] = &[
    "0190a000-0000-7000-8000-000000000001",
    "0190A000-0000-7000-8000-000000000001",
    "0190a00000007000800000000000000a",
    "{0190a000-0000-7000-8000-00000000000b}",
    "urn:uuid:0190a000-0000-7000-8000-00000000000c",
    "0190a000-0000-7000-8000-00000000000g",
    "0190a000-0000-7000-8000-00000000-001",
    "0190a0000-000-7000-8000-000000000001",
    "59187973-81fd-4be2-8aa9-a21c45c78135",
    "0123456789abcdef",
    "b0",
    "toolu_01ABCDEFGHIJKLMNOPQRSTUV",
    "ünïcødé block",
];

fn shipped_schema(version: u32) -> String {
    std::fs::read_to_string(format!("{}/src/schema/v{version}.sql", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// The blocks the v3 database of the migration test holds, as the API is to read them back.
fn v3_blocks(embed: &Embed) -> Vec<Block> {
    let mut blocks = Vec::new();
    for (i, id) in ODD_IDS.iter().enumerate() {
        let mut b = match i % 5 {
            0 => Block::text(Actor::User, format!("text {i} ![a](embed://img)")),
            1 => Block::tool_use(format!("toolu_{i}"), "Bash", r#"{"command":"ls"}"#),
            2 => Block::tool_result(format!("toolu_{}", i - 1), "out\n".repeat(i), i == 7),
            3 => {
                let mut b = Block::new(Actor::Assistant, Kind::Thinking, "hmm");
                b.reasoning = Some(Reasoning { format: Reasoning::ANTHROPIC_SIGNATURE.into(), data: format!("sig{i}"), scope: Default::default() });
                b
            }
            _ => {
                let mut b = Block::new(Actor::System, Kind::Status, "bookkeeping");
                b.native = Some(sna_history::Native { runtime: "claude-code".into(), data: serde_json::json!({"record": {"type": "x", "n": i}}) });
                b
            }
        };
        if i % 5 == 0 {
            b.embeds.insert("img".into(), Embed { data: None, ..embed.clone() });
        }
        if b.actor == Actor::Assistant {
            b = b.attributed("claude-code", "anthropic", if i < 6 { "claude-sonnet-4-6" } else { "claude-opus-5-5" });
            b.message_id = Some(format!("msg_{}", i / 3));
        }
        b.turn_id = (i % 2 == 0).then(|| "turn-1".to_string());
        b.id = id.to_string();
        b.seq = i as u64;
        b.created_at = sna_history::Timestamp::from_millis(1_700_000_000_000 + i as i64).unwrap();
        blocks.push(b);
    }
    blocks
}

/// Every row of `table` (any columns), in order of its first columns.
fn dump(conn: &Connection, table: &str) -> Vec<Vec<rusqlite::types::Value>> {
    let mut stmt = conn.prepare(&format!("SELECT * FROM {table} ORDER BY 1, 2")).unwrap();
    let n = stmt.column_count();
    stmt.query_map([], |r| (0..n).map(|i| r.get(i)).collect()).unwrap().collect::<Result<_, _>>().unwrap()
}

#[test]
fn a_v3_database_migrates_to_v7_keeping_every_block_id_embed_binding_and_source() {
    // A database as version 3 wrote it: the shipped schemas, rows written with plain SQL.
    let dir = tmp();
    let path = dir.path().join("v3.db");
    let bytes = b"\x89PNG not really".to_vec();
    let embed = Embed::from_bytes("image/png", Some("a.png".into()), bytes.clone());
    let blocks = v3_blocks(&embed);
    let other_blocks: Vec<Block> = ["0190a000-0000-7000-8000-000000000001", "b0"]
        .iter()
        .enumerate()
        .map(|(i, id)| Block { id: id.to_string(), seq: i as u64, ..Block::text(Actor::User, format!("other {i}")) })
        .collect();
    let (tables_before, sources_before);
    {
        let conn = raw(&path);
        for v in 1..=3 {
            conn.execute_batch(&shipped_schema(v)).unwrap();
        }
        conn.execute_batch(
            "PRAGMA user_version = 3; PRAGMA application_id = 1397637448;
             INSERT INTO sessions (rowid, id, title, cwd, created_at, updated_at, block_count) VALUES (1, 'one', 'One', '/p', 1000, 2000, 13);
             INSERT INTO sessions (rowid, id, title, cwd, created_at, updated_at, block_count) VALUES (2, 'two', NULL, NULL, 1500, 2500, 2);
             INSERT INTO session_attribution (session, provider, model_provider, model) VALUES
                 (1, 'claude-code', 'anthropic', 'claude-sonnet-4-6'), (1, 'claude-code', 'anthropic', 'claude-opus-5-5');
             INSERT INTO bindings (session, runtime, native_id, through_seq, updated_at) VALUES (1, 'codex', 'thread-1', 11, 5000);
             INSERT INTO sources (path, session, runtime, size, lines, sha256, updated_at, file_len, mtime_ns, inode, device, stat_at)
                 VALUES ('/h/a.jsonl', 1, 'claude-code', 100, 3, 'abc', 6000, 100, 123456789, 42, 7, 6001),
                        ('/h/b.jsonl', 2, 'codex', 50, 1, 'def', 6100, NULL, NULL, NULL, NULL, NULL);",
        )
        .unwrap();
        conn.execute("INSERT INTO blobs (sha256, size, data) VALUES (?1, ?2, ?3)", rusqlite::params![embed.sha256, bytes.len() as i64, bytes]).unwrap();
        conn.execute("INSERT INTO session_embeds (session, embed_id, sha256) VALUES (1, 'img', ?1)", [&embed.sha256]).unwrap();
        for (session, list) in [(1, &blocks), (2, &other_blocks)] {
            for b in list.iter() {
                conn.execute(
                    "INSERT INTO blocks (session, seq, id, actor, kind, content, tool, reasoning, embeds, provider, model_provider, model,
                     message_id, turn_id, created_at, native) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
                    rusqlite::params![
                        session, b.seq as i64, b.id, b.actor.as_str(), b.kind.as_str(), b.content,
                        b.tool.as_ref().map(json), b.reasoning.as_ref().map(json),
                        (!b.embeds.is_empty()).then(|| json(&b.embeds)), b.provider, b.model_provider, b.model,
                        b.message_id, b.turn_id, b.created_at.as_millis(), b.native.as_ref().map(json),
                    ],
                )
                .unwrap();
            }
        }
        tables_before = ["sessions", "blobs", "session_embeds", "session_attribution", "bindings"].map(|t| dump(&conn, t));
        sources_before = dump(&conn, "sources");
    }

    let store = Store::open(&path).unwrap();
    let one = store.session("one").unwrap();
    assert_eq!(one.blocks().unwrap(), blocks, "every field of every block, in order");
    for b in &blocks {
        assert_eq!(&one.block(&b.id).unwrap(), b, "block {:?} is found by its id", b.id);
    }
    let two = store.session("two").unwrap();
    assert_eq!(two.blocks().unwrap(), other_blocks);
    assert_eq!(one.embed("img").unwrap(), bytes);
    assert_eq!(one.embed_mime("img").unwrap().as_deref(), Some("image/png"));
    assert_eq!(
        one.binding(Runtime::Codex).unwrap(),
        Some(Binding { runtime: Runtime::Codex, native_id: "thread-1".into(), through_seq: 11, updated_at: sna_history::Timestamp::from_millis(5000).unwrap() })
    );
    let switches = one.switches().unwrap();
    assert_eq!(switches.iter().map(|s| s.block_id.as_str()).collect::<Vec<_>>(), [ODD_IDS[1], ODD_IDS[6]]);
    let info = one.info().unwrap();
    assert_eq!((info.block_count, info.models.len(), info.title.as_deref()), (13, 2, Some("One")));
    {
        let conn = raw(&path);
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
        assert_eq!(version, 8);
        let mut after = ["sessions", "blobs", "session_embeds", "session_attribution", "bindings"].map(|t| dump(&conn, t));
        // Version 5 adds `origin` to each session, empty for the sessions made here.
        for row in after[0].iter_mut() {
            assert_eq!(row.pop(), Some(rusqlite::types::Value::Null));
        }
        assert_eq!(after, tables_before);
        let store_id: String = conn.query_row("SELECT value FROM store_meta WHERE key = 'store_id'", [], |r| r.get(0)).unwrap();
        assert_eq!(store_id.len(), 32);
        assert_eq!(store_id, store.store_id().unwrap());
        assert_eq!(dump(&conn, "sources"), sources_before);
        // UUID-form ids became 16 bytes, the others stayed text; `seq` still reads as a column.
        let stored: Vec<(i64, String, i64)> = conn
            .prepare("SELECT seq, typeof(id), length(id) FROM blocks WHERE session = 1 ORDER BY seq")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let expected: Vec<(i64, String, i64)> = ODD_IDS
            .iter()
            .enumerate()
            .map(|(i, id)| {
                let canonical = uuid::Uuid::try_parse(id).is_ok_and(|u| u.hyphenated().to_string() == *id);
                (i as i64, if canonical { "blob" } else { "text" }.to_string(), if canonical { 16 } else { id.chars().count() as i64 })
            })
            .collect();
        assert_eq!(stored, expected);
        let indexes: Vec<String> = conn
            .prepare("SELECT name FROM pragma_index_list('blocks') ORDER BY name")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(indexes, ["blocks_session_id"], "the (session, seq) index is gone: the rowid is the position");
        let check: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
        assert_eq!(check, "ok");
        assert!(conn.prepare("PRAGMA foreign_key_check").unwrap().query([]).unwrap().next().unwrap().is_none(), "foreign keys hold");
    }
    // The migrated sessions go on: dense seq, ids unique per session in either form.
    assert_eq!(one.append(Block::text(Actor::User, "after")).unwrap().seq, 13);
    for id in [ODD_IDS[0], ODD_IDS[1], ODD_IDS[10]] {
        let dup = Block { id: id.to_string(), ..Block::text(Actor::User, "dup") };
        assert_eq!(one.append(dup.clone()).unwrap_err().code(), "CONFLICT", "{id}");
        if id != ODD_IDS[1] {
            assert_eq!(two.append(dup).unwrap_err().code(), "CONFLICT", "{id}");
        }
    }
    assert_eq!(two.append(Block { id: ODD_IDS[1].into(), ..Block::text(Actor::User, "new here") }).unwrap().seq, 2);
    store.delete_session("two").unwrap();
    assert_eq!(one.len().unwrap(), 14);
    assert_eq!(one.blocks().unwrap()[..13], blocks[..]);
    // Reopening changes nothing more.
    drop((one, two, store));
    let store = Store::open(&path).unwrap();
    assert_eq!(store.session("one").unwrap().blocks().unwrap()[..13], blocks[..]);
}

/// JSON text of a model type as the store writes its column (serde's form).
fn json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap()
}

on_both_backends! {
    fn block_ids_of_any_form_read_back_as_given_and_stay_unique_per_session(store: Store) {
        let a = store.create_session(NewSession::new().id("a")).unwrap();
        let b = store.create_session(NewSession::new().id("b")).unwrap();
        let blocks: Vec<Block> = ODD_IDS.iter().map(|id| Block { id: id.to_string(), ..Block::text(Actor::User, format!("id {id}")) }).collect();
        let stored = a.extend(blocks.clone()).unwrap();
        assert_eq!(stored.iter().map(|b| b.id.as_str()).collect::<Vec<_>>(), ODD_IDS);
        assert_eq!(a.blocks().unwrap(), stored);
        // The same ids in another session are other blocks.
        b.extend(blocks).unwrap();
        for (i, id) in ODD_IDS.iter().enumerate() {
            assert_eq!(a.block(id).unwrap().seq, i as u64, "{id}");
            let dup = Block { id: id.to_string(), ..Block::text(Actor::User, "again") };
            assert_eq!(a.append(dup).unwrap_err().code(), "CONFLICT", "{id}");
        }
        assert_eq!(a.block("0190a000-0000-7000-8000-000000000002").unwrap_err().code(), "NOT_FOUND");
        assert_eq!(a.len().unwrap(), ODD_IDS.len() as u64);

        // Generated ids: UUIDv7 in the lowercase hyphenated form, each greater than the one before.
        let mut ids = Vec::new();
        for _ in 0..3 {
            let batch = b.extend((0..500).map(|i| Block::text(Actor::Assistant, format!("g{i}")))).unwrap();
            ids.extend(batch.into_iter().map(|b| b.id));
            ids.push(b.append(Block::text(Actor::User, "one")).unwrap().id);
        }
        for pair in ids.windows(2) {
            assert!(pair[0] < pair[1], "{} then {}", pair[0], pair[1]);
        }
        for id in &ids {
            let uuid = uuid::Uuid::parse_str(id).unwrap();
            assert_eq!((uuid.get_version_num(), uuid.hyphenated().to_string()), (7, id.clone()));
        }
        let now_ms = sna_history::Timestamp::now().as_millis() as u64;
        let first = uuid::Uuid::parse_str(&ids[0]).unwrap().get_timestamp().unwrap().to_unix();
        let first_ms = first.0 * 1000 + u64::from(first.1) / 1_000_000;
        assert!(now_ms.abs_diff(first_ms) < 60_000, "the id's time {first_ms} is now ({now_ms})");
    }
}
