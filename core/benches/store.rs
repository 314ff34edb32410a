//! Store benchmarks against the budgets of DESIGN.md §6, each beside a baseline measured in the
//! same run: the same rows written or read with plain rusqlite, without sna-history's validation,
//! JSON columns and bookkeeping.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use rusqlite::{params, Connection};
use sna_history::{Actor, Block, NewSession, Store};

fn block(i: usize) -> Block {
    let mut b = Block::text(if i.is_multiple_of(2) { Actor::User } else { Actor::Assistant }, format!("message number {i}: {}", "lorem ipsum ".repeat(8)));
    if i % 2 == 1 {
        b = b.attributed("claude-code", "anthropic", "claude-sonnet-4-6");
        b.message_id = Some(format!("msg_{i}"));
    }
    b
}

fn raw_conn(path: &std::path::Path) -> Connection {
    let conn = Connection::open(path).unwrap();
    conn.execute_batch(
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;
         CREATE TABLE IF NOT EXISTS blocks (pk INTEGER PRIMARY KEY, session INTEGER, seq INTEGER, id TEXT, actor TEXT,
           kind TEXT, content TEXT, created_at INTEGER, UNIQUE(session, seq), UNIQUE(session, id));",
    )
    .unwrap();
    conn
}

fn raw_insert(conn: &Connection, seq: usize, b: &Block) {
    conn.prepare_cached("INSERT INTO blocks (session, seq, id, actor, kind, content, created_at) VALUES (1, ?1, ?2, ?3, ?4, ?5, ?6)")
        .unwrap()
        .execute(params![seq as i64, uuid_like(seq), b.actor.as_str(), b.kind.as_str(), b.content, b.created_at.as_millis()])
        .unwrap();
}

fn uuid_like(i: usize) -> String {
    format!("0190a000-0000-7000-8000-{i:012}")
}

fn append_one(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let mut group = c.benchmark_group("append_one_txn");
    group.throughput(Throughput::Elements(1));
    let store = Store::open(dir.path().join("one.db")).unwrap();
    let session = store.create_session(NewSession::new()).unwrap();
    let mut i = 0;
    group.bench_function("sna", |bench| {
        bench.iter(|| {
            session.append(block(i)).unwrap();
            i += 1;
        })
    });
    let conn = raw_conn(&dir.path().join("raw.db"));
    let mut j = 0;
    group.bench_function("baseline_rusqlite", |bench| {
        bench.iter(|| {
            let tx = conn.unchecked_transaction().unwrap();
            raw_insert(&tx, j, &block(j));
            tx.commit().unwrap();
            j += 1;
        })
    });
    group.finish();
}

fn append_batch(c: &mut Criterion) {
    const N: usize = 10_000;
    let dir = tempfile::tempdir().unwrap();
    let mut group = c.benchmark_group("append_batch_10k");
    group.throughput(Throughput::Elements(N as u64));
    group.sample_size(20);
    let store = Store::open(dir.path().join("batch.db")).unwrap();
    group.bench_function("sna", |bench| {
        bench.iter_batched(
            || {
                let session = store.create_session(NewSession::new()).unwrap();
                (session, (0..N).map(block).collect::<Vec<_>>())
            },
            |(session, blocks)| session.extend(blocks).unwrap(),
            BatchSize::PerIteration,
        )
    });
    let conn = raw_conn(&dir.path().join("raw.db"));
    let mut round = 0;
    group.bench_function("baseline_rusqlite", |bench| {
        bench.iter_batched(
            || (0..N).map(block).collect::<Vec<_>>(),
            |blocks| {
                let tx = conn.unchecked_transaction().unwrap();
                for (i, b) in blocks.iter().enumerate() {
                    raw_insert(&tx, round * N + i, b);
                }
                tx.commit().unwrap();
                round += 1;
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

fn load(c: &mut Criterion) {
    const N: usize = 100_000;
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("load.db")).unwrap();
    let session = store.create_session(NewSession::new()).unwrap();
    session.extend((0..N).map(block)).unwrap();
    let conn = raw_conn(&dir.path().join("raw.db"));
    {
        let tx = conn.unchecked_transaction().unwrap();
        for i in 0..N {
            raw_insert(&tx, i, &block(i));
        }
        tx.commit().unwrap();
    }
    let mut group = c.benchmark_group("load_100k");
    group.throughput(Throughput::Elements(N as u64));
    group.sample_size(10);
    group.bench_function("sna", |bench| bench.iter(|| assert_eq!(session.blocks().unwrap().len(), N)));
    group.bench_function("baseline_rusqlite", |bench| {
        bench.iter(|| {
            let mut stmt = conn.prepare_cached("SELECT seq, id, actor, kind, content, created_at FROM blocks WHERE session = 1 ORDER BY seq").unwrap();
            let rows: Vec<(i64, String, String, String, String, i64)> = stmt
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            assert_eq!(rows.len(), N);
        })
    });
    group.finish();
}

fn list_sessions(c: &mut Criterion) {
    const N: usize = 10_000;
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("many.db")).unwrap();
    for i in 0..N {
        let session = store.create_session(NewSession::new().title(format!("session {i}"))).unwrap();
        session.extend([block(0), block(1)]).unwrap();
    }
    let mut group = c.benchmark_group("sessions_10k");
    group.throughput(Throughput::Elements(N as u64));
    group.sample_size(20);
    group.bench_function("sna", |bench| bench.iter(|| assert_eq!(store.sessions().unwrap().len(), N)));
    let conn = Connection::open(dir.path().join("many.db")).unwrap();
    group.bench_function("baseline_rusqlite", |bench| {
        bench.iter(|| {
            let mut stmt = conn.prepare_cached("SELECT id, title, created_at, updated_at, block_count FROM sessions ORDER BY updated_at DESC").unwrap();
            let rows: Vec<(String, Option<String>, i64, i64, i64)> = stmt
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            assert_eq!(rows.len(), N);
        })
    });
    group.finish();
}

criterion_group!(benches, append_one, append_batch, load, list_sessions);
criterion_main!(benches);
