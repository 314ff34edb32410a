//! The replay budget's token estimate (`replay::budget::estimate_tokens`) against a real tokenizer
//! (OpenAI's o200k_base, through tiktoken-rs) on every block of every fixture session the real
//! CLIs wrote: the estimate must err high for each session, and the figures are printed (they are
//! the ones the budget module documents).

use sna_history::replay::budget::estimate_tokens;
use sna_history::{Options, Store};

fn fixture_files() -> Vec<std::path::PathBuf> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
    let mut out = Vec::new();
    for runtime in ["claude-code", "codex", "opencode", "gemini-cli", "pi"] {
        for scenario in std::fs::read_dir(root.join(runtime)).unwrap() {
            let scenario = scenario.unwrap().path();
            for file in std::fs::read_dir(&scenario).unwrap() {
                let file = file.unwrap().path();
                let name = file.file_name().unwrap().to_str().unwrap().to_string();
                let native = (name.ends_with(".jsonl") && !["events.jsonl", "requests.jsonl", "stdin.jsonl", "http.jsonl"].contains(&name.as_str())) || name == "export.json";
                if native {
                    out.push(file);
                }
            }
        }
    }
    out.sort();
    out
}

#[test]
fn the_estimate_errs_high_against_a_real_tokenizer() {
    let bpe = tiktoken_rs::o200k_base().unwrap();
    let (mut estimated, mut counted, mut blocks, mut under) = (0u64, 0u64, 0u64, 0u64);
    let mut lowest = f64::MAX;
    for file in fixture_files() {
        let store = Store::open_in_memory().unwrap();
        let session = store.import_file(&file, None, &Options::default()).unwrap();
        let (mut session_estimate, mut session_count) = (0u64, 0u64);
        for block in session.blocks().unwrap() {
            let mut text = block.content.clone();
            if let Some(name) = block.tool.as_ref().and_then(|t| t.name.as_deref()) {
                text.push(' ');
                text.push_str(name);
            }
            // An image is counted by its own rule; its placeholder text by the tokenizer.
            let tokens = bpe.encode_ordinary(&text).len() as u64;
            let estimate = estimate_tokens(&block);
            session_estimate += estimate;
            session_count += tokens;
            blocks += 1;
            if estimate < tokens {
                under += 1;
            }
            if tokens > 0 {
                lowest = lowest.min(estimate as f64 / tokens as f64);
            }
        }
        assert!(session_estimate >= session_count, "{}: estimated {session_estimate} < {session_count} tokens", file.display());
        estimated += session_estimate;
        counted += session_count;
    }
    eprintln!(
        "estimate against o200k_base over {blocks} blocks of the fixtures: {estimated} estimated for {counted} counted ({:.2}×); {under} blocks under ({:.2}%), the lowest block at {lowest:.2}×",
        estimated as f64 / counted as f64,
        under as f64 * 100.0 / blocks as f64
    );
    assert!(estimated as f64 >= 1.2 * counted as f64, "the estimate keeps a margin over the tokenizer");
}
