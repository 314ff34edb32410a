//! Pi (0.73): the v3 tree JSONL of `~/.pi/agent/sessions/--<cwd>--/<time>_<id>.jsonl`, and resume.

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::model::{Block, Format, Runtime};
use crate::native::adapter::{Adapter, ImportRun};
use crate::native::types::Options;
use crate::report::ReportEntry;
use crate::store::Session;

/// What a file of this runtime's history is called in messages.
pub(crate) const HISTORY_NAME: &str = "a Pi session file";

/// The runtime name, as in `native.runtime` and `provider`.
pub const RUNTIME: &str = "pi";

/// The Pi adapter.
pub(crate) struct Pi;

impl Adapter for Pi {
    fn runtime(&self) -> Runtime {
        Runtime::Pi
    }

    fn history_name(&self) -> &'static str {
        HISTORY_NAME
    }

    fn program(&self) -> &'static str {
        "pi"
    }


    fn sniff_record(&self, _record: &Map<String, Value>) -> bool {
        false
    }

    fn import(&self, _run: ImportRun<'_>) -> Result<Session> {
        Err(Error::Unsupported("Pi import is not written yet".into()))
    }

    fn export(&self, _session: &Session, _blocks: Vec<Block>, _format: Format, _options: &Options, _report: &mut Vec<ReportEntry>) -> Result<Value> {
        Err(Error::Unsupported("Pi export is not written yet".into()))
    }
}
