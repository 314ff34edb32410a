//! `Host` and `Agent`: thin wrappers over `sna_history::host`. Every call that waits for a runtime
//! runs on a worker thread and returns a Promise, so nothing blocks the event loop.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use napi::bindgen_prelude::{AsyncGenerator, AsyncTask, Buffer};
use napi::{Env, Task};
use napi_derive::napi;
use sna_history as core;
use sna_history::host as h;

use crate::convert::{camel, Js};
use crate::error::{from_core, guard, invalid, CoreResult, Result};
use crate::store::{Session, Store};

fn runtime(name: &str) -> Result<core::Runtime> {
    name.parse::<core::Runtime>().js()
}

fn millis(value: Option<f64>, what: &str) -> Result<Option<Duration>> {
    match value {
        None => Ok(None),
        Some(ms) if ms.is_finite() && ms >= 0.0 => Ok(Some(Duration::from_secs_f64(ms / 1000.0))),
        Some(ms) => Err(invalid(format!("invalid argument {what:?}: a timeout is milliseconds >= 0, not {ms}"))),
    }
}

/// The Promise of a call to core on a worker thread; a core error rejects it with the same
/// `Error` (and `code`) a synchronous call throws.
pub struct Call<T: Send + 'static, J> {
    work: Option<Box<dyn FnOnce() -> core::Result<T> + Send>>,
    convert: fn(T) -> Result<J>,
    /// What a JavaScript function the call awaited threw (a summarizer), when it threw: the
    /// `cause` of the `Error` the Promise rejects with.
    thrown: Option<crate::summarizer::Thrown>,
}

impl<T: Send + 'static, J: napi::bindgen_prelude::ToNapiValue + napi::bindgen_prelude::TypeName> Task for Call<T, J> {
    type Output = core::Result<T>;
    type JsValue = J;

    fn compute(&mut self) -> napi::Result<Self::Output> {
        let work = self.work.take().ok_or_else(|| napi::Error::from_reason("the call ran twice"))?;
        Ok(std::panic::catch_unwind(std::panic::AssertUnwindSafe(work))
            .unwrap_or_else(|_| Err(core::Error::Internal("panic in the Node binding".into()))))
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> napi::Result<J> {
        match output.map_err(from_core).and_then(self.convert) {
            Ok(js) => Ok(js),
            Err(error) => {
                let rejection = crate::error::js_error(&env, error);
                let thrown = self.thrown.take().and_then(|thrown| thrown.lock().unwrap_or_else(|p| p.into_inner()).take());
                if let Some(thrown) = thrown {
                    crate::error::set_cause(&env, rejection, thrown);
                }
                Err(napi::Error::from_unknown_without_coercion(rejection))
            }
        }
    }
}

/// A call that resolves to nothing.
pub type UnitCall = Call<(), Js>;
/// A call that resolves to a turn.
pub type TurnCall = Call<h::Turn, Js>;
/// A call that resolves to an agent.
pub type AgentCall = Call<h::Agent, Agent>;

fn call<T: Send + 'static, J>(work: impl FnOnce() -> core::Result<T> + Send + 'static, convert: fn(T) -> Result<J>) -> AsyncTask<Call<T, J>>
where
    J: napi::bindgen_prelude::ToNapiValue + napi::bindgen_prelude::TypeName,
{
    AsyncTask::new(Call { work: Some(Box::new(work)), convert, thrown: None })
}

/// [`call`] of a conversion that may await a JavaScript summarizer: what it throws (kept in
/// `thrown`) becomes the `cause` of the rejection.
pub(crate) fn awaiting<T: Send + 'static, J>(
    work: impl FnOnce() -> core::Result<T> + Send + 'static,
    convert: fn(T) -> Result<J>,
    thrown: crate::summarizer::Thrown,
) -> AsyncTask<Call<T, J>>
where
    J: napi::bindgen_prelude::ToNapiValue + napi::bindgen_prelude::TypeName,
{
    AsyncTask::new(Call { work: Some(Box::new(work)), convert, thrown: Some(thrown) })
}

/// A context window in tokens: a whole number above 0.
fn window(value: Option<f64>) -> Result<Option<u64>> {
    match value {
        None => Ok(None),
        Some(n) if n.is_finite() && n >= 1.0 && n.fract() == 0.0 && n <= u64::MAX as f64 => Ok(Some(n as u64)),
        Some(n) => Err(from_core(core::Error::invalid_field("contextWindow", format!("a context window is a whole number of tokens above 0, not {n}")))),
    }
}

fn nothing(_: ()) -> Result<Js> {
    Ok(Js::native(serde_json::Value::Null))
}

/// How `new Host(store, options)` runs the runtimes.
#[napi(object)]
pub struct HostOptions {
    /// `{runtime: path}` of the runtime executables (default: `claude`, `codex`, `opencode`, `gemini`, `pi` on PATH).
    pub bins: Option<HashMap<String, String>>,
    /// Variables added to the environment the runtime processes inherit.
    pub env: Option<HashMap<String, String>>,
    /// The HOME of the runtime processes.
    pub home: Option<String>,
}

/// How `host.start` runs a session.
#[napi(object)]
pub struct StartOptions {
    pub runtime: String,
    pub model: Option<String>,
    pub cwd: Option<String>,
    pub home: Option<String>,
    pub permission_mode: Option<String>,
    pub args: Option<Vec<String>>,
    pub env: Option<HashMap<String, String>>,
    /// Each tool the runtime wants permission for waits: a `permission_needed` event, answered by
    /// `agent.answerPermission(id, allow)`.
    pub ask_permissions: Option<bool>,
    /// Tokens: every replay the agent makes into its runtime (this start, a resume, a switch) fits
    /// this window less a reserve for the runtime's own prompt and answer, its oldest whole turns
    /// folded into one summary (`turn.replay.folded`). Default: the model's window from the model
    /// table, when the model is known.
    pub context_window: Option<f64>,
}

/// How `host.resume` brings a session back.
#[napi(object)]
pub struct ResumeOptions {
    pub runtime: Option<String>,
    pub model: Option<String>,
    /// As for `host.start` (default: as before).
    pub context_window: Option<f64>,
}

/// An image of a user message.
#[napi(object)]
pub struct ImageInput {
    pub data: Buffer,
    /// Its media type, such as `image/png`.
    pub mime: String,
}

/// How `agent.send` sends.
#[napi(object)]
pub struct SendOptions {
    pub images: Option<Vec<ImageInput>>,
    /// Milliseconds; when they run out the process is ended and the Promise rejects with `TIMEOUT`.
    pub timeout: Option<f64>,
}

/// How `agent.compact` waits.
#[napi(object)]
pub struct CompactOptions {
    /// Milliseconds; when they run out the process is ended and the Promise rejects with `TIMEOUT`.
    pub timeout: Option<f64>,
}

/// Which events `agent.events` yields.
#[napi(object)]
pub struct EventsOptions {
    /// Only events after this cursor.
    pub since: Option<f64>,
    /// Milliseconds: without it, the events there are now; with it, the iteration goes on as
    /// events come and ends once this long passes without one.
    pub timeout: Option<f64>,
}

/// Runs Claude Code, Codex, OpenCode, Gemini CLI, Pi, Qwen Code and Copilot CLI for the sessions of a store, one
/// long-lived process per running session; records every event as it happens. `close()` ends
/// every process it started; so does the end of the Node process.
#[napi]
pub struct Host {
    inner: h::Host,
}

#[napi]
impl Host {
    #[napi(constructor)]
    pub fn new(env: Env, store: &Store, options: Option<HostOptions>) -> Result<Self> {
        guard(&env, || {
            let mut opts = h::HostOptions::default();
            if let Some(options) = options {
                for (name, path) in options.bins.unwrap_or_default() {
                    opts.bins.insert(runtime(&name)?, PathBuf::from(path));
                }
                opts.env = options.env.unwrap_or_default().into_iter().collect();
                opts.home = options.home.map(PathBuf::from);
            }
            Ok(Host { inner: h::Host::new(store.core().clone(), opts) })
        })
    }

    /// Starts a runtime for the session (created when missing); resolves to its agent.
    #[napi(ts_return_type = "Promise<Agent>")]
    pub fn start(&self, env: Env, session_id: String, options: StartOptions) -> Result<AsyncTask<AgentCall>> {
        guard(&env, || {
            let mut opts = h::StartOptions::new(runtime(&options.runtime)?);
            opts.model = options.model;
            opts.cwd = options.cwd.map(PathBuf::from);
            opts.home = options.home.map(PathBuf::from);
            opts.permission_mode = options.permission_mode;
            opts.args = options.args.unwrap_or_default();
            opts.env = options.env.unwrap_or_default().into_iter().collect();
            opts.ask_permissions = options.ask_permissions.unwrap_or(false);
            opts.context_window = window(options.context_window)?;
            let host = self.inner.clone();
            Ok(call(move || host.start(&session_id, opts), agent_js))
        })
    }

    /// Brings a stored session back in a fresh process; resolves to its agent.
    #[napi(ts_return_type = "Promise<Agent>")]
    pub fn resume(&self, env: Env, session_id: String, options: Option<ResumeOptions>) -> Result<AsyncTask<AgentCall>> {
        guard(&env, || {
            let options = options.unwrap_or(ResumeOptions { runtime: None, model: None, context_window: None });
            let opts = h::ResumeOptions {
                runtime: options.runtime.as_deref().map(runtime).transpose()?,
                model: options.model,
                context_window: window(options.context_window)?,
                ..Default::default()
            };
            let host = self.inner.clone();
            Ok(call(move || host.resume(&session_id, opts), agent_js))
        })
    }

    /// The agent of a session, or `null`.
    #[napi]
    pub fn agent(&self, session_id: String) -> Option<Agent> {
        self.inner.agent(&session_id).map(|inner| Agent { inner })
    }

    /// Every agent of this host.
    #[napi]
    pub fn agents(&self) -> Vec<Agent> {
        self.inner.agents().into_iter().map(|inner| Agent { inner }).collect()
    }

    /// Ends every process the host started; resolves when they are gone.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn close(&self) -> AsyncTask<UnitCall> {
        let host = self.inner.clone();
        call(
            move || {
                host.close();
                Ok(())
            },
            nothing,
        )
    }
}

fn agent_js(agent: h::Agent) -> Result<Agent> {
    Ok(Agent { inner: agent })
}

/// A session's runtime process, kept alive between turns.
#[napi]
pub struct Agent {
    inner: h::Agent,
}

#[napi]
impl Agent {
    /// The session's id.
    #[napi(getter)]
    pub fn session_id(&self) -> String {
        self.inner.session_id().to_string()
    }

    /// The session the agent records into.
    #[napi(getter)]
    pub fn session(&self) -> Session {
        Session::from_core(self.inner.session().clone())
    }

    /// Sends a user message; resolves with the turn (`{blocks, text, usage, resumedVia, replay,
    /// interrupted}`) when it ends. Rejects with `RUNTIME` when the process exits during the turn
    /// (what completed stays recorded) and `TIMEOUT` when `timeout` runs out.
    #[napi(ts_return_type = "Promise<Turn>")]
    pub fn send(&self, env: Env, text: String, options: Option<SendOptions>) -> Result<AsyncTask<TurnCall>> {
        guard(&env, || {
            let (images, timeout) = match options {
                Some(options) => (options.images.unwrap_or_default(), millis(options.timeout, "timeout")?),
                None => (Vec::new(), None),
            };
            let images: Vec<h::Image> = images.into_iter().map(|i| h::Image { mime: i.mime, data: i.data.to_vec() }).collect();
            let agent = self.inner.clone();
            Ok(call(move || agent.send_within(&text, &images, timeout), turn_js))
        })
    }

    /// Asks the runtime to compact its conversation with its own mechanism (Claude Code's
    /// `/compact`, Codex's `thread/compact/start`, OpenCode's summarize, Pi's `compact`); resolves
    /// with the turn when it is done, queued behind the messages sent before it. The compaction is
    /// then in `session.compactions()`, a later switch or replay starts from its summary, and the
    /// agent publishes a `compacted` event `{compaction}`. `instructions` go to the summary where
    /// the runtime takes them (Claude Code, Pi; Codex and OpenCode ignore them). Rejects with
    /// `UNSUPPORTED` for Gemini CLI (its compression is reached only from its interactive screen),
    /// `RUNTIME` when the runtime fails or records no compaction, `TIMEOUT` when `timeout` runs out.
    #[napi(ts_args_type = "instructions?: string | null, options?: CompactOptions | null", ts_return_type = "Promise<Turn>")]
    pub fn compact(&self, env: Env, instructions: Option<String>, options: Option<CompactOptions>) -> Result<AsyncTask<TurnCall>> {
        guard(&env, || {
            let timeout = millis(options.and_then(|o| o.timeout), "timeout")?;
            let agent = self.inner.clone();
            Ok(call(move || agent.compact_within(instructions.as_deref(), timeout), turn_js))
        })
    }

    /// The agent's events, oldest first: `for await (const ev of agent.events({ since, timeout }))`.
    #[napi(ts_return_type = "AgentEvents")]
    pub fn events(&self, env: Env, options: Option<EventsOptions>) -> Result<AgentEvents> {
        guard(&env, || {
            let (since, timeout) = match options {
                Some(options) => (options.since.unwrap_or(0.0).max(0.0) as u64, millis(options.timeout, "timeout")?),
                None => (0, None),
            };
            Ok(AgentEvents { agent: self.inner.clone(), timeout, state: std::sync::Arc::new(std::sync::Mutex::new((since, Default::default()))) })
        })
    }

    /// Stops the running turn; the process keeps running.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn interrupt(&self) -> AsyncTask<UnitCall> {
        let agent = self.inner.clone();
        call(move || agent.interrupt(), nothing)
    }

    /// Answers a `permission_needed` event: the tool runs (`allow`) or is refused; rejects with
    /// NOT_FOUND when no request of that id waits.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn answer_permission(&self, id: String, allow: bool) -> AsyncTask<UnitCall> {
        let agent = self.inner.clone();
        call(move || agent.answer_permission(&id, allow), nothing)
    }

    /// Makes the next turns run on `model`.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn set_model(&self, model: String) -> AsyncTask<UnitCall> {
        let agent = self.inner.clone();
        call(move || agent.set_model(&model), nothing)
    }

    /// Goes on in another runtime (or model): the session is replayed into a new process.
    #[napi(ts_args_type = "runtime: Runtime, model?: string | null", ts_return_type = "Promise<void>")]
    pub fn switch(&self, env: Env, runtime_name: String, model: Option<String>) -> Result<AsyncTask<UnitCall>> {
        guard(&env, || {
            let target = runtime(&runtime_name)?;
            let agent = self.inner.clone();
            Ok(call(move || agent.switch(target, model), nothing))
        })
    }

    /// Ends the process; the next send starts it again.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn kill(&self) -> AsyncTask<UnitCall> {
        let agent = self.inner.clone();
        call(move || agent.kill(), nothing)
    }

    /// What the agent is doing: `{sessionId, alive, busy, pid, runtime, model, nativeId, spawns, cursor}`.
    #[napi(ts_return_type = "AgentStatus")]
    pub fn status(&self, env: Env) -> Result<Js> {
        guard(&env, || camel(&self.inner.status()))
    }
}

fn turn_js(turn: h::Turn) -> Result<Js> {
    camel(&serde_json::json!({
        "blocks": turn.blocks,
        "text": turn.text,
        "usage": turn.usage,
        "resumed_via": turn.resumed_via,
        "replay": turn.replay,
        "interrupted": turn.interrupted,
    }))
}

/// An agent's events as an async iterator.
#[napi(async_iterator)]
pub struct AgentEvents {
    agent: h::Agent,
    timeout: Option<Duration>,
    /// The cursor of the last event yielded, and events fetched but not yet yielded.
    state: std::sync::Arc<std::sync::Mutex<(u64, std::collections::VecDeque<h::AgentEvent>)>>,
}

fn take_next(state: &std::sync::Mutex<(u64, std::collections::VecDeque<h::AgentEvent>)>, fetched: Vec<h::AgentEvent>) -> Option<serde_json::Value> {
    let mut state = state.lock().unwrap_or_else(|p| p.into_inner());
    // Only what is newer than anything held (two `next()` calls may have fetched the same events).
    let last = state.1.back().map_or(state.0, |e| e.cursor);
    state.1.extend(fetched.into_iter().filter(|e| e.cursor > last));
    let event = state.1.pop_front()?;
    state.0 = event.cursor;
    Some(event_js(&event))
}

#[napi]
impl AsyncGenerator for AgentEvents {
    type Yield = serde_json::Value;
    type Next = ();
    type Return = ();

    fn next(&mut self, _value: Option<()>) -> impl std::future::Future<Output = napi::Result<Option<serde_json::Value>>> + Send + 'static {
        let agent = self.agent.clone();
        let timeout = self.timeout;
        let state = self.state.clone();
        async move {
            if let Some(event) = take_next(&state, Vec::new()) {
                return Ok(Some(event));
            }
            let since = state.lock().unwrap_or_else(|p| p.into_inner()).0;
            let fetched = match timeout {
                None => agent.events(since),
                Some(timeout) => napi::tokio::task::spawn_blocking(move || agent.wait_events(since, timeout))
                    .await
                    .map_err(|e| napi::Error::from_reason(format!("cannot wait for events: {e}")))?,
            };
            Ok(take_next(&state, fetched))
        }
    }
}

fn event_js(event: &h::AgentEvent) -> serde_json::Value {
    serde_json::json!({
        "cursor": event.cursor,
        "type": event.kind,
        "data": event.data,
        "timestamp": event.timestamp.as_millis(),
    })
}
