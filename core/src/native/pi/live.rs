//! The live driver: `pi --mode rpc`, one process for many turns. Commands are JSON lines on
//! stdin (`prompt`, `abort`, `set_model`, `get_state`, `get_available_models`, `compact`), each with an `id`
//! that its `{"type":"response",…}` repeats; events are the other lines on stdout. Lines are split
//! on LF only (U+2028/U+2029 may sit inside a JSON string).
//!
//! What is recorded comes from the session file Pi writes as the session goes, read as it grows
//! (at every event but the streaming ones): an entry's id, parent and time, and the entries that
//! are not messages (model and thinking-level changes), exist only there, so live capture records
//! exactly what an import of the file gives. Pi persists a message just after it emits its
//! `message_end` and handles events one at a time, so by `agent_end` every entry of the run is in
//! the file. A new session has no file until its first assistant message; its path and id come
//! from `get_state` when the process starts.
//!
//! The process: `pi --mode rpc [--session <file>] [--model <model>] <args>`, with `PI_OFFLINE=1`
//! unless the environment sets it. The model is given as Pi's `--model` takes it: `provider/id`
//! or a bare id (the first model of that id). Pi has no permission modes: `permission_mode` is
//! ignored (restrict tools with `--tools` in `args`). Extension dialogs (`select`, `confirm`,
//! `input`, `editor`) are answered as cancelled; nobody is there to answer them. `set_model`
//! persists the model as the default in `<agent dir>/settings.json` (Pi's own behaviour): give each
//! host its own HOME or `PI_CODING_AGENT_DIR`; the driver always names the model it was given on
//! the command line, so a default written by another process does not steer it.
//!
//! A run that ends in an error Pi retries by itself (a rate limit, an overloaded server) or
//! recovers from by compacting: the turn ends only when Pi does not go on, seen in the line that
//! follows `agent_end` (`auto_retry_start`, an overflow `compaction_start`) or in its absence
//! half a second later; an abort while Pi waits to retry ends it (`auto_retry_end`, interrupted).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Map, Value};

use crate::error::{Error, Result};
use crate::model::{Block, Runtime};
use crate::native::jsonl::complete_len;
use crate::native::live::{await_reply, exited, read_lines, spawn, write_line, Group, Image, Live, LiveSpec, Pending, Signal, Sink, TurnEnd, GRACE};

use super::events;
use super::import::Growth;

/// How long a run that ended in an error waits for Pi to say it retries.
const RETRY_WINDOW: Duration = Duration::from_millis(500);

/// The session file, read as it grows.
#[derive(Default)]
struct SessionFile {
    path: Option<PathBuf>,
    offset: u64,
    growth: Growth,
}

impl SessionFile {
    /// The blocks of the complete lines added since the last read.
    fn read(&mut self) -> Vec<Block> {
        let Some(path) = &self.path else { return Vec::new() };
        self.growth.read_grown(path, &mut self.offset)
    }

    /// Starts reading `path` after what counts as recorded: `before` (the file as it was before
    /// Pi started) when the file still starts with it, so that what Pi added on opening it is
    /// recorded; otherwise (Pi rewrote it, or it was not the file given) all it holds now.
    fn open(&mut self, path: PathBuf, before: Option<Vec<u8>>) {
        let now = std::fs::read(&path).unwrap_or_default();
        let mut recorded = match before {
            Some(before) if now.starts_with(&before) => before,
            _ => now,
        };
        recorded.truncate(complete_len(&recorded));
        self.offset = recorded.len() as u64;
        self.growth = Growth::default();
        if !recorded.is_empty() {
            // Read for the state its lines set; their blocks are recorded already.
            let _ = self.growth.blocks(recorded);
        }
        self.path = Some(path);
    }
}

/// Records what the file gained, under its lock (so the blocks go out in order).
fn record_file(file: &Mutex<SessionFile>, sink: &Sink) {
    let Ok(mut file) = file.lock() else { return };
    let blocks = file.read();
    if !blocks.is_empty() {
        sink(Signal::Blocks(blocks));
    }
}

/// A run's end that waits to see whether Pi goes on (retry, compaction).
#[derive(Default)]
struct Held {
    /// The end, and the number of the hold (so a stale timer does nothing).
    end: Option<(u64, TurnEnd)>,
    /// An end held through an overflow compaction: given when the compaction does not retry.
    overflow: Option<TurnEnd>,
    holds: u64,
}

/// Gives the held end now, if any.
fn release(held: &Mutex<Held>, sink: &Sink) {
    let Ok(mut held) = held.lock() else { return };
    if let Some((_, end)) = held.end.take() {
        sink(Signal::TurnEnd(end));
    }
}

struct Reader {
    sink: Sink,
    pending: Arc<Pending>,
    file: Arc<Mutex<SessionFile>>,
    stdin: Arc<Mutex<Option<std::process::ChildStdin>>>,
    held: Arc<Mutex<Held>>,
    last_assistant: Option<Map<String, Value>>,
    /// The end of a failed run Pi is about to retry, until the retry starts.
    retrying: Option<TurnEnd>,
}

impl Reader {
    fn on_line(&mut self, line: &str) {
        let Ok(event) = serde_json::from_str::<Value>(line) else { return };
        let ty = event.get("type").and_then(Value::as_str).unwrap_or("").to_string();
        match ty.as_str() {
            "response" => {
                let answered = event.get("id").and_then(Value::as_str).is_some_and(|id| self.pending.answer(id, event.clone()));
                if !answered && event.get("command").and_then(Value::as_str) == Some("compact") {
                    // The compaction the driver started (it does not wait for this answer) is
                    // over: its entry is in the file by now, then the turn ends.
                    record_file(&self.file, &self.sink);
                    let error = (event.get("success") != Some(&Value::Bool(true)))
                        .then(|| event.get("error").and_then(Value::as_str).filter(|e| !e.trim().is_empty()).unwrap_or("the compaction failed").to_string());
                    (self.sink)(Signal::TurnEnd(TurnEnd { usage: None, error, interrupted: false }));
                }
                return;
            }
            "message_update" => {
                if let Some((thinking, text)) = events::delta(&event) {
                    (self.sink)(Signal::Delta { thinking, text: text.to_string() });
                }
                return;
            }
            "tool_execution_update" => return,
            "extension_ui_request" => {
                // A dialog nobody can answer: cancelled (the others are notices).
                if matches!(event.get("method").and_then(Value::as_str), Some("select" | "confirm" | "input" | "editor")) {
                    if let Some(id) = event.get("id") {
                        let _ = write_line(&self.stdin, &json!({"type": "extension_ui_response", "id": id, "cancelled": true}));
                    }
                }
                return;
            }
            _ => {}
        }
        match ty.as_str() {
            // Pi goes on after a failed run: the turn goes on.
            "auto_retry_start" => {
                if let Some((_, end)) = self.held.lock().ok().and_then(|mut held| held.end.take()) {
                    self.retrying = Some(end);
                }
            }
            "compaction_start" if event.get("reason").and_then(Value::as_str) == Some("overflow") => {
                if let Ok(mut held) = self.held.lock() {
                    held.overflow = held.end.take().map(|(_, end)| end);
                }
            }
            _ => release(&self.held, &self.sink),
        }
        record_file(&self.file, &self.sink);
        match ty.as_str() {
            "agent_start" => {
                self.last_assistant = None;
                self.retrying = None;
            }
            // A retry that never started (an abort while Pi waited to retry): no `agent_end` follows.
            "auto_retry_end" if event.get("success") == Some(&Value::Bool(false)) => {
                if let Some(mut end) = self.retrying.take() {
                    let reason = event.get("finalError").and_then(Value::as_str).unwrap_or("");
                    end.interrupted = reason == "Retry cancelled";
                    if !end.interrupted && !reason.is_empty() {
                        end.error = Some(reason.to_string());
                    }
                    (self.sink)(Signal::TurnEnd(end));
                }
            }
            "message_end" => {
                if let Some(message) = events::assistant_end(&event) {
                    self.last_assistant = Some(message.clone());
                }
            }
            "compaction_end" => {
                let overflow = self.held.lock().ok().and_then(|mut held| held.overflow.take());
                if let (Some(end), false) = (overflow, event.get("willRetry") == Some(&Value::Bool(true))) {
                    (self.sink)(Signal::TurnEnd(end));
                }
            }
            "agent_end" => {
                let last = self.last_assistant.take();
                let end = events::turn_end(last.as_ref().or_else(|| events::last_assistant(&event)));
                if end.error.is_none() || end.interrupted {
                    (self.sink)(Signal::TurnEnd(end));
                } else {
                    self.hold(end);
                }
            }
            _ => {}
        }
    }

    /// Holds a failed run's end for [`RETRY_WINDOW`]: given then unless a line came first.
    fn hold(&self, end: TurnEnd) {
        let number = {
            let Ok(mut held) = self.held.lock() else { return };
            held.holds += 1;
            let number = held.holds;
            held.end = Some((number, end));
            number
        };
        let held = self.held.clone();
        let sink = self.sink.clone();
        let _ = std::thread::Builder::new().name("sna-pi-end".into()).spawn(move || {
            std::thread::sleep(RETRY_WINDOW);
            let Ok(mut held) = held.lock() else { return };
            if held.end.as_ref().is_some_and(|(n, _)| *n == number) {
                if let Some((_, end)) = held.end.take() {
                    sink(Signal::TurnEnd(end));
                }
            }
        });
    }
}

struct Driver {
    group: Arc<Group>,
    stdin: Arc<Mutex<Option<std::process::ChildStdin>>>,
    pending: Arc<Pending>,
    next_id: u64,
}

/// Starts `pi --mode rpc` for one session.
pub(super) fn start(spec: LiveSpec, sink: Sink) -> Result<Box<dyn Live>> {
    let mut args = vec!["--mode".to_string(), "rpc".to_string()];
    let before = match (&spec.resume, &spec.resume_path) {
        (_, Some(path)) => {
            args.extend(["--session".into(), path.display().to_string()]);
            Some((path.clone(), std::fs::read(path).map_err(|e| Error::Io { context: format!("cannot read the Pi session file {}", path.display()), source: e })?))
        }
        (Some(id), None) => return Err(Error::NotFound(format!("no session file of the Pi session {id} to resume"))),
        (None, None) => None,
    };
    if let Some(model) = &spec.model {
        args.extend(["--model".into(), model.clone()]);
    }
    args.extend(spec.args.iter().cloned());
    let mut spec = spec;
    spec.env.entry("PI_OFFLINE".into()).or_insert_with(|| "1".into());
    let (group, pipes) = spawn(Runtime::Pi, super::NPM_PACKAGE, &spec, &args)?;
    let stdin = Arc::new(Mutex::new(pipes.stdin));
    let pending = Arc::new(Pending::default());
    let file = Arc::new(Mutex::new(SessionFile::default()));
    let held = Arc::new(Mutex::new(Held::default()));
    let stdout = pipes.stdout.ok_or_else(|| Error::Internal("no stdout pipe".into()))?;
    let mut reader = Reader { sink: sink.clone(), pending: pending.clone(), file: file.clone(), stdin: stdin.clone(), held: held.clone(), last_assistant: None, retrying: None };
    let (end_pending, end_file, end_held, end_sink) = (pending.clone(), file.clone(), held.clone(), sink.clone());
    read_lines(
        "sna-pi",
        stdout,
        group.clone(),
        move |line| reader.on_line(line),
        move |group| {
            end_pending.fail_all();
            record_file(&end_file, &end_sink);
            release(&end_held, &end_sink);
            end_sink(exited(group));
        },
    )?;
    let mut driver = Driver { group, stdin, pending, next_id: 0 };
    let state = match driver.request(json!({"type": "get_state"}), "get_state", Duration::from_secs(60)) {
        Ok(reply) => reply["data"].clone(),
        Err(e) => {
            driver.group.stop(GRACE);
            return Err(e);
        }
    };
    let (Some(path), Some(id)) = (state["sessionFile"].as_str(), state["sessionId"].as_str()) else {
        driver.group.stop(GRACE);
        return Err(Error::invalid("Pi runs without a session file (--no-session?): there would be nothing to record"));
    };
    let path = PathBuf::from(path);
    let before = before.filter(|(given, _)| same_file(given, &path)).map(|(_, bytes)| bytes);
    if let Ok(mut file) = file.lock() {
        file.open(path, before);
    }
    sink(Signal::NativeId(id.to_string()));
    Ok(Box::new(driver))
}

/// True when two paths name one file (Pi resolves the `--session` path it is given).
fn same_file(a: &Path, b: &Path) -> bool {
    a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(a), Ok(b)) if a == b)
}

impl Driver {
    /// Sends `command` with a new id and waits for its response; a `success: false` response is an
    /// error naming `what` and Pi's reason.
    fn request(&mut self, mut command: Value, what: &str, timeout: Duration) -> Result<Value> {
        self.next_id += 1;
        let id = format!("sna_{}", self.next_id);
        command["id"] = json!(id);
        let rx = self.pending.expect(&id);
        write_line(&self.stdin, &command)?;
        let reply = await_reply(&rx, timeout, Runtime::Pi, &self.group, what)?;
        if reply.get("success") != Some(&Value::Bool(true)) {
            let reason = reply.get("error").and_then(Value::as_str).unwrap_or("no reason given");
            return Err(Error::Runtime(format!("Pi refused {what}: {reason}")));
        }
        Ok(reply)
    }
}

/// The `(provider, id)` of `wanted` among Pi's available models, found as Pi's `--model` finds
/// it: `provider/id` with a known provider, else the first model whose id (or `provider/id`) is
/// `wanted`, case aside.
fn resolve_model(models: &[Value], wanted: &str) -> Result<(String, String)> {
    let pair = |m: &Value| Some((m.get("provider")?.as_str()?.to_string(), m.get("id")?.as_str()?.to_string()));
    let pairs: Vec<(String, String)> = models.iter().filter_map(pair).collect();
    if let Some((provider, id)) = wanted.split_once('/') {
        if let Some(found) = pairs.iter().find(|(p, i)| p.eq_ignore_ascii_case(provider) && i.eq_ignore_ascii_case(id)) {
            return Ok(found.clone());
        }
    }
    if let Some(found) = pairs.iter().find(|(p, i)| i.eq_ignore_ascii_case(wanted) || format!("{p}/{i}").eq_ignore_ascii_case(wanted)) {
        return Ok(found.clone());
    }
    let known: Vec<String> = pairs.iter().map(|(p, i)| format!("{p}/{i}")).collect();
    Err(Error::NotFound(format!("Pi has no model {wanted:?} (its available models: {})", if known.is_empty() { "none".to_string() } else { known.join(", ") })))
}

impl Live for Driver {
    fn pid(&self) -> u32 {
        self.group.pid()
    }

    fn send(&mut self, text: &str, images: &[Image]) -> Result<()> {
        let mut command = json!({"type": "prompt", "message": text});
        if !images.is_empty() {
            command["images"] = images.iter().map(|image| json!({"type": "image", "data": image.base64(), "mimeType": image.mime})).collect();
        }
        // The response says the prompt was accepted; the run's outcome comes as events.
        self.request(command, "the prompt", Duration::from_secs(120)).map(|_| ())
    }

    /// RPC `compact` (`customInstructions` with the instructions): Pi summarizes the entries
    /// before its cut with the session's model and appends a `compaction` entry to the session
    /// file, recorded as the file grows; its events are `compaction_start` and `compaction_end`
    /// (`reason` `manual`), then the command's response, which ends the turn (the command is
    /// written without waiting for that response, so that the compaction runs as a turn).
    fn compact(&mut self, instructions: Option<&str>) -> Result<()> {
        self.next_id += 1;
        let mut command = json!({"type": "compact", "id": format!("sna_{}", self.next_id)});
        if let Some(instructions) = instructions.map(str::trim).filter(|i| !i.is_empty()) {
            command["customInstructions"] = json!(instructions);
        }
        write_line(&self.stdin, &command)
    }

    fn interrupt(&mut self) -> Result<()> {
        self.request(json!({"type": "abort"}), "the abort", Duration::from_secs(30)).map(|_| ())
    }

    fn set_model(&mut self, model: &str) -> Result<()> {
        let available = self.request(json!({"type": "get_available_models"}), "get_available_models", Duration::from_secs(30))?;
        let models = available["data"]["models"].as_array().cloned().unwrap_or_default();
        let (provider, id) = resolve_model(&models, model)?;
        self.request(json!({"type": "set_model", "provider": provider, "modelId": id}), &format!("the model change to {provider}/{id}"), Duration::from_secs(30)).map(|_| ())
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
    use super::*;

    #[test]
    fn models_are_found_as_pi_finds_them() {
        let models = vec![
            json!({"provider": "mockant", "id": "mock-claude"}),
            json!({"provider": "other", "id": "mock-claude"}),
            json!({"provider": "openrouter", "id": "anthropic/claude-x"}),
        ];
        assert_eq!(resolve_model(&models, "mock-claude").unwrap(), ("mockant".into(), "mock-claude".into()));
        assert_eq!(resolve_model(&models, "other/mock-claude").unwrap(), ("other".into(), "mock-claude".into()));
        assert_eq!(resolve_model(&models, "OTHER/Mock-Claude").unwrap(), ("other".into(), "mock-claude".into()));
        assert_eq!(resolve_model(&models, "anthropic/claude-x").unwrap(), ("openrouter".into(), "anthropic/claude-x".into()));
        let err = resolve_model(&models, "nope").unwrap_err().to_string();
        assert!(err.contains("nope") && err.contains("mockant/mock-claude"), "{err}");
    }

    #[test]
    fn the_file_is_read_by_whole_new_lines() {
        let dir = std::env::temp_dir().join(format!("sna-pi-live-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("s.jsonl");
        let header = "{\"type\":\"session\",\"version\":3,\"id\":\"s1\",\"timestamp\":\"2026-12-04T14:29:51.116Z\",\"cwd\":\"/tmp\"}\n";
        let user = "{\"type\":\"message\",\"id\":\"a0000001\",\"parentId\":null,\"timestamp\":\"2026-12-04T14:29:52.000Z\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}],\"timestamp\":1}}\n";
        let answer = "{\"type\":\"message\",\"id\":\"a0000002\",\"parentId\":\"a0000001\",\"timestamp\":\"2026-12-04T14:29:53.000Z\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"hello\"}],\"api\":\"anthropic-messages\",\"provider\":\"mockant\",\"model\":\"m\",\"stopReason\":\"stop\",\"timestamp\":2}}\n";
        std::fs::write(&path, header).unwrap();
        let mut file = SessionFile::default();
        // Pi appended the user entry on opening the file: recorded, the header is not.
        std::fs::write(&path, format!("{header}{user}")).unwrap();
        file.open(path.clone(), Some(header.as_bytes().to_vec()));
        let blocks = file.read();
        assert_eq!(blocks.len(), 1);
        assert_eq!(blocks[0].content, "hi");
        assert_eq!(blocks[0].message_id.as_deref(), Some("a0000001"));
        // Half a line waits for the rest.
        std::fs::write(&path, format!("{header}{user}{}", &answer[..40])).unwrap();
        assert!(file.read().is_empty());
        std::fs::write(&path, format!("{header}{user}{answer}")).unwrap();
        let blocks = file.read();
        assert_eq!(blocks.iter().map(|b| b.content.as_str()).collect::<Vec<_>>(), ["hello"]);
        assert_eq!(blocks[0].model.as_deref(), Some("m"));
        // A file that no longer starts as it did: all it holds counts as recorded.
        file.open(path.clone(), Some(b"{\"other\":1}\n".to_vec()));
        assert!(file.read().is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
