//! The adapter trait: what every runtime implements, one folder each (`native/<runtime>/`), and the
//! shared steps the adapters call. The pipeline (`native/pipeline.rs`, `native/imports.rs`) drives every conversion
//! through this trait — replay rules, then the adapter, then the strict check, the atomic private write and
//! the binding — so no runtime decides those steps for itself.
//!
//! Every adapter imports and exports. What only some runtimes can do (import a database of many
//! sessions, capture live events, write text exports from stored text, resume, run under the host)
//! each adapter declares in its [`Capabilities`]; the pipeline asks for a capability before it uses
//! it and answers `UNSUPPORTED` for one the runtime lacks. How detection recognises a runtime's
//! files is declared the same way, in its [`Sniffers`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::error::{Error, Location, Result};
use crate::model::{Block, Format, Runtime};
use crate::native::common::at_line;
use crate::native::jsonl::{Line, Lines};
use crate::native::live::{Live, LiveSpec, Sink};
use crate::native::splice::{Lighten, NativeText, Splices};
use crate::native::types::{Options, ResumeOptions, ResumePlan, Source};
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

    /// How detection (`native/detect.rs`) recognises this runtime's files and records.
    fn sniffers(&self) -> Sniffers;

    /// What this adapter can do beyond importing and exporting. Default: nothing more.
    fn capabilities(&self) -> Capabilities<'_> {
        Capabilities::default()
    }

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
    fn host_resume(&self, _resume: &mut ResumeOptions, _env: &BTreeMap<String, String>, _program: &Path, _model: Option<&str>) {}

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

    /// Imports native history into `run.target`, atomically. An adapter whose history is not read
    /// line by line (so [`Capabilities::appends_lines`] is false) only ever gets a new session as
    /// its target, named by `run.options.session_id` when given.
    fn import(&self, run: ImportRun<'_>) -> Result<Session>;

    /// Writes `blocks` (the session's, after the replay rules) in `format`, with what it loses,
    /// alters or adds.
    fn export(&self, session: &Session, blocks: Vec<Block>, format: Format, options: &Options) -> Result<Reported<Value>>;
}

/// What a conversion made, and the report entries of what it lost, altered or added on the way.
pub(crate) struct Reported<T> {
    pub value: T,
    pub report: Vec<ReportEntry>,
}

/// What an adapter can do beyond importing and exporting: each capability it has, as the part of
/// the adapter that does it (`None`: the runtime lacks it, and the pipeline says `UNSUPPORTED`).
#[derive(Clone, Copy, Default)]
pub(crate) struct Capabilities<'a> {
    /// A file of this runtime that grew by whole lines can be imported by its new lines
    /// ([`ImportTarget::append`]); otherwise a changed file is imported afresh.
    pub appends_lines: bool,
    /// Imports every session of a database file of this runtime (`import_database`).
    pub database: Option<&'a dyn DatabaseImport>,
    /// Live capture (`ingest`).
    pub events: Option<&'a dyn EventCapture>,
    /// Text exports written from the stored text of the runtime's records.
    pub stored_text: Option<&'a dyn StoredTextExport>,
    /// The files and command a resume needs (`prepare_resume`).
    pub resume: Option<&'a dyn Resume>,
    /// The runtime's long-lived mode, driven by the host.
    pub driver: Option<&'a dyn Driver>,
}

/// Imports a database file of many sessions (one the runtime's header sniffer recognises).
pub(crate) trait DatabaseImport {
    /// Imports every session of the database at `path` that the store does not hold yet, most
    /// recently updated first.
    fn import_database(&self, store: &Store, path: &Path) -> Result<Vec<Session>>;
}

/// Live capture: what the runtime prints while it runs, turned into blocks.
pub(crate) trait EventCapture {
    /// The blocks a live event completes (often none while deltas accumulate).
    fn event_blocks(&self, session: &Session, event: &Value) -> Result<Vec<Block>>;
}

/// Text exports written from the stored text of the runtime's records ([`crate::native::splice`])
/// rather than serialized from [`Adapter::export`]'s values.
pub(crate) trait StoredTextExport {
    /// How blocks are readied when exports in `format` are written so; `None` for a format that is
    /// not (its text serializes [`Adapter::export`]'s value). [`StoredTextExport::export_text`] and
    /// [`Resume::resume`] then get the blocks readied so and their splices.
    fn splices(&self, format: Format) -> Option<Lighten>;

    /// Like [`Adapter::export`], ready to be written as text, from the blocks readied as
    /// [`StoredTextExport::splices`] says for `format`.
    fn export_text(&self, session: &Session, blocks: Vec<Block>, splices: Splices, format: Format, options: &Options) -> Result<Reported<NativeText>>;
}

/// Resuming a session in the runtime from files written for it.
pub(crate) trait Resume {
    /// The native file a resume needs and how to run it, from `blocks` (after the replay rules),
    /// with what it loses; nothing is written yet. `splices` is empty unless the blocks were
    /// readied as [`StoredTextExport::splices`] says for the resume's format. `replayed` is what
    /// the replay rules reported, for an adapter that checks strict mode before it is done.
    fn resume(&self, session: &Session, blocks: Vec<Block>, splices: Splices, options: &ResumeOptions, replayed: &[ReportEntry]) -> Result<Reported<ResumeFiles>>;

    /// Runs what the resume needs once its file is written (OpenCode: `opencode import` when asked);
    /// records what ran in `plan`. Default: nothing.
    fn after_write(&self, _plan: &mut ResumePlan, _options: &ResumeOptions) -> Result<()> {
        Ok(())
    }
}

/// The runtime's long-lived mode, for the host ([`crate::native::live`]).
pub(crate) trait Driver {
    /// Starts it for one session; what happens goes to `sink`.
    fn live(&self, spec: LiveSpec, sink: Sink) -> Result<Box<dyn Live>>;

    /// What would keep the runtime from starting with `spec`, as an error saying what to do, found
    /// before the host writes or starts anything. Default: nothing.
    fn check(&self, _spec: &LiveSpec) -> Result<()> {
        Ok(())
    }
}

impl<'a> dyn Adapter + 'a {
    /// The adapter's import of database files, or `UNSUPPORTED` naming `path`.
    pub(crate) fn database(&self, path: &Path) -> Result<&dyn DatabaseImport> {
        self.capabilities()
            .database
            .ok_or_else(|| Error::Unsupported(format!("{} is not a {} database", path.display(), self.runtime().display_name())))
    }

    /// The adapter's live capture, or `UNSUPPORTED`.
    pub(crate) fn events(&self) -> Result<&dyn EventCapture> {
        self.capabilities().events.ok_or_else(|| Error::Unsupported(format!("{} events cannot be ingested", self.runtime().display_name())))
    }

    /// The adapter's text export from stored text for `format`, with how its blocks are readied;
    /// `None` when `format`'s text serializes [`Adapter::export`]'s value.
    pub(crate) fn stored_text(&self, format: Format) -> Option<(&dyn StoredTextExport, Lighten)> {
        let text = self.capabilities().stored_text?;
        Some((text, text.splices(format)?))
    }

    /// The adapter's resume, or `UNSUPPORTED`.
    pub(crate) fn resumes(&self) -> Result<&dyn Resume> {
        self.capabilities()
            .resume
            .ok_or_else(|| Error::Unsupported(format!("{} sessions cannot be resumed from sna-history", self.runtime().display_name())))
    }

    /// The adapter's driver of the runtime's long-lived mode, or `UNSUPPORTED`.
    pub(crate) fn driver(&self) -> Result<&dyn Driver> {
        self.capabilities().driver.ok_or_else(|| Error::Unsupported(format!("{} cannot be run by the host", self.runtime().display_name())))
    }
}

/// A test of one JSON record (a JSONL line, or a whole document).
pub(crate) type RecordTest = fn(&Map<String, Value>) -> bool;

/// How detection (`native/detect.rs`, the only place that decides) recognises one runtime's files
/// and records; built with [`Sniffers::new`] and the `with_` methods for the tests that apply.
#[derive(Clone, Copy)]
pub(crate) struct Sniffers {
    record: RecordTest,
    claims: Option<RecordTest>,
    output: Option<RecordTest>,
    header: Option<fn(&[u8]) -> bool>,
    document: Option<fn(&str) -> bool>,
}

impl Sniffers {
    /// Sniffers that know the runtime's records by `record`: true when one JSON record is
    /// unmistakably this runtime's, which detection asks and an import of this runtime takes as the
    /// sign that its input is its own.
    pub(crate) const fn new(record: RecordTest) -> Sniffers {
        Sniffers { record, claims: None, output: None, header: None, document: None }
    }

    /// With `claims`: true when a record is enough like this runtime's that another runtime's
    /// import refuses it (naming this runtime) rather than reading it. Without it, the record test.
    pub(crate) const fn with_claims(self, claims: RecordTest) -> Sniffers {
        Sniffers { claims: Some(claims), ..self }
    }

    /// With `output`: true when a record is what this runtime prints while it runs (an event stream
    /// such as Gemini CLI's `-o stream-json` or Pi's `--mode json`), not its history.
    pub(crate) const fn with_output(self, output: RecordTest) -> Sniffers {
        Sniffers { output: Some(output), ..self }
    }

    /// With `header`: true when the first bytes of a file are this runtime's container format (a
    /// database header).
    pub(crate) const fn with_header(self, header: fn(&[u8]) -> bool) -> Sniffers {
        Sniffers { header: Some(header), ..self }
    }

    /// With `document`: true when a text no line of which reads as a record is this runtime's
    /// document spread over several lines (a pretty-printed JSON document).
    pub(crate) const fn with_document(self, document: fn(&str) -> bool) -> Sniffers {
        Sniffers { document: Some(document), ..self }
    }

    /// True when one JSON record is unmistakably this runtime's.
    pub(crate) fn record(&self, record: &Map<String, Value>) -> bool {
        (self.record)(record)
    }

    /// True when another runtime's import should refuse `record` as this runtime's.
    pub(crate) fn claims(&self, record: &Map<String, Value>) -> bool {
        self.claims.unwrap_or(self.record)(record)
    }

    /// True when `record` is what this runtime prints while it runs: detection gives no runtime to
    /// a file whose first records include one, so that no adapter half-reads it.
    pub(crate) fn output(&self, record: &Map<String, Value>) -> bool {
        self.output.is_some_and(|output| output(record))
    }

    /// True when a file's first bytes are this runtime's container format, checked before any
    /// record.
    pub(crate) fn header(&self, head: &[u8]) -> bool {
        self.header.is_some_and(|header| header(head))
    }

    /// True when a text is this runtime's document spread over several lines, checked last.
    pub(crate) fn document(&self, text: &str) -> bool {
        self.document.is_some_and(|document| document(text))
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

/// A session file read as it grows (a live driver): the importer's state carried from one read
/// of new lines to the next.
pub(crate) struct Growth<R: LineReader> {
    state: R::State,
}

impl<R: LineReader> Default for Growth<R> {
    fn default() -> Self {
        Growth { state: R::State::default() }
    }
}

impl<R: LineReader> Growth<R> {
    /// The blocks of `bytes`, whole lines that follow those read before: the blocks an import of
    /// the whole file gives for them.
    pub(crate) fn blocks(&mut self, bytes: Vec<u8>) -> Result<Vec<Block>> {
        let mut lines = Lines::open(Source::Bytes(bytes))?;
        let mut blocks = Vec::new();
        while let Some(mut line) = lines.next_line()? {
            blocks.extend(R::line_blocks(&mut line, &mut self.state, false)?);
        }
        Ok(blocks)
    }

    /// The blocks of the complete lines the file at `path` gained past `offset`, which moves past
    /// them; none when it cannot be read (a partial last line waits for the next read).
    pub(crate) fn read_grown(&mut self, path: &Path, offset: &mut u64) -> Vec<Block> {
        use std::io::{Read, Seek, SeekFrom};
        let Ok(mut file) = std::fs::File::open(path) else { return Vec::new() };
        let mut bytes = Vec::new();
        if file.seek(SeekFrom::Start(*offset)).is_err() || file.read_to_end(&mut bytes).is_err() {
            return Vec::new();
        }
        bytes.truncate(crate::native::jsonl::complete_len(&bytes));
        if bytes.is_empty() {
            return Vec::new();
        }
        *offset += bytes.len() as u64;
        self.blocks(bytes).unwrap_or_default()
    }
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

    /// An adapter that implements only what every runtime must, and a resume when `resumes`.
    struct Minimal {
        resumes: bool,
    }

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
        fn sniffers(&self) -> Sniffers {
            Sniffers::new(|_| false)
        }
        fn capabilities(&self) -> Capabilities<'_> {
            Capabilities { resume: self.resumes.then_some(self as &dyn Resume), ..Capabilities::default() }
        }
        fn import(&self, run: ImportRun<'_>) -> Result<Session> {
            run.store.create_session(crate::store::NewSession::new())
        }
        fn export(&self, _: &Session, _: Vec<Block>, _: Format, _: &Options) -> Result<Reported<Value>> {
            Ok(Reported { value: Value::Null, report: Vec::new() })
        }
    }

    impl Resume for Minimal {
        fn resume(&self, _: &Session, _: Vec<Block>, _: Splices, _: &ResumeOptions, _: &[ReportEntry]) -> Result<Reported<ResumeFiles>> {
            Err(Error::invalid("a minimal session writes no file"))
        }
    }

    #[test]
    fn capabilities_an_adapter_lacks_are_unsupported() {
        let minimal: &dyn Adapter = &Minimal { resumes: false };
        let err = minimal.events().err().unwrap();
        assert_eq!(err.code(), "UNSUPPORTED");
        assert_eq!(err.to_string(), "OpenCode events cannot be ingested");
        let err = minimal.resumes().err().unwrap();
        assert_eq!(err.code(), crate::error::Code::Unsupported);
        assert_eq!(err.to_string(), "OpenCode sessions cannot be resumed from sna-history");
        assert_eq!(minimal.driver().err().unwrap().to_string(), "OpenCode cannot be run by the host");
        let err = minimal.database(Path::new("/home/dev/x.db")).err().unwrap();
        assert_eq!((err.code(), err.to_string()), (crate::error::Code::Unsupported, "/home/dev/x.db is not a OpenCode database".to_string()));
        assert!(minimal.stored_text(Format::Session).is_none());
        assert!(!minimal.capabilities().appends_lines && !minimal.sniffers().header(b"SQLite format 3") && !minimal.sniffers().document("{}"));
        // A declared capability is handed out; a resume does nothing after the write by default.
        let resumable: &dyn Adapter = &Minimal { resumes: true };
        assert!(resumable.resumes().unwrap().after_write(&mut crate::native::types::ResumePlan {
            session_id: String::new(), files: Vec::new(), argv: Vec::new(), cwd: None,
            env: BTreeMap::new(), setup: Vec::new(), ran: Vec::new(), notes: Vec::new(), replay: Default::default(),
        }, &ResumeOptions::default()).is_ok());
    }

    #[test]
    fn sniffers_fall_back_to_the_record_test() {
        let own: RecordTest = |record| record.contains_key("own");
        let plain = Sniffers::new(own);
        let mut record = Map::new();
        record.insert("own".into(), Value::Null);
        assert!(plain.record(&record) && plain.claims(&record), "without a claims test, the record test claims");
        assert!(!plain.output(&record) && !plain.header(b"own") && !plain.document("own"));
        let full = plain.with_claims(|r| r.contains_key("like")).with_output(|r| r.contains_key("event")).with_header(|h| h.starts_with(b"DB")).with_document(|t| t.starts_with('{'));
        assert!(full.record(&record) && !full.claims(&record));
        record.insert("event".into(), Value::Null);
        assert!(full.output(&record) && full.header(b"DB1") && full.document("{\n}"));
    }
}
