//! Pi (0.73): the v3 tree JSONL of `~/.pi/agent/sessions/--<cwd>--/<time>_<id>.jsonl`, and resume.
//!
//! Import keeps every line. The header and every entry that is not a message (model and
//! thinking-level changes, compactions, branch summaries, labels, names, extension entries, types
//! not known today) become one `system`/`status` block carrying the whole entry. A message entry on
//! the active branch (the path from the last entry back to the root) becomes one block per content
//! block, the first carrying the entry with `message.content` set to null and each carrying its
//! content block with the payloads that live in canonical fields left out, so that export puts
//! everything back byte for byte. A message entry off the active branch is a status block keeping
//! the whole entry: kept for Pi, never conversation for another runtime. A line that is not a valid
//! entry becomes an `error` block holding the line.
//!
//! The files split the jobs: `import` (lines into blocks, and the first pass that finds the active
//! branch), `records` (what a header and an entry are, the vendor and reasoning format behind an
//! `api`), `export` (blocks into entries), `resume` (the file of a resume and its command),
//! `events` (what the live driver reads of Pi's RPC events), `live` (the driver: `pi --mode rpc`,
//! recording what the session file gains). What the code relies on in the format, and the Pi
//! version it was checked against, is in `FORMAT.md`, included below.
//!
#![doc = include_str!("FORMAT.md")]

use std::collections::BTreeMap;
use std::path::PathBuf;

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

pub use resume::session_dir_name;

/// The npm package the CLI comes in (named when the live driver cannot find `pi`).
pub const NPM_PACKAGE: &str = "@mariozechner/pi-coding-agent";

/// What a file of this runtime's history is called in messages.
pub(crate) const HISTORY_NAME: &str = "a Pi session file";

/// The runtime name, as in `native.runtime` and `provider`.
pub const RUNTIME: &str = "pi";

/// The CLI version the format was verified with.
pub const TARGET_VERSION: &str = "0.73.1";

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

    /// `PI_CODING_AGENT_DIR` is where the resumed Pi looks for its sessions: the file goes there.
    fn host_resume(&self, resume: &mut ResumeOptions, env: &BTreeMap<String, String>, _program: &std::path::Path, _model: Option<&str>) {
        resume.config_dir = env.get("PI_CODING_AGENT_DIR").map(PathBuf::from);
    }

    /// Measured on the 2026-12 fixtures' requests.
    fn harness_bytes(&self) -> (u64, u64) {
        (5_291, 5_291)
    }

    fn compaction_needles(&self) -> &'static [crate::native::adapter::Needle] {
        compaction::NEEDLES
    }

    /// A `compaction` entry: its summary, and the entries from `firstKeptEntryId` on.
    fn compaction(&self, window: &[Block]) -> Option<crate::native::adapter::Found> {
        compaction::read(window)
    }

    fn record_key<'b>(&self, block: &'b Block) -> Option<&'b str> {
        compaction::record_key(block)
    }

    /// Pi resumes a file: the session's file under the agent directory the environment names.
    fn native_thread(&self, env: &BTreeMap<String, String>, native_id: &str) -> Option<Option<PathBuf>> {
        resume::find_session_file(env, native_id).map(Some)
    }

    fn sniffers(&self) -> Sniffers {
        Sniffers::new(sniff_record).with_output(sniff_output)
    }

    fn capabilities(&self) -> Capabilities<'_> {
        Capabilities { appends_lines: true, database: None, events: None, stored_text: None, resume: Some(self), driver: Some(self) }
    }

    fn import(&self, run: ImportRun<'_>) -> Result<Session> {
        import::import(run)
    }

    fn export(&self, session: &Session, mut blocks: Vec<Block>, _format: Format, options: &Options) -> Result<Reported<Value>> {
        let ctx = export::EntryContext::for_session(session, &blocks)?;
        let (entries, report) = export::entries(session, &mut blocks, options, &ctx)?;
        Ok(Reported { value: Value::Array(entries), report })
    }
}

/// The header (`{"type":"session","version":N,"id","cwd"}`) or an entry of Pi's tree: a Pi entry
/// type, a `parentId` key, an 8-hex id and an ISO timestamp (Claude Code records have
/// `parentUuid`/`uuid`, Codex lines `payload`, Gemini CLI records no `parentId`).
fn sniff_record(record: &Map<String, Value>) -> bool {
    records::is_header(record) || records::is_entry(record)
}

/// An event of `pi --mode json` / `--mode rpc` (`agent_start`, `message_end`, …): no entry id, no
/// parent. The session file is the record.
fn sniff_output(record: &Map<String, Value>) -> bool {
    const EVENTS: [&str; 13] = [
        "agent_start", "agent_end", "turn_start", "turn_end", "message_start", "message_update", "message_end",
        "tool_execution_start", "tool_execution_update", "tool_execution_end", "queue_update", "compaction_start", "compaction_end",
    ];
    let ty = record.get("type").and_then(Value::as_str).unwrap_or("");
    EVENTS.contains(&ty) && !record.contains_key("id") && !record.contains_key("parentId")
}

impl Resume for Pi {
    fn resume(&self, session: &Session, blocks: Vec<Block>, _splices: Splices, options: &ResumeOptions, _replayed: &[ReportEntry]) -> Result<Reported<ResumeFiles>> {
        resume::resume_files(session, blocks, options)
    }
}

impl Driver for Pi {
    /// `pi --mode rpc`, recording what its session file gains (`live.rs`).
    fn live(&self, spec: LiveSpec, sink: Sink) -> Result<Box<dyn Live>> {
        live::start(spec, sink)
    }
}
