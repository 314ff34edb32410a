//! SQLite against PostgreSQL in the same run (issue 22): appending one block and a batch of
//! 10,000, loading a 100,000-block session, importing the 50 MB Claude Code transcript of the
//! conversion benchmarks, and full-text search over the 100,000 blocks. The PostgreSQL side runs
//! on the server `SNA_BENCH_POSTGRES_URL` (else `SNA_TEST_POSTGRES_URL`) names, in a database it creates and drops; `scripts/postgres.sh start
//! DIR` starts a throwaway one (no fsync: a floor for the server's own work, not for a disk).
//!
//! `SNA_BENCH_POSTGRES_URL=… cargo bench -p sna-history --bench backends`

mod common;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use sna_history::{Actor, Block, NewSession, Options, Runtime, Store};

fn block(i: usize) -> Block {
    let b = Block::text(if i.is_multiple_of(2) { Actor::User } else { Actor::Assistant }, format!("block {i}: {}", "words ".repeat(16)));
    if i % 2 == 1 { b.attributed("claude-code", "anthropic", "claude-sonnet-4-6") } else { b }
}

fn backends(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let admin = std::env::var("SNA_BENCH_POSTGRES_URL")
        .or_else(|_| std::env::var("SNA_TEST_POSTGRES_URL"))
        .expect("SNA_BENCH_POSTGRES_URL names the PostgreSQL server to measure (scripts/postgres.sh start DIR prints one)");
    let pg = sna_test_support::TestDb::on(admin, "bench");
    let stores = [("sqlite_file", Store::open(dir.path().join("bench.db")).unwrap()), ("postgres", Store::open(&pg.url).unwrap())];

    let mut group = c.benchmark_group("backend_append_one");
    for (name, store) in &stores {
        let session = store.create_session(NewSession::new()).unwrap();
        let mut i = 0;
        group.bench_function(*name, |b| {
            b.iter(|| {
                i += 1;
                session.append(block(i)).unwrap()
            })
        });
    }
    group.finish();

    let mut group = c.benchmark_group("backend_append_batch_10k");
    group.sample_size(10);
    group.throughput(Throughput::Elements(10_000));
    for (name, store) in &stores {
        group.bench_function(*name, |b| {
            b.iter_batched(
                || (store.create_session(NewSession::new()).unwrap(), (0..10_000).map(block).collect::<Vec<_>>()),
                |(session, blocks)| session.extend(blocks).unwrap(),
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();

    let mut group = c.benchmark_group("backend_load_100k");
    group.sample_size(10);
    group.throughput(Throughput::Elements(100_000));
    for (name, store) in &stores {
        let session = store.create_session(NewSession::new()).unwrap();
        for chunk in (0..100_000).collect::<Vec<_>>().chunks(10_000) {
            session.extend(chunk.iter().map(|&i| block(i))).unwrap();
        }
        group.bench_function(*name, |b| b.iter(|| session.blocks().unwrap()));
    }
    group.finish();

    // Each store holds at least the 100,000 blocks just loaded: one word is in every block, a
    // number in one.
    let mut group = c.benchmark_group("backend_search_100k");
    group.sample_size(10);
    for (query, what) in [("54321", "one_block"), ("words", "every_block")] {
        for (name, store) in &stores {
            let options = sna_history::SearchOptions::default();
            assert!(!store.search(query, &options).unwrap().is_empty());
            group.bench_function(format!("{what}/{name}"), |b| b.iter(|| store.search(query, &options).unwrap()));
        }
    }
    group.finish();

    let mb: usize = std::env::var("SNA_BENCH_MB").ok().and_then(|v| v.parse().ok()).unwrap_or(50);
    let (path, _) = common::inputs::claude_code::generate(dir.path(), mb);
    let mut group = c.benchmark_group("backend_import_transcript");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(std::fs::metadata(&path).unwrap().len()));
    for (name, store) in &stores {
        group.bench_function(*name, |b| {
            b.iter(|| {
                let session = store.import_file(&path, Some(Runtime::ClaudeCode), &Options::default()).unwrap();
                store.delete_session(session.id()).unwrap();
            })
        });
    }
    group.finish();
}

criterion_group!(benches, backends);
criterion_main!(benches);
