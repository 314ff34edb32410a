//! `sna sync`: copy into one store what it lacks from another, and say what was copied.

use std::io::Write;
use std::path::PathBuf;

use sna_history::Store;

use crate::args::SyncArgs;
use crate::failure::{Failure, Outcome};
use crate::setup::open;
use crate::text::visible;

pub fn run(args: SyncArgs, db: Option<PathBuf>) -> Outcome {
    let SyncArgs { from, to, origin, json } = args;
    if from.is_none() && to.is_none() {
        return Err(Failure("sync needs --from or --to (the other one defaults to the database)".into()));
    }
    let from = match from {
        Some(path) => Store::open(path)?,
        None => open(db.clone())?,
    };
    let to = match to {
        Some(path) => Store::open(path)?,
        None => open(db)?,
    };
    sync(&from, &to, origin, json)
}

/// A store as the user named it: its file, or its URL without the password.
fn shown_store(store: &Store) -> String {
    match (store.url(), store.path()) {
        (Some(url), _) => url.to_string(),
        (None, Some(path)) => path.display().to_string(),
        (None, None) => ":memory:".into(),
    }
}

fn sync(from: &Store, to: &Store, origin: Option<String>, json: bool) -> Outcome {
    let report = from.sync_to(to, &sna_history::SyncOptions { origin })?;
    let mut out = std::io::stdout().lock();
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(&report).map_err(|e| Failure(e.to_string()))?)?;
    } else {
        let plural = |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        writeln!(
            out,
            "{} -> {}: {} ({} created, {} extended, {} unchanged), {} copied, {} ({})",
            visible(&shown_store(from)),
            visible(&shown_store(to)),
            plural(report.sessions, "session", "sessions"),
            report.created,
            report.extended,
            report.unchanged,
            plural(report.blocks, "block", "blocks"),
            plural(report.embeds, "embed", "embeds"),
            plural(report.embed_bytes, "byte", "bytes"),
        )?;
        if !report.target_ahead.is_empty() {
            let ids: Vec<_> = report.target_ahead.iter().map(|id| visible(id).into_owned()).collect();
            writeln!(out, "the target holds more blocks of {} (a sync the other way brings them): {}", plural(ids.len() as u64, "session", "sessions"), ids.join(", "))?;
        }
        for c in &report.conflicts {
            writeln!(
                out,
                "conflict: session {} differs from seq {} on (source block {}, target block {}; the source holds {}, the target {}): left as it is on both sides",
                visible(&c.session_id),
                c.seq,
                visible(&c.source_block_id),
                visible(&c.target_block_id),
                plural(c.source_blocks, "block", "blocks"),
                c.target_blocks,
            )?;
        }
    }
    match report.conflicts.len() {
        0 => Ok(()),
        n => Err(Failure(format!(
            "{} histories that differ in the two stores (listed above); nothing of {} was copied",
            if n == 1 { "1 session has".to_string() } else { format!("{n} sessions have") },
            if n == 1 { "it" } else { "them" }
        ))),
    }
}
