

//! OpenCode (1.x): the session document `opencode export` prints and `opencode import` takes
//! (`{info, messages: [{info, parts}]}`), sessions read straight from an `opencode.db`, the
//! prompt prelude for a fresh session, live capture of bus and `run --format json` events, and the
//! files a resume needs.
//!
//! Import gives one block per part (a `tool` part gives a `tool_use` and, once it finished, a
//! `tool_result`); bookkeeping parts (`step-start`, `step-finish`, `snapshot`, `patch`, `agent`,
//! `subtask`, `retry`, `compaction`, unknown types) are `status` blocks. Each block keeps the part
//! with its canonical payloads taken out (`native.data.part`, payload slots set to `null`, data URLs
//! as `{"embed": id}`); the first block of a message keeps the message info (`native.data.message`),
//! and a first `status` block keeps the session info (`native.data.session`), so that an imported
//! session exports back to the same document.
//!
//! The files split the jobs: `import` (documents and `opencode.db` sessions into blocks), `records`
//! (what makes a document malformed), `export` (blocks into a document), `request` (the prelude),
//! `events` (live capture), `resume` (the files of a resume). What the code relies on in the format,
//! and the CLI versions it was checked against, is in `FORMAT.md`, included below.
//!
#![doc = include_str!("FORMAT.md")]

use serde_json::Value;

use crate::error::Result;
use crate::json::json_type;
use crate::model::{Block, Format, Runtime};
use crate::model::ids::parts_digest;
use crate::native::adapter::{Adapter, Capabilities, DatabaseImport, Driver, EventCapture, ImportRun, Reported, Resume, ResumeFiles, Sniffers};
use crate::native::live::{Live, LiveSpec, Sink};
use crate::native::splice::Splices;
use crate::native::common::check_strict;
use crate::native::types::{Options, ResumeOptions, ResumePlan};
use crate::report::ReportEntry;
use crate::store::{Session, Store};

mod compaction;
mod events;
mod export;
mod import;
mod live;
mod records;
mod request;
mod resume;


/// The npm package the CLI comes in.
pub(crate) const NPM_PACKAGE: &str = "opencode-ai";

/// What a file of this runtime's history is called in messages.
pub(crate) const HISTORY_NAME: &str = "an OpenCode export";

/// The runtime name, as in `native.runtime` and `provider`.
pub const RUNTIME: &str = "opencode";
/// The OpenCode version written into documents this crate makes (the version the format was verified with).
pub const TARGET_VERSION: &str = "1.18.33";

/// What OpenCode sends in place of the result of a call that never finished.
const INTERRUPTED: &str = "[Tool execution was interrupted]";

const BASE62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// An id in OpenCode's format: `prefix_` + 12 hex digits of `ms * 4096 + counter` (complemented
/// for descending `ses_` ids) + 14 base62 characters, here derived from `seed` so that exports are
/// deterministic.
fn opencode_id(prefix: &str, ms: i64, counter: u64, descending: bool, seed: &[&str]) -> String {
    let v = (ms.max(0) as u64).wrapping_mul(4096).wrapping_add(counter);
    let v = if descending { !v } else { v } & 0xffff_ffff_ffff;
    let digest = parts_digest(seed);
    let random: String = digest.iter().take(14).map(|b| BASE62[(*b as usize) % 62] as char).collect();
    format!("{prefix}_{v:012x}{random}")
}

/// The `ms * 4096 + counter` an ascending OpenCode id encodes (its low 48 bits).
fn id_value(id: &str) -> Option<u64> {
    let hex = id.split_once('_')?.1.get(..12)?;
    u64::from_str_radix(hex, 16).ok()
}

/// The vendor (OpenCode provider id of its bundled provider) of a model, by its name.
fn vendor_of_model(model: &str) -> Option<String> {
    let model = model.rsplit('/').next().unwrap_or(model);
    if model.starts_with("claude") {
        Some("anthropic".into())
    } else if model.starts_with("gpt-") || model.starts_with("o1") || model.starts_with("o3") || model.starts_with("o4") || model.contains("codex") {
        Some("openai".into())
    } else if model.starts_with("gemini") {
        Some("google".into())
    } else {
        None
    }
}

/// Where `![…](embed://id)` stands in `text` (any label), and its length.
fn find_embed_link(text: &str, id: &str) -> Option<(usize, usize)> {
    let tail = format!("](embed://{id})");
    let end = text.find(&tail)?;
    let start = text[..end].rfind("![")?;
    Some((start, end + tail.len() - start))
}

/// The OpenCode adapter.
pub(crate) struct OpenCode;

impl Adapter for OpenCode {
    /// Measured on the 2026-12 fixtures' requests.
    fn harness_bytes(&self) -> (u64, u64) {
        (30_270, 31_784)
    }

    /// The prelude is text made from the blocks: it starts at OpenCode's own compaction too.
    fn rebuilds(&self, format: Format) -> bool {
        format == Format::Prelude
    }

    fn compaction_needles(&self) -> &'static [crate::native::adapter::Needle] {
        compaction::NEEDLES
    }

    /// A `compaction` part whose summary message completed, and the tail it keeps.
    fn compaction(&self, window: &[Block]) -> Option<crate::native::adapter::Found> {
        compaction::read(window)
    }

    fn record_key<'b>(&self, block: &'b Block) -> Option<&'b str> {
        compaction::record_key(block)
    }

    fn runtime(&self) -> Runtime {
        Runtime::OpenCode
    }

    fn history_name(&self) -> &'static str {
        HISTORY_NAME
    }

    fn program(&self) -> &'static str {
        "opencode"
    }


    /// The document goes in through `opencode import`, run with the host's program; a model named
    /// `provider/model` is recorded by its model part.
    fn host_resume(&self, resume: &mut ResumeOptions, _env: &std::collections::BTreeMap<String, String>, program: &std::path::Path, model: Option<&str>) {
        resume.run_import = true;
        resume.opencode_bin = Some(program.to_path_buf());
        if let Some(model) = model {
            resume.options.target_model = Some(model.split_once('/').map_or(model, |(_, m)| m).to_string());
        }
    }

    /// OpenCode names a model `provider/model`.
    fn model_flag(&self, model_provider: Option<&str>, model: Option<&str>) -> Option<String> {
        Some(format!("{}/{}", model_provider?, model?))
    }

    /// A session document on one line; an `opencode.db`; a pretty-printed session document.
    fn sniffers(&self) -> Sniffers {
        Sniffers::new(|record| record.contains_key("info") && record.contains_key("messages"))
            .with_header(|head| head.starts_with(b"SQLite format 3"))
            .with_document(|text| text.starts_with('{') && text.contains("\"messages\"") && text.contains("\"info\""))
    }

    fn capabilities(&self) -> Capabilities<'_> {
        Capabilities { appends_lines: false, database: Some(self), events: Some(self), stored_text: None, resume: Some(self), driver: Some(self) }
    }

    fn import(&self, run: ImportRun<'_>) -> Result<Session> {
        import::import(run.store, run.source, run.options, run.target)
    }

    fn export(&self, session: &Session, mut blocks: Vec<Block>, format: Format, options: &Options) -> Result<Reported<Value>> {
        let mut report = Vec::new();
        let value = match format {
            Format::Prelude => request::prelude(&blocks, options, &mut report),
            _ => export::document(session, &mut blocks, options, &mut report)?,
        };
        Ok(Reported { value, report })
    }
}

impl DatabaseImport for OpenCode {
    fn import_database(&self, store: &Store, path: &std::path::Path) -> Result<Vec<Session>> {
        import::import_all_db(store, path)
    }
}

impl EventCapture for OpenCode {
    fn event_blocks(&self, session: &Session, event: &Value) -> Result<Vec<Block>> {
        events::event_blocks(session, event)
    }
}

impl Resume for OpenCode {
    fn resume(&self, session: &Session, mut blocks: Vec<Block>, _splices: Splices, options: &ResumeOptions, replayed: &[ReportEntry]) -> Result<Reported<ResumeFiles>> {
        let mut report = Vec::new();
        let document = export::document(session, &mut blocks, &options.options, &mut report)?;
        // Strict mode refuses a lossy document (or replay) before its id and place are checked, as it
        // always has.
        check_strict(&options.options, &[replayed, &report].concat())?;
        Ok(Reported { value: resume::resume_files(session, document, options)?, report })
    }

    fn after_write(&self, plan: &mut ResumePlan, options: &ResumeOptions) -> Result<()> {
        resume::run_import(plan, options)
    }
}

impl Driver for OpenCode {
    fn live(&self, spec: LiveSpec, sink: Sink) -> Result<Box<dyn Live>> {
        live::start(spec, sink)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minted_ids_encode_time_and_counter_and_are_deterministic() {
        let id = opencode_id("msg", 1_796_226_466_958, 3, false, &["seed"]);
        assert!(id.starts_with("msg_"), "{id}");
        assert_eq!(id.len(), 4 + 12 + 14);
        assert_eq!(id_value(&id), Some((1_796_226_466_958 * 4096 + 3) & 0xffff_ffff_ffff), "the low 48 bits");
        assert_eq!(id, opencode_id("msg", 1_796_226_466_958, 3, false, &["seed"]));
        assert_ne!(id[16..], opencode_id("msg", 1_796_226_466_958, 3, false, &["other"])[16..]);
        // Later ids sort after earlier ones; descending (session) ids the other way round.
        assert!(opencode_id("prt", 2, 0, false, &["x"]) > opencode_id("prt", 1, 0, false, &["x"]));
        assert!(opencode_id("ses", 2, 0, true, &["x"]) < opencode_id("ses", 1, 0, true, &["x"]));
    }

    #[test]
    fn models_name_their_vendor_and_embed_links_are_found_by_id() {
        assert_eq!(vendor_of_model("anthropic/claude-sonnet-4-6").as_deref(), Some("anthropic"));
        assert_eq!(vendor_of_model("gpt-5.1-codex").as_deref(), Some("openai"));
        assert_eq!(vendor_of_model("qwen3"), None);
        let text = "see ![shot.png](embed://sha256-ab) here";
        assert_eq!(find_embed_link(text, "sha256-ab"), Some((4, "![shot.png](embed://sha256-ab)".len())));
        assert_eq!(find_embed_link(text, "sha256-cd"), None);
    }
}
