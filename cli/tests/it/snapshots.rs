//! Snapshots of what `sna` prints for a person to read: `ls`, `show`, `search`, `report`, `usage`
//! and the one-line errors, over the fixtures imported into a temporary database.
//!
//! A snapshot (`cli/tests/it/snapshots/*.snap`) holds each command line, its exit status, its
//! stdout and its stderr. Filters put placeholders where a run differs from the next: `[TMP]` for
//! the test's temporary folder, `[FIXTURES]` and `[REPO]` for this checkout, and, where a test
//! made the session itself, `[NOW]`, `[TIME]` and `[UUIDv7]` for the times and the ids minted at
//! that moment. CONTRIBUTING.md says how to review a changed snapshot and accept it.

use std::ffi::OsStr;
use std::path::Path;

use crate::{fixtures, sna};

/// The filters every snapshot of `sna` goes through: the places of this run and this checkout.
pub(crate) fn settings(dir: &Path) -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    let places = [(dir.to_path_buf(), "[TMP]"), (fixtures(), "[FIXTURES]"), (sna_test_support::repo_root(), "[REPO]")];
    for (place, name) in places {
        let canonical = place.canonicalize().unwrap_or_else(|_| place.clone());
        for path in [canonical, place] {
            let path = path.to_str().expect("a UTF-8 path").trim_end_matches('/').to_string();
            settings.add_filter(&regex::escape(&path), name);
        }
    }
    settings
}

/// `settings` plus the times of now, for sessions the test imported or made: the UPDATED column
/// of `sna ls` and the block times of `sna show`.
pub(crate) fn settings_now(dir: &Path) -> insta::Settings {
    let mut settings = settings(dir);
    settings.add_filter(r"(?m)\d{4}-\d{2}-\d{2} \d{2}:\d{2}$", "[NOW]");
    settings.add_filter(r"(?m)^(\S?\s*\d+) \d{2}:\d{2}:\d{2} ", "$1 [TIME] ");
    settings
}

/// Adds a filter for the ids minted when the test made its sessions through the API (UUID v7,
/// whose first digits are the time of now): `[UUIDv7]`. Not for fixtures, whose ids are v7 too.
pub(crate) fn filter_minted_ids(settings: &mut insta::Settings) {
    settings.add_filter(r"\b[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\b", "[UUIDv7]");
}

/// One run of `sna` in `dir` as a snapshot shows it: the command line, the exit status, then
/// stdout and stderr (each left out when empty).
pub(crate) fn run<S: AsRef<OsStr>>(dir: &Path, args: &[S]) -> String {
    let out = sna(dir).env("TZ", "UTC").args(args).output().expect("sna runs");
    let line: Vec<String> = args.iter().map(|a| quoted(&a.as_ref().to_string_lossy())).collect();
    let status = out.status.code().map_or_else(|| "killed by a signal".to_string(), |c| c.to_string());
    let mut text = format!("$ sna {}\n[exit {status}]\n", line.join(" "));
    for (name, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        if bytes.is_empty() {
            continue;
        }
        text.push_str(&format!("[{name}]\n{}", String::from_utf8_lossy(bytes)));
        if !text.ends_with('\n') {
            text.push('\n');
        }
    }
    text
}

/// Several runs, one after the other, a blank line between them.
pub(crate) fn runs(dir: &Path, commands: &[&[&str]]) -> String {
    commands.iter().map(|args| run(dir, args)).collect::<Vec<_>>().join("\n")
}

/// An argument as a shell would need it written.
fn quoted(arg: &str) -> String {
    if !arg.is_empty() && arg.chars().all(|c| c.is_alphanumeric() || "-_./:=@,+*#".contains(c)) {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

/// `tests/fixtures/<rel>` as an argument.
fn fixture(rel: &str) -> String {
    fixtures().join(rel).to_str().expect("a UTF-8 path").to_string()
}

/// A temporary folder whose database holds every fixture, imported by `sna import`.
fn imported() -> tempfile::TempDir {
    let dir = sna_test_support::tmp();
    sna(dir.path()).arg("import").arg(fixtures()).assert().success();
    dir
}

/// One session of each runtime (its tools-and-thinking scenario), then a compacted one.
#[test]
fn show_prints_a_timeline_with_attribution_and_compactions() {
    let dir = imported();
    for (name, id) in [
        ("show_claude_code", "60aa014b-82fa-4f7d-8a5d-270b96a69979"),
        ("show_codex", "01a23770-a7b0-7463-80bd-dee5a5ec5236"),
        ("show_opencode", "ses_dc88f2d3fffeMKA1Q7vdvRR6hO"),
        ("show_gemini_cli", "1d40c064-2b7e-47a4-9451-db2145b4850e"),
        ("show_pi", "01a2418a-39c0-7367-8255-e55e375c7852"),
        ("show_compacted", "e4e2453c-d980-4b7d-a578-4a8969921267"),
    ] {
        settings(dir.path()).bind(|| insta::assert_snapshot!(name, run(dir.path(), &["show", id])));
    }
}

#[test]
fn report_lists_what_each_conversion_drops() {
    let dir = imported();
    let claude = "60aa014b-82fa-4f7d-8a5d-270b96a69979";
    let every_runtime: Vec<[&str; 4]> = ["claude-code", "codex", "opencode", "gemini-cli", "pi"].map(|to| ["report", claude, "--to", to]).into();
    let every_runtime: Vec<&[&str]> = every_runtime.iter().map(|args| &args[..]).collect();
    settings(dir.path()).bind(|| insta::assert_snapshot!("report_to_every_runtime", runs(dir.path(), &every_runtime)));
    let text = runs(
        dir.path(),
        &[
            &["report", "01a23770-a7b0-7463-80bd-dee5a5ec5236", "--to", "claude-code"],
            &["report", "ses_dc88f2d3fffeMKA1Q7vdvRR6hO", "--to", "codex", "--target-model", "gpt-5.4"],
            &["report", "1d40c064-2b7e-47a4-9451-db2145b4850e", "--to", "pi"],
            &["report", "e4e2453c-d980-4b7d-a578-4a8969921267", "--to", "gemini-cli", "--strict"],
            &["report", "e4e2453c-d980-4b7d-a578-4a8969921267", "--to", "codex", "--compaction", "none"],
        ],
    );
    settings(dir.path()).bind(|| insta::assert_snapshot!("report_across_runtimes", text));
}

/// Every grouping over the runs before 2026-12-06, in UTC (the compaction runs' mocks report
/// large prompts on purpose; `show_prints...` and `report...` cover them).
#[test]
fn usage_prints_a_table_per_grouping() {
    let dir = imported();
    let mut commands: Vec<Vec<&str>> = ["day", "week", "month", "session", "project", "model", "provider"].iter().map(|by| vec!["usage", "--by", by, "--tz", "UTC", "--until", "2026-12-05"]).collect();
    commands.push(vec!["usage", "--by", "model", "--tz", "UTC", "--since", "2026-12-03", "--until", "2026-12-05", "--runtime", "gemini-cli"]);
    commands.push(vec!["usage", "--by", "session", "--tz", "UTC", "--model", "gpt-5.5", "--until", "2026-12-05"]);
    commands.push(vec!["usage", "--tz", "UTC", "--since", "2027-01-01"]);
    let commands: Vec<&[&str]> = commands.iter().map(Vec::as_slice).collect();
    settings(dir.path()).bind(|| insta::assert_snapshot!("usage_by_every_grouping", runs(dir.path(), &commands)));
}

#[test]
fn search_prints_where_each_hit_is_and_a_marked_snippet() {
    let dir = imported();
    let until = ["--until", "2026-12-05"];
    let text = runs(
        dir.path(),
        &[
            &["search", "pineapple", "--kind", "text", until[0], until[1]],
            &["search", "notes*", "--runtime", "codex", "--limit", "3", until[0], until[1]],
            &["search", "data.csv OR missing.txt", "--kind", "tool_result", until[0], until[1]],
            &["search", "hello NOT notes", "--model", "gpt-5.5", until[0], until[1]],
            &["search", "\"one short sentence\"", "--session", "ses_dc88f4240ffeO6uY0paFS1zYWG"],
            &["search", "pineapple", "--since", "2027-01-01"],
        ],
    );
    settings(dir.path()).bind(|| insta::assert_snapshot!("search", text));
}

/// Each mistake is one line on stderr starting with `sna: ` and exit status 1; clap's own
/// (an unknown subcommand, a missing option) exit 2 with its usage.
#[test]
fn errors_are_one_line_each() {
    let dir = imported();
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, "just words\n").unwrap();
    let notes = notes.to_str().unwrap();
    let none = dir.path().join("none.json");
    let none = none.to_str().unwrap();
    let claude = "60aa014b-82fa-4f7d-8a5d-270b96a69979";
    let compacted = fixture("claude-code/compact/e4e2453c-d980-4b7d-a578-4a8969921267.jsonl");
    let text = runs(
        dir.path(),
        &[
            // A file that is missing, or not history.
            &["import", "/no/such/file.jsonl"],
            &["import", notes],
            &["convert", "/no/such.jsonl", "--to", "codex"],
            // An unknown runtime, format or session.
            &["export", claude, "--to", "gemini"],
            &["report", claude, "--to", "nowhere"],
            &["resume", claude, "--in", "vim"],
            &["export", claude, "--to", "codex", "--format", "transcript"],
            &["show", claude, "--at", "999"],
            &["rm", "nope"],
            // Malformed queries.
            &["search", "(a OR b"],
            &["search", "a AND"],
            &["search", "\"open"],
            // Bad options.
            &["search", "a", "--since", "soon"],
            &["search", "a", "--kind", "poem"],
            &["search", "a", "--limit", "0"],
            &["usage", "--by", "year"],
            &["usage", "--tz", "Mars/Olympus"],
            &["usage", "--prices", none],
            &["convert", "--to", "codex", "--compaction", "oldest", &compacted],
            &["convert", "--to", "pi", "--context-window", "0", &compacted],
            &["sync"],
            &["redact", claude],
            // clap's own.
            &["export", claude],
            &["bogus"],
            &["ls", "--bogus"],
        ],
    );
    settings(dir.path()).bind(|| insta::assert_snapshot!("errors", text));
}
