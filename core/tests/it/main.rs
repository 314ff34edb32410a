//! Every integration test of the core crate, in one test binary: one link for all of them. Each
//! module is one subject; `cargo test -p sna-history --test it <module>::` runs one of them
//! (`SNA_BLESS=1 cargo test -p sna-history --test it golden::` records the golden set anew).
//! The PostgreSQL variants are built with `--features pg-tests` and need `SNA_TEST_POSTGRES_URL`.

mod claude_code;
mod codex;
mod copilot_cli;
mod compaction;
mod defects;
mod disk;
mod docs;
mod estimate;
mod fuzz;
mod gemini_cli;
mod golden;
mod host;
mod kill;
mod layering;
mod opencode;
mod pi;
mod qwen_code;
#[cfg(feature = "pg-tests")]
mod postgres;
mod redaction;
mod replay;
mod roundtrip;
mod search;
mod sources;
mod store;
mod surface;
mod sync;
mod usage;
mod vectors;
