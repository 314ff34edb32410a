//! `Host`, `Agent` and what they return: thin wrappers over `sna_history::host` that convert
//! arguments and results and release the GIL while a runtime works.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use sna_history as core;
use sna_history::host as h;

use crate::convert::{to_py, type_name};
use crate::errors::{detached, invalid, IntoPy};
use crate::store::{PySession, PyStore};
use crate::types::PyBlock;

fn runtime(name: &str) -> PyResult<core::Runtime> {
    name.parse::<core::Runtime>().py()
}

fn seconds(timeout: Option<f64>, what: &str) -> PyResult<Option<Duration>> {
    match timeout {
        None => Ok(None),
        Some(t) if t.is_finite() && t >= 0.0 => Ok(Some(Duration::from_secs_f64(t))),
        Some(t) => Err(invalid(what, format!("a timeout is a number of seconds >= 0, not {t}"))),
    }
}

/// `images`: a list of `{"data": bytes, "mime": "image/png"}`.
fn images_arg(images: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<h::Image>> {
    let Some(images) = images.filter(|i| !i.is_none()) else { return Ok(Vec::new()) };
    let mut out = Vec::new();
    for (i, item) in images.try_iter()?.enumerate() {
        let item = item?;
        let field = format!("images[{i}]");
        let dict = item.cast::<PyDict>().map_err(|_| invalid(&field, format!("an image is a dict {{\"data\": bytes, \"mime\": str}}, not {}", type_name(&item))))?;
        let data = dict
            .get_item("data")?
            .ok_or_else(|| invalid(format!("{field}.data"), "an image needs its bytes in \"data\""))?;
        let data = data.cast::<PyBytes>().map_err(|_| invalid(format!("{field}.data"), format!("expected bytes, not {}", type_name(&data))))?.as_bytes().to_vec();
        let mime = match dict.get_item("mime")? {
            Some(mime) => mime.extract::<String>().map_err(|_| invalid(format!("{field}.mime"), "expected a str such as \"image/png\""))?,
            None => return Err(invalid(format!("{field}.mime"), "an image needs its media type in \"mime\"")),
        };
        out.push(h::Image { mime, data });
    }
    Ok(out)
}

/// Runs Claude Code, Codex, OpenCode, Gemini CLI, Pi, Qwen Code and Copilot CLI for the sessions of a store, one
/// long-lived process per running session; records every event as it happens (see the README's
/// "Run agents").
///
/// Args:
///     store: The store to record into.
///     bins: `{runtime: path}` of the runtime executables (default: `claude`, `codex`,
///         `opencode`, `gemini`, `pi` on PATH).
///     env: Variables added to the environment the runtime processes inherit.
///     home: The HOME of the runtime processes (where their own files go).
///
/// A `Host` is a context manager; leaving the `with` block (or `close()`) ends every process it
/// started. Processes also end when Python exits.
#[pyclass(frozen, module = "sna_history", name = "Host")]
pub struct PyHost {
    inner: h::Host,
}

#[pymethods]
impl PyHost {
    #[new]
    #[pyo3(signature = (store, bins = None, env = None, home = None))]
    fn py_new(store: &PyStore, bins: Option<BTreeMap<String, PathBuf>>, env: Option<BTreeMap<String, String>>, home: Option<PathBuf>) -> PyResult<Self> {
        let mut options = h::HostOptions { env: env.unwrap_or_default(), home, ..Default::default() };
        for (name, path) in bins.unwrap_or_default() {
            options.bins.insert(runtime(&name)?, path);
        }
        Ok(PyHost { inner: h::Host::new(store.inner.clone(), options) })
    }

    /// Starts `runtime` for the session `session_id` (created when missing) and returns its agent.
    /// A session with history is continued: natively when the runtime's thread holds it all, else
    /// by replay.
    ///
    /// Raises:
    ///     ConflictError: The session's process is already running.
    ///     NotFoundError: The runtime's executable is missing (the message names its npm package).
    /// With `ask_permissions`, each tool the runtime wants permission for waits: the agent publishes
    /// a `permission_needed` event and `agent.answer_permission(id, allow)` decides.
    /// `context_window` (tokens): every replay the agent makes into its runtime (this start, a
    /// resume, a switch) fits it, less a reserve for the runtime's own prompt and answer: the
    /// oldest whole turns are folded into one summary (`Turn.replay["folded"]`). Default: the
    /// model's window from the model table, when the model is known.
    #[pyo3(signature = (session_id, runtime, model = None, cwd = None, home = None, permission_mode = None, args = None, env = None, ask_permissions = false, context_window = None))]
    #[allow(clippy::too_many_arguments)]
    fn start(
        &self,
        py: Python<'_>,
        session_id: &str,
        runtime: &str,
        model: Option<String>,
        cwd: Option<PathBuf>,
        home: Option<PathBuf>,
        permission_mode: Option<String>,
        args: Option<Vec<String>>,
        env: Option<BTreeMap<String, String>>,
        ask_permissions: bool,
        context_window: Option<u64>,
    ) -> PyResult<PyAgent> {
        let mut options = h::StartOptions::new(self::runtime(runtime)?);
        options.ask_permissions = ask_permissions;
        options.context_window = context_window;
        options.model = model;
        options.cwd = cwd;
        options.home = home;
        options.permission_mode = permission_mode;
        options.args = args.unwrap_or_default();
        options.env = env.unwrap_or_default();
        let agent = detached(py, || self.inner.start(session_id, options))?;
        Ok(PyAgent { inner: agent })
    }

    /// Brings a stored session back in a fresh process (natively when the runtime's thread holds
    /// it all, else by replay).
    ///
    /// `context_window`: as for `start` (default: as before).
    ///
    /// Raises:
    ///     NotFoundError: No such session.
    ///     ConflictError: Its process is alive.
    #[pyo3(signature = (session_id, runtime = None, model = None, context_window = None))]
    fn resume(&self, py: Python<'_>, session_id: &str, runtime: Option<&str>, model: Option<String>, context_window: Option<u64>) -> PyResult<PyAgent> {
        let options = h::ResumeOptions { runtime: runtime.map(self::runtime).transpose()?, model, context_window, ..Default::default() };
        let agent = detached(py, || self.inner.resume(session_id, options))?;
        Ok(PyAgent { inner: agent })
    }

    /// The agent of a session, or `None`.
    fn agent(&self, session_id: &str) -> Option<PyAgent> {
        self.inner.agent(session_id).map(|inner| PyAgent { inner })
    }

    /// Every agent of this host.
    fn agents(&self) -> Vec<PyAgent> {
        self.inner.agents().into_iter().map(|inner| PyAgent { inner }).collect()
    }

    /// Ends every process the host started.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        detached(py, || {
            self.inner.close();
            Ok(())
        })
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }
}

/// A session's runtime process, kept alive between turns.
#[pyclass(frozen, module = "sna_history", name = "Agent")]
pub struct PyAgent {
    inner: h::Agent,
}

#[pymethods]
impl PyAgent {
    /// The session's id.
    #[getter]
    fn session_id(&self) -> String {
        self.inner.session_id().to_string()
    }

    /// The session the agent records into.
    #[getter]
    fn session(&self) -> PySession {
        PySession { inner: self.inner.session().clone() }
    }

    /// Sends a user message and waits for the turn to end. Messages sent while a turn runs wait
    /// their turn. A process that is gone is started again first.
    ///
    /// Args:
    ///     text: The message.
    ///     images: `[{"data": bytes, "mime": "image/png"}]`, stored as embeds of the user block.
    ///     timeout: Seconds; when they run out the process is ended and `TimedOutError` raised
    ///         (the next send resumes).
    ///
    /// Raises:
    ///     RuntimeFailedError: The process exited during the turn, or the runtime reported the turn
    ///         failed (what completed stays recorded; the next send resumes).
    ///     TimedOutError: The time ran out.
    #[pyo3(signature = (text, images = None, timeout = None))]
    fn send(&self, py: Python<'_>, text: &str, images: Option<&Bound<'_, PyAny>>, timeout: Option<f64>) -> PyResult<PyTurn> {
        let images = images_arg(images)?;
        let timeout = seconds(timeout, "timeout")?;
        let turn = detached(py, || self.inner.send_within(text, &images, timeout))?;
        Ok(PyTurn { inner: turn })
    }

    /// Asks the runtime to compact its conversation with its own mechanism (Claude Code's
    /// `/compact`, Codex's `thread/compact/start`, OpenCode's summarize, Pi's `compact`) and waits
    /// for it like a turn (queued behind the messages sent before it). What the runtime records of
    /// it is stored, so that it is in `session.compactions()` and a later switch or replay starts
    /// from its summary; the agent publishes a `compacted` event `{"compaction": {...}}`.
    ///
    /// Args:
    ///     instructions: What the summary should keep (Claude Code, Pi); Codex and OpenCode take
    ///         none and ignore them.
    ///     timeout: Seconds, as for `send`.
    ///
    /// Raises:
    ///     UnsupportedError: The runtime cannot compact on request (Gemini CLI: only from its
    ///         interactive screen).
    ///     RuntimeFailedError: The runtime failed, or ended without recording a compaction.
    ///     TimedOutError: The time ran out.
    #[pyo3(signature = (instructions = None, timeout = None))]
    fn compact(&self, py: Python<'_>, instructions: Option<String>, timeout: Option<f64>) -> PyResult<PyTurn> {
        let timeout = seconds(timeout, "timeout")?;
        let turn = detached(py, || self.inner.compact_within(instructions.as_deref(), timeout))?;
        Ok(PyTurn { inner: turn })
    }

    /// The events after `since`, oldest first. Without `timeout`, those there are now; with it,
    /// the iteration goes on as events come and ends once `timeout` seconds pass without one.
    #[pyo3(signature = (since = 0, timeout = None))]
    fn events(&self, since: u64, timeout: Option<f64>) -> PyResult<PyEventIter> {
        Ok(PyEventIter { agent: self.inner.clone(), timeout: seconds(timeout, "timeout")?, state: std::sync::Mutex::new((since, std::collections::VecDeque::new())) })
    }

    /// Stops the running turn; the process keeps running.
    fn interrupt(&self, py: Python<'_>) -> PyResult<()> {
        detached(py, || self.inner.interrupt())
    }

    /// Answers a `permission_needed` event: the tool runs (`allow`) or is refused; the turn goes on.
    ///
    /// Raises:
    ///     NotFoundError: No request of that id waits (answered already, or its process ended).
    fn answer_permission(&self, py: Python<'_>, id: &str, allow: bool) -> PyResult<()> {
        detached(py, || self.inner.answer_permission(id, allow))
    }

    /// Makes the next turns run on `model`.
    fn set_model(&self, py: Python<'_>, model: &str) -> PyResult<()> {
        detached(py, || self.inner.set_model(model))
    }

    /// Goes on in another runtime (or model): the session is replayed into a new process.
    #[pyo3(signature = (runtime, model = None))]
    fn switch(&self, py: Python<'_>, runtime: &str, model: Option<String>) -> PyResult<()> {
        let runtime = self::runtime(runtime)?;
        detached(py, || self.inner.switch(runtime, model))
    }

    /// Ends the process (SIGTERM, then SIGKILL); the next send starts it again.
    fn kill(&self, py: Python<'_>) -> PyResult<()> {
        detached(py, || self.inner.kill())
    }

    /// What the agent is doing.
    fn status(&self) -> PyAgentStatus {
        PyAgentStatus { inner: self.inner.status() }
    }

    fn __repr__(&self) -> String {
        let status = self.inner.status();
        format!("Agent(session_id={:?}, runtime={:?}, alive={})", status.session_id, status.runtime.as_str(), status.alive)
    }
}

/// Iterates an agent's events (see `Agent.events`).
#[pyclass(module = "sna_history", name = "AgentEventIterator")]
pub struct PyEventIter {
    agent: h::Agent,
    timeout: Option<Duration>,
    /// The cursor of the last event yielded, and events fetched but not yet yielded.
    state: std::sync::Mutex<(u64, std::collections::VecDeque<h::AgentEvent>)>,
}

#[pymethods]
impl PyEventIter {
    fn __iter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<PyAgentEvent>> {
        let lock = || self.state.lock().unwrap_or_else(|p| p.into_inner());
        let (since, empty) = {
            let state = lock();
            (state.0, state.1.is_empty())
        };
        if empty {
            // Waited for without the lock (nor the GIL), so that another thread is never stuck on it.
            let agent = self.agent.clone();
            let found = match self.timeout {
                None => agent.events(since),
                Some(timeout) => detached(py, move || Ok(agent.wait_events(since, timeout)))?,
            };
            let mut state = lock();
            let last = state.1.back().map_or(state.0, |e| e.cursor);
            state.1.extend(found.into_iter().filter(|e| e.cursor > last));
        }
        let mut state = lock();
        let Some(event) = state.1.pop_front() else { return Ok(None) };
        state.0 = event.cursor;
        Ok(Some(PyAgentEvent { inner: event }))
    }
}

/// Something that happened to an agent: `.cursor`, `.type`, `.data`, `.timestamp` (ms).
#[pyclass(frozen, module = "sna_history", name = "AgentEvent")]
pub struct PyAgentEvent {
    inner: h::AgentEvent,
}

#[pymethods]
impl PyAgentEvent {
    /// The event's position (increasing).
    #[getter]
    fn cursor(&self) -> u64 {
        self.inner.cursor
    }
    /// `started`, `resumed`, `switched`, `user_message`, `assistant`, `thinking`, `tool_use`,
    /// `tool_result`, `status`, `error`, `assistant_delta`, `thinking_delta`, `complete`,
    /// `interrupted`, `model_changed`, `permission_needed`, `permission_answered`, `compacted`,
    /// `exited`, `killed`.
    #[getter(r#type)]
    fn kind(&self) -> &str {
        &self.inner.kind
    }
    /// What goes with it (`{"block": {...}}` for a recorded block, `{"text": ...}` for a delta,
    /// `{"runtime", "model", "pid", "via", "replay"}` for a start, resume or switch, where `replay`
    /// is what shaped a replay (as `Turn.replay`) or `None`, `{"compaction": {...}}` for
    /// `compacted`).
    #[getter]
    fn data<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.inner.data)
    }
    /// When it happened, in milliseconds since the epoch.
    #[getter]
    fn timestamp(&self) -> i64 {
        self.inner.timestamp.as_millis()
    }
    fn __repr__(&self) -> String {
        format!("AgentEvent(cursor={}, type={:?})", self.inner.cursor, self.inner.kind)
    }
}

/// One turn: `.blocks` stored during it, `.text` the final answer, `.usage`, `.resumed_via`
/// (`None`, `"native"` or `"replay"`), `.replay`, `.interrupted`.
#[pyclass(frozen, module = "sna_history", name = "Turn")]
pub struct PyTurn {
    inner: h::Turn,
}

#[pymethods]
impl PyTurn {
    /// The blocks stored during the turn.
    #[getter]
    fn blocks(&self) -> Vec<PyBlock> {
        self.inner.blocks.iter().cloned().map(PyBlock::new).collect()
    }
    /// The last assistant text of the turn.
    #[getter]
    fn text(&self) -> &str {
        &self.inner.text
    }
    /// The usage the runtime reported, or `None`.
    #[getter]
    fn usage<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.inner.usage.as_ref().map(|u| to_py(py, u)).transpose()
    }
    /// How the process was started for this turn: `None`, `"native"` or `"replay"`.
    #[getter]
    fn resumed_via(&self) -> Option<&str> {
        self.inner.resumed_via.as_deref()
    }
    /// What shaped the replay the turn's process was started from (`resumed_via` `"replay"`):
    /// `{"from_seq": int, "compaction_seq": int | None, "folded": [first_seq, last_seq] | None}`,
    /// or `None` when the process was not started from a replay.
    #[getter]
    fn replay<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.inner.replay.as_ref().map(|r| to_py(py, &serde_json::to_value(r).unwrap_or_default())).transpose()
    }
    /// True when the turn was interrupted.
    #[getter]
    fn interrupted(&self) -> bool {
        self.inner.interrupted
    }
    fn __repr__(&self) -> String {
        format!("Turn(blocks={}, text={:?}, resumed_via={:?})", self.inner.blocks.len(), self.inner.text, self.inner.resumed_via)
    }
}

/// What an agent is doing: `.alive`, `.busy`, `.pid`, `.runtime`, `.model`, `.native_id`,
/// `.spawns`, `.session_id`, `.cursor`.
#[pyclass(frozen, module = "sna_history", name = "AgentStatus")]
pub struct PyAgentStatus {
    inner: h::AgentStatus,
}

#[pymethods]
impl PyAgentStatus {
    #[getter]
    fn session_id(&self) -> &str {
        &self.inner.session_id
    }
    #[getter]
    fn alive(&self) -> bool {
        self.inner.alive
    }
    #[getter]
    fn busy(&self) -> bool {
        self.inner.busy
    }
    #[getter]
    fn pid(&self) -> Option<u32> {
        self.inner.pid
    }
    #[getter]
    fn runtime(&self) -> &str {
        self.inner.runtime.as_str()
    }
    #[getter]
    fn model(&self) -> Option<&str> {
        self.inner.model.as_deref()
    }
    #[getter]
    fn native_id(&self) -> Option<&str> {
        self.inner.native_id.as_deref()
    }
    #[getter]
    fn spawns(&self) -> u32 {
        self.inner.spawns
    }
    #[getter]
    fn cursor(&self) -> u64 {
        self.inner.cursor
    }
    fn __repr__(&self) -> String {
        format!("AgentStatus(runtime={:?}, alive={}, busy={}, pid={:?}, spawns={})", self.inner.runtime.as_str(), self.inner.alive, self.inner.busy, self.inner.pid, self.inner.spawns)
    }
}
