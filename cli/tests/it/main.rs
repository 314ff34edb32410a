//! Every integration test of the `sna` command, in one test binary: one link for all of them.
//! `cargo test -p sna-cli --test it <module>::` runs one subject.

use std::path::{Path, PathBuf};

use assert_cmd::Command;

mod acp;
mod cli;
mod features;
mod fuzz;
mod layering;
mod search;
mod snapshots;
mod snippets;
mod sync;
mod usage;

/// The transcripts the real runtime CLIs wrote (`tests/fixtures`).
fn fixtures() -> PathBuf {
    sna_test_support::fixture("")
}

/// `sna` on a database and a HOME of its own inside `dir`, away from the user's configuration.
fn sna(dir: &Path) -> Command {
    let mut cmd = Command::cargo_bin("sna").unwrap();
    cmd.env("SNA_HISTORY_DB", dir.join("history.db")).env("HOME", dir.join("home")).env_remove("XDG_CONFIG_HOME").env_remove("XDG_DATA_HOME");
    cmd
}
