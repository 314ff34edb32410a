//! The live driver: `claude -p --input-format stream-json --output-format stream-json --verbose`,
//! one process for many turns. A user turn is one line on stdin; the stream-json events that come
//! back are what `Session::ingest` reads (with `--replay-user-messages` the user's own message comes
//! back too, so that live capture records what the transcript records); `result` ends a turn.
//! Interrupt and model changes are control requests on stdin, answered by `control_response`.
//! A compaction is the `/compact` slash command sent as a user message.
//! With `ask_permissions` (and a mode that asks), `--permission-prompt-tool stdio` makes Claude
//! Code ask us before a tool runs: a `can_use_tool` control request on stdout, reported as
//! [`Signal::Permission`] and answered with `behavior` `allow` (the input unchanged) or `deny`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

use crate::error::{Error, Result};
use crate::model::Runtime;
use crate::native::live::{await_reply, exited, read_lines, spawn, write_line, Group, Image, Live, LiveSpec, Pending, PermissionRequest, Signal, Sink, TurnEnd, GRACE};

/// The permission requests waiting for an answer: request id → the tool's input.
type Asked = Arc<Mutex<HashMap<String, Value>>>;

struct Driver {
    group: Arc<Group>,
    stdin: Arc<Mutex<Option<std::process::ChildStdin>>>,
    pending: Arc<Pending>,
    next_request: u64,
    asked: Asked,
}

/// Starts Claude Code in stream-json mode.
pub(super) fn start(spec: LiveSpec, sink: Sink) -> Result<Box<dyn Live>> {
    let args = command_line(&spec);
    let (group, pipes) = spawn(Runtime::ClaudeCode, super::NPM_PACKAGE, &spec, &args)?;
    let pending = Arc::new(Pending::default());
    let stdin = Arc::new(Mutex::new(pipes.stdin));
    let asked: Asked = Arc::default();
    let reader = Reader { sink: sink.clone(), pending: pending.clone(), stdin: stdin.clone(), asked: asked.clone() };
    let stdout = pipes.stdout.ok_or_else(|| Error::Internal("no stdout pipe".into()))?;
    let end_sink = sink.clone();
    let end_pending = pending.clone();
    read_lines(
        "sna-claude-code",
        stdout,
        group.clone(),
        move |line| reader.on_line(line),
        move |group| {
            end_pending.fail_all();
            end_sink(exited(group));
        },
    )?;
    Ok(Box::new(Driver { group, stdin, pending, next_request: 0, asked }))
}

/// Claude Code's command line for `spec`.
fn command_line(spec: &LiveSpec) -> Vec<String> {
    let mut args: Vec<String> = ["-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose", "--replay-user-messages", "--include-partial-messages"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    if let Some(model) = &spec.model {
        args.extend(["--model".into(), model.clone()]);
    }
    if let Some(mode) = &spec.permission_mode {
        args.extend(["--permission-mode".into(), mode.clone()]);
    }
    if let Some(id) = &spec.resume {
        args.extend(["--resume".into(), id.clone()]);
    }
    if spec.ask_permissions && spec.permission_mode.as_deref() != Some("bypassPermissions") {
        args.extend(["--permission-prompt-tool".into(), "stdio".into()]);
    }
    args.extend(spec.args.iter().cloned());
    args
}

/// Claude Code run as root exits at start when asked to bypass permissions ("cannot be used with
/// root/sudo privileges"), unless its environment declares a sandbox: `IS_SANDBOX=1`, or
/// `CLAUDE_CODE_BUBBLEWRAP` true (`1`, `true`, `yes`, `on`). Found here, before anything is
/// written or started, rather than as the process's exit during the first turn.
pub(super) fn check(spec: &LiveSpec) -> Result<()> {
    // SAFETY: getuid has no preconditions and cannot fail (Claude Code checks the real user too).
    let uid = unsafe { libc::getuid() };
    match refusal(&command_line(spec), &spec.env, uid) {
        Some(message) => Err(Error::invalid_field("permission_mode", message)),
        None => Ok(()),
    }
}

/// Why Claude Code would refuse to start with `args` and `env` as user `uid`, if it would.
fn refusal(args: &[String], env: &std::collections::BTreeMap<String, String>, uid: u32) -> Option<String> {
    let flag = |name: &str| args.iter().any(|a| a == name);
    // The last `--permission-mode` counts, as in Claude Code's own parsing.
    let mode = args.iter().enumerate().rev().find_map(|(i, a)| match a.strip_prefix("--permission-mode") {
        Some("") => args.get(i + 1).map(String::as_str),
        Some(rest) => rest.strip_prefix('='),
        None => None,
    });
    let bypass = mode == Some("bypassPermissions") || flag("--dangerously-skip-permissions") || flag("--allow-dangerously-skip-permissions");
    let truthy = |v: &str| ["1", "true", "yes", "on"].contains(&v.trim().to_ascii_lowercase().as_str());
    let sandbox = env.get("IS_SANDBOX").is_some_and(|v| v == "1") || env.get("CLAUDE_CODE_BUBBLEWRAP").is_some_and(|v| truthy(v));
    (bypass && uid == 0 && !sandbox).then(|| {
        "Claude Code refuses to bypass permissions when run as root (it exits at start: \"cannot be used with root/sudo \
         privileges\"); choose another permission mode (default or acceptEdits), run as a user other than root, or, in a \
         sandbox where any tool may run unchecked, set IS_SANDBOX=1 in the runtime's environment"
            .to_string()
    })
}

struct Reader {
    sink: Sink,
    pending: Arc<Pending>,
    stdin: Arc<Mutex<Option<std::process::ChildStdin>>>,
    asked: Asked,
}

impl Reader {
    /// A control request of Claude Code: `can_use_tool` is reported; anything else is refused (we
    /// register no hooks and no SDK MCP servers).
    fn on_control_request(&self, event: &Value) {
        let id = event["request_id"].as_str().unwrap_or("").to_string();
        let request = &event["request"];
        if request["subtype"] == "can_use_tool" {
            let tool = request["tool_name"].as_str().unwrap_or("").to_string();
            let input = request["input"].clone();
            let title = input["command"]
                .as_str()
                .or_else(|| input["file_path"].as_str())
                .or_else(|| request["title"].as_str())
                .or_else(|| request["description"].as_str())
                .map_or_else(|| tool.clone(), |t| format!("{tool}: {t}"));
            if let Ok(mut asked) = self.asked.lock() {
                asked.insert(id.clone(), input.clone());
            }
            (self.sink)(Signal::Permission(PermissionRequest { id, tool, input, call_id: request["tool_use_id"].as_str().map(str::to_string), title }));
        } else {
            let subtype = request["subtype"].as_str().unwrap_or("?");
            let reply = json!({"type": "control_response", "response": {"subtype": "error", "request_id": id, "error": format!("{subtype} is not supported by this host")}});
            let _ = write_line(&self.stdin, &reply);
        }
    }

    fn on_line(&self, line: &str) {
        on_line(line, &self.sink, &self.pending, |event| self.on_control_request(event));
    }
}

fn on_line(line: &str, sink: &Sink, pending: &Pending, control_request: impl FnOnce(&Value)) {
    let Ok(event) = serde_json::from_str::<Value>(line) else { return };
    match event.get("type").and_then(Value::as_str) {
        Some("control_request") => control_request(&event),
        Some("control_response") => {
            let id = event["response"]["request_id"].as_str().unwrap_or("").to_string();
            pending.answer(&id, event["response"].clone());
        }
        Some("stream_event") => {
            let delta = &event["event"]["delta"];
            match delta["type"].as_str() {
                Some("text_delta") => sink(Signal::Delta { thinking: false, text: delta["text"].as_str().unwrap_or("").into() }),
                Some("thinking_delta") => sink(Signal::Delta { thinking: true, text: delta["thinking"].as_str().unwrap_or("").into() }),
                _ => {}
            }
        }
        Some("system") if event["subtype"] == "init" => {
            if let Some(id) = event["session_id"].as_str() {
                sink(Signal::NativeId(id.to_string()));
            }
            sink(Signal::Event(event));
        }
        Some("result") => {
            let error = (event["is_error"] == Value::Bool(true)).then(|| {
                event["result"].as_str().or_else(|| event["subtype"].as_str()).unwrap_or("the turn failed").to_string()
            });
            let usage = event.get("usage").cloned();
            sink(Signal::Event(event));
            sink(Signal::TurnEnd(TurnEnd { usage, error, interrupted: false }));
        }
        Some(_) => sink(Signal::Event(event)),
        None => {}
    }
}

impl Driver {
    fn control(&mut self, request: Value, what: &str) -> Result<Value> {
        self.next_request += 1;
        let id = format!("sna_{}", self.next_request);
        let rx = self.pending.expect(&id);
        write_line(&self.stdin, &json!({"type": "control_request", "request_id": id, "request": request}))?;
        let reply = await_reply(&rx, Duration::from_secs(30), Runtime::ClaudeCode, &self.group, what)?;
        if reply["subtype"] == "error" {
            return Err(Error::Runtime(format!("Claude Code refused {what}: {}", reply["error"].as_str().unwrap_or("no reason given"))));
        }
        Ok(reply)
    }
}

impl Live for Driver {
    fn pid(&self) -> u32 {
        self.group.pid()
    }

    fn send(&mut self, text: &str, images: &[Image]) -> Result<()> {
        let mut content: Vec<Value> = images
            .iter()
            .map(|image| json!({"type": "image", "source": {"type": "base64", "media_type": image.mime, "data": image.base64()}}))
            .collect();
        content.push(json!({"type": "text", "text": text}));
        write_line(&self.stdin, &json!({"type": "user", "message": {"role": "user", "content": content}, "parent_tool_use_id": null, "session_id": ""}))
    }

    fn interrupt(&mut self) -> Result<()> {
        self.control(json!({"subtype": "interrupt"}), "the interrupt").map(|_| ())
    }

    fn set_model(&mut self, model: &str) -> Result<()> {
        self.control(json!({"subtype": "set_model", "model": model}), "the model change").map(|_| ())
    }

    /// `/compact` (with the instructions after it) as a user message: Claude Code 2.1.328 runs its
    /// slash command from stream-json input as it does from the terminal. What comes back is a
    /// `system/status` `compacting`, the `system/compact_boundary` event, the summary as a synthetic
    /// `user` event (`isSynthetic`), the command's `<local-command-stdout>` and a `result` with
    /// `local_command: "compact"`, which ends the turn; they are recorded like a turn's events.
    fn compact(&mut self, instructions: Option<&str>) -> Result<()> {
        let command = match instructions.map(str::trim).filter(|i| !i.is_empty()) {
            Some(instructions) => format!("/compact {instructions}"),
            None => "/compact".to_string(),
        };
        self.send(&command, &[])
    }

    fn answer_permission(&mut self, id: &str, allow: bool) -> Result<()> {
        let input = self.asked.lock().ok().and_then(|mut asked| asked.remove(id));
        let Some(input) = input else { return Err(Error::NotFound(format!("no permission request {id:?} waits for an answer"))) };
        let decision = if allow { json!({"behavior": "allow", "updatedInput": input}) } else { json!({"behavior": "deny", "message": "The user refused to let this tool run."}) };
        write_line(&self.stdin, &json!({"type": "control_response", "response": {"subtype": "success", "request_id": id, "response": decision}}))
    }

    fn stop(&mut self) {
        if let Ok(mut stdin) = self.stdin.lock() {
            stdin.take();
        }
        self.group.stop(GRACE);
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::refusal;

    fn args(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn bypassing_as_root_is_refused_unless_a_sandbox_is_declared() {
        let none = BTreeMap::new();
        for bypass in [&["--permission-mode", "bypassPermissions"][..], &["--permission-mode=bypassPermissions"], &["--dangerously-skip-permissions"], &["--allow-dangerously-skip-permissions"]] {
            assert!(refusal(&args(bypass), &none, 0).is_some_and(|m| m.contains("IS_SANDBOX=1")), "{bypass:?}");
            assert_eq!(refusal(&args(bypass), &none, 1000), None, "{bypass:?} as a user");
        }
        // The last mode counts.
        assert_eq!(refusal(&args(&["--permission-mode", "bypassPermissions", "--permission-mode", "acceptEdits"]), &none, 0), None);
        assert!(refusal(&args(&["--permission-mode", "default", "--permission-mode", "bypassPermissions"]), &none, 0).is_some());
        for mode in ["default", "acceptEdits", "plan"] {
            assert_eq!(refusal(&args(&["--permission-mode", mode]), &none, 0), None, "{mode}");
        }
        let bypass = args(&["--permission-mode", "bypassPermissions"]);
        let env = |k: &str, v: &str| BTreeMap::from([(k.to_string(), v.to_string())]);
        for (key, value, refused) in [
            ("IS_SANDBOX", "1", false),
            ("IS_SANDBOX", "true", true),
            ("IS_SANDBOX", " 1", true),
            ("CLAUDE_CODE_BUBBLEWRAP", "1", false),
            ("CLAUDE_CODE_BUBBLEWRAP", " Yes ", false),
            ("CLAUDE_CODE_BUBBLEWRAP", "on", false),
            ("CLAUDE_CODE_BUBBLEWRAP", "0", true),
            ("CLAUDE_CODE_BUBBLEWRAP", "", true),
        ] {
            assert_eq!(refusal(&bypass, &env(key, value), 0).is_some(), refused, "{key}={value:?}");
        }
    }
}
