//! Conversion between canonical blocks and each runtime's native shape: the one pipeline every
//! path goes through.
//!
//! The entry points — [`Session::to_native`], [`Session::export`], [`Store::import_native`],
//! [`Store::import_file`], [`Store::import_source`], [`Session::ingest`] and
//! [`Session::prepare_resume`] — check the runtime, the format and the options, apply the replay
//! rules ([`crate::replay`]), hand the work to the runtime's `Adapter` (`adapter.rs`; one folder per
//! runtime, listed in `registry.rs`), then apply the strict check, write resume files atomically
//! and privately, and record the binding. No runtime is named outside its own folder, the registry
//! and detection, but for the shorthand [`Store::import_opencode_db`].
//!
//! This file declares every public method of `Session` and `Store` that converts, each delegating
//! to the module that does the work: `pipeline.rs` (exports, live capture, resumes), `imports.rs`
//! (imports and their reports) and `compaction.rs`.

use std::path::Path;

use serde_json::Value;

use crate::error::Result;
use crate::model::{Block, Compaction, Runtime};
use crate::report::Report;
use crate::store::{Session, Store};

mod adapter;
pub mod claude_code;
pub mod codex;
pub(crate) mod common;
pub(crate) mod compaction;
pub mod detect;
pub mod gemini_cli;
mod imports;
pub(crate) mod jsonl;
pub mod live;
pub mod opencode;
pub mod pi;
mod pipeline;
pub(crate) mod splice;
pub(crate) mod registry;
mod types;

pub use detect::detect_runtime;
pub use jsonl::MAX_RECORD_BYTES;
pub use pipeline::is_harness;
pub use types::{
    CommandOutcome, Export, ForeignReasoning, Options, ReplayShape, ResumeOptions, ResumePlan, Source, SourceImport, SourceOutcome,
};

impl Session {
    /// The session in `runtime`'s native shape (`options.format`, else the runtime's default).
    pub fn to_native(&self, runtime: Runtime, options: &Options) -> Result<Value> {
        Ok(self.export(runtime, options)?.data)
    }

    /// Like [`Session::to_native`], with the fidelity report. With `options.strict`, any loss is a
    /// `LOSSY` error instead.
    pub fn export(&self, runtime: Runtime, options: &Options) -> Result<Export> {
        pipeline::export(self, runtime, options)
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
        let (text, report) = pipeline::native_text(self, runtime, options)?;
        text.write_buffered(out)?;
        Ok(report)
    }

    /// Like [`Session::export_to`], into the file at `path`, created or replaced whole: the text
    /// is made first (a `LOSSY` refusal writes nothing), then written to a new temporary file beside
    /// the file (`path`'s target when it is a link), which keeps an existing file's permissions
    /// and is renamed over it once complete, so a failed write leaves the file as it was. A path
    /// that is not a regular file (`/dev/stdout`, a pipe) is written to as it is.
    pub fn export_to_path(&self, path: impl AsRef<Path>, runtime: Runtime, options: &Options) -> Result<Report> {
        pipeline::export_to_path(self, path.as_ref(), runtime, options)
    }

    /// The session as the text of a file in `runtime`'s native format: what [`Session::export_to`]
    /// writes.
    pub fn to_native_text(&self, runtime: Runtime, options: &Options) -> Result<String> {
        pipeline::native_text(self, runtime, options)?.0.into_string()
    }

    /// Like [`Session::export`], the data as one compact JSON text (a JSONL format's records as an
    /// array) instead of values: the same JSON `serde_json` writes for `export`'s data, made from
    /// the stored text of imported records where it can be. What a binding hands to its language's
    /// own JSON parser, which builds that language's objects faster than a value-by-value
    /// conversion.
    pub fn export_json(&self, runtime: Runtime, options: &Options) -> Result<(String, Report)> {
        let (text, report) = pipeline::native_text(self, runtime, options)?;
        Ok((text.into_json()?, report))
    }

    /// Appends the blocks a live event of `runtime` completes; returns them (often none, while deltas
    /// accumulate).
    pub fn ingest(&self, runtime: Runtime, event: &Value) -> Result<Vec<Block>> {
        pipeline::ingest(self, runtime, event)
    }

    /// Writes the native files `runtime` needs to resume this session and returns how to run it.
    /// Records a binding of the written native session through the last block.
    pub fn prepare_resume(&self, runtime: Runtime, options: &ResumeOptions) -> Result<ResumePlan> {
        pipeline::prepare_resume(self, runtime, options)
    }

    /// What an import kept but could not read: one `malformed` entry per native line stored as an
    /// `error` block, naming the line and the reason, and one `degraded` entry per line whose text
    /// had to be repaired to be read (lone UTF-16 surrogates read as U+FFFD).
    pub fn import_report(&self) -> Result<Report> {
        imports::import_report(self)
    }

    /// Every compaction a runtime made in this session, oldest first: where its boundary and its
    /// summary are, what it preserved, what started it, the tokens before it and when.
    pub fn compactions(&self) -> Result<Vec<Compaction>> {
        compaction::since(self, 0)
    }
}

impl Store {
    /// Imports native history of `runtime` as a new session, atomically: on any error nothing is
    /// stored. Malformed records are kept as `error` blocks (see [`Session::import_report`]), or with
    /// `options.strict` fail the import naming the line. A file (`Source::Path`) is remembered with
    /// the session, as [`Store::import_source`] does, so that importing it that way later knows it.
    pub fn import_native(&self, runtime: Runtime, source: Source, options: &Options) -> Result<Session> {
        imports::import_native(self, runtime, source, options)
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
        imports::import_source(self, path.as_ref(), runtime, options)
    }

    /// True when `path` is a file [`Store::import_source`] read before and it still looks as it did
    /// then (length, modification time, inode and device, and not modified within two seconds of
    /// that read): importing it would do nothing, and deciding so read none of its bytes. False
    /// when it has to be read to tell.
    pub fn source_unchanged(&self, path: impl AsRef<Path>) -> Result<bool> {
        imports::source_unchanged(self, path.as_ref())
    }

    /// Imports every session of a database file (`opencode.db`, read-only) that the store does not
    /// hold yet, most recently updated first; returns the sessions imported. The runtime is
    /// detected from the file's header when `runtime` is `None`.
    pub fn import_database(&self, path: impl AsRef<Path>, runtime: Option<Runtime>) -> Result<Vec<Session>> {
        imports::import_database(self, path.as_ref(), runtime)
    }

    /// Imports every session of an `opencode.db` (read-only), most recently updated first;
    /// sessions already in the store are skipped. Returns the sessions imported.
    pub fn import_opencode_db(&self, path: impl AsRef<Path>) -> Result<Vec<Session>> {
        self.import_database(path, Some(Runtime::OpenCode))
    }

    /// Imports a native file; `runtime: None` detects the runtime from the content.
    pub fn import_file(&self, path: impl AsRef<Path>, runtime: Option<Runtime>, options: &Options) -> Result<Session> {
        imports::import_file(self, path.as_ref(), runtime, options)
    }
}
