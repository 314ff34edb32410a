//! `sna export`: a stored session in a runtime's native shape.

use std::path::PathBuf;

use crate::args::ExportArgs;
use crate::failure::Outcome;
use crate::output::write_native;
use crate::setup::{open, runtime};

pub fn run(args: ExportArgs, db: Option<PathBuf>) -> Outcome {
    let ExportArgs { id, to, output } = args;
    let store = open(db)?;
    let session = store.session(&id)?;
    let rt = runtime(&to.runtime)?;
    write_native(&session, rt, &to.options()?, output.as_deref()).map(drop)
}
