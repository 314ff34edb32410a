//! The large inputs the conversion benchmarks (and `scripts/bench-cli.sh`, through the
//! `bench_cli` example) are made of: a fixture the real CLI wrote, repeated with fresh ids until
//! the file is at least the size asked for.

#![allow(dead_code)] // each user takes its own runtime's input

/// A Claude Code transcript: the `tools-thinking` fixture, copy after copy chained.
pub mod claude_code {
    use std::io::Write;
    use std::path::{Path, PathBuf};

    use serde_json::Value;

    fn fixture() -> Vec<Value> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/fixtures/claude-code/tools-thinking/60aa014b-82fa-4f7d-8a5d-270b96a69979.jsonl");
        std::fs::read_to_string(path).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    }

    fn fresh(text: &str, copy: usize) -> String {
        format!("{copy:08x}{}", &text[8.min(text.len())..])
    }

    /// Rewrites every uuid-like id of a record for copy `copy`, so that copies chain one after another.
    fn renumber(value: &mut Value, copy: usize) {
        match value {
            Value::Object(map) => {
                for (key, v) in map.iter_mut() {
                    match (key.as_str(), &*v) {
                        ("uuid" | "parentUuid" | "leafUuid" | "messageId" | "sourceToolAssistantUUID" | "promptId" | "requestRef", Value::String(s)) => {
                            *v = Value::String(fresh(s, copy));
                        }
                        ("id" | "tool_use_id", Value::String(s)) if s.starts_with("msg_") || s.starts_with("toolu_") => {
                            *v = Value::String(format!("{s}{copy:x}"));
                        }
                        _ => renumber(v, copy),
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| renumber(v, copy)),
            _ => {}
        }
    }

    /// Writes a transcript of at least `mb` megabytes; returns its path and line count.
    pub fn generate(dir: &Path, mb: usize) -> (PathBuf, usize) {
        let records = fixture();
        let path = dir.join("big.jsonl");
        let mut out = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        let (mut written, mut lines, mut copy) = (0usize, 0usize, 0usize);
        let mut previous_leaf: Option<String> = None;
        while written < mb << 20 {
            for (i, record) in records.iter().enumerate() {
                let mut record = record.clone();
                renumber(&mut record, copy);
                // The first row of each copy continues the previous copy's chain.
                if i == 2 {
                    if let Some(leaf) = &previous_leaf {
                        record["parentUuid"] = Value::String(leaf.clone());
                    }
                }
                if record.get("type").and_then(Value::as_str) == Some("last-prompt") {
                    previous_leaf = record["leafUuid"].as_str().map(str::to_string);
                }
                let line = serde_json::to_string(&record).unwrap();
                written += line.len() + 1;
                lines += 1;
                out.write_all(line.as_bytes()).unwrap();
                out.write_all(b"\n").unwrap();
            }
            copy += 1;
        }
        out.flush().unwrap();
        (path, lines)
    }
}

/// A Codex rollout: the `reasoning-exec` fixture's turn repeated with fresh item, call and turn ids.
pub mod codex {
    use std::io::Write;
    use std::path::{Path, PathBuf};

    use serde_json::Value;

    fn fixture() -> Vec<Value> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/fixtures/codex/reasoning-exec/rollout-2026-12-02T15-47-39-01a23770-a7b0-7463-80bd-dee5a5ec5236.jsonl");
        std::fs::read_to_string(path).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    }

    /// Makes the ids of a line unique to copy `copy`: item ids, call ids and turn ids.
    fn renumber(value: &mut Value, copy: usize) {
        match value {
            Value::Object(map) => {
                for (key, v) in map.iter_mut() {
                    match (key.as_str(), &*v) {
                        ("id" | "call_id" | "turn_id" | "root_turn_id" | "response_id", Value::String(s)) if !s.is_empty() => {
                            *v = Value::String(format!("{s}-{copy:x}"));
                        }
                        _ => renumber(v, copy),
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| renumber(v, copy)),
            _ => {}
        }
    }

    /// Writes a rollout of at least `mb` megabytes: the session_meta line once, then the turn's lines
    /// again and again with consecutive ordinals. Returns its path and line count.
    pub fn generate(dir: &Path, mb: usize) -> (PathBuf, usize) {
        let lines = fixture();
        let path = dir.join("rollout-2026-12-02T15-47-39-01a23770-a7b0-7463-80bd-dee5a5ec5236.jsonl");
        let mut out = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        let mut write = |line: &Value, written: &mut usize| {
            let text = serde_json::to_string(line).unwrap();
            *written += text.len() + 1;
            out.write_all(text.as_bytes()).unwrap();
            out.write_all(b"\n").unwrap();
        };
        let (mut written, mut ordinal, mut copy) = (0usize, 0u64, 0usize);
        write(&lines[0], &mut written);
        while written < mb << 20 {
            for line in &lines[1..] {
                let mut line = line.clone();
                renumber(&mut line, copy);
                ordinal += 1;
                line["ordinal"] = Value::from(ordinal);
                write(&line, &mut written);
            }
            copy += 1;
        }
        out.flush().unwrap();
        (path, ordinal as usize + 1)
    }
}

/// An OpenCode export document: the `tools-reasoning` fixture's messages repeated with fresh ids.
pub mod opencode {
    use std::path::{Path, PathBuf};

    use serde_json::Value;

    fn fixture() -> Value {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/opencode/tools-reasoning/export.json");
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    /// Gives the ids of a message copy a suffix unique to copy `copy`.
    fn renumber(value: &mut Value, copy: usize) {
        match value {
            Value::Object(map) => {
                for (key, v) in map.iter_mut() {
                    match (key.as_str(), &*v) {
                        ("id" | "messageID" | "parentID" | "callID", Value::String(s)) if !s.starts_with("ses_") => {
                            *v = Value::String(format!("{s}{copy:06x}"));
                        }
                        _ => renumber(v, copy),
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| renumber(v, copy)),
            _ => {}
        }
    }

    /// Writes a document of at least `mb` megabytes, message by message (the whole document is never
    /// in memory, so that the import's peak memory can be read); returns its path and message count.
    pub fn generate(dir: &Path, mb: usize) -> (PathBuf, usize) {
        use std::io::Write;
        let doc = fixture();
        let messages = doc["messages"].as_array().unwrap();
        let path = dir.join("big-export.json");
        let mut out = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        write!(out, "{{\"info\":{},\"messages\":[", doc["info"]).unwrap();
        let (mut written, mut count, mut copy) = (0usize, 0usize, 0usize);
        while written < mb << 20 {
            for message in messages {
                let mut message = message.clone();
                renumber(&mut message, copy);
                let text = serde_json::to_string(&message).unwrap();
                if count > 0 {
                    out.write_all(b",").unwrap();
                }
                out.write_all(text.as_bytes()).unwrap();
                written += text.len() + 1;
                count += 1;
            }
            copy += 1;
        }
        out.write_all(b"]}").unwrap();
        out.flush().unwrap();
        (path, count)
    }
}
