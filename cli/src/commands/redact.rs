//! `sna redact`: replace the secrets a stored session holds, for good.

use std::path::PathBuf;

use crate::args::RedactArgs;
use crate::failure::{Failure, Outcome};
use crate::setup::open;
use crate::text::visible;

pub fn run(args: RedactArgs, db: Option<PathBuf>) -> Outcome {
    let RedactArgs { id, in_place } = args;
    if !in_place {
        return Err(Failure("sna redact rewrites the stored session for good: say --in-place (sna scan lists what it would replace; --redact on export, view and resume leaves the store as it is)".into()));
    }
    let store = open(db)?;
    let report = store.session(&id)?.redact_in_place()?;
    for entry in &report.entries {
        println!("{:<38} {}", visible(entry.block_id.as_deref().unwrap_or("-")), visible(&entry.message));
    }
    eprintln!("{} blocks redacted", report.entries.len());
    Ok(())
}
