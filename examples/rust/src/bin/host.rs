//! The host scenario (see examples/README.md) in Rust: run Claude Code for a session turn by turn,
//! survive a killed process, switch to Codex. Needs the runtimes' CLIs and where their models are
//! (tests/conformance/test_host.py runs it against the pinned CLIs and mock models):
//!
//! ```text
//! cargo run -p sna-example --bin sna-host-example -- <claude> <codex> <home> <project> <database>
//! ```

use std::path::PathBuf;
use std::time::Duration;

use sna_history::host::{Host, HostOptions, StartOptions};
use sna_history::{Actor, Kind, Runtime, Store};

fn main() -> sna_history::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [claude, codex, home, project, database] = args.as_slice() else {
        eprintln!("usage: sna-host-example <claude> <codex> <home> <project> <database>");
        std::process::exit(2);
    };
    let mut options = HostOptions { home: Some(PathBuf::from(home)), ..HostOptions::default() };
    options.bins.insert(Runtime::ClaudeCode, PathBuf::from(claude));
    options.bins.insert(Runtime::Codex, PathBuf::from(codex));
    let host = Host::new(Store::open(database)?, options);
    let mut start = StartOptions::new(Runtime::ClaudeCode);
    start.model = Some("claude-opus-5-5".into());
    start.cwd = Some(PathBuf::from(project));
    let agent = host.start("host-example", start)?;
    let limit = Some(Duration::from_secs(300));
    for (i, text) in ["Remember the word teal.", "Which word was it?"].iter().enumerate() {
        let turn = agent.send_within(text, &[], limit)?;
        println!("turn {}: {} (resumed: {})", i + 1, turn.text, turn.resumed_via.as_deref().unwrap_or("no"));
    }
    agent.kill()?;
    let turn = agent.send_within("And after a restart?", &[], limit)?;
    let via = turn.resumed_via.as_deref().unwrap_or("no");
    println!("after kill: {} (resumed: {via}), processes started: {}", turn.text, agent.status().spawns);
    agent.switch(Runtime::Codex, None)?;
    let turn = agent.send_within("Now in Codex: which word?", &[], limit)?;
    println!("in codex: {} (resumed: {})", turn.text, turn.resumed_via.as_deref().unwrap_or("no"));
    let blocks = agent.session().blocks()?;
    let said = blocks.iter().filter(|b| b.actor != Actor::System && matches!(b.kind, Kind::Text | Kind::ToolUse | Kind::ToolResult)).count();
    let runs: Vec<String> = agent.session().switches()?.into_iter().map(|s| s.to.provider.unwrap_or_else(|| "?".into())).collect();
    println!("conversation: {said} blocks; runs: {}", runs.join(", "));
    host.close();
    Ok(())
}
