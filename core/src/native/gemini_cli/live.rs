//! The live driver: `gemini --acp` (Agent Client Protocol: JSON-RPC 2.0, one message per line on
//! stdio, gemini-cli.md §6.2), one process per running session, kept alive across turns.
//!
//! `initialize`, then `session/new` (a new session: its id is the native id) or `session/load` (the
//! host's native continuation, or a replay the host wrote as a `--resume` log); `session/prompt`
//! per user message, whose response (`stopReason`, usage in `_meta.quota.token_count`) ends the
//! turn; `session/cancel` interrupts; `session/set_model` (the SDK's unstable method) switches the
//! model in place.
//!
//! **What is recorded comes from the session log**, `~/.gemini/tmp/<short>/chats/session-*.jsonl`
//! (under `GEMINI_CLI_HOME` when set), read with the import's loader (`import::file_messages`): the
//! ACP updates lose a tool call's input and output and every thought signature. At the end of a
//! turn each message of the log the driver has not sent before goes out as `Signal::Blocks`, exactly
//! as a file import gives it (the messages of a loaded session count as sent). During a turn the log
//! is read again once a tool call finished (every 100 ms until its result record is there: the CLI
//! writes it a moment after it reports the call done), and only the messages up to the last tool
//! result record go out (each earlier one is final by then; the CLI re-appends a model record once
//! its tools ran). Text and thought chunks stream as deltas (`events`).
//!
//! A turn the CLI drops from its log (an interrupt or a failed request rolls its history back, and
//! the user's message with it) still records the user's message: the driver sends it as blocks
//! itself, so that the canonical history keeps what was said.
//!
//! Permission modes (`spec.permission_mode`), set with `session/set_mode` after the session opens,
//! and the answer to each `session/request_permission` (the host has nobody to ask):
//!
//! | mode | ACP mode | a permission request |
//! |---|---|---|
//! | `bypassPermissions` | `yolo` (no requests) | `proceed_once` |
//! | `acceptEdits` | `autoEdit` | `proceed_once` for an edit, otherwise `cancel` |
//! | `plan` | `plan` (read-only) | `cancel` |
//! | `default`, none | `default` | `cancel`: what the CLI's policy judges safe (reading files, listing, safe shell commands) runs without asking; the rest is refused, as Claude Code's `-p` and Codex do |
//!
//! With `ask_permissions`, a request the mode does not allow is reported as [`Signal::Permission`]
//! instead, and answered with the offered `allow_once` or `reject_once` option.
//!
//! Quirks handled here:
//! - `session/load` replays the history as `session/update`s, partly after its response: updates
//!   before the first prompt are ignored, and `start` waits for the replay to go quiet.
//! - The same-minute quirk (§5.3): a `session/load` in the clock minute its log's name carries makes
//!   the CLI append a fresh start into that very file, and the load fails with `Invalid session
//!   identifier` (a retry cannot help: the message list is gone by then). A replay's log is already
//!   named in another minute (`resume.rs`); a log the CLI named itself (a process killed and resumed
//!   within a minute) is renamed to an earlier minute before the process starts. The CLI finds a
//!   session by the `sessionId` in the header, not by the name.
//! - ACP cannot load a session from elsewhere (no `--session-file`): a replay log written to
//!   sna-history's own directory (session cleanup on) is refused with what to change.
//! - Each process also writes a log of its own start-up session (only `<session_context>`); cleanup
//!   removes those when it is on.
//! - A prompt whose text starts with `/` or `$` is taken for one of the CLI's commands (`/memory`,
//!   …) when it names one: the turn ends at once, with nothing in the log and no model request.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::error::{Error, Result};
use crate::model::{Actor, Block, Kind, Runtime, Timestamp};
use crate::native::common::embed_block;
use crate::native::live::{await_reply, exited, last_lines, read_lines, spawn, write_line, Group, Image, Live, LiveSpec, Pending, PermissionRequest, Signal, Sink, TurnEnd, GRACE};

use super::events::{update, Update};
use super::import::file_messages;
use super::is_context;

/// How long a setup request (`initialize`, `session/new`, `session/load`) may take.
const SETUP_TIMEOUT: Duration = Duration::from_secs(90);

/// What a permission request gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Policy {
    Allow,
    Edits,
    Deny,
}

/// The ACP mode and the answer policy of a permission mode (the table in the module docs).
fn policy(mode: Option<&str>) -> (Option<&'static str>, Policy) {
    match mode {
        Some("bypassPermissions") => (Some("yolo"), Policy::Allow),
        Some("acceptEdits") => (Some("autoEdit"), Policy::Edits),
        Some("plan") => (Some("plan"), Policy::Deny),
        _ => (None, Policy::Deny),
    }
}

/// Whether the permission mode lets the tool of a `session/request_permission` run.
fn policy_allows(params: &Value, policy: Policy) -> bool {
    let edit = matches!(params["toolCall"]["kind"].as_str(), Some("edit" | "delete" | "move"));
    policy == Policy::Allow || (policy == Policy::Edits && edit)
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

/// The session log and which of its messages went out.
struct Log {
    /// `<home>/.gemini`.
    gemini: PathBuf,
    session: String,
    path: Option<PathBuf>,
    sent: HashSet<String>,
    /// The log's size when a read during a turn found nothing new: unchanged, it is not read again.
    idle_len: Option<u64>,
}

impl Log {
    /// The log's path, found once (see [`find_log`]).
    fn path(&mut self) -> Option<PathBuf> {
        if self.path.is_none() && !self.session.is_empty() {
            self.path = find_log(&self.gemini, &self.session);
        }
        self.path.clone()
    }

    /// Counts every message the log holds now as sent.
    fn mark_sent(&mut self) {
        if let Some(path) = self.path() {
            for (id, _) in file_messages(&path).unwrap_or_default() {
                self.sent.insert(id);
            }
        }
    }

    /// The blocks of the messages not sent yet: all of them (`all`), or those up to the last tool
    /// result record (during a turn: each earlier message is in its final version).
    fn take(&mut self, all: bool) -> Vec<Block> {
        let Some(path) = self.path() else { return Vec::new() };
        let len = std::fs::metadata(&path).map(|m| m.len()).ok();
        if !all && len.is_some() && len == self.idle_len {
            return Vec::new();
        }
        let messages = file_messages(&path).unwrap_or_default();
        let end = if all { messages.len() } else { messages.iter().rposition(|(_, blocks)| is_result_record(blocks)).map_or(0, |i| i + 1) };
        let mut out = Vec::new();
        for (id, blocks) in messages.into_iter().take(end) {
            if self.sent.insert(id) {
                out.extend(blocks);
            }
        }
        self.idle_len = if out.is_empty() { len } else { None };
        out
    }
}

/// True for the blocks of a user record holding tool results (the CLI writes it after the model
/// record that made the calls, which is complete then).
fn is_result_record(blocks: &[Block]) -> bool {
    blocks.iter().any(|b| b.kind == Kind::ToolResult) && blocks.iter().all(|b| b.actor != Actor::Assistant)
}

/// The session log of `session` under `<gemini>/tmp/*/chats/`: a `session-*-<id8>.jsonl` whose
/// header names the session; the largest when there are several (a `session/load` leaves a small
/// start-up file with the same id next to the real one).
fn find_log(gemini: &Path, session: &str) -> Option<PathBuf> {
    let suffix = format!("-{}.jsonl", session.chars().take(8).collect::<String>());
    let mut best: Option<(u64, PathBuf)> = None;
    for project in std::fs::read_dir(gemini.join("tmp")).ok()?.flatten() {
        let Ok(files) = std::fs::read_dir(project.path().join("chats")) else { continue };
        for file in files.flatten() {
            let path = file.path();
            let name = file.file_name().to_string_lossy().into_owned();
            if !name.starts_with("session-") || !name.ends_with(&suffix) || header_session(&path).as_deref() != Some(session) {
                continue;
            }
            let size = file.metadata().map(|m| m.len()).unwrap_or(0);
            if best.as_ref().is_none_or(|(s, _)| size > *s) {
                best = Some((size, path));
            }
        }
    }
    best.map(|(_, path)| path)
}

/// The `sessionId` of a log's first line.
fn header_session(path: &Path) -> Option<String> {
    use std::io::BufRead;
    let mut line = String::new();
    std::io::BufReader::new(std::fs::File::open(path).ok()?).read_line(&mut line).ok()?;
    serde_json::from_str::<Value>(&line).ok()?.get("sessionId")?.as_str().map(str::to_string)
}

/// The minute stamp of a log name (`2026-12-05T08-51`) for a time.
fn minute_stamp(time: Timestamp) -> String {
    time.to_rfc3339().chars().take(16).collect::<String>().replace(':', "-")
}

/// Renames a log the CLI named in the current minute (or later) to a free earlier minute, so that a
/// `session/load` now does not hit the same-minute quirk (module docs). Returns the path to use.
fn avoid_this_minute(path: PathBuf) -> Result<PathBuf> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("").to_string();
    let (Some(stamp), Some(tail)) = (name.get(8..24), name.get(24..)) else { return Ok(path) };
    let now = Timestamp::now().as_millis() / 60_000 * 60_000;
    if stamp < minute_stamp(Timestamp::from_millis(now)?).as_str() {
        return Ok(path);
    }
    for back in 1..=1440 {
        let target = path.with_file_name(format!("session-{}{tail}", minute_stamp(Timestamp::from_millis(now - back * 60_000)?)));
        if !target.exists() {
            std::fs::rename(&path, &target).map_err(|e| Error::Io { context: format!("cannot rename {} (Gemini CLI cannot load a session in the minute its log is named for)", path.display()), source: e })?;
            return Ok(target);
        }
    }
    Ok(path)
}

/// The running turn.
struct Turn {
    /// The id of its `session/prompt` request.
    request: u64,
    text: String,
    images: Vec<Image>,
    /// True once a user text block of the turn went out.
    user_sent: bool,
    /// A tool call finished since the log was last read.
    tool_done: bool,
}

/// What the driver and its reader thread share.
struct Shared {
    sink: Sink,
    pending: Pending,
    stdin: Mutex<Option<std::process::ChildStdin>>,
    log: Mutex<Log>,
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
    /// Sends the log's unsent messages; notes in the turn whether the user's message was among them.
    /// Sent under the log's lock, so that blocks read by two threads go out in the log's order.
    fn record(&self, all: bool) {
        let Ok(mut log) = self.log.lock() else { return };
        let blocks = log.take(all);
        if blocks.is_empty() {
            return;
        }
        let user = blocks.iter().any(|b| b.actor == Actor::User && b.kind == Kind::Text && !is_context(&b.content));
        let results = blocks.iter().any(|b| b.kind == Kind::ToolResult);
        if let Some(turn) = self.turn.lock().ok().as_mut().and_then(|t| t.as_mut()) {
            turn.user_sent |= user;
            if results {
                turn.tool_done = false;
            }
        }
        (self.sink)(Signal::Blocks(blocks));
    }

    /// While a finished tool's result is not in the log yet (the CLI writes it a moment after it
    /// reports the call done, and the next step may take long), the log is read every 100 ms.
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
                let reply = match method {
                    "session/request_permission" => {
                        let allow = policy_allows(params, self.policy);
                        if !allow && self.asked.is_some() {
                            return self.ask(id.clone(), params);
                        }
                        json!({"jsonrpc": "2.0", "id": id, "result": permission_answer(params, allow)})
                    }
                    // The client advertises no file system and no terminal.
                    _ => json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": format!("{method} is not supported by this client")}}),
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
        let update = update(params);
        if update == Update::Commands {
            self.commands.store(true, Ordering::SeqCst);
        }
        // Before the first prompt: a `session/load` replay, or start-up notices.
        let read = match self.turn.lock().ok().as_mut().and_then(|t| t.as_mut()) {
            None => return,
            Some(turn) => match &update {
                Update::ToolDone => {
                    turn.tool_done = true;
                    true
                }
                // The next step began: the finished tools' results are in the log by now.
                Update::Delta { .. } | Update::Other => turn.tool_done,
                Update::Commands => false,
            },
        };
        if read {
            self.record(false);
        }
        if let Update::Delta { thinking, text } = update {
            (self.sink)(Signal::Delta { thinking, text });
        }
    }

    /// The prompt's response: the turn's blocks from the log, then its end.
    fn end_turn(&self, reply: &Value) {
        self.record(true);
        let Some(turn) = self.turn.lock().ok().and_then(|mut t| t.take()) else { return };
        let result = &reply["result"];
        let interrupted = result["stopReason"] == "cancelled";
        let error = reply.get("error").map(|e| with_stderr(rpc_error(e), &self.group));
        if !turn.user_sent && (interrupted || error.is_some()) {
            // The CLI rolled its history back: keep what the user said anyway.
            let mut blocks: Vec<Block> = turn.images.iter().enumerate().map(|(i, image)| embed_block(Actor::User, &format!("image {}", i + 1), image.embed())).collect();
            blocks.push(Block::text(Actor::User, &turn.text));
            (self.sink)(Signal::Blocks(blocks));
        }
        let error = error.or_else(|| match result["stopReason"].as_str() {
            Some("max_tokens") => Some("the context window would overflow (stopReason max_tokens)".to_string()),
            Some("refusal") => Some("the model refused (stopReason refusal)".to_string()),
            _ => None,
        });
        let usage = result["_meta"]["quota"].get("token_count").cloned();
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

/// A JSON-RPC error's message with its details (`data.details`, where the CLI puts the reason).
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

/// Starts `gemini --acp` and opens the session (new, or loaded by `spec.resume`).
pub(super) fn start(spec: LiveSpec, sink: Sink) -> Result<Box<dyn Live>> {
    let mut spec = spec;
    // Without it the CLI re-spawns itself and the process started is not the one that works.
    spec.env.entry("GEMINI_CLI_NO_RELAUNCH".into()).or_insert_with(|| "true".into());
    let home = spec.env.get("GEMINI_CLI_HOME").or_else(|| spec.env.get("HOME")).map(PathBuf::from);
    let gemini = home.ok_or_else(|| Error::invalid("Gemini CLI needs HOME (or GEMINI_CLI_HOME) in its environment: its session log lives there"))?.join(".gemini");
    let mut log = Log { gemini: gemini.clone(), session: spec.resume.clone().unwrap_or_default(), path: None, sent: HashSet::new(), idle_len: None };
    if let Some(id) = &spec.resume {
        let Some(path) = log.path() else {
            let elsewhere = spec.resume_path.as_ref().filter(|p| p.exists() && !p.starts_with(&gemini));
            return Err(match elsewhere {
                Some(p) => Error::invalid(format!(
                    "Gemini CLI's ACP mode loads sessions only from {}: the replay log {} was written elsewhere because session cleanup is on; set general.sessionRetention.enabled to false in {}",
                    gemini.join("tmp").display(),
                    p.display(),
                    gemini.join("settings.json").display()
                )),
                None => Error::NotFound(format!("no Gemini CLI session log of {id} under {}", gemini.join("tmp").display())),
            });
        };
        log.path = Some(avoid_this_minute(path)?);
        log.mark_sent();
    }
    let mut args = vec!["--acp".to_string(), "--skip-trust".to_string()];
    if let Some(model) = &spec.model {
        args.extend(["-m".into(), model.clone()]);
    }
    args.extend(spec.args.iter().cloned());
    let (acp_mode, policy) = policy(spec.permission_mode.as_deref());
    let (group, pipes) = spawn(Runtime::GeminiCli, super::NPM_PACKAGE, &spec, &args)?;
    let shared = Arc::new(Shared {
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
    let reader = shared.clone();
    let ending = shared.clone();
    read_lines("sna-gemini-cli", stdout, group.clone(), move |line| reader.on_line(line), move |group| {
        ending.pending.fail_all();
        // What the log holds of a turn the process did not finish.
        if ending.turn.lock().is_ok_and(|t| t.is_some()) {
            ending.record(true);
        }
        (ending.sink)(exited(group));
    })?;
    let (poller, polled) = (shared.clone(), group.clone());
    std::thread::Builder::new()
        .name("sna-gemini-cli-log".into())
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
                driver.session = result["sessionId"].as_str().ok_or_else(|| Error::Runtime("Gemini CLI opened a session without an id".into()))?.to_string();
                if let Ok(mut log) = driver.shared.log.lock() {
                    log.session = driver.session.clone();
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
    fn request(&mut self, method: &str, params: Value, timeout: Duration) -> Result<Value> {
        self.next_id += 1;
        let id = self.next_id;
        let rx = self.shared.pending.expect(&id.to_string());
        write_line(&self.shared.stdin, &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        let reply = await_reply(&rx, timeout, Runtime::GeminiCli, &self.group, method)?;
        if let Some(error) = reply.get("error") {
            return Err(Error::Runtime(with_stderr(format!("Gemini CLI refused {method}: {}", rpc_error(error)), &self.group)));
        }
        Ok(reply["result"].clone())
    }

    /// After `session/load`: waits for the history replay to go quiet (at most 3 s), then counts
    /// what the load wrote into the log (the CLI rewrites the message list, adding `<id>_response`
    /// records of tool results) as sent.
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
            log.mark_sent();
        }
    }
}

impl Live for Driver {
    fn pid(&self) -> u32 {
        self.group.pid()
    }

    fn send(&mut self, text: &str, images: &[Image]) -> Result<()> {
        let mut prompt = vec![json!({"type": "text", "text": text})];
        prompt.extend(images.iter().map(|image| json!({"type": "image", "data": image.base64(), "mimeType": image.mime})));
        self.next_id += 1;
        let request = self.next_id;
        if let Ok(mut turn) = self.shared.turn.lock() {
            *turn = Some(Turn { request, text: text.to_string(), images: images.to_vec(), user_sent: false, tool_done: false });
        }
        let sent = write_line(&self.shared.stdin, &json!({"jsonrpc": "2.0", "id": request, "method": "session/prompt", "params": {"sessionId": self.session, "prompt": prompt}}));
        if sent.is_err() {
            if let Ok(mut turn) = self.shared.turn.lock() {
                turn.take();
            }
        }
        sent
    }

    fn interrupt(&mut self) -> Result<()> {
        if self.shared.turn.lock().map_or(true, |t| t.is_none()) {
            return Ok(());
        }
        write_line(&self.shared.stdin, &json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": self.session}}))
    }

    /// Gemini CLI compresses its chat only when `/compress` is typed into its interactive screen
    /// (or by itself near the model's limit): in `-p` and in ACP mode `/compress` is not a command,
    /// and ACP has no method for it. `UNSUPPORTED`, saying so.
    fn compact(&mut self, instructions: Option<&str>) -> Result<()> {
        let _ = instructions;
        Err(Error::Unsupported(
            "Gemini CLI cannot be asked to compact its conversation from a host: its compression (`/compress`) can only be started from its interactive screen (in `-p` and ACP mode `/compress` is not a command, and ACP has no method for it); Gemini CLI still compresses by itself when the chat nears the model's limit".into(),
        ))
    }

    fn answer_permission(&mut self, id: &str, allow: bool) -> Result<()> {
        let asked = self.shared.asked.as_ref().and_then(|asked| asked.lock().ok()?.remove(id));
        let Some((request, params)) = asked else { return Err(Error::NotFound(format!("no permission request {id:?} waits for an answer"))) };
        let answer = permission_answer(&params, allow);
        write_line(&self.shared.stdin, &json!({"jsonrpc": "2.0", "id": request, "result": answer}))
    }

    fn set_model(&mut self, model: &str) -> Result<()> {
        self.request("session/set_model", json!({"sessionId": self.session, "modelId": model}), Duration::from_secs(30)).map(|_| ())
    }

    fn stop(&mut self) {
        if let Ok(mut stdin) = self.shared.stdin.lock() {
            stdin.take();
        }
        self.group.stop(GRACE);
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
        let chosen = |params: &Value, mode: &str| permission_answer(params, policy_allows(params, policy(Some(mode)).1))["outcome"]["optionId"].as_str().map(str::to_string);
        assert_eq!(chosen(&shell, "bypassPermissions").as_deref(), Some("proceed_once"));
        assert_eq!(chosen(&shell, "acceptEdits").as_deref(), Some("cancel"));
        assert_eq!(chosen(&edit, "acceptEdits").as_deref(), Some("proceed_once"));
        assert_eq!(chosen(&edit, "default").as_deref(), Some("cancel"));
        assert_eq!(chosen(&edit, "plan").as_deref(), Some("cancel"));
        assert_eq!(permission_answer(&json!({"options": []}), true), json!({"outcome": {"outcome": "cancelled"}}));
        // What the mode refuses is what is asked when the host asks.
        assert!(!policy_allows(&shell, Policy::Deny) && !policy_allows(&shell, Policy::Edits) && policy_allows(&edit, Policy::Edits));
        assert_eq!(policy(Some("bypassPermissions")).0, Some("yolo"));
        assert_eq!(policy(None), (None, Policy::Deny));
    }

    #[test]
    fn errors_carry_their_details() {
        let error = json!({"code": -32603, "message": "Internal error", "data": {"details": "Invalid session identifier \"x\"."}});
        assert_eq!(rpc_error(&error), "Internal error: Invalid session identifier \"x\".");
        assert_eq!(rpc_error(&json!({"code": -32602, "message": "Session not found: x"})), "Session not found: x");
    }

    #[test]
    fn a_log_of_this_minute_is_renamed_to_an_earlier_one() {
        let dir = std::env::temp_dir().join(format!("sna-gemini-live-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // A name in this minute or later (a later one: the test does not race the clock).
        let path = dir.join("session-2999-01-01T00-00-abcdef12.jsonl");
        std::fs::write(&path, "{\"sessionId\":\"abcdef12-0000\",\"projectHash\":\"h\"}\n").unwrap();
        let moved = avoid_this_minute(path.clone()).unwrap();
        assert!(!path.exists() && moved.exists() && moved != path);
        let name = moved.file_name().unwrap().to_str().unwrap().to_string();
        assert!(name[8..24] < *minute_stamp(Timestamp::now()) && name.ends_with("-abcdef12.jsonl"), "{name}");
        // An older name stays.
        assert_eq!(avoid_this_minute(moved.clone()).unwrap(), moved);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
