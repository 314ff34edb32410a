//! sna-history: coding-agent conversation history as one flat list of canonical blocks, stored in
//! SQLite (or PostgreSQL), converted to and from each runtime's native shape: Claude Code, Codex,
//! OpenCode, Gemini CLI and Pi. The design and its reasons are in `docs/design.md`.
//!
//! ```
//! use sna_history::{Actor, Block, NewSession, Store};
//!
//! let store = Store::open_in_memory()?;
//! let session = store.create_session(NewSession::new().title("demo"))?;
//! session.append(Block::text(Actor::User, "List the files"))?;
//! let reply = session.append(Block::text(Actor::Assistant, "There are two."))?;
//! assert_eq!(reply.seq, 1);
//! assert_eq!(session.blocks()?.len(), 2);
//! # Ok::<(), sna_history::Error>(())
//! ```

mod api;
pub mod error;
pub mod host;
#[macro_use]
mod json;
pub mod model;
pub mod native;
pub mod redact;
pub mod replay;
pub mod report;
pub mod store;

/// The README's Rust quickstart, compiled and run as a doctest so that it cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeQuickstart;

/// The Rust snippets of the pages under `docs/`, run as doctests the same way.
#[cfg(doctest)]
mod doc_pages;

pub use error::{Code, Error, Location, Result};
pub use model::{
    Actor, Attribution, Block, Compaction, CompactionMode, Embed, Encoding, Format, Kind, Native, Price, PriceTable, Reasoning, Runtime, Scope, Switch, Timestamp, Tokens, Trigger,
    ToolRef,
};
pub use json::field_names;
pub use native::{CommandOutcome, Export, ForeignReasoning, Options, ReplayShape, ResumeOptions, ResumePlan, Source, SourceImport, SourceOutcome};
pub use report::{Report, ReportAction, ReportEntry};
pub use store::fts::{MATCH_END, MATCH_START};
pub use store::{is_postgres_url, parse_time, SearchHit, SearchOptions, Binding, Continuation, NewSession, Session, SessionInfo, Store, SyncConflict, SyncOptions, SyncReport, ModelUsage, PriceSource, ResponseUsage, SessionUsage, UsageBy, UsageOptions, UsageReport, UsageRow};
