//! The adapter trait: what every runtime implements, one folder each (`native/<runtime>/`), and the
//! shared steps the adapters call. The pipeline in `native/mod.rs` drives every conversion through
//! this trait — replay rules, then the adapter, then the strict check, the atomic private write and
//! the binding — so no runtime decides those steps for itself.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::{Map, Value};

use crate::error::{Error, Location, Result};
use crate::model::{Block, Format, Runtime};
use crate::native::common::at_line;
use crate::native::jsonl::{Line, Lines};
use crate::native::splice::{Lighten, NativeText, Splices};
use crate::native::types::{Options, ResumeOptions, Source};
use crate::report::ReportEntry;
use crate::store::{ImportTarget, ImportedMeta, Session, Store};

/// One runtime's conversions between its native shapes and canonical blocks.
pub(crate) trait Adapter: Sync {
    /// The runtime this adapter converts.
    fn runtime(&self) -> Runtime;

    /// What a file of this runtime's history is called in messages ("a Claude Code transcript").
    fn history_name(&self) -> &'static str;

    /// The program the runtime's CLI is run as when no path is given (`claude`).
    fn program(&self) -> &'static str;

    /// True for a block of this runtime that is its harness context rather than conversation: what
    /// the runtime itself adds to every conversation (instructions, environment, reminders), which
    /// another runtime adds again in its own form and so is not replayed there. Default: none.
    fn is_harness(&self, _block: &Block) -> bool {
        false
    }

    /// Text found in every block that records one of this runtime's compactions (in its stored
    /// native text, or its content): what the store looks for before [`Adapter::compaction`]
    /// reads a block. Default: none (the runtime has no compaction).
    fn compaction_needles(&self) -> &'static [Needle] {
        &[]
    }

    /// The compaction `window[0]` records, read with the blocks that follow it in the session
    /// (`window[1..]`, at most [`WINDOW`] in all); `None` when that block
    /// records none, or a compaction that did not complete. Default: none.
    fn compaction(&self, _window: &[Block]) -> Option<Found> {
        None
    }

    /// The id of the native record (a line, an entry, a message) that `block` is the first block
    /// of, as [`Preserved`] names records; `None` for a block that
    /// continues a record or has no id. Default: none.
    fn record_key<'b>(&self, _block: &'b Block) -> Option<&'b str> {
        None
    }

    /// True when `block` is the first block of a native record (with an id or without), false
    /// when it continues the record before it. Default: when it has a [`Adapter::record_key`].
    fn starts_record(&self, block: &Block) -> bool {
        self.record_key(block).is_some()
    }

    /// True when `format` is written from canonical blocks rather than this runtime's own records
    /// (OpenCode's prompt prelude): a replay in it honours even this runtime's own compactions,
    /// which no loader of the runtime applies to it. Default: none.
    fn rebuilds(&self, _format: Format) -> bool {
        false
    }

    /// The bytes this runtime's own system prompt, tool definitions and injected context take in a
    /// request to its model (compact JSON), the least and the most measured over its requests in
    /// `tests/fixtures/<runtime>/*/requests.jsonl`. Default: none measured (0, 0).
    fn harness_bytes(&self) -> (u64, u64) {
        (0, 0)
    }

    /// The host's replay of a session into this runtime: what the resume options need from the
    /// process environment `env` the runtime will run with (its config directories), the `program`
    /// it runs as and the `model` asked for. Default: nothing more.
    fn host_resume(&self, _resume: &mut ResumeOptions, _env: &BTreeMap<String, String>, _program: &std::path::Path, _model: Option<&str>) {}

    /// The host's continuation of a native thread this runtime wrote (bound to the session):
    /// `Some(path)` with the file to resume from where the runtime needs one, `Some(None)` when
    /// the id is enough, `None` when the thread cannot be continued (its file is gone) and a replay
    /// is needed. Default: the id is enough.
    fn native_thread(&self, _env: &BTreeMap<String, String>, _native_id: &str) -> Option<Option<PathBuf>> {
        Some(None)
    }

    /// The model as this runtime's command line names it, from a block's attribution. Default: the
    /// model as recorded.
    fn model_flag(&self, _model_provider: Option<&str>, model: Option<&str>) -> Option<String> {
        model.map(str::to_string)
    }

    /// True when one JSON record (a JSONL line, or a whole document) is unmistakably this
    /// runtime's: what detection (`native/detect.rs`) asks, and what an import of this runtime
    /// takes as the sign that its input is its own.
    fn sniff_record(&self, record: &Map<String, Value>) -> bool;

    /// True when a record is enough like this runtime's that another runtime's import refuses it
    /// (naming this runtime) rather than reading it. Default: [`Adapter::sniff_record`].
    fn claims_record(&self, record: &Map<String, Value>) -> bool {
        self.sniff_record(record)
    }

    /// True when a record is what this runtime prints while it runs (an event stream such as Gemini
    /// CLI's `-o stream-json` or Pi's `--mode json`), not its history: detection gives no runtime
    /// to a file whose first records include one, so that no adapter half-reads it. Default: none.
    fn sniff_output(&self, _record: &Map<String, Value>) -> bool {
        false
    }

    /// True when the first bytes of a file are this runtime's container format (a database
    /// header), checked before any record.
    fn sniff_header(&self, _head: &[u8]) -> bool {
        false
    }

    /// True when a text no line of which reads as a record is this runtime's document spread over
    /// several lines (a pretty-printed JSON document), checked last.
    fn sniff_document(&self, _text: &str) -> bool {
        false
    }

    /// Imports native history into `run.target`, atomically. An adapter whose history is not read
    /// line by line (so [`Adapter::appends_lines`] is false) only ever gets a new session as its
    /// target, named by `run.options.session_id` when given.
    fn import(&self, run: ImportRun<'_>) -> Result<Session>;

    /// Imports every session of a database file of this runtime (one [`Adapter::sniff_header`]
    /// recognises) that the store does not hold yet, most recently updated first. A runtime without
    /// such a file keeps the default, `UNSUPPORTED`.
    fn import_database(&self, _store: &Store, path: &std::path::Path) -> Result<Vec<Session>> {
        Err(Error::Unsupported(format!("{} is not a {} database", path.display(), self.runtime().display_name())))
    }

    /// True when a file of this runtime that grew by whole lines can be imported by its new lines
    /// ([`ImportTarget::append`]); otherwise a changed file is imported afresh.
    fn appends_lines(&self) -> bool {
        false
    }

    /// Writes `blocks` (the session's, after the replay rules) in `format`, adding what it loses,
    /// alters or adds to `report`.
    fn export(&self, session: &Session, blocks: Vec<Block>, format: Format, options: &Options, report: &mut Vec<ReportEntry>) -> Result<Value>;

    /// How blocks are readied when this runtime's text exports in `format` are written from the
    /// stored text of its records ([`crate::native::splice`]); [`Adapter::export_text`] and
    /// [`Adapter::resume`] then get the blocks readied so and their splices. Default: `None` (text
    /// exports serialize [`Adapter::export`]'s values).
    fn splices(&self, _format: Format) -> Option<Lighten> {
        None
    }

    /// Like [`Adapter::export`], ready to be written as text. Called only when
    /// [`Adapter::splices`] gives a way, with the blocks readied so.
    fn export_text(&self, _session: &Session, _blocks: Vec<Block>, _splices: Splices, _format: Format, _options: &Options, _report: &mut Vec<ReportEntry>) -> Result<NativeText> {
        Err(Error::Internal(format!("{} exports are not written from stored text", self.runtime().display_name())))
    }

    /// The blocks a live event completes (often none while deltas accumulate). A runtime without
    /// live capture keeps the default, `UNSUPPORTED`.
    fn event_blocks(&self, _session: &Session, _event: &Value) -> Result<Vec<Block>> {
        Err(Error::Unsupported(format!("{} events cannot be ingested", self.runtime().display_name())))
    }

    /// The native file a resume needs and how to run it, from `blocks` (after the replay rules);
    /// nothing is written yet. Adds losses to `report`. `splices` is empty unless the blocks were
    /// readied as [`Adapter::splices`] says for the resume's format. A runtime that cannot be
    /// resumed from written files keeps the default, `UNSUPPORTED`.
    fn resume(&self, _session: &Session, _blocks: Vec<Block>, _splices: Splices, _options: &ResumeOptions, _report: &mut Vec<ReportEntry>) -> Result<ResumeFiles> {
        Err(Error::Unsupported(format!("{} sessions cannot be resumed from sna-history", self.runtime().display_name())))
    }

    /// Starts the runtime's long-lived mode for one session ([`crate::native::live`]); what happens
    /// goes to `sink`. A runtime without one keeps the default, `UNSUPPORTED`.
    fn live(&self, _spec: crate::native::live::LiveSpec, _sink: crate::native::live::Sink) -> Result<Box<dyn crate::native::live::Live>> {
        Err(Error::Unsupported(format!("{} cannot be run by the host", self.runtime().display_name())))
    }

    /// Runs what the resume needs once its file is written (OpenCode: `opencode import` when asked);
    /// records what ran in `plan`.
    fn after_write(&self, _plan: &mut crate::native::types::ResumePlan, _options: &ResumeOptions) -> Result<()> {
        Ok(())
    }
}

/// What an import is given: where it reads, where it writes, and how detection sees a record.
pub(crate) struct ImportRun<'a> {
    pub store: &'a Store,
    pub source: Source,
    pub options: &'a Options,
    pub target: ImportTarget,
    /// The runtime (another than the importing one) a record belongs to, by detection.
    pub foreign: fn(&Value, Runtime) -> Option<Runtime>,
}

/// A resume's file and command, before anything is written.
pub(crate) struct ResumeFiles {
    /// The runtime's own id of the session written.
    pub native_id: String,
    /// Where the native file goes.
    pub file: PathBuf,
    /// Its contents.
    pub text: String,
    /// Files of the same native session written earlier elsewhere, removed before the write.
    pub replaces: Vec<PathBuf>,
    /// The command to run, program first.
    pub argv: Vec<String>,
    /// The directory to run it in.
    pub cwd: Option<PathBuf>,
    /// Environment the command needs.
    pub env: BTreeMap<String, String>,
    /// Commands to run first.
    pub setup: Vec<Vec<String>>,
    /// What the caller should know about this resume.
    pub notes: Vec<String>,
}

/// How a JSONL runtime reads its lines: the state it keeps across lines, the blocks of one line,
/// and the session metadata at the end.
pub(crate) trait LineReader {
    /// What is carried from line to line (ids, times, titles).
    type State: Default;
    /// The runtime read.
    const RUNTIME: Runtime;
    /// What the input is called in errors ("a Claude Code transcript").
    const WHAT: &'static str;
    /// The blocks of one line; malformed lines become `error` blocks, or with `strict` an error.
    fn line_blocks(line: &mut Line<'_>, state: &mut Self::State, strict: bool) -> Result<Vec<Block>>;
    /// True when a record is this runtime's (from then on, lines are no longer checked for being
    /// another runtime's).
    fn is_own(record: &Value) -> bool;
}

/// The import loop of every JSONL runtime: reads each line into blocks, refuses input whose leading
/// lines are another runtime's records, skips the lines an earlier import of a grown file stored,
/// and hands the final state to `finish` for the session's id, title and cwd.
pub(crate) fn import_lines<R: LineReader>(run: ImportRun<'_>, finish: impl FnOnce(R::State) -> ImportedMeta) -> Result<Session> {
    import_lines_with::<R>(run, R::State::default(), finish)
}

/// [`import_lines`] from a given state (what an importer learnt before the loop, such as Pi's
/// active branch from a first pass over the input).
pub(crate) fn import_lines_with<R: LineReader>(run: ImportRun<'_>, state: R::State, finish: impl FnOnce(R::State) -> ImportedMeta) -> Result<Session> {
    let ImportRun { store, source, options, target, foreign } = run;
    let mut lines = Lines::open(source)?.limited(options.max_record_bytes);
    if target.records_source() {
        lines = lines.recording(target.holds_partial_lines());
    }
    store.import_to(target, |sink| {
        let mut state = state;
        // Until a line reads as this runtime's, each line is checked for being another runtime's record.
        let mut settled = false;
        while let Some(mut line) = lines.next_line()? {
            if !settled {
                if let Ok(value) = &line.parsed {
                    settled = R::is_own(value);
                    if let Some(other) = foreign(value, R::RUNTIME).filter(|_| !settled) {
                        let other = other.display_name();
                        return Err(Error::InvalidInput {
                            message: format!("this is {other} history, not {} (the line is a {other} record)", R::WHAT),
                            location: Location { line: Some(line.number), ..Default::default() },
                        });
                    }
                }
            }
            let blocks = R::line_blocks(&mut line, &mut state, options.strict)?;
            if sink.skips(line.number) {
                continue;
            }
            for block in blocks {
                sink.push(block).map_err(|e| at_line(e, &line))?;
            }
        }
        let mut meta = finish(state);
        meta.read = lines.read_record();
        Ok(meta)
    })
}

// What an adapter says of a compaction (`native/compaction.rs` resolves it against the store).

/// What a runtime's compaction record says, as its adapter reads it.
#[derive(Debug)]
pub(crate) struct Found {
    /// Where in the window the summary is (0: in the boundary block itself).
    pub summary_at: usize,
    /// The summary, as the runtime sends it to its model.
    pub summary: String,
    /// The blocks that stand in, in a replay rebuilt from canonical blocks, for everything before
    /// the boundary (the preserved blocks follow them): the summary as a message another runtime
    /// accepts. Their ids and seqs are set here.
    pub stand_in: Vec<Block>,
    /// Where in the window the blocks are that the stand-in replaces (the boundary record, the
    /// summary): they are not replayed again after it.
    pub replaced: Vec<usize>,
    /// What the runtime keeps sending verbatim from before the boundary.
    pub preserved: Preserved,
    /// What started it.
    pub trigger: crate::model::Trigger,
    /// The conversation's size when it was compacted, as the runtime reported it.
    pub tokens_before: Option<u64>,
    /// What a replay into another runtime loses of it, when it loses something (a summary only
    /// the runtime's own server can read): a `degraded` report entry.
    pub loss: Option<String>,
}

/// Records before a boundary that the runtime keeps, named as [`Adapter::record_key`] names them.
#[derive(Debug, Default)]
pub(crate) enum Preserved {
    /// Nothing.
    #[default]
    None,
    /// These records (each with the blocks that continue it), in order.
    Records(Vec<String>),
    /// The records from the first through the second, and every block between them.
    Segment(String, String),
    /// Every block from this record up to the boundary.
    From(String),
}

/// Text that a block recording a compaction holds, in one of its stored columns.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Needle {
    /// In the native passthrough, as the store writes it (compact JSON).
    Native(&'static str),
    /// In the content.
    Content(&'static str),
}

/// How many blocks, the compaction's own block first, an adapter is shown to read a compaction
/// (its summary follows the boundary within them).
pub(crate) const WINDOW: u64 = 64;

/// The native record a block keeps whole (`native.data.record`), if it keeps one.
pub(crate) fn record_of(block: &Block) -> Option<&serde_json::Map<String, serde_json::Value>> {
    block.native.as_ref()?.data.get("record")?.as_object()
}

/// A user text block that stands in for the history before a compaction: `text`, made by no
/// runtime (so that no runtime's harness rules apply to it).
pub(crate) fn stand_in_text(text: String) -> Block {
    Block::text(crate::model::Actor::User, text)
}

/// The end of the record that starts at `blocks[i]`: the next block that starts another record
/// (blocks that continue a record have no key, or, captured from a live event, the same key).
pub(crate) fn record_end(adapter: &dyn Adapter, blocks: &[Block], i: usize) -> usize {
    let key = adapter.record_key(&blocks[i]);
    blocks[i + 1..].iter().position(|b| adapter.starts_record(b) && adapter.record_key(b) != key).map_or(blocks.len(), |n| i + 1 + n)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An adapter that implements only what every runtime must.
    struct Minimal;

    impl Adapter for Minimal {
        fn runtime(&self) -> Runtime {
            Runtime::OpenCode
        }
        fn history_name(&self) -> &'static str {
            "a minimal file"
        }
        fn program(&self) -> &'static str {
            "minimal"
        }
        fn sniff_record(&self, _: &Map<String, Value>) -> bool {
            false
        }
        fn import(&self, run: ImportRun<'_>) -> Result<Session> {
            run.store.create_session(crate::store::NewSession::new())
        }
        fn export(&self, _: &Session, _: Vec<Block>, _: Format, _: &Options, _: &mut Vec<ReportEntry>) -> Result<Value> {
            Ok(Value::Null)
        }
    }

    #[test]
    fn capabilities_an_adapter_lacks_are_unsupported() {
        let store = Store::open_in_memory().unwrap();
        let session = store.create_session(crate::store::NewSession::new()).unwrap();
        let err = Minimal.event_blocks(&session, &Value::Null).unwrap_err();
        assert_eq!(err.code(), "UNSUPPORTED");
        assert_eq!(err.to_string(), "OpenCode events cannot be ingested");
        let err = Minimal.resume(&session, Vec::new(), Splices::default(), &ResumeOptions::default(), &mut Vec::new()).err().unwrap();
        assert_eq!(err.code(), crate::error::Code::Unsupported);
        assert!(!Minimal.appends_lines() && !Minimal.sniff_header(b"SQLite format 3") && !Minimal.sniff_document("{}"));
        assert!(Minimal.after_write(&mut crate::native::types::ResumePlan {
            session_id: String::new(), files: Vec::new(), argv: Vec::new(), cwd: None,
            env: BTreeMap::new(), setup: Vec::new(), ran: Vec::new(), notes: Vec::new(), replay: Default::default(),
        }, &ResumeOptions::default()).is_ok());
    }
}
