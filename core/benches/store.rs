//! Store benchmarks against the budgets of docs/design.md §6, each beside a baseline measured in the
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


// ---------------------------------------------------------------------------------------------
// Layout baselines: the rows sna-history writes (every column), written and read with plain
// rusqlite into candidate table layouts, so that each change of layout is a figure of its own.
// Same pragmas as the store (WAL, synchronous = NORMAL); `cache_size` as the store sets it unless
// the variant says otherwise. Run: `cargo bench -p sna-history --bench store -- layout_`.

/// One row as the store writes it: every column, JSON columns already serialized.
struct Row {
    id: String,
    id16: [u8; 16],
    actor: &'static str,
    kind: &'static str,
    content: String,
    tool: Option<String>,
    reasoning: Option<String>,
    embeds: Option<String>,
    provider: Option<String>,
    model_provider: Option<String>,
    model: Option<String>,
    message_id: Option<String>,
    turn_id: Option<String>,
    created_at: i64,
    native: Option<String>,
}

fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap()
}

fn row_of(b: &Block, n: usize) -> Row {
    let id = uuid::Uuid::from_u128(0x0190_a000_0000_7000_8000_0000_0000_0000 | n as u128);
    Row {
        id: id.to_string(),
        id16: *id.as_bytes(),
        actor: b.actor.as_str(),
        kind: b.kind.as_str(),
        content: b.content.clone(),
        tool: b.tool.as_ref().map(json),
        reasoning: b.reasoning.as_ref().map(json),
        embeds: (!b.embeds.is_empty()).then(|| json(&b.embeds)),
        provider: b.provider.clone(),
        model_provider: b.model_provider.clone(),
        model: b.model.clone(),
        message_id: b.message_id.clone(),
        turn_id: b.turn_id.clone(),
        created_at: b.created_at.as_millis(),
        native: b.native.as_ref().map(json),
    }
}

/// How a layout keys a row.
#[derive(Clone, Copy, PartialEq)]
enum Key {
    /// Columns `session`, `seq`, `id` (text or 16 bytes per `id16`).
    Columns,
    /// `pk = session << 32 | seq` is the rowid; columns `session` and `id` (16 bytes).
    Position,
    /// As `Position`, and `idh` = the first 8 bytes of the id as an integer instead of the id.
    PositionHash,
}

struct Layout {
    name: &'static str,
    /// Pragmas set before the table is made (page size) and on every connection.
    pragmas: &'static str,
    ddl: &'static str,
    key: Key,
    id16: bool,
}

const SESSIONS: &str = "CREATE TABLE sessions (rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE);";
const COLS: &str = "actor TEXT NOT NULL, kind TEXT NOT NULL, content TEXT NOT NULL, tool TEXT, reasoning TEXT, embeds TEXT,
    provider TEXT, model_provider TEXT, model TEXT, message_id TEXT, turn_id TEXT, created_at INTEGER NOT NULL, native TEXT";

fn layouts() -> Vec<Layout> {
    let cache = "PRAGMA cache_size = -32768;";
    vec![
        // Schema v1-v3 exactly: rowid pk, FK, two unique indexes, 36-character text ids.
        Layout { name: "v3", pragmas: cache, ddl: "CREATE TABLE blocks (pk INTEGER PRIMARY KEY, session INTEGER NOT NULL REFERENCES sessions(rowid) ON DELETE CASCADE,
            seq INTEGER NOT NULL, id TEXT NOT NULL, {COLS}, UNIQUE (session, seq), UNIQUE (session, id));", key: Key::Columns, id16: false },
        Layout { name: "v3_no_fk", pragmas: cache, ddl: "CREATE TABLE blocks (pk INTEGER PRIMARY KEY, session INTEGER NOT NULL,
            seq INTEGER NOT NULL, id TEXT NOT NULL, {COLS}, UNIQUE (session, seq), UNIQUE (session, id));", key: Key::Columns, id16: false },
        Layout { name: "v3_id16", pragmas: cache, ddl: "CREATE TABLE blocks (pk INTEGER PRIMARY KEY, session INTEGER NOT NULL REFERENCES sessions(rowid) ON DELETE CASCADE,
            seq INTEGER NOT NULL, id BLOB NOT NULL, {COLS}, UNIQUE (session, seq), UNIQUE (session, id));", key: Key::Columns, id16: true },
        Layout { name: "without_rowid_id16", pragmas: cache, ddl: "CREATE TABLE blocks (session INTEGER NOT NULL REFERENCES sessions(rowid) ON DELETE CASCADE,
            seq INTEGER NOT NULL, id BLOB NOT NULL, {COLS}, PRIMARY KEY (session, seq), UNIQUE (session, id)) WITHOUT ROWID;", key: Key::Columns, id16: true },
        // Schema v4 as shipped (pos_rowid_id16_fk with `seq` as a virtual column).
        Layout { name: "v4", pragmas: cache, ddl: "CREATE TABLE blocks (pk INTEGER PRIMARY KEY, session INTEGER NOT NULL REFERENCES sessions(rowid) ON DELETE CASCADE,
            seq INTEGER GENERATED ALWAYS AS (pk & 4294967295) VIRTUAL, id BLOB NOT NULL, {COLS}); CREATE UNIQUE INDEX blocks_session_id ON blocks (session, id);", key: Key::Position, id16: true },
        Layout { name: "pos_rowid_id16_fk", pragmas: cache, ddl: "CREATE TABLE blocks (pk INTEGER PRIMARY KEY, session INTEGER NOT NULL REFERENCES sessions(rowid) ON DELETE CASCADE,
            id BLOB NOT NULL, {COLS}, UNIQUE (session, id));", key: Key::Position, id16: true },
        Layout { name: "pos_rowid_id16", pragmas: cache, ddl: "CREATE TABLE blocks (pk INTEGER PRIMARY KEY, session INTEGER NOT NULL,
            id BLOB NOT NULL, {COLS}, UNIQUE (session, id));", key: Key::Position, id16: true },
        Layout { name: "pos_rowid_idhash", pragmas: cache, ddl: "CREATE TABLE blocks (pk INTEGER PRIMARY KEY, session INTEGER NOT NULL,
            idh INTEGER NOT NULL, {COLS}, UNIQUE (session, idh));", key: Key::PositionHash, id16: true },
        // The floor: one b-tree, no id index at all (not a usable layout: ids would not be unique).
        Layout { name: "pos_rowid_no_id_index", pragmas: cache, ddl: "CREATE TABLE blocks (pk INTEGER PRIMARY KEY, session INTEGER NOT NULL,
            id BLOB NOT NULL, {COLS});", key: Key::Position, id16: true },
        Layout { name: "pos_rowid_id16_page8k", pragmas: "PRAGMA page_size = 8192; PRAGMA cache_size = -32768;", ddl: "CREATE TABLE blocks (pk INTEGER PRIMARY KEY, session INTEGER NOT NULL,
            id BLOB NOT NULL, {COLS}, UNIQUE (session, id));", key: Key::Position, id16: true },
        Layout { name: "pos_rowid_id16_page16k", pragmas: "PRAGMA page_size = 16384; PRAGMA cache_size = -32768;", ddl: "CREATE TABLE blocks (pk INTEGER PRIMARY KEY, session INTEGER NOT NULL,
            id BLOB NOT NULL, {COLS}, UNIQUE (session, id));", key: Key::Position, id16: true },
        Layout { name: "pos_rowid_id16_cache2m", pragmas: "PRAGMA cache_size = -2000;", ddl: "CREATE TABLE blocks (pk INTEGER PRIMARY KEY, session INTEGER NOT NULL,
            id BLOB NOT NULL, {COLS}, UNIQUE (session, id));", key: Key::Position, id16: true },
    ]
}

fn layout_conn(path: &std::path::Path, layout: &Layout) -> Connection {
    let conn = Connection::open(path).unwrap();
    conn.execute_batch(layout.pragmas).unwrap();
    conn.execute_batch("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;").unwrap();
    conn.execute_batch(SESSIONS).unwrap();
    conn.execute_batch(&layout.ddl.replace("{COLS}", COLS)).unwrap();
    conn
}

fn insert_sql(layout: &Layout) -> &'static str {
    match layout.key {
        Key::Columns => "INSERT INTO blocks (session, seq, id, actor, kind, content, tool, reasoning, embeds, provider, model_provider, model, message_id, turn_id, created_at, native)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
        Key::Position => "INSERT INTO blocks (pk, session, id, actor, kind, content, tool, reasoning, embeds, provider, model_provider, model, message_id, turn_id, created_at, native)
            VALUES ((?1 << 32) | ?2, ?1, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
        Key::PositionHash => "INSERT INTO blocks (pk, session, idh, actor, kind, content, tool, reasoning, embeds, provider, model_provider, model, message_id, turn_id, created_at, native)
            VALUES ((?1 << 32) | ?2, ?1, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
    }
}

/// Writes `rows` as session `session` (made here) in one transaction.
fn layout_write(conn: &Connection, layout: &Layout, session: i64, rows: &[Row]) {
    let tx = conn.unchecked_transaction().unwrap();
    tx.execute("INSERT INTO sessions (rowid, id) VALUES (?1, ?2)", params![session, format!("s{session}")]).unwrap();
    {
        let mut stmt = tx.prepare_cached(insert_sql(layout)).unwrap();
        for (seq, r) in rows.iter().enumerate() {
            let id: rusqlite::types::Value = match (layout.key, layout.id16) {
                (Key::PositionHash, _) => rusqlite::types::Value::Integer(i64::from_be_bytes(r.id16[8..].try_into().unwrap())),
                (_, true) => rusqlite::types::Value::Blob(r.id16.to_vec()),
                (_, false) => rusqlite::types::Value::Text(r.id.clone()),
            };
            stmt.execute(params![
                session, seq as i64, id, r.actor, r.kind, r.content, r.tool, r.reasoning, r.embeds, r.provider,
                r.model_provider, r.model, r.message_id, r.turn_id, r.created_at, r.native
            ])
            .unwrap();
        }
    }
    tx.commit().unwrap();
}

type ReadRow = (i64, String, String, String, String, [Option<String>; 8], i64, Option<String>);

/// Reads session `session` whole, in order, every column, ids as strings.
fn layout_read(conn: &Connection, layout: &Layout, session: i64) -> usize {
    let rest = "actor, kind, content, tool, reasoning, embeds, provider, model_provider, model, message_id, turn_id, created_at, native";
    let sql = match layout.key {
        Key::Columns => format!("SELECT seq, id, {rest} FROM blocks WHERE session = ?1 ORDER BY seq"),
        Key::Position | Key::PositionHash => {
            let id = if layout.key == Key::Position { "id" } else { "idh" };
            format!("SELECT pk & 4294967295, {id}, {rest} FROM blocks WHERE pk >= (?1 << 32) AND pk < ((?1 + 1) << 32) ORDER BY pk")
        }
    };
    let mut stmt = conn.prepare_cached(&sql).unwrap();
    let mut rows = stmt.query([session]).unwrap();
    let mut out: Vec<ReadRow> = Vec::new();
    while let Some(r) = rows.next().unwrap() {
        let id = match r.get_ref(1).unwrap() {
            rusqlite::types::ValueRef::Blob(b) => uuid::Uuid::from_slice(b).unwrap().to_string(),
            rusqlite::types::ValueRef::Integer(n) => n.to_string(),
            v => v.as_str().unwrap().to_string(),
        };
        let opt = |i: usize| r.get::<_, Option<String>>(i).unwrap();
        out.push((
            r.get(0).unwrap(),
            id,
            r.get(2).unwrap(),
            r.get(3).unwrap(),
            r.get(4).unwrap(),
            [opt(5), opt(6), opt(7), opt(8), opt(9), opt(10), opt(11), opt(12)],
            r.get(13).unwrap(),
            opt(14),
        ));
    }
    out.len()
}

fn db_bytes(conn: &Connection) -> i64 {
    conn.query_row("SELECT page_count * page_size FROM pragma_page_count, pragma_page_size", [], |r| r.get(0)).unwrap()
}

/// Blocks shaped like a real Claude Code session: the `tools-thinking` fixture imported, its blocks
/// (thinking with signatures, tool calls, outputs up to 57 kB, native passthrough) repeated.
fn real_blocks(n: usize) -> Vec<Block> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/claude-code/tools-thinking/60aa014b-82fa-4f7d-8a5d-270b96a69979.jsonl");
    let store = Store::open_in_memory().unwrap();
    let session = store.import_file(&path, Some(sna_history::Runtime::ClaudeCode), &sna_history::Options::default()).unwrap();
    let fixture = session.blocks().unwrap();
    (0..n)
        .map(|i| {
            let mut b = fixture[i % fixture.len()].clone();
            b.id = String::new();
            b
        })
        .collect()
}

/// Prints the file size per block of the database `conn` holds, for `label`.
fn print_bytes_per_block(conn: &Connection, label: &str) {
    let size = db_bytes(conn);
    let count: i64 = conn.query_row("SELECT count(*) FROM blocks", [], |r| r.get(0)).unwrap();
    if count > 0 {
        eprintln!("layout {label}: {count} blocks, {:.1} bytes per block", size as f64 / count as f64);
    }
}

/// Benches writing `blocks` as one new session per iteration into every layout (ids renumbered
/// per batch), in databases under `dir`; `suffix` tells the blocks apart in the size report.
fn append_each_layout(group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>, dir: &std::path::Path, blocks: &[Block], suffix: &str) {
    for layout in layouts() {
        let conn = layout_conn(&dir.join(format!("{}.db", layout.name)), &layout);
        let mut session = 0;
        let mut base = 0usize;
        group.bench_function(layout.name, |bench| {
            bench.iter_batched(
                || {
                    session += 1;
                    base += blocks.len();
                    (session, blocks.iter().enumerate().map(|(i, b)| row_of(b, base + i)).collect::<Vec<_>>())
                },
                |(session, rows)| layout_write(&conn, &layout, session, &rows),
                BatchSize::PerIteration,
            )
        });
        print_bytes_per_block(&conn, &format!("{}{suffix}", layout.name));
    }
}

fn layout_append(c: &mut Criterion) {
    const N: usize = 10_000;
    let dir = tempfile::tempdir().unwrap();
    let mut group = c.benchmark_group("layout_append_10k");
    group.throughput(Throughput::Elements(N as u64));
    group.sample_size(10);
    let blocks: Vec<Block> = (0..N).map(block).collect();
    append_each_layout(&mut group, dir.path(), &blocks, "");
    group.finish();
}

fn layout_load(c: &mut Criterion) {
    const N: usize = 100_000;
    let dir = tempfile::tempdir().unwrap();
    let mut group = c.benchmark_group("layout_load_100k");
    group.throughput(Throughput::Elements(N as u64));
    group.sample_size(10);
    let rows: Vec<Row> = (0..N).map(|i| row_of(&block(i), i)).collect();
    for layout in layouts() {
        let conn = layout_conn(&dir.path().join(format!("{}.db", layout.name)), &layout);
        layout_write(&conn, &layout, 1, &rows);
        group.bench_function(layout.name, |bench| bench.iter(|| assert_eq!(layout_read(&conn, &layout, 1), N)));
    }
    group.finish();
}

fn layout_append_real(c: &mut Criterion) {
    const N: usize = 2_000;
    let dir = tempfile::tempdir().unwrap();
    let mut group = c.benchmark_group("layout_append_real_2k");
    group.throughput(Throughput::Elements(N as u64));
    group.sample_size(10);
    let blocks = real_blocks(N);
    let bytes: usize = blocks.iter().map(|b| row_of(b, 0)).map(|r| r.content.len() + r.native.map_or(0, |n| n.len())).sum();
    eprintln!("real blocks: {N} blocks, {:.0} bytes of content and native per block", bytes as f64 / N as f64);
    let store = Store::open(dir.path().join("sna.db")).unwrap();
    group.bench_function("sna", |bench| {
        bench.iter_batched(
            || (store.create_session(NewSession::new()).unwrap(), blocks.clone()),
            |(session, blocks)| session.extend(blocks).unwrap(),
            BatchSize::PerIteration,
        )
    });
    drop(store);
    print_bytes_per_block(&Connection::open(dir.path().join("sna.db")).unwrap(), "sna (real)");
    append_each_layout(&mut group, dir.path(), &blocks, " (real)");
    group.finish();
}

/// The layouts and the store side by side, round-robin (each round writes one batch into every
/// layout's database in turn, so that drifts of the machine hit all alike) with databases of equal
/// size: per layout the mean batch time (checkpoints included: every second or third batch of
/// 10k pays one), its median and minimum, the median read of a 100k-block session and the file
/// size per block. Run on demand only: `cargo bench -p sna-history --bench store -- layout_table`
/// (`SNA_LAYOUT_ROUNDS`, default 30; `SNA_LAYOUT_REAL=1` for the fixture-shaped blocks, 2,000 a batch;
/// `SNA_LAYOUTS=v3,v4` for some layouts only).
fn layout_table(_: &mut Criterion) {
    if !std::env::args().any(|a| a.contains("layout_table")) {
        return;
    }
    let rounds: usize = std::env::var("SNA_LAYOUT_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(30);
    let real = std::env::var("SNA_LAYOUT_REAL").is_ok_and(|v| v == "1");
    let (batch, source): (usize, Vec<Block>) = if real { (2_000, real_blocks(2_000)) } else { (10_000, (0..10_000).map(block).collect()) };
    const LOAD: usize = 100_000;
    let load_blocks: Vec<Block> = (0..LOAD).map(|i| source[i % source.len()].clone()).collect();
    let dir = tempfile::tempdir().unwrap();
    let only = std::env::var("SNA_LAYOUTS").unwrap_or_default();
    let layouts: Vec<Layout> = layouts().into_iter().filter(|l| only.is_empty() || only.split(',').any(|n| n == l.name)).collect();
    let store = Store::open(dir.path().join("sna.db")).unwrap();
    let conns: Vec<Connection> = layouts.iter().map(|l| layout_conn(&dir.path().join(format!("{}.db", l.name)), l)).collect();
    // The session read back: 100k blocks, written first.
    let load_session = store.create_session(NewSession::new()).unwrap();
    load_session.extend(load_blocks.clone()).unwrap();
    let load_rows: Vec<Row> = load_blocks.iter().enumerate().map(|(i, b)| row_of(b, i)).collect();
    for (l, conn) in layouts.iter().zip(&conns) {
        layout_write(conn, l, 1, &load_rows);
    }
    drop(load_rows);
    let n = layouts.len() + 1;
    // `SNA_LAYOUT_SNA=0`: the baselines alone (the store's batches change the machine's state for
    // the layouts' batches that follow them, and the reverse: compare separate runs too).
    let with_sna = std::env::var("SNA_LAYOUT_SNA").map_or(true, |v| v != "0");
    let mut write_ms: Vec<Vec<f64>> = vec![Vec::new(); n];
    let mut base = LOAD;
    for round in 0..rounds + 2 {
        // sna first in odd rounds, last in even ones.
        let mut order: Vec<usize> = (0..n).collect();
        if round % 2 == 0 {
            order.rotate_left(1);
        }
        for k in order {
            if k == 0 && !with_sna {
                continue;
            }
            let ms = if k == 0 {
                let session = store.create_session(NewSession::new()).unwrap();
                let blocks = source.clone();
                let t = std::time::Instant::now();
                let stored = session.extend(blocks).unwrap();
                let ms = t.elapsed().as_secs_f64() * 1e3;
                // Dropped untimed, as the baselines' rows are.
                drop(stored);
                ms
            } else {
                let rows: Vec<Row> = source.iter().enumerate().map(|(i, b)| row_of(b, base + i)).collect();
                let t = std::time::Instant::now();
                layout_write(&conns[k - 1], &layouts[k - 1], round as i64 + 2, &rows);
                t.elapsed().as_secs_f64() * 1e3
            };
            if round >= 2 {
                write_ms[k].push(ms);
            }
        }
        base += batch;
    }
    let mut read_ms: Vec<Vec<f64>> = vec![Vec::new(); n];
    for _ in 0..7 {
        for k in 0..n {
            let t = std::time::Instant::now();
            if k == 0 {
                assert_eq!(load_session.blocks().unwrap().len(), LOAD);
            } else {
                assert_eq!(layout_read(&conns[k - 1], &layouts[k - 1], 1), LOAD);
            }
            read_ms[k].push(t.elapsed().as_secs_f64() * 1e3);
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        v[v.len() / 2]
    };
    let blocks_total = (LOAD + rounds * batch) as f64;
    let sna_bytes = {
        let conn = Connection::open(dir.path().join("sna.db")).unwrap();
        db_bytes(&conn)
    };
    eprintln!("{} blocks of {batch} per batch, {rounds} rounds; {} blocks per database", if real { "fixture-shaped" } else { "synthetic" }, blocks_total);
    eprintln!("| layout | batch mean ms | blocks/s | median ms | min ms | read 100k median ms | bytes/block |");
    eprintln!("|---|---|---|---|---|---|---|");
    for k in (if with_sna { 0 } else { 1 })..n {
        let name = if k == 0 { "sna (Store)" } else { layouts[k - 1].name };
        let bytes = if k == 0 { sna_bytes } else { db_bytes(&conns[k - 1]) };
        let min = write_ms[k].iter().cloned().fold(f64::MAX, f64::min);
        let mean = write_ms[k].iter().sum::<f64>() / write_ms[k].len() as f64;
        let w = median(&mut write_ms[k]);
        let r = median(&mut read_ms[k]);
        eprintln!("| {name} | {mean:.1} | {:.0}k | {w:.1} | {min:.1} | {r:.1} | {:.0} |", batch as f64 / mean, bytes as f64 / blocks_total);
    }
}

criterion_group!(benches, append_one, append_batch, load, list_sessions, layout_append, layout_load, layout_append_real, layout_table);
criterion_main!(benches);
