//! The live driver: `codex app-server`, JSON-RPC over stdio, one thread for many turns.
//! `initialize` (with the experimental API), `initialized`, then `thread/start` or `thread/resume`
//! by the rollout's path; `turn/start` per user message, `turn/interrupt` to stop one,
//! `thread/compact/start` for a compaction (a turn without a user message).
//!
//! What is recorded comes from the rollout Codex writes as the thread goes, read as it grows (on
//! every completed item and at the end of each turn): the app-server's own item notifications
//! reshape tool calls (a shell call's arguments become the command it ran) and do not carry the raw
//! items on a resumed thread, while the rollout lines are exactly what a file import reads — so
//! live capture and import agree. Deltas come from the notifications.
//!
//! Approval requests of the server (`item/commandExecution/requestApproval`,
//! `item/fileChange/requestApproval`, and the older `execCommandApproval` / `applyPatchApproval`)
//! are accepted in a bypassing mode, reported as [`Signal::Permission`] with `ask_permissions`
//! (the thread then runs with `approvalPolicy: "untrusted"`, so that every command Codex does not
//! know to be safe is asked about), and declined otherwise.

use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::error::{Error, Result};
use crate::model::Runtime;
use crate::native::jsonl::complete_len;
use crate::native::live::{await_reply, exited, read_lines, spawn, write_line, Group, Image, Live, LiveSpec, Pending, PermissionRequest, Signal, Sink, TurnEnd, GRACE};

use super::import::{rollout_tail_blocks, RolloutState};

/// A rollout file read as it grows.
struct Tail {
    path: Option<PathBuf>,
    offset: u64,
    state: RolloutState,
    /// Set when a line that ends a turn was read; cleared by the end of the turn.
    ended: bool,
}

impl Tail {
    /// Reads the complete lines added since the last read and returns their blocks; notes in
    /// `ended` when one of them ends a turn.
    fn read(&mut self) -> Vec<crate::model::Block> {
        let Some(path) = &self.path else { return Vec::new() };
        let Ok(mut file) = File::open(path) else { return Vec::new() };
        let mut bytes = Vec::new();
        if file.seek(SeekFrom::Start(self.offset)).is_err() || file.read_to_end(&mut bytes).is_err() {
            return Vec::new();
        }
        let complete = complete_len(&bytes);
        bytes.truncate(complete);
        if bytes.is_empty() {
            return Vec::new();
        }
        self.offset += complete as u64;
        let blocks = rollout_tail_blocks(bytes, &mut self.state).unwrap_or_default();
        self.ended |= blocks.iter().any(ends_turn);
        blocks
    }

    /// Starts at the end of `path`, with the state its lines set (model, provider, turn).
    fn at_end_of(&mut self, path: PathBuf) {
        self.path = Some(path);
        self.offset = 0;
        let _ = self.read();
        self.ended = false;
    }
}

/// True for the block of a rollout line that ends a turn (`event_msg` `task_complete` or
/// `turn_aborted`).
fn ends_turn(block: &crate::model::Block) -> bool {
    let record = block.native.as_ref().and_then(|n| n.data.get("record"));
    record.is_some_and(|r| r["type"] == "event_msg" && matches!(r["payload"]["type"].as_str(), Some("task_complete" | "turn_aborted")))
}

/// Records what the rollout gained (read under the lock, so that the blocks go out in order);
/// true once a turn's end line was read, which `take_end` clears.
fn record_tail(tail: &Mutex<Tail>, sink: &Sink, take_end: bool) -> bool {
    let Ok(mut tail) = tail.lock() else { return false };
    let blocks = tail.read();
    if !blocks.is_empty() {
        sink(Signal::Blocks(blocks));
    }
    let ended = tail.ended;
    if take_end {
        tail.ended = false;
    }
    ended
}

struct Driver {
    group: Arc<Group>,
    stdin: Arc<Mutex<Option<std::process::ChildStdin>>>,
    pending: Arc<Pending>,
    next_id: u64,
    thread_id: String,
    turn_id: Arc<Mutex<Option<String>>>,
    /// A model chosen since the thread was opened, for the next `turn/start` (which keeps it for
    /// the turns after).
    new_model: Option<String>,
    asked: Asked,
}

/// The approval requests waiting for an answer: our id → (the server's request id, true for the
/// older methods, which answer `approved` / `denied`).
type Asked = Arc<Mutex<HashMap<String, (Value, bool)>>>;

/// Starts `codex app-server` and opens the thread.
pub(super) fn start(spec: LiveSpec, sink: Sink) -> Result<Box<dyn Live>> {
    let mut args = vec!["app-server".to_string()];
    args.extend(spec.args.iter().cloned());
    let (group, pipes) = spawn(Runtime::Codex, super::NPM_PACKAGE, &spec, &args)?;
    let stdin = Arc::new(Mutex::new(pipes.stdin));
    let pending = Arc::new(Pending::default());
    let tail = Arc::new(Mutex::new(Tail { path: None, offset: 0, state: RolloutState::default(), ended: false }));
    let turn_id = Arc::new(Mutex::new(None::<String>));
    let bypass = spec.permission_mode.as_deref().is_some_and(|m| m == "bypassPermissions" || m == "acceptEdits");
    let stdout = pipes.stdout.ok_or_else(|| Error::Internal("no stdout pipe".into()))?;
    let asked: Asked = Arc::default();
    let ask = spec.ask_permissions && !bypass;
    let reader = Reader { sink: sink.clone(), pending: pending.clone(), tail: tail.clone(), stdin: stdin.clone(), usage: None, bypass, ask, asked: asked.clone(), turn_id: turn_id.clone() };
    let end_tail = tail.clone();
    let end_pending = pending.clone();
    let end_sink = sink.clone();
    let mut reader = reader;
    read_lines(
        "sna-codex",
        stdout,
        group.clone(),
        move |line| reader.on_line(line),
        move |group| {
            end_pending.fail_all();
            record_tail(&end_tail, &end_sink, false);
            end_sink(exited(group));
        },
    )?;
    // Codex writes a line a moment after it reports the item: between notifications (a tool's
    // output while the model thinks), the rollout is read every 100 ms too, while a turn runs.
    let poll_tail = tail.clone();
    let poll_sink = sink.clone();
    let poll_group = group.clone();
    let poll_turn = turn_id.clone();
    std::thread::Builder::new()
        .name("sna-codex-rollout".into())
        .spawn(move || {
            while poll_group.try_reap().is_none() {
                std::thread::sleep(Duration::from_millis(100));
                if poll_turn.lock().is_ok_and(|turn| turn.is_some()) {
                    record_tail(&poll_tail, &poll_sink, false);
                }
            }
        })
        .map_err(|e| Error::Io { context: "cannot start a reader thread".into(), source: e })?;
    let mut driver = Driver { group, stdin, pending, next_id: 0, thread_id: String::new(), turn_id, new_model: None, asked };
    let setup = (|| {
        driver.request("initialize", json!({"clientInfo": {"name": "sna_history", "title": "sna-history", "version": env!("CARGO_PKG_VERSION")}, "capabilities": {"experimentalApi": true}}))?;
        write_line(&driver.stdin, &json!({"method": "initialized"}))?;
        let mut params = json!({"cwd": spec.cwd.display().to_string()});
        if let Some(model) = &spec.model {
            params["model"] = json!(model);
        }
        if bypass {
            params["approvalPolicy"] = json!("never");
            params["sandbox"] = json!("danger-full-access");
        } else if spec.ask_permissions {
            // Asked: every command Codex does not know to be safe comes as an approval request.
            params["approvalPolicy"] = json!("untrusted");
        }
        let result = match (&spec.resume, &spec.resume_path) {
            (Some(id), Some(path)) => {
                if let Ok(mut tail) = tail.lock() {
                    tail.at_end_of(path.clone());
                }
                params["threadId"] = json!(id);
                params["path"] = json!(path.display().to_string());
                driver.request("thread/resume", params)?
            }
            (Some(id), None) => return Err(Error::NotFound(format!("no rollout of the Codex thread {id} to resume"))),
            (None, _) => driver.request("thread/start", params)?,
        };
        let thread = &result["thread"];
        driver.thread_id = thread["id"].as_str().ok_or_else(|| Error::Runtime("Codex opened a thread without an id".into()))?.to_string();
        if let (Some(path), Ok(mut tail)) = (thread["path"].as_str(), tail.lock()) {
            if tail.path.is_none() {
                tail.path = Some(PathBuf::from(path));
            }
        }
        Ok(())
    })();
    if let Err(e) = setup {
        driver.group.stop(GRACE);
        return Err(e);
    }
    sink(Signal::NativeId(driver.thread_id.clone()));
    Ok(Box::new(driver))
}

/// An approval's answer in the method's own words.
fn decision(allow: bool, legacy: bool) -> &'static str {
    match (allow, legacy) {
        (true, false) => "accept",
        (false, false) => "decline",
        (true, true) => "approved",
        (false, true) => "denied",
    }
}

struct Reader {
    sink: Sink,
    pending: Arc<Pending>,
    tail: Arc<Mutex<Tail>>,
    stdin: Arc<Mutex<Option<std::process::ChildStdin>>>,
    usage: Option<Value>,
    bypass: bool,
    ask: bool,
    asked: Asked,
    turn_id: Arc<Mutex<Option<String>>>,
}

impl Reader {
    fn on_line(&mut self, line: &str) {
        let Ok(message) = serde_json::from_str::<Value>(line) else { return };
        let method = message.get("method").and_then(Value::as_str);
        let id = message.get("id").filter(|id| !id.is_null());
        match (method, id) {
            // A reply to one of our requests.
            (None, Some(id)) => {
                self.pending.answer(&id.to_string(), message);
            }
            // A request of the server (an approval): see the module docs.
            (Some(method), Some(id)) => self.on_request(method, id.clone(), &message["params"]),
            (Some(method), None) => self.on_notification(method, &message["params"]),
            (None, None) => {}
        }
    }

    fn on_request(&mut self, method: &str, id: Value, params: &Value) {
        let legacy = matches!(method, "execCommandApproval" | "applyPatchApproval");
        if !self.ask || self.bypass {
            let _ = write_line(&self.stdin, &json!({"id": id, "result": {"decision": decision(self.bypass, legacy)}}));
            return;
        }
        let command = match &params["command"] {
            Value::String(command) => Some(command.clone()),
            Value::Array(parts) => Some(parts.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(" ")),
            _ => None,
        };
        let tool = if method.contains("ommand") || method.starts_with("exec") { "commandExecution" } else { "fileChange" };
        let title = match (&command, params["reason"].as_str()) {
            (Some(command), _) => format!("{tool}: {command}"),
            (None, Some(reason)) => format!("{tool}: {reason}"),
            (None, None) => tool.to_string(),
        };
        let key = id.to_string();
        if let Ok(mut asked) = self.asked.lock() {
            asked.insert(key.clone(), (id, legacy));
        }
        let call_id = params["itemId"].as_str().or_else(|| params["callId"].as_str()).map(str::to_string);
        (self.sink)(Signal::Permission(PermissionRequest { id: key, tool: tool.into(), input: params.clone(), call_id, title }));
    }

    fn on_notification(&mut self, method: &str, params: &Value) {
        match method {
            "item/agentMessage/delta" => (self.sink)(Signal::Delta { thinking: false, text: params["delta"].as_str().unwrap_or("").into() }),
            "item/reasoning/summaryTextDelta" | "item/reasoning/textDelta" => {
                (self.sink)(Signal::Delta { thinking: true, text: params["delta"].as_str().unwrap_or("").into() })
            }
            "item/completed" => {
                record_tail(&self.tail, &self.sink, false);
            }
            "turn/started" => {
                if let (Some(id), Ok(mut turn)) = (params["turn"]["id"].as_str(), self.turn_id.lock()) {
                    *turn = Some(id.to_string());
                }
            }
            "thread/tokenUsage/updated" => self.usage = params["tokenUsage"].get("last").or_else(|| params["tokenUsage"].get("total")).cloned(),
            "turn/completed" => {
                // The rollout is written a moment after the notification: wait for the turn's end
                // line (at most 5 s), so that the turn's blocks are all recorded before it ends.
                let deadline = Instant::now() + Duration::from_secs(5);
                while !record_tail(&self.tail, &self.sink, true) && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(10));
                }
                let turn = &params["turn"];
                let status = turn["status"].as_str().unwrap_or("");
                let error = turn["error"]["message"].as_str().map(str::to_string).or_else(|| (status == "failed").then(|| "the turn failed".to_string()));
                if let Ok(mut current) = self.turn_id.lock() {
                    *current = None;
                }
                (self.sink)(Signal::TurnEnd(TurnEnd { usage: self.usage.take(), error, interrupted: status == "interrupted" }));
            }
            _ => {}
        }
    }
}

impl Driver {
    fn request(&mut self, method: &str, params: Value) -> Result<Value> {
        self.next_id += 1;
        let id = self.next_id;
        let rx = self.pending.expect(&id.to_string());
        write_line(&self.stdin, &json!({"id": id, "method": method, "params": params}))?;
        let reply = await_reply(&rx, Duration::from_secs(60), Runtime::Codex, &self.group, method)?;
        if let Some(error) = reply.get("error") {
            return Err(Error::Runtime(format!("Codex refused {method}: {}", error["message"].as_str().unwrap_or("no reason given"))));
        }
        Ok(reply["result"].clone())
    }
}

impl Live for Driver {
    fn pid(&self) -> u32 {
        self.group.pid()
    }

    fn send(&mut self, text: &str, images: &[Image]) -> Result<()> {
        let mut input: Vec<Value> = images.iter().map(|image| json!({"type": "image", "url": image.data_url()})).collect();
        input.push(json!({"type": "text", "text": text, "text_elements": []}));
        let mut params = json!({"threadId": self.thread_id, "input": input});
        if let Some(model) = self.new_model.take() {
            params["model"] = json!(model);
        }
        let result = self.request("turn/start", params)?;
        if let (Some(id), Ok(mut turn)) = (result["turn"]["id"].as_str(), self.turn_id.lock()) {
            *turn = Some(id.to_string());
        }
        Ok(())
    }

    /// `thread/compact/start` on the thread: Codex answers at once and runs the compaction as a
    /// turn of its own (`turn/started` … `turn/completed`, no user message), whose rollout lines —
    /// the summary item and the `compacted` line with its replacement history — are recorded as
    /// any turn's. Codex takes no instructions for its summary: `instructions` are not used.
    fn compact(&mut self, instructions: Option<&str>) -> Result<()> {
        let _ = instructions;
        self.request("thread/compact/start", json!({"threadId": self.thread_id}))?;
        Ok(())
    }

    fn interrupt(&mut self) -> Result<()> {
        let turn = self.turn_id.lock().ok().and_then(|t| t.clone());
        let Some(turn) = turn else { return Ok(()) };
        self.request("turn/interrupt", json!({"threadId": self.thread_id, "turnId": turn})).map(|_| ())
    }

    fn answer_permission(&mut self, id: &str, allow: bool) -> Result<()> {
        let asked = self.asked.lock().ok().and_then(|mut asked| asked.remove(id));
        let Some((request, legacy)) = asked else { return Err(Error::NotFound(format!("no approval request {id:?} waits for an answer"))) };
        write_line(&self.stdin, &json!({"id": request, "result": {"decision": decision(allow, legacy)}}))
    }

    fn set_model(&mut self, model: &str) -> Result<()> {
        // `turn/start` takes the model; the next turn runs on it.
        self.new_model = Some(model.to_string());
        Ok(())
    }

    fn stop(&mut self) {
        if let Ok(mut stdin) = self.stdin.lock() {
            stdin.take();
        }
        self.group.stop(GRACE);
    }
}

