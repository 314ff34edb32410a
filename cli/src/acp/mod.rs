//! `sna acp`: the host as an Agent Client Protocol agent over stdio (protocol version 1, through
//! the `agent-client-protocol` crate). An editor lists every stored session, opens any of them
//! (its blocks replayed as `session/update`s) and continues it in whichever runtime it picks; the
//! runtime's process lives between prompts.
//!
//! Conversion only: how a session is started, resumed, replayed or switched, and what a permission
//! request is, is the host's (`sna_history::host`). Host calls block, so they run on tokio's
//! blocking pool; a prompt runs in a task of its own, so that `session/cancel` and the answers to
//! `session/request_permission` get through while it runs. stdout carries only the protocol; logs
//! go to stderr. The editor's `fs/*` and `terminal/*` methods are not used: the runtimes read,
//! write and run in the session's directory themselves. MCP servers the editor names are not
//! passed on (the runtimes use their own configuration).

mod updates;

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol::v1::schema::{
    self as acp, AgentCapabilities, AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, CancelNotification, ConfigOptionUpdate, ContentBlock, ContentChunk, Implementation, InitializeRequest, InitializeResponse,
    ListSessionsRequest, ListSessionsResponse, LoadSessionRequest, LoadSessionResponse, NewSessionRequest, NewSessionResponse, PermissionOption, PermissionOptionKind,
    PromptCapabilities, PromptRequest, PromptResponse, RequestPermissionOutcome, RequestPermissionRequest, ResumeSessionRequest, ResumeSessionResponse,
    SessionCapabilities, SessionConfigOption, SessionConfigOptionCategory, SessionConfigOptionValue, SessionConfigSelectOption, SessionInfo, SessionListCapabilities,
    SessionNotification, SessionResumeCapabilities, SessionUpdate, SetSessionConfigOptionRequest, SetSessionConfigOptionResponse, StopReason, ToolCallStatus,
    ToolCallUpdate, ToolCallUpdateFields, UnstructuredCommandInput,
};
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::{on_receive_notification, on_receive_request, Agent, Client, Stdio};
use serde_json::{json, Value};
use sna_history::host::{Agent as HostAgent, AgentEvent, Host, HostOptions, StartOptions};
use sna_history::{Code, Runtime, Store};

/// What `sna acp` was asked for.
pub struct Config {
    /// The history database (a file or a `postgres://` URL).
    pub db: PathBuf,
    /// The runtime of new sessions (default: the first one installed).
    pub runtime: Option<Runtime>,
    /// The model of new sessions (default: the runtime's own).
    pub model: Option<String>,
    /// True: every tool runs, nobody is asked.
    pub bypass: bool,
    /// The executables of the runtimes.
    pub bins: BTreeMap<Runtime, PathBuf>,
    /// The `HOME` of the runtime processes.
    pub home: Option<PathBuf>,
    /// How many sessions one `session/list` page holds.
    pub page: usize,
}

/// What the editor chose for one session.
#[derive(Debug, Clone)]
struct Choice {
    runtime: Option<Runtime>,
    model: Option<String>,
    bypass: bool,
    cwd: PathBuf,
}

struct State {
    host: Host,
    config: Config,
    choices: Mutex<HashMap<String, Choice>>,
    /// The sessions with a prompt running, and whether it was cancelled.
    prompting: Mutex<HashMap<String, bool>>,
}

type Shared = Arc<State>;

const DEFAULT_MODEL: &str = "default";

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// A store error as a JSON-RPC error: unknown ids are resource-not-found, bad input is invalid
/// params naming the field, a runtime's failure says what happened; anything else is an internal
/// error whose details go to stderr only.
fn rpc_error(e: sna_history::Error) -> agent_client_protocol::Error {
    let message = e.to_string();
    match e.code() {
        Code::NotFound => error(acp::Error::resource_not_found(None).into(), message, json!({})),
        Code::InvalidInput | Code::Unsupported => error(agent_client_protocol::Error::invalid_params(), message, json!({})),
        Code::Runtime | Code::Timeout | Code::Conflict | Code::Closed => error(agent_client_protocol::Error::internal_error(), message, json!({})),
        _ => {
            eprintln!("sna acp: {message}");
            agent_client_protocol::Error::internal_error()
        }
    }
}

/// An error of `kind`'s code whose message is `message`, also given in `data` (beside `data`'s
/// own keys), where clients that show only the data find it.
fn error(kind: agent_client_protocol::Error, message: String, mut data: Value) -> agent_client_protocol::Error {
    data["message"] = Value::String(message.clone());
    agent_client_protocol::Error::new(kind.code, message).data(data)
}

fn invalid(field: &str, message: impl std::fmt::Display) -> agent_client_protocol::Error {
    error(agent_client_protocol::Error::invalid_params(), format!("{field}: {message}"), json!({"field": field}))
}

fn unknown_session(id: &str) -> agent_client_protocol::Error {
    error(acp::Error::session_not_found(id.to_string()).into(), format!("no session {id:?} in the store"), json!({"sessionId": id}))
}

/// Runs a blocking host call on the blocking pool.
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> sna_history::Result<T> + Send + 'static) -> Result<T, agent_client_protocol::Error> {
    match tokio::task::spawn_blocking(f).await {
        Ok(result) => result.map_err(rpc_error),
        Err(e) => {
            eprintln!("sna acp: a host call failed: {e}");
            Err(agent_client_protocol::Error::internal_error())
        }
    }
}

impl State {
    fn runtimes(&self) -> Vec<Runtime> {
        Runtime::ALL.iter().copied().filter(|&r| self.host.installed(r)).collect()
    }

    fn default_runtime(&self) -> Option<Runtime> {
        self.config.runtime.or_else(|| self.runtimes().first().copied())
    }

    /// The config options of a session: its runtime, model and permission mode.
    fn options(&self, choice: &Choice, models: &[String]) -> Vec<SessionConfigOption> {
        let mut runtimes = self.runtimes();
        if let Some(r) = choice.runtime.filter(|r| !runtimes.contains(r)) {
            runtimes.push(r);
        }
        let runtime_value = choice.runtime.map_or("none".to_string(), |r| r.as_str().to_string());
        let mut runtime_options: Vec<SessionConfigSelectOption> = runtimes.iter().map(|r| SessionConfigSelectOption::new(r.as_str(), r.display_name())).collect();
        if choice.runtime.is_none() {
            runtime_options.push(SessionConfigSelectOption::new("none", "No runtime installed"));
        }
        let mut model_values = vec![DEFAULT_MODEL.to_string()];
        for m in models.iter().chain(self.config.model.iter()).chain(choice.model.iter()) {
            if !model_values.contains(m) {
                model_values.push(m.clone());
            }
        }
        let model_options: Vec<SessionConfigSelectOption> = model_values.iter().map(|m| SessionConfigSelectOption::new(m.clone(), if m == DEFAULT_MODEL { "The runtime's default".to_string() } else { m.clone() })).collect();
        let mode = if choice.bypass { "bypass" } else { "default" };
        vec![
            SessionConfigOption::select("runtime", "Runtime", runtime_value, runtime_options).description("The coding agent that answers the next prompt; a change replays the whole history into it."),
            SessionConfigOption::select("model", "Model", choice.model.clone().unwrap_or_else(|| DEFAULT_MODEL.into()), model_options)
                .description("The model of the runtime (OpenCode: provider/model).")
                .category(SessionConfigOptionCategory::Model),
            SessionConfigOption::select(
                "permission_mode",
                "Permissions",
                mode,
                vec![SessionConfigSelectOption::new("default", "Ask before tools run"), SessionConfigSelectOption::new("bypass", "Run every tool without asking")],
            )
            .category(SessionConfigOptionCategory::Mode),
        ]
    }

    /// The models a session ran with (for the model option's list).
    fn models(&self, id: &str) -> Vec<String> {
        let Ok(session) = self.host.store().session(id) else { return Vec::new() };
        session.info().map(|i| i.models).unwrap_or_default()
    }

    fn choice(&self, id: &str) -> Option<Choice> {
        lock(&self.choices).get(id).cloned()
    }

    /// The choice of a stored session opened in this process: the runtime and model it last ran
    /// with, else the defaults.
    fn open(&self, id: &str, cwd: PathBuf) -> Result<Choice, agent_client_protocol::Error> {
        let session = match self.host.store().session(id) {
            Ok(session) => session,
            Err(e) if e.code() == Code::NotFound => return Err(unknown_session(id)),
            Err(e) => return Err(rpc_error(e)),
        };
        if let Some(mut choice) = self.choice(id) {
            choice.cwd = cwd;
            lock(&self.choices).insert(id.to_string(), choice.clone());
            return Ok(choice);
        }
        drop(session);
        let last = self.host.last_run(id).map_err(rpc_error)?;
        let (runtime, model) = match last {
            Some((runtime, model)) if self.host.installed(runtime) => (Some(runtime), model),
            _ => (self.default_runtime(), self.config.model.clone()),
        };
        let choice = Choice { runtime, model, bypass: self.config.bypass, cwd };
        lock(&self.choices).insert(id.to_string(), choice.clone());
        Ok(choice)
    }
}

/// Runs the agent until the editor closes stdin.
pub fn run(config: Config) -> Result<(), String> {
    let store = Store::open(&config.db).map_err(|e| e.to_string())?;
    let host = Host::new(store, HostOptions { bins: config.bins.clone(), env: BTreeMap::new(), home: config.home.clone() });
    let state: Shared = Arc::new(State { host, config, choices: Mutex::new(HashMap::new()), prompting: Mutex::new(HashMap::new()) });
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().map_err(|e| format!("cannot start: {e}"))?;
    let host = state.host.clone();
    let result = runtime.block_on(serve(state));
    host.close();
    result.map_err(|e| format!("the ACP connection failed: {e}"))
}

async fn serve(state: Shared) -> Result<(), agent_client_protocol::Error> {
    let (s1, s2, s3, s4, s5, s6, s7, s8) = (state.clone(), state.clone(), state.clone(), state.clone(), state.clone(), state.clone(), state.clone(), state);
    Agent
        .v1()
        .name("sna")
        .on_receive_request(
            async move |request: InitializeRequest, responder, _cx| {
                let capabilities = AgentCapabilities::new()
                    .load_session(true)
                    .prompt_capabilities(PromptCapabilities::new().image(true).embedded_context(true))
                    .session_capabilities(SessionCapabilities::new().list(SessionListCapabilities::new()).resume(SessionResumeCapabilities::new()));
                let _ = &s1;
                responder.respond(
                    InitializeResponse::new(request.protocol_version)
                        .agent_capabilities(capabilities)
                        .agent_info(Implementation::new("sna", env!("CARGO_PKG_VERSION")).title("sna-history"))
                        .auth_methods(vec![]),
                )
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |request: NewSessionRequest, responder, cx: ConnectionTo<Client>| {
                let state = s2.clone();
                let result = async {
                    if !request.cwd.is_absolute() {
                        return Err(invalid("cwd", "must be an absolute path"));
                    }
                    let cwd = request.cwd.clone();
                    let st = state.clone();
                    let info = blocking(move || st.host.store().create_session(sna_history::NewSession::new().cwd(cwd.display().to_string()))?.info()).await?;
                    let choice = Choice { runtime: state.default_runtime(), model: state.config.model.clone(), bypass: state.config.bypass, cwd: request.cwd };
                    lock(&state.choices).insert(info.id.clone(), choice.clone());
                    Ok(NewSessionResponse::new(info.id.clone()).config_options(state.options(&choice, &[])))
                }
                .await;
                match result {
                    Ok(response) => {
                        let id = response.session_id.clone();
                        responder.respond(response)?;
                        cx.send_notification(SessionNotification::new(id, commands_update()))
                    }
                    Err(e) => responder.respond_with_error(e),
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |request: ListSessionsRequest, responder, _cx| {
                let state = s3.clone();
                let result = list(state, request).await;
                match result {
                    Ok(response) => responder.respond(response),
                    Err(e) => responder.respond_with_error(e),
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |request: LoadSessionRequest, responder, cx: ConnectionTo<Client>| {
                let state = s4.clone();
                let result = load(state, request.session_id.0.to_string(), request.cwd, Some(cx)).await;
                match result {
                    Ok(options) => responder.respond(LoadSessionResponse::new().config_options(options)),
                    Err(e) => responder.respond_with_error(e),
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |request: ResumeSessionRequest, responder, _cx| {
                let state = s5.clone();
                let result = load(state, request.session_id.0.to_string(), request.cwd, None).await;
                match result {
                    Ok(options) => responder.respond(ResumeSessionResponse::new().config_options(options)),
                    Err(e) => responder.respond_with_error(e),
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |request: SetSessionConfigOptionRequest, responder, cx: ConnectionTo<Client>| {
                let state = s6.clone();
                let asked = request.clone();
                let result = tokio::task::spawn_blocking(move || set_option(&state, &asked)).await.unwrap_or_else(|_| Err(agent_client_protocol::Error::internal_error()));
                match result {
                    Ok(options) => {
                        let update = SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(options.clone()));
                        cx.send_notification(SessionNotification::new(request.session_id.clone(), update))?;
                        responder.respond(SetSessionConfigOptionResponse::new(options))
                    }
                    Err(e) => responder.respond_with_error(e),
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |request: PromptRequest, responder, cx: ConnectionTo<Client>| {
                let state = s7.clone();
                let task_cx = cx.clone();
                // Marked running here, in the order messages arrive, so that a cancel right
                // behind the prompt finds it.
                let id = request.session_id.0.to_string();
                {
                    let mut prompting = lock(&state.prompting);
                    if prompting.contains_key(&id) {
                        let message = "a prompt is running in this session: wait for its answer, or cancel it".to_string();
                        return responder.respond_with_error(error(agent_client_protocol::Error::invalid_request(), message, json!({})));
                    }
                    prompting.insert(id, false);
                }
                cx.spawn(async move {
                    match prompt(state, request, task_cx).await {
                        Ok(reason) => responder.respond(PromptResponse::new(reason)),
                        Err(e) => responder.respond_with_error(e),
                    }
                })
            },
            on_receive_request!(),
        )
        .on_receive_notification(
            async move |notification: CancelNotification, _cx| {
                // The prompt's own task interrupts the turn (once it runs): nothing blocks here.
                let id = notification.session_id.0.to_string();
                if let Some(cancelled) = lock(&s8.prompting).get_mut(&id) {
                    *cancelled = true;
                }
                Ok(())
            },
            on_receive_notification!(),
        )
        .connect_to(Stdio::new())
        .await
}

/// `session/list`: every stored session, newest first, a page at a time (the cursor is the
/// position of the next page).
async fn list(state: Shared, request: ListSessionsRequest) -> Result<ListSessionsResponse, agent_client_protocol::Error> {
    let start = match &request.cursor {
        None => 0,
        Some(cursor) => cursor.parse::<usize>().map_err(|_| invalid("cursor", format!("{cursor:?} is not a cursor this agent gave")))?,
    };
    let page = state.config.page.max(1);
    let cwd = request.cwd.map(|c| c.display().to_string());
    let st = state.clone();
    let (infos, more) = blocking(move || {
        let mut infos = st.host.store().sessions()?;
        infos.retain(|i| cwd.is_none() || i.cwd == cwd);
        infos.sort_by(|a, b| b.updated_at.cmp(&a.updated_at).then_with(|| a.id.cmp(&b.id)));
        let more = infos.len() > start + page;
        let infos: Vec<_> = infos.into_iter().skip(start).take(page).collect();
        let mut out = Vec::new();
        for info in infos {
            let title = match &info.title {
                Some(title) => Some(title.clone()),
                None => first_words(&st.host.store().session(&info.id)?)?,
            };
            out.push((info, title));
        }
        Ok((out, more))
    })
    .await?;
    let sessions = infos
        .into_iter()
        .map(|(info, title)| SessionInfo::new(info.id.clone(), PathBuf::from(info.cwd.clone().unwrap_or_else(|| "/".into()))).title(title).updated_at(info.updated_at.to_rfc3339()))
        .collect();
    Ok(ListSessionsResponse::new(sessions).next_cursor(more.then(|| (start + page).to_string())))
}

/// A title for a session without one: the start of its first message the person wrote.
fn first_words(session: &sna_history::Session) -> sna_history::Result<Option<String>> {
    let len = session.len()?;
    let mut from = 0;
    while from < len {
        let to = (from + 64).min(len);
        for block in session.blocks_range(from, to)? {
            if block.actor == sna_history::Actor::User && block.kind == sna_history::Kind::Text && !block.is_bookkeeping() {
                let line = block.content.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
                let mut title: String = line.chars().take(80).collect();
                if line.chars().count() > 80 {
                    title.push('…');
                }
                if !title.is_empty() {
                    return Ok(Some(title));
                }
            }
        }
        from = to;
    }
    Ok(None)
}

/// `session/load` (with `cx`: every block replayed first) and `session/resume` (without).
async fn load(state: Shared, id: String, cwd: PathBuf, cx: Option<ConnectionTo<Client>>) -> Result<Vec<SessionConfigOption>, agent_client_protocol::Error> {
    let st = state.clone();
    let sid = id.clone();
    let choice = tokio::task::spawn_blocking(move || st.open(&sid, cwd)).await.map_err(|_| agent_client_protocol::Error::internal_error())??;
    if let Some(cx) = cx {
        let st = state.clone();
        let sid = id.clone();
        let updates = blocking(move || {
            let session = st.host.store().session(&sid)?;
            let blocks = session.blocks()?;
            Ok(blocks.iter().flat_map(|b| updates::block_updates(&session, b)).collect::<Vec<_>>())
        })
        .await?;
        for update in updates {
            cx.send_notification(SessionNotification::new(id.clone(), update))?;
        }
        cx.send_notification(SessionNotification::new(id.clone(), commands_update()))?;
    }
    let st = state.clone();
    let models = tokio::task::spawn_blocking(move || st.models(&id)).await.unwrap_or_default();
    Ok(state.options(&choice, &models))
}

/// The commands a prompt may start with: `/compact [instructions]`.
fn commands_update() -> SessionUpdate {
    let compact = AvailableCommand::new(
        COMPACT,
        "Summarize the conversation so far with the runtime's own compaction; a later switch to another runtime starts from that summary",
    )
    .input(AvailableCommandInput::Unstructured(UnstructuredCommandInput::new("what the summary should keep (optional)")));
    SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(vec![compact]))
}

/// The command `/compact`.
const COMPACT: &str = "compact";

/// The instructions of a prompt that is the `/compact` command (empty when it has none); `None`
/// for any other prompt.
fn compact_command(text: &str) -> Option<&str> {
    let rest = text.trim_start().strip_prefix('/')?.strip_prefix(COMPACT)?;
    (rest.is_empty() || rest.starts_with(char::is_whitespace)).then(|| rest.trim())
}

/// `session/set_config_option`: `runtime`, `model` or `permission_mode`; the next prompt uses it.
fn set_option(state: &State, request: &SetSessionConfigOptionRequest) -> Result<Vec<SessionConfigOption>, agent_client_protocol::Error> {
    let id = request.session_id.0.to_string();
    let mut choice = state.choice(&id).ok_or_else(|| unknown_session(&id))?;
    let value = match &request.value {
        SessionConfigOptionValue::ValueId { value } => value.0.to_string(),
        _ => return Err(invalid("value", "a select option's value (a string) is expected")),
    };
    match &*request.config_id.0 {
        "runtime" => {
            let runtime: Runtime = value.parse().map_err(|e: sna_history::Error| invalid("value", e))?;
            if !state.host.installed(runtime) {
                return Err(invalid("value", format!("{} is not installed here ({} not found)", runtime.display_name(), state.host.program(runtime).display())));
            }
            if choice.runtime != Some(runtime) {
                // Another runtime's model name means nothing to this one.
                choice.model = state.config.model.clone().filter(|_| state.config.runtime == Some(runtime));
            }
            choice.runtime = Some(runtime);
        }
        "model" => {
            if value.trim().is_empty() {
                return Err(invalid("value", "a model name is expected"));
            }
            choice.model = (value != DEFAULT_MODEL).then_some(value);
        }
        "permission_mode" => {
            choice.bypass = match value.as_str() {
                "bypass" => true,
                "default" => false,
                other => return Err(invalid("value", format!("{other:?}: expected default or bypass"))),
            };
        }
        other => return Err(invalid("configId", format!("{other:?}: expected runtime, model or permission_mode"))),
    }
    // What the runtime would refuse at its start (Claude Code bypassing permissions as root) is
    // refused now, and the choice stays as it was.
    if let (Some(runtime), true) = (choice.runtime, choice.bypass) {
        state.host.check(&start_options(runtime, &choice)).map_err(rpc_error)?;
    }
    lock(&state.choices).insert(id.clone(), choice.clone());
    Ok(state.options(&choice, &state.models(&id)))
}

/// The agent that runs the next prompt of a session: the live process when it runs the chosen
/// runtime (a new model is set in place), a switch when the runtime differs, a start otherwise.
fn agent_for(state: &State, id: &str, choice: &Choice) -> sna_history::Result<HostAgent> {
    let runtime = choice.runtime.ok_or_else(|| sna_history::Error::invalid_field("runtime", "no runtime is installed: install one (claude, codex, opencode, gemini, pi) or name it with --bin"))?;
    let mode = choice.bypass.then(|| "bypassPermissions".to_string());
    if let Some(agent) = state.host.agent(id) {
        if agent.permissions() != (mode.clone(), !choice.bypass) {
            // The permission mode is a command-line choice of the process: the next one gets it.
            agent.kill()?;
            agent.set_permissions(mode, !choice.bypass);
        }
        let status = agent.status();
        if status.runtime != runtime || (choice.model.is_none() && status.model.is_some()) {
            // Another runtime, or back to the runtime's own model (which no call names).
            agent.switch(runtime, choice.model.clone())?;
        } else if let Some(model) = choice.model.as_deref().filter(|m| status.model.as_deref() != Some(*m)) {
            agent.set_model(model)?;
        }
        return Ok(agent);
    }
    state.host.start(id, start_options(runtime, choice))
}

/// The options a start in `runtime` takes from the session's choice.
fn start_options(runtime: Runtime, choice: &Choice) -> StartOptions {
    let mut options = StartOptions::new(runtime);
    options.model = choice.model.clone();
    options.cwd = Some(choice.cwd.clone());
    options.permission_mode = choice.bypass.then(|| "bypassPermissions".to_string());
    options.ask_permissions = !choice.bypass;
    options
}

/// Text that arrived as deltas since the last block of its kind, so that the block does not send
/// it twice.
#[derive(Default)]
struct Streamed {
    text: String,
    thought: String,
}

/// `session/prompt`: the message goes to the agent; its events stream to the editor until the
/// turn ends; permission requests go to the editor and its answers back.
async fn prompt(state: Shared, request: PromptRequest, cx: ConnectionTo<Client>) -> Result<StopReason, agent_client_protocol::Error> {
    let id = request.session_id.0.to_string();
    let result = run_prompt(&state, &id, request, cx).await;
    lock(&state.prompting).remove(&id);
    result
}

fn cancelled(state: &State, id: &str) -> bool {
    lock(&state.prompting).get(id).copied().unwrap_or(false)
}

async fn run_prompt(state: &Shared, id: &str, request: PromptRequest, cx: ConnectionTo<Client>) -> Result<StopReason, agent_client_protocol::Error> {
    let id = id.to_string();
    let (text, images) = updates::prompt_message(&request.prompt).map_err(|m| invalid(m.split(':').next().unwrap_or("prompt"), m.clone()))?;
    let choice = state.choice(&id).ok_or_else(|| unknown_session(&id))?;
    let st = state.clone();
    let sid = id.clone();
    let agent = blocking(move || agent_for(&st, &sid, &choice)).await?;
    if cancelled(state, &id) {
        return Ok(StopReason::Cancelled);
    }
    let since = agent.status().cursor;
    let (done_tx, mut done_rx) = tokio::sync::oneshot::channel();
    let sender = agent.clone();
    std::thread::Builder::new()
        .name("sna-acp-turn".into())
        .spawn(move || {
            let result = match compact_command(&text).filter(|_| images.is_empty()) {
                Some(instructions) => sender.compact((!instructions.is_empty()).then_some(instructions)),
                None => sender.send(&text, &images),
            };
            let _ = done_tx.send(result);
        })
        .map_err(|e| rpc_error(sna_history::Error::Internal(format!("cannot start a turn: {e}"))))?;
    let mut cursor = since;
    let mut streamed = Streamed::default();
    let mut interrupted = false;
    let outcome = loop {
        // A cancel interrupts the turn once it runs (an interrupt before that would find none).
        if !interrupted && cancelled(state, &id) && agent.status().busy {
            interrupted = true;
            let stopping = agent.clone();
            tokio::task::spawn_blocking(move || {
                if let Err(e) = stopping.interrupt() {
                    eprintln!("sna acp: cannot interrupt: {e}");
                }
            });
        }
        let finished = match done_rx.try_recv() {
            Ok(result) => Some(result),
            Err(tokio::sync::oneshot::error::TryRecvError::Empty) => None,
            Err(_) => Some(Err(sna_history::Error::Internal("the turn's thread ended without an answer".into()))),
        };
        let waiter = agent.clone();
        let wait = if finished.is_some() { Duration::ZERO } else { Duration::from_millis(200) };
        let events = tokio::task::spawn_blocking(move || waiter.wait_events(cursor, wait)).await.unwrap_or_default();
        for event in events {
            cursor = event.cursor;
            forward(state, &agent, &id, &event, &mut streamed, &cx).await?;
        }
        if let Some(result) = finished {
            break result;
        }
    };
    if cancelled(state, &id) {
        // The editor cancelled: whatever the turn ended with, the answer is `cancelled` (ACP).
        return Ok(StopReason::Cancelled);
    }
    match outcome {
        Ok(turn) => Ok(match turn.stop_reason() {
            "cancelled" => StopReason::Cancelled,
            "max_tokens" => StopReason::MaxTokens,
            "refusal" => StopReason::Refusal,
            _ => StopReason::EndTurn,
        }),
        Err(e) => Err(rpc_error(e)),
    }
}

fn chunk(text: String) -> ContentChunk {
    ContentChunk::new(ContentBlock::from(text))
}

/// The rest of a block's text once `streamed` (what its deltas brought) is taken off.
/// Deltas that ran ahead of their block (Codex's rollout lags its notifications) stay for the next
/// block.
fn rest(content: &str, streamed: &mut String) -> Option<String> {
    if let Some(after) = streamed.strip_prefix(content).filter(|_| !content.is_empty()) {
        *streamed = after.to_string();
        return None;
    }
    let before = std::mem::take(streamed);
    let rest = if before.is_empty() { content } else { content.strip_prefix(before.as_str()).unwrap_or("") };
    (!rest.is_empty()).then(|| rest.to_string())
}

/// One host event as what the editor sees.
async fn forward(state: &State, agent: &HostAgent, id: &str, event: &AgentEvent, streamed: &mut Streamed, cx: &ConnectionTo<Client>) -> Result<(), agent_client_protocol::Error> {
    let notify = |update: SessionUpdate| cx.send_notification(SessionNotification::new(id.to_string(), update));
    match event.kind.as_str() {
        "assistant_delta" => {
            let text = event.data["text"].as_str().unwrap_or("").to_string();
            streamed.text.push_str(&text);
            notify(SessionUpdate::AgentMessageChunk(chunk(text)))?;
        }
        "thinking_delta" => {
            let text = event.data["text"].as_str().unwrap_or("").to_string();
            streamed.thought.push_str(&text);
            notify(SessionUpdate::AgentThoughtChunk(chunk(text)))?;
        }
        "assistant" | "thinking" | "tool_use" | "tool_result" | "error" => {
            if event.data.get("block").is_none() {
                return Ok(());
            }
            let Ok(block) = serde_json::from_value::<sna_history::Block>(event.data["block"].clone()) else { return Ok(()) };
            if block.is_bookkeeping() {
                return Ok(());
            }
            match event.kind.as_str() {
                "assistant" => {
                    if let Some(text) = rest(&block.content, &mut streamed.text) {
                        notify(SessionUpdate::AgentMessageChunk(chunk(text)))?;
                    }
                }
                "thinking" => {
                    if let Some(text) = rest(&block.content, &mut streamed.thought) {
                        notify(SessionUpdate::AgentThoughtChunk(chunk(text)))?;
                    }
                }
                _ => {
                    let session = agent.session().clone();
                    for update in updates::block_updates(&session, &block) {
                        notify(update)?;
                    }
                }
            }
        }
        "permission_needed" => ask(state, agent, id, &event.data, cx).await?,
        "compacted" => {
            if let Ok(compaction) = serde_json::from_value::<sna_history::Compaction>(event.data["compaction"].clone()) {
                notify(SessionUpdate::AgentMessageChunk(chunk(format!("{}.", crate::text::compaction_label(&compaction)))))?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// A runtime's permission request as `session/request_permission`; the editor's choice goes back
/// (a cancelled request refuses the tool).
async fn ask(_state: &State, agent: &HostAgent, id: &str, data: &Value, cx: &ConnectionTo<Client>) -> Result<(), agent_client_protocol::Error> {
    let request_id = data["id"].as_str().unwrap_or("").to_string();
    if !agent.pending_permissions().contains(&request_id) {
        return Ok(()); // refused by an interrupt, or its process ended
    }
    let tool = data["tool"].as_str().unwrap_or("");
    let call_id = data["call_id"].as_str().map(str::to_string).unwrap_or_else(|| format!("permission-{request_id}"));
    let fields = ToolCallUpdateFields::new()
        .title(data["title"].as_str().unwrap_or(tool).to_string())
        .kind(updates::tool_kind(tool))
        .status(ToolCallStatus::Pending)
        .raw_input(data["input"].clone());
    let options = vec![
        PermissionOption::new("allow", "Allow", PermissionOptionKind::AllowOnce),
        PermissionOption::new("reject", "Reject", PermissionOptionKind::RejectOnce),
    ];
    let request = RequestPermissionRequest::new(id.to_string(), ToolCallUpdate::new(call_id, fields), options);
    let answer = cx.send_request(request).block_task();
    tokio::pin!(answer);
    // The dialog is dropped (its request cancelled) when nothing waits for it any more.
    let answer = loop {
        tokio::select! {
            answer = &mut answer => break Some(answer),
            _ = tokio::time::sleep(Duration::from_millis(200)) => {
                if !agent.pending_permissions().contains(&request_id) {
                    break None;
                }
            }
        }
    };
    let allow = match answer {
        None => return Ok(()),
        Some(Ok(response)) => match response.outcome {
            RequestPermissionOutcome::Selected(selected) => &*selected.option_id.0 == "allow",
            _ => false,
        },
        Some(Err(e)) => {
            eprintln!("sna acp: the permission request failed ({e}); the tool is refused");
            false
        }
    };
    let answering = agent.clone();
    let result = tokio::task::spawn_blocking(move || answering.answer_permission(&request_id, allow)).await;
    if let Ok(Err(e)) = result {
        // Answered already (an interrupt refuses what waits) or the process ended: nothing waits.
        eprintln!("sna acp: {e}");
    }
    Ok(())
}
