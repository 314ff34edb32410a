//! Native data written where the user asked, shared by `sna export` and `sna convert`: JSONL for
//! transcripts and rollouts, text for the prelude, JSON otherwise.

use std::path::Path;

use sna_history::{Options, Runtime, Session};

use crate::failure::Failure;

/// Writes the session in `rt`'s format to `output` (replaced whole), else to stdout.
pub fn write_native(session: &Session, rt: Runtime, options: &Options, output: Option<&Path>) -> Result<sna_history::Report, Failure> {
    match output {
        Some(path) => Ok(session.export_to_path(path, rt, options)?),
        None => session.export_to(std::io::stdout().lock(), rt, options).map_err(|e| match e {
            // The reader went away (`sna export … | head`): nothing left to say.
            sna_history::Error::Io { source, .. } if source.kind() == std::io::ErrorKind::BrokenPipe => Failure(String::new()),
            e => e.into(),
        }),
    }
}
