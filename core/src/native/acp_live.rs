//! The live driver every runtime shares that the host runs in its Agent Client Protocol mode
//! (JSON-RPC 2.0, one message per line on stdio): Gemini CLI (`gemini --acp`), Qwen Code
//! (`qwen --acp`) and Copilot CLI (`copilot --acp`). One process per running session, kept alive
//! across turns. What differs between them is a [`Flavor`] in the runtime's folder (`live.rs`).
//!
//! `initialize`, then `session/new` (a new session: its id is the native id) or `session/load` (the
//! host's native continuation, or a replay the host wrote for the runtime to load);
//! `session/prompt` per user message, whose response (`stopReason`, usage where the runtime puts
//! it) ends the turn; `session/cancel` interrupts; the flavor's model change switches the model in
//! place.
//!
//! **What is recorded comes from the runtime's own session file**, read with its import's reader
//! ([`SessionLog`]): the ACP updates lose what the file keeps (a tool call's input and output,
//! reasoning signatures, record ids), so that live capture records exactly what an import of the
//! file gives. The file is read when a tool call finished (every 100 ms until its result is
//! there: a runtime writes it a moment after it reports the call done) and when the turn ends.
//! Text and thought chunks stream as deltas (`events`).
//!
//! A turn the runtime drops from its file (an interrupt or a failed request may roll its history
//! back, and the user's message with it) still records the user's message: the driver sends it
//! as blocks itself, so that the canonical history keeps what was said.
//!
//! Permission modes (`spec.permission_mode`) set the flavor's ACP mode with `session/set_mode`
//! after the session opens, and decide the answer to each `session/request_permission` (the host
//! has nobody to ask):
//!
//! | mode | a permission request |
//! |---|---|
//! | `bypassPermissions` | allowed once |
//! | `acceptEdits` | allowed once for an edit (`edit`, `delete`, `move`), otherwise rejected |
//! | `plan` | rejected |
//! | `default`, none | rejected: what the runtime's own policy judges safe runs without asking; the rest is refused, as Claude Code's `-p` and Codex do |
//!
//! With `ask_permissions`, a request the mode does not allow is reported as [`Signal::Permission`]
//! instead, and answered with the offered `allow_once` or `reject_once` option.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::error::{Error, Result};
use crate::model::{Actor, Block, Kind, Runtime};
use crate::native::common::embed_block;
pub(crate) use crate::native::session_log::{SessionLog, TailLog};
use crate::native::live::{await_reply, exited, last_lines, read_lines, spawn, write_line, Group, Image, Live, LiveSpec, Pending, PermissionRequest, Signal, Sink, TurnEnd, GRACE};

/// How long a setup request (`initialize`, `session/new`, `session/load`) may take.
const SETUP_TIMEOUT: Duration = Duration::from_secs(90);

/// What a permission request gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Policy {
    Allow,
    Edits,
    Deny,
}

impl Policy {
    /// The policy of a permission mode (the table in the module docs).
    pub(crate) fn of(mode: Option<&str>) -> Policy {
        match mode {
            Some("bypassPermissions") => Policy::Allow,
            Some("acceptEdits") => Policy::Edits,
            _ => Policy::Deny,
        }
    }

    /// Whether it lets the tool of a `session/request_permission` run.
    fn allows(self, params: &Value) -> bool {
        let edit = matches!(params["toolCall"]["kind"].as_str(), Some("edit" | "delete" | "move"));
        self == Policy::Allow || (self == Policy::Edits && edit)
    }
}

/// The answer to a `session/request_permission`: the offered option of the wanted kind.
fn permission_answer(params: &Value, allow: bool) -> Value {
    let (kind, id) = if allow { ("allow_once", "proceed_once") } else { ("reject_once", "cancel") };
    let options = params["options"].as_array().cloned().unwrap_or_default();
    let chosen = options
        .iter()
        .find(|o| o["kind"] == kind)
        .or_else(|| options.iter().find(|o| o["optionId"] == id))
        .and_then(|o| o["optionId"].as_str())
        .map(str::to_string);
    match chosen {
        Some(option) => json!({"outcome": {"outcome": "selected", "optionId": option}}),
        None => json!({"outcome": {"outcome": "cancelled"}}),
    }
}

/// What one `session/update` means to the driver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Update {
    /// Text arriving: the answer (`agent_message_chunk`) or a thought (`agent_thought_chunk`).
    Delta { thinking: bool, text: String },
    /// A tool call finished (`tool_call_update` with status `completed` or `failed`): the file
    /// holds its step.
    ToolDone,
    /// `available_commands_update`: sent once a session is open (after a `session/load`, once its
    /// history replay has been queued).
    Commands,
    /// Anything else (`tool_call`, `user_message_chunk` of a replay, `plan`, …).
    Other,
}

/// Reads the `params` of a `session/update` notification as the protocol defines it.
pub(crate) fn update(params: &Value) -> Update {
    let update = &params["update"];
    let text = || update["content"]["text"].as_str().unwrap_or("").to_string();
    match update["sessionUpdate"].as_str().unwrap_or("") {
        kind @ ("agent_message_chunk" | "agent_thought_chunk") if update["content"]["type"] == "text" => {
            let text = text();
            if text.is_empty() {
                Update::Other
            } else {
                Update::Delta { thinking: kind == "agent_thought_chunk", text }
            }
        }
        "tool_call_update" if matches!(update["status"].as_str(), Some("completed" | "failed")) => Update::ToolDone,
        "available_commands_update" => Update::Commands,
        _ => Update::Other,
    }
}

/// Renames the counts of an ACP usage object (`inputTokens`, `outputTokens`, `thoughtTokens`,
/// `cachedReadTokens`, `cachedWriteTokens`, …) by `names` (ACP name → the runtime's own), into
/// the shape the runtime's own records give its usage; `None` when it counts none of them.
pub(crate) fn renamed_usage(usage: &Value, names: &[(&str, &str)]) -> Option<Value> {
    let usage = usage.as_object()?;
    let out: serde_json::Map<String, Value> = names.iter().filter_map(|(from, to)| Some((to.to_string(), usage.get(*from)?.as_u64()?.into()))).collect();
    (!out.is_empty()).then_some(Value::Object(out))
}

/// Adds the counts of `more` to `total` (the model calls of one turn).
fn add_usage(total: &mut Option<Value>, more: &Value) {
    let Value::Object(more) = more else { return };
    let sum = total.get_or_insert_with(|| Value::Object(serde_json::Map::new()));
    let Some(sum) = sum.as_object_mut() else { return };
    for (key, count) in more {
        if let Some(count) = count.as_u64() {
            let before = sum.get(key).and_then(Value::as_u64).unwrap_or(0);
            sum.insert(key.clone(), (before + count).into());
        }
    }
}

/// What differs between the runtimes driven over ACP.
pub(crate) trait Flavor: Send + Sync + 'static {
    fn runtime(&self) -> Runtime;
    /// The npm package the CLI comes from (named when it cannot be started).
    fn package(&self) -> &'static str;
    /// Sets what the runtime needs in its environment (default: nothing).
    fn env(&self, env: &mut BTreeMap<String, String>) {
        let _ = env;
    }
    /// The command line: the ACP switch, the model, then `spec.args`.
    fn args(&self, spec: &LiveSpec) -> Vec<String>;
    /// The session file of `spec`'s session (for a resumed one, found and read now).
    fn log(&self, spec: &LiveSpec) -> Result<Box<dyn SessionLog>>;
    /// The ACP mode set after the session opens for a permission mode; `None`: the default one.
    fn mode(&self, permission_mode: Option<&str>) -> Option<&'static str>;
    /// A `session/update` read (default: [`update`]).
    fn update(&self, params: &Value) -> Update {
        update(params)
    }
    /// True for a user text block of the runtime's own making (its context), not the user's words.
    fn is_context(&self, block: &Block) -> bool {
        let _ = block;
        false
    }
    /// False for a runtime whose file keeps only a reference to a prompt's images (Copilot CLI: a
    /// temporary file's path): the driver records the images it sent with the user's message.
    fn file_keeps_images(&self) -> bool {
        true
    }
    /// The result of a request the agent sends that is not a permission request; `None` answers
    /// that the client does not support it.
    fn answer(&self, method: &str, params: &Value) -> Option<Value> {
        let _ = (method, params);
        None
    }
    /// The prompt that asks the runtime to compact (its slash command), or `UNSUPPORTED` saying why.
    fn compact(&self, instructions: Option<&str>) -> Result<String>;
    /// The request that changes the model: method and params (default `session/set_model`).
    fn set_model(&self, session: &str, model: &str) -> (&'static str, Value) {
        ("session/set_model", json!({"sessionId": session, "modelId": model}))
    }
    /// The turn's usage in the shape the runtime's own records give it (what the host stores for
    /// a turn whose blocks carry none), from the prompt's `result` or `streamed`, the sum of the
    /// ACP usage objects the turn's updates carried (`_meta.usage`). Default: none.
    fn usage(&self, result: &Value, streamed: Option<Value>) -> Option<Value> {
        let _ = (result, streamed);
        None
    }
}

/// The running turn.
struct Turn {
    /// The id of its `session/prompt` request.
    request: u64,
    text: String,
    images: Vec<Image>,
    /// True once a user text block of the turn went out.
    user_sent: bool,
    /// A tool call finished since the file was last read.
    tool_done: bool,
    /// The summed ACP usage of its model calls, reported in updates (`_meta.usage`, Qwen Code's
    /// way).
    usage: Option<Value>,
}

/// What the driver and its reader thread share.
struct Shared {
    flavor: &'static dyn Flavor,
    sink: Sink,
    pending: Pending,
    stdin: Mutex<Option<std::process::ChildStdin>>,
    log: Mutex<Box<dyn SessionLog>>,
    turn: Mutex<Option<Turn>>,
    policy: Policy,
    /// Requests that are reported rather than answered by the policy: id → (the JSON-RPC id, the
    /// request's params).
    asked: Option<Mutex<HashMap<String, (Value, Value)>>>,
    group: Arc<Group>,
    /// When the last `session/update` arrived, and whether `available_commands_update` did.
    last_update: Mutex<Instant>,
    commands: AtomicBool,
}

impl Shared {
    /// Sends the file's unrecorded blocks; notes in the turn whether the user's message was among
    /// them. Sent under the log's lock, so that blocks read by two threads go out in order.
    fn record(&self, all: bool) {
        let Ok(mut log) = self.log.lock() else { return };
        let mut blocks = log.take(all);
        if blocks.is_empty() {
            return;
        }
        let said = |b: &Block| b.actor == Actor::User && b.kind == Kind::Text && !self.flavor.is_context(b);
        let user = blocks.iter().position(said);
        let results = blocks.iter().any(|b| b.kind == Kind::ToolResult);
        if let Some(turn) = self.turn.lock().ok().as_mut().and_then(|t| t.as_mut()) {
            if let (Some(at), false) = (user, turn.user_sent || self.flavor.file_keeps_images()) {
                let created_at = blocks[at].created_at;
                let images = turn.images.iter().enumerate().map(|(i, image)| Block { created_at, ..embed_block(Actor::User, &format!("image {}", i + 1), image.embed()) });
                blocks.splice(at..at, images.collect::<Vec<_>>());
            }
            turn.user_sent |= user.is_some();
            if results {
                turn.tool_done = false;
            }
        }
        (self.sink)(Signal::Blocks(blocks));
    }

    /// While a finished tool's result is not in the file yet (written a moment after the call is
    /// reported done, and the next step may take long), the file is read every 100 ms.
    fn poll(&self, group: &Group) {
        while group.try_reap().is_none() {
            std::thread::sleep(Duration::from_millis(100));
            if self.turn.lock().is_ok_and(|t| t.as_ref().is_some_and(|t| t.tool_done)) {
                self.record(false);
            }
        }
    }

    fn on_line(&self, line: &str) {
        let Ok(message) = serde_json::from_str::<Value>(line) else { return };
        let method = message.get("method").and_then(Value::as_str);
        let id = message.get("id").filter(|id| !id.is_null());
        match (method, id) {
            (None, Some(id)) => {
                let ends_turn = self.turn.lock().ok().and_then(|t| t.as_ref().map(|t| Some(t.request) == id.as_u64())).unwrap_or(false);
                if ends_turn {
                    self.end_turn(&message);
                } else {
                    self.pending.answer(&id.to_string(), message);
                }
            }
            (Some(method), Some(id)) => {
                let params = &message["params"];
                let reply = if method == "session/request_permission" {
                    let allow = self.policy.allows(params);
                    if !allow && self.asked.is_some() {
                        return self.ask(id.clone(), params);
                    }
                    json!({"jsonrpc": "2.0", "id": id, "result": permission_answer(params, allow)})
                } else if let Some(result) = self.flavor.answer(method, params) {
                    json!({"jsonrpc": "2.0", "id": id, "result": result})
                } else {
                    // The client advertises no file system and no terminal.
                    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": format!("{method} is not supported by this client")}})
                };
                let _ = write_line(&self.stdin, &reply);
            }
            (Some("session/update"), None) => self.on_update(&message["params"]),
            _ => {}
        }
    }

    /// Reports a permission request (see the module docs).
    fn ask(&self, id: Value, params: &Value) {
        let call = &params["toolCall"];
        let title = call["title"].as_str().unwrap_or("a tool").to_string();
        let tool = call["kind"].as_str().unwrap_or("other").to_string();
        let key = id.to_string();
        if let Some(Ok(mut asked)) = self.asked.as_ref().map(Mutex::lock) {
            asked.insert(key.clone(), (id, params.clone()));
        }
        let input = call.get("rawInput").cloned().unwrap_or_else(|| call.clone());
        (self.sink)(Signal::Permission(PermissionRequest { id: key, tool, input, call_id: call["toolCallId"].as_str().map(str::to_string), title }));
    }

    fn on_update(&self, params: &Value) {
        if let Ok(mut last) = self.last_update.lock() {
            *last = Instant::now();
        }
        // What a sub-agent does (Qwen Code's, tagged with the tool call that runs it) is neither
        // the turn's answer nor its usage: its own records hold it.
        if params["update"]["_meta"].get("parentToolCallId").is_some_and(|p| !p.is_null()) {
            return;
        }
        let update = self.flavor.update(params);
        if update == Update::Commands {
            self.commands.store(true, Ordering::SeqCst);
        }
        // Before the first prompt: a `session/load` replay, or start-up notices.
        let read = match self.turn.lock().ok().as_mut().and_then(|t| t.as_mut()) {
            None => return,
            Some(turn) => {
                if let Some(usage) = params["update"]["_meta"].get("usage") {
                    add_usage(&mut turn.usage, usage);
                }
                match &update {
                Update::ToolDone => {
                    turn.tool_done = true;
                    true
                }
                // The next step began: the finished tools' results are in the file by now.
                Update::Delta { .. } | Update::Other => turn.tool_done,
                    Update::Commands => false,
                }
            }
        };
        if read {
            self.record(false);
        }
        if let Update::Delta { thinking, text } = update {
            (self.sink)(Signal::Delta { thinking, text });
        }
    }

    /// The prompt's response: the turn's blocks from the file, then its end.
    fn end_turn(&self, reply: &Value) {
        self.record(true);
        let Some(turn) = self.turn.lock().ok().and_then(|mut t| t.take()) else { return };
        let result = &reply["result"];
        let interrupted = result["stopReason"] == "cancelled";
        let error = reply.get("error").map(|e| with_stderr(rpc_error(e), &self.group));
        if !turn.user_sent && (interrupted || error.is_some()) {
            // The runtime rolled its history back: keep what the user said anyway.
            let mut blocks: Vec<Block> = turn.images.iter().enumerate().map(|(i, image)| embed_block(Actor::User, &format!("image {}", i + 1), image.embed())).collect();
            blocks.push(Block::text(Actor::User, &turn.text));
            (self.sink)(Signal::Blocks(blocks));
        }
        let error = error.or_else(|| match result["stopReason"].as_str() {
            Some("max_tokens") => Some("the context window would overflow (stopReason max_tokens)".to_string()),
            Some("refusal") => Some("the model refused (stopReason refusal)".to_string()),
            _ => None,
        });
        let usage = self.flavor.usage(result, turn.usage);
        (self.sink)(Signal::TurnEnd(TurnEnd { usage, error, interrupted }));
    }
}

/// An error message followed by the last lines the process wrote on stderr.
fn with_stderr(message: String, group: &Group) -> String {
    let tail = last_lines(&group.stderr_tail());
    if tail.is_empty() {
        message
    } else {
        format!("{message}\n{tail}")
    }
}

/// A JSON-RPC error's message with its details (`data.details`, where Gemini CLI puts the reason).
fn rpc_error(error: &Value) -> String {
    let message = error["message"].as_str().unwrap_or("no reason given");
    match error["data"]["details"].as_str().or_else(|| error["data"].as_str()) {
        Some(details) if !details.is_empty() && details != message => format!("{message}: {details}"),
        _ => message.to_string(),
    }
}

struct Driver {
    group: Arc<Group>,
    shared: Arc<Shared>,
    next_id: u64,
    session: String,
}

/// Starts the runtime in its ACP mode and opens the session (new, or loaded by `spec.resume`).
pub(crate) fn start(flavor: &'static dyn Flavor, mut spec: LiveSpec, sink: Sink) -> Result<Box<dyn Live>> {
    let runtime = flavor.runtime();
    flavor.env(&mut spec.env);
    let log = flavor.log(&spec)?;
    let args = flavor.args(&spec);
    let policy = Policy::of(spec.permission_mode.as_deref());
    let acp_mode = flavor.mode(spec.permission_mode.as_deref());
    let (group, pipes) = spawn(runtime, flavor.package(), &spec, &args)?;
    let shared = Arc::new(Shared {
        flavor,
        sink: sink.clone(),
        pending: Pending::default(),
        stdin: Mutex::new(pipes.stdin),
        log: Mutex::new(log),
        turn: Mutex::new(None),
        policy,
        asked: (spec.ask_permissions && policy != Policy::Allow).then(Mutex::default),
        group: group.clone(),
        last_update: Mutex::new(Instant::now()),
        commands: AtomicBool::new(false),
    });
    let stdout = pipes.stdout.ok_or_else(|| Error::Internal("no stdout pipe".into()))?;
    let (reader, ending) = (shared.clone(), shared.clone());
    let thread = format!("sna-{}", runtime.as_str());
    read_lines(&thread, stdout, group.clone(), move |line| reader.on_line(line), move |group| {
        ending.pending.fail_all();
        // What the file gained and was not recorded (a turn the process did not finish, or what
        // closed the last one late): all of it is the runtime's own thread, which a native resume
        // goes on from.
        if let Ok(mut log) = ending.log.lock() {
            log.no_wait();
        }
        ending.record(true);
        (ending.sink)(Signal::Synced);
        (ending.sink)(exited(group));
    })?;
    let (poller, polled) = (shared.clone(), group.clone());
    std::thread::Builder::new()
        .name(format!("{thread}-log"))
        .spawn(move || poller.poll(&polled))
        .map_err(|e| Error::Io { context: "cannot start a reader thread".into(), source: e })?;
    let mut driver = Driver { group, shared, next_id: 0, session: String::new() };
    let setup = (|| {
        driver.request("initialize", json!({"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": false, "writeTextFile": false}, "terminal": false}, "clientInfo": {"name": "sna-history", "version": env!("CARGO_PKG_VERSION")}}), SETUP_TIMEOUT)?;
        let cwd = spec.cwd.display().to_string();
        match &spec.resume {
            Some(id) => {
                driver.request("session/load", json!({"sessionId": id, "cwd": cwd, "mcpServers": []}), SETUP_TIMEOUT)?;
                driver.session = id.clone();
            }
            None => {
                let result = driver.request("session/new", json!({"cwd": cwd, "mcpServers": []}), SETUP_TIMEOUT)?;
                driver.session = result["sessionId"].as_str().ok_or_else(|| Error::Runtime(format!("{} opened a session without an id", runtime.display_name())))?.to_string();
                if let Ok(mut log) = driver.shared.log.lock() {
                    log.opened(&driver.session);
                }
            }
        }
        if let Some(mode) = acp_mode {
            driver.request("session/set_mode", json!({"sessionId": driver.session, "modeId": mode}), SETUP_TIMEOUT)?;
        }
        if spec.resume.is_some() {
            driver.settle();
        }
        Ok(())
    })();
    if let Err(e) = setup {
        driver.group.stop(GRACE);
        return Err(e);
    }
    sink(Signal::NativeId(driver.session.clone()));
    Ok(Box::new(driver))
}

impl Driver {
    fn runtime(&self) -> Runtime {
        self.shared.flavor.runtime()
    }

    fn request(&mut self, method: &str, params: Value, timeout: Duration) -> Result<Value> {
        self.next_id += 1;
        let id = self.next_id;
        let rx = self.shared.pending.expect(&id.to_string());
        write_line(&self.shared.stdin, &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        let reply = await_reply(&rx, timeout, self.runtime(), &self.group, method)?;
        if let Some(error) = reply.get("error") {
            return Err(Error::Runtime(with_stderr(format!("{} refused {method}: {}", self.runtime().display_name(), rpc_error(error)), &self.group)));
        }
        Ok(reply["result"].clone())
    }

    /// After `session/load`: waits for the history replay to go quiet (at most 3 s), then tells
    /// the log (see [`SessionLog::loaded`]).
    fn settle(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(3);
        while Instant::now() < deadline {
            let quiet = self.shared.last_update.lock().map(|t| t.elapsed()).unwrap_or_default();
            let enough = if self.shared.commands.load(Ordering::SeqCst) { Duration::from_millis(100) } else { Duration::from_millis(500) };
            if quiet >= enough {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        if let Ok(mut log) = self.shared.log.lock() {
            log.loaded();
        }
    }

    /// Sends a `session/prompt`: the turn it starts ends with its response.
    fn prompt(&mut self, text: &str, images: &[Image]) -> Result<()> {
        let mut prompt = vec![json!({"type": "text", "text": text})];
        prompt.extend(images.iter().map(|image| json!({"type": "image", "data": image.base64(), "mimeType": image.mime})));
        // What closed the last turn late goes out before this one.
        if let Ok(mut log) = self.shared.log.lock() {
            let late = log.turn_starts();
            if !late.is_empty() {
                (self.shared.sink)(Signal::Blocks(late));
            }
        }
        self.next_id += 1;
        let request = self.next_id;
        if let Ok(mut turn) = self.shared.turn.lock() {
            *turn = Some(Turn { request, text: text.to_string(), images: images.to_vec(), user_sent: false, tool_done: false, usage: None });
        }
        let sent = write_line(&self.shared.stdin, &json!({"jsonrpc": "2.0", "id": request, "method": "session/prompt", "params": {"sessionId": self.session, "prompt": prompt}}));
        if sent.is_err() {
            if let Ok(mut turn) = self.shared.turn.lock() {
                turn.take();
            }
        }
        sent
    }
}

impl Live for Driver {
    fn pid(&self) -> u32 {
        self.group.pid()
    }

    fn send(&mut self, text: &str, images: &[Image]) -> Result<()> {
        self.prompt(text, images)
    }

    fn interrupt(&mut self) -> Result<()> {
        if self.shared.turn.lock().map_or(true, |t| t.is_none()) {
            return Ok(());
        }
        write_line(&self.shared.stdin, &json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": self.session}}))
    }

    fn compact(&mut self, instructions: Option<&str>) -> Result<()> {
        let command = self.shared.flavor.compact(instructions)?;
        self.prompt(&command, &[])
    }

    fn answer_permission(&mut self, id: &str, allow: bool) -> Result<()> {
        let asked = self.shared.asked.as_ref().and_then(|asked| asked.lock().ok()?.remove(id));
        let Some((request, params)) = asked else { return Err(Error::NotFound(format!("no permission request {id:?} waits for an answer"))) };
        let answer = permission_answer(&params, allow);
        write_line(&self.shared.stdin, &json!({"jsonrpc": "2.0", "id": request, "result": answer}))
    }

    fn set_model(&mut self, model: &str) -> Result<()> {
        let (method, params) = self.shared.flavor.set_model(&self.session, model);
        self.request(method, params, Duration::from_secs(30)).map(|_| ())
    }

    fn stop(&mut self) {
        if let Ok(mut stdin) = self.shared.stdin.lock() {
            stdin.take();
        }
        self.group.stop(GRACE);
        // What the runtime wrote while it ended, after its output closed (Copilot CLI's
        // `session.shutdown`).
        if let Ok(mut log) = self.shared.log.lock() {
            log.no_wait();
        }
        self.shared.record(true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permission_answers_follow_the_mode() {
        let options = json!([
            {"optionId": "proceed_always", "name": "Allow for this session", "kind": "allow_always"},
            {"optionId": "proceed_once", "name": "Allow", "kind": "allow_once"},
            {"optionId": "cancel", "name": "Reject", "kind": "reject_once"}
        ]);
        let shell = json!({"sessionId": "s", "toolCall": {"toolCallId": "t", "kind": "execute"}, "options": options});
        let edit = json!({"sessionId": "s", "toolCall": {"toolCallId": "t", "kind": "edit"}, "options": options});
        let chosen = |params: &Value, mode: &str| permission_answer(params, Policy::of(Some(mode)).allows(params))["outcome"]["optionId"].as_str().map(str::to_string);
        assert_eq!(chosen(&shell, "bypassPermissions").as_deref(), Some("proceed_once"));
        assert_eq!(chosen(&shell, "acceptEdits").as_deref(), Some("cancel"));
        assert_eq!(chosen(&edit, "acceptEdits").as_deref(), Some("proceed_once"));
        assert_eq!(chosen(&edit, "default").as_deref(), Some("cancel"));
        assert_eq!(chosen(&edit, "plan").as_deref(), Some("cancel"));
        assert_eq!(permission_answer(&json!({"options": []}), true), json!({"outcome": {"outcome": "cancelled"}}));
        // Options named otherwise are found by their kind.
        let named = json!({"toolCall": {"kind": "execute"}, "options": [{"optionId": "allow-once", "kind": "allow_once"}, {"optionId": "reject-once", "kind": "reject_once"}]});
        assert_eq!(permission_answer(&named, true)["outcome"]["optionId"], "allow-once");
        assert_eq!(permission_answer(&named, false)["outcome"]["optionId"], "reject-once");
        assert_eq!(Policy::of(None), Policy::Deny);
    }

    #[test]
    fn errors_carry_their_details() {
        let error = json!({"code": -32603, "message": "Internal error", "data": {"details": "Invalid session identifier \"x\"."}});
        assert_eq!(rpc_error(&error), "Internal error: Invalid session identifier \"x\".");
        assert_eq!(rpc_error(&json!({"code": -32602, "message": "Session not found: x"})), "Session not found: x");
    }

    #[test]
    fn usage_is_summed_over_a_turn_and_renamed() {
        let mut total = None;
        add_usage(&mut total, &json!({"inputTokens": 120, "outputTokens": 7, "cachedReadTokens": 100}));
        add_usage(&mut total, &json!({"inputTokens": 200, "outputTokens": 9, "thoughtTokens": 4, "note": "x"}));
        assert_eq!(total, Some(json!({"inputTokens": 320, "outputTokens": 16, "cachedReadTokens": 100, "thoughtTokens": 4})));
        let names = [("inputTokens", "in"), ("outputTokens", "out"), ("cachedWriteTokens", "write")];
        assert_eq!(renamed_usage(total.as_ref().unwrap(), &names), Some(json!({"in": 320, "out": 16})));
        assert_eq!(renamed_usage(&json!({"totalTokens": 5}), &names), None);
    }

    fn params(update: Value) -> Value {
        json!({"sessionId": "s", "update": update})
    }

    #[test]
    fn updates_are_read_as_the_protocol_defines_them() {
        let answer = params(json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "The notes say hello."}}));
        assert_eq!(update(&answer), Update::Delta { thinking: false, text: "The notes say hello.".into() });
        let thought = params(json!({"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "Let me read."}}));
        assert_eq!(update(&thought), Update::Delta { thinking: true, text: "Let me read.".into() });
        let empty = params(json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": ""}}));
        assert_eq!(update(&empty), Update::Other);
        let done = params(json!({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed", "content": []}));
        assert_eq!(update(&done), Update::ToolDone);
        let failed = params(json!({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "failed"}));
        assert_eq!(update(&failed), Update::ToolDone);
        let started = params(json!({"sessionUpdate": "tool_call", "toolCallId": "t1", "status": "in_progress"}));
        assert_eq!(update(&started), Update::Other);
        assert_eq!(update(&params(json!({"sessionUpdate": "available_commands_update", "availableCommands": []}))), Update::Commands);
        assert_eq!(update(&params(json!({"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "hi"}}))), Update::Other);
    }
}
