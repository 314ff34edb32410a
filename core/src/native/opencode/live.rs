//! The live driver: `opencode serve` on 127.0.0.1 (a port the system picks, read from its
//! "listening on" line), its HTTP API for the session and its messages, its event stream for
//! capture. A turn is `prompt_async` (answered at once); it ends when the session, having been
//! busy, goes idle. Interrupt is `abort`. The model goes with every message (a session written by
//! `opencode import` has no model of its own to fall back on). A tool that waits for permission
//! (`permission.asked`, when OpenCode's config says `ask`) is reported as [`Signal::Permission`]
//! with `ask_permissions` and answered by `POST /permission/{id}/reply`; without it, `once` in
//! `bypassPermissions` and `reject` otherwise.
//!
//! A compaction is `POST /session/{id}/summarize` with the session's model (`auto: false`): OpenCode
//! adds a user message holding a `compaction` part, answers it with an assistant message marked
//! `summary` (the summary), publishes `session.compacted` and goes idle, which ends the turn as for a
//! message. The summary message's events are held until it completes and then go out with its
//! final `message.updated` first, so that its blocks come in the order an import gives (the
//! message's info on its first block, where the compaction reader looks; `events.rs`).

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use crate::error::{Error, Result};
use crate::model::Runtime;
use crate::native::live::{exited, last_lines, read_lines, spawn, Group, Image, Live, LiveSpec, PermissionRequest, Signal, Sink, TurnEnd, GRACE};

/// How many times a summarize that OpenCode answers without running is asked (see `compact`).
const COMPACT_ATTEMPTS: usize = 3;

struct Driver {
    group: Arc<Group>,
    base: String,
    session_id: String,
    model: Option<Value>,
    http: ureq::Agent,
    sink: Sink,
    /// Set by the event reader when the session goes busy; cleared when a compaction is asked for.
    busy_seen: Arc<AtomicBool>,
}

fn http_error(what: &str, e: ureq::Error) -> Error {
    Error::Runtime(format!("OpenCode's server failed {what}: {e}"))
}

/// `provider/model` as OpenCode's `{providerID, modelID}`.
fn model_ref(model: &str) -> Result<Value> {
    match model.split_once('/') {
        Some((provider, id)) if !provider.is_empty() && !id.is_empty() => Ok(json!({"providerID": provider, "modelID": id})),
        _ => Err(Error::invalid_field("model", format!("an OpenCode model is named provider/model (anthropic/claude-sonnet-4-5), not {model:?}"))),
    }
}

/// Starts `opencode serve` and opens (or creates) the session.
pub(super) fn start(spec: LiveSpec, sink: Sink) -> Result<Box<dyn Live>> {
    let model = spec.model.as_deref().map(model_ref).transpose()?;
    let bypass = spec.permission_mode.as_deref() == Some("bypassPermissions");

    let mut args: Vec<String> = ["serve", "--hostname", "127.0.0.1", "--port", "0"].iter().map(|s| s.to_string()).collect();
    args.extend(spec.args.iter().cloned());
    let (group, pipes) = spawn(Runtime::OpenCode, super::NPM_PACKAGE, &spec, &args)?;
    let stdout = pipes.stdout.ok_or_else(|| Error::Internal("no stdout pipe".into()))?;
    let (port_tx, port_rx) = mpsc::channel::<String>();
    let end_sink = sink.clone();
    read_lines(
        "sna-opencode",
        stdout,
        group.clone(),
        move |line| {
            if let Some(at) = line.find("listening on http://") {
                let _ = port_tx.send(line[at + "listening on http://".len()..].trim().to_string());
            }
        },
        move |group| end_sink(exited(group)),
    )?;
    let address = match port_rx.recv_timeout(Duration::from_secs(60)) {
        Ok(address) => address,
        Err(_) => {
            let stderr = last_lines(&group.stderr_tail());
            group.stop(GRACE);
            return Err(Error::Runtime(format!("opencode serve did not say where it listens within 60 s: {stderr}")));
        }
    };
    let base = format!("http://{address}");
    let http: ureq::Agent = ureq::Agent::config_builder().timeout_global(Some(Duration::from_secs(60))).http_status_as_error(false).build().into();
    let mut model = model;
    let busy_seen = Arc::new(AtomicBool::new(false));
    let result = (|| {
        if model.is_none() {
            // Every message names its model: a session written by `opencode import` has none of
            // its own to fall back on. Without one chosen, the one OpenCode is configured with.
            let mut response = http.get(format!("{base}/config")).call().map_err(|e| http_error("to say its configuration", e))?;
            let config: Value = response.body_mut().read_json().map_err(|e| http_error("to say its configuration", e))?;
            model = config["model"].as_str().map(model_ref).transpose()?;
        }
        let session_id = match &spec.resume {
            Some(id) => id.clone(),
            None => {
                let mut response = http.post(format!("{base}/session")).send_json(json!({})).map_err(|e| http_error("to create a session", e))?;
                let body: Value = response.body_mut().read_json().map_err(|e| http_error("to create a session", e))?;
                body["id"].as_str().ok_or_else(|| Error::Runtime(format!("OpenCode created a session without an id: {body}")))?.to_string()
            }
        };
        // Subscribe before the first message, and wait until the stream is open.
        let (ready_tx, ready_rx) = mpsc::channel();
        let events = ureq::Agent::config_builder().http_status_as_error(false).build().new_agent();
        let response = events.get(format!("{base}/event")).call().map_err(|e| http_error("to stream events", e))?;
        let answers = (!spec.ask_permissions || bypass).then(|| (base.clone(), http.clone(), if bypass { "once" } else { "reject" }));
        let stream = Stream {
            sink: sink.clone(),
            answers,
            session_id: session_id.clone(),
            seen_messages: HashSet::new(),
            complete_parts: HashSet::new(),
            part_types: HashMap::new(),
            busy: false,
            busy_seen: busy_seen.clone(),
            usage: HashMap::new(),
            error: None,
            aborted: false,
            summaries: Vec::new(),
        };
        std::thread::Builder::new()
            .name("sna-opencode-events".into())
            .spawn(move || stream.run(response.into_body().into_reader(), ready_tx))
            .map_err(|e| Error::Io { context: "cannot start a reader thread".into(), source: e })?;
        ready_rx.recv_timeout(Duration::from_secs(30)).map_err(|_| Error::Runtime("OpenCode's event stream did not open".into()))?;
        Ok::<_, Error>(session_id)
    })();
    let session_id = match result {
        Ok(id) => id,
        Err(e) => {
            group.stop(GRACE);
            return Err(e);
        }
    };
    sink(Signal::NativeId(session_id.clone()));
    Ok(Box::new(Driver { group, base, session_id, model, http, sink, busy_seen }))
}

/// Answers OpenCode's permission request `id` (`once` or `reject`).
fn reply_permission(http: &ureq::Agent, base: &str, id: &str, reply: &str) -> Result<()> {
    // A rejection with a message is feedback to the model, so that the turn goes on (a bare one
    // ends the turn).
    let body = if reply == "reject" { json!({"reply": reply, "message": "The user refused to let this tool run."}) } else { json!({"reply": reply}) };
    let mut response = http.post(format!("{base}/permission/{id}/reply")).send_json(body).map_err(|e| http_error("to take the permission answer", e))?;
    let status = response.status().as_u16();
    if !(200..300).contains(&status) {
        let text = response.body_mut().read_to_string().unwrap_or_default();
        return Err(Error::Runtime(format!("OpenCode refused the permission answer (HTTP {status}): {}", text.trim())));
    }
    Ok(())
}

/// The reader of `/event`: the session's bus events, in order.
struct Stream {
    sink: Sink,
    /// How permission requests are answered without asking (`once` in `bypassPermissions`,
    /// `reject` otherwise): OpenCode's base URL, a client and the reply; none when they are reported.
    answers: Option<(String, ureq::Agent, &'static str)>,
    session_id: String,
    seen_messages: HashSet<String>,
    complete_parts: HashSet<String>,
    part_types: HashMap<String, String>,
    busy: bool,
    /// Shared with the driver: set whenever the session goes busy.
    busy_seen: Arc<AtomicBool>,
    /// The turn's assistant messages' usage (the last update of each), by message id.
    usage: HashMap<String, Value>,
    error: Option<String>,
    aborted: bool,
    /// The summary messages of compactions still being written, in order: each one's last
    /// `message.updated` event and its complete parts' events, held until it completes.
    summaries: Vec<HeldSummary>,
}

/// A compaction's summary message whose events are held (see the module docs).
struct HeldSummary {
    id: String,
    updated: Value,
    parts: Vec<Value>,
}

impl Stream {
    fn run(mut self, body: impl std::io::Read, ready: mpsc::Sender<()>) {
        let mut reader = BufReader::new(body);
        let mut line = String::new();
        let mut ready = Some(ready);
        loop {
            line.clear();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            let Some(data) = line.trim_end().strip_prefix("data:") else { continue };
            let Ok(event) = serde_json::from_str::<Value>(data.trim_start()) else { continue };
            if event["type"] == "server.connected" {
                if let Some(ready) = ready.take() {
                    let _ = ready.send(());
                }
                continue;
            }
            self.on_event(event);
        }
    }

    fn ours(&self, properties: &Value) -> bool {
        let id = properties["sessionID"]
            .as_str()
            .or_else(|| properties["info"]["sessionID"].as_str())
            .or_else(|| properties["part"]["sessionID"].as_str());
        id == Some(self.session_id.as_str())
    }

    fn on_event(&mut self, event: Value) {
        let properties = &event["properties"];
        if !self.ours(properties) {
            return;
        }
        match event["type"].as_str().unwrap_or("") {
            "message.updated" => {
                let info = &properties["info"];
                let id = info["id"].as_str().unwrap_or("").to_string();
                if info["role"] == "assistant" {
                    if info.get("tokens").is_some() {
                        self.usage.insert(id.clone(), json!({"tokens": info["tokens"], "cost": info["cost"]}));
                    }
                    if info["error"]["name"] == "MessageAbortedError" {
                        self.aborted = true;
                    } else if let Some(message) = info["error"]["data"]["message"].as_str() {
                        self.error = Some(message.to_string());
                    }
                }
                // The first update says who speaks and with which model; the last one, when the
                // message is done, its outcome. The ones between repeat them.
                let done = info["time"].get("completed").is_some_and(|t| !t.is_null());
                if info["role"] == "assistant" && info["summary"] == Value::Bool(true) {
                    self.hold_summary(id, event, done);
                    return;
                }
                if self.seen_messages.insert(id.clone()) || done && self.seen_messages.insert(format!("{id}/done")) {
                    (self.sink)(Signal::Event(event));
                }
            }
            "message.part.updated" => {
                let part = &properties["part"];
                let id = part["id"].as_str().unwrap_or("").to_string();
                let ty = part["type"].as_str().unwrap_or("").to_string();
                self.part_types.insert(id.clone(), ty.clone());
                let complete = match ty.as_str() {
                    "text" | "reasoning" => part.get("time").is_none_or(|t| t.get("end").is_some()),
                    "tool" => matches!(part["state"]["status"].as_str(), Some("completed" | "error")),
                    _ => true,
                };
                if complete && self.complete_parts.insert(id) {
                    let message = part["messageID"].as_str().unwrap_or("");
                    match self.summaries.iter_mut().find(|held| held.id == message) {
                        Some(held) => held.parts.push(event),
                        None => (self.sink)(Signal::Event(event)),
                    }
                }
            }
            "message.part.delta" => {
                let thinking = properties["partID"].as_str().and_then(|id| self.part_types.get(id)).is_some_and(|t| t == "reasoning");
                if properties["field"] == "text" {
                    (self.sink)(Signal::Delta { thinking, text: properties["delta"].as_str().unwrap_or("").into() });
                }
            }
            "session.status" => match properties["status"]["type"].as_str() {
                Some("busy") if !self.busy => {
                    self.busy = true;
                    self.busy_seen.store(true, Ordering::SeqCst);
                    self.error = None;
                    self.aborted = false;
                }
                Some("idle") => self.end_turn(),
                _ => {}
            },
            "session.idle" => self.end_turn(),
            "permission.asked" => self.on_permission(properties),
            "session.error" if properties["error"]["name"] == "MessageAbortedError" => self.aborted = true,
            "session.error" => {
                self.error = properties["error"]["data"]["message"].as_str().or_else(|| properties["error"]["name"].as_str()).map(str::to_string);
                (self.sink)(Signal::Event(event));
            }
            _ => {}
        }
    }

    /// A tool waiting for permission: answered at once (see `answers`), or reported.
    fn on_permission(&self, properties: &Value) {
        let id = properties["id"].as_str().unwrap_or("").to_string();
        if let Some((base, http, reply)) = &self.answers {
            // A refused answer leaves the tool waiting; an interrupt ends the turn.
            let _ = reply_permission(http, base, &id, reply);
            return;
        }
        let tool = properties["permission"].as_str().unwrap_or("tool").to_string();
        let patterns: Vec<&str> = properties["patterns"].as_array().map(|p| p.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
        let title = if patterns.is_empty() { tool.clone() } else { format!("{tool}: {}", patterns.join(", ")) };
        let input = json!({"patterns": properties["patterns"], "metadata": properties["metadata"]});
        let call_id = properties["tool"]["callID"].as_str().map(str::to_string);
        (self.sink)(Signal::Permission(PermissionRequest { id, tool, input, call_id, title }));
    }

    /// Holds the update of a summary message (its first one and the ones after); once the message
    /// is done, its last update goes out, then its parts. An update after that repeats it.
    fn hold_summary(&mut self, id: String, event: Value, done: bool) {
        if self.seen_messages.contains(&format!("{id}/done")) {
            return;
        }
        match self.summaries.iter_mut().find(|held| held.id == id) {
            Some(held) => held.updated = event,
            None => self.summaries.push(HeldSummary { id: id.clone(), updated: event, parts: Vec::new() }),
        }
        if done {
            if let Some(at) = self.summaries.iter().position(|held| held.id == id) {
                let held = self.summaries.remove(at);
                self.release(held);
            }
        }
    }

    /// Sends a held summary message: its last update, then its parts.
    fn release(&mut self, held: HeldSummary) {
        self.seen_messages.insert(held.id.clone());
        self.seen_messages.insert(format!("{}/done", held.id));
        (self.sink)(Signal::Event(held.updated));
        for part in held.parts {
            (self.sink)(Signal::Event(part));
        }
    }

    fn end_turn(&mut self) {
        if !self.busy {
            return;
        }
        self.busy = false;
        // A summary that did not complete (aborted, failed) is recorded as it stands.
        for held in std::mem::take(&mut self.summaries) {
            self.release(held);
        }
        let interrupted = std::mem::take(&mut self.aborted);
        let usage = turn_usage(std::mem::take(&mut self.usage));
        (self.sink)(Signal::TurnEnd(TurnEnd { usage, error: self.error.take(), interrupted }));
    }
}

/// The usage of a turn's assistant messages (each a model call) added up, in their shape
/// (`{tokens: {input, output, reasoning, cache: {read, write}}, cost}`).
fn turn_usage(messages: HashMap<String, Value>) -> Option<Value> {
    if messages.is_empty() {
        return None;
    }
    let n = |v: &Value| v.as_u64().unwrap_or(0);
    let (mut input, mut output, mut reasoning, mut read, mut write, mut cost) = (0, 0, 0, 0, 0, 0.0);
    for usage in messages.values() {
        let t = &usage["tokens"];
        input += n(&t["input"]);
        output += n(&t["output"]);
        reasoning += n(&t["reasoning"]);
        read += n(&t["cache"]["read"]);
        write += n(&t["cache"]["write"]);
        cost += usage["cost"].as_f64().unwrap_or(0.0);
    }
    Some(json!({"tokens": {"input": input, "output": output, "reasoning": reasoning, "cache": {"read": read, "write": write}}, "cost": cost}))
}

impl Live for Driver {
    fn pid(&self) -> u32 {
        self.group.pid()
    }

    fn send(&mut self, text: &str, images: &[Image]) -> Result<()> {
        let mut parts: Vec<Value> = images
            .iter()
            .enumerate()
            .map(|(i, image)| json!({"type": "file", "mime": image.mime, "url": image.data_url(), "filename": format!("image-{}.{}", i + 1, image.mime.rsplit('/').next().unwrap_or("bin"))}))
            .collect();
        parts.push(json!({"type": "text", "text": text}));
        let mut body = json!({"parts": parts});
        if let Some(model) = &self.model {
            body["model"] = model.clone();
        }
        let url = format!("{}/session/{}/prompt_async", self.base, self.session_id);
        let mut response = self.http.post(&url).send_json(body).map_err(|e| http_error("to take the message", e))?;
        let status = response.status().as_u16();
        if !(200..300).contains(&status) {
            let text = response.body_mut().read_to_string().unwrap_or_default();
            return Err(Error::Runtime(format!("OpenCode refused the message (HTTP {status}): {}", text.trim())));
        }
        Ok(())
    }

    /// `POST /session/{id}/summarize` `{providerID, modelID, auto: false}` with the session's model
    /// (see the module docs). OpenCode's summarize takes no instructions: `instructions` are not
    /// used. The call is answered only once the summary is written, so it is made from a thread of
    /// its own and the turn ends when the session goes idle; a call refused before the session went
    /// busy ends the turn with OpenCode's answer as the error.
    fn compact(&mut self, instructions: Option<&str>) -> Result<()> {
        let _ = instructions;
        let Some(model) = self.model.clone() else {
            return Err(Error::Runtime("OpenCode's summarize needs a model, and none was chosen or configured".into()));
        };
        let body = json!({"providerID": model["providerID"], "modelID": model["modelID"], "auto": false});
        let url = format!("{}/session/{}/summarize", self.base, self.session_id);
        self.busy_seen.store(false, Ordering::SeqCst);
        let (sink, busy_seen) = (self.sink.clone(), self.busy_seen.clone());
        // No time limit of its own: the agent's turn has one.
        let http: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
        std::thread::Builder::new()
            .name("sna-opencode-summarize".into())
            .spawn(move || {
                // A summarize answered at once without the session going busy did not run: OpenCode
                // does that when the call comes while it is still settling the turn before (the
                // chaos campaign found it right after a turn). It is asked again, up to three times.
                let mut failure = String::new();
                for _ in 0..COMPACT_ATTEMPTS {
                    let (said, refused) = match http.post(&url).send_json(&body) {
                        Ok(mut response) if (200..300).contains(&response.status().as_u16()) => {
                            let said = response.body_mut().read_to_string().unwrap_or_default();
                            (format!("OpenCode answered the compaction without running it ({})", said.trim()), false)
                        }
                        Ok(mut response) => {
                            let status = response.status().as_u16();
                            let text = response.body_mut().read_to_string().unwrap_or_default();
                            (format!("OpenCode refused the compaction (HTTP {status}): {}", text.trim()), true)
                        }
                        Err(e) => (format!("OpenCode's server failed to compact: {e}"), true),
                    };
                    failure = said;
                    // The session went busy before the answer when the compaction ran: its idle
                    // ends the turn. When it never did, nothing else will.
                    std::thread::sleep(Duration::from_secs(1));
                    if busy_seen.load(Ordering::SeqCst) || refused {
                        break;
                    }
                }
                if !busy_seen.load(Ordering::SeqCst) {
                    sink(Signal::TurnEnd(TurnEnd { usage: None, error: Some(failure), interrupted: false }));
                }
            })
            .map_err(|e| Error::Io { context: "cannot start a thread for the compaction".into(), source: e })?;
        Ok(())
    }

    fn interrupt(&mut self) -> Result<()> {
        let url = format!("{}/session/{}/abort", self.base, self.session_id);
        self.http.post(&url).send_json(json!({})).map_err(|e| http_error("to abort", e))?;
        Ok(())
    }

    fn answer_permission(&mut self, id: &str, allow: bool) -> Result<()> {
        reply_permission(&self.http, &self.base, id, if allow { "once" } else { "reject" })
    }

    fn set_model(&mut self, model: &str) -> Result<()> {
        self.model = Some(model_ref(model)?);
        Ok(())
    }

    fn stop(&mut self) {
        self.group.stop(GRACE);
    }
}
