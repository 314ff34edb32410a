//! `sna ls`: the sessions as a table, or as JSON.

use std::io::Write;
use std::path::PathBuf;

use serde_json::Value;
use sna_history::Store;

use crate::args::LsArgs;
use crate::failure::{Failure, Outcome};
use crate::setup::open;
use crate::text::{clip, visible};

pub fn run(args: LsArgs, db: Option<PathBuf>) -> Outcome {
    list(&open(db)?, args.json)
}

fn list(store: &Store, json: bool) -> Outcome {
    let sessions = store.sessions()?;
    let mut out = std::io::stdout().lock();
    if json {
        let list: Vec<Value> = sessions
            .iter()
            .map(|s| {
                serde_json::json!({
                    "id": s.id, "title": s.title, "cwd": s.cwd, "runtimes": s.providers, "model_providers": s.model_providers,
                    "models": s.models, "blocks": s.block_count, "origin": s.origin, "created_at": s.created_at.to_rfc3339(), "updated_at": s.updated_at.to_rfc3339(),
                })
            })
            .collect();
        writeln!(out, "{}", serde_json::to_string_pretty(&list).map_err(|e| Failure(e.to_string()))?)?;
        return Ok(());
    }
    let rows: Vec<[String; 6]> = sessions
        .iter()
        .map(|s| {
            [
                visible(&s.id).into_owned(),
                clip(s.title.as_deref().unwrap_or(""), 40),
                visible(&s.providers.join(",")).into_owned(),
                clip(&s.models.join(","), 30),
                s.block_count.to_string(),
                s.updated_at.to_rfc3339()[..16].replace('T', " "),
            ]
        })
        .collect();
    let header = ["ID", "TITLE", "RUNTIMES", "MODELS", "BLOCKS", "UPDATED"];
    let mut widths = header.map(|h| h.chars().count());
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: [&str; 6]| -> String {
        cells.iter().zip(widths).map(|(c, w)| format!("{c:<w$}")).collect::<Vec<_>>().join("  ").trim_end().to_string()
    };
    writeln!(out, "{}", line(header))?;
    for row in &rows {
        writeln!(out, "{}", line([&row[0], &row[1], &row[2], &row[3], &row[4], &row[5]]))?;
    }
    Ok(())
}
