

//! Claude Code: transcript JSONL (`~/.claude/projects/<slug>/<session>.jsonl`, every generation),
//! Anthropic Messages API `{system, messages}`, `--output-format stream-json` events, and resume.
//!
//! Import keeps every record. A `user`/`assistant` record becomes one canonical block per content
//! item; the first of them carries the record's envelope (`native.data.record`, with
//! `message.content` set to null) and each carries the rest of its item (`native.data.item`) with the
//! payloads that live in canonical fields (text, thinking, signature, tool input, image bytes) left
//! out, so that export puts them back exactly. Every other record (attachments, bookkeeping, titles,
//! system rows, record types not known today) becomes one `system`/`status` block carrying the whole
//! record. A line that is not a valid record becomes an `error` block holding the raw line.
//!
//! The files split the jobs: `import` (transcripts and Messages bodies into blocks), `records` (what
//! makes a record malformed), `export` (blocks into transcript records), `request` (the Messages body
//! a resume sends), `events` (live stream-json capture), `resume` (the files of a resume). What the
//! code relies on in the format, and the CLI versions it was checked against, is in `FORMAT.md`.

use serde_json::{Map, Value};

use crate::error::Result;
use crate::model::{Block, Format, Runtime};
use crate::native::adapter::{Adapter, ImportRun, ResumeFiles};
use crate::native::types::{Options, ResumeOptions};
use crate::report::ReportEntry;
use crate::store::Session;

mod events;
mod export;
mod import;
mod live;
mod records;
mod request;
mod resume;


pub use import::is_subagent_file;
pub use resume::project_slug;

/// What a file of this runtime's history is called in messages.
pub(crate) const HISTORY_NAME: &str = "a Claude Code transcript";

/// The runtime name, as in `native.runtime` and `provider`.
pub const RUNTIME: &str = "claude-code";
/// The model vendor of every Claude Code response.
pub const MODEL_PROVIDER: &str = "anthropic";
/// The CLI version written into records this crate makes (the version the format was verified with).
pub const TARGET_VERSION: &str = "2.1.328";

/// The Claude Code adapter.
pub(crate) struct ClaudeCode;

impl Adapter for ClaudeCode {
    fn runtime(&self) -> Runtime {
        Runtime::ClaudeCode
    }

    fn history_name(&self) -> &'static str {
        HISTORY_NAME
    }

    fn sniff_record(&self, record: &Map<String, Value>) -> bool {
        // A `stream-json` event (what `claude -p` prints, for `ingest`) names its session
        // `session_id`; a transcript record names it `sessionId`.
        if record.contains_key("session_id") && !record.contains_key("sessionId") {
            return false;
        }
        let ty = record.get("type").and_then(Value::as_str).unwrap_or("");
        let known = matches!(
            ty,
            "user" | "assistant" | "system" | "attachment" | "progress" | "summary" | "last-prompt" | "queue-operation"
                | "file-history-snapshot" | "custom-title" | "ai-title" | "cost-state" | "mode" | "permission-mode"
        ) || ty.starts_with("api-request");
        known && !record.contains_key("payload") || record.contains_key("parentUuid") || record.contains_key("leafUuid")
    }

    fn claims_record(&self, record: &Map<String, Value>) -> bool {
        self.sniff_record(record) || (record.contains_key("uuid") && record.contains_key("message"))
    }

    fn import(&self, run: ImportRun<'_>) -> Result<Session> {
        import::import(run)
    }

    fn appends_lines(&self) -> bool {
        true
    }

    fn export(&self, session: &Session, mut blocks: Vec<Block>, format: Format, options: &Options, report: &mut Vec<ReportEntry>) -> Result<Value> {
        let ctx = export::TranscriptContext::for_session(session, &blocks)?;
        let (records, entries) = export::transcript(session, &mut blocks, options, &ctx)?;
        report.extend(entries);
        Ok(match format {
            Format::Messages => request::messages(records, options, report),
            _ => Value::Array(records.into_iter().map(|r| r.value).collect()),
        })
    }

    fn live(&self, spec: crate::native::live::LiveSpec, sink: crate::native::live::Sink) -> Result<Box<dyn crate::native::live::Live>> {
        live::start(spec, sink)
    }

    fn event_blocks(&self, _session: &Session, event: &Value) -> Result<Vec<Block>> {
        events::event_blocks(event)
    }

    fn resume(&self, session: &Session, blocks: Vec<Block>, options: &ResumeOptions, report: &mut Vec<ReportEntry>) -> Result<ResumeFiles> {
        resume::resume_files(session, blocks, options, report)
    }
}
