//! The examples' scenario (see examples/README.md) in Rust: record a Claude Code run and a switch
//! to Codex as a host would, export for Codex, prepare the resume. Run with `cargo run -p sna-example`.

use std::path::Path;

use serde_json::Value;
use sna_history::{Actor, Block, NewSession, Options, ResumeOptions, Runtime, Store};

fn events(name: &str) -> Vec<Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data").join(name);
    std::fs::read_to_string(path).expect("example data").lines().map(|l| serde_json::from_str(l).expect("JSON line")).collect()
}

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e} ({})", e.code());
        std::process::exit(1);
    }
}

fn run() -> sna_history::Result<()> {
    let store = Store::open_in_memory()?;
    let session = store.create_session(NewSession::new().id("0193c5a0-0000-7000-8000-00000000e001").title("Relay example").cwd("/home/dev/project"))?;
    for event in events("claude-stream.jsonl") {
        session.ingest(Runtime::ClaudeCode, &event)?;
    }
    session.append(Block::text(Actor::User, "List the files in this project."))?;
    for event in events("codex-exec.jsonl") {
        session.ingest(Runtime::Codex, &event)?;
    }

    let info = session.info()?;
    println!("session {} \"{}\": {} blocks", info.id, info.title.as_deref().unwrap_or(""), info.block_count);
    for switch in session.switches()? {
        let to = &switch.to;
        let who = [to.provider.as_deref(), to.model_provider.as_deref(), to.model.as_deref()].into_iter().flatten().collect::<Vec<_>>();
        println!("at block {}: {}", switch.seq, who.join(" "));
    }
    let options = Options { model_provider: Some("openai".into()), target_model: Some("gpt-5.5".into()), ..Options::default() };
    let export = session.export(Runtime::Codex, &options)?;
    let items = export.data.as_array().map_or(0, Vec::len);
    println!("codex items: {items}");
    for entry in &export.report.entries {
        println!("  {}: {}", serde_json::to_value(entry.action).unwrap_or_default().as_str().unwrap_or(""), entry.message);
    }
    let home = std::env::temp_dir().join(format!("sna-example-rust-{}", std::process::id()));
    let plan = session.prepare_resume(Runtime::Codex, &ResumeOptions { home: Some(home.clone()), cwd: Some("/home/dev/project".into()), options, ..ResumeOptions::default() })?;
    println!("resume: {}", plan.argv.join(" "));
    let _ = std::fs::remove_dir_all(home);
    Ok(())
}
