//! The host's checks before it starts a runtime, with a stand-in executable that notes each start
//! (tests/conformance drives the host with the real CLIs).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sna_history::host::{Host, HostOptions, StartOptions};
use sna_history::{Runtime, Store};

/// A stand-in for `claude` that appends its arguments to `started` and then waits on its stdin, as
/// the stream-json mode does.
fn stand_in(dir: &Path, started: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let program = dir.join("claude");
    std::fs::write(&program, format!("#!/bin/sh\necho \"$@\" >> '{}'\nexec cat > /dev/null\n", started.display())).unwrap();
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    program
}

fn host(dir: &Path, program: PathBuf, env: &[(&str, &str)]) -> Host {
    let bins = BTreeMap::from([(Runtime::ClaudeCode, program)]);
    let env = env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    Host::new(Store::open_in_memory().unwrap(), HostOptions { bins, env, home: Some(dir.join("home")) })
}

/// The escapes of Claude Code's check emptied, whatever the environment of the tests holds.
const NO_SANDBOX: [(&str, &str); 2] = [("IS_SANDBOX", ""), ("CLAUDE_CODE_BUBBLEWRAP", "")];

fn bypass(dir: &Path) -> StartOptions {
    let mut options = StartOptions::new(Runtime::ClaudeCode);
    options.permission_mode = Some("bypassPermissions".into());
    options.cwd = Some(dir.to_path_buf());
    options
}

/// Waits until the stand-in has noted a start.
fn wait_started(started: &Path) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Ok(text) = std::fs::read_to_string(started) {
            if !text.is_empty() {
                return text;
            }
        }
        assert!(Instant::now() < deadline, "the stand-in never started");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Issue 47: Claude Code run as root exits at once when asked to bypass permissions, so the host
/// started it and the first turn failed with Claude Code's refusal. As root the host now refuses
/// at start, naming the field, the cause and the ways out, and runs nothing.
#[test]
fn bypassing_permissions_in_claude_code_as_root_is_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let started = dir.path().join("started.txt");
    let host = host(dir.path(), stand_in(dir.path(), &started), &NO_SANDBOX);
    let result = host.start("s1", bypass(dir.path()));
    if !sna_test_support::running_as_root() {
        // Claude Code takes the mode from anyone else.
        result.unwrap();
        assert!(wait_started(&started).contains("--permission-mode bypassPermissions"));
        host.close();
        return;
    }
    let err = result.err().expect("bypassPermissions as root started Claude Code");
    assert_eq!(err.code(), "INVALID_INPUT", "{err}");
    let message = err.to_string();
    assert!(message.starts_with("field \"permission_mode\": Claude Code refuses to bypass permissions when run as root"), "{message}");
    for way_out in ["acceptEdits", "a user other than root", "IS_SANDBOX=1"] {
        assert!(message.contains(way_out), "{way_out} missing from {message}");
    }
    // The same for the flag given among the extra arguments.
    let mut flagged = StartOptions::new(Runtime::ClaudeCode);
    flagged.args = vec!["--dangerously-skip-permissions".into()];
    assert_eq!(host.start("s2", flagged).err().map(|e| e.code()), Some(sna_history::Code::InvalidInput));
    std::thread::sleep(Duration::from_millis(200));
    assert!(!started.exists(), "the stand-in ran: {:?}", std::fs::read_to_string(&started));
    // Nothing is left of the start that did not start: no agent, no session. Other options start it.
    assert!(host.agent("s1").is_none());
    assert_eq!(host.store().session("s1").err().map(|e| e.code()), Some(sna_history::Code::NotFound));
    let mut asking = bypass(dir.path());
    asking.permission_mode = Some("acceptEdits".into());
    host.start("s1", asking).unwrap();
    assert!(wait_started(&started).contains("--permission-mode acceptEdits"));
    host.close();
}

/// Claude Code's own escapes are honoured: `IS_SANDBOX=1` (or `CLAUDE_CODE_BUBBLEWRAP` set true)
/// in the runtime's environment lets it bypass permissions as root.
#[test]
fn a_sandbox_declared_in_the_environment_may_bypass_permissions() {
    for env in [("IS_SANDBOX", "1"), ("CLAUDE_CODE_BUBBLEWRAP", "yes")] {
        let dir = tempfile::tempdir().unwrap();
        let started = dir.path().join("started.txt");
        let host = host(dir.path(), stand_in(dir.path(), &started), &[env]);
        host.start("s1", bypass(dir.path())).unwrap_or_else(|e| panic!("{env:?}: {e}"));
        assert!(wait_started(&started).contains("--permission-mode bypassPermissions"), "{env:?}");
        host.close();
    }
    // A value Claude Code does not take is no escape.
    let dir = tempfile::tempdir().unwrap();
    let started = dir.path().join("started.txt");
    let host = host(dir.path(), stand_in(dir.path(), &started), &[("IS_SANDBOX", "true"), NO_SANDBOX[1]]);
    assert_eq!(host.start("s1", bypass(dir.path())).is_ok(), !sna_test_support::running_as_root());
    host.close();
}

/// A start that fails (here: no such executable) leaves neither an agent nor the session it made;
/// a session that was there before is kept, with what it held.
#[test]
fn a_start_that_fails_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let host = host(dir.path(), dir.path().join("no-such-claude"), &NO_SANDBOX);
    let mut options = StartOptions::new(Runtime::ClaudeCode);
    options.cwd = Some(dir.path().to_path_buf());
    let err = host.start("fresh", options.clone()).err().expect("a start without the executable");
    assert!(err.to_string().contains("no-such-claude"), "{err}");
    assert!(host.agent("fresh").is_none());
    assert_eq!(host.store().session("fresh").err().map(|e| e.code()), Some(sna_history::Code::NotFound));
    let kept = host.store().create_session(sna_history::NewSession::new().id("kept")).unwrap();
    kept.append(sna_history::Block::text(sna_history::Actor::User, "said before")).unwrap();
    assert!(host.start("kept", options).is_err());
    assert_eq!(host.store().session("kept").unwrap().blocks().unwrap().len(), 1);
    host.close();
}
