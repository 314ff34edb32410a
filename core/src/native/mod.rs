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
//! Those methods of `Session` and `Store` are declared in `api/session.rs` and `api/store.rs`, with
//! every other public method of the two; each delegates here, to the module that does the work:
//! `pipeline.rs` (exports, live capture, resumes), `imports.rs` (imports and their reports) and
//! `compaction.rs`.

#[cfg(doc)]
use crate::store::{Session, Store};

mod adapter;
pub(crate) mod acp_live;
pub mod claude_code;
pub mod codex;
pub mod copilot_cli;
pub(crate) mod common;
pub(crate) mod compaction;
pub mod detect;
pub mod gemini_cli;
pub(crate) mod imports;
pub(crate) mod jsonl;
pub mod live;
pub mod opencode;
pub(crate) mod parts;
pub mod pi;
pub(crate) mod pipeline;
pub mod qwen_code;
pub(crate) mod splice;
pub(crate) mod registry;
pub(crate) mod session_log;
mod types;

pub use detect::detect_runtime;
pub use jsonl::MAX_RECORD_BYTES;
pub use pipeline::is_harness;
pub use types::{
    CommandOutcome, Export, ForeignReasoning, Options, ReplayShape, ResumeOptions, ResumePlan, Source, SourceImport, SourceOutcome,
};
