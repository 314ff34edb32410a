//! `sna rm`: delete a session.

use std::path::PathBuf;

use crate::args::RmArgs;
use crate::failure::Outcome;
use crate::setup::open;

pub fn run(args: RmArgs, db: Option<PathBuf>) -> Outcome {
    let RmArgs { id } = args;
    let store = open(db)?;
    store.delete_session(&id)?;
    eprintln!("deleted {id}");
    Ok(())
}
