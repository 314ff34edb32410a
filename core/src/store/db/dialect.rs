//! What differs between the two databases above the driver: the few statements written two ways,
//! how a block id is bound, how many rows one insert takes, and the full-text index (FTS5 on
//! SQLite, a `tsvector` column on PostgreSQL). The store asks a connection's [`Dialect`] and never
//! which database it is.

use crate::error::Result;
use crate::store::fts;

use super::{Arg, Sql, Tx};

/// Which database a connection talks to; only this folder looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Backend {
    Sqlite,
    // Made only by a PostgreSQL connection: without the `postgres` feature, never.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    Postgres,
}

/// The SQL and operations that differ between SQLite and PostgreSQL ([`Sql::dialect`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Dialect(pub(super) Backend);

/// How many rows one insert writes on PostgreSQL (16 parameters a block row, under its limit of
/// 65,535); each statement is a round trip there. SQLite writes a row per (cached) statement.
const PG_ROWS_PER_INSERT: usize = 256;

impl Dialect {
    /// How block id `id` is bound: on SQLite a UUID as its 16 bytes `uuid` (schema v4), any other
    /// id as its text; on PostgreSQL every id as its text.
    pub(crate) fn block_id<'a>(self, id: &'a str, uuid: Option<&'a [u8; 16]>) -> Arg<'a> {
        match (self.0, uuid) {
            (Backend::Sqlite, Some(bytes)) => Arg::Blob(bytes),
            _ => Arg::Text(id),
        }
    }

    /// How many rows the store gathers into one insert.
    pub(crate) fn rows_per_insert(self) -> usize {
        match self.0 {
            Backend::Sqlite => 1,
            Backend::Postgres => PG_ROWS_PER_INSERT,
        }
    }

    /// The SQL function giving the larger of its arguments.
    pub(crate) fn greatest(self) -> &'static str {
        match self.0 {
            Backend::Sqlite => "max",
            Backend::Postgres => "GREATEST",
        }
    }

    /// ` FOR UPDATE` where the database locks rows read for update (PostgreSQL); SQLite's write
    /// transaction holds the whole database already.
    pub(crate) fn for_update(self) -> &'static str {
        match self.0 {
            Backend::Sqlite => "",
            Backend::Postgres => " FOR UPDATE",
        }
    }

    /// The search index's document for a block's search text ([`crate::model::Block::search_text`])
    /// and its bookkeeping mark: FTS5's indexed text and tag, or a `tsvector` literal and a flag.
    pub(crate) fn search_row(self, text: &str, bookkeeping: bool) -> (String, Arg<'static>) {
        match self.0 {
            Backend::Sqlite => (fts::index_text(text), Arg::Text(if bookkeeping { "bk" } else { "" })),
            Backend::Postgres => (fts::pg_tsvector(text), Arg::Int(i64::from(bookkeeping))),
        }
    }

    /// The insert of `rows` search index rows, each bound as (pk, document, mark).
    pub(crate) fn insert_search_rows(self, rows: usize) -> String {
        let head = match self.0 {
            Backend::Sqlite => "INSERT INTO block_search (rowid, text, tag) VALUES",
            Backend::Postgres => "INSERT INTO block_search (pk, doc, bookkeeping) VALUES",
        };
        let mut sql = String::from(head);
        for r in 0..rows {
            let (pk, doc, mark) = (r * 3 + 1, r * 3 + 2, r * 3 + 3);
            sql.push_str(if r == 0 { " " } else { ", " });
            sql.push_str(&match self.0 {
                Backend::Sqlite => format!("(?{pk}, ?{doc}, ?{mark})"),
                Backend::Postgres => format!("(?{pk}, CAST(CAST(?{doc} AS TEXT) AS tsvector), ?{mark})"),
            });
        }
        sql
    }

    /// Replaces the search index row of block `pk` (a [`Dialect::search_row`]).
    pub(crate) fn replace_search_row(self, tx: &mut Tx<'_>, pk: i64, doc: &str, mark: Arg<'_>) -> Result<()> {
        let context = "cannot index the block";
        match self.0 {
            Backend::Sqlite => {
                tx.exec(context, "DELETE FROM block_search WHERE rowid = ?1", args![pk])?;
                tx.exec(context, &self.insert_search_rows(1), &[Arg::Int(pk), Arg::Text(doc), mark])?;
            }
            Backend::Postgres => {
                tx.exec(
                    context,
                    "INSERT INTO block_search (pk, doc, bookkeeping) VALUES (?1, CAST(CAST(?2 AS TEXT) AS tsvector), ?3)
                     ON CONFLICT (pk) DO UPDATE SET doc = excluded.doc, bookkeeping = excluded.bookkeeping",
                    &[Arg::Int(pk), Arg::Text(doc), mark],
                )?;
            }
        }
        Ok(())
    }

    /// A search: the statement and the text bound to `?1` for `query`. The statement binds `?2` to
    /// `?6` to the filters the store's `filters` clause tests (runtime, model, session, since,
    /// until; `filters` also holds the kinds) and `?7` to the limit, and gives the columns: session
    /// id, seq, block id, actor, kind, provider, model, created_at, content, tool, score (higher is
    /// better). Bookkeeping blocks are left out unless `bookkeeping`. `filtered` is false when no
    /// filter is set: SQLite then ranks the index alone before it reads any block.
    pub(crate) fn search(self, query: &fts::Query, bookkeeping: bool, filtered: bool, filters: &str) -> (String, String) {
        match self.0 {
            Backend::Sqlite => {
                let text = format!("text : ({})", query.fts5());
                let matcher = if bookkeeping { text } else { format!("({text}) NOT (tag : bk)") };
                let sql = if !filtered {
                    // The best rows from the index alone, then only they are read (a word in most
                    // blocks would otherwise read every block it is in).
                    "SELECT s.id, b.seq, b.id, b.actor, b.kind, b.provider, b.model, b.created_at, b.content, b.tool, -f.rank
                     FROM (SELECT rowid AS pk, bm25(block_search) AS rank FROM block_search WHERE block_search MATCH ?1 ORDER BY 2 LIMIT ?7) f
                     JOIN blocks b ON b.pk = f.pk JOIN sessions s ON s.rowid = b.session
                     WHERE ?2 IS NULL AND ?3 IS NULL AND ?4 IS NULL AND ?5 IS NULL AND ?6 IS NULL ORDER BY f.rank, b.pk"
                        .to_string()
                } else {
                    format!(
                        "SELECT s.id, b.seq, b.id, b.actor, b.kind, b.provider, b.model, b.created_at, b.content, b.tool, -bm25(block_search)
                         FROM block_search JOIN blocks b ON b.pk = block_search.rowid JOIN sessions s ON s.rowid = b.session
                         WHERE block_search MATCH ?1 {filters} ORDER BY bm25(block_search), b.pk LIMIT ?7"
                    )
                };
                (sql, matcher)
            }
            Backend::Postgres => (
                format!(
                    "SELECT s.id, b.seq, b.id, b.actor, b.kind, b.provider, b.model, b.created_at, b.content, b.tool,
                            CAST(ts_rank(x.doc, CAST(CAST(?1 AS TEXT) AS tsquery)) AS DOUBLE PRECISION) AS score
                     FROM block_search x JOIN blocks b ON b.pk = x.pk JOIN sessions s ON s.rowid = b.session
                     WHERE x.doc @@ CAST(CAST(?1 AS TEXT) AS tsquery) AND ({} OR NOT x.bookkeeping) {filters}
                     ORDER BY score DESC, b.pk LIMIT ?7",
                    if bookkeeping { "TRUE" } else { "FALSE" }
                ),
                query.tsquery(),
            ),
        }
    }

    /// The query for the mime type the first block of a session (`?1 <= pk < ?2`) gives embed
    /// `embed_id`, and the value it binds to `?3`.
    pub(crate) fn embed_mime(self, embed_id: &str) -> (&'static str, String) {
        match self.0 {
            Backend::Sqlite => (
                "SELECT json_extract(embeds, ?3) FROM blocks
                 WHERE pk >= ?1 AND pk < ?2 AND embeds IS NOT NULL AND json_extract(embeds, ?3) IS NOT NULL ORDER BY pk LIMIT 1",
                format!("$.\"{}\".mime", embed_id.replace('"', "")),
            ),
            Backend::Postgres => (
                "SELECT embeds::jsonb -> ?3 ->> 'mime' FROM blocks
                 WHERE pk >= ?1 AND pk < ?2 AND embeds IS NOT NULL AND embeds::jsonb -> ?3 ->> 'mime' IS NOT NULL ORDER BY pk LIMIT 1",
                embed_id.to_string(),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_rows_are_numbered_in_order() {
        assert_eq!(Dialect(Backend::Sqlite).insert_search_rows(1), "INSERT INTO block_search (rowid, text, tag) VALUES (?1, ?2, ?3)");
        assert_eq!(
            Dialect(Backend::Postgres).insert_search_rows(2),
            "INSERT INTO block_search (pk, doc, bookkeeping) VALUES (?1, CAST(CAST(?2 AS TEXT) AS tsvector), ?3), (?4, CAST(CAST(?5 AS TEXT) AS tsvector), ?6)"
        );
    }
}
