//! `sna report`: what converting a session to a runtime drops, degrades, adds or remaps.

use std::path::PathBuf;

use sna_history::Options;

use crate::args::ReportArgs;
use crate::failure::{Failure, Outcome};
use crate::setup::{open, runtime};
use crate::text::visible;

pub fn run(args: ReportArgs, db: Option<PathBuf>) -> Outcome {
    let ReportArgs { id, to } = args;
    let store = open(db)?;
    let session = store.session(&id)?;
    let rt = runtime(&to.runtime)?;
    let options = Options { strict: false, ..to.options()? };
    let export = session.export(rt, &options)?;
    if export.report.entries.is_empty() {
        println!("lossless: nothing dropped, degraded, added or remapped");
    }
    for entry in &export.report.entries {
        println!("{:<12} {:<38} {}", entry.action, visible(entry.block_id.as_deref().unwrap_or("-")), visible(&entry.message));
    }
    let losses = export.report.entries.iter().filter(|e| e.is_loss()).count();
    if to.strict && losses > 0 {
        return Err(Failure(format!("{losses} conversion losses")));
    }
    Ok(())
}
