//! The `sna` command end to end: every subcommand, bad paths, unknown ids, corrupt files and
//! importing the same files again.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;
use sna_history::{Actor, Block, NewSession, Options, Store};
use crate::{fixtures, sna, snapshots};

fn claude_transcript() -> PathBuf {
    fixtures().join("claude-code/tools-thinking/60aa014b-82fa-4f7d-8a5d-270b96a69979.jsonl")
}

/// `sna` with its database in `dir` and a HOME there too (so nothing of the user's is touched).
/// A session that starts in Claude Code and switches to Codex, with an image.
fn switched_session(db: &Path) -> String {
    let store = Store::open(db).unwrap();
    let session = store.create_session(NewSession::new().id("switched").title("Switched")).unwrap();
    let mut user = Block::text(Actor::User, "Look at ![dot](embed://dot)");
    user.embeds.insert("dot".into(), sna_history::Embed::from_bytes("image/png", Some("dot.png".into()), b"\x89PNG\r\n\x1a\nfake".to_vec()));
    session
        .extend(vec![
            user,
            Block::text(Actor::Assistant, "A dot.").attributed("claude-code", "anthropic", "claude-opus-5-5"),
            Block::tool_use("call_1", "Bash", r#"{"command":"ls"}"#).attributed("claude-code", "anthropic", "claude-opus-5-5"),
            Block::tool_result("call_1", "dot.png", false),
            Block::text(Actor::User, "Now in Codex."),
            Block::text(Actor::Assistant, "Hello from Codex.").attributed("codex", "openai", "gpt-5.4"),
        ])
        .unwrap();
    "switched".into()
}

#[test]
fn import_ls_and_reimport() {
    let dir = tempfile::tempdir().unwrap();
    sna(dir.path())
        .args(["import"])
        .arg(fixtures())
        .assert()
        .success()
        .stderr(predicate::str::contains("43 imported").and(predicate::str::contains("not history")));
    let out = sna(dir.path()).args(["ls"]).assert().success().get_output().stdout.clone();
    let out = String::from_utf8(out).unwrap();
    // The header, then every session of every runtime (the newest import first).
    snapshots::settings_now(dir.path()).bind(|| insta::assert_snapshot!("ls_every_fixture", out));
    let json = sna(dir.path()).args(["ls", "--json"]).assert().success().get_output().stdout.clone();
    let list: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 43);
    // Again: nothing changes.
    sna(dir.path()).arg("import").arg(fixtures()).assert().success().stderr(predicate::str::contains("0 imported, 0 grown (+0 blocks), 0 replaced, 48 unchanged"));
    // A file that grew adds its new lines only.
    let work = dir.path().join("work.jsonl");
    let text = std::fs::read_to_string(claude_transcript()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    std::fs::write(&work, lines[..lines.len() - 2].join("\n") + "\n").unwrap();
    sna(dir.path()).args(["import", "--runtime", "claude-code"]).arg(&work).arg("--db").arg(dir.path().join("other.db")).assert().success().stderr(predicate::str::contains("1 imported"));
    std::fs::write(&work, &text).unwrap();
    sna(dir.path()).arg("import").arg(&work).arg("--db").arg(dir.path().join("other.db")).assert().success().stderr(predicate::str::contains("1 grown (+"));
}

#[test]
fn bad_paths_and_corrupt_files_are_reported_and_the_rest_imported() {
    let dir = tempfile::tempdir().unwrap();
    sna(dir.path()).args(["import", "/no/such/file.jsonl"]).assert().code(1).stderr(predicate::str::contains("/no/such/file.jsonl"));
    let broken = dir.path().join("broken");
    std::fs::create_dir(&broken).unwrap();
    std::fs::copy(claude_transcript(), broken.join("good.jsonl")).unwrap();
    std::fs::write(broken.join("export.json"), "{\"info\": {\"id\": \"ses_x\"},\n \"messages\": [ {\"info\": ").unwrap();
    sna(dir.path())
        .arg("import")
        .arg(&broken)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("export.json").and(predicate::str::contains("line 2")).and(predicate::str::contains("1 imported")).and(predicate::str::contains("1 failed")));
    sna(dir.path()).args(["ls"]).assert().success().stdout(predicate::str::contains("What files are in this project?"));
    // Not history at all, named explicitly.
    std::fs::write(dir.path().join("notes.txt"), "just words\n").unwrap();
    sna(dir.path()).arg("import").arg(dir.path().join("notes.txt")).assert().code(1).stderr(predicate::str::contains("could not detect the runtime"));
}

#[test]
fn unknown_ids_and_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    switched_session(&dir.path().join("history.db"));
    // An unknown id: exit 1 and one line naming it. clap's own mistakes: exit 2. An unknown
    // runtime or format of a known session: exit 1, one line.
    let text = snapshots::runs(
        dir.path(),
        &[
            &["show", "nope"],
            &["export", "nope", "--to", "codex"],
            &["report", "nope", "--to", "codex"],
            &["resume", "nope", "--in", "codex"],
            &["view", "nope", "-o", "x.html"],
            &["rm", "nope"],
            &["bogus"],
            &["export", "x"],
            &["export", "switched", "--to", "gemini"],
            &["export", "switched", "--to", "codex", "--format", "transcript"],
        ],
    );
    snapshots::settings(dir.path()).bind(|| insta::assert_snapshot!("unknown_ids_and_usage_errors", text));
    sna(dir.path()).args(["--version"]).assert().success().stdout(predicate::str::starts_with("sna "));
}

#[test]
fn show_export_report_rm() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    let id = switched_session(&db);
    // The timeline: a line where the runtime or the model changes, the tool call, every text.
    let mut filters = snapshots::settings_now(dir.path());
    snapshots::filter_minted_ids(&mut filters);
    filters.bind(|| insta::assert_snapshot!("show_switched_session", snapshots::run(dir.path(), &["show", &id])));
    let json = sna(dir.path()).args(["show", &id, "--json"]).assert().success().get_output().stdout.clone();
    assert_eq!(serde_json::from_slice::<serde_json::Value>(&json).unwrap().as_array().unwrap().len(), 6);
    // JSONL for a rollout, written to a file.
    let out = dir.path().join("rollout.jsonl");
    sna(dir.path()).args(["export", &id, "--to", "codex", "--format", "rollout", "--model-provider", "openai", "-o"]).arg(&out).assert().success();
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&out).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines[0]["type"], "session_meta");
    assert_eq!(lines[0]["payload"]["model_provider"], "openai");
    // The transcript as Claude Code keeps it, on stdout.
    let transcript = sna(dir.path()).args(["export", &id, "--to", "claude-code"]).assert().success().get_output().stdout.clone();
    assert!(String::from_utf8(transcript).unwrap().lines().all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok()));
    filters.bind(|| insta::assert_snapshot!("report_switched_session", snapshots::run(dir.path(), &["report", &id, "--to", "opencode"])));
    sna(dir.path()).args(["export", &id, "--to", "codex", "--strict", "--target-model", "gpt-5.4"]).assert().success();
    sna(dir.path()).args(["rm", &id]).assert().success();
    sna(dir.path()).args(["show", &id]).assert().code(1);
}

#[test]
fn convert_touches_no_database() {
    let dir = tempfile::tempdir().unwrap();
    let out = sna(dir.path()).arg("convert").arg(claude_transcript()).args(["--to", "opencode", "--target-model", "claude-sonnet-4-5"]).assert().success().get_output().clone();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc["info"]["id"].as_str().unwrap().starts_with("ses_"));
    assert!(String::from_utf8(out.stderr).unwrap().contains("dropped"), "the signed thinking for another model is reported");
    let prelude = sna(dir.path()).arg("convert").arg(claude_transcript()).args(["--to", "opencode", "--format", "prelude"]).assert().success().get_output().stdout.clone();
    assert!(String::from_utf8(prelude).unwrap().starts_with("<conversation-history"));
    assert!(!dir.path().join("history.db").exists(), "no database was created");
    sna(dir.path()).args(["convert", "/no/such.jsonl", "--to", "codex"]).assert().code(1);
}

#[test]
fn resume_prints_the_command_and_writes_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    let store = Store::open(&db).unwrap();
    let session = store.import_file(claude_transcript(), None, &Options::default()).unwrap();
    let id = session.id().to_string();
    drop(store);
    let home = dir.path().join("elsewhere");
    let out = sna(dir.path()).args(["resume", &id, "--in", "codex", "--model-provider", "openai", "--home"]).arg(&home).args(["--cwd"]).arg(dir.path()).assert().success().get_output().clone();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains(&format!("codex exec resume {id}")), "{stdout}");
    assert!(stdout.contains(&format!("HOME={}", home.display())), "{stdout}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    let written = stderr.strip_prefix("wrote ").unwrap().trim();
    assert!(Path::new(written).starts_with(home.join(".codex/sessions")), "{written}");
    let out = sna(dir.path()).args(["resume", &id, "--in", "opencode", "--home"]).arg(&home).assert().success().get_output().stdout.clone();
    let stdout = String::from_utf8(out).unwrap();
    assert!(stdout.lines().next().unwrap().contains("opencode import "), "{stdout}");
    assert!(stdout.lines().nth(1).unwrap().contains("opencode run --session ses_"), "{stdout}");
    // --run runs the commands: a stand-in `claude` on PATH records its arguments.
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let script = bin.join("claude");
    std::fs::write(&script, format!("#!/bin/sh\necho \"$@\" > {}\n", dir.path().join("ran").display())).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    sna(dir.path()).env("PATH", path).args(["resume", &id, "--in", "claude-code", "--run", "--home"]).arg(&home).arg("--cwd").arg(dir.path()).assert().success();
    assert_eq!(std::fs::read_to_string(dir.path().join("ran")).unwrap().trim(), format!("--resume {id}"));
}

/// The data `sna view` put in its page (`<script type="application/json" id="sna-data">`), which
/// the inlined timeline.js renders.
fn view_data(html: &str) -> serde_json::Value {
    let open = "<script type=\"application/json\" id=\"sna-data\">";
    let start = html.find(open).expect("the data element") + open.len();
    let end = start + html[start..].find("</script>").expect("the data element's end");
    serde_json::from_str(&html[start..end]).expect("the data is JSON")
}

#[test]
fn view_writes_one_self_contained_file() {
    let dir = tempfile::tempdir().unwrap();
    let id = switched_session(&dir.path().join("history.db"));
    let out = dir.path().join("view.html");
    sna(dir.path()).args(["view", &id, "-o"]).arg(&out).assert().success();
    let html = std::fs::read_to_string(&out).unwrap();
    let data = view_data(&html);
    let seqs: Vec<u64> = data["blocks"].as_array().unwrap().iter().map(|b| b["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, (0..6).collect::<Vec<u64>>());
    let switches = data["switches"].as_array().unwrap();
    assert_eq!(switches.len(), 2);
    assert!(switches[0]["from"].is_null() && switches[0]["to"]["provider"] == "claude-code");
    assert_eq!((switches[1]["seq"].as_u64(), switches[1]["to"]["provider"].as_str(), switches[1]["to"]["model"].as_str()), (Some(5), Some("codex"), Some("gpt-5.4")));
    assert_eq!(data["embeds"]["dot"], "data:image/png;base64,iVBORw0KGgpmYWtl");
    assert_eq!(data["session"]["providers"], serde_json::json!(["claude-code", "codex"]));
    // The page renders itself: the stylesheet and the timeline script are inside.
    assert!(html.contains("<main id=\"timeline\"") && html.contains("window.SnaTimeline") && html.contains("SnaTimeline.mountView()"));
    assert!(html.contains("<style>") && html.contains(".switch"));
    assert!(!html.contains("http://") && !html.contains("https://") && !html.contains("<script src") && !html.contains("<link"), "no network resources");
}

/// Issue 17, defects 7 and 8: a FIFO in an imported directory (or named) never hangs the import,
/// links to a parent directory do not make the walk endless, and the database itself is not read.
#[cfg(unix)]
#[test]
fn fifos_parent_links_and_the_database_are_not_walked_into() {
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree");
    std::fs::create_dir_all(tree.join("a/b")).unwrap();
    std::fs::copy(claude_transcript(), tree.join("a/b/t.jsonl")).unwrap();
    let fifo = tree.join("a/pipe.jsonl");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    std::os::unix::fs::symlink("..", tree.join("a/b/up1")).unwrap();
    std::os::unix::fs::symlink("../..", tree.join("a/b/up2")).unwrap();
    std::os::unix::fs::symlink("../a", tree.join("a/b/loop.json")).unwrap();
    let mut cmd = Command::cargo_bin("sna").unwrap();
    cmd.env("SNA_HISTORY_DB", tree.join("history.db")).env("HOME", dir.path().join("home"));
    cmd.arg("import").arg(&tree).timeout(std::time::Duration::from_secs(20));
    cmd.assert().success().stderr(predicate::str::contains("pipe.jsonl: not a regular file, skipped")).stderr(predicate::str::contains("1 imported"));
    // Again: the database (now present in the tree, with its -wal) is left out, nothing fails.
    let mut again = Command::cargo_bin("sna").unwrap();
    again.env("SNA_HISTORY_DB", tree.join("history.db")).env("HOME", dir.path().join("home"));
    again.arg("import").arg(&tree).timeout(std::time::Duration::from_secs(20));
    again.assert().success().stderr(predicate::str::contains("1 unchanged").and(predicate::str::contains("failed").not()));
    // A FIFO named explicitly is refused at once, not read.
    let mut named = Command::cargo_bin("sna").unwrap();
    named.env("SNA_HISTORY_DB", tree.join("history.db")).env("HOME", dir.path().join("home"));
    named.arg("import").arg(&fifo).timeout(std::time::Duration::from_secs(20));
    named.assert().code(1).stderr(predicate::str::contains("not a regular file"));
}

/// Issue 17, defect 12: stored text never reaches the terminal as control sequences (window
/// title, clipboard, clearing the screen): `show`, `ls` and `report` write them as escapes, on a
/// terminal or not; `--json` output stays exact.
#[test]
fn control_characters_in_stored_text_are_shown_as_escapes() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    {
        let store = Store::open(&db).unwrap();
        let session = store.create_session(NewSession::new().id("evil").title("\x1b]0;pwned\x07title")).unwrap();
        session
            .extend(vec![
                Block::text(Actor::User, "clear \x1b[2J and copy \x1b]52;c;ZXZpbA==\x07 and \u{9b}31m"),
                Block::text(Actor::Assistant, "fine").attributed("claude-code", "anthropic", "model\x1b[31m"),
            ])
            .unwrap();
    }
    for args in [vec!["show", "evil"], vec!["ls"]] {
        let out = sna(dir.path()).args(&args).assert().success().get_output().stdout.clone();
        let text = String::from_utf8(out).unwrap();
        assert!(!text.contains('\x1b') && !text.contains('\x07') && !text.contains('\u{9b}'), "{args:?}: {text:?}");
        assert!(text.contains("\\x1b"), "{args:?}: {text}");
    }
    let show = String::from_utf8(sna(dir.path()).args(["show", "evil"]).assert().success().get_output().stdout.clone()).unwrap();
    assert!(show.contains("\\x1b[2J") && show.contains("\\x07") && show.contains("\\u{9b}"), "{show}");
    let json = String::from_utf8(sna(dir.path()).args(["show", "evil", "--json"]).assert().success().get_output().stdout.clone()).unwrap();
    assert!(json.contains("\\u001b[2J"), "JSON keeps the text exactly (escaped as JSON does): {json}");
}

/// Issue 17, defect 15: an embed whose name holds another embed's reference (or markup) no longer
/// breaks the view: the page carries text only as JSON data, which nothing in it can end (no `<`
/// at all), and the script makes the name an attribute (checked in a browser by
/// scripts/check-view.sh).
#[test]
fn an_embed_name_holding_a_reference_stays_data() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    let tricky = "![x](embed://b)</script><script>alert(1)</script><!--";
    {
        let store = Store::open(&db).unwrap();
        let session = store.create_session(NewSession::new().id("names")).unwrap();
        let mut block = Block::text(Actor::User, "first ![a](embed://a) then ![b](embed://b) </script>");
        block.embeds.insert("a".into(), sna_history::Embed::from_bytes("image/png", Some(tricky.into()), b"\x89PNG-a".to_vec()));
        block.embeds.insert("b".into(), sna_history::Embed::from_bytes("image/png", Some("b.png".into()), b"\x89PNG-b".to_vec()));
        session.append(block).unwrap();
    }
    let out = dir.path().join("v.html");
    sna(dir.path()).args(["view", "names", "-o"]).arg(&out).assert().success();
    let html = std::fs::read_to_string(&out).unwrap();
    // The data element, the timeline script and the call: nothing else ends a script.
    assert_eq!(html.matches("</script>").count(), 3, "{html}");
    assert!(!html.contains("<script>alert") && !html.contains("<!--"), "{html}");
    let data = view_data(&html);
    assert_eq!(data["blocks"][0]["embeds"]["a"]["name"], tricky, "the name is kept as it is");
    assert_eq!(data["blocks"][0]["content"], "first ![a](embed://a) then ![b](embed://b) </script>");
    assert!(data["embeds"]["a"].as_str().unwrap().starts_with("data:image/png;base64,"));
    assert!(data["embeds"]["b"].as_str().unwrap().starts_with("data:image/png;base64,"));
}

/// Issue 17: `sna import` names every line it kept as an error block, and `--strict` refuses the
/// file instead, naming the line.
#[test]
fn import_names_the_lines_it_kept_as_errors_and_strict_refuses_them() {
    let dir = tempfile::tempdir().unwrap();
    let mut lines: Vec<String> = std::fs::read_to_string(claude_transcript()).unwrap().lines().map(str::to_string).collect();
    lines.insert(2, "{\"type\": \"user\", \"message\": ".into());
    let file = dir.path().join("60aa014b-82fa-4f7d-8a5d-270b96a69979.jsonl");
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    sna(dir.path()).args(["import", "--strict"]).arg(&file).assert().code(1).stderr(predicate::str::contains("line 3"));
    sna(dir.path())
        .arg("import")
        .arg(&file)
        .assert()
        .success()
        .stderr(predicate::str::contains("60aa014b-82fa-4f7d-8a5d-270b96a69979.jsonl: malformed: claude-code line 3: EOF while parsing"))
        .stderr(predicate::str::contains("1 lines kept as error blocks"));
    // Imported again unchanged: nothing is named again.
    sna(dir.path()).arg("import").arg(&file).assert().success().stderr(predicate::str::contains("malformed").not());
    // Grown by a good line and a bad one: only the new bad line is named.
    let grown = lines.len() + 2;
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str(&lines[0]);
    text.push_str("\n{\"type\": \"assistant\", \"message\": \n");
    std::fs::write(&file, text).unwrap();
    sna(dir.path())
        .arg("import")
        .arg(&file)
        .assert()
        .success()
        .stderr(predicate::str::contains(format!("malformed: claude-code line {grown}: EOF while parsing")))
        .stderr(predicate::str::contains("line 3:").not())
        .stderr(predicate::str::contains("1 lines kept as error blocks"));
}

/// Issue 17, redaction: `--redact` keeps secrets out of `export`, `view` and `resume`; `sna scan`
/// lists them masked without changing anything.
#[test]
fn redact_and_scan() {
    let dir = tempfile::tempdir().unwrap();
    let key = "sk-ant-api03-abcDEF1234567890_abcdefghijklmnopqrstuvwxyz-AAAA";
    {
        let store = Store::open(dir.path().join("history.db")).unwrap();
        let session = store.create_session(NewSession::new().id("s").cwd("/home/dev/project")).unwrap();
        session.append(Block::text(Actor::User, format!("my key is {key}"))).unwrap();
    }
    let out = sna(dir.path()).args(["export", "s", "--to", "codex", "--redact"]).assert().success().get_output().stdout.clone();
    let out = String::from_utf8(out).unwrap();
    assert!(!out.contains(key) && out.contains("[REDACTED:anthropic-key]"), "{out}");
    let html = dir.path().join("v.html");
    sna(dir.path()).args(["view", "s", "--redact", "-o"]).arg(&html).assert().success();
    assert!(!std::fs::read_to_string(&html).unwrap().contains(key));
    sna(dir.path()).args(["resume", "s", "--in", "claude-code", "--redact", "--home"]).arg(dir.path().join("home")).assert().success();
    let scan = sna(dir.path()).args(["scan"]).assert().success().stderr(predicate::str::contains("1 secrets found")).get_output().stdout.clone();
    let scan = String::from_utf8(scan).unwrap();
    assert!(scan.contains("anthropic-key") && !scan.contains(key), "{scan}");
    // Unchanged: the export without --redact still has it.
    sna(dir.path()).args(["export", "s", "--to", "codex"]).assert().success().stdout(predicate::str::contains(key));
}

/// Issue 17: `sna redact ID --in-place` purges the stored session (and refuses without the flag).
#[test]
fn redact_in_place_purges_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let token = "ghp_1234567890abcdefghijklmnopqrstuvwxyzAB";
    {
        let store = Store::open(dir.path().join("history.db")).unwrap();
        let session = store.create_session(NewSession::new().id("s")).unwrap();
        session.append(Block::text(Actor::User, format!("GITHUB_TOKEN={token}"))).unwrap();
    }
    sna(dir.path()).args(["redact", "s"]).assert().code(1).stderr(predicate::str::contains("--in-place"));
    sna(dir.path()).args(["show", "s"]).assert().success().stdout(predicate::str::contains(token));
    sna(dir.path()).args(["redact", "s", "--in-place"]).assert().success().stderr(predicate::str::contains("1 blocks redacted"));
    sna(dir.path()).args(["show", "s", "--json"]).assert().success().stdout(predicate::str::contains(token).not()).stdout(predicate::str::contains("[REDACTED:github-token]"));
    sna(dir.path()).args(["scan"]).assert().success().stderr(predicate::str::contains("0 secrets found"));
}

/// `sna view` renders a Gemini CLI log and a Pi session: their calls, results and model are in the
/// page's data, attributed to their runtime.
#[test]
fn view_renders_gemini_cli_and_pi_sessions() {
    for (file, runtime, tool, output) in [
        ("gemini-cli/tools-thinking/session-2026-12-04T14-48-1d40c064.jsonl", "gemini-cli", "run_shell_command", "hello from notes\n"),
        ("pi/tools-thinking/2026-12-04T14-51-47-521Z_01a2418a-39c0-7367-8255-e55e375c7852.jsonl", "pi", "bash", "hello from notes\n"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        sna(dir.path()).arg("import").arg(fixtures().join(file)).assert().success().stderr(predicate::str::contains("1 imported"));
        let list: serde_json::Value = serde_json::from_slice(&sna(dir.path()).args(["ls", "--json"]).assert().success().get_output().stdout).unwrap();
        let id = list[0]["id"].as_str().unwrap().to_string();
        let out = dir.path().join("view.html");
        sna(dir.path()).args(["view", &id, "-o"]).arg(&out).assert().success();
        let data = view_data(&std::fs::read_to_string(&out).unwrap());
        let blocks = data["blocks"].as_array().unwrap();
        assert!(blocks.iter().any(|b| b["kind"] == "tool_use" && b["tool"]["name"] == tool), "{runtime}: the {tool} call");
        assert!(blocks.iter().any(|b| b["kind"] == "tool_result" && b["content"] == output), "{runtime}: its result");
        assert_eq!(data["session"]["providers"], serde_json::json!([runtime]));
    }
}

fn compacted_transcript() -> PathBuf {
    fixtures().join("claude-code/compact/e4e2453c-d980-4b7d-a578-4a8969921267.jsonl")
}

#[test]
fn a_compacted_session_is_marked_and_replayed_from_its_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let turn_1 = "Read notes.txt and tell me what it says.";
    // convert: the replay starts at the compaction, and says so.
    let out = sna(dir.path()).args(["convert", "--to", "codex"]).arg(compacted_transcript()).assert().success().get_output().clone();
    let (stdout, stderr) = (String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap());
    assert!(stdout.contains("SUMMARY-MARKER") && !stdout.contains(turn_1), "{stdout}");
    assert!(stderr.contains("sna: compacted: 41 blocks before the compaction at seq 42 are not replayed"), "{stderr}");
    let whole = sna(dir.path()).args(["convert", "--to", "codex", "--compaction", "none"]).arg(compacted_transcript()).assert().success().get_output().stdout.clone();
    assert!(String::from_utf8(whole).unwrap().contains(turn_1));
    sna(dir.path())
        .args(["convert", "--to", "codex", "--compaction", "oldest"])
        .arg(compacted_transcript())
        .assert()
        .failure()
        .stderr(predicate::str::contains("--compaction: unknown compaction mode \"oldest\" (expected one of: latest, none)"));
    sna(dir.path()).args(["convert", "--to", "pi", "--context-window", "0"]).arg(compacted_transcript()).assert().failure().stderr(predicate::str::contains("--context-window"));
    // A window too small for anything: the newest turn stays, and the report says it does not fit.
    sna(dir.path())
        .args(["convert", "--to", "pi", "--context-window", "1000"])
        .arg(compacted_transcript())
        .assert()
        .success()
        .stderr(predicate::str::contains("the newest turn is never folded"));

    // show and view mark the compaction; report names it; resume says where the replay starts.
    sna(dir.path()).arg("import").arg(compacted_transcript()).assert().success();
    let id = "e4e2453c-d980-4b7d-a578-4a8969921267";
    let shown = sna(dir.path()).args(["show", id]).assert().success().get_output().stdout.clone();
    let shown = String::from_utf8(shown).unwrap();
    let marker = "══ compacted by claude-code (manual, 15 tokens before): summary at seq 43, 1 block preserved ══";
    let at = shown.find(marker).unwrap_or_else(|| panic!("{shown}"));
    assert!(shown[at..].lines().nth(1).unwrap().trim_start().starts_with("42 "), "the marker is before the boundary block:\n{}", &shown[at..at + 200]);
    let report = sna(dir.path()).args(["report", id, "--to", "gemini-cli", "--strict"]).assert().get_output().stdout.clone();
    assert!(String::from_utf8(report).unwrap().contains("compacted"));
    let html = dir.path().join("view.html");
    sna(dir.path()).args(["view", id, "-o"]).arg(&html).assert().success();
    let data = view_data(&std::fs::read_to_string(&html).unwrap());
    assert_eq!(data["compactions"][0]["boundary_seq"], 42);
    assert_eq!(data["compactions"][0]["trigger"], "manual");
    let home = dir.path().join("resume-home");
    sna(dir.path())
        .args(["resume", id, "--in", "pi", "--home"])
        .arg(&home)
        .assert()
        .success()
        .stderr(predicate::str::contains("the replay starts at the compaction at seq 42"));
}
