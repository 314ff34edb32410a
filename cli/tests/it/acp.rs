//! `sna acp` over stdio without a runtime: JSON-RPC lines with numeric ids in, only protocol lines
//! out; sessions made, listed, opened and configured; what needs a runtime says so.
//! (tests/conformance/test_acp.py drives it with the ACP SDK and the real CLIs.)
#![cfg(feature = "acp")]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};

use serde_json::{json, Value};

struct Agent {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<std::process::ChildStdout>,
    /// The notifications read so far.
    notes: Vec<Value>,
}

impl Agent {
    fn start(dir: &Path) -> Agent {
        Agent::start_with(dir, "/nonexistent/claude", &[])
    }

    /// `sna acp` with `claude` as Claude Code's executable (the other runtimes missing) and more
    /// arguments.
    fn start_with(dir: &Path, claude: &str, args: &[&str]) -> Agent {
        let mut child = Command::new(env!("CARGO_BIN_EXE_sna"))
            .args(["acp", "--bin", &format!("claude-code={claude}"), "--bin", "codex=/nonexistent/codex", "--bin", "opencode=/nonexistent/opencode"])
            .args(["--bin", "gemini-cli=/nonexistent/gemini", "--bin", "pi=/nonexistent/pi"])
            .args(args)
            // Claude Code's declarations of a sandbox, emptied whatever the tests' environment holds.
            .env("IS_SANDBOX", "")
            .env("CLAUDE_CODE_BUBBLEWRAP", "")
            .env("SNA_HISTORY_DB", dir.join("history.db"))
            .env("HOME", dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Agent { child, stdin, stdout, notes: Vec::new() }
    }

    /// Sends a request and reads up to its answer; the notifications before it are kept.
    fn call(&mut self, id: u64, method: &str, params: Value) -> Value {
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.stdin.as_mut().unwrap(), "{line}").unwrap();
        loop {
            let mut text = String::new();
            assert!(self.stdout.read_line(&mut text).unwrap() > 0, "sna acp closed stdout");
            let message: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("not a protocol line ({e}): {text}"));
            if message["id"] == json!(id) {
                return message;
            }
            self.notes.push(message);
        }
    }
}

#[test]
fn sessions_are_made_listed_opened_and_configured_without_a_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let mut agent = Agent::start(dir.path());
    let init = agent.call(1, "initialize", json!({"protocolVersion": 1, "clientCapabilities": {}}));
    assert_eq!(init["result"]["protocolVersion"], 1);
    assert_eq!(init["result"]["agentCapabilities"]["sessionCapabilities"], json!({"list": {}, "resume": {}}));
    assert_eq!(init["result"]["agentInfo"]["name"], "sna");

    let cwd = dir.path().display().to_string();
    let new = agent.call(2, "session/new", json!({"cwd": cwd, "mcpServers": []}));
    let sid = new["result"]["sessionId"].as_str().unwrap().to_string();
    let options = new["result"]["configOptions"].as_array().unwrap();
    // No runtime is installed: the runtime option says so, and a prompt says what to do.
    assert_eq!(options[0]["id"], "runtime");
    assert_eq!(options[0]["currentValue"], "none");
    let prompt = agent.call(3, "session/prompt", json!({"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]}));
    assert_eq!(prompt["error"]["code"], -32602);
    assert!(prompt["error"]["data"]["message"].as_str().unwrap().contains("no runtime is installed"), "{prompt}");
    // A prompt's content is checked before any runtime is needed: a PDF blob is refused, not lost,
    // and an image block must be an image.
    let pdf = json!({"type": "resource", "resource": {"uri": "file:///home/dev/a.pdf", "mimeType": "application/pdf", "blob": "JVBERi0xLjQK/w=="}});
    let prompt = agent.call(30, "session/prompt", json!({"sessionId": sid, "prompt": [{"type": "text", "text": "read this"}, pdf]}));
    assert_eq!(prompt["error"]["code"], -32602, "{prompt}");
    assert_eq!(prompt["error"]["data"]["field"], "prompt[1].resource", "{prompt}");
    assert!(prompt["error"]["data"]["message"].as_str().unwrap().contains("application/pdf"), "{prompt}");
    let not_image = json!({"type": "image", "mimeType": "text/plain", "data": "aGk="});
    let prompt = agent.call(31, "session/prompt", json!({"sessionId": sid, "prompt": [not_image]}));
    assert_eq!(prompt["error"]["data"]["field"], "prompt[0].mimeType", "{prompt}");
    let bad = agent.call(4, "session/set_config_option", json!({"sessionId": sid, "configId": "runtime", "value": "codex"}));
    assert_eq!(bad["error"]["code"], -32602);
    assert!(bad["error"]["data"]["message"].as_str().unwrap().contains("not installed"), "{bad}");

    agent.notes.clear();
    let set = agent.call(5, "session/set_config_option", json!({"sessionId": sid, "configId": "permission_mode", "value": "bypass"}));
    let mode = set["result"]["configOptions"].as_array().unwrap().iter().find(|o| o["id"] == "permission_mode").unwrap().clone();
    assert_eq!(mode["currentValue"], "bypass");
    assert_eq!(agent.notes.len(), 1);
    assert_eq!(agent.notes[0]["params"]["update"]["sessionUpdate"], "config_option_update");
    let set = agent.call(6, "session/set_config_option", json!({"sessionId": sid, "configId": "model", "value": "some-model"}));
    let model = set["result"]["configOptions"].as_array().unwrap().iter().find(|o| o["id"] == "model").unwrap().clone();
    assert_eq!(model["currentValue"], "some-model");
    assert!(model["options"].as_array().unwrap().iter().any(|o| o["value"] == "some-model"));

    let list = agent.call(7, "session/list", json!({}));
    let sessions = list["result"]["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0]["sessionId"], sid.as_str());
    assert_eq!(sessions[0]["cwd"], cwd.as_str());
    assert!(list["result"].get("nextCursor").is_none_or(Value::is_null));
    let other = agent.call(8, "session/list", json!({"cwd": "/somewhere/else"}));
    assert_eq!(other["result"]["sessions"], json!([]));

    agent.notes.clear();
    let loaded = agent.call(9, "session/load", json!({"sessionId": sid, "cwd": cwd, "mcpServers": []}));
    assert!(loaded["result"]["configOptions"].is_array());
    // An empty session replays nothing; the commands a prompt may start with are offered.
    let updates: Vec<&str> = agent.notes.iter().map(|n| n["params"]["update"]["sessionUpdate"].as_str().unwrap_or("")).collect();
    assert_eq!(updates, ["available_commands_update"]);
    assert_eq!(agent.notes[0]["params"]["update"]["availableCommands"][0]["name"], "compact");
    assert_eq!(agent.notes[0]["params"]["sessionId"], sid.as_str());
    let resumed = agent.call(10, "session/resume", json!({"sessionId": sid, "cwd": cwd}));
    assert!(resumed["result"]["configOptions"].is_array());
    let unknown = agent.call(11, "session/bogus", json!({}));
    assert_eq!(unknown["error"]["code"], -32601);

    drop(agent.stdin.take());
    assert!(agent.child.wait().unwrap().success());
}

#[test]
fn acp_help_names_its_options() {
    let out = Command::new(env!("CARGO_BIN_EXE_sna")).args(["acp", "--help"]).output().unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    for option in ["--runtime", "--model", "--permission-mode", "--bin", "--home", "--db", "Agent Client Protocol"] {
        assert!(help.contains(option), "{option} missing from:\n{help}");
    }
}

/// Issue 47: `sna acp --permission-mode bypass` as root started Claude Code, which exits at once
/// when asked to bypass permissions as root, so the first prompt failed with its refusal. The
/// prompt is now refused before anything runs, saying why and what to do. (A stand-in for
/// `claude` notes each start and refuses as Claude Code does.)
#[test]
fn bypass_as_root_is_refused_before_claude_code_runs() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let started = dir.path().join("started.txt");
    let claude = dir.path().join("claude");
    let script = format!(
        "#!/bin/sh\necho \"$@\" >> '{}'\necho '--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons' >&2\nexit 1\n",
        started.display()
    );
    std::fs::write(&claude, script).unwrap();
    std::fs::set_permissions(&claude, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut agent = Agent::start_with(dir.path(), claude.to_str().unwrap(), &["--runtime", "claude-code", "--permission-mode", "bypass"]);
    agent.call(1, "initialize", json!({"protocolVersion": 1, "clientCapabilities": {}}));
    let new = agent.call(2, "session/new", json!({"cwd": dir.path().display().to_string(), "mcpServers": []}));
    let sid = new["result"]["sessionId"].as_str().unwrap().to_string();
    let prompt = agent.call(3, "session/prompt", json!({"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]}));
    if !sna_test_support::running_as_root() {
        // Claude Code takes the mode from anyone else: it is started with it.
        assert!(prompt.get("error").is_some(), "{prompt}");
        assert!(std::fs::read_to_string(&started).unwrap().contains("--permission-mode bypassPermissions"));
        drop(agent.stdin.take());
        assert!(agent.child.wait().unwrap().success());
        return;
    }
    assert_eq!(prompt["error"]["code"], -32602, "{prompt}");
    let message = prompt["error"]["message"].as_str().unwrap();
    assert!(message.starts_with("field \"permission_mode\": Claude Code refuses to bypass permissions when run as root"), "{message}");
    assert!(message.contains("IS_SANDBOX=1"), "{message}");
    assert!(!started.exists(), "Claude Code was started: {:?}", std::fs::read_to_string(&started));
    // The mode that asks is taken; bypass chosen again is refused at once, and the choice stays.
    let set = agent.call(4, "session/set_config_option", json!({"sessionId": sid, "configId": "permission_mode", "value": "default"}));
    assert!(set.get("result").is_some(), "{set}");
    let again = agent.call(6, "session/set_config_option", json!({"sessionId": sid, "configId": "permission_mode", "value": "bypass"}));
    assert_eq!(again["error"]["code"], -32602, "{again}");
    assert!(again["error"]["message"].as_str().unwrap().contains("refuses to bypass permissions when run as root"), "{again}");
    let prompt = agent.call(5, "session/prompt", json!({"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]}));
    assert!(prompt.get("error").is_some(), "{prompt}");
    assert!(std::fs::read_to_string(&started).unwrap().contains("--permission-prompt-tool stdio"));
    drop(agent.stdin.take());
    assert!(agent.child.wait().unwrap().success());
}
