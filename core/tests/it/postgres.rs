//! The store on a real PostgreSQL server (issue 22). `SNA_TEST_POSTGRES_URL` names a server whose
//! user may create databases (`./scripts/test.sh` starts a throwaway one with
//! `scripts/postgres.sh`); each test works in a database of its own, dropped at the end.
//! Built with `--features pg-tests`.

use std::path::Path;

use sna_test_support::fixture;
use sna_history::{Actor, Block, Embed, Error, NewSession, Options, Runtime, Store};

use sna_test_support::TestDb;

#[test]
fn sessions_blocks_embeds_and_bindings_round_trip() {
    let db = TestDb::new("basics");
    let store = Store::open(&db.url).unwrap();
    assert!(store.url().unwrap().starts_with("postgres://127.0.0.1:"), "the URL is kept without its password");
    let session = store.create_session(NewSession::new().id("s1").title("First").cwd("/home/dev/p")).unwrap();
    let png = vec![0x89, b'P', b'N', b'G', 0, 1, 2, 3];
    let mut image = Block::text(Actor::User, "look ![shot](embed://a) \u{0}nul and ünïcode");
    image.embeds.insert("a".into(), Embed::from_bytes("image/png", Some("shot.png".into()), png.clone()));
    let stored = session
        .extend(vec![image, Block::text(Actor::Assistant, "seen").attributed("claude-code", "anthropic", "claude-sonnet-4-5")])
        .unwrap();
    assert_eq!(stored.iter().map(|b| b.seq).collect::<Vec<_>>(), vec![0, 1]);
    let back = session.blocks().unwrap();
    assert_eq!(back, stored.iter().map(|b| Block { embeds: b.embeds.iter().map(|(k, e)| (k.clone(), Embed { data: None, ..e.clone() })).collect(), ..b.clone() }).collect::<Vec<_>>());
    assert_eq!(session.embed("a").unwrap(), png);
    assert_eq!(session.embed_mime("a").unwrap().as_deref(), Some("image/png"));
    assert_eq!(session.block(&stored[1].id).unwrap().content, "seen");
    session.bind(Runtime::ClaudeCode, "native-1", 1).unwrap();
    assert_eq!(session.binding(Runtime::ClaudeCode).unwrap().unwrap().native_id, "native-1");
    let infos = store.sessions().unwrap();
    assert_eq!(infos.len(), 1);
    assert_eq!((infos[0].title.as_deref(), infos[0].block_count), (Some("First"), 2));
    assert_eq!(infos[0].models, vec!["claude-sonnet-4-5".to_string()]);
    assert_eq!(session.switches().unwrap().len(), 1);
    // A duplicate session id is a conflict, as on SQLite.
    assert!(matches!(store.create_session(NewSession::new().id("s1")), Err(Error::Conflict(_))));
    // Reopened: the schema is there and nothing is migrated again.
    drop(store);
    let store = Store::open(&db.url).unwrap();
    assert_eq!(store.session("s1").unwrap().len().unwrap(), 2);
    assert_eq!(store.blob_count().unwrap(), 1);
    store.delete_session("s1").unwrap();
    assert_eq!(store.blob_count().unwrap(), 0, "the last session's embeds are freed");
}

#[test]
fn an_imported_transcript_exports_byte_for_byte() {
    let db = TestDb::new("import");
    let store = Store::open(&db.url).unwrap();
    let file = fixture("claude-code/tools-thinking/60aa014b-82fa-4f7d-8a5d-270b96a69979.jsonl");
    let done = store.import_source(&file, Some(Runtime::ClaudeCode), &Options::default()).unwrap();
    assert!(done.report.entries.is_empty());
    let text = done.session.to_native_text(Runtime::ClaudeCode, &Options::default()).unwrap();
    assert_eq!(text, std::fs::read_to_string(&file).unwrap());
    // Imported again unchanged: decided by the file's look, nothing read.
    assert!(store.source_unchanged(&file).unwrap());
}

/// The URL of `db` with another password.
fn with_password(url: &str, password: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap();
    let (auth, host) = rest.split_once('@').unwrap();
    let user = auth.split(':').next().unwrap();
    format!("{scheme}://{user}:{password}@{host}")
}

#[test]
fn a_wrong_password_and_an_unreachable_server_are_clear_storage_errors_within_seconds() {
    let db = TestDb::new("faults");
    let started = std::time::Instant::now();
    let err = Store::open(with_password(&db.url, "not-the-password")).unwrap_err();
    assert_eq!(err.code().as_str(), "STORAGE");
    let text = err.to_string();
    assert!(text.contains("cannot connect to postgres://127.0.0.1:") && text.contains("password"), "{text}");
    assert!(!text.contains("not-the-password"), "the password is not shown: {text}");
    // A port nothing listens on.
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let err = Store::open(format!("postgres://sna:x@127.0.0.1:{free}/db?sslmode=disable")).unwrap_err();
    assert_eq!(err.code().as_str(), "STORAGE");
    assert!(err.to_string().contains(&format!("127.0.0.1:{free}")), "{err}");
    // A port that accepts and never answers: the connect timeout ends the wait.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let t = std::time::Instant::now();
    let err = Store::open(format!("postgres://sna:x@127.0.0.1:{port}/db?sslmode=disable&connect_timeout=2")).unwrap_err();
    assert_eq!(err.code().as_str(), "STORAGE");
    assert!(t.elapsed() < std::time::Duration::from_secs(10), "gave up after {:?}", t.elapsed());
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    drop(silent);
}

#[test]
fn a_newer_schema_is_refused_untouched_and_a_foreign_sessions_table_too() {
    let db = TestDb::new("schema");
    drop(Store::open(&db.url).unwrap());
    let mut client = postgres::Client::connect(&db.url, postgres::NoTls).unwrap();
    client.batch_execute("UPDATE sna_schema SET version = 99").unwrap();
    let err = Store::open(&db.url).unwrap_err();
    assert_eq!(err.code().as_str(), "SCHEMA_TOO_NEW", "{err}");
    let version: i64 = client.query_one("SELECT version FROM sna_schema", &[]).unwrap().get(0);
    assert_eq!(version, 99, "left untouched");
    let other = TestDb::new("foreign");
    let mut client = postgres::Client::connect(&other.url, postgres::NoTls).unwrap();
    client.batch_execute("CREATE TABLE sessions (x INT)").unwrap();
    let err = Store::open(&other.url).unwrap_err();
    assert_eq!(err.code().as_str(), "INVALID_INPUT", "{err}");
    assert!(err.to_string().contains("did not make"), "{err}");
}

#[test]
fn a_connection_dropped_mid_append_stores_nothing_and_the_next_append_works() {
    let db = TestDb::new("dropped");
    let store = Store::open(&db.url).unwrap();
    let session = store.create_session(NewSession::new().id("s")).unwrap();
    session.append(Block::text(Actor::User, "before")).unwrap();
    // The server ends every connection to this database (as a restart does), then the store tries
    // a batch: it fails with a STORAGE error and stores nothing of it.
    let mut admin = postgres::Client::connect(&db.admin, postgres::NoTls).unwrap();
    admin
        .execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", &[&db.name])
        .unwrap();
    let err = session.extend(vec![Block::text(Actor::User, "lost 1"), Block::text(Actor::User, "lost 2")]).unwrap_err();
    assert_eq!(err.code().as_str(), "STORAGE", "{err}");
    // The next call connects again.
    session.append(Block::text(Actor::User, "after")).unwrap();
    let contents: Vec<String> = session.blocks().unwrap().into_iter().map(|b| b.content).collect();
    assert_eq!(contents, vec!["before", "after"]);
    assert_eq!(session.blocks().unwrap().iter().map(|b| b.seq).collect::<Vec<_>>(), vec![0, 1]);
}

#[test]
fn a_duplicate_block_id_is_a_conflict_naming_the_block_and_the_batch_is_stored_whole_or_not_at_all() {
    let db = TestDb::new("dupes");
    let store = Store::open(&db.url).unwrap();
    let session = store.create_session(NewSession::new().id("s")).unwrap();
    let with_id = |id: &str| Block { id: id.into(), ..Block::text(Actor::User, id) };
    session.extend((0..300).map(|i| with_id(&format!("b{i}")))).unwrap();
    // Against a stored block, past the first multi-row insert of the batch.
    let mut batch: Vec<Block> = (300..600).map(|i| with_id(&format!("b{i}"))).collect();
    batch[280] = with_id("b7");
    let err = session.extend(batch).unwrap_err();
    assert!(matches!(err, Error::Conflict(_)), "{err}");
    assert!(err.to_string().contains("\"b7\" exists already (block 280 of the batch)"), "{err}");
    // Twice in one batch: the second is named.
    let err = session.extend(vec![with_id("x"), with_id("y"), with_id("x")]).unwrap_err();
    assert!(err.to_string().contains("\"x\" exists already (block 2 of the batch)"), "{err}");
    assert_eq!(session.len().unwrap(), 300, "nothing of the failed batches stayed");
    assert_eq!(session.blocks().unwrap().len(), 300);
}

/// A server of this test's own (`scripts/postgres.sh`), stopped and removed when dropped.
struct OwnServer {
    dir: tempfile::TempDir,
    url: String,
}

impl OwnServer {
    fn script(command: &str, dir: &Path) -> String {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/postgres.sh");
        let out = std::process::Command::new("bash").arg(script).arg(command).arg(dir).output().unwrap();
        assert!(out.status.success(), "postgres.sh {command}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    fn start() -> OwnServer {
        let dir = tempfile::Builder::new().prefix("sna-pg-own-").tempdir_in("/tmp").unwrap();
        let url = OwnServer::script("start", dir.path());
        OwnServer { dir, url }
    }
}

impl Drop for OwnServer {
    fn drop(&mut self) {
        OwnServer::script("stop", self.dir.path());
    }
}

#[test]
fn the_server_stopped_mid_append_is_a_storage_error_and_the_next_append_after_its_restart_works() {
    let server = OwnServer::start();
    let store = Store::open(&server.url).unwrap();
    let session = store.create_session(NewSession::new().id("s")).unwrap();
    session.append(Block::text(Actor::User, "before")).unwrap();
    // A batch large enough to be in its transaction when the server goes (about 2 s of inserts).
    let writer = session.clone();
    let batch = std::thread::spawn(move || writer.extend((0..150_000).map(|i| Block::text(Actor::Assistant, format!("lost {i} {}", "x".repeat(100))))));
    let mut admin = postgres::Client::connect(&server.url, postgres::NoTls).unwrap();
    let started = std::time::Instant::now();
    loop {
        let open: i64 = admin
            .query_one("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'sna-history' AND xact_start IS NOT NULL AND query LIKE 'INSERT INTO blocks%'", &[])
            .unwrap()
            .get(0);
        if open > 0 {
            break;
        }
        assert!(!batch.is_finished(), "the batch ended before the server could be stopped under it");
        assert!(started.elapsed().as_secs() < 60);
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    drop(admin);
    OwnServer::script("halt", server.dir.path());
    let err = batch.join().unwrap().unwrap_err();
    assert_eq!(err.code().as_str(), "STORAGE", "{err}");
    assert!(err.to_string().starts_with("cannot append blocks"), "{err}");
    // While it is down: a clear error naming the server, soon.
    let started = std::time::Instant::now();
    let err = session.append(Block::text(Actor::User, "while down")).unwrap_err();
    assert_eq!(err.code().as_str(), "STORAGE", "{err}");
    let port = server.url.rsplit(':').next().unwrap().split('/').next().unwrap();
    assert!(err.to_string().contains(&format!("127.0.0.1:{port}")), "{err}");
    assert!(started.elapsed().as_secs() < 7, "{:?}", started.elapsed());
    // Started again: the next append works, and nothing of the batch was kept.
    assert_eq!(OwnServer::script("resume", server.dir.path()), server.url);
    session.append(Block::text(Actor::User, "after")).unwrap();
    let contents: Vec<String> = session.blocks().unwrap().into_iter().map(|b| b.content).collect();
    assert_eq!(contents, vec!["before", "after"]);
    assert_eq!(store.sessions().unwrap()[0].block_count, 2);
}

#[test]
fn threads_sharing_a_store_use_the_server_at_once_on_at_most_four_connections() {
    let db = TestDb::new("pool");
    let store = Store::open(&db.url).unwrap();
    let held = store.create_session(NewSession::new().id("held")).unwrap();
    let free = store.create_session(NewSession::new().id("free")).unwrap();
    // Another client holds the session row of "held": an append to it waits for the lock.
    let mut other = postgres::Client::connect(&db.url, postgres::NoTls).unwrap();
    let mut lock = other.transaction().unwrap();
    lock.execute("SELECT 1 FROM sessions WHERE id = 'held' FOR UPDATE", &[]).unwrap();
    let blocked = std::thread::spawn(move || held.append(Block::text(Actor::User, "waited")));
    let mut watch = postgres::Client::connect(&db.url, postgres::NoTls).unwrap();
    let ours = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'sna-history'";
    let started = std::time::Instant::now();
    while watch.query_one(&format!("{ours} AND wait_event_type = 'Lock'"), &[]).unwrap().get::<_, i64>(0) == 0 {
        assert!(started.elapsed().as_secs() < 30, "the append never waited on the lock");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    // Meanwhile the same store serves other calls, on another connection.
    free.append(Block::text(Actor::User, "not held up")).unwrap();
    assert_eq!(store.sessions().unwrap().len(), 2);
    assert!(!blocked.is_finished(), "the held append still waits");
    lock.commit().unwrap();
    assert_eq!(blocked.join().unwrap().unwrap().seq, 0);
    // Eight threads at once: every block stored, on no more than four connections.
    let workers: Vec<_> = (0..8)
        .map(|t| {
            let session = free.clone();
            std::thread::spawn(move || {
                for i in 0..25 {
                    session.append(Block::text(Actor::User, format!("{t}-{i}"))).unwrap();
                }
            })
        })
        .collect();
    let mut most = 0;
    while workers.iter().any(|w| !w.is_finished()) {
        most = most.max(watch.query_one(ours, &[]).unwrap().get::<_, i64>(0));
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    workers.into_iter().for_each(|w| w.join().unwrap());
    assert_eq!(free.len().unwrap(), 201);
    assert_eq!(free.blocks().unwrap().iter().map(|b| b.seq).collect::<Vec<_>>(), (0..201).collect::<Vec<_>>());
    assert!((2..=4).contains(&most), "{most} connections");
    // Closed: every connection ends, and calls say CLOSED.
    store.close().unwrap();
    assert_eq!(free.append(Block::text(Actor::User, "late")).unwrap_err().code().as_str(), "CLOSED");
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert_eq!(watch.query_one(ours, &[]).unwrap().get::<_, i64>(0), 0);
}

#[test]
fn a_version_1_database_is_migrated_to_the_current_schema_keeping_its_sessions() {
    let db = TestDb::new("pgv1");
    let mut client = postgres::Client::connect(&db.url, postgres::NoTls).unwrap();
    let v1 = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/schema/pg-v1.sql")).unwrap();
    client.batch_execute(&v1).unwrap();
    client
        .batch_execute(
            "CREATE TABLE sna_schema (version BIGINT NOT NULL, application TEXT NOT NULL);
             INSERT INTO sna_schema VALUES (1, 'sna-history');
             INSERT INTO sessions (id, title, created_at, updated_at, block_count) VALUES ('old', 'Old', 1000, 2000, 1);
             INSERT INTO blocks (pk, session, id, actor, kind, content, created_at)
                 SELECT rowid << 32, rowid, 'b0', 'user', 'text', convert_to('kept', 'UTF8'), 1500 FROM sessions;",
        )
        .unwrap();
    let store = Store::open(&db.url).unwrap();
    let info = store.session("old").unwrap().info().unwrap();
    assert_eq!((info.title.as_deref(), info.block_count, info.origin), (Some("Old"), 1, None));
    assert_eq!(store.session("old").unwrap().blocks().unwrap()[0].content, "kept");
    let version: i64 = client.query_one("SELECT version FROM sna_schema", &[]).unwrap().get(0);
    assert_eq!(version, 4);
    let id = store.store_id().unwrap();
    assert!(id.len() == 32 && id.chars().all(|c| c.is_ascii_hexdigit()), "{id}");
    // Another store's id differs.
    let other = TestDb::new("pgv1b");
    assert_ne!(Store::open(&other.url).unwrap().store_id().unwrap(), id);
}
