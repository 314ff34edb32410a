//! `sna convert`: a native file in another runtime's shape, through an in-memory store.

use std::path::PathBuf;

use sna_history::{Options, Store};

use crate::args::ConvertArgs;
use crate::failure::Outcome;
use crate::output::write_native;
use crate::setup::runtime;
use crate::text::visible;

/// The database (`--db`) is not opened: the conversion happens in memory.
pub fn run(args: ConvertArgs, _db: Option<PathBuf>) -> Outcome {
    let ConvertArgs { file, to, output } = args;
    let store = Store::open_in_memory()?;
    let session = store.import_file(&file, None, &Options::default())?;
    let rt = runtime(&to.runtime)?;
    let report = write_native(&session, rt, &to.options()?, output.as_deref())?;
    for entry in &report.entries {
        eprintln!("sna: {}: {}", entry.action, visible(&entry.message));
    }
    Ok(())
}
