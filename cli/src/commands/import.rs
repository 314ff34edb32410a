//! `sna import`: files and directories of the runtimes' history into the store.

use std::path::PathBuf;

use sna_history::Options;

use crate::args::ImportArgs;
use crate::failure::Outcome;
use crate::ingest::import_files;
use crate::setup::{open, runtime};

pub fn run(args: ImportArgs, db: Option<PathBuf>) -> Outcome {
    let ImportArgs { paths, runtime: rt, strict } = args;
    let options = Options { strict, ..Options::default() };
    import_files(&open(db)?, &paths, rt.as_deref().map(runtime).transpose()?, &options, false)
}
