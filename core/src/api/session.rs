//! Every public method of [`Session`], each delegating to the module that does the work: blocks,
//! embeds, switches, bindings, continuation and redaction to `store/session.rs`, token usage to
//! `store/usage_report.rs`, and the conversions (exports, live capture, resumes, import reports,
//! compactions) to the pipeline's `native/pipeline.rs`, `native/imports.rs` and
//! `native/compaction.rs`.

use std::path::Path;

use serde_json::Value;

use crate::error::Result;
use crate::model::{Block, Compaction, Runtime, Switch};
use crate::native::{self, pipeline, Export, Options, ResumeOptions, ResumePlan};
use crate::report::Report;
use crate::store::usage_report::{self, SessionUsage};
use crate::store::{session, Binding, Continuation, Session, SessionInfo, Store};

impl Session {
    /// The session id.
    pub fn id(&self) -> &str {
        session::id(self)
    }

    /// The store this session lives in.
    pub fn store(&self) -> &Store {
        session::store(self)
    }

    /// Appends one block; returns it with `seq` and `id` filled in.
    pub fn append(&self, block: Block) -> Result<Block> {
        session::append(self, block)
    }

    /// Appends blocks in one transaction: all are stored, or (on any error) none.
    /// Validation errors name the block's index in the batch and the field.
    pub fn extend(&self, blocks: impl IntoIterator<Item = Block>) -> Result<Vec<Block>> {
        session::extend(self, blocks)
    }

    /// What `Store::sessions` lists about this session.
    pub fn info(&self) -> Result<SessionInfo> {
        session::info(self)
    }

    /// Every block, in `seq` order.
    pub fn blocks(&self) -> Result<Vec<Block>> {
        session::blocks(self)
    }

    /// The blocks with `from <= seq < to`, in order.
    pub fn blocks_range(&self, from: u64, to: u64) -> Result<Vec<Block>> {
        session::blocks_range(self, from, to)
    }

    /// Number of blocks.
    pub fn len(&self) -> Result<u64> {
        session::len(self)
    }

    /// True when the session has no block.
    pub fn is_empty(&self) -> Result<bool> {
        session::is_empty(self)
    }

    /// The block with this id (`NOT_FOUND` if this session has none).
    pub fn block(&self, id: &str) -> Result<Block> {
        session::block(self, id)
    }

    /// The bytes of an embed of this session.
    pub fn embed(&self, embed_id: &str) -> Result<Vec<u8>> {
        session::embed(self, embed_id)
    }

    /// The mime type a block of this session gives for the embed `embed_id` (`None` when no
    /// block names one). `NOT_FOUND` for a session that does not exist.
    pub fn embed_mime(&self, embed_id: &str) -> Result<Option<String>> {
        session::embed_mime(self, embed_id)
    }

    /// Every point where `(provider, model_provider, model)` changes, in order. Blocks without any
    /// attribution (typically the user's) neither start nor end a run.
    pub fn switches(&self) -> Result<Vec<Switch>> {
        session::switches(self)
    }

    /// Records that the native thread `native_id` of `runtime` holds this session's blocks up to
    /// `through_seq` (replacing an earlier binding for that runtime).
    pub fn bind(&self, runtime: Runtime, native_id: &str, through_seq: u64) -> Result<Binding> {
        session::bind(self, runtime, native_id, through_seq)
    }

    /// The binding recorded for `runtime`, if any.
    pub fn binding(&self, runtime: Runtime) -> Result<Option<Binding>> {
        session::binding(self, runtime)
    }

    /// How to go on in `runtime`: continue the bound native thread and send only the blocks after it,
    /// or replay from the canonical blocks. Continuing is possible when a thread is bound and every
    /// pending block is input (user or system); assistant blocks after the binding mean the thread does
    /// not hold what was said (another runtime answered, or the binding was not moved on), so replay.
    pub fn continuation(&self, runtime: Runtime) -> Result<Continuation> {
        session::continuation(self, runtime)
    }

    /// The session's token usage, response by response, priced as [`Store::usage`] prices it
    /// (`prices`: a price file read over the shipped table; default as [`UsageOptions::prices`](crate::UsageOptions::prices)).
    /// A response a copy of which in another session counts instead is left out.
    pub fn usage(&self, prices: Option<&Path>) -> Result<SessionUsage> {
        usage_report::session_usage(self, prices)
    }

    /// The secrets the session's blocks hold (text and native passthrough), masked; nothing is
    /// changed ([`crate::redact`]).
    pub fn scan_secrets(&self) -> Result<Vec<crate::redact::SecretFinding>> {
        session::scan_secrets(self)
    }

    /// Rewrites the stored session with its secrets replaced by `[REDACTED:<kind>]` (text, tool
    /// text, native passthrough; a redacted thinking block loses its reasoning token), in one
    /// transaction, for users who must purge them. Returns one `redacted` entry per block changed.
    /// This cannot be undone: exports of the session no longer give the original records back.
    pub fn redact_in_place(&self) -> Result<crate::report::Report> {
        session::redact_in_place(self)
    }

    /// The session in `runtime`'s native shape (`options.format`, else the runtime's default).
    pub fn to_native(&self, runtime: Runtime, options: &Options) -> Result<Value> {
        pipeline::to_native(self, runtime, options)
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
        pipeline::export_to(self, out, runtime, options)
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
        pipeline::to_native_text(self, runtime, options)
    }

    /// Like [`Session::export`], the data as one compact JSON text (a JSONL format's records as an
    /// array) instead of values: the same JSON `serde_json` writes for `export`'s data, made from
    /// the stored text of imported records where it can be. What a binding hands to its language's
    /// own JSON parser, which builds that language's objects faster than a value-by-value
    /// conversion.
    pub fn export_json(&self, runtime: Runtime, options: &Options) -> Result<(String, Report)> {
        pipeline::export_json(self, runtime, options)
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
        native::imports::import_report(self)
    }

    /// Every compaction a runtime made in this session, oldest first: where its boundary and its
    /// summary are, what it preserved, what started it, the tokens before it and when.
    pub fn compactions(&self) -> Result<Vec<Compaction>> {
        native::compaction::since(self, 0)
    }
}
