//! One module per command, each with a `run(args, db)` that does it. Commands do not call each
//! other; what two of them share lives in the modules beside `commands/` (`ingest`, `output`,
//! `setup`, `text`, `ui`).

pub mod acp;
pub mod convert;
pub mod export;
pub mod import;
pub mod ls;
pub mod redact;
pub mod report;
pub mod resume;
pub mod rm;
pub mod scan;
pub mod search;
pub mod serve;
pub mod show;
pub mod sync;
pub mod usage;
pub mod view;
