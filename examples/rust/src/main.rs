//! Records a short coding-agent conversation as a host would, then prints it back with its
//! attribution switches. Run with `cargo run -p sna-example [DB]` (default: an in-memory store).

use sna_history::{Actor, Block, Embed, Kind, NewSession, Reasoning, Runtime, Scope, Store};

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e} ({})", e.code());
        std::process::exit(1);
    }
}

fn run() -> sna_history::Result<()> {
    let store = match std::env::args().nth(1) {
        Some(path) => Store::open(path)?,
        None => Store::open_in_memory()?,
    };
    let session = store.create_session(NewSession::new().title("Fix the failing parser test").cwd("/home/dev/project"))?;

    let mut question = Block::text(Actor::User, "The parser test fails, see ![screenshot](embed://shot-1)");
    question.embeds.insert("shot-1".into(), Embed::from_bytes("image/png", Some("shot.png".into()), b"\x89PNG fake".to_vec()));

    let claude = |b: Block| b.attributed("claude-code", "anthropic", "claude-sonnet-4-6");
    let mut thinking = claude(Block::new(Actor::Assistant, Kind::Thinking, "The lexer probably returns None at EOF."));
    thinking.reasoning = Some(Reasoning {
        format: Reasoning::ANTHROPIC_SIGNATURE.into(),
        data: "EqQBCkYIBxgC".into(),
        scope: Scope { provider: Some("claude-code".into()), model_provider: Some("anthropic".into()), model: Some("claude-sonnet-4-6".into()) },
    });
    session.extend([
        question,
        thinking,
        claude(Block::tool_use("toolu_01", "Bash", r#"{"command":"cargo test parser"}"#)),
        Block::tool_result("toolu_01", "test parser::empty ... FAILED", true),
        claude(Block::text(Actor::Assistant, "The empty-input case is not handled; I will fix the lexer.")),
        Block::text(Actor::User, "Go on in Codex, please."),
        Block::text(Actor::Assistant, "Fixed: the lexer now yields Eof. All tests pass.").attributed("codex", "openai", "gpt-5.4"),
    ])?;
    session.bind(Runtime::Codex, "thread-0001", session.len()? - 1)?;

    let info = &store.sessions()?[0];
    println!("session {} \"{}\": {} blocks, runtimes {}, models {}", info.id, info.title.as_deref().unwrap_or(""), info.block_count, info.providers.join(", "), info.models.join(", "));
    let switches = session.switches()?;
    for block in session.blocks()? {
        if let Some(switch) = switches.iter().find(|s| s.seq == block.seq) {
            println!("  ── switched to {} · {} {} ──", switch.to.provider.as_deref().unwrap_or("?"), switch.to.model_provider.as_deref().unwrap_or("?"), switch.to.model.as_deref().unwrap_or("?"));
        }
        let tool = block.tool.as_ref().map(|t| format!(" [{}]", t.name.as_deref().unwrap_or(&t.call_id))).unwrap_or_default();
        let embeds = if block.embeds.is_empty() { String::new() } else { format!(" (+{} embed)", block.embeds.len()) };
        println!("  {:>2} {:<9} {:<11}{tool} {}{embeds}", block.seq, block.actor.as_str(), block.kind.as_str(), block.content);
    }
    match session.continuation(Runtime::Codex)? {
        sna_history::Continuation::Continue { native_id, pending, .. } => {
            println!("continue codex thread {native_id} with {} pending blocks", pending.len())
        }
        sna_history::Continuation::Replay { reason } => println!("replay: {reason}"),
    }
    Ok(())
}
