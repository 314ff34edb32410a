//! What the integration tests of the workspace's crates share: where the fixtures are, temporary
//! places, the examples cargo built, a PostgreSQL database of its own per test,
//! [`on_both_backends!`], the soundness check of a database file and files made immutable. Not
//! published; a dev-dependency only.

use std::path::{Path, PathBuf};

pub mod modules;

/// The repository's root (this crate is one folder below it).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("test-support sits in the repository").to_path_buf()
}

/// `tests/fixtures/<rel>`: the transcripts the real runtime CLIs wrote.
pub fn fixture(rel: &str) -> PathBuf {
    repo_root().join("tests/fixtures").join(rel)
}

/// The one file of a fixture folder whose name starts with `prefix` (a scenario's transcript).
pub fn fixture_file(dir: &str, prefix: &str) -> PathBuf {
    let dir = fixture(dir);
    let mut found: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(prefix)))
        .collect();
    found.sort();
    found.into_iter().next().unwrap_or_else(|| panic!("no file starting with {prefix:?} in {}", dir.display()))
}

/// True when the tests run as root (the real user, as `/proc/self/status` gives it): Claude Code
/// refuses to bypass permissions then.
pub fn running_as_root() -> bool {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let uid = status.lines().find_map(|l| l.strip_prefix("Uid:")).and_then(|ids| ids.split_whitespace().next()).expect("the Uid line");
    uid == "0"
}

/// A temporary folder, removed when dropped.
pub fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().expect("a temporary folder")
}

/// An example program of the crate under test: integration tests run from `target/<profile>/deps`,
/// and `cargo test` builds the examples into `target/<profile>/examples` first.
pub fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let path = exe.parent().and_then(Path::parent).expect("target/<profile>/deps").join("examples").join(name);
    assert!(path.exists(), "{} is missing: cargo test builds the examples first", path.display());
    path
}

/// Asserts that the database file at `db` is sound: `PRAGMA integrity_check` is ok, and every
/// session is whole (its recorded count is its number of blocks, and `seq` is dense).
pub fn assert_sound(db: &Path) {
    let conn = rusqlite::Connection::open(db).unwrap_or_else(|e| panic!("{}: {e}", db.display()));
    let ok: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(ok, "ok", "{}", db.display());
    let mut stmt = conn
        .prepare("SELECT s.id, s.block_count, (SELECT count(*) FROM blocks b WHERE b.session = s.rowid), (SELECT coalesce(max(seq) + 1, 0) FROM blocks b WHERE b.session = s.rowid) FROM sessions s")
        .unwrap();
    let rows: Vec<(String, i64, i64, i64)> = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))).unwrap().map(Result::unwrap).collect();
    for (id, count, blocks, dense) in rows {
        assert_eq!((count, dense), (blocks, blocks), "session {id} is partial");
    }
}

/// Files made immutable (`chattr +i`) until the value is dropped: nobody may write them, root
/// included, not even through a descriptor opened before (on the file systems that have the
/// flag: ext4, tmpfs, xfs, btrfs). Needs `CAP_LINUX_IMMUTABLE`, which root has.
#[cfg(target_os = "linux")]
pub struct Immutable(Vec<PathBuf>);

#[cfg(target_os = "linux")]
impl Immutable {
    /// Makes each of `paths` immutable; panics when `chattr` fails.
    pub fn seal<P: AsRef<Path>>(paths: impl IntoIterator<Item = P>) -> Immutable {
        let paths: Vec<PathBuf> = paths.into_iter().map(|p| p.as_ref().to_path_buf()).collect();
        let status = std::process::Command::new("chattr").arg("+i").args(&paths).status().expect("chattr runs");
        let sealed = Immutable(paths);
        assert!(status.success(), "chattr +i {:?}", sealed.0);
        sealed
    }
}

#[cfg(target_os = "linux")]
impl Drop for Immutable {
    fn drop(&mut self) {
        let _ = std::process::Command::new("chattr").arg("-i").args(&self.0).status();
    }
}

/// A PostgreSQL database of its own for one test, on the server `SNA_TEST_POSTGRES_URL` names
/// (`./scripts/test.sh` starts a throwaway one with `scripts/postgres.sh`); the test fails, not
/// skips, without it. Dropped with the value.
pub struct TestDb {
    pub admin: String,
    pub name: String,
    pub url: String,
}

impl TestDb {
    pub fn new(tag: &str) -> TestDb {
        let admin = std::env::var("SNA_TEST_POSTGRES_URL")
            .expect("SNA_TEST_POSTGRES_URL names the PostgreSQL server these tests use (scripts/postgres.sh start DIR prints one)");
        TestDb::on(admin, tag)
    }

    /// A new database on the server `admin` names (its user may create databases).
    pub fn on(admin: String, tag: &str) -> TestDb {
        let name = format!("sna_{tag}_{}", std::process::id());
        let mut client = postgres::Client::connect(&admin, postgres::NoTls).expect("the test server answers");
        client.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).unwrap();
        client.batch_execute(&format!("CREATE DATABASE {name}")).unwrap();
        let (base, query) = admin.split_once('?').map_or((admin.as_str(), ""), |(b, q)| (b, q));
        let base = &base[..base.rfind('/').unwrap()];
        let url = if query.is_empty() { format!("{base}/{name}") } else { format!("{base}/{name}?{query}") };
        TestDb { admin, name, url }
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if let Ok(mut client) = postgres::Client::connect(&self.admin, postgres::NoTls) {
            let _ = client.batch_execute(&format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name));
        }
    }
}

/// `fn name(store: Store) { … }` as module `name` with two tests: `sqlite` (a store in memory) and,
/// when the calling crate is built with its `pg-tests` feature, `postgres` (a database of its own).
/// `Store` is the caller's (`sna_history::Store` in scope).
#[macro_export]
macro_rules! on_both_backends {
    ($(#[$doc:meta])* fn $name:ident($store:ident: Store) $body:block) => {
        $(#[$doc])*
        mod $name {
            use super::*;

            fn run($store: Store) $body

            #[test]
            fn sqlite() {
                run(Store::open_in_memory().unwrap())
            }

            #[cfg(feature = "pg-tests")]
            #[test]
            fn postgres() {
                let tag: String = stringify!($name).chars().take(40).collect();
                let db = $crate::TestDb::new(&tag);
                run(Store::open(&db.url).unwrap())
            }
        }
    };
}
