//! The pipeline's imports: native history into new sessions, files remembered so that importing
//! them again adds only what they gained, databases of many sessions, and what an import kept but
//! could not read. `Store`'s and `Session`'s methods in `api/` delegate here.

use std::path::Path;

use serde_json::Value;

use crate::error::{Error, Result};
use crate::model::{Block, Runtime};
use crate::native::adapter::ImportRun;
use crate::native::detect::{self, detect_runtime};
use crate::native::jsonl::{self, check_readable};
use crate::native::registry::{self, adapter};
use crate::native::types::{Options, Source, SourceImport, SourceOutcome};
use crate::report::{Report, ReportAction, ReportEntry};
use crate::store::{source_sha256, FileStat, ImportTarget, Noted, Session, SourceFile, Store};

/// A file's source key, how it looks now, and its session and record if it was imported.
type SourceLook = (String, FileStat, Option<(Session, crate::store::SourceRecord)>);

/// What an import kept but could not read ([`Session::import_report`]).
pub(crate) fn import_report(session: &Session) -> Result<Report> {
    // Only error blocks and blocks whose native text names `sanitized` can hold an entry.
    let candidates = session.blocks_where(0, u64::MAX, "kind = 'error' OR native LIKE '%\"sanitized\"%'")?;
    Ok(report_of(&candidates))
}

/// The import report of the blocks of `session` at `seqs` (what one import noted).
fn report_at(session: &Session, seqs: &[u64]) -> Result<Report> {
    let mut blocks = Vec::with_capacity(seqs.len());
    for &seq in seqs {
        blocks.extend(session.blocks_range(seq, seq + 1)?);
    }
    Ok(report_of(&blocks))
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

/// Imports native history of `runtime` as a new session ([`Store::import_native`]).
pub(crate) fn import_native(store: &Store, runtime: Runtime, source: Source, options: &Options) -> Result<Session> {
    let mut target = ImportTarget::new(options.session_id.clone());
    if let Source::Path(path) = &source {
        let meta = jsonl::readable_meta(path)?;
        target = target.recording(SourceFile { path: source_key(path)?, runtime, stat: Some(FileStat::of(&meta)) });
    }
    if let Some(id) = &options.session_id {
        crate::store::validate_session_id(id)?;
    }
    adapter(runtime).import(ImportRun { store, source, options, target, foreign: detect::foreign_record })
}

/// Imports a native file and remembers it, or adds what it gained ([`Store::import_source`]).
pub(crate) fn import_source(store: &Store, path: &Path, runtime: Option<Runtime>, options: &Options) -> Result<SourceImport> {
    let (key, stat, known) = source_look(store, path)?;
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
        adapter(runtime).import(ImportRun { store, source, options, target, foreign: detect::foreign_record })
    };
    let Some((session, old)) = known else {
        // A file never read: the import reads it once, and records what it read.
        if let Some(id) = &options.session_id {
            crate::store::validate_session_id(id)?;
        }
        let session = run(ImportTarget::new(options.session_id.clone()), options)?;
        let blocks_added = session.len()?;
        let report = report_at(&session, &noted.borrow())?;
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
        store.refresh_source_stat(&file.path, &stat)?;
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
    let report = report_at(&session, &noted.borrow())?;
    Ok(SourceImport { session, outcome, blocks_added, report })
}

/// True when a file read before still looks as it did then ([`Store::source_unchanged`]).
pub(crate) fn source_unchanged(store: &Store, path: &Path) -> Result<bool> {
    let (_, stat, known) = source_look(store, path)?;
    Ok(known.is_some_and(|(_, old)| old.stat.is_some_and(|then| then.vouches_for(&stat))))
}

/// The key of the file at `path`, how it looks now, and its record if it was imported.
fn source_look(store: &Store, path: &Path) -> Result<SourceLook> {
    let meta = jsonl::readable_meta(path)?;
    let key = source_key(path)?;
    let known = store.source(&key)?;
    Ok((key, FileStat::of(&meta), known))
}

/// Imports the sessions of a database file the store does not hold yet ([`Store::import_database`]).
pub(crate) fn import_database(store: &Store, path: &Path, runtime: Option<Runtime>) -> Result<Vec<Session>> {
    check_readable(path)?;
    let runtime = match runtime {
        Some(runtime) => runtime,
        None => detect::detect_database(path)?
            .ok_or_else(|| Error::invalid(format!("{} is not a database of any runtime's sessions", path.display())))?,
    };
    adapter(runtime).database(path)?.import_database(store, path)
}

/// Imports a native file, detecting its runtime when `runtime` is `None` ([`Store::import_file`]).
pub(crate) fn import_file(store: &Store, path: &Path, runtime: Option<Runtime>, options: &Options) -> Result<Session> {
    check_readable(path)?;
    let runtime = runtime_of(path, runtime)?;
    import_native(store, runtime, Source::Path(path.to_path_buf()), options)
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
