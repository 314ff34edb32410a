//! Full-text search over every session's blocks: the index, a [`DerivedIndex`] whose rows are
//! written with each block (in the transaction that stores it) and built for blocks stored before
//! it existed, and the search itself. The text rules are in [`super::fts`], the SQL of each
//! database in [`super::db::Dialect`].

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::json::{null_is_default, options, own_error, own_error_of};
use crate::model::{Actor, Block, Kind, Timestamp};

use super::db::{args, Arg, Conn, Sql, Tx};
use super::derived::DerivedIndex;
use super::fts;
use super::layout::{id_from_column, json_column, timestamp};

/// Most hits one search gives.
pub const MAX_SEARCH_LIMIT: usize = 10_000;

/// Blocks indexed per transaction when an older store's index is built.
const BUILD_BATCH: i64 = 5_000;

/// Options of [`Store::search`](crate::Store::search).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SearchOptions {
    /// Only blocks of this runtime (`provider`).
    pub runtime: Option<String>,
    /// Only blocks of this model.
    pub model: Option<String>,
    /// Only this session.
    pub session: Option<String>,
    /// Only these kinds (all when `None`).
    #[serde(deserialize_with = "kinds")]
    pub kinds: Option<Vec<Kind>>,
    /// Only blocks created at or after this time.
    #[serde(deserialize_with = "time")]
    pub since: Option<Timestamp>,
    /// Only blocks created before this time.
    #[serde(deserialize_with = "time")]
    pub until: Option<Timestamp>,
    /// At most this many hits, best first (1 to [`MAX_SEARCH_LIMIT`]; default 50).
    #[serde(deserialize_with = "limit")]
    pub limit: usize,
    /// Search runtime bookkeeping too ([`Block::is_bookkeeping`]); left out by default.
    #[serde(deserialize_with = "null_is_default")]
    pub bookkeeping: bool,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions { runtime: None, model: None, session: None, kinds: None, since: None, until: None, limit: 50, bookkeeping: false }
    }
}

impl SearchOptions {
    /// The option names [`SearchOptions::from_value`] accepts.
    pub const KEYS: &'static [&'static str] = &["runtime", "model", "session", "kinds", "since", "until", "limit", "bookkeeping"];

    /// Search options from a JSON object (the bindings pass keyword arguments this way): strings or
    /// `null`; `kinds` a list of kind names; `since`/`until` RFC 3339 times, `YYYY-MM-DD` dates (UTC
    /// midnight) or milliseconds since the epoch; `limit` a number; `bookkeeping` a boolean.
    /// Unknown keys and wrong types are `INVALID_INPUT` naming the key.
    pub fn from_value(value: serde_json::Value) -> Result<SearchOptions> {
        options(value, SearchOptions::KEYS)
    }

    /// The kinds of `kinds` from their names (as the CLI and the bindings take them); an unknown
    /// name is `INVALID_INPUT` on the field `kinds`.
    pub fn kinds_named<S: AsRef<str>>(names: &[S]) -> Result<Vec<Kind>> {
        names.iter().map(|name| name.as_ref().parse::<Kind>().map_err(|e| Error::invalid_field("kinds", e.to_string()))).collect()
    }

    /// A `since` or `until` bound (`field`) from text, as [`parse_time`] reads it; a bad one is
    /// `INVALID_INPUT` on that field.
    pub fn time_named(field: &str, text: &str) -> Result<Timestamp> {
        parse_time(text).map_err(|e| Error::invalid_field(field, e))
    }
}

/// `kinds`: a list of kind names, or `null` for every kind.
fn kinds<'de, D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Option<Vec<Kind>>, D::Error> {
    let Some(names) = Option::<Vec<String>>::deserialize(deserializer)? else { return Ok(None) };
    names.iter().map(|name| name.parse::<Kind>().map_err(own_error_of)).collect::<std::result::Result<Vec<_>, _>>().map(Some)
}

/// `since`/`until`: RFC 3339, `YYYY-MM-DD` (UTC midnight) or milliseconds since the epoch.
fn time<'de, D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Option<Timestamp>, D::Error> {
    match serde_json::Value::deserialize(deserializer)? {
        serde_json::Value::Null => Ok(None),
        serde_json::Value::Number(n) => {
            let ms = n.as_i64().ok_or_else(|| own_error("milliseconds since the epoch, a whole number"))?;
            Timestamp::from_millis(ms).map(Some).map_err(|e| own_error(e.to_string()))
        }
        serde_json::Value::String(s) => parse_time(&s).map(Some).map_err(own_error),
        _ => Err(own_error("a time: RFC 3339, YYYY-MM-DD or milliseconds since the epoch")),
    }
}

/// `limit`: a number of hits, or `null` for the default.
fn limit<'de, D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<usize, D::Error> {
    Ok(Option::<u64>::deserialize(deserializer)?.map_or(SearchOptions::default().limit, |limit| usize::try_from(limit).unwrap_or(usize::MAX)))
}

/// A time as a search bound takes it: RFC 3339, or a `YYYY-MM-DD` date (its UTC midnight).
pub fn parse_time(text: &str) -> std::result::Result<Timestamp, String> {
    if let Ok(date) = chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        let midnight = date.and_hms_opt(0, 0, 0).map(|t| t.and_utc());
        return midnight.map(|t| Timestamp::from_datetime(&t)).ok_or_else(|| format!("{text:?} is not a date"));
    }
    Timestamp::parse_rfc3339(text).map_err(|_| format!("{text:?} is neither an RFC 3339 time nor a YYYY-MM-DD date"))
}

/// A block that matched a search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchHit {
    /// The session it is in.
    pub session_id: String,
    /// Its position there.
    pub seq: u64,
    /// Its id.
    pub block_id: String,
    /// Who it is from.
    pub actor: Actor,
    /// What it holds.
    pub kind: Kind,
    /// The runtime that produced it.
    pub provider: Option<String>,
    /// The model.
    pub model: Option<String>,
    /// When it was created.
    pub created_at: Timestamp,
    /// How well it matched: higher is better (SQLite: BM25, PostgreSQL: `ts_rank`; comparable
    /// within one store).
    pub score: f64,
    /// A piece of its text around the first match, each match between `«` and `»`.
    pub snippet: String,
}

/// The search index as the block writer keeps it: a row per block, written after the block rows
/// of each flush, in the same transaction.
#[derive(Default)]
pub(super) struct SearchIndex {
    /// The rows of blocks observed and not written yet: pk, document, bookkeeping mark.
    rows: Vec<(i64, String, Arg<'static>)>,
}

impl DerivedIndex for SearchIndex {
    fn name(&self) -> &'static str {
        "the search index"
    }

    fn mark(&self) -> &'static str {
        "search_index_from"
    }

    fn observe(&mut self, tx: &mut Tx<'_>, _session: i64, pk: i64, block: &Block) -> Result<()> {
        let (doc, mark) = tx.dialect().search_row(&block.search_text(), block.is_bookkeeping());
        self.rows.push((pk, doc, mark));
        Ok(())
    }

    fn flush(&mut self, tx: &mut Tx<'_>, _session: i64, _end: bool) -> Result<()> {
        let dialect = tx.dialect();
        for chunk in std::mem::take(&mut self.rows).chunks(dialect.rows_per_insert()) {
            let mut values: Vec<Arg<'_>> = Vec::with_capacity(chunk.len() * 3);
            for (pk, doc, mark) in chunk {
                values.extend([Arg::Int(*pk), Arg::Text(doc), *mark]);
            }
            // Part of the block writer's append, and said as its errors are.
            tx.exec("cannot append blocks", &dialect.insert_search_rows(chunk.len()), &values)?;
        }
        Ok(())
    }

    /// Indexes a batch of the blocks stored before the index existed (the migration leaves
    /// `search_index_from` in `store_meta`).
    fn rebuild(&mut self, tx: &mut Tx<'_>, from: i64) -> Result<Option<i64>> {
        let rows = tx.all(
            "cannot build the search index",
            "SELECT pk, seq, id, actor, kind, content, tool, native FROM blocks WHERE pk >= ?1 ORDER BY pk LIMIT ?2",
            args![from, BUILD_BATCH],
            |row| {
                let mut block = Block::new(row.text(3)?.parse()?, row.text(4)?.parse()?, row.string(5)?);
                block.seq = row.int(1)? as u64;
                block.id = id_from_column(row.cell(2)?)?;
                block.tool = json_column(row, 6, "tool")?;
                block.native = json_column(row, 7, "native")?;
                Ok((row.int(0)?, block))
            },
        )?;
        for (pk, block) in &rows {
            reindex(tx, *pk, block)?;
        }
        Ok(rows.last().filter(|_| rows.len() as i64 == BUILD_BATCH).map(|(last, _)| last + 1))
    }
}

/// Replaces the index row of block `pk` after its text changed.
pub(super) fn reindex(tx: &mut Tx<'_>, pk: i64, block: &Block) -> Result<()> {
    let dialect = tx.dialect();
    let (doc, mark) = dialect.search_row(&block.search_text(), block.is_bookkeeping());
    dialect.replace_search_row(tx, pk, &doc, mark)
}

/// The query of a search [`super::Store::search`] describes, checked with its options.
pub(super) fn parse(query: &str, options: &SearchOptions) -> Result<fts::Query> {
    let parsed = fts::parse(query)?;
    if options.limit == 0 || options.limit > MAX_SEARCH_LIMIT {
        return Err(Error::invalid_field("limit", format!("a search gives 1 to {MAX_SEARCH_LIMIT} hits")));
    }
    Ok(parsed)
}

/// The hits of `parsed` ([`parse`]) on `conn`, best first.
pub(super) fn run(conn: &mut Conn, parsed: &fts::Query, options: &SearchOptions) -> Result<Vec<SearchHit>> {
    let kinds = match &options.kinds {
        // Kind names are this crate's constants, safe to write into the statement.
        Some(kinds) if kinds.is_empty() => return Ok(Vec::new()),
        Some(kinds) => format!(" AND b.kind IN ({})", kinds.iter().map(|k| format!("'{}'", k.as_str())).collect::<Vec<_>>().join(", ")),
        None => String::new(),
    };
    let filters = format!(
        "AND (CAST(?2 AS TEXT) IS NULL OR b.provider = ?2) AND (CAST(?3 AS TEXT) IS NULL OR b.model = ?3) \
         AND (CAST(?4 AS TEXT) IS NULL OR s.id = ?4) AND (CAST(?5 AS BIGINT) IS NULL OR b.created_at >= ?5) \
         AND (CAST(?6 AS BIGINT) IS NULL OR b.created_at < ?6){kinds}"
    );
    let filtered = options.runtime.is_some()
        || options.model.is_some()
        || options.session.is_some()
        || options.kinds.is_some()
        || options.since.is_some()
        || options.until.is_some();
    let (sql, matcher) = conn.dialect().search(parsed, options.bookkeeping, filtered, &filters);
    let args: [Arg<'_>; 7] = [
        Arg::Text(&matcher),
        options.runtime.as_deref().into(),
        options.model.as_deref().into(),
        options.session.as_deref().into(),
        options.since.map(Timestamp::as_millis).into(),
        options.until.map(Timestamp::as_millis).into(),
        Arg::Int(options.limit as i64),
    ];
    let mut hits = Vec::new();
    conn.each("cannot search", &sql, &args, &mut |row| {
        let mut block = Block::new(row.text(3)?.parse()?, row.text(4)?.parse()?, row.string(8)?);
        block.tool = json_column(row, 9, "tool")?;
        let text = block.search_text();
        let matches = parsed.matches(&text);
        // PostgreSQL keeps word positions up to 16,383: past them a phrase may match where
        // its words are not side by side. A hit must show a match.
        if matches.is_empty() {
            return Ok(());
        }
        hits.push(SearchHit {
            session_id: row.string(0)?,
            seq: row.int(1)? as u64,
            block_id: id_from_column(row.cell(2)?)?,
            actor: block.actor,
            kind: block.kind,
            provider: row.opt_string(5)?,
            model: row.opt_string(6)?,
            created_at: timestamp(row.int(7)?)?,
            score: row.float(10)?,
            snippet: fts::snippet(&text, &matches),
        });
        Ok(())
    })?;
    Ok(hits)
}
