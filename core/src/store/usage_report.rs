//! The usage report: what `Store::usage` and `Session::usage` are asked and give, the price table
//! and time zone they use, and the adding up of responses into rows (`store/usage.rs` reads the
//! responses).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::json::{options, own_error_of};
use crate::model::{PriceTable, Runtime, Timestamp, Tokens};

use super::db::{args, Conn, Sql};
use super::layout::pk_range;
use super::{Session, Store};

/// What usage is grouped by.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum UsageBy {
    /// Calendar days in the report's time zone.
    #[default]
    Day,
    /// Weeks from Monday, named by their Monday.
    Week,
    /// Calendar months (`YYYY-MM`).
    Month,
    /// Sessions (their id).
    Session,
    /// Projects: the sessions' working directory.
    Project,
    /// Models.
    Model,
    /// Model vendors (`anthropic`, `openai`, …).
    Provider,
}

impl UsageBy {
    /// Every grouping, in declaration order.
    pub const ALL: &'static [UsageBy] = &[UsageBy::Day, UsageBy::Week, UsageBy::Month, UsageBy::Session, UsageBy::Project, UsageBy::Model, UsageBy::Provider];

    /// Its name.
    pub fn as_str(self) -> &'static str {
        match self {
            UsageBy::Day => "day",
            UsageBy::Week => "week",
            UsageBy::Month => "month",
            UsageBy::Session => "session",
            UsageBy::Project => "project",
            UsageBy::Model => "model",
            UsageBy::Provider => "provider",
        }
    }
}

impl std::str::FromStr for UsageBy {
    type Err = Error;

    fn from_str(s: &str) -> Result<UsageBy> {
        UsageBy::ALL.iter().copied().find(|by| by.as_str() == s).ok_or_else(|| {
            let names: Vec<&str> = UsageBy::ALL.iter().map(|by| by.as_str()).collect();
            Error::invalid_field("by", format!("unknown grouping {s:?} (expected one of: {})", names.join(", ")))
        })
    }
}

/// What [`Store::usage`](crate::Store::usage) reports on.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct UsageOptions {
    /// The grouping (default: by day).
    #[serde(deserialize_with = "grouping")]
    pub by: UsageBy,
    /// From this day (`YYYY-MM-DD`, a calendar day in `tz`) or time (RFC 3339) on.
    pub since: Option<String>,
    /// Up to this day, included (`YYYY-MM-DD`), or before this time (RFC 3339).
    pub until: Option<String>,
    /// Only this runtime's responses (its name, as in `Block::provider`).
    pub runtime: Option<String>,
    /// Only this model's responses.
    pub model: Option<String>,
    /// The IANA time zone days, weeks and months are counted in (`Europe/Paris`, `UTC`); default:
    /// the system's (`TZ` when set).
    pub tz: Option<String>,
    /// A price file read over the shipped table; default: `$XDG_CONFIG_HOME/sna/prices.json`
    /// (`~/.config/sna/prices.json`) when it exists.
    #[serde(deserialize_with = "path")]
    pub prices: Option<PathBuf>,
}

/// `by`: a grouping's name, or `null` for the default.
fn grouping<'de, D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<UsageBy, D::Error> {
    match Option::<String>::deserialize(deserializer)? {
        None => Ok(UsageBy::default()),
        Some(name) => name.parse().map_err(own_error_of),
    }
}

/// A path given as a string.
fn path<'de, D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Option<PathBuf>, D::Error> {
    Ok(Option::<String>::deserialize(deserializer)?.map(PathBuf::from))
}

impl UsageOptions {
    /// The option names [`UsageOptions::from_value`] accepts.
    pub const KEYS: &'static [&'static str] = &["by", "since", "until", "runtime", "model", "tz", "prices"];

    /// Options from a JSON object (what the bindings pass): the keys of [`UsageOptions::KEYS`],
    /// `null` for the default. An unknown key or a wrong type is `INVALID_INPUT` naming it.
    pub fn from_value(value: serde_json::Value) -> Result<UsageOptions> {
        options(value, UsageOptions::KEYS)
    }
}

/// One model's part of a row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelUsage {
    /// The model (`None`: the runtime did not say).
    pub model: Option<String>,
    #[serde(flatten)]
    pub tokens: Tokens,
    /// Input, output, cache reads and cache writes.
    pub total: u64,
    /// USD; `None` when the model has no price (and the runtime reported no cost).
    pub cost_usd: Option<f64>,
    /// Model responses counted.
    pub responses: u64,
}

/// One group of a usage report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UsageRow {
    /// The day (`YYYY-MM-DD`), week (its Monday), month (`YYYY-MM`), session id, project
    /// directory, model or provider; `None` when the runtime did not say (model, provider, project).
    pub key: Option<String>,
    /// By session: the session's title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(flatten)]
    pub tokens: Tokens,
    /// Input, output, cache reads and cache writes.
    pub total: u64,
    /// USD of the priced responses; `None` when none could be priced.
    pub cost_usd: Option<f64>,
    /// Models of the row without a price (their tokens are counted, their cost is not).
    pub unpriced_models: Vec<String>,
    /// Model responses counted.
    pub responses: u64,
    /// The first and last response.
    pub first_at: Timestamp,
    pub last_at: Timestamp,
    /// The row by model, most expensive first.
    pub models: Vec<ModelUsage>,
}

/// Where a report's prices come from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PriceSource {
    /// The shipped table's date.
    pub date: String,
    /// The shipped table's source.
    pub source: String,
    /// The user price files read over it.
    pub files: Vec<String>,
}

/// Token usage and cost, grouped.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UsageReport {
    pub by: UsageBy,
    /// The time zone of days, weeks and months.
    pub tz: String,
    pub rows: Vec<UsageRow>,
    /// Every row together (`key` is `None`).
    pub totals: UsageRow,
    /// Every model without a price.
    pub unpriced_models: Vec<String>,
    pub prices: PriceSource,
}


/// The price table of a report: the shipped one, under `given` or else the user's default file.
pub(super) fn price_table(given: Option<&PathBuf>) -> Result<PriceTable> {
    let mut table = PriceTable::shipped();
    match given {
        Some(path) => table.overlay_file(path)?,
        None => {
            if let Some(file) = crate::model::prices::user_config_file("prices.json") {
                table.overlay_file(&file)?;
            }
        }
    }
    Ok(table)
}

pub(super) fn time_zone(name: Option<&str>) -> Result<(jiff::tz::TimeZone, String)> {
    match name {
        None | Some("local") => {
            let tz = jiff::tz::TimeZone::system();
            let name = tz.iana_name().unwrap_or("local").to_string();
            Ok((tz, name))
        }
        Some(name) => jiff::tz::TimeZone::get(name)
            .map(|tz| (tz, name.to_string()))
            .map_err(|_| Error::invalid_field("tz", format!("unknown time zone {name:?} (an IANA name such as UTC or Europe/Paris)"))),
    }
}

/// `since`/`until` in ms: a date is the start of that day in `tz` (for `until`, of the next day).
pub(super) fn bound(text: &str, field: &str, tz: &jiff::tz::TimeZone, next_day: bool) -> Result<i64> {
    if let Ok(date) = text.parse::<jiff::civil::Date>() {
        if text.len() == 10 {
            let date = if next_day { date.tomorrow().map_err(|e| Error::invalid_field(field, e.to_string()))? } else { date };
            let zoned = date.to_zoned(tz.clone()).map_err(|e| Error::invalid_field(field, e.to_string()))?;
            return Ok(zoned.timestamp().as_millisecond());
        }
    }
    Timestamp::parse_rfc3339(text)
        .map(|t| t.as_millis())
        .map_err(|_| Error::invalid_field(field, format!("{text:?} is neither a YYYY-MM-DD date nor an RFC 3339 time")))
}

/// What responses cost: the runtime's own figure, else by the price table (each model looked up
/// once); `None` when neither.
pub(super) struct Costs<'p, 'r> {
    prices: &'p PriceTable,
    found: std::collections::HashMap<Option<&'r str>, Option<&'p crate::model::Price>>,
}

impl<'p, 'r> Costs<'p, 'r> {
    pub(super) fn new(prices: &'p PriceTable) -> Self {
        Costs { prices, found: std::collections::HashMap::new() }
    }

    pub(super) fn of(&mut self, response: &'r Response) -> Option<f64> {
        if let Some(nano) = response.cost_nano {
            return Some(nano as f64 / 1e9);
        }
        let prices = self.prices;
        let model = response.model.as_deref();
        let price = *self.found.entry(model).or_insert_with(|| model.and_then(|m| prices.price(m)));
        price.map(|p| p.cost(&response.tokens))
    }
}

/// A row being added up; model names borrowed from the responses.
#[derive(Default)]
pub(super) struct Sum<'r> {
    title: Option<&'r str>,
    tokens: Tokens,
    cost: f64,
    priced: bool,
    unpriced: Vec<&'r str>,
    responses: u64,
    first_at: i64,
    last_at: i64,
    models: BTreeMap<Option<&'r str>, (Tokens, f64, bool, u64)>,
}

impl<'r> Sum<'r> {
    pub(super) fn add(&mut self, response: &'r Response, cost: Option<f64>) {
        if self.responses == 0 {
            self.first_at = response.at;
        }
        self.responses += 1;
        self.last_at = self.last_at.max(response.at);
        self.tokens.add(&response.tokens);
        let model = self.models.entry(response.model.as_deref()).or_default();
        model.0.add(&response.tokens);
        model.3 += 1;
        match cost {
            Some(cost) => {
                self.cost += cost;
                self.priced = true;
                model.1 += cost;
                model.2 = true;
            }
            None => {
                let name = response.model.as_deref().unwrap_or("unknown");
                if !self.unpriced.contains(&name) {
                    self.unpriced.push(name);
                }
            }
        }
    }

    pub(super) fn row(self, key: Option<String>) -> UsageRow {
        let mut models: Vec<ModelUsage> = self
            .models
            .into_iter()
            .map(|(model, (tokens, cost, priced, responses))| ModelUsage {
                model: model.map(str::to_string),
                total: tokens.total(),
                tokens,
                cost_usd: priced.then_some(cost),
                responses,
            })
            .collect();
        models.sort_by(|a, b| b.cost_usd.unwrap_or(-1.0).total_cmp(&a.cost_usd.unwrap_or(-1.0)).then(b.total.cmp(&a.total)));
        let mut unpriced: Vec<String> = self.unpriced.into_iter().map(str::to_string).collect();
        unpriced.sort();
        let at = |ms: i64| Timestamp::from_millis(ms).unwrap_or_else(|_| Timestamp::now());
        UsageRow {
            key,
            title: self.title.map(str::to_string),
            total: self.tokens.total(),
            tokens: self.tokens,
            cost_usd: self.priced.then_some(self.cost),
            unpriced_models: unpriced,
            responses: self.responses,
            first_at: at(self.first_at),
            last_at: at(self.last_at),
            models,
        }
    }
}

/// The calendar day of a time in a zone, the last day found kept: responses come in time order,
/// most of them on the day of the one before.
struct Days {
    tz: jiff::tz::TimeZone,
    /// The last day and its bounds in ms, `[start, end)`.
    last: Option<(jiff::civil::Date, i64, i64)>,
}

impl Days {
    fn of(&mut self, ms: i64) -> Option<jiff::civil::Date> {
        if let Some((date, start, end)) = self.last {
            if (start..end).contains(&ms) {
                return Some(date);
            }
        }
        let date = jiff::Timestamp::from_millisecond(ms).ok()?.to_zoned(self.tz.clone()).date();
        let bound = |d: jiff::civil::Date| d.to_zoned(self.tz.clone()).ok().map(|z| z.timestamp().as_millisecond());
        if let (Some(start), Some(end)) = (bound(date), date.tomorrow().ok().and_then(bound)) {
            self.last = Some((date, start, end));
        }
        Some(date)
    }
}

/// What a response is grouped by, borrowed: a calendar day (for days, weeks, months) or a name.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Group<'r> {
    Day(jiff::civil::Date),
    Name(Option<&'r str>),
}

pub(super) fn report(by: UsageBy, tz: jiff::tz::TimeZone, tz_name: String, prices: &PriceTable, responses: Vec<Response>, sessions: &Sessions) -> UsageReport {
    let mut groups: BTreeMap<Group<'_>, Sum<'_>> = BTreeMap::new();
    let mut totals = Sum::default();
    let mut days = Days { tz, last: None };
    let mut costs = Costs::new(prices);
    for response in &responses {
        let cost = costs.of(response);
        let session = sessions.get(&response.session);
        let group = match by {
            UsageBy::Day => days.of(response.at).map_or(Group::Name(None), Group::Day),
            UsageBy::Week => days
                .of(response.at)
                .and_then(|d| d.checked_sub(jiff::Span::new().days(i64::from(d.weekday().to_monday_zero_offset()))).ok())
                .map_or(Group::Name(None), Group::Day),
            UsageBy::Month => days.of(response.at).map_or(Group::Name(None), |d| Group::Day(d.first_of_month())),
            UsageBy::Session => Group::Name(session.map(|s| s.0.as_str())),
            UsageBy::Project => Group::Name(session.and_then(|s| s.1.as_deref())),
            UsageBy::Model => Group::Name(response.model.as_deref()),
            UsageBy::Provider => Group::Name(response.model_provider.as_deref()),
        };
        let sum = groups.entry(group).or_default();
        if by == UsageBy::Session {
            sum.title = session.and_then(|s| s.2.as_deref());
        }
        sum.add(response, cost);
        totals.add(response, cost);
    }
    let label = |group: Group<'_>| match group {
        Group::Day(d) if by == UsageBy::Month => Some(format!("{:04}-{:02}", d.year(), d.month())),
        Group::Day(d) => Some(d.to_string()),
        Group::Name(name) => name.map(str::to_string),
    };
    let mut rows: Vec<UsageRow> = groups.into_iter().map(|(group, sum)| sum.row(label(group))).collect();
    match by {
        UsageBy::Day | UsageBy::Week | UsageBy::Month => {}
        UsageBy::Session => rows.sort_by_key(|row| row.last_at),
        _ => rows.sort_by(|a, b| b.cost_usd.unwrap_or(-1.0).total_cmp(&a.cost_usd.unwrap_or(-1.0)).then(b.total.cmp(&a.total))),
    }
    let totals = totals.row(None);
    UsageReport {
        by,
        tz: tz_name,
        rows,
        unpriced_models: totals.unpriced_models.clone(),
        totals,
        prices: PriceSource::of(prices),
    }
}

impl PriceSource {
    pub(super) fn of(prices: &PriceTable) -> PriceSource {
        PriceSource { date: prices.date.clone(), source: prices.source.clone(), files: prices.files.clone() }
    }
}

/// One model response of a session, as [`Store::usage`](crate::Store::usage) counts it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResponseUsage {
    /// The block that reports it.
    pub seq: u64,
    /// When it was made.
    pub at: Timestamp,
    pub model: Option<String>,
    #[serde(flatten)]
    pub tokens: Tokens,
    /// Input, output, cache reads and cache writes.
    pub total: u64,
    /// USD; `None` when the model has no price (and the runtime reported no cost).
    pub cost_usd: Option<f64>,
}

/// The token usage of one session: each response, and the totals.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionUsage {
    pub responses: Vec<ResponseUsage>,
    /// The session's row of a report by session (`key` is `None`).
    pub totals: UsageRow,
    pub prices: PriceSource,
}

/// One counted response.
pub(super) struct Response {
    pub(super) seq: u64,
    pub(super) at: i64,
    pub(super) model_provider: Option<String>,
    pub(super) model: Option<String>,
    pub(super) tokens: Tokens,
    pub(super) cost_nano: Option<i64>,
    /// The session's rowid.
    pub(super) session: i64,
    /// The block's rowid.
    pub(super) block: i64,
}

/// Which responses to count.
struct Filter<'a> {
    session: Option<i64>,
    since: Option<i64>,
    until: Option<i64>,
    runtime: Option<&'a str>,
    model: Option<&'a str>,
}

/// The responses `filter` selects, oldest first: each response once, however many copies of it
/// the store holds (the largest, a side chain's copy last, else the first stored).
fn responses(conn: &mut Conn, filter: &Filter<'_>) -> Result<Vec<Response>> {
    // The keys written more than once (few), and of each the copies that lose.
    let sql = "WITH copied AS (SELECT dedup FROM usage WHERE dedup IS NOT NULL GROUP BY dedup HAVING count(*) > 1),
              losers AS (
                  SELECT block FROM (
                      SELECT u.block, ROW_NUMBER() OVER (
                          PARTITION BY u.dedup ORDER BY u.sidechain, u.input + u.output + u.cache_read + u.cache_write DESC, u.block) AS n
                      FROM usage u JOIN copied c ON u.dedup = c.dedup) AS ranked
                  WHERE n > 1)
         SELECT u.block, u.at, u.model_provider, u.model, u.input, u.output, u.cache_read, u.cache_write, u.reasoning, u.cost_nano, u.session
         FROM usage u
         WHERE u.block NOT IN (SELECT block FROM losers)
           AND (CAST(?1 AS BIGINT) IS NULL OR u.session = ?1)
           AND (CAST(?2 AS BIGINT) IS NULL OR u.at >= ?2) AND (CAST(?3 AS BIGINT) IS NULL OR u.at < ?3)
           AND (CAST(?4 AS TEXT) IS NULL OR u.runtime = ?4) AND (CAST(?5 AS TEXT) IS NULL OR u.model = ?5)";
    // Read in the table's order and sorted here: ordering by time in the query reads the rows
    // through the time index, one seek each.
    let mut responses = conn.all("cannot read token usage", sql, args![filter.session, filter.since, filter.until, filter.runtime, filter.model], |r| {
        let n = |i: usize| r.int(i).map(|n| n.max(0) as u64);
        Ok(Response {
            seq: (r.int(0)? & 0xffff_ffff) as u64,
            at: r.int(1)?,
            model_provider: r.opt_string(2)?,
            model: r.opt_string(3)?,
            tokens: Tokens { input: n(4)?, output: n(5)?, cache_read: n(6)?, cache_write: n(7)?, reasoning: n(8)? },
            cost_nano: r.opt_int(9)?,
            session: r.int(10)?,
            block: r.int(0)?,
        })
    })?;
    responses.sort_unstable_by_key(|r| (r.at, r.block));
    Ok(responses)
}

/// A session's id, working directory and title, by rowid.
pub(super) type Sessions = std::collections::HashMap<i64, (String, Option<String>, Option<String>)>;

/// The sessions `responses` are in.
fn sessions_of(conn: &mut Conn, responses: &[Response]) -> Result<Sessions> {
    let wanted: std::collections::HashSet<i64> = responses.iter().map(|r| r.session).collect();
    let mut out = Sessions::new();
    conn.each("cannot read token usage", "SELECT rowid, id, cwd, title FROM sessions", &[], &mut |r| {
        let rowid = r.int(0)?;
        if wanted.contains(&rowid) {
            out.insert(rowid, (r.string(1)?, r.opt_string(2)?, r.opt_string(3)?));
        }
        Ok(())
    })?;
    Ok(out)
}

/// [`super::Store::usage`] of `store`.
pub(crate) fn store_usage(store: &Store, options: &UsageOptions) -> Result<UsageReport> {
    let (tz, tz_name) = time_zone(options.tz.as_deref())?;
    let since = options.since.as_deref().map(|t| bound(t, "since", &tz, false)).transpose()?;
    let until = options.until.as_deref().map(|t| bound(t, "until", &tz, true)).transpose()?;
    if let Some(runtime) = &options.runtime {
        runtime.parse::<Runtime>().map_err(|e| Error::invalid_field("runtime", e.to_string()))?;
    }
    let prices = price_table(options.prices.as_ref())?;
    let filter = Filter { session: None, since, until, runtime: options.runtime.as_deref(), model: options.model.as_deref() };
    let (responses, sessions) = store.with_conn(|conn| {
        let responses = responses(conn, &filter)?;
        let sessions = sessions_of(conn, &responses)?;
        Ok((responses, sessions))
    })?;
    Ok(report(options.by, tz, tz_name, &prices, responses, &sessions))
}

/// [`super::Session::usage`] of `session`.
pub(crate) fn session_usage(session: &Session, prices: Option<&Path>) -> Result<SessionUsage> {
    let prices = price_table(prices.map(Path::to_path_buf).as_ref())?;
    let filter = Filter { session: Some(session.rowid), since: None, until: None, runtime: None, model: None };
    let responses = session.store.with_conn(|conn| responses(conn, &filter))?;
    let mut totals = Sum::default();
    let mut costs = Costs::new(&prices);
    let mut out = Vec::with_capacity(responses.len());
    for response in &responses {
        let cost = costs.of(response);
        totals.add(response, cost);
        out.push(ResponseUsage {
            seq: response.seq,
            at: Timestamp::from_millis(response.at).unwrap_or_else(|_| Timestamp::now()),
            model: response.model.clone(),
            total: response.tokens.total(),
            tokens: response.tokens,
            cost_usd: cost,
        });
    }
    Ok(SessionUsage { responses: out, totals: totals.row(None), prices: PriceSource::of(&prices) })
}

/// [`super::Session::reported_prompts`] of `session`.
pub(super) fn reported_prompts(session: &Session, from: u64) -> Result<Vec<(u64, String, u64)>> {
    let (lo, hi) = pk_range(session.rowid, from, u64::MAX);
    session.store.with_conn(|conn| {
        let mut out = Vec::new();
        conn.each(
            "cannot read token usage",
            "SELECT block, runtime, input + cache_read + cache_write FROM usage WHERE block >= ?1 AND block < ?2 AND sidechain = 0 ORDER BY block",
            args![lo, hi],
            &mut |row| {
                let seq = (row.int(0)? - lo) as u64 + from;
                out.push((seq, row.string(1)?, row.int(2)?.max(0) as u64));
                Ok(())
            },
        )?;
        Ok(out)
    })
}
