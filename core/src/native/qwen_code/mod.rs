//! Qwen Code (0.24): the chat file of `~/.qwen/projects/<cwd folder>/chats/<sessionId>.jsonl`, a
//! Claude-Code-like chain of records (`uuid`, `parentUuid`) around Gemini-shaped messages
//! (`parts`), and resume with `qwen --resume <id>`.
//!
//! Import keeps every line whole with the first block it gives, so that an imported file exports
//! back record for record; a file that grew by whole lines imports by its new lines. Export of
//! blocks from elsewhere writes records the CLI resumes: user, assistant and `tool_result`
//! records chained by `parentUuid`, reasoning as thought parts (opaque reasoning of other
//! vendors left out and reported), Gemini CLI's tool names (the replay rules translate).
//!
//! The files split the jobs: `records` (record kinds, what makes one malformed, model vendors),
//! `import`, `export` (blocks into records), `resume` (the file of a resume) and `compaction`
//! (`chat_compression` records). What the code relies on in the format, and the CLI version it
//! was checked against, is in `FORMAT.md`, included below.
//!
#![doc = include_str!("FORMAT.md")]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::error::Result;
use crate::model::{Block, Format, Runtime};
use crate::native::adapter::{Adapter, Capabilities, Driver, ImportRun, Reported, Resume, ResumeFiles, Sniffers};
use crate::native::live::{Live, LiveSpec, Sink};
use crate::native::splice::Splices;
use crate::native::types::{Options, ResumeOptions};
use crate::report::ReportEntry;
use crate::store::Session;

mod compaction;
mod events;
mod export;
mod import;
mod live;
mod records;
mod resume;

pub use resume::project_folder;

/// What a file of this runtime's history is called in messages.
pub(crate) const HISTORY_NAME: &str = "a Qwen Code chat file";

/// The runtime name, as in `native.runtime` and `provider`.
pub const RUNTIME: &str = "qwen-code";
/// The CLI version the format was verified with.
pub const TARGET_VERSION: &str = "0.24.4";
/// The npm package the CLI comes from.
pub(crate) const NPM_PACKAGE: &str = "@qwen-code/qwen-code";

/// The Qwen Code adapter.
pub(crate) struct QwenCode;

impl Adapter for QwenCode {
    fn runtime(&self) -> Runtime {
        Runtime::QwenCode
    }

    fn history_name(&self) -> &'static str {
        HISTORY_NAME
    }

    fn program(&self) -> &'static str {
        "qwen"
    }

    /// Measured on the 2026-12 fixtures' requests (the system prompt, the tools and the context
    /// parts of the first user message).
    fn harness_bytes(&self) -> (u64, u64) {
        (60_000, 62_000)
    }

    fn compaction_needles(&self) -> &'static [crate::native::adapter::Needle] {
        compaction::NEEDLES
    }

    /// A `chat_compression` record: the history the CLI goes on with.
    fn compaction(&self, window: &[Block]) -> Option<crate::native::adapter::Found> {
        compaction::read(window)
    }

    fn record_key<'b>(&self, block: &'b Block) -> Option<&'b str> {
        compaction::record_key(block)
    }

    /// The chats are written under `QWEN_HOME`, else the HOME the process runs with.
    fn host_resume(&self, resume: &mut ResumeOptions, env: &BTreeMap<String, String>, _program: &Path, _model: Option<&str>) {
        resume.config_dir = env.get("QWEN_HOME").map(PathBuf::from);
        if let Some(home) = env.get("HOME") {
            resume.home = Some(PathBuf::from(home));
        }
    }

    /// Qwen Code resumes by id, from its chat file: the thread goes on while the file is there.
    fn native_thread(&self, env: &BTreeMap<String, String>, native_id: &str) -> Option<Option<PathBuf>> {
        resume::find_chat_file(env, native_id).map(|_| None)
    }

    fn sniffers(&self) -> Sniffers {
        Sniffers::new(sniff_record)
    }

    fn capabilities(&self) -> Capabilities<'_> {
        Capabilities { appends_lines: true, database: None, events: None, stored_text: None, resume: Some(self), driver: Some(self) }
    }

    fn import(&self, run: ImportRun<'_>) -> Result<Session> {
        import::import(run)
    }

    fn export(&self, session: &Session, blocks: Vec<Block>, _format: Format, options: &Options) -> Result<Reported<Value>> {
        let mut report = Vec::new();
        let ctx = export::Context::for_session(session);
        let records = export::records(session, &blocks, options, &ctx, &mut report)?;
        Ok(Reported { value: Value::Array(records), report })
    }
}

/// A record of a Qwen Code chat file (see `records::is_record`).
fn sniff_record(record: &Map<String, Value>) -> bool {
    records::is_record(record)
}

impl Resume for QwenCode {
    fn resume(&self, session: &Session, blocks: Vec<Block>, _splices: Splices, options: &ResumeOptions, _replayed: &[ReportEntry]) -> Result<Reported<ResumeFiles>> {
        resume::resume_files(session, blocks, options)
    }
}

impl Driver for QwenCode {
    fn live(&self, spec: LiveSpec, sink: Sink) -> Result<Box<dyn Live>> {
        live::start(spec, sink)
    }
}
