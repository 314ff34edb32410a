//! The row layout of schema v4 (schema/v4.sql), which writing and reading share: a block's rowid
//! (`pk`) is its position, `session << 32 | seq`, so a session's blocks are one range of keys; UUID
//! block ids take 16 bytes. Also how the columns of a block row read back.

use crate::error::{Error, Result};
use crate::model::Timestamp;

use super::db::{Cell, Row};

/// Sessions whose rowid is at least this hold no blocks: a block's rowid is `session << 32 | seq`
/// (schema v4) and must stay positive.
pub(crate) const MAX_SESSION_ROWID: i64 = 1 << 31;

/// A session holds fewer blocks than this (the low 32 bits of a block's rowid are its `seq`).
pub(crate) const MAX_BLOCKS_PER_SESSION: u64 = 1 << 32;

/// The rowid (`pk`) of block `seq` of session `rowid`; a `seq` past the last a session can hold
/// gives the first rowid of the next session, an exclusive bound.
pub(crate) fn block_pk(rowid: i64, seq: u64) -> i64 {
    (rowid << 32) + seq.min(MAX_BLOCKS_PER_SESSION) as i64
}

/// The rowids of the blocks of session `rowid` with `from <= seq < to`: `pk >= .0 AND pk < .1`.
pub(crate) fn pk_range(rowid: i64, from: u64, to: u64) -> (i64, i64) {
    (block_pk(rowid, from), block_pk(rowid, to))
}

/// A block id as schema v4 stores it on SQLite: the 16 bytes of an id in the lowercase hyphenated
/// UUID form (a BLOB), any other id as its text (PostgreSQL keeps every id as text; the dialect
/// binds it, [`super::db::Dialect::block_id`]). A BLOB never equals a TEXT, so the two cannot
/// collide, and [`id_from_column`] gives every id back as it was.
///
/// The 16 bytes are those of `id` when it is a UUID written as `uuid` writes one (36 characters,
/// hyphens at 8, 13, 18 and 23, lowercase hex digits; any version); `None` for any other text.
/// Schema v4's migration applies the same test in SQL.
pub(crate) fn uuid_bytes(id: &str) -> Option<[u8; 16]> {
    let id = id.as_bytes();
    // At 36 characters `uuid` accepts only the hyphenated form; it accepts uppercase digits too.
    if id.len() != 36 || id.iter().any(u8::is_ascii_uppercase) {
        return None;
    }
    uuid::Uuid::try_parse_ascii(id).ok().map(uuid::Uuid::into_bytes)
}

/// A block id read from the `id` column (see [`uuid_bytes`]).
pub(crate) fn id_from_column(value: Cell<'_>) -> Result<String> {
    match value {
        Cell::Blob(bytes) => {
            let bytes: [u8; 16] = bytes.try_into().map_err(|_| Error::Internal(format!("stored block id of {} bytes", bytes.len())))?;
            Ok(uuid::Uuid::from_bytes(bytes).hyphenated().encode_lower(&mut uuid::Uuid::encode_buffer()).to_owned())
        }
        Cell::Text(text) => Ok(text.to_string()),
        _ => Err(Error::Internal("stored block id is neither text nor 16 bytes".into())),
    }
}

/// The columns of a block row, in the order [`super::stored_text::block_from_row`] reads them.
pub(crate) const BLOCK_COLUMNS: &str = "seq, id, actor, kind, content, tool, reasoning, embeds, provider, model_provider, model, \
                             message_id, turn_id, created_at, native";

/// A JSON column read back as `T` (`None` for NULL); unreadable text is an internal error.
pub(crate) fn json_column<T: serde::de::DeserializeOwned>(row: &Row<'_>, index: usize, name: &str) -> Result<Option<T>> {
    match row.opt_text(index).map_err(|_| Error::Internal(format!("stored {name} column is not text")))? {
        None => Ok(None),
        Some(text) => serde_json::from_str(text).map_err(|e| Error::Internal(format!("stored {name} column is corrupt: {e}"))).map(Some),
    }
}

/// A stored time (ms since the epoch).
pub(crate) fn timestamp(ms: i64) -> Result<Timestamp> {
    Timestamp::from_millis(ms).map_err(|_| Error::Internal(format!("stored timestamp {ms} is out of range")))
}
