//! `sna search`: the hits of `Store::search`, a line of where and a line of snippet each, the
//! matches highlighted on a terminal.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use sna_history::{SearchHit, SearchOptions, MATCH_END, MATCH_START};

use crate::args::SearchArgs;
use crate::failure::Outcome;
use crate::setup::open;
use crate::text::visible;

pub fn run(args: SearchArgs, db: Option<PathBuf>) -> Outcome {
    let SearchArgs { query, runtime, model, session, kinds, since, until, limit, bookkeeping, json } = args;
    let time = |text: Option<String>, key: &str| text.map(|t| SearchOptions::time_named(key, &t)).transpose();
    let kinds = SearchOptions::kinds_named(&kinds)?;
    let options = SearchOptions {
        runtime,
        model,
        session,
        kinds: (!kinds.is_empty()).then_some(kinds),
        since: time(since, "since")?,
        until: time(until, "until")?,
        limit: usize::try_from(limit).unwrap_or(usize::MAX),
        bookkeeping,
    };
    let hits = open(db)?.search(&query, &options)?;
    Ok(print(&hits, json, std::io::stdout().is_terminal())?)
}

/// Prints the hits of a search; `color` for a terminal.
fn print(hits: &[SearchHit], json: bool, color: bool) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(hits).map_err(std::io::Error::other)?)?;
        return Ok(());
    }
    for hit in hits {
        writeln!(out, "{}", line(hit, color))?;
        writeln!(out, "    {}", highlight(&visible(&hit.snippet), color))?;
    }
    match hits.first() {
        None => eprintln!("no block matches"),
        Some(first) => eprintln!(
            "{} {}; the context of one: sna show {} --at {}",
            hits.len(),
            if hits.len() == 1 { "hit" } else { "hits" },
            visible(&first.session_id),
            first.seq
        ),
    }
    Ok(())
}

fn line(hit: &SearchHit, color: bool) -> String {
    let when = hit.created_at.to_rfc3339();
    let by = [hit.provider.as_deref(), hit.model.as_deref()].into_iter().flatten().collect::<Vec<_>>().join(" ");
    let text = format!("{} #{}  {}  {} {}  {}", hit.session_id, hit.seq, &when[..16].replace('T', " "), hit.actor, hit.kind, by);
    let text = visible(text.trim_end()).into_owned();
    if color {
        format!("\x1b[2m{text}\x1b[0m")
    } else {
        text
    }
}

/// The snippet with its match marks as bold yellow on a terminal; kept as `«…»` otherwise.
fn highlight(snippet: &str, color: bool) -> String {
    if color {
        snippet.replace(MATCH_START, "\x1b[1;33m").replace(MATCH_END, "\x1b[0m")
    } else {
        snippet.to_string()
    }
}
