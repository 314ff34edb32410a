//! Full-text search (issue 23): the query language, filters, Unicode, the index kept with every
//! append, import, redaction and deletion, and built for stores older than it. Every test runs on
//! SQLite and (`--features pg-tests`) PostgreSQL.

use sna_test_support::fixture;
use sna_history::{Actor, Block, Kind, NewSession, Options, SearchOptions, Store, Timestamp};

use sna_test_support::on_both_backends;

/// (session id, seq) of each hit.
fn found(store: &Store, query: &str, options: &SearchOptions) -> Vec<(String, u64)> {
    let mut hits: Vec<_> = store.search(query, options).unwrap().into_iter().map(|h| (h.session_id, h.seq)).collect();
    hits.sort();
    hits
}

fn at(s: &str, seqs: &[u64]) -> Vec<(String, u64)> {
    seqs.iter().map(|&q| (s.to_string(), q)).collect()
}

fn all() -> SearchOptions {
    SearchOptions::default()
}

/// Two sessions: one in Claude Code, one in Codex, with text of several scripts.
fn corpus(store: &Store) {
    let a = store.create_session(NewSession::new().id("a")).unwrap();
    let when = |day: u32| Timestamp::parse_rfc3339(&format!("2026-11-{day:02}T10:00:00Z")).unwrap();
    let mut blocks = vec![
        Block::text(Actor::User, "How do I handle errors in the Rust parser?"),
        Block::new(Actor::Assistant, Kind::Thinking, "The user wants error handling advice for parsing."),
        Block::text(Actor::Assistant, "Use the ? operator; error handling in Rust is explicit.").attributed("claude-code", "anthropic", "claude-opus-5-5"),
        Block::tool_use("call_1", "Bash", r#"{"command":"cargo build --release"}"#).attributed("claude-code", "anthropic", "claude-opus-5-5"),
        Block::tool_result("call_1", "Compiling parser v0.1.0\nFinished release", false),
        Block::text(Actor::User, "我们讨论了数据库的设计"),
        Block::text(Actor::User, "Le café était crème brûlée, très naïve"),
        Block::text(Actor::User, "ship it 🚀 today"),
        Block::new(Actor::System, Kind::Status, "error handling mode: compact"),
    ];
    for (i, b) in blocks.iter_mut().enumerate() {
        b.created_at = when(1 + i as u32);
    }
    a.extend(blocks).unwrap();
    let b = store.create_session(NewSession::new().id("b")).unwrap();
    let mut blocks = vec![
        Block::text(Actor::User, "parsing JSON with serde"),
        Block::text(Actor::Assistant, "serde_json parses it; tokio is not needed").attributed("codex", "openai", "gpt-5.4"),
        Block::text(Actor::Assistant, "tokio async runtime for the server").attributed("codex", "openai", "gpt-5.4"),
    ];
    for (i, b) in blocks.iter_mut().enumerate() {
        b.created_at = when(20 + i as u32);
    }
    b.extend(blocks).unwrap();
}

on_both_backends! {
    fn words_phrases_prefixes_and_boolean_operators(store: Store) {
        corpus(&store);
        assert_eq!(found(&store, "parser", &all()), at("a", &[0, 4]));
        assert_eq!(found(&store, "\"error handling\"", &all()), at("a", &[1, 2]), "a phrase; bookkeeping left out");
        assert_eq!(found(&store, "handling error", &all()), at("a", &[1, 2]), "words in any order");
        assert_eq!(found(&store, "\"handling error\"", &all()), vec![], "a phrase is in order");
        let mut pars = found(&store, "pars*", &all());
        pars.sort();
        assert_eq!(pars, [at("a", &[0, 1, 4]), at("b", &[0, 1])].concat());
        assert_eq!(found(&store, "tokio NOT async", &all()), at("b", &[1]));
        assert_eq!(found(&store, "tokio AND NOT async", &all()), at("b", &[1]));
        assert_eq!(found(&store, "serde OR cargo", &all()), [at("a", &[3]), at("b", &[0, 1])].concat(), "a tool call's input");
        assert_eq!(found(&store, "(serde OR cargo) json", &all()), at("b", &[0, 1]));
        assert_eq!(found(&store, "bash", &all()), at("a", &[3]), "a tool call by its tool's name");
        assert_eq!(found(&store, "RUST", &all()), at("a", &[0, 2]), "case does not matter");
        let hit = &store.search("\"error handling\"", &all()).unwrap()[0];
        assert!(hit.snippet.contains("«error handling»"), "{}", hit.snippet);
        assert!(hit.score > 0.0);
        assert_eq!(hit.block_id, store.session(&hit.session_id).unwrap().blocks().unwrap()[hit.seq as usize].id);
    }
}

on_both_backends! {
    fn unicode_cjk_accents_and_emoji(store: Store) {
        corpus(&store);
        assert_eq!(found(&store, "数据库", &all()), at("a", &[5]));
        assert_eq!(found(&store, "设计", &all()), at("a", &[5]));
        assert_eq!(found(&store, "数据表", &all()), vec![], "the characters in that order");
        assert_eq!(found(&store, "cafe", &all()), at("a", &[6]), "accents do not matter");
        assert_eq!(found(&store, "CRÈME brulee", &all()), at("a", &[6]));
        assert_eq!(found(&store, "naïve", &all()), at("a", &[6]));
        assert_eq!(found(&store, "🚀", &all()), at("a", &[7]));
        let hit = &store.search("brulee", &all()).unwrap()[0];
        assert!(hit.snippet.contains("«brûlée»"), "the snippet shows the text as written: {}", hit.snippet);
        let hit = &store.search("数据", &all()).unwrap()[0];
        assert!(hit.snippet.contains("«数据»"), "{}", hit.snippet);
    }
}

on_both_backends! {
    fn filters_narrow_the_hits(store: Store) {
        corpus(&store);
        let with = |f: &dyn Fn(&mut SearchOptions)| {
            let mut o = all();
            f(&mut o);
            o
        };
        assert_eq!(found(&store, "tokio OR error", &with(&|o| o.runtime = Some("codex".into()))), at("b", &[1, 2]));
        assert_eq!(found(&store, "error", &with(&|o| o.model = Some("claude-opus-5-5".into()))), at("a", &[2]));
        assert_eq!(found(&store, "pars*", &with(&|o| o.session = Some("b".into()))), at("b", &[0, 1]));
        assert_eq!(found(&store, "pars*", &with(&|o| o.kinds = Some(vec![Kind::Thinking, Kind::ToolResult]))), at("a", &[1, 4]));
        let since = Timestamp::parse_rfc3339("2026-11-02T00:00:00Z").unwrap();
        let until = Timestamp::parse_rfc3339("2026-11-20T00:00:00Z").unwrap();
        assert_eq!(found(&store, "pars*", &with(&|o| { o.since = Some(since); o.until = Some(until); })), at("a", &[1, 4]));
        assert_eq!(found(&store, "\"error handling\"", &with(&|o| o.bookkeeping = true)), at("a", &[1, 2, 8]), "bookkeeping on request");
        assert_eq!(store.search("pars*", &with(&|o| o.limit = 2)).unwrap().len(), 2);
        let err = store.search("x", &with(&|o| o.limit = 0)).unwrap_err();
        assert_eq!(err.location().unwrap().field.as_deref(), Some("limit"));
    }
}

on_both_backends! {
    fn the_index_follows_appends_imports_redaction_and_deletion(store: Store) {
        corpus(&store);
        let a = store.session("a").unwrap();
        a.append(Block::text(Actor::User, "a moment ago: zeppelin")).unwrap();
        assert_eq!(found(&store, "zeppelin", &all()), at("a", &[9]), "found at once");
        let imported = store.import_file(fixture("claude-code/tools-thinking/60aa014b-82fa-4f7d-8a5d-270b96a69979.jsonl"), None, &Options::default()).unwrap();
        let hits = store.search("notes", &SearchOptions { session: Some(imported.id().to_string()), ..all() }).unwrap();
        assert!(!hits.is_empty(), "an imported transcript is searchable");
        // A secret redacted in place is gone from the index too.
        let s = store.create_session(NewSession::new().id("secret")).unwrap();
        s.append(Block::text(Actor::User, "my key is sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")).unwrap();
        assert_eq!(found(&store, "sk* AND key", &SearchOptions { session: Some("secret".into()), ..all() }).len(), 1);
        assert!(!s.redact_in_place().unwrap().entries.is_empty());
        assert_eq!(found(&store, "api03*", &all()), vec![]);
        assert_eq!(found(&store, "redacted", &all()), at("secret", &[0]));
        // A deleted session is gone from the index.
        store.delete_session("a").unwrap();
        assert_eq!(found(&store, "zeppelin OR parser OR 数据库", &all()), vec![]);
        assert_eq!(found(&store, "tokio", &all()), at("b", &[1, 2]));
    }
}

on_both_backends! {
    fn malformed_queries_are_invalid_input_naming_the_problem(store: Store) {
        corpus(&store);
        for (query, says) in [
            ("", "empty"),
            ("\"unclosed", "no closing quote"),
            ("(a OR b", "not closed"),
            ("NOT a", "needs a term before it"),
            ("a OR", "ends where a word was expected"),
            ("* &", "no letters or digits"),
        ] {
            let err = store.search(query, &all()).unwrap_err();
            assert_eq!(err.code().as_str(), "INVALID_INPUT", "{query:?}");
            assert_eq!(err.location().unwrap().field.as_deref(), Some("query"));
            assert!(err.to_string().contains(says), "{query:?}: {err}");
        }
        // What FTS5 or tsquery would take as syntax is only words here.
        assert_eq!(found(&store, "text: NEAR(a b) col:x ^start -minus {x}", &all()), vec![]);
        assert_eq!(found(&store, "'tokio' & !async", &all()), at("b", &[2]), "punctuation is between words: tokio AND async");
    }
}

#[test]
fn an_older_database_gets_its_index_when_opened() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.db");
    {
        let store = Store::open(&path).unwrap();
        corpus(&store);
        let filler = store.create_session(NewSession::new().id("filler")).unwrap();
        filler.extend((0..12_000).map(|i| Block::text(Actor::User, format!("filler {i}")))).unwrap();
    }
    // As a store of schema 5 is after the migration to 6: the index empty, the build pending.
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch("DELETE FROM block_search; INSERT INTO store_meta (key, value) VALUES ('search_index_from', '0');").unwrap();
    drop(conn);
    let store = Store::open(&path).unwrap();
    assert_eq!(found(&store, "数据库", &all()), at("a", &[5]));
    assert_eq!(store.search("filler", &SearchOptions { limit: 10_000, ..all() }).unwrap().len(), 10_000);
    assert_eq!(found(&store, "11999", &all()), at("filler", &[11_999]));
    let left: i64 = rusqlite::Connection::open(&path).unwrap().query_row("SELECT count(*) FROM store_meta WHERE key = 'search_index_from'", [], |r| r.get(0)).unwrap();
    assert_eq!(left, 0, "the build is done");
}

/// A store of schema 7 (the index made with `contentless_delete`, which SQLite before 3.43 cannot
/// read) is moved to an index any SQLite from 3.37 on reads and deletes from, and indexed again.
#[test]
fn a_schema_7_index_is_replaced_by_one_older_sqlite_reads() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.db");
    {
        let store = Store::open(&path).unwrap();
        corpus(&store);
    }
    let conn = rusqlite::Connection::open(&path).unwrap();
    // The index as schema 6 and 7 made it, filled with one row per block as version 7 wrote them.
    conn.execute_batch(
        "DROP TRIGGER blocks_search_delete; DROP TABLE block_search;
         CREATE VIRTUAL TABLE block_search USING fts5(text, tag, content = '', contentless_delete = 1, tokenize = 'ascii');
         CREATE TRIGGER blocks_search_delete AFTER DELETE ON blocks BEGIN DELETE FROM block_search WHERE rowid = old.pk; END;
         INSERT INTO block_search (rowid, text, tag) SELECT pk, 'stale words', '' FROM blocks;
         PRAGMA user_version = 7;",
    )
    .unwrap();
    drop(conn);
    let store = Store::open(&path).unwrap();
    assert_eq!(found(&store, "数据库", &all()), at("a", &[5]), "indexed again from the blocks");
    assert_eq!(found(&store, "stale", &all()), vec![], "nothing of the old index is left");
    store.delete_session("b").unwrap();
    assert_eq!(found(&store, "serde", &all()), vec![]);
    drop(store);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let schema: String = conn.query_row("SELECT group_concat(sql, ';') FROM sqlite_master", [], |r| r.get(0)).unwrap();
    assert!(!schema.contains("contentless_delete"), "{schema}");
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    assert_eq!(version, 8);
}
