//! Gemini CLI (0.61): the JSONL append log of `~/.gemini/tmp/<project>/chats/session-*.jsonl` and
//! the older single-JSON session file, the Gemini API `contents` a resume sends, and resume.
//!
//! Import reads the log as the CLI's loader does (the last version of a message wins, in the place
//! its id first appeared; `$set.messages` replaces the list; `$rewindTo` cuts it) and keeps every
//! line, so that an imported log exports back record for record. A tool call stored twice (in the
//! model record's `toolCalls[].result` and as a separate user `functionResponse`) is one call and
//! one result. Export of blocks from anywhere else writes what the CLI resumes without loss: model
//! steps as `Part[]` with `functionCall` parts and their `thoughtSignature` (the documented
//! placeholder where none is known), the results as one following user record, no `toolCalls`.
//!
//! The files split the jobs: `records` (record kinds, what makes one malformed, the loader),
//! `import`, `export` (blocks into log records), `request` (the `contents` a resume sends),
//! `resume` (the files of a resume), `events` and `live` (the ACP driver). What the code relies on
//! in the format, and the CLI version it was checked against, is in `FORMAT.md`, included below.
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
use crate::native::types::{Options, ResumeOptions, ResumePlan};
use crate::report::ReportEntry;
use crate::store::Session;

mod compaction;
mod events;
mod export;
mod import;
mod live;
mod records;
mod request;
mod resume;

/// The npm package the CLI comes in.
pub(crate) const NPM_PACKAGE: &str = "@google/gemini-cli";

/// What a file of this runtime's history is called in messages.
pub(crate) const HISTORY_NAME: &str = "a Gemini CLI session file";

/// The runtime name, as in `native.runtime` and `provider`.
pub const RUNTIME: &str = "gemini-cli";
/// The model vendor of every Gemini CLI response.
pub const MODEL_PROVIDER: &str = "google";
/// The CLI version the format was verified with.
pub const TARGET_VERSION: &str = "0.61.0";
/// What the CLI puts on a function call whose thought signature it does not know, and what an
/// export writes there too.
pub const SIGNATURE_PLACEHOLDER: &str = "skip_thought_signature_validator";

/// True for the text the CLI itself puts on the user's side (regenerated for every process, never
/// sent back on resume): `<session_context>` and `<hook_context>`.
pub(crate) fn is_context(text: &str) -> bool {
    let text = text.trim_start();
    text.starts_with("<session_context>") || text.starts_with("<hook_context>")
}

/// The Gemini CLI adapter.
pub(crate) struct GeminiCli;

impl Adapter for GeminiCli {
    fn runtime(&self) -> Runtime {
        Runtime::GeminiCli
    }

    /// Measured on the 2026-12 fixtures' requests.
    fn harness_bytes(&self) -> (u64, u64) {
        (45_911, 45_951)
    }

    fn compaction_needles(&self) -> &'static [crate::native::adapter::Needle] {
        compaction::NEEDLES
    }

    /// The `<state_snapshot>` summary message a compression put at the head of the message list.
    fn compaction(&self, window: &[Block]) -> Option<crate::native::adapter::Found> {
        compaction::read(window)
    }

    fn history_name(&self) -> &'static str {
        HISTORY_NAME
    }

    fn program(&self) -> &'static str {
        "gemini"
    }

    /// The `<session_context>` and `<hook_context>` texts.
    fn is_harness(&self, block: &Block) -> bool {
        block.kind == Kind::Text && block.actor == Actor::User && is_context(&block.content)
    }

    /// The log is written under the HOME the process runs with.
    fn host_resume(&self, resume: &mut ResumeOptions, env: &BTreeMap<String, String>, _program: &Path, _model: Option<&str>) {
        if let Some(home) = env.get("GEMINI_CLI_HOME").or_else(|| env.get("HOME")) {
            resume.home = Some(PathBuf::from(home));
        }
    }

    fn sniffers(&self) -> Sniffers {
        Sniffers::new(sniff_record).with_output(sniff_output).with_document(sniff_document)
    }

    fn capabilities(&self) -> Capabilities<'_> {
        Capabilities { appends_lines: false, database: None, events: None, stored_text: None, resume: Some(self), driver: Some(self) }
    }

    fn import(&self, run: ImportRun<'_>) -> Result<Session> {
        import::import(run)
    }

    fn export(&self, session: &Session, blocks: Vec<Block>, format: Format, options: &Options) -> Result<Reported<Value>> {
        let mut report = Vec::new();
        let records = export::log(session, &blocks, options, &mut report)?;
        let value = match format {
            Format::Contents => request::contents(&records),
            _ => Value::Array(records),
        };
        Ok(Reported { value, report })
    }
}

/// A header, a `$set` or `$rewindTo` line, or a message record (`id`, `timestamp`, a Gemini CLI
/// `type`, `content`, and none of the keys of the other runtimes' records).
fn sniff_record(record: &Map<String, Value>) -> bool {
    match records::classify(record) {
        records::Record::Header | records::Record::Set | records::Record::Rewind => true,
        records::Record::Message => {
            let ty = record.get("type").and_then(Value::as_str).unwrap_or("");
            records::MESSAGE_TYPES.contains(&ty)
                && record.get("timestamp").is_some_and(Value::is_string)
                && record.contains_key("content")
                && !["parentId", "parentUuid", "uuid", "message", "payload", "role"].iter().any(|k| record.contains_key(*k))
        }
        records::Record::Other => false,
    }
}

/// An event of `gemini -o stream-json` (`init`, `message`, `tool_use`, `tool_result`, `result`):
/// display text, no thoughts or signatures; the session log is the record.
fn sniff_output(record: &Map<String, Value>) -> bool {
    if !record.get("timestamp").is_some_and(Value::is_string) || ["id", "payload", "uuid", "message"].iter().any(|k| record.contains_key(*k)) {
        return false;
    }
    match record.get("type").and_then(Value::as_str).unwrap_or("") {
        "init" => record.get("session_id").is_some_and(Value::is_string),
        "tool_use" | "tool_result" => record.get("tool_id").is_some_and(Value::is_string),
        "result" => record.contains_key("stats"),
        "message" => record.get("role").is_some_and(Value::is_string) && record.get("content").is_some_and(Value::is_string),
        _ => false,
    }
}

/// A legacy session document spread over several lines.
fn sniff_document(text: &str) -> bool {
    serde_json::from_str::<Value>(text).ok().and_then(|v| v.as_object().map(records::is_header)).unwrap_or(false)
}

impl Resume for GeminiCli {
    fn resume(&self, session: &Session, blocks: Vec<Block>, _splices: Splices, options: &ResumeOptions, _replayed: &[ReportEntry]) -> Result<Reported<ResumeFiles>> {
        let mut report = Vec::new();
        let records = export::log(session, &blocks, &options.options, &mut report)?;
        Ok(Reported { value: resume::resume_files(session, records, options)?, report })
    }

    fn after_write(&self, plan: &mut ResumePlan, options: &ResumeOptions) -> Result<()> {
        resume::register_project(plan, options)
    }
}

impl Driver for GeminiCli {
    fn live(&self, spec: LiveSpec, sink: Sink) -> Result<Box<dyn Live>> {
        live::start(spec, sink)
    }
}
