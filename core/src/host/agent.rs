//! One session's agent: its process, its turns (queued, one at a time), its events.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::error::{Error, Result};
use crate::model::{Actor, Block, Kind, Runtime, Timestamp};
use crate::native::common::embed_block;
use crate::native::live::{command_output, Image, Live, LiveSpec, Signal, TurnEnd, COMPACTION_FAILED};
use crate::native::registry::adapter;
use crate::native::{Options, ResumeOptions as NativeResume};
use crate::store::Session;

use super::{AgentEvent, AgentStatus, HostInner, HostOptions, StartOptions, Turn};

mod signal;

use signal::{on_signal, publish};

/// How many events an agent keeps for `events(since)`.
const KEPT_EVENTS: usize = 10_000;

/// A session's agent in a [`super::Host`]. Cheap to clone; all clones are the same agent.
#[derive(Clone)]
pub struct Agent {
    inner: Arc<AgentInner>,
}

struct AgentInner {
    host: Weak<HostInner>,
    session: Session,
    state: Mutex<State>,
    changed: Condvar,
    /// The running process; its own lock, so that a driver call never holds the state (the
    /// driver's reader thread records into the state while a call waits for its answer).
    live: Mutex<Option<Box<dyn Live>>>,
}

struct State {
    options: StartOptions,
    generation: u64,
    alive: bool,
    pid: Option<u32>,
    native_id: Option<String>,
    spawns: u32,
    events: VecDeque<AgentEvent>,
    next_cursor: u64,
    turn: Option<TurnState>,
    next_ticket: u64,
    serving: u64,
    cancelled: std::collections::BTreeSet<u64>,
    resumed_via: Option<String>,
    /// What shaped the replay the running process was started from, until a turn takes it.
    replay: Option<crate::native::ReplayShape>,
    /// The permission requests of the running process that wait for an answer.
    asking: std::collections::BTreeSet<String>,
}

struct TurnState {
    blocks: Vec<Block>,
    user_seen: bool,
    interrupt_requested: bool,
    outcome: Option<Outcome>,
}

enum Outcome {
    Ended(TurnEnd),
    Exited(String),
}

/// What a turn asks of the runtime.
enum Request<'a> {
    /// A user message.
    Message { text: &'a str, images: &'a [Image] },
    /// A compaction with the runtime's own mechanism.
    Compact { instructions: Option<&'a str> },
}

impl Request<'_> {
    /// Stores what the user asked when the runtime did not record it: a message (so that the next
    /// resume carries it); nothing for a compaction.
    fn record_user(&self, agent: &Agent) {
        if let Request::Message { text, images } = self {
            agent.record_message(text, images);
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}


/// The kept events after `since` (cursors grow, so the first is found by halving, not by a scan:
/// many subscribers read the same agent's events at once).
fn after(events: &VecDeque<AgentEvent>, since: u64) -> Vec<AgentEvent> {
    let first = events.partition_point(|e| e.cursor <= since);
    events.range(first..).cloned().collect()
}

impl State {
    fn publish(&mut self, kind: &str, data: Value) {
        let cursor = self.next_cursor;
        self.next_cursor += 1;
        self.events.push_back(AgentEvent { cursor, kind: kind.to_string(), data, timestamp: Timestamp::now() });
        if self.events.len() > KEPT_EVENTS {
            self.events.pop_front();
        }
    }
}

impl Agent {
    pub(super) fn new(host: Weak<HostInner>, session: Session, options: StartOptions) -> Agent {
        // Cursors start from the clock (µs), so that a later host's are higher than an earlier one's.
        let next_cursor = (Timestamp::now().as_millis().max(0) as u64) * 1000;
        let state = State {
            options,
            generation: 0,
            alive: false,
            pid: None,
            native_id: None,
            spawns: 0,
            events: VecDeque::new(),
            next_cursor,
            turn: None,
            next_ticket: 0,
            serving: 0,
            cancelled: Default::default(),
            resumed_via: None,
            replay: None,
            asking: Default::default(),
        };
        Agent { inner: Arc::new(AgentInner { host, session, state: Mutex::new(state), changed: Condvar::new(), live: Mutex::new(None) }) }
    }

    /// The session's id.
    pub fn session_id(&self) -> &str {
        self.inner.session.id()
    }

    /// The session the agent records into.
    pub fn session(&self) -> &Session {
        &self.inner.session
    }

    /// What the agent is doing.
    pub fn status(&self) -> AgentStatus {
        let state = lock(&self.inner.state);
        AgentStatus {
            session_id: self.session_id().to_string(),
            alive: state.alive,
            busy: state.turn.is_some(),
            pid: state.pid,
            runtime: state.options.runtime,
            model: state.options.model.clone(),
            native_id: state.native_id.clone(),
            spawns: state.spawns,
            cursor: state.next_cursor - 1,
        }
    }

    pub(super) fn replace_options(&self, options: StartOptions) {
        lock(&self.inner.state).options = options;
    }

    pub(super) fn reconfigure(&self, options: super::ResumeOptions) {
        let mut state = lock(&self.inner.state);
        if let Some(runtime) = options.runtime {
            if runtime != state.options.runtime {
                state.options.model = None;
                state.options.args.clear();
            }
            state.options.runtime = runtime;
        }
        if options.model.is_some() {
            state.options.model = options.model;
        }
        if options.permission_mode.is_some() {
            state.options.permission_mode = options.permission_mode;
        }
        if let Some(args) = options.args {
            state.options.args = args;
        }
        if options.home.is_some() {
            state.options.home = options.home;
        }
        if let Some(ask) = options.ask_permissions {
            state.options.ask_permissions = ask;
        }
        if options.context_window.is_some() {
            state.options.context_window = options.context_window;
        }
    }

    /// How many events the agent keeps (the last 10,000).
    pub fn event_count(&self) -> usize {
        lock(&self.inner.state).events.len()
    }

    /// The events after `since`, oldest first (without waiting).
    pub fn events(&self, since: u64) -> Vec<AgentEvent> {
        after(&lock(&self.inner.state).events, since)
    }

    /// The events after `since`, waiting up to `timeout` for one when there is none yet.
    pub fn wait_events(&self, since: u64, timeout: Duration) -> Vec<AgentEvent> {
        let deadline = Instant::now() + timeout;
        let mut state = lock(&self.inner.state);
        loop {
            let found = after(&state.events, since);
            let now = Instant::now();
            if !found.is_empty() || now >= deadline {
                return found;
            }
            state = self.inner.changed.wait_timeout(state, deadline - now).unwrap_or_else(|p| p.into_inner()).0;
        }
    }

    /// Sends a user message (with images, which become embeds of the user block and reach the
    /// runtime in its native form) and waits for the turn to end. Messages sent while a turn runs
    /// wait their turn, in order. A process that is gone is started again first (see the module
    /// docs). Errors: `INVALID_INPUT` naming `images[i].mime` for an image whose type is not
    /// `image/…` (or `images[i].data` for one without bytes), before anything is sent; `RUNTIME` when the process exits during
    /// the turn or the runtime reports the turn failed (what completed stays recorded); `TIMEOUT`
    /// when the time runs out (the process is ended; the next `send` resumes).
    pub fn send(&self, text: &str, images: &[Image]) -> Result<Turn> {
        self.send_within(text, images, None)
    }

    /// [`Agent::send`] with a time limit (`None`: as long as it takes).
    pub fn send_within(&self, text: &str, images: &[Image], timeout: Option<Duration>) -> Result<Turn> {
        Image::check_all(images)?;
        self.queued(Request::Message { text, images }, timeout)
    }

    /// Asks the running runtime to compact its conversation with its own mechanism (Claude Code's
    /// `/compact`, Codex's `thread/compact/start`, OpenCode's summarize, Pi's `compact`), with
    /// `instructions` for the summary where the runtime takes them, and waits for it like a turn
    /// (queued behind the messages sent before it). What the runtime records of it is stored like
    /// any turn, so that the compaction is in [`Session::compactions`] and a later switch or replay
    /// starts from its summary. (Every turn that records a compaction, asked for or the runtime's
    /// own, publishes a `compacted` event before it ends.) `UNSUPPORTED` for a runtime that cannot
    /// compact on request (Gemini CLI: its compression is reached only from its interactive
    /// screen).
    ///
    /// [`Session::compactions`]: crate::store::Session::compactions
    pub fn compact(&self, instructions: Option<&str>) -> Result<Turn> {
        self.compact_within(instructions, None)
    }

    /// [`Agent::compact`] with a time limit (`None`: as long as it takes).
    pub fn compact_within(&self, instructions: Option<&str>, timeout: Option<Duration>) -> Result<Turn> {
        let before = self.inner.session.len()?;
        let turn = self.queued(Request::Compact { instructions }, timeout)?;
        if crate::native::compaction::since(&self.inner.session, before)?.is_empty() {
            // What the runtime said instead: its refusal (Claude Code's "Not enough messages to
            // compact."), else what its compact command printed (Claude Code: "Error: No messages
            // to compact"), else its last words.
            let status = |read: &dyn Fn(&str) -> Option<&str>| {
                turn.blocks.iter().rev().filter(|b| b.kind == Kind::Status).find_map(|b| read(&b.content)).map(str::to_string)
            };
            let said = status(&|line| line.strip_prefix(COMPACTION_FAILED))
                .or_else(|| status(&|line| command_output(line, "compact")))
                .or_else(|| turn.blocks.iter().rev().find(|b| matches!(b.kind, Kind::Text | Kind::Error) && !b.content.trim().is_empty()).map(|b| b.content.clone()));
            let said = said.as_deref().map(str::trim).filter(|s| !s.is_empty());
            let runtime = lock(&self.inner.state).options.runtime.display_name();
            return Err(Error::Runtime(match said {
                Some(said) => format!("{runtime} ended the compaction without recording one: {said}"),
                None => format!("{runtime} ended the compaction without recording one (it may have had nothing to compact)"),
            }));
        }
        Ok(turn)
    }

    /// Runs `request` when the turns queued before it are done.
    fn queued(&self, request: Request<'_>, timeout: Option<Duration>) -> Result<Turn> {
        let deadline = timeout.map(|t| Instant::now() + t);
        let ticket = {
            let mut state = lock(&self.inner.state);
            let ticket = state.next_ticket;
            state.next_ticket += 1;
            while state.serving != ticket {
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    // Given up while queued: skipped when its turn comes.
                    state.cancelled.insert(ticket);
                    return Err(Error::Timeout("the turns queued before this message did not finish in time".into()));
                }
                state = self.wait(state, deadline);
            }
            ticket
        };
        let result = self.run_turn(&request, deadline);
        let mut state = lock(&self.inner.state);
        state.turn = None;
        state.serving = ticket + 1;
        loop {
            let next = state.serving;
            if !state.cancelled.remove(&next) {
                break;
            }
            state.serving += 1;
        }
        self.inner.changed.notify_all();
        result
    }

    fn wait<'a>(&self, state: MutexGuard<'a, State>, deadline: Option<Instant>) -> MutexGuard<'a, State> {
        match deadline {
            None => self.inner.changed.wait(state).unwrap_or_else(|p| p.into_inner()),
            Some(deadline) => {
                let left = deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(1));
                self.inner.changed.wait_timeout(state, left).unwrap_or_else(|p| p.into_inner()).0
            }
        }
    }

    fn run_turn(&self, request: &Request<'_>, deadline: Option<Instant>) -> Result<Turn> {
        if !lock(&self.inner.state).alive {
            self.spawn_now("resumed")?;
        }
        let (resumed_via, replay) = {
            let mut state = lock(&self.inner.state);
            state.turn = Some(TurnState { blocks: Vec::new(), user_seen: false, interrupt_requested: false, outcome: None });
            (state.resumed_via.take(), state.replay.take())
        };
        let sent = match (lock(&self.inner.live).as_mut(), request) {
            (Some(live), Request::Message { text, images }) => live.send(text, images),
            (Some(live), Request::Compact { instructions }) => live.compact(*instructions),
            (None, _) => Err(Error::Runtime("the runtime process is gone".into())),
        };
        if let Err(e) = sent {
            request.record_user(self);
            return Err(e);
        }
        let mut state = lock(&self.inner.state);
        loop {
            if state.turn.as_ref().is_some_and(|t| t.outcome.is_some()) {
                break;
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                let seen = state.turn.as_ref().is_some_and(|t| t.user_seen);
                drop(state);
                self.stop_process();
                if !seen {
                    request.record_user(self);
                }
                let mut state = lock(&self.inner.state);
                state.publish("error", json!({"message": "the turn timed out; the process was ended"}));
                return Err(Error::Timeout("the turn did not finish in time; the runtime process was ended (the next send resumes)".into()));
            }
            state = self.wait(state, deadline);
        }
        let turn = state.turn.take().unwrap_or_else(|| unreachable!("the turn was just seen"));
        drop(state);
        let user_seen = turn.user_seen;
        let blocks = turn.blocks;
        match turn.outcome {
            Some(Outcome::Exited(message)) => {
                if !user_seen {
                    request.record_user(self);
                }
                Err(Error::Runtime(message))
            }
            Some(Outcome::Ended(end)) => {
                let interrupted = end.interrupted || turn.interrupt_requested;
                if let (Some(error), false) = (&end.error, interrupted) {
                    let next = if is_context_overflow(error) {
                        ": the conversation no longer fits the model's context window; compact it (Agent::compact) and send again"
                    } else {
                        ""
                    };
                    return Err(Error::Runtime(format!("the runtime ended the turn with an error: {error}{next}")));
                }
                let text = blocks.iter().rev().find(|b| b.actor == Actor::Assistant && b.kind == Kind::Text).map(|b| b.content.clone()).unwrap_or_default();
                Ok(Turn { blocks, text, usage: end.usage, resumed_via, replay, interrupted })
            }
            None => unreachable!("the loop ends on an outcome"),
        }
    }

    /// Stores the user's message as blocks, for a turn that failed before the runtime recorded it
    /// (so that the next resume carries it).
    fn record_message(&self, text: &str, images: &[Image]) {
        let mut blocks = Vec::new();
        for (i, image) in images.iter().enumerate() {
            blocks.push(embed_block(Actor::User, &format!("image {}", i + 1), image.embed()));
        }
        blocks.push(Block::text(Actor::User, text));
        if let Ok(stored) = self.inner.session.extend(blocks) {
            let mut state = lock(&self.inner.state);
            for block in stored {
                state.publish("user_message", json!({"block": block}));
            }
            self.inner.changed.notify_all();
        }
    }

    /// Stops the running turn; the runtime keeps running. No-op when no turn runs.
    pub fn interrupt(&self) -> Result<()> {
        {
            let mut state = lock(&self.inner.state);
            match state.turn.as_mut() {
                Some(turn) if turn.outcome.is_none() => turn.interrupt_requested = true,
                _ => return Ok(()),
            }
        }
        // A tool waiting for permission is refused first, so that the runtime is not left asking.
        let asking = std::mem::take(&mut lock(&self.inner.state).asking);
        for id in asking {
            if let Some(live) = lock(&self.inner.live).as_mut() {
                let _ = live.answer_permission(&id, false);
            }
            publish(&self.inner, "permission_answered", json!({"id": id, "allow": false}));
        }
        match lock(&self.inner.live).as_mut() {
            Some(live) => live.interrupt(),
            None => Ok(()),
        }
    }

    /// The permission mode and whether permissions are asked (see [`StartOptions`]).
    pub fn permissions(&self) -> (Option<String>, bool) {
        let state = lock(&self.inner.state);
        (state.options.permission_mode.clone(), state.options.ask_permissions)
    }

    /// Sets the permission mode and whether permissions are asked, for the next process started
    /// (a running one keeps its own: `kill` it first to change them now).
    pub fn set_permissions(&self, permission_mode: Option<String>, ask: bool) {
        let mut state = lock(&self.inner.state);
        state.options.permission_mode = permission_mode;
        state.options.ask_permissions = ask;
    }

    /// The permission requests that wait for an answer (`permission_needed` events not answered
    /// yet), oldest first.
    pub fn pending_permissions(&self) -> Vec<String> {
        lock(&self.inner.state).asking.iter().cloned().collect()
    }

    /// Answers a `permission_needed` event: the tool runs (`allow`) or is refused, and the turn
    /// goes on. `NOT_FOUND` when no request of that id waits (answered already, or its process
    /// ended).
    pub fn answer_permission(&self, id: &str, allow: bool) -> Result<()> {
        if !lock(&self.inner.state).asking.remove(id) {
            return Err(Error::NotFound(format!("no permission request {id:?} waits for an answer")));
        }
        let answered = match lock(&self.inner.live).as_mut() {
            Some(live) => live.answer_permission(id, allow),
            None => return Err(Error::NotFound(format!("no permission request {id:?} waits for an answer: the process ended"))),
        };
        if let Err(e) = answered {
            // Still waiting: it can be answered again (or refused by an interrupt).
            lock(&self.inner.state).asking.insert(id.to_string());
            return Err(e);
        }
        publish(&self.inner, "permission_answered", json!({"id": id, "allow": allow}));
        Ok(())
    }

    /// Makes the next turns run on `model` (Claude Code, Gemini CLI, Pi, Qwen Code and Copilot CLI
    /// switch in place; Codex and OpenCode name it with the next message).
    pub fn set_model(&self, model: &str) -> Result<()> {
        // A process that has exited (a crash, kill -9) takes no message: the next start names the
        // model, from the options below.
        if lock(&self.inner.state).alive {
            if let Some(live) = lock(&self.inner.live).as_mut() {
                live.set_model(model)?;
            }
        }
        let mut state = lock(&self.inner.state);
        state.options.model = Some(model.to_string());
        state.publish("model_changed", json!({"model": model}));
        self.inner.changed.notify_all();
        Ok(())
    }

    /// Goes on in another runtime (or model): the process is ended and the session replayed into
    /// `runtime` in a new one. Waits for a running turn to end first.
    pub fn switch(&self, runtime: Runtime, model: Option<String>) -> Result<()> {
        let from = {
            let mut state = lock(&self.inner.state);
            while state.turn.is_some() {
                state = self.inner.changed.wait(state).unwrap_or_else(|p| p.into_inner());
            }
            let from = state.options.runtime;
            if from != runtime {
                // Extra arguments are one runtime's command line; they do not carry over.
                state.options.args.clear();
            }
            state.options.runtime = runtime;
            state.options.model = model;
            from
        };
        self.stop_process();
        self.spawn_now(if from == runtime { "resumed" } else { "switched" })
    }

    /// Ends the process (SIGTERM, then SIGKILL after a grace period). The agent stays: the next
    /// `send` or `resume` starts it again.
    pub fn kill(&self) -> Result<()> {
        let was_alive = lock(&self.inner.state).alive;
        self.stop_process();
        if was_alive {
            let mut state = lock(&self.inner.state);
            state.publish("killed", json!({}));
            self.inner.changed.notify_all();
        }
        Ok(())
    }

    fn stop_process(&self) {
        let live = lock(&self.inner.live).take();
        if let Some(mut live) = live {
            live.stop();
        }
        let mut state = lock(&self.inner.state);
        state.alive = false;
        state.pid = None;
        state.asking.clear();
        // Signals of the ended process no longer touch the agent, except ending its turn.
        state.generation += 1;
        if let Some(turn) = state.turn.as_mut() {
            if turn.outcome.is_none() {
                turn.outcome = Some(Outcome::Exited("the runtime process was ended during the turn".into()));
            }
        }
        self.inner.changed.notify_all();
    }

    /// Starts the process: a new thread for a session without blocks, the runtime's own resume
    /// when its bound thread holds every block, a replay otherwise. `event` is the event to publish
    /// (`started`, `resumed`, `switched`).
    pub(super) fn spawn_now(&self, event: &str) -> Result<()> {
        let host = self.inner.host.upgrade().ok_or_else(|| Error::Closed("the host was closed".into()))?;
        let (options, generation) = {
            let mut state = lock(&self.inner.state);
            if state.alive {
                return Err(Error::Conflict(format!("the session {:?} is already running", self.session_id())));
            }
            state.generation += 1;
            (state.options.clone(), state.generation)
        };
        let runtime = options.runtime;
        let session = &self.inner.session;
        let info = session.info()?;
        let cwd = match options.cwd.clone().or_else(|| info.cwd.as_ref().map(PathBuf::from)) {
            Some(cwd) => cwd,
            None => std::env::current_dir().map_err(|e| Error::Io { context: "cannot read the current directory".into(), source: e })?,
        };
        let mut spec = start_spec(&host.options, &options, cwd.clone());
        let (env, program) = (spec.env.clone(), spec.program.clone());
        // What the runtime would refuse is said now, not as its exit during the first turn.
        adapter(runtime).driver()?.check(&spec)?;
        let len = session.len()?;
        // The runtime's own resume when its bound thread holds every block (and, for Codex, its
        // rollout is still there to resume by); a replay otherwise.
        let native = session
            .binding(runtime)?
            .filter(|b| b.through_seq + 1 == len)
            .and_then(|binding| adapter(runtime).native_thread(&env, &binding.native_id).map(|path| (binding.native_id, path)));
        let mut replay = None;
        let via = if len == 0 {
            None
        } else if let Some((native_id, path)) = native {
            spec.resume = Some(native_id);
            spec.resume_path = path;
            Some("native")
        } else {
            let plan = session.prepare_resume(runtime, &self.replay_options(runtime, &options, &env, &cwd, &program))?;
            replay = Some(plan.replay.clone());
            if let Some(failed) = plan.ran.iter().find(|r| r.status != Some(0)) {
                return Err(Error::Runtime(format!("{} failed: {}", failed.argv.join(" "), failed.stderr.trim())));
            }
            spec.resume = Some(plan.session_id.clone());
            spec.resume_path = plan.files.first().cloned();
            Some("replay")
        };
        let weak = Arc::downgrade(&self.inner);
        let sink = Arc::new(move |signal: Signal| {
            if let Some(inner) = weak.upgrade() {
                on_signal(&inner, runtime, generation, signal);
            }
        });
        let live = adapter(runtime).driver()?.live(spec, sink)?;
        let pid = live.pid();
        *lock(&self.inner.live) = Some(live);
        let mut state = lock(&self.inner.state);
        state.alive = true;
        state.pid = Some(pid);
        state.spawns += 1;
        state.resumed_via = via.map(str::to_string);
        let data = json!({"runtime": runtime, "model": options.model, "pid": pid, "via": via, "replay": replay});
        state.replay = replay;
        state.publish(event, data);
        self.inner.changed.notify_all();
        Ok(())
    }

    fn replay_options(&self, runtime: Runtime, options: &StartOptions, env: &std::collections::BTreeMap<String, String>, cwd: &Path, program: &Path) -> NativeResume {
        let mut resume = NativeResume {
            home: env.get("HOME").map(PathBuf::from),
            cwd: Some(cwd.to_path_buf()),
            options: Options { target_model: options.model.clone(), context_window: options.context_window, ..Options::default() },
            ..NativeResume::default()
        };
        adapter(runtime).host_resume(&mut resume, env, program, options.model.as_deref());
        resume
    }
}

/// The whole environment of a runtime process the host starts (the host process's own, then the
/// host's options, then the start's, then `HOME`).
fn process_env(host: &HostOptions, options: &StartOptions) -> std::collections::BTreeMap<String, String> {
    let home = options.home.clone().or_else(|| host.home.clone());
    let mut env: std::collections::BTreeMap<String, String> = std::env::vars().collect();
    env.extend(host.env.clone());
    env.extend(options.env.clone());
    if let Some(home) = &home {
        env.insert("HOME".into(), home.display().to_string());
    }
    env
}

/// What the runtime of `options` would refuse at start, found before anything runs or is written
/// (Claude Code asked to bypass permissions as root), as [`Agent`]'s start finds it.
pub(super) fn check_start(host: &HostOptions, options: &StartOptions) -> Result<()> {
    adapter(options.runtime).driver()?.check(&start_spec(host, options, options.cwd.clone().unwrap_or_default()))
}

/// The process a start of `options` runs in `cwd`, before any thread to continue is named.
fn start_spec(host: &HostOptions, options: &StartOptions, cwd: PathBuf) -> LiveSpec {
    LiveSpec {
        program: host.bins.get(&options.runtime).cloned().unwrap_or_else(|| PathBuf::from(default_program(options.runtime))),
        cwd,
        env: process_env(host, options),
        model: options.model.clone(),
        permission_mode: options.permission_mode.clone(),
        args: options.args.clone(),
        resume: None,
        resume_path: None,
        ask_permissions: options.ask_permissions,
    }
}

/// True when a runtime's error says the request was larger than the model's context window (the
/// providers' words for it: Anthropic "prompt is too long", OpenAI `context_length_exceeded` and
/// "maximum context length", Google "exceeds the maximum number of tokens", and the runtimes' own).
pub(crate) fn is_context_overflow(error: &str) -> bool {
    let error = error.to_ascii_lowercase();
    [
        "prompt is too long",
        "context_length_exceeded",
        "maximum context length",
        "context window",
        "context length",
        "too many tokens",
        "exceeds the maximum number of tokens",
        "input is too long",
    ]
    .iter()
    .any(|words| error.contains(words))
}

/// The program a runtime runs as when no path is given.
pub(super) fn default_program(runtime: Runtime) -> &'static str {
    adapter(runtime).program()
}

#[cfg(test)]
mod tests {
    #[test]
    fn context_overflows_are_recognised_in_each_providers_words() {
        for error in [
            "API Error: 400 {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"prompt is too long: 210000 tokens > 200000 maximum\"}}",
            "Your input exceeds the context window of this model. Please adjust your input and try again. (code: context_length_exceeded)",
            "This model's maximum context length is 272000 tokens.",
            "The input token count (1100000) exceeds the maximum number of tokens allowed (1048576).",
        ] {
            assert!(super::is_context_overflow(error), "{error}");
        }
        assert!(!super::is_context_overflow("rate limited: try again in 20s"));
    }

    #[test]
    fn the_events_after_a_cursor_are_those_with_a_higher_one_in_order() {
        let event = |cursor| super::AgentEvent { cursor, kind: "status".into(), data: serde_json::Value::Null, timestamp: crate::model::Timestamp::now() };
        let kept: std::collections::VecDeque<_> = [5, 6, 9].into_iter().map(event).collect();
        let after = |since| super::after(&kept, since).iter().map(|e| e.cursor).collect::<Vec<_>>();
        assert_eq!((after(0), after(5), after(6), after(8), after(9), after(u64::MAX)), (vec![5, 6, 9], vec![6, 9], vec![9], vec![9], vec![], vec![]));
    }
}
