//! The `sna` command: import whole histories of Claude Code, Codex, OpenCode, Gemini CLI and Pi,
//! inspect them, convert them, resume them in any of the five, and view them as one HTML file.
//!
//! Every decision is sna-history's (the core crate); this crate parses arguments, walks
//! directories and prints. Errors are one line on stderr: exit code 2 for usage errors, 1 for
//! failures.
//!
//! The layout: `args` (the command line), `commands/<name>.rs` (one per command), and what
//! several commands share — `failure` (how a command fails), `setup` (the database, runtimes),
//! `text` (terminal-safe text), `ingest` (importing files and directories), `output` (native data
//! written out), `ui` (the web UI's files, for `sna view` and `sna serve`), `markdown` (the UI's
//! Markdown, rendered to safe HTML on the server). The server (`serve`)
//! and the ACP agent (`acp`) are Cargo features, on by default.

mod args;
mod commands;
mod failure;
mod ingest;
mod markdown;
mod output;
mod setup;
mod text;
mod ui;

#[cfg(feature = "acp")]
mod acp;
#[cfg(feature = "serve")]
mod serve;

use std::process::ExitCode;

use clap::Parser;

use args::{Cli, Command};
use failure::{Failure, Outcome};

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure(message)) if message.is_empty() => ExitCode::SUCCESS,
        Err(Failure(message)) => {
            eprintln!("sna: {}", text::visible(&message));
            ExitCode::from(1)
        }
    }
}

fn run(cli: Cli) -> Outcome {
    let db = cli.db;
    match cli.command {
        Command::Import(args) => commands::import::run(args, db),
        Command::Ls(args) => commands::ls::run(args, db),
        Command::Show(args) => commands::show::run(args, db),
        Command::Search(args) => commands::search::run(args, db),
        Command::Usage(args) => commands::usage::run(args, db),
        Command::Export(args) => commands::export::run(args, db),
        Command::Convert(args) => commands::convert::run(args, db),
        Command::Resume(args) => commands::resume::run(args, db),
        Command::Report(args) => commands::report::run(args, db),
        Command::Rm(args) => commands::rm::run(args, db),
        Command::View(args) => commands::view::run(args, db),
        Command::Serve(args) => commands::serve::run(args, db),
        Command::Acp(args) => commands::acp::run(args, db),
        Command::Scan(args) => commands::scan::run(args, db),
        Command::Sync(args) => commands::sync::run(args, db),
        Command::Redact(args) => commands::redact::run(args, db),
    }
}
