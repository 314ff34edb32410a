//! The Rust snippets of the pages under `docs/`, compiled and run as doctests so that they cannot
//! rot (the README's are on `ReadmeQuickstart` in `lib.rs`). `core/tests/it/docs.rs` checks that every
//! page with a Rust snippet is listed here.

/// `docs/getting-started.md`.
#[doc = include_str!("../../docs/getting-started.md")]
pub struct GettingStarted;

/// `docs/search.md`.
#[doc = include_str!("../../docs/search.md")]
pub struct Search;
