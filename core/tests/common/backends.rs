//! `on_both_backends!`, for the store tests that hold on either backend. A test file that uses it
//! declares `mod pg` (common/pg.rs) at its root for `--features pg-tests`.

/// `fn name(store) { … }` as module `name` with two tests: `sqlite` (a store in memory) and, with
/// `--features pg-tests`, `postgres` (a PostgreSQL database of its own).
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
                let db = crate::pg::TestDb::new(&tag);
                run(Store::open(&db.url).unwrap())
            }
        }
    };
}
