//! Full-text search over 100,000 blocks (issue 23's budget: a median of 50 ms or less), beside a
//! floor measured in the same run: the same FTS5 match on the same index, read with plain rusqlite
//! (the best 50 rowids, no join, no rows read, no snippet).

use criterion::{criterion_group, criterion_main, Criterion};
use rusqlite::Connection;
use sna_history::{Actor, Block, NewSession, SearchOptions, Store};

const BLOCKS: usize = 100_000;
const SESSIONS: usize = 100;

/// A vocabulary of 4,000 made-up words, used with a skewed frequency: a few words are in most
/// blocks, most words in few.
fn vocabulary() -> Vec<String> {
    let syllables = ["ka", "ro", "mi", "tes", "lun", "dor", "phi", "zen", "qua", "bel", "sor", "vin", "tal", "gre", "nox", "ul"];
    (0..4_000).map(|i| format!("{}{}{}", syllables[i % 16], syllables[(i / 16) % 16], syllables[(i / 256) % 16])).collect()
}

fn text(i: usize, words: &[String]) -> String {
    let mut state = (i as u64).wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    let mut out = String::new();
    for _ in 0..40 {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        // Squared: low indexes (common words) come up far more often.
        let r = ((state >> 33) as f64 / (1u64 << 31) as f64).powi(3);
        out.push_str(&words[(r * words.len() as f64) as usize]);
        out.push(' ');
    }
    if i.is_multiple_of(1_000) {
        out.push_str("the zeppelin landed at dawn");
    }
    out
}

fn search(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("search.db");
    let words = vocabulary();
    {
        let store = Store::open(&path).unwrap();
        for s in 0..SESSIONS {
            let session = store.create_session(NewSession::new()).unwrap();
            let per = BLOCKS / SESSIONS;
            session
                .extend((0..per).map(|k| {
                    let i = s * per + k;
                    let b = Block::text(if i.is_multiple_of(2) { Actor::User } else { Actor::Assistant }, text(i, &words));
                    if i % 2 == 1 {
                        b.attributed("claude-code", "anthropic", "claude-opus-5-5")
                    } else {
                        b
                    }
                }))
                .unwrap();
        }
    }
    let store = Store::open(&path).unwrap();
    let raw = Connection::open(&path).unwrap();
    let options = SearchOptions::default();
    let queries = [
        ("rare_word", words[3_900].clone()),
        ("common_word", words[0].clone()),
        ("phrase", "\"zeppelin landed\"".to_string()),
        ("prefix", format!("{}*", &words[5][..4])),
        ("two_words_or", format!("{} OR {}", words[2_000], words[3_000])),
        ("and_filtered", format!("{} {}", words[1], words[2])),
    ];
    let mut group = c.benchmark_group("search_100k");
    group.sample_size(30);
    for (name, query) in &queries {
        let hits = store.search(query, &options).unwrap().len();
        eprintln!("search_100k/{name}: {query:?} gives {hits} hits (at most 50)");
        group.bench_function(format!("{name}/sna"), |b| b.iter(|| store.search(query, &options).unwrap()));
        // The floor: FTS5 alone on the same index, rowids only.
        let words: Vec<String> = query.split_whitespace().filter(|w| *w != "OR").map(|w| w.trim_matches('"').to_string()).collect();
        let fts = match *name {
            "phrase" => "text : (\"zeppelin landed\")".to_string(),
            "prefix" => format!("text : (\"{}\" *)", words[0].trim_end_matches('*')),
            "two_words_or" => format!("text : (\"{}\" OR \"{}\")", words[0], words[1]),
            "and_filtered" => format!("text : (\"{}\" AND \"{}\")", words[0], words[1]),
            _ => format!("text : (\"{}\")", words[0]),
        };
        let mut stmt = raw.prepare("SELECT rowid FROM block_search WHERE block_search MATCH ?1 ORDER BY bm25(block_search) LIMIT 50").unwrap();
        group.bench_function(format!("{name}/floor_fts5"), |b| {
            b.iter(|| stmt.query_map([&fts], |r| r.get::<_, i64>(0)).unwrap().count())
        });
    }
    group.finish();
}

criterion_group!(benches, search);
criterion_main!(benches);
