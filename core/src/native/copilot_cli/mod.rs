//! GitHub Copilot CLI (1.0): the session log `~/.copilot/session-state/<sessionId>/events.jsonl`,
//! a chain of typed events (`id`, `parentId`), and resume with `copilot --resume <id>`.
//!
//! Import keeps every event whole with the first block it gives, so that an imported log exports
//! back event for event; a log that grew by whole lines imports by its new lines. Export of blocks
//! from elsewhere writes the events the CLI rebuilds its conversation from (`session.start`,
//! `user.message`, `assistant.message` with tool requests and provider-tagged thinking,
//! `tool.execution_complete`). The store-wide `session-store.db` is an index the CLI derives:
//! neither read nor written.
//!
//! The files split the jobs: `records` (what an event is, what the CLI only prints), `import`,
//! `export` (blocks into events), `resume` (the log of a resume) and `compaction`
//! (`session.compaction_complete`). What the code relies on in the format, and the CLI version it
//! was checked against, is in `FORMAT.md`, included below.
//!
#![doc = include_str!("FORMAT.md")]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::error::Result;
use crate::model::{Actor, Block, Format, Kind, Runtime};
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

/// What a file of this runtime's history is called in messages.
pub(crate) const HISTORY_NAME: &str = "a Copilot CLI session log";

/// The runtime name, as in `native.runtime` and `provider`.
pub const RUNTIME: &str = "copilot-cli";
/// The CLI version the format was verified with.
pub const TARGET_VERSION: &str = "1.0.102";
/// The npm package the CLI comes from.
pub(crate) const NPM_PACKAGE: &str = "@github/copilot";

/// The Copilot CLI adapter.
pub(crate) struct CopilotCli;

impl Adapter for CopilotCli {
    fn runtime(&self) -> Runtime {
        Runtime::CopilotCli
    }

    fn history_name(&self) -> &'static str {
        HISTORY_NAME
    }

    fn program(&self) -> &'static str {
        "copilot"
    }

    /// Measured on the 2026-12 fixtures' requests (the system prompt and the tools).
    fn harness_bytes(&self) -> (u64, u64) {
        (48_000, 49_000)
    }

    /// The user message's `<current_datetime>` prefix is added by the CLI for every message it
    /// sends and is kept only in `transformedContent`: nothing of the harness becomes a block but
    /// the status blocks of `system.message`.
    fn is_harness(&self, block: &Block) -> bool {
        block.actor == Actor::System && block.kind == Kind::Status && block.content == "system.message"
    }

    fn compaction_needles(&self) -> &'static [crate::native::adapter::Needle] {
        compaction::NEEDLES
    }

    /// A `session.compaction_complete` that was applied: its summary.
    fn compaction(&self, window: &[Block]) -> Option<crate::native::adapter::Found> {
        compaction::read(window)
    }

    fn record_key<'b>(&self, block: &'b Block) -> Option<&'b str> {
        compaction::record_key(block)
    }

    /// The session state is written under `COPILOT_HOME`, else the HOME the process runs with.
    fn host_resume(&self, resume: &mut ResumeOptions, env: &BTreeMap<String, String>, _program: &Path, _model: Option<&str>) {
        resume.config_dir = env.get("COPILOT_HOME").map(PathBuf::from);
        if let Some(home) = env.get("HOME") {
            resume.home = Some(PathBuf::from(home));
        }
    }

    /// Copilot CLI resumes by id, from its session log: the thread goes on while the log is there.
    fn native_thread(&self, env: &BTreeMap<String, String>, native_id: &str) -> Option<Option<PathBuf>> {
        resume::find_log(env, native_id).map(|_| None)
    }

    fn sniffers(&self) -> Sniffers {
        Sniffers::new(sniff_record).with_output(records::is_output)
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
        let events = export::events(&blocks, options, &ctx, &mut report);
        Ok(Reported { value: Value::Array(events), report })
    }
}

/// An event of a Copilot CLI session log (see `records::is_event`), not one the CLI only prints.
fn sniff_record(record: &Map<String, Value>) -> bool {
    records::is_event(record) && !records::is_output(record)
}

impl Resume for CopilotCli {
    fn resume(&self, session: &Session, blocks: Vec<Block>, _splices: Splices, options: &ResumeOptions, _replayed: &[ReportEntry]) -> Result<Reported<ResumeFiles>> {
        resume::resume_files(session, blocks, options)
    }
}

impl Driver for CopilotCli {
    fn live(&self, spec: LiveSpec, sink: Sink) -> Result<Box<dyn Live>> {
        live::start(spec, sink)
    }
}
