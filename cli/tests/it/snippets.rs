//! The shell snippets of the README and of the pages under docs/ that run `sna` run here, as a user
//! would type them, so that they cannot rot. Each page gets a fresh temporary HOME holding one
//! session file of each runtime where that runtime keeps them (taken from tests/fixtures), a fresh
//! database under `$XDG_DATA_HOME`, and this build's `sna` first on `PATH`; its ```sh (or ```bash)
//! blocks run in order with `bash -eu` in an empty working directory, and each must exit 0.
//!
//! Blocks that do not call `sna` (the two commands of the README, `npm` and `cargo` lines) are not
//! run here: the test command is those. Snippets that need a runtime's account or a PostgreSQL
//! server are written as ```text in the docs, and are not run.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// The README and every page under docs/.
fn docs() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    let mut out = vec![root().join("README.md")];
    walk(&root().join("docs"), &mut out);
    out.sort();
    out
}

/// The ```sh and ```bash blocks of a Markdown text that call `sna`.
fn sna_blocks(text: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        match current.as_mut() {
            Some(block) if line.trim_start().starts_with("```") => {
                blocks.push(std::mem::take(block));
                current = None;
            }
            Some(block) => {
                block.push_str(line);
                block.push('\n');
            }
            None if matches!(line.trim(), "```sh" | "```bash") => current = Some(String::new()),
            None => {}
        }
    }
    blocks.retain(|b| b.lines().any(|l| l.split_whitespace().next() == Some("sna")));
    blocks
}

fn copy(from: &Path, to: &Path) {
    fs::create_dir_all(to.parent().unwrap()).unwrap();
    fs::copy(from, to).unwrap_or_else(|e| panic!("{}: {e}", from.display()));
}

/// The one file in `dir` whose name starts with `prefix` and ends with `.jsonl`.
fn one(dir: &Path, prefix: &str) -> PathBuf {
    let mut found: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(prefix) && p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    assert_eq!(found.len(), 1, "{}: {found:?}", dir.display());
    found.pop().unwrap()
}

/// A HOME with one session of each runtime where the runtime keeps it.
fn stage_home(home: &Path) {
    let fixtures = root().join("tests/fixtures");
    let claude = fixtures.join("claude-code/tools-thinking/60aa014b-82fa-4f7d-8a5d-270b96a69979.jsonl");
    copy(&claude, &home.join(".claude/projects/-home-dev-project/60aa014b-82fa-4f7d-8a5d-270b96a69979.jsonl"));
    let rollout = one(&fixtures.join("codex/basic"), "rollout-");
    copy(&rollout, &home.join(".codex/sessions/2026/12/02").join(rollout.file_name().unwrap()));
    for name in ["opencode.db", "opencode.db-wal", "opencode.db-shm"] {
        let db = fixtures.join("opencode/tools-reasoning").join(name);
        if db.exists() {
            copy(&db, &home.join(".local/share/opencode").join(name));
        }
    }
    let log = one(&fixtures.join("gemini-cli/tools-thinking"), "session-");
    copy(&log, &home.join(".gemini/tmp/project/chats").join(log.file_name().unwrap()));
    let pi = one(&fixtures.join("pi/tools-thinking"), "2026-");
    copy(&pi, &home.join(".pi/agent/sessions/--home-dev-project--").join(pi.file_name().unwrap()));
}

#[test]
fn the_docs_shell_snippets_run() {
    let sna = PathBuf::from(env!("CARGO_BIN_EXE_sna"));
    let path = format!("{}:{}", sna.parent().unwrap().display(), std::env::var("PATH").unwrap_or_default());
    let mut ran = Vec::new();
    for doc in docs() {
        let blocks = sna_blocks(&fs::read_to_string(&doc).unwrap());
        if blocks.is_empty() {
            continue;
        }
        let name = doc.strip_prefix(root()).unwrap().display().to_string();
        let dir = tempfile::tempdir().unwrap();
        let (home, work) = (dir.path().join("home"), dir.path().join("work"));
        stage_home(&home);
        fs::create_dir_all(&work).unwrap();
        for (i, block) in blocks.iter().enumerate() {
            let out = Command::new("bash")
                .args(["-eu", "-c", block])
                .current_dir(&work)
                .env("PATH", &path)
                .env("HOME", &home)
                .env("XDG_DATA_HOME", dir.path().join("data"))
                .env("XDG_CONFIG_HOME", dir.path().join("config"))
                .env("TZ", "UTC")
                .env_remove("SNA_HISTORY_DB")
                .env_remove("SNA_TOKEN")
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{name}, shell snippet {} failed ({}):\n{block}\nstdout:\n{}\nstderr:\n{}",
                i + 1,
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            ran.push(format!("{name} #{}", i + 1));
        }
        // What the snippets say they write is there.
        if name == "docs/cli.md" {
            assert!(work.join("prelude.txt").is_file() && work.join("session.html").is_file(), "{name}");
        }
        if name == "docs/getting-started.md" {
            assert!(work.join("rollout.jsonl").is_file() && work.join("scratch/.codex/sessions").is_dir(), "{name}");
        }
    }
    // The pages that show `sna` at work all ran (a page that loses its snippets shows here).
    for page in ["docs/getting-started.md", "docs/cli.md", "docs/search.md", "docs/usage.md", "docs/postgres.md", "docs/redaction.md"] {
        assert!(ran.iter().any(|r| r.starts_with(&format!("{page} "))), "no snippet of {page} ran: {ran:?}");
    }
}

#[test]
fn only_blocks_that_call_sna_are_taken() {
    let text = "```sh\n./scripts/test.sh\n```\n\n```sh\nsna ls\n```\n\n```text\nsna serve\n```\n\n```bash\ncd x && npm ci\nsna import ~/.claude/projects   # comment\n```\n";
    assert_eq!(sna_blocks(text), vec!["sna ls\n".to_string(), "cd x && npm ci\nsna import ~/.claude/projects   # comment\n".to_string()]);
}
