//! Tables the store derives from the blocks it holds (the search index, the token usage rows):
//! kept up to date by the block writer, in the transaction that stores the blocks, through one
//! small trait, and made for the blocks stored before such a table existed from a mark that the
//! migration that made it leaves in `store_meta`.

use crate::error::{Error, Result};
use crate::model::Block;

use super::db::{args, Conn, Sql, Tx};

/// A table derived from the blocks. The block writer calls [`DerivedIndex::observe`] for each block
/// it stores and [`DerivedIndex::flush`] once the rows it observed are written; it knows nothing
/// else of the index.
pub(crate) trait DerivedIndex {
    /// What the index is, for errors: "the search index".
    fn name(&self) -> &'static str;

    /// The `store_meta` key that holds the pk to go on from while the rows of blocks stored before
    /// the index existed are still to be made.
    fn mark(&self) -> &'static str;

    /// Notes block `pk` of session `session`, being written in `tx` (its row may be written only
    /// at the next flush).
    fn observe(&mut self, tx: &mut Tx<'_>, session: i64, pk: i64, block: &Block) -> Result<()>;

    /// The rows of every block observed so far are written: writes what the index holds, or keeps
    /// it until `end` (the writer's last flush, the batch complete).
    fn flush(&mut self, tx: &mut Tx<'_>, session: i64, end: bool) -> Result<()>;

    /// Makes the rows of a batch of stored blocks from pk `from` on, in `tx`; gives the pk after
    /// the batch's last block, or `None` once it reached the end.
    fn rebuild(&mut self, tx: &mut Tx<'_>, from: i64) -> Result<Option<i64>>;
}

/// Makes `index`'s rows for the blocks stored before it existed, a batch per transaction, going
/// on from its mark; the mark is deleted at the end. Several processes opening the store at once
/// share the work; nothing to do once the mark is gone.
pub(crate) fn build_missing(conn: &mut Conn, index: &mut dyn DerivedIndex) -> Result<()> {
    let key = index.mark();
    let context = format!("cannot build {}", index.name());
    loop {
        let mut tx = conn.write(&context)?;
        let sql = format!("SELECT value FROM store_meta WHERE key = ?1{}", tx.for_update());
        let Some(from) = tx.first(&context, &sql, args![key], |row| row.string(0))? else {
            return Ok(());
        };
        let from: i64 = from.parse().map_err(|_| Error::Internal(format!("store_meta {key} is {from:?}")))?;
        match index.rebuild(&mut tx, from)? {
            Some(next) => tx.exec(&context, "UPDATE store_meta SET value = ?2 WHERE key = ?1", args![key, &next.to_string()])?,
            None => tx.exec(&context, "DELETE FROM store_meta WHERE key = ?1", args![key])?,
        };
        tx.commit(&context)?;
    }
}
