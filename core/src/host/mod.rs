//! The host: runs Claude Code, Codex, OpenCode, Gemini CLI, Pi, Qwen Code and Copilot CLI turn by
//! turn for stored sessions,
//! one long-lived process per running session, and records every event as it happens
//! (docs/design.md §7).
//!
//! ```no_run
//! use sna_history::host::{Host, HostOptions, StartOptions};
//! use sna_history::{Runtime, Store};
//!
//! let host = Host::new(Store::open("history.db")?, HostOptions::default());
//! let agent = host.start("fix-parser", StartOptions::new(Runtime::ClaudeCode))?;
//! let turn = agent.send("Why does parse() fail?", &[])?;
//! println!("{}", turn.text);
//! let turn = agent.send("Fix it.", &[])?;               // the same process, the same thread
//! agent.switch(Runtime::Codex, None)?;                  // replayed into Codex
//! let turn = agent.send_within("Review the fix.", &[], Some(std::time::Duration::from_secs(300)))?;
//! # Ok::<(), sna_history::Error>(())
//! ```
//!
//! While a session's process lives, `send` goes straight to it, so the runtime keeps its own thread
//! and the vendor's prompt cache. When it is gone (a crash, `kill`, a new host) the next `send` or
//! `resume` starts a new one: through the runtime's own resume when its bound thread holds the
//! whole session, otherwise by replaying the canonical blocks (`Session::prepare_resume`).
//! `switch` replays into another runtime or model. Each completed item is stored the moment it
//! arrives; text deltas go only to event subscribers.
//!
//! Permissions: by default the permission mode decides alone. With
//! [`StartOptions::ask_permissions`], each tool the runtime wants permission for waits (Claude
//! Code's `can_use_tool` control request, Codex's approval requests, OpenCode's
//! `permission.asked`, Gemini CLI's `session/request_permission`): the agent publishes
//! `permission_needed` and [`Agent::answer_permission`] lets the tool run or refuses it;
//! [`Agent::interrupt`] refuses what waits.
//!
//! Timeouts: a `send` that runs out of time ends the runtime process (SIGTERM, then SIGKILL) and
//! raises `TIMEOUT`; the blocks that completed stay, and the next `send` resumes. Dropping the
//! host ends every process it started; so does the end of the host process (a death signal and
//! an exit handler), so that no runtime process outlives it.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::model::{Block, Runtime, Timestamp};
use crate::store::{NewSession, Store};

mod agent;

pub use agent::Agent;
pub use crate::native::live::Image;

/// How a [`Host`] runs the runtimes.
#[derive(Debug, Clone, Default)]
pub struct HostOptions {
    /// The executable of each runtime (default: `claude`, `codex`, `opencode`, `gemini`, `pi`,
    /// `qwen`, `copilot` on `PATH`).
    pub bins: BTreeMap<Runtime, PathBuf>,
    /// Variables added to the environment the runtime processes inherit.
    pub env: BTreeMap<String, String>,
    /// The `HOME` of the runtime processes (where their own files go); default: the host's.
    pub home: Option<PathBuf>,
}

/// How [`Host::start`] runs a session.
#[derive(Debug, Clone)]
pub struct StartOptions {
    /// The runtime to run.
    pub runtime: Runtime,
    /// The model (OpenCode: `provider/model`); default: the runtime's own.
    pub model: Option<String>,
    /// The working directory; default: the session's `cwd`, else the host's.
    pub cwd: Option<PathBuf>,
    /// The `HOME` of this session's processes; default: the host's.
    pub home: Option<PathBuf>,
    /// `default`, `acceptEdits`, `bypassPermissions` or `plan` (Claude Code's names; Codex approves
    /// its requests in the last two, declines them otherwise). Claude Code refuses
    /// `bypassPermissions` when run as root, so starting it so is `INVALID_INPUT` naming this field,
    /// unless its environment declares a sandbox (`IS_SANDBOX=1`).
    pub permission_mode: Option<String>,
    /// More arguments for the runtime's command line (dropped when the agent switches to another
    /// runtime).
    pub args: Vec<String>,
    /// Variables added to this session's environment.
    pub env: BTreeMap<String, String>,
    /// True: each tool the runtime wants permission for waits, and the agent publishes a
    /// `permission_needed` event until [`Agent::answer_permission`] says yes or no. False (the
    /// default): the permission mode decides alone (see `permission_mode`).
    pub ask_permissions: bool,
    /// The context window, in tokens, every replay into this session's runtime must fit (less a
    /// reserve for the runtime's own prompt, tools and answer; see [`crate::Options::context_window`]).
    /// `None`: the model's window from the model table, when the model is known.
    pub context_window: Option<u64>,
}

impl StartOptions {
    /// Options that run `runtime` with its defaults.
    pub fn new(runtime: Runtime) -> Self {
        StartOptions {
            runtime,
            model: None,
            cwd: None,
            home: None,
            permission_mode: None,
            args: Vec::new(),
            env: BTreeMap::new(),
            ask_permissions: false,
            context_window: None,
        }
    }
}

/// How [`Host::resume`] brings a session back.
#[derive(Debug, Clone, Default)]
pub struct ResumeOptions {
    /// The runtime; default: the one the session last ran in.
    pub runtime: Option<Runtime>,
    /// The model; default: the one it last ran with.
    pub model: Option<String>,
    /// The permission mode (see [`StartOptions::permission_mode`]); default: as before.
    pub permission_mode: Option<String>,
    /// More arguments for the runtime's command line; default: as before (none after a switch).
    pub args: Option<Vec<String>>,
    /// The `HOME` of the session's processes; default: as before.
    pub home: Option<PathBuf>,
    /// See [`StartOptions::ask_permissions`]; default: as before.
    pub ask_permissions: Option<bool>,
    /// See [`StartOptions::context_window`]; default: as before.
    pub context_window: Option<u64>,
}

/// Something that happened to an agent. Cursors increase for the life of the session's agent in a
/// host, across restarts, resumes and switches (they start from the clock, so a new host's are
/// higher too).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgentEvent {
    /// The event's position.
    pub cursor: u64,
    /// `started`, `resumed`, `switched`, `user_message`, `assistant`, `thinking`, `tool_use`,
    /// `tool_result`, `status`, `error`, `assistant_delta`, `thinking_delta`, `complete`,
    /// `interrupted`, `model_changed`, `permission_needed`, `permission_answered`, `compacted`,
    /// `exited`, `killed`.
    #[serde(rename = "type")]
    pub kind: String,
    /// What goes with it: `{block}` for a recorded block, `{text}` for a delta, `{usage}` for
    /// `complete`, `{runtime, model, pid, via, replay}` for a start (`replay`: what shaped a
    /// replay — `{from_seq, compaction_seq, folded}` — or null), `{compaction}` for `compacted`, `{code, stderr}` for `exited`,
    /// `{id, tool, input, call_id, title}` for `permission_needed`, `{id, allow}` for
    /// `permission_answered`.
    pub data: Value,
    /// When it happened.
    pub timestamp: Timestamp,
}

/// One turn: the user's message and everything the runtime did until it finished.
#[derive(Debug, Clone)]
pub struct Turn {
    /// The blocks stored during the turn, in order (the user's message first).
    pub blocks: Vec<Block>,
    /// The final answer: the last assistant text of the turn.
    pub text: String,
    /// The usage the runtime reported.
    pub usage: Option<Value>,
    /// How the process this turn ran in was started, when it was started for this turn: `native`
    /// (the runtime's own resume) or `replay` (rebuilt from the canonical blocks); `None` when the
    /// turn went to a process already running, or to a new thread.
    pub resumed_via: Option<String>,
    /// What shaped the replay that process was started from (`resumed_via` `replay`): the
    /// compaction it started at and the turns folded to fit the target's window.
    pub replay: Option<crate::native::ReplayShape>,
    /// True when the turn was interrupted.
    pub interrupted: bool,
}

impl Turn {
    /// Why the turn ended, in the words ACP and the Messages API share: `cancelled` when it was
    /// interrupted, `max_tokens` or `refusal` when the model's last response stopped so (as Claude
    /// Code records it; the other runtimes' records do not say), else `end_turn`.
    pub fn stop_reason(&self) -> &'static str {
        if self.interrupted {
            return "cancelled";
        }
        let stopped = self.blocks.iter().rev().filter(|b| b.actor == crate::model::Actor::Assistant).find_map(|b| {
            let data = &b.native.as_ref()?.data;
            data.pointer("/record/message/stop_reason").and_then(Value::as_str)
        });
        match stopped {
            Some("max_tokens") => "max_tokens",
            Some("refusal") => "refusal",
            _ => "end_turn",
        }
    }
}

/// What an agent is doing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AgentStatus {
    /// The session.
    pub session_id: String,
    /// True while its process runs.
    pub alive: bool,
    /// True while a turn runs.
    pub busy: bool,
    /// The process id, while it runs.
    pub pid: Option<u32>,
    /// The runtime.
    pub runtime: Runtime,
    /// The model, when chosen.
    pub model: Option<String>,
    /// The runtime's own id of the thread.
    pub native_id: Option<String>,
    /// How many processes were started for this agent so far.
    pub spawns: u32,
    /// The cursor of the last event.
    pub cursor: u64,
}

pub(crate) struct HostInner {
    store: Store,
    options: HostOptions,
    agents: Mutex<BTreeMap<String, Agent>>,
}

/// Runs runtimes for the sessions of one store. Cheap to clone; the last clone dropped ends every
/// process the host started.
#[derive(Clone)]
pub struct Host {
    inner: Arc<HostInner>,
}

impl Host {
    /// A host for `store`'s sessions.
    pub fn new(store: Store, options: HostOptions) -> Host {
        Host { inner: Arc::new(HostInner { store, options, agents: Mutex::new(BTreeMap::new()) }) }
    }

    /// The store the host records into.
    pub fn store(&self) -> &Store {
        &self.inner.store
    }

    /// What the runtime of `options` would refuse at [`Host::start`], found without starting or
    /// writing anything: `INVALID_INPUT` naming `permission_mode` for Claude Code asked to bypass
    /// permissions while the host runs as root (outside a declared sandbox). For a front end that
    /// takes the options before its first prompt (`sna acp`'s `session/set_config_option`).
    pub fn check(&self, options: &StartOptions) -> Result<()> {
        agent::check_start(&self.inner.options, options)
    }

    /// Starts `options.runtime` for the session `session_id` (created when it does not exist yet)
    /// and returns its agent. A session with history is continued: natively when the runtime's
    /// bound thread holds it all, else by replay. `CONFLICT` when its process is already running.
    /// A start that fails (no such executable, options the runtime refuses) leaves no agent, and
    /// removes the session it created for the start.
    pub fn start(&self, session_id: &str, options: StartOptions) -> Result<Agent> {
        let (session, created) = match self.inner.store.session(session_id) {
            Ok(session) => (session, false),
            Err(Error::NotFound(_)) => {
                let mut new = NewSession::new().id(session_id);
                if let Some(cwd) = &options.cwd {
                    new = new.cwd(cwd.display().to_string());
                }
                (self.inner.store.create_session(new)?, true)
            }
            Err(e) => return Err(e),
        };
        let known = self.agent(session_id).is_some();
        let agent = self.agent_for(session, options)?;
        if let Err(e) = agent.spawn_now("started") {
            // A start that did not start leaves nothing behind: not the agent made for it, nor
            // the session made for it (still empty: nothing ran).
            if !known {
                if let Ok(mut agents) = self.inner.agents.lock() {
                    agents.remove(session_id);
                }
            }
            if created && agent.session().is_empty().unwrap_or(false) {
                let _ = self.inner.store.delete_session(session_id);
            }
            return Err(e);
        }
        Ok(agent)
    }

    /// Brings a stored session back in a fresh process: natively when the runtime's bound thread
    /// holds it all, else by replay. `NOT_FOUND` for an unknown session, `CONFLICT` while its
    /// process is alive.
    pub fn resume(&self, session_id: &str, options: ResumeOptions) -> Result<Agent> {
        let session = self.inner.store.session(session_id)?;
        let existing = self.agent(session_id);
        if let Some(agent) = &existing {
            if agent.status().alive {
                return Err(Error::Conflict(format!("the session {session_id:?} is running (pid {}); kill it before resuming", agent.status().pid.unwrap_or(0))));
            }
        }
        let agent = match existing {
            Some(agent) => {
                agent.reconfigure(options);
                agent
            }
            None => {
                let runtime = match options.runtime {
                    Some(runtime) => runtime,
                    None => last_runtime(&session)?,
                };
                let mut start = StartOptions::new(runtime);
                start.model = options.model.or_else(|| last_model(&session, runtime));
                start.permission_mode = options.permission_mode;
                start.args = options.args.unwrap_or_default();
                start.home = options.home;
                start.ask_permissions = options.ask_permissions.unwrap_or(false);
                start.context_window = options.context_window;
                self.agent_for(session, start)?
            }
        };
        agent.spawn_now("resumed")?;
        Ok(agent)
    }

    /// The executable the host runs for `runtime`: the one given in [`HostOptions::bins`], else
    /// the runtime's command name (`claude`, `codex`, `opencode`, `gemini`, `pi`, `qwen`,
    /// `copilot`), looked up on
    /// `PATH` when run.
    pub fn program(&self, runtime: Runtime) -> PathBuf {
        self.inner.options.bins.get(&runtime).cloned().unwrap_or_else(|| PathBuf::from(agent::default_program(runtime)))
    }

    /// True when the executable of `runtime` (see [`Host::program`]) is there to run: the named
    /// file, or a file of that name in a directory of `PATH`, executable.
    pub fn installed(&self, runtime: Runtime) -> bool {
        use std::os::unix::fs::PermissionsExt as _;
        let program = self.program(runtime);
        let runnable = |p: &std::path::Path| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
        if program.components().count() > 1 {
            return runnable(&program);
        }
        let path = self.inner.options.env.get("PATH").map(std::ffi::OsString::from).or_else(|| std::env::var_os("PATH"));
        path.is_some_and(|paths| std::env::split_paths(&paths).any(|dir| runnable(&dir.join(&program))))
    }

    /// The runtime a stored session last ran in and the model it ran with there (as the runtime's
    /// model flag names it), what [`Host::resume`] goes on with by default; `None` for a session
    /// that never ran in a runtime. `NOT_FOUND` for an unknown session.
    pub fn last_run(&self, session_id: &str) -> Result<Option<(Runtime, Option<String>)>> {
        let session = self.inner.store.session(session_id)?;
        Ok(last_runtime(&session).ok().map(|runtime| (runtime, last_model(&session, runtime))))
    }

    /// The agent of a session, when this host has one.
    pub fn agent(&self, session_id: &str) -> Option<Agent> {
        self.inner.agents.lock().ok()?.get(session_id).cloned()
    }

    /// Every agent of this host.
    pub fn agents(&self) -> Vec<Agent> {
        self.inner.agents.lock().map(|a| a.values().cloned().collect()).unwrap_or_default()
    }

    /// Ends every process the host started (also done when the host is dropped).
    pub fn close(&self) {
        for agent in self.agents() {
            let _ = agent.kill();
        }
    }

    fn agent_for(&self, session: crate::store::Session, options: StartOptions) -> Result<Agent> {
        let mut agents = self.inner.agents.lock().map_err(|_| Error::Internal("the agent list is poisoned".into()))?;
        if let Some(agent) = agents.get(session.id()) {
            if agent.status().alive {
                return Err(Error::Conflict(format!("the session {:?} is already running", session.id())));
            }
            agent.replace_options(options);
            return Ok(agent.clone());
        }
        let agent = Agent::new(Arc::downgrade(&self.inner), session, options);
        agents.insert(agent.session_id().to_string(), agent.clone());
        Ok(agent)
    }
}

impl Drop for HostInner {
    fn drop(&mut self) {
        let agents: Vec<Agent> = self.agents.lock().map(|a| a.values().cloned().collect()).unwrap_or_default();
        for agent in agents {
            let _ = agent.kill();
        }
    }
}

/// The runtime of the session's last attributed block.
fn last_runtime(session: &crate::store::Session) -> Result<Runtime> {
    let switches = session.switches()?;
    switches
        .iter()
        .rev()
        .find_map(|s| s.to.provider.as_deref().and_then(|p| p.parse::<Runtime>().ok()))
        .ok_or_else(|| Error::invalid_field("runtime", format!("the session {:?} never ran in a runtime: name the runtime to resume it in", session.id())))
}

/// The model of the session's last block by `runtime`.
fn last_model(session: &crate::store::Session, runtime: Runtime) -> Option<String> {
    let switches = session.switches().ok()?;
    let to = &switches.iter().rev().find(|s| s.to.provider.as_deref() == Some(runtime.as_str()))?.to;
    crate::native::registry::adapter(runtime).model_flag(to.model_provider.as_deref(), to.model.as_deref())
}
