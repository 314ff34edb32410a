//! Conversion between canonical blocks and each runtime's native shape: the one pipeline every
//! path goes through.
//!
//! The entry points — [`Session::to_native`], [`Session::export`], [`Store::import_native`],
//! [`Store::import_file`], [`Store::import_source`], [`Session::ingest`] and
//! [`Session::prepare_resume`] — check the runtime, the format and the options, apply the replay
//! rules ([`crate::replay`]), hand the work to the runtime's `Adapter` (`adapter.rs`; one folder per
//! runtime, listed in `registry.rs`), then apply the strict check, write resume files atomically
//! and privately, and record the binding. No runtime is named outside its own folder, the registry
//! and detection.

use std::path::Path;

use serde_json::Value;

use crate::error::{Error, Result};
use crate::json::json_type;
use crate::model::{Block, Runtime};
use crate::report::{Report, ReportAction, ReportEntry};
use crate::store::{source_sha256, FileStat, ImportTarget, Noted, Session, SourceFile, Store};
use common::check_strict;
use jsonl::check_readable;
use splice::NativeText;

mod adapter;
pub mod claude_code;
pub mod codex;
pub(crate) mod common;
pub(crate) mod compaction;
pub mod detect;
pub mod gemini_cli;
pub(crate) mod jsonl;
pub mod live;
pub mod opencode;
pub mod pi;
pub(crate) mod splice;
pub(crate) mod registry;
mod types;

pub use detect::detect_runtime;
pub use jsonl::MAX_RECORD_BYTES;
pub use types::{
    CommandOutcome, Export, ForeignReasoning, Options, ReplayShape, ResumeOptions, ResumePlan, Source, SourceImport, SourceOutcome,
};

use adapter::{Adapter, ImportRun, Reported, StoredTextExport};
use registry::adapter;

/// A file's source key, how it looks now, and its session and record if it was imported.
type SourceLook = (String, FileStat, Option<(Session, crate::store::SourceRecord)>);

pub(crate) use common::write_private;

/// The blocks an export of `session` in `format` reads, after the replay rules and redaction,
/// with their splices when the export is written from stored text (`None`: it reads values,
/// because the runtime does not write that format from stored text, or redaction, which rewrites
/// values, is asked for).
fn export_blocks<'a>(session: &Session, adapter: &'a dyn Adapter, format: crate::model::Format, options: &Options) -> Result<Replay<'a>> {
    let runtime = adapter.runtime();
    match adapter.stored_text(format).filter(|_| !options.redact) {
        Some((text, lighten)) => {
            let bound = replay_bound(session, runtime, options)?;
            let mut shape = ReplayShape { from_seq: bound.from, compaction_seq: (!bound.entries.is_empty()).then_some(bound.from), folded: None };
            let (mut blocks, splices, mut entries) = crate::replay::load_raw(session, runtime, is_harness, lighten, bound)?;
            shape.folded = fit_budget(session, runtime, options, shape.from_seq, &mut blocks, &mut entries)?;
            Ok(Replay { blocks, spliced: Some((text, splices)), entries, shape })
        }
        None => {
            let (blocks, entries, shape) = value_blocks(session, runtime, options)?;
            Ok(Replay { blocks, spliced: None, entries, shape })
        }
    }
}

/// What an export reads: the blocks after the replay rules, their splices (with the adapter's text
/// export) when the export is written from stored text, what the rules reported, and what shaped
/// the replay.
struct Replay<'a> {
    blocks: Vec<Block>,
    spliced: Option<(&'a dyn StoredTextExport, splice::Splices)>,
    entries: Vec<ReportEntry>,
    shape: ReplayShape,
}

/// The blocks an export of `session` to `runtime` reads as values: after the replay rules, and
/// redacted when the options ask.
fn value_blocks(session: &Session, runtime: Runtime, options: &Options) -> Result<(Vec<Block>, Vec<ReportEntry>, ReplayShape)> {
    let bound = replay_bound(session, runtime, options)?;
    let mut shape = ReplayShape { from_seq: bound.from, compaction_seq: (!bound.entries.is_empty()).then_some(bound.from), folded: None };
    let (mut blocks, mut entries) = crate::replay::load(session, runtime, is_harness, bound)?;
    if options.redact {
        entries.extend(crate::redact::redact_blocks(&mut blocks));
    }
    shape.folded = fit_budget(session, runtime, options, shape.from_seq, &mut blocks, &mut entries)?;
    Ok((blocks, entries, shape))
}

/// The answer a replay keeps room for in the target's window, in tokens.
const ANSWER_TOKENS: u64 = 16_384;

/// The budget of a replay of `blocks` into `runtime`: the `context_window` option, else the target
/// model's window from the model table when the replay is rebuilt for another runtime (some
/// block comes from another runtime, or none from this one); `None`: no bound.
fn budget(runtime: Runtime, options: &Options, blocks: &[Block]) -> Result<Option<crate::replay::budget::Budget>> {
    let reserve = adapter(runtime).harness_bytes().1.div_ceil(crate::replay::budget::BYTES_PER_TOKEN) + ANSWER_TOKENS;
    if let Some(window) = options.context_window {
        return Ok(Some(crate::replay::budget::Budget { window, reserve, source: "the context_window option".into() }));
    }
    let origins = || blocks.iter().filter_map(crate::replay::origin);
    let rebuilt = origins().any(|o| o != runtime) || !origins().any(|o| o == runtime);
    let Some(model) = options.target_model.as_deref().filter(|_| rebuilt) else { return Ok(None) };
    let table = crate::model::ModelTable::with_user_file(options.models.as_deref().map(Path::new))?;
    let Some(limits) = table.limits(model) else { return Ok(None) };
    let files = if table.files.is_empty() { String::new() } else { format!(" over {}", table.files.join(", ")) };
    Ok(Some(crate::replay::budget::Budget {
        window: limits.max_input.min(limits.context_window),
        reserve,
        source: format!("{model} in the model table of {}{files}", table.date),
    }))
}

/// Folds the oldest turns of a replay into `runtime` that does not fit its budget; returns the
/// seqs folded.
fn fit_budget(session: &Session, runtime: Runtime, options: &Options, from: u64, blocks: &mut Vec<Block>, entries: &mut Vec<ReportEntry>) -> Result<Option<(u64, u64)>> {
    let Some(budget) = budget(runtime, options, blocks)? else { return Ok(None) };
    let reported = session
        .reported_prompts(from)?
        .into_iter()
        .map(|(seq, reporter, tokens)| {
            // What the reporting runtime added itself, counted low (5 bytes a token), so that the
            // conversation's size errs high.
            let harness = reporter.parse().map_or(0, |r: Runtime| adapter(r).harness_bytes().0 / 5);
            (seq, tokens.saturating_sub(harness))
        })
        .collect();
    let is_turn_start = |block: &Block| {
        block.actor == crate::model::Actor::User
            && block.kind == crate::model::Kind::Text
            && !block.content.trim().is_empty()
            && !is_harness(block, crate::replay::origin(block).unwrap_or(runtime))
    };
    let fit = crate::replay::budget::Fit { budget, reported, is_turn_start: &is_turn_start, summarizer: options.summarizer.as_ref(), session: session.id() };
    Ok(crate::replay::budget::fit(blocks, fit, entries)?.map(|folded| folded.seqs))
}

/// Where a replay of `session` into `runtime` starts: at the latest compaction of another runtime,
/// or of this one when the format is rebuilt from blocks (unless the options say
/// `compaction: none`), else at the first block.
fn replay_bound(session: &Session, runtime: Runtime, options: &Options) -> Result<crate::replay::Bound> {
    let rebuilt = adapter(runtime).rebuilds(options.format_for(runtime)?);
    let Some(cut) = compaction::cut_for(session, runtime, options.compaction, rebuilt)? else { return Ok(crate::replay::Bound::default()) };
    let entries = cut.entries();
    Ok(crate::replay::Bound { from: cut.compaction.boundary_seq, prefix: cut.prefix, replaced: cut.replaced, entries })
}

/// True for a block that is `runtime`'s harness context rather than conversation: what the
/// runtime itself adds to every conversation (instructions, environment, reminders), which another
/// runtime adds again in its own form. The runtime's adapter decides.
pub fn is_harness(block: &Block, runtime: Runtime) -> bool {
    adapter(runtime).is_harness(block)
}

impl Session {
    /// The session in `runtime`'s native shape (`options.format`, else the runtime's default).
    pub fn to_native(&self, runtime: Runtime, options: &Options) -> Result<Value> {
        Ok(self.export(runtime, options)?.data)
    }

    /// Like [`Session::to_native`], with the fidelity report. With `options.strict`, any loss is a
    /// `LOSSY` error instead.
    pub fn export(&self, runtime: Runtime, options: &Options) -> Result<Export> {
        let format = options.format_for(runtime)?;
        let (blocks, mut entries, _) = value_blocks(self, runtime, options)?;
        let Reported { value: data, report } = adapter(runtime).export(self, blocks, format, options)?;
        entries.extend(report);
        check_strict(options, &entries)?;
        Ok(Export { data, report: Report { entries } })
    }

    /// Writes the session in `runtime`'s native format (`options.format`, else the runtime's
    /// default) to `out`, as the text of a file of that format: the bytes
    /// [`Format::to_text`](crate::model::Format::to_text) gives for [`Session::to_native`], but
    /// written from the stored text of imported records where the runtime allows it, without
    /// parsing them into values. Returns the fidelity report; with `options.strict`, any loss is a
    /// `LOSSY` error and nothing is written.
    ///
    /// Memory: the session's blocks as stored; JSONL text is written as it is made (a document
    /// format is made whole, then written).
    pub fn export_to(&self, out: impl std::io::Write, runtime: Runtime, options: &Options) -> Result<Report> {
        let (text, report) = self.native_text(runtime, options)?;
        text.write_buffered(out)?;
        Ok(report)
    }

    /// Like [`Session::export_to`], into the file at `path`, created or replaced whole: the text
    /// is made first (a `LOSSY` refusal writes nothing), then written to a new temporary file beside
    /// the file (`path`'s target when it is a link), which keeps an existing file's permissions
    /// and is renamed over it once complete, so a failed write leaves the file as it was. A path
    /// that is not a regular file (`/dev/stdout`, a pipe) is written to as it is.
    pub fn export_to_path(&self, path: impl AsRef<Path>, runtime: Runtime, options: &Options) -> Result<Report> {
        let path = path.as_ref();
        let (text, report) = self.native_text(runtime, options)?;
        let target = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        let existing = std::fs::metadata(&target).ok();
        if existing.as_ref().is_some_and(|meta| !meta.is_file()) {
            let file = std::fs::OpenOptions::new()
                .write(true)
                .open(&target)
                .map_err(|source| Error::Io { context: format!("cannot write {}", path.display()), source })?;
            text.write_buffered(file)?;
            return Ok(report);
        }
        #[cfg(unix)]
        let mode = existing.map(|meta| std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o7777);
        #[cfg(not(unix))]
        let mode = None;
        common::replace_whole(&target, mode, |file| text.write_buffered(file).map(drop))?;
        Ok(report)
    }

    /// The session as the text of a file in `runtime`'s native format: what [`Session::export_to`]
    /// writes.
    pub fn to_native_text(&self, runtime: Runtime, options: &Options) -> Result<String> {
        self.native_text(runtime, options)?.0.into_string()
    }

    /// Like [`Session::export`], the data as one compact JSON text (a JSONL format's records as an
    /// array) instead of values: the same JSON `serde_json` writes for `export`'s data, made from
    /// the stored text of imported records where it can be. What a binding hands to its language's
    /// own JSON parser, which builds that language's objects faster than a value-by-value
    /// conversion.
    pub fn export_json(&self, runtime: Runtime, options: &Options) -> Result<(String, Report)> {
        let (text, report) = self.native_text(runtime, options)?;
        Ok((text.into_json()?, report))
    }

    fn native_text(&self, runtime: Runtime, options: &Options) -> Result<(NativeText, Report)> {
        let format = options.format_for(runtime)?;
        let adapter = adapter(runtime);
        let Replay { blocks, spliced, mut entries, .. } = export_blocks(self, adapter, format, options)?;
        let Reported { value: text, report } = match spliced {
            Some((text, splices)) => text.export_text(self, blocks, splices, format, options)?,
            None => {
                let Reported { value, report } = adapter.export(self, blocks, format, options)?;
                Reported { value: NativeText::from_value(format, value), report }
            }
        };
        entries.extend(report);
        check_strict(options, &entries)?;
        Ok((text, Report { entries }))
    }

    /// Appends the blocks a live event of `runtime` completes; returns them (often none, while deltas
    /// accumulate).
    pub fn ingest(&self, runtime: Runtime, event: &Value) -> Result<Vec<Block>> {
        if !event.is_object() {
            return Err(Error::invalid(format!("an event must be an object, not {}", json_type(event))));
        }
        let blocks = adapter(runtime).events()?.event_blocks(self, event)?;
        self.extend(blocks)
    }

    /// Writes the native files `runtime` needs to resume this session and returns how to run it.
    /// Records a binding of the written native session through the last block.
    pub fn prepare_resume(&self, runtime: Runtime, options: &ResumeOptions) -> Result<ResumePlan> {
        let format = options.options.format_for(runtime)?;
        let adapter = adapter(runtime);
        let Replay { blocks, spliced, mut entries, shape: replay } = export_blocks(self, adapter, format, &options.options)?;
        let last_seq = self.len()?.checked_sub(1);
        let resume = adapter.resumes()?;
        let splices = spliced.map(|(_, splices)| splices).unwrap_or_default();
        let Reported { value: files, report } = resume.resume(self, blocks, splices, options, &entries)?;
        entries.extend(report);
        check_strict(&options.options, &entries)?;
        for old in &files.replaces {
            std::fs::remove_file(old).map_err(|source| Error::Io { context: format!("cannot replace {}", old.display()), source })?;
        }
        write_private(&files.file, files.text.as_bytes())?;
        let mut plan = ResumePlan {
            session_id: files.native_id,
            files: vec![files.file],
            argv: files.argv,
            cwd: files.cwd,
            env: files.env,
            setup: files.setup,
            ran: Vec::new(),
            notes: files.notes,
            replay,
        };
        resume.after_write(&mut plan, options)?;
        if let Some(last_seq) = last_seq {
            self.bind(runtime, &plan.session_id, last_seq)?;
        }
        Ok(plan)
    }

    /// What an import kept but could not read: one `malformed` entry per native line stored as an
    /// `error` block, naming the line and the reason, and one `degraded` entry per line whose text
    /// had to be repaired to be read (lone UTF-16 surrogates read as U+FFFD).
    pub fn import_report(&self) -> Result<Report> {
        // Only error blocks and blocks whose native text names `sanitized` can hold an entry.
        let candidates = self.blocks_where(0, u64::MAX, "kind = 'error' OR native LIKE '%\"sanitized\"%'")?;
        Ok(report_of(&candidates))
    }

    /// The import report of the blocks at `seqs` (what one import noted).
    fn report_at(&self, seqs: &[u64]) -> Result<Report> {
        let mut blocks = Vec::with_capacity(seqs.len());
        for &seq in seqs {
            blocks.extend(self.blocks_range(seq, seq + 1)?);
        }
        Ok(report_of(&blocks))
    }
}

/// The report entries `blocks` carry: a `degraded` entry for native data marked `sanitized`, a
/// `malformed` entry for an `error` block holding a line that did not read.
fn report_of(blocks: &[Block]) -> Report {
    let mut entries = Vec::new();
    for block in blocks {
        let Some(native) = &block.native else { continue };
        if let Some(line) = native.data.get("sanitized").and_then(|s| s.get("line")).and_then(Value::as_u64) {
            entries.push(ReportEntry {
                action: ReportAction::Degraded,
                block_id: Some(block.id.clone()),
                message: format!("{} line {line}: lone UTF-16 surrogates read as U+FFFD", native.runtime),
            });
        }
        if block.kind != crate::model::Kind::Error {
            continue;
        }
        let Some(info) = native.data.get("malformed") else { continue };
        let line = info.get("line").and_then(Value::as_u64).unwrap_or(0);
        let reason = info.get("reason").and_then(Value::as_str).unwrap_or("malformed");
        entries.push(ReportEntry {
            action: ReportAction::Malformed,
            block_id: Some(block.id.clone()),
            message: format!("{} line {line}: {reason}", native.runtime),
        });
    }
    Report { entries }
}

impl Store {
    /// Imports native history of `runtime` as a new session, atomically: on any error nothing is
    /// stored. Malformed records are kept as `error` blocks (see [`Session::import_report`]), or with
    /// `options.strict` fail the import naming the line. A file (`Source::Path`) is remembered with
    /// the session, as [`Store::import_source`] does, so that importing it that way later knows it.
    pub fn import_native(&self, runtime: Runtime, source: Source, options: &Options) -> Result<Session> {
        let mut target = ImportTarget::new(options.session_id.clone());
        if let Source::Path(path) = &source {
            let meta = jsonl::readable_meta(path)?;
            target = target.recording(SourceFile { path: source_key(path)?, runtime, stat: Some(FileStat::of(&meta)) });
        }
        if let Some(id) = &options.session_id {
            crate::store::validate_session_id(id)?;
        }
        adapter(runtime).import(ImportRun { store: self, source, options, target, foreign: detect::foreign_record })
    }

    /// Imports a native file and remembers it, so that importing the same path again adds only
    /// what the file gained: nothing when it is unchanged; for a Claude Code transcript or Codex
    /// rollout that grew by whole lines, the blocks of the new lines appended to its session; for
    /// any other change, the session imported afresh in place, in one transaction (it stays as it
    /// was if the new import fails). The record of the file is what the import read, written with
    /// the blocks; a last line still being written (no newline, not yet JSON) waits for the next
    /// import. The runtime is detected when `runtime` is `None`. (Databases of sessions, such as
    /// `opencode.db`, are [`Store::import_database`]'s.)
    pub fn import_source(&self, path: impl AsRef<Path>, runtime: Option<Runtime>, options: &Options) -> Result<SourceImport> {
        let path = path.as_ref();
        let (key, stat, known) = self.source_look(path)?;
        // A file that looks as it did when it was read holds what was read: nothing to read.
        if let Some((session, old)) = &known {
            if old.stat.is_some_and(|then| then.vouches_for(&stat)) {
                return Ok(SourceImport { session: session.clone(), outcome: SourceOutcome::Unchanged, blocks_added: 0, report: Report::default() });
            }
        }
        let runtime = runtime_of(path, runtime)?;
        let file = SourceFile { path: key, runtime, stat: Some(stat) };
        let lines_runtime = adapter(runtime).capabilities().appends_lines;
        let noted = Noted::default();
        let run = |target: ImportTarget, options: &Options| {
            let target = if lines_runtime { target.holding_partial_lines() } else { target }.recording(file.clone()).noting(noted.clone());
            let source = Source::Path(path.to_path_buf());
            adapter(runtime).import(ImportRun { store: self, source, options, target, foreign: detect::foreign_record })
        };
        let Some((session, old)) = known else {
            // A file never read: the import reads it once, and records what it read.
            if let Some(id) = &options.session_id {
                crate::store::validate_session_id(id)?;
            }
            let session = run(ImportTarget::new(options.session_id.clone()), options)?;
            let blocks_added = session.len()?;
            let report = session.report_at(&noted.borrow())?;
            return Ok(SourceImport { session, outcome: SourceOutcome::Imported, blocks_added, report });
        };
        let bytes = std::fs::read(path).map_err(|source| Error::Io { context: format!("cannot read {}", path.display()), source })?;
        // What an import would read now: for a line runtime, not a last line still being written.
        let readable = if lines_runtime { &bytes[..jsonl::complete_len(&bytes)] } else { &bytes[..] };
        // The digest of the part the record covers, and of all that is readable now: one pass.
        let (prefix, whole) = {
            use sha2::Digest;
            let covered = (old.size as usize).min(readable.len());
            let mut hasher = sha2::Sha256::new();
            hasher.update(&readable[..covered]);
            let prefix = source_sha256(&hasher.clone().finalize());
            hasher.update(&readable[covered..]);
            (prefix, source_sha256(&hasher.finalize()))
        };
        if old.size == readable.len() as u64 && old.sha256 == whole {
            // Read and found unchanged: its look now vouches for it next time.
            self.refresh_source_stat(&file.path, &stat)?;
            return Ok(SourceImport { session, outcome: SourceOutcome::Unchanged, blocks_added: 0, report: Report::default() });
        }
        // A file recorded empty has no line to continue from: it is imported afresh.
        let grown = lines_runtime
            && old.runtime == runtime
            && old.size > 0
            && readable.len() as u64 > old.size
            && readable[old.size as usize - 1] == b'\n'
            && prefix == old.sha256;
        drop(bytes);
        let (session, outcome) = if grown {
            let before = session.len()?;
            let session = run(ImportTarget::append(session, old.lines), options)?;
            let added = session.len()? - before;
            (session, SourceOutcome::Appended(added))
        } else {
            let id = session.id().to_string();
            let options = Options { session_id: Some(id.clone()), ..options.clone() };
            (run(ImportTarget::replace(id), &options)?, SourceOutcome::Replaced)
        };
        let blocks_added = match outcome {
            SourceOutcome::Appended(n) => n,
            _ => session.len()?,
        };
        let report = session.report_at(&noted.borrow())?;
        Ok(SourceImport { session, outcome, blocks_added, report })
    }

    /// True when `path` is a file [`Store::import_source`] read before and it still looks as it did
    /// then (length, modification time, inode and device, and not modified within two seconds of
    /// that read): importing it would do nothing, and deciding so read none of its bytes. False
    /// when it has to be read to tell.
    pub fn source_unchanged(&self, path: impl AsRef<Path>) -> Result<bool> {
        let (_, stat, known) = self.source_look(path.as_ref())?;
        Ok(known.is_some_and(|(_, old)| old.stat.is_some_and(|then| then.vouches_for(&stat))))
    }

    /// The key of the file at `path`, how it looks now, and its record if it was imported.
    fn source_look(&self, path: &Path) -> Result<SourceLook> {
        let meta = jsonl::readable_meta(path)?;
        let key = source_key(path)?;
        let known = self.source(&key)?;
        Ok((key, FileStat::of(&meta), known))
    }

    /// Imports every session of a database file (`opencode.db`, read-only) that the store does not
    /// hold yet, most recently updated first; returns the sessions imported. The runtime is
    /// detected from the file's header when `runtime` is `None`.
    pub fn import_database(&self, path: impl AsRef<Path>, runtime: Option<Runtime>) -> Result<Vec<Session>> {
        let path = path.as_ref();
        check_readable(path)?;
        let runtime = match runtime {
            Some(runtime) => runtime,
            None => detect::detect_database(path)?
                .ok_or_else(|| Error::invalid(format!("{} is not a database of any runtime's sessions", path.display())))?,
        };
        adapter(runtime).database(path)?.import_database(self, path)
    }

    /// Imports a native file; `runtime: None` detects the runtime from the content.
    pub fn import_file(&self, path: impl AsRef<Path>, runtime: Option<Runtime>, options: &Options) -> Result<Session> {
        let path = path.as_ref();
        check_readable(path)?;
        let runtime = runtime_of(path, runtime)?;
        self.import_native(runtime, Source::Path(path.to_path_buf()), options)
    }
}

/// The key a file is remembered under: its canonical path.
fn source_key(path: &Path) -> Result<String> {
    let key = std::fs::canonicalize(path).map_err(|source| Error::Io { context: format!("cannot read {}", path.display()), source })?;
    Ok(key.to_string_lossy().into_owned())
}

/// `runtime`, else the runtime detected from the file's content.
fn runtime_of(path: &Path, runtime: Option<Runtime>) -> Result<Runtime> {
    match runtime {
        Some(runtime) => Ok(runtime),
        None => detect_runtime(path)?.ok_or_else(|| {
            if let Ok(Some(output)) = detect::detect_output(path) {
                return Error::invalid(format!(
                    "{} is what {} prints while it runs (its event stream), not its history: import the session file instead",
                    path.display(),
                    output.display_name()
                ));
            }
            let names: Vec<&str> = registry::ADAPTERS.iter().map(|a| a.history_name()).collect();
            let (last, rest) = names.split_last().unwrap_or((&"", &[]));
            let kinds = if rest.is_empty() { last.to_string() } else { format!("{} or {last}", rest.join(", ")) };
            Error::invalid(format!("{} is not {kinds} (could not detect the runtime)", path.display()))
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_source_record_is_what_the_import_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rollout.jsonl");
        let complete = "{\"type\":\"message\",\"role\":\"user\",\"content\":[{\"type\":\"input_text\",\"text\":\"hi\"}]}\n\n";
        std::fs::write(&path, format!("{complete}{{\"type\":\"mess")).unwrap();
        let store = Store::open_in_memory().unwrap();
        store.import_source(&path, Some(Runtime::Codex), &Options::default()).unwrap();
        let key = std::fs::canonicalize(&path).unwrap().to_string_lossy().into_owned();
        let (_, record) = store.source(&key).unwrap().unwrap();
        assert_eq!(record.size, complete.len() as u64, "the half line is not part of it");
        assert_eq!(record.lines, 2);
        assert_eq!(record.sha256, crate::model::sha256_hex(&<sha2::Sha256 as sha2::Digest>::digest(complete.as_bytes())));
        assert_eq!(jsonl::complete_len(b"{}\n{\"a\""), 3);
        assert_eq!(jsonl::complete_len(b"{}\n{}"), 5, "a last line that reads as JSON is complete");
        assert_eq!(jsonl::complete_len(b""), 0);
    }
}
