

//! Codex: rollout JSONL (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-…-<id>.jsonl`; paginated,
//! legacy and the pre-envelope format), bare `ResponseItem` lists, `codex exec --json` events and
//! app-server notifications, and resume.
//!
//! Import keeps every line. A `response_item` line becomes one canonical block per content item of
//! a `message`, or one block for any other item; the first block carries the line with the modelled
//! part left out (`native.data.record`), each block the rest of its item (`native.data.item`) with
//! the payloads held in canonical fields (text, arguments, raw tool input, encrypted reasoning,
//! image bytes) left out, so that export puts them back exactly. Every other line (`session_meta`,
//! `turn_context`, `world_state`, `event_msg`, `token_*`, `compacted`, kinds not known today) is
//! one `system`/`status` block carrying the whole line. A line that is not valid becomes an `error`
//! block holding it.
//!
//! The files split the jobs: `import` (rollouts and items into blocks), `records` (what makes a line
//! malformed), `export` (blocks into rollout lines), `request` (the items a resume sends), `events`
//! (live capture), `resume` (the files of a resume). What the code relies on in the format, and the
//! CLI versions it was checked against, is in `FORMAT.md`, included below.
//!
#![doc = include_str!("FORMAT.md")]

use serde_json::{Map, Value};

use crate::error::Result;
use crate::model::{Block, Format, Runtime};
use crate::native::adapter::{Adapter, Capabilities, Driver, EventCapture, ImportRun, Reported, Resume, ResumeFiles, Sniffers, StoredTextExport};
use crate::native::live::{Live, LiveSpec, Sink};
use crate::native::common::lenient_str;
use crate::native::splice::{Lighten, NativeText, Splices};
use crate::native::types::{Options, ResumeOptions};
use crate::report::ReportEntry;
use crate::store::Session;

/// Where a line's modelled part sits; the first block's `native.data.at`.
const AT_CONTENT: &str = "payload.content";
const AT_ITEM: &str = "payload";
const AT_BARE_CONTENT: &str = "content";
const AT_BARE_ITEM: &str = ".";

mod compaction;
mod events;
mod export;
mod import;
mod live;
mod records;
mod request;
mod resume;

/// Codex's own context messages, which it sends as user messages.
const CONTEXT: [&str; 6] = ["<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<turn_aborted>", "<subagent_notification>", "<skill>"];

/// Where Codex keeps its files, as the host's process environment says.
mod host {
    use std::collections::BTreeMap;
    use std::path::{Path, PathBuf};

    /// `CODEX_HOME`, else `~/.codex`.
    pub(super) fn codex_home(env: &BTreeMap<String, String>) -> PathBuf {
        match env.get("CODEX_HOME") {
            Some(home) => PathBuf::from(home),
            None => PathBuf::from(env.get("HOME").cloned().unwrap_or_default()).join(".codex"),
        }
    }

    /// A top-level `key = "value"` of Codex's `config.toml`.
    pub(super) fn configured(codex_home: &Path, key: &str) -> Option<String> {
        let text = std::fs::read_to_string(codex_home.join("config.toml")).ok()?;
        for line in text.lines() {
            let line = line.trim();
            if line.starts_with('[') {
                return None;
            }
            if let Some(value) = line.strip_prefix(key).and_then(|rest| rest.trim_start().strip_prefix('=')) {
                return Some(value.trim().trim_matches(['"', '\'']).to_string());
            }
        }
        None
    }

    /// The rollout of the Codex thread `id` under `codex_home/sessions`.
    pub(super) fn find_rollout(codex_home: &Path, id: &str) -> Option<PathBuf> {
        let suffix = format!("-{id}.jsonl");
        let mut stack = vec![codex_home.join("sessions")];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).ok()?.flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("rollout-") && n.ends_with(&suffix)) {
                    return Some(path);
                }
            }
        }
        None
    }
}


/// The npm package the CLI comes in.
pub(crate) const NPM_PACKAGE: &str = "@openai/codex";

/// What a file of this runtime's history is called in messages.
pub(crate) const HISTORY_NAME: &str = "a Codex rollout";

/// The runtime name, as in `native.runtime` and `provider`.
pub const RUNTIME: &str = "codex";
/// The CLI version written into lines this crate makes (the version the format was verified with).
pub const TARGET_VERSION: &str = "0.169.0";

/// `ResponseItem` types of 0.169.0 (anything else is kept opaque).
const ITEM_TYPES: &[&str] = &[
    "message",
    "reasoning",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "local_shell_call",
    "tool_search_call",
    "tool_search_output",
    "web_search_call",
    "image_generation_call",
    "compaction",
    "compaction_summary",
    "context_compaction",
    "additional_tools",
    "agent_message",
    "configuration_update",
    "ghost_snapshot",
    "other",
];

/// Rollout line kinds of 0.169.0.
const LINE_TYPES: &[&str] = &[
    "session_meta",
    "response_item",
    "event_msg",
    "turn_context",
    "world_state",
    "token_usage_record",
    "compacted",
    "inter_agent_communication",
    "inter_agent_communication_metadata",
    "retained_context",
    "security_risk_score",
    "realtime_item",
];

/// The Codex adapter.
pub(crate) struct Codex;

impl Adapter for Codex {
    fn runtime(&self) -> Runtime {
        Runtime::Codex
    }

    fn history_name(&self) -> &'static str {
        HISTORY_NAME
    }

    fn program(&self) -> &'static str {
        "codex"
    }


    /// Measured on the 2026-12 fixtures' requests.
    fn harness_bytes(&self) -> (u64, u64) {
        (36_395, 37_065)
    }

    fn compaction_needles(&self) -> &'static [crate::native::adapter::Needle] {
        compaction::NEEDLES
    }

    /// A `compacted` line: its replacement history stands in for what came before it.
    fn compaction(&self, window: &[Block]) -> Option<crate::native::adapter::Found> {
        compaction::read(window)
    }

    /// Developer and system messages are Codex's instructions, permissions, skills and tool
    /// listings; some of its context comes as user messages.
    fn is_harness(&self, block: &Block) -> bool {
        if block.kind != crate::model::Kind::Text {
            return false;
        }
        let text = block.content.trim_start();
        block.actor == crate::model::Actor::System || (block.actor == crate::model::Actor::User && CONTEXT.iter().any(|c| text.starts_with(c)))
    }

    /// The rollout is written under the Codex home the process will use, naming the provider and
    /// (without a model asked for) the model its `config.toml` names: the replayed thread must not
    /// carry on with another runtime's model or talk to another provider.
    fn host_resume(&self, resume: &mut ResumeOptions, env: &std::collections::BTreeMap<String, String>, _program: &std::path::Path, _model: Option<&str>) {
        let home = host::codex_home(env);
        resume.options.model_provider = host::configured(&home, "model_provider");
        if resume.options.target_model.is_none() {
            resume.options.target_model = host::configured(&home, "model");
        }
        resume.codex_home = Some(home);
    }

    /// Codex resumes a thread from its rollout, which must still be there.
    fn native_thread(&self, env: &std::collections::BTreeMap<String, String>, native_id: &str) -> Option<Option<std::path::PathBuf>> {
        host::find_rollout(&host::codex_home(env), native_id).map(Some)
    }

    fn sniffers(&self) -> Sniffers {
        Sniffers::new(sniff_record)
    }

    fn capabilities(&self) -> Capabilities<'_> {
        Capabilities { appends_lines: true, database: None, events: Some(self), stored_text: Some(self), resume: Some(self), driver: Some(self) }
    }

    fn import(&self, run: ImportRun<'_>) -> Result<Session> {
        import::import(run)
    }

    fn export(&self, session: &Session, mut blocks: Vec<Block>, format: Format, options: &Options) -> Result<Reported<Value>> {
        let ctx = export::RolloutContext::for_session(session, &blocks, options)?;
        let (lines, mut report) = export::rollout(session, &mut blocks, Splices::default(), options, &ctx)?;
        let lines = lines.into_iter().map(|l| l.value).collect();
        let value = match format {
            Format::Rollout => Value::Array(lines),
            _ => request::items(lines, &mut report),
        };
        Ok(Reported { value, report })
    }
}

/// A rollout line, or a bare `ResponseItem`.
fn sniff_record(record: &Map<String, Value>) -> bool {
    let ty = lenient_str(record, "type").unwrap_or("");
    (record.contains_key("payload") && LINE_TYPES.contains(&ty))
        || (!record.contains_key("uuid")
            && !record.contains_key("parentUuid")
            // OpenCode's `run --format json` events (`{type: "reasoning", sessionID, part}`).
            && !record.contains_key("sessionID")
            && ITEM_TYPES.contains(&ty)
            && !record.contains_key("message"))
        || record.contains_key("record_type")
}

impl StoredTextExport for Codex {
    fn splices(&self, format: Format) -> Option<Lighten> {
        (format == Format::Rollout).then_some(records::lighten as Lighten)
    }

    fn export_text(&self, session: &Session, mut blocks: Vec<Block>, splices: Splices, _format: Format, options: &Options) -> Result<Reported<NativeText>> {
        let ctx = export::RolloutContext::for_session(session, &blocks, options)?;
        let (lines, report) = export::rollout(session, &mut blocks, splices, options, &ctx)?;
        Ok(Reported { value: NativeText::Lines(lines), report })
    }
}

impl EventCapture for Codex {
    fn event_blocks(&self, _session: &Session, event: &Value) -> Result<Vec<Block>> {
        events::event_blocks(event)
    }
}

impl Resume for Codex {
    fn resume(&self, session: &Session, blocks: Vec<Block>, splices: Splices, options: &ResumeOptions, _replayed: &[ReportEntry]) -> Result<Reported<ResumeFiles>> {
        resume::resume_files(session, blocks, splices, options)
    }
}

impl Driver for Codex {
    fn live(&self, spec: LiveSpec, sink: Sink) -> Result<Box<dyn Live>> {
        live::start(spec, sink)
    }
}
