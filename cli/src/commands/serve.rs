//! `sna serve`: the agent HTTP API and the web UI (`crate::serve`, the `serve` feature). A build
//! without the feature keeps the command and its help, and fails naming the feature.

use std::path::PathBuf;

use crate::args::ServeArgs;
use crate::failure::{Failure, Outcome};

#[cfg(feature = "serve")]
pub fn run(args: ServeArgs, db: Option<PathBuf>) -> Outcome {
    let ServeArgs { host, port, token, bins, home, max_body_mib } = args;
    let (runtimes, home, db) = crate::setup::host_setup(bins, home, db)?;
    let config = crate::serve::Config { db, host, port, token, bins: runtimes, home, max_body: max_body_mib.saturating_mul(1 << 20) };
    crate::serve::run(config).map_err(Failure)
}

#[cfg(not(feature = "serve"))]
pub fn run(_: ServeArgs, _: Option<PathBuf>) -> Outcome {
    Err(Failure::without_feature("serve"))
}
