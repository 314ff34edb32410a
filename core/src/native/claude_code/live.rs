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
