//! The import of files and directories, shared by `sna import` and `sna usage`: which files under
//! a directory may hold history, each imported (or found unchanged), and a summary line.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use sna_history::{Options, Runtime, SourceOutcome, Store};

use crate::failure::{Failure, Outcome};
use crate::text::visible;

/// The files under `paths` that may hold history: files as given, and below directories every
/// `.jsonl`, `.json` and `.db` file (sorted, so that runs are repeatable). Links to directories are
/// not followed (a link to a parent would make the walk endless); only regular files are taken,
/// others are reported; the database being written (`skip`, with its `-wal` and `-shm`) is left out.
fn candidates(paths: &[PathBuf], skip: Option<&Path>) -> Result<Vec<PathBuf>, Failure> {
    let skipped: Vec<PathBuf> = skip
        .and_then(|db| std::fs::canonicalize(db).ok())
        .map(|db| ["", "-wal", "-shm", "-journal"].iter().map(|s| PathBuf::from(format!("{}{s}", db.display()))).collect())
        .unwrap_or_default();
    let is_ours = |path: &Path| std::fs::canonicalize(path).is_ok_and(|p| skipped.contains(&p));
    let mut out = Vec::new();
    for path in paths {
        let meta = std::fs::metadata(path).map_err(|e| Failure(format!("cannot read {}: {e}", path.display())))?;
        if !meta.is_dir() {
            // A file named explicitly goes to core, which says what is wrong with it.
            out.push(path.clone());
            continue;
        }
        let mut stack = vec![path.clone()];
        while let Some(dir) = stack.pop() {
            let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir)
                .map_err(|e| Failure(format!("cannot read {}: {e}", dir.display())))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .collect();
            entries.sort();
            for entry in entries {
                let Ok(own) = std::fs::symlink_metadata(&entry) else { continue };
                if own.is_dir() {
                    stack.push(entry);
                    continue;
                }
                if !matches!(entry.extension().and_then(|e| e.to_str()), Some("jsonl" | "json" | "db")) || is_ours(&entry) {
                    continue;
                }
                // A link to a file is read as that file; a link to a directory is not followed.
                match std::fs::metadata(&entry) {
                    Ok(meta) if meta.is_file() => out.push(entry),
                    Ok(meta) if meta.is_dir() => {}
                    _ => eprintln!("sna: {}: not a regular file, skipped", visible(&entry.display().to_string())),
                }
            }
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

#[derive(Default)]
struct Tally {
    imported: usize,
    appended: usize,
    added_blocks: u64,
    replaced: usize,
    unchanged: usize,
    skipped: usize,
    failed: usize,
    /// Lines kept as error blocks (or repaired), each reported.
    kept_malformed: usize,
}

/// Imports the history files under `paths` (see [`candidates`]), one by one, and prints a summary
/// on stderr; `quiet` (`sna usage`): the summary only when something changed. A progress bar on a
/// terminal.
pub fn import_files(store: &Store, paths: &[PathBuf], rt: Option<Runtime>, options: &Options, quiet: bool) -> Outcome {
    let files = candidates(paths, store.path())?;
    let bar = if std::io::stderr().is_terminal() && files.len() > 1 {
        let bar = indicatif::ProgressBar::new(files.len() as u64);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} {wide_msg}").unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        Some(bar)
    } else {
        None
    };
    let explicit: Vec<&PathBuf> = paths.iter().filter(|p| !p.is_dir()).collect();
    let mut tally = Tally::default();
    for file in &files {
        if let Some(bar) = &bar {
            bar.set_message(file.display().to_string());
        }
        // A file imported before that looks as it did then is not opened.
        if store.source_unchanged(file).unwrap_or(false) {
            tally.unchanged += 1;
            if let Some(bar) = &bar {
                bar.inc(1);
            }
            continue;
        }
        // A database of many sessions (`opencode.db`), by its header.
        let database = sna_history::native::detect::detect_database(file).ok().flatten();
        let result = if let Some(db_runtime) = database {
            store.import_database(file, Some(db_runtime)).map(|sessions| {
                if sessions.is_empty() {
                    tally.unchanged += 1;
                } else {
                    tally.imported += sessions.len();
                }
            })
        } else {
            // Detected once here and handed on; a file found below a directory that is not
            // history of any runtime is left alone (one named explicitly gets core's error).
            let detected = match rt {
                Some(rt) => Some(rt),
                None => sna_history::native::detect_runtime(file).ok().flatten(),
            };
            if detected.is_none() && !explicit.contains(&file) {
                tally.skipped += 1;
                if let Some(bar) = &bar {
                    bar.inc(1);
                }
                continue;
            }
            store.import_source(file, detected, options).map(|done| {
                match done.outcome {
                    SourceOutcome::Imported => tally.imported += 1,
                    SourceOutcome::Unchanged => tally.unchanged += 1,
                    SourceOutcome::Appended(_) => {
                        tally.appended += 1;
                        tally.added_blocks += done.blocks_added;
                    }
                    SourceOutcome::Replaced => tally.replaced += 1,
                }
                // What this import kept but could not read, each line named.
                for entry in &done.report.entries {
                    let line = visible(&format!("sna: {}: {}: {}", file.display(), entry.action, entry.message)).into_owned();
                    match &bar {
                        Some(bar) => bar.println(line),
                        None => eprintln!("{line}"),
                    }
                    tally.kept_malformed += 1;
                }
            })
        };
        if let Err(e) = result {
            tally.failed += 1;
            let line = visible(&format!("sna: {}: {e}", file.display())).into_owned();
            match &bar {
                Some(bar) => bar.println(line),
                None => eprintln!("{line}"),
            }
        }
        if let Some(bar) = &bar {
            bar.inc(1);
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let mut summary = format!("{} imported, {} grown (+{} blocks), {} replaced, {} unchanged", tally.imported, tally.appended, tally.added_blocks, tally.replaced, tally.unchanged);
    if tally.skipped > 0 {
        summary.push_str(&format!(", {} not history", tally.skipped));
    }
    if tally.kept_malformed > 0 {
        summary.push_str(&format!(", {} lines kept as error blocks or repaired (above; --strict refuses such files)", tally.kept_malformed));
    }
    if tally.failed > 0 {
        summary.push_str(&format!(", {} failed", tally.failed));
    }
    if !quiet || tally.unchanged + tally.skipped != files.len() {
        eprintln!("{summary}");
    }
    if tally.failed > 0 {
        return Err(Failure(format!("{} of {} files could not be imported", tally.failed, files.len())));
    }
    Ok(())
}
