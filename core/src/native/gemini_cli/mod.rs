//! Gemini CLI (0.61): the JSONL append log of `~/.gemini/tmp/<project>/chats/session-*.jsonl` and
//! the older single-JSON session file, the Gemini API `contents` a resume sends, and resume.

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::model::{Block, Format, Runtime};
use crate::native::adapter::{Adapter, ImportRun};
use crate::native::types::Options;
use crate::report::ReportEntry;
use crate::store::Session;

/// What a file of this runtime's history is called in messages.
pub(crate) const HISTORY_NAME: &str = "a Gemini CLI session file";

/// The runtime name, as in `native.runtime` and `provider`.
pub const RUNTIME: &str = "gemini-cli";

/// The Gemini CLI adapter.
pub(crate) struct GeminiCli;

impl Adapter for GeminiCli {
    fn runtime(&self) -> Runtime {
        Runtime::GeminiCli
    }

    fn history_name(&self) -> &'static str {
        HISTORY_NAME
    }

    fn program(&self) -> &'static str {
        "gemini"
    }


    fn sniff_record(&self, _record: &Map<String, Value>) -> bool {
        false
    }

    fn import(&self, _run: ImportRun<'_>) -> Result<Session> {
        Err(Error::Unsupported("Gemini CLI import is not written yet".into()))
    }

    fn export(&self, _session: &Session, _blocks: Vec<Block>, _format: Format, _options: &Options, _report: &mut Vec<ReportEntry>) -> Result<Value> {
        Err(Error::Unsupported("Gemini CLI export is not written yet".into()))
    }
}
