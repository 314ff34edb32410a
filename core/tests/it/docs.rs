//! The documentation names only what exists. A doc (README.md, CONTRIBUTING.md, BENCHMARKS.md,
//! docs/**/*.md, the bindings' and the examples' READMEs, tests/**/README.md, each runtime's
//! FORMAT.md) fails this test when it names a file or folder that is not in the repository (a
//! relative link, a backticked repository path such as `core/src/store/fts.rs`, an upper-case
//! `NAME.md`), a schema version beyond the steps in `core/src/schema/`, or a list of runtimes that
//! is not the registry's without saying which it leaves out (a phrase such as "three runtimes"
//! fails too). `docs/SUMMARY.md` must list
//! every page under `docs/` and nothing else, and every page with a Rust snippet must be a doctest.
//!
//! Code blocks are not read (they run in the snippet tests); the checks read the prose and its
//! inline code, and are kept narrow so that ordinary prose does not trip them: the tests at the end
//! show what fires and what does not.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Component, Path, PathBuf};

use regex::Regex;
use sna_history::Runtime;

/// What the docs are checked against: the repository as it is.
struct Repo {
    root: PathBuf,
    /// The top-level folders a backticked path may start with (`core`, `docs`, `tests`, …).
    top: BTreeSet<String>,
    /// Every file name in the repository (for upper-case `NAME.md` mentions).
    names: BTreeSet<String>,
    sqlite_max: u32,
    pg_max: u32,
    /// Each runtime's display name and id, in the registry's order.
    runtimes: Vec<(&'static str, &'static str)>,
}

fn skipped_dir(name: &str) -> bool {
    name == "target" || name == "node_modules" || (name.starts_with('.') && name != ".ci")
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if !skipped_dir(&name) && name != "__pycache__" {
                walk(&path, out);
            }
        } else {
            out.push(path);
        }
    }
}

impl Repo {
    fn load() -> Repo {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf();
        let top = fs::read_dir(&root)
            .unwrap()
            .flatten()
            .filter(|e| e.path().is_dir())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| !skipped_dir(n))
            .collect();
        let mut files = Vec::new();
        walk(&root, &mut files);
        let names = files.iter().filter_map(|p| p.file_name()).map(|n| n.to_string_lossy().into_owned()).collect();
        let (mut sqlite_max, mut pg_max) = (0, 0);
        let step = Regex::new(r"^(pg-)?v(\d+)\.sql$").unwrap();
        for entry in fs::read_dir(root.join("core/src/schema")).unwrap().flatten() {
            if let Some(c) = step.captures(&entry.file_name().to_string_lossy()) {
                let n: u32 = c[2].parse().unwrap();
                let max = if c.get(1).is_some() { &mut pg_max } else { &mut sqlite_max };
                *max = (*max).max(n);
            }
        }
        assert!(sqlite_max > 0 && pg_max > 0, "no schema steps found in core/src/schema");
        let runtimes = Runtime::ALL.iter().map(|r| (r.display_name(), r.as_str())).collect();
        Repo { root, top, names, sqlite_max, pg_max, runtimes }
    }

    /// The docs this test reads, relative to the root.
    fn docs(&self) -> Vec<String> {
        let mut files = Vec::new();
        walk(&self.root, &mut files);
        let mut docs: Vec<String> = files
            .iter()
            .map(|p| p.strip_prefix(&self.root).unwrap().to_string_lossy().into_owned())
            .filter(|rel| {
                matches!(rel.as_str(), "README.md" | "CONTRIBUTING.md" | "BENCHMARKS.md" | "examples/README.md")
                    || (rel.starts_with("docs/") && rel.ends_with(".md"))
                    || (rel.starts_with("bindings-") && rel.matches('/').count() == 1 && rel.ends_with("/README.md"))
                    || (rel.starts_with("tests/") && rel.ends_with("/README.md"))
                    || (rel.starts_with("core/src/native/") && rel.ends_with("/FORMAT.md"))
            })
            .collect();
        docs.sort();
        docs
    }
}

/// `path` made plain (`a/./b/../c` → `a/c`); `None` when it leaves the repository.
fn normalize(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::CurDir => {}
            Component::Normal(p) => out.push(p),
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(out)
}

/// The prose of a Markdown text: fenced code blocks blanked (line numbers kept).
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut fence: Option<String> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        match &fence {
            Some(marker) => {
                if trimmed.starts_with(marker.as_str()) {
                    fence = None;
                }
                out.push('\n');
            }
            None if trimmed.starts_with("```") || trimmed.starts_with("~~~") => {
                fence = Some(trimmed[..3].to_string());
                out.push('\n');
            }
            None => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset].matches('\n').count() + 1
}

/// Everything wrong with one doc (`rel`: its path from the root), one line each.
fn problems(repo: &Repo, rel: &str, text: &str) -> Vec<String> {
    let text = prose(text);
    let dir = Path::new(rel).parent().unwrap_or(Path::new("")).to_path_buf();
    let mut found = Vec::new();
    let mut report = |offset: usize, what: String| found.push(format!("{rel}:{}: {what}", line_of(&text, offset)));
    let exists = |p: &Path| normalize(p).is_some_and(|p| repo.root.join(p).exists());

    // Relative links.
    let link = Regex::new(r"\]\(([^)\s]+)\)").unwrap();
    for c in link.captures_iter(&text) {
        let target = &c[1];
        if target.starts_with('#') || target.contains("://") || target.starts_with("mailto:") {
            continue;
        }
        let path = target.split('#').next().unwrap();
        if !exists(&dir.join(path)) {
            report(c.get(0).unwrap().start(), format!("the link {target:?} names no file of the repository"));
        }
    }

    // Backticked repository paths: `core/src/...`, `tests/...`, `docs/...`.
    let code = Regex::new(r"`([^`\n]+)`").unwrap();
    for c in code.captures_iter(&text) {
        let span = c[1].trim_start_matches("./");
        let odd = |ch: char| ch.is_whitespace() || "<>*{}$~…|,;()[]".contains(ch);
        if span.contains("://") || span.contains("...") || span.chars().any(odd) || !span.contains('/') {
            continue;
        }
        let first = span.split('/').next().unwrap();
        if !repo.top.contains(first) {
            continue;
        }
        if !exists(Path::new(span)) && !exists(&dir.join(span)) {
            report(c.get(0).unwrap().start(), format!("`{span}` is not in the repository"));
        }
    }

    // Upper-case Markdown names (DESIGN.md, BENCHMARKS.md), backticked or not; inline code with a
    // space in it is a quotation (Codex's `# AGENTS.md instructions`), not a file name.
    let upper = Regex::new(r"\b([A-Z][A-Z0-9_-]*\.md)\b").unwrap();
    let unquoted = code.replace_all(&text, |c: &regex::Captures| if c[1].contains(char::is_whitespace) { " ".repeat(c[0].len()) } else { c[0].to_string() });
    for c in upper.captures_iter(&unquoted) {
        let start = c.get(1).unwrap().start();
        let glued = text[..start].chars().next_back().is_some_and(|ch| ch == '/' || ch.is_alphanumeric());
        if !glued && !repo.names.contains(&c[1]) {
            report(start, format!("{} is not a file of the repository", &c[1]));
        }
    }

    // Schema versions: every vN on a line about the schema, every vN.sql, and ranges or lists from v1.
    let version = Regex::new(r"\b(pg-)?v(\d+)\b").unwrap();
    let step = Regex::new(r"\b(pg-)?v(\d+)\.sql\b").unwrap();
    let range = Regex::new(r"\b(pg-)?v1(?:\.sql)?`?\s*(?:-|–|to|,| and)\s*`?(?:pg-)?v(\d+)\b").unwrap();
    let more = Regex::new(r"^`?\s*(?:,|,? and|,? or)\s*`?(?:pg-)?v(\d+)\b").unwrap();
    let max = |pg: bool| if pg { repo.pg_max } else { repo.sqlite_max };
    let name = |pg: bool, n: &str| format!("{}v{n}", if pg { "pg-" } else { "" });
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if line.to_lowercase().contains("schema") {
            for c in version.captures_iter(line) {
                let (pg, n) = (c.get(1).is_some(), c[2].parse::<u32>().unwrap());
                if n > max(pg) {
                    report(offset + c.get(0).unwrap().start(), format!("schema {} does not exist (the last is {})", name(pg, &c[2]), name(pg, &max(pg).to_string())));
                }
            }
        }
        offset += line.len();
    }
    for c in step.captures_iter(&text) {
        let (pg, n) = (c.get(1).is_some(), c[2].parse::<u32>().unwrap());
        if n > max(pg) {
            report(c.get(0).unwrap().start(), format!("{} does not exist", &c[0]));
        }
    }
    for c in range.captures_iter(&text) {
        let pg = c.get(1).is_some();
        // A list from v1 goes on while more versions follow it.
        let mut end = c.get(0).unwrap().end();
        let mut last: u32 = c[2].parse().unwrap();
        while let Some(m) = more.captures(&text[end..]) {
            last = m[1].parse().unwrap();
            end += m.get(0).unwrap().end();
        }
        if last != max(pg) {
            report(c.get(0).unwrap().start(), format!("{:?} names the schema steps up to {}, but they go to {}", &text[c.get(0).unwrap().start()..end], name(pg, &last.to_string()), name(pg, &max(pg).to_string())));
        }
    }

    // Runtime counts other than the registry's.
    let count = Regex::new(r"(?i)\b(three|four|five|six|seven|eight|3|4|5|6|7|8)\s+(?:[a-z-]+\s+)?runtimes\b").unwrap();
    for c in count.captures_iter(&text) {
        let said = match c[1].to_ascii_lowercase().as_str() {
            "three" | "3" => 3,
            "four" | "4" => 4,
            "five" | "5" => 5,
            "six" | "6" => 6,
            "seven" | "7" => 7,
            _ => 8,
        };
        if said != repo.runtimes.len() {
            report(c.get(0).unwrap().start(), format!("{:?}: there are {} runtimes", &c[0], repo.runtimes.len()));
        }
    }

    // Lists of runtimes: three or more named in a row must be all of them, or the sentence must say
    // which are left out ("only", "except", "among", …, or naming the others elsewhere in it).
    let names: Vec<String> = repo.runtimes.iter().flat_map(|(d, i)| [regex::escape(d), regex::escape(i)]).collect();
    let any = Regex::new(&format!(r"\b(?:{})\b", names.join("|"))).unwrap();
    let separator = Regex::new(r"^[`*\s]*(?:,|,?\s*and|,?\s*or|/|·)[`*\s]*$").unwrap();
    let qualifier = Regex::new(r"(?i)\b(only|except|without|among|but not|other than|not yet|of the five|the others)\b").unwrap();
    let which = |s: &str| repo.runtimes.iter().position(|(d, i)| s == *d || s == *i).unwrap();
    for (start, paragraph) in paragraphs(&text) {
        let hits: Vec<_> = any.find_iter(paragraph).collect();
        let mut i = 0;
        while i < hits.len() {
            let mut j = i;
            while j + 1 < hits.len() && separator.is_match(&paragraph[hits[j].end()..hits[j + 1].start()]) {
                j += 1;
            }
            let named: BTreeSet<usize> = hits[i..=j].iter().map(|m| which(m.as_str())).collect();
            if named.len() >= 3 && named.len() < repo.runtimes.len() {
                let (from, to) = sentence(paragraph, hits[i].start(), hits[j].end());
                let said = &paragraph[from..to];
                let in_sentence: BTreeSet<usize> = any.find_iter(said).map(|m| which(m.as_str())).collect();
                if !qualifier.is_match(said) && in_sentence.len() < repo.runtimes.len() {
                    let missing: Vec<&str> = (0..repo.runtimes.len()).filter(|k| !named.contains(k)).map(|k| repo.runtimes[k].0).collect();
                    report(start + hits[i].start(), format!("{:?} lists runtimes without {} and does not say why", &paragraph[hits[i].start()..hits[j].end()], missing.join(", ")));
                }
            }
            i = j + 1;
        }
    }
    let mut seen = BTreeSet::new();
    found.retain(|f| seen.insert(f.clone()));
    found
}

/// The paragraphs of a text (split at blank lines), with their offsets.
fn paragraphs(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = 0;
    for (at, _) in text.match_indices("\n\n").chain(std::iter::once((text.len(), ""))) {
        if at > start {
            out.push((start, &text[start..at]));
        }
        start = at + 2;
    }
    out
}

/// The sentence around `from..to` in `paragraph`: from the end of the previous sentence (". ")
/// to the end of this one.
fn sentence(paragraph: &str, from: usize, to: usize) -> (usize, usize) {
    let ends = |s: &str| s.match_indices(". ").map(|(i, _)| i).collect::<Vec<_>>();
    let start = ends(&paragraph[..from]).last().map(|i| i + 2).unwrap_or(0);
    let end = ends(&paragraph[to..]).first().map(|i| to + i + 1).unwrap_or(paragraph.len());
    (start, end)
}

/// What is wrong with `docs/SUMMARY.md` and the doctest list: entries without a file, pages without
/// an entry, pages whose Rust snippets are not compiled.
fn book_problems(repo: &Repo) -> Vec<String> {
    let mut found = Vec::new();
    let summary = fs::read_to_string(repo.root.join("docs/SUMMARY.md")).expect("docs/SUMMARY.md");
    let entry = Regex::new(r"^\s*[-*]\s+\[[^\]]+\]\(([^)]*)\)\s*$").unwrap();
    let mut listed = BTreeSet::new();
    for (n, line) in summary.lines().enumerate() {
        if let Some(c) = entry.captures(line) {
            let target = c[1].split('#').next().unwrap();
            if !target.is_empty() {
                if !repo.root.join("docs").join(target).is_file() {
                    found.push(format!("docs/SUMMARY.md:{}: {target} does not exist", n + 1));
                }
                listed.insert(format!("docs/{target}"));
            }
        } else if line.trim_start().starts_with(['-', '*']) {
            found.push(format!("docs/SUMMARY.md:{}: not an mdBook entry `- [Title](page.md)`", n + 1));
        }
    }
    let doctests = fs::read_to_string(repo.root.join("core/src/doc_pages.rs")).expect("core/src/doc_pages.rs");
    for doc in repo.docs().into_iter().filter(|d| d.starts_with("docs/") && d != "docs/SUMMARY.md") {
        if !listed.contains(&doc) {
            found.push(format!("{doc} is not in docs/SUMMARY.md"));
        }
        let text = fs::read_to_string(repo.root.join(&doc)).unwrap();
        if text.contains("```rust") && !doctests.contains(&format!("include_str!(\"../../{doc}\")")) {
            found.push(format!("{doc} has Rust snippets but is not included in core/src/doc_pages.rs"));
        }
    }
    found
}

#[test]
fn the_docs_name_only_what_exists() {
    let repo = Repo::load();
    let docs = repo.docs();
    assert!(docs.contains(&"README.md".to_string()) && docs.iter().any(|d| d.starts_with("docs/")), "{docs:?}");
    let mut found = Vec::new();
    for doc in &docs {
        found.extend(problems(&repo, doc, &fs::read_to_string(repo.root.join(doc)).unwrap()));
    }
    found.extend(book_problems(&repo));
    assert!(found.is_empty(), "stale documentation:\n{}", found.join("\n"));
}

#[test]
fn the_readme_fits_on_a_screen() {
    let repo = Repo::load();
    let lines = fs::read_to_string(repo.root.join("README.md")).unwrap().lines().count();
    assert!(lines <= 300, "README.md has {lines} lines; its details belong in docs/");
}

#[test]
fn the_checks_fire_on_stale_samples() {
    let repo = Repo::load();
    let stale = [
        ("a missing link", "See [the guide](guide-that-is-not-here.md)."),
        ("a link out of the repository", "See [x](../../outside.md)."),
        ("a missing backticked path", "The index is in `core/src/store/no_such_file.rs`."),
        ("a missing folder", "Runtimes live in `core/src/native/no_such_runtime/`."),
        ("a missing upper-case doc", "The design is in DESIGN.md of the project."),
        ("a schema version beyond the last", "The schema is at v99 now."),
        ("a PostgreSQL step beyond the last", "PostgreSQL's schema steps end at pg-v99."),
        ("a stale range", "core/src/schema holds SQLite's steps v1-v5."),
        ("a stale list", "PostgreSQL's steps pg-v1, pg-v2."),
        ("a missing step file", "See `v99.sql`."),
        ("a runtime count", "It supports three runtimes."),
        ("a short runtime list", "Converted to each runtime's native shape (Claude Code, Codex, OpenCode)."),
        ("a short list of ids", "The runtime: `claude-code`, `codex` or `opencode`."),
    ];
    for (what, sample) in stale {
        assert!(!problems(&repo, "docs/sample.md", sample).is_empty(), "{what} was not caught: {sample:?}");
    }
    let fine = [
        "Claude Code, Codex, OpenCode, Gemini CLI, Pi, Qwen Code and Copilot CLI.",
        "`claude-code`, `codex`, `opencode`, `gemini-cli`, `pi`, `qwen-code` or `copilot-cli`.",
        "Every runtime except Gemini CLI compacts on request (Claude Code, Codex, OpenCode, Pi).",
        "The cases among Claude Code, Codex and OpenCode run three times.",
        "A relay: Claude Code → Codex → OpenCode → Claude Code.",
        "Claude Code, Codex and OpenCode are tested here; Gemini CLI, Pi, Qwen Code and Copilot CLI in their own files.",
        "A Pi session is resumed with `pi --session <file>`; see [Pi](runtimes/pi.md) and `core/src/store/`.",
        "All three languages give the same blocks; the schema is v7 (`core/src/schema/v7.sql`).",
        "Paths with placeholders such as `core/src/native/<runtime>/live.rs` or `~/.codex/sessions` are not checked.",
        "```text\nDESIGN.md v99 three runtimes `core/nothing.rs`\n```",
        "Codex's own context fragments (`# AGENTS.md instructions`) are harness context.",
    ];
    for sample in fine {
        let found = problems(&repo, "docs/sample.md", sample);
        assert!(found.is_empty(), "{sample:?} was flagged: {found:?}");
    }
}
