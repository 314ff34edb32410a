//! A PostgreSQL database of its own for one test, on the server `SNA_TEST_POSTGRES_URL` names
//! (`./scripts/test.sh` starts a throwaway one with `scripts/postgres.sh`); the test fails, not
//! skips, without it.

#![allow(dead_code)] // each test file uses its part

/// A database of its own for one test, dropped when it goes out of scope.
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

