//! `sna acp`: an Agent Client Protocol agent on stdio (`crate::acp`, the `acp` feature). A build
//! without the feature keeps the command and its help, and fails naming the feature.

use std::path::PathBuf;

use crate::args::AcpArgs;
use crate::failure::{Failure, Outcome};

#[cfg(feature = "acp")]
pub fn run(args: AcpArgs, db: Option<PathBuf>) -> Outcome {
    let AcpArgs { runtime: rt, model, permission_mode, bins, home, page_size } = args;
    let (bins, home, db) = crate::setup::host_setup(bins, home, db)?;
    let runtime = rt.as_deref().map(crate::setup::runtime).transpose()?;
    let config = crate::acp::Config { db, runtime, model, bypass: permission_mode == "bypass", bins, home, page: page_size };
    crate::acp::run(config).map_err(Failure)
}

#[cfg(not(feature = "acp"))]
pub fn run(_: AcpArgs, _: Option<PathBuf>) -> Outcome {
    Err(Failure::without_feature("acp"))
}
