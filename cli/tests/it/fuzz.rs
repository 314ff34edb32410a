//! The CLI over mutated fixtures (the core fuzz suite's mutations, fewer of them): `sna import` of
//! a directory of damaged files, then `ls`, `show`, `export` to every runtime, `view` and
//! `convert` of each. A command may refuse (exit 1, with a message); it must never panic (exit
//! 101), die of a signal, hang or report an internal error. `SNA_FUZZ_SEED` picks the run.

use std::path::{Path, PathBuf};
use std::time::Duration;

use assert_cmd::Command;

fn fixture_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
    let mut out = Vec::new();
    for runtime in ["claude-code", "codex", "opencode"] {
        for dir in std::fs::read_dir(root.join(runtime)).unwrap() {
            for file in std::fs::read_dir(dir.unwrap().path()).unwrap() {
                let file = file.unwrap().path();
                let name = file.file_name().unwrap().to_str().unwrap().to_string();
                if name == "export.json" || (name.ends_with(".jsonl") && name != "events.jsonl" && name != "requests.jsonl") {
                    out.push(file);
                }
            }
        }
    }
    out.sort();
    out
}

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n.max(1) as u64) as usize
    }
}

fn mutate(bytes: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut out = bytes.to_vec();
    match rng.below(5) {
        0 => out.truncate(rng.below(bytes.len())),
        1 => {
            for _ in 0..1 + rng.below(6) {
                let at = rng.below(out.len());
                out[at] ^= 1 << rng.below(8);
            }
        }
        2 => {
            let at = rng.below(out.len());
            out.splice(at..at, [0xff, 0x1b, b'[', b'2', b'J', 0xc3]);
        }
        3 => {
            let depth = [99, 101, 126, 200][rng.below(4)];
            let line = format!("{{\"type\":\"progress\",\"data\":{}1{}}}\n", "[".repeat(depth), "]".repeat(depth));
            let at = out.iter().position(|b| *b == b'\n').map_or(0, |i| i + 1);
            out.splice(at..at, line.into_bytes());
        }
        _ => {
            let lines: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
            let dup = lines[rng.below(lines.len())].to_vec();
            out.extend_from_slice(&dup);
            out.push(b'\n');
        }
    }
    out
}

fn sna(dir: &Path) -> Command {
    let mut cmd = Command::cargo_bin("sna").unwrap();
    cmd.env("SNA_HISTORY_DB", dir.join("history.db")).env("HOME", dir.join("home")).timeout(Duration::from_secs(120));
    cmd
}

/// Runs `args` and fails on a panic, a signal or a hang; returns stdout when it succeeded.
fn survive(dir: &Path, args: &[&str]) -> Option<String> {
    let output = sna(dir).args(args).output().unwrap();
    let code = output.status.code();
    assert!(
        matches!(code, Some(0) | Some(1)),
        "sna {args:?} ended with {:?}: {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("internal error"), "sna {args:?}: {stderr}");
    (code == Some(0)).then(|| String::from_utf8_lossy(&output.stdout).into_owned())
}

#[test]
fn the_cli_survives_damaged_files() {
    let seed: u64 = std::env::var("SNA_FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(17);
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("damaged");
    std::fs::create_dir_all(&tree).unwrap();
    let files = fixture_files();
    for (i, file) in files.iter().chain(files.iter()).enumerate() {
        let bytes = mutate(&std::fs::read(file).unwrap(), &mut rng);
        let name = file.file_name().unwrap().to_str().unwrap();
        // Distinct names, so that each becomes its own session where it can.
        std::fs::write(tree.join(format!("{i:02}-{name}")), &bytes).unwrap();
        survive(dir.path(), &["convert", tree.join(format!("{i:02}-{name}")).to_str().unwrap(), "--to", "codex"]);
    }
    // And one damage every run has: a record nested right at the depth JSON reading stops at.
    let claude = files.iter().find(|f| f.to_str().unwrap().contains("claude-code")).unwrap();
    let mut text = std::fs::read_to_string(claude).unwrap();
    let at = text.find('\n').unwrap() + 1;
    text.insert_str(at, &format!("{{\"type\":\"progress\",\"data\":{}1{}}}\n", "[".repeat(126), "]".repeat(126)));
    std::fs::write(tree.join("deep-59187973-81fd-4be2-8aa9-a21c45c78135.jsonl"), text).unwrap();
    survive(dir.path(), &["import", tree.to_str().unwrap()]);
    survive(dir.path(), &["import", tree.to_str().unwrap()]);
    let listed = survive(dir.path(), &["ls", "--json"]).expect("ls works");
    let sessions: serde_json::Value = serde_json::from_str(&listed).unwrap();
    let ids: Vec<String> = sessions.as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap().to_string()).collect();
    assert!(!ids.is_empty(), "some damaged files still import");
    for id in &ids {
        survive(dir.path(), &["show", id]);
        for runtime in ["claude-code", "codex", "opencode"] {
            survive(dir.path(), &["export", id, "--to", runtime]);
        }
        survive(dir.path(), &["view", id, "-o", dir.path().join("v.html").to_str().unwrap()]);
    }
}
