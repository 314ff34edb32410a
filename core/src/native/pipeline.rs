//! The pipeline's exports, live capture and resumes: the replay rules, the budget and the
//! compaction bound, then the runtime's adapter, the strict check, the atomic private write of
//! resume files and the binding. `Session`'s methods in `api/session.rs` delegate here.

use std::path::Path;

use serde_json::Value;

use crate::error::{Error, Result};
use crate::json::json_type;
use crate::model::{Block, Runtime};
use crate::native::adapter::{Adapter, Reported, StoredTextExport};
use crate::native::common::{self, check_strict, write_private};
use crate::native::compaction;
use crate::native::registry::adapter;
use crate::native::splice::{self, NativeText};
use crate::native::types::{Export, Options, ReplayShape, ResumeOptions, ResumePlan};
use crate::report::{Report, ReportEntry};
use crate::store::Session;

/// `session` in `runtime`'s native shape ([`Session::to_native`]).
pub(crate) fn to_native(session: &Session, runtime: Runtime, options: &Options) -> Result<Value> {
    Ok(export(session, runtime, options)?.data)
}

/// `session` in `runtime`'s native shape, with the fidelity report ([`Session::export`]).
pub(crate) fn export(session: &Session, runtime: Runtime, options: &Options) -> Result<Export> {
    let format = options.format_for(runtime)?;
    let (blocks, mut entries, _) = value_blocks(session, runtime, options)?;
    let Reported { value: data, report } = adapter(runtime).export(session, blocks, format, options)?;
    entries.extend(report);
    check_strict(options, &entries)?;
    Ok(Export { data, report: Report { entries } })
}

/// Writes `session` as the text of a file in `runtime`'s native format to the file at `path`
/// ([`Session::export_to_path`]).
pub(crate) fn export_to_path(session: &Session, path: &Path, runtime: Runtime, options: &Options) -> Result<Report> {
    let (text, report) = native_text(session, runtime, options)?;
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

/// Writes `session` as the text of a file in `runtime`'s native format to `out`
/// ([`Session::export_to`]).
pub(crate) fn export_to(session: &Session, out: impl std::io::Write, runtime: Runtime, options: &Options) -> Result<Report> {
    let (text, report) = native_text(session, runtime, options)?;
    text.write_buffered(out)?;
    Ok(report)
}

/// `session` as the text of a file in `runtime`'s native format ([`Session::to_native_text`]).
pub(crate) fn to_native_text(session: &Session, runtime: Runtime, options: &Options) -> Result<String> {
    native_text(session, runtime, options)?.0.into_string()
}

/// `session`'s export as one compact JSON text, with the fidelity report ([`Session::export_json`]).
pub(crate) fn export_json(session: &Session, runtime: Runtime, options: &Options) -> Result<(String, Report)> {
    let (text, report) = native_text(session, runtime, options)?;
    Ok((text.into_json()?, report))
}

/// `session` as the text of a file in `runtime`'s native format, written from stored text where
/// the runtime allows it, with the fidelity report.
fn native_text(session: &Session, runtime: Runtime, options: &Options) -> Result<(NativeText, Report)> {
    let format = options.format_for(runtime)?;
    let adapter = adapter(runtime);
    let Replay { blocks, spliced, mut entries, .. } = export_blocks(session, adapter, format, options)?;
    let Reported { value: text, report } = match spliced {
        Some((text, splices)) => text.export_text(session, blocks, splices, format, options)?,
        None => {
            let Reported { value, report } = adapter.export(session, blocks, format, options)?;
            Reported { value: NativeText::from_value(format, value), report }
        }
    };
    entries.extend(report);
    check_strict(options, &entries)?;
    Ok((text, Report { entries }))
}

/// Appends to `session` the blocks a live event of `runtime` completes ([`Session::ingest`]).
pub(crate) fn ingest(session: &Session, runtime: Runtime, event: &Value) -> Result<Vec<Block>> {
    if !event.is_object() {
        return Err(Error::invalid(format!("an event must be an object, not {}", json_type(event))));
    }
    let blocks = adapter(runtime).events()?.event_blocks(session, event)?;
    session.extend(blocks)
}

/// Writes the native files `runtime` needs to resume `session`, runs what the adapter runs after
/// the write, and binds the written native session through the last block
/// ([`Session::prepare_resume`]).
pub(crate) fn prepare_resume(session: &Session, runtime: Runtime, options: &ResumeOptions) -> Result<ResumePlan> {
    let format = options.options.format_for(runtime)?;
    let adapter = adapter(runtime);
    let Replay { blocks, spliced, mut entries, shape: replay } = export_blocks(session, adapter, format, &options.options)?;
    let last_seq = session.len()?.checked_sub(1);
    let resume = adapter.resumes()?;
    let splices = spliced.map(|(_, splices)| splices).unwrap_or_default();
    let Reported { value: files, report } = resume.resume(session, blocks, splices, options, &entries)?;
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
        session.bind(runtime, &plan.session_id, last_seq)?;
    }
    Ok(plan)
}

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
