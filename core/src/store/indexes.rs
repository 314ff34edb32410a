//! The derived indexes the store keeps ([`super::derived`]): the search index and the usage rows.
//! The list the block writer is given, and their building when a store is opened.

use crate::error::Result;

use super::db::{Conn, Tx};
use super::derived::{self, DerivedIndex};
use super::search::SearchIndex;
use super::usage::UsageWriter;
use super::write::BlockWriter;

/// Every derived index, for a writer of the blocks after the `count` a session holds.
fn all(count: u64) -> Vec<Box<dyn DerivedIndex>> {
    vec![Box::new(SearchIndex::default()), Box::new(UsageWriter::new(count))]
}

/// A writer of the blocks after the `count` that session `rowid` holds, keeping every derived
/// index up to date.
pub(super) fn writer<'t, 'c>(tx: &'t mut Tx<'c>, rowid: i64, session_id: &'t str, count: u64) -> Result<BlockWriter<'t, 'c>> {
    BlockWriter::new(tx, rowid, session_id, count, all(count))
}

/// Makes each index's rows for the blocks stored before it existed (nothing once done).
pub(super) fn build_missing(conn: &mut Conn) -> Result<()> {
    for mut index in all(0) {
        derived::build_missing(conn, index.as_mut())?;
    }
    Ok(())
}
