//! The agent routes (`/agent/...` but the sessions'): start, send, resume, restart, interrupt,
//! kill, set the model, compact, and its status. Each names its session with `?session=ID`
//! (default `default`); the host decides everything, these only convert.

use axum::body::Body;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use sna_history::host::{Agent, AgentEvent, Image};

use super::answer::{blocking, ok, Answer};
use super::requests::{self, CompactBody, ModelBody, ResumeBody, SendBody, SendQuery, SessionQuery, StartBody};
use super::responses::{
    Activity, AgentConfig, AgentState, CompactAnswer, Compacted, CompactedStatus, Done, DoneStatus, ErrorBody, LastMessage, ModelAnswer, ModelSet, ModelStatus, SendAnswer, StartStatus,
    Started, TurnAnswer, TurnStatus,
};
use super::{ApiError, Shared};

/// Sends `text` in the background; the turn's output arrives on the event stream.
fn send_in_background(app: &Shared, agent: Agent, text: String, images: Vec<Image>) {
    let id = agent.session_id().to_string();
    if let Ok(mut pending) = app.pending.lock() {
        *pending.entry(id.clone()).or_default() += 1;
    }
    let app = app.clone();
    std::thread::spawn(move || {
        if let Err(error) = agent.send(&text, &images) {
            eprintln!("sna serve: session {id}: {error}");
        }
        if let Ok(mut pending) = app.pending.lock() {
            if let Some(n) = pending.get_mut(&id) {
                *n -= 1;
                if *n == 0 {
                    pending.remove(&id);
                }
            }
        }
    });
}

fn busy(app: &Shared, agent: &Agent) -> bool {
    agent.status().busy || app.pending.lock().map(|p| p.contains_key(agent.session_id())).unwrap_or(false)
}

/// The agent, with `via` and `replay` of the start event `via` when there is one.
fn started(agent: &Agent, status: StartStatus, via: Option<&AgentEvent>) -> Started {
    let mut answer = Started::new(agent, status);
    if let Some(event) = via {
        answer.via = Some(event.data.get("via").cloned().unwrap_or_default());
        answer.replay = Some(event.data.get("replay").cloned().unwrap_or_default());
    }
    answer
}

/// The last start event (`started`, `resumed`, `switched`) at or after `since`.
fn start_event(agent: &Agent, since: u64) -> Option<AgentEvent> {
    agent.events(since).into_iter().rev().find(|e| matches!(e.kind.as_str(), "started" | "resumed" | "switched"))
}

/// Starts the session's agent (the session is made when it does not exist). An agent that runs
/// is kept (`already_running`, and `prompt` goes to it) unless `force` is set.
#[utoipa::path(
    post,
    path = "/agent/start",
    tag = "agent",
    params(SessionQuery),
    request_body(content = Option<StartBody>, description = "An empty body is `{}`"),
    responses(
        (status = 200, description = "`started` or `already_running`", body = Started),
        (status = 400, description = "A bad body (a runtime that does not exist included)", body = ErrorBody),
        (status = 404, description = "The runtime's executable was not found", body = ErrorBody),
        (status = 502, description = "The runtime failed to start", body = ErrorBody),
        (status = 504, description = "The runtime did not answer in time", body = ErrorBody),
    )
)]
pub(crate) async fn start(State(app): State<Shared>, Query(q): Query<SessionQuery>, body: Body) -> Answer {
    let mut body: StartBody = requests::read(&app, body).await?;
    let options = body.options();
    let (force, prompt) = (body.force, body.prompt.take());
    let id = q.id();
    blocking(move || {
        if let Some(agent) = app.host.agent(&id) {
            if agent.status().alive {
                if !force {
                    if let Some(prompt) = prompt {
                        send_in_background(&app, agent.clone(), prompt, Vec::new());
                    }
                    return ok(Started::new(&agent, StartStatus::AlreadyRunning));
                }
                agent.kill()?;
            }
        }
        let agent = app.host.start(&id, options)?;
        if let Some(prompt) = prompt {
            send_in_background(&app, agent.clone(), prompt, Vec::new());
        }
        // `via` and `replay` of the start just made (its event is the agent's last start event).
        ok(started(&agent, StartStatus::Started, start_event(&agent, 0).as_ref()))
    })
    .await
}

/// Sends a message (and images) to the session's agent: at once, or with `wait=1` when the turn
/// ended.
#[utoipa::path(
    post,
    path = "/agent/send",
    tag = "agent",
    params(SendQuery),
    request_body = SendBody,
    responses(
        (status = 200, description = "`{status: sent}`, or the turn with `wait=1`", body = SendAnswer),
        (status = 400, description = "No message and no image, or a bad body", body = ErrorBody),
        (status = 404, description = "No agent was started in the session, or the runtime's executable was not found", body = ErrorBody),
        (status = 502, description = "The runtime failed", body = ErrorBody),
    )
)]
pub(crate) async fn send(State(app): State<Shared>, Query(q): Query<SendQuery>, body: Body) -> Answer {
    let body: SendBody = requests::read(&app, body).await?;
    let (message, images) = (body.message.unwrap_or_default(), body.images);
    if message.is_empty() && images.is_empty() {
        return Err(ApiError::bad_field("message", "give a message or an image"));
    }
    let id = q.session.unwrap_or_else(|| "default".into());
    let wait = q.wait.as_deref().is_some_and(|w| !matches!(w, "0" | "false" | ""));
    let agent = app.host.agent(&id).ok_or_else(|| {
        ApiError::new(StatusCode::NOT_FOUND, "NOT_FOUND", format!("no agent runs in the session {id:?}: start one with POST /agent/start"))
    })?;
    if !wait {
        send_in_background(&app, agent, message, images);
        return ok(SendAnswer::Sent(Done { status: DoneStatus::Sent }));
    }
    blocking(move || {
        let turn = agent.send(&message, &images)?;
        ok(SendAnswer::Turn(TurnAnswer {
            status: if turn.interrupted { TurnStatus::Interrupted } else { TurnStatus::Completed },
            text: turn.text,
            blocks: turn.blocks,
            usage: turn.usage,
            resumed_via: turn.resumed_via,
            replay: turn.replay,
        }))
    })
    .await
}

/// Resumes the session: the runtime's own resume when its thread holds the session, a replay of
/// the stored blocks otherwise.
#[utoipa::path(
    post,
    path = "/agent/resume",
    tag = "agent",
    params(SessionQuery),
    request_body(content = Option<ResumeBody>, description = "An empty body is `{}`"),
    responses(
        (status = 200, description = "`resumed`", body = Started),
        (status = 404, description = "No such session, or the runtime's executable was not found", body = ErrorBody),
        (status = 409, description = "Its agent runs", body = ErrorBody),
        (status = 502, description = "The runtime failed to start", body = ErrorBody),
    )
)]
pub(crate) async fn resume(State(app): State<Shared>, Query(q): Query<SessionQuery>, body: Body) -> Answer {
    let mut body: ResumeBody = requests::read(&app, body).await?;
    let options = body.options();
    let prompt = body.prompt.take();
    let id = q.id();
    blocking(move || {
        let since = app.host.agent(&id).map(|a| a.status().cursor).unwrap_or(0);
        let agent = app.host.resume(&id, options)?;
        if let Some(prompt) = prompt {
            send_in_background(&app, agent.clone(), prompt, Vec::new());
        }
        ok(started(&agent, StartStatus::Resumed, start_event(&agent, since).as_ref()))
    })
    .await
}

/// Kill, then start again: the runtime's own resume when the runtime is unchanged and its thread
/// holds the session, a replay otherwise (a new runtime or model is a switch).
#[utoipa::path(
    post,
    path = "/agent/restart",
    tag = "agent",
    params(SessionQuery),
    request_body(content = Option<ResumeBody>, description = "An empty body is `{}`"),
    responses(
        (status = 200, description = "`restarted`", body = Started),
        (status = 404, description = "No such session, or the runtime's executable was not found", body = ErrorBody),
        (status = 502, description = "The runtime failed to start", body = ErrorBody),
    )
)]
pub(crate) async fn restart(State(app): State<Shared>, Query(q): Query<SessionQuery>, body: Body) -> Answer {
    let mut body: ResumeBody = requests::read(&app, body).await?;
    let mut options = body.options();
    let prompt = body.prompt.take();
    let id = q.id();
    blocking(move || {
        let existing = app.host.agent(&id);
        let since = existing.as_ref().map(|a| a.status().cursor).unwrap_or(0);
        if let Some(agent) = &existing {
            let before = agent.status();
            agent.kill()?;
            // The same runtime keeps its model unless a new one is named.
            if options.runtime.is_none_or(|r| r == before.runtime) && options.model.is_none() {
                options.model = before.model;
            }
            if options.runtime.is_some_and(|r| r != before.runtime) || options.model != agent.status().model {
                let runtime = options.runtime.unwrap_or(before.runtime);
                agent.switch(runtime, options.model.clone())?;
                if let Some(prompt) = prompt {
                    send_in_background(&app, agent.clone(), prompt, Vec::new());
                }
                return ok(started(agent, StartStatus::Restarted, start_event(agent, since).as_ref()));
            }
        }
        let agent = app.host.resume(&id, options)?;
        if let Some(prompt) = prompt {
            send_in_background(&app, agent.clone(), prompt, Vec::new());
        }
        ok(started(&agent, StartStatus::Restarted, start_event(&agent, since).as_ref()))
    })
    .await
}

/// Runs `act` on the session's running agent: `{status: done}`, or `no_session` when none runs.
async fn on_running(app: Shared, id: String, done: DoneStatus, act: fn(&Agent) -> sna_history::Result<()>) -> Answer {
    blocking(move || match app.host.agent(&id).filter(|a| a.status().alive) {
        Some(agent) => {
            act(&agent)?;
            ok(Done { status: done })
        }
        None => ok(Done::NO_SESSION),
    })
    .await
}

/// Interrupts the agent's turn.
#[utoipa::path(
    post,
    path = "/agent/interrupt",
    tag = "agent",
    params(SessionQuery),
    responses((status = 200, description = "`interrupted`, or `no_session` when no agent runs", body = Done), (status = 502, description = "The runtime failed", body = ErrorBody))
)]
pub(crate) async fn interrupt(State(app): State<Shared>, Query(q): Query<SessionQuery>) -> Answer {
    on_running(app, q.id(), DoneStatus::Interrupted, Agent::interrupt).await
}

/// Ends the agent's process.
#[utoipa::path(
    post,
    path = "/agent/kill",
    tag = "agent",
    params(SessionQuery),
    responses((status = 200, description = "`killed`, or `no_session` when no agent runs", body = Done), (status = 502, description = "The runtime failed", body = ErrorBody))
)]
pub(crate) async fn kill(State(app): State<Shared>, Query(q): Query<SessionQuery>) -> Answer {
    on_running(app, q.id(), DoneStatus::Killed, Agent::kill).await
}

/// Asks the session's runtime to compact its conversation with its own mechanism (`instructions`
/// for the summary where it takes them) and waits for it: `{status: compacted, compaction}`, the
/// compaction as `/sessions/{id}/compactions` lists it; `no_session` when no agent runs.
#[utoipa::path(
    post,
    path = "/agent/compact",
    tag = "agent",
    params(SessionQuery),
    request_body(content = Option<CompactBody>, description = "An empty body is `{}`"),
    responses(
        (status = 200, description = "`compacted`, or `no_session` when no agent runs", body = CompactAnswer),
        (status = 400, description = "A bad body, or a runtime that cannot compact", body = ErrorBody),
        (status = 404, description = "The runtime's executable was not found", body = ErrorBody),
        (status = 502, description = "The runtime failed", body = ErrorBody),
        (status = 504, description = "The compaction did not end in time", body = ErrorBody),
    )
)]
pub(crate) async fn compact(State(app): State<Shared>, Query(q): Query<SessionQuery>, body: Body) -> Answer {
    let body: CompactBody = requests::read(&app, body).await?;
    let instructions = body.instructions.filter(|i| !i.trim().is_empty());
    let id = q.id();
    blocking(move || match app.host.agent(&id) {
        Some(agent) => {
            agent.compact(instructions.as_deref())?;
            let compaction = agent.session().compactions()?.pop();
            ok(CompactAnswer::Compacted(Compacted { status: CompactedStatus::Compacted, compaction }))
        }
        None => ok(CompactAnswer::NoSession(Done::NO_SESSION)),
    })
    .await
}

/// Changes the model of the running agent.
#[utoipa::path(
    post,
    path = "/agent/set-model",
    tag = "agent",
    params(SessionQuery),
    request_body = ModelBody,
    responses(
        (status = 200, description = "`updated`, or `no_session` when no agent was started", body = ModelAnswer),
        (status = 400, description = "No model, or a bad body", body = ErrorBody),
        (status = 502, description = "The runtime failed", body = ErrorBody),
    )
)]
pub(crate) async fn set_model(State(app): State<Shared>, Query(q): Query<SessionQuery>, body: Body) -> Answer {
    let body: ModelBody = requests::read(&app, body).await?;
    let model = body.model.filter(|m| !m.is_empty()).ok_or_else(|| ApiError::bad_field("model", "expected the model's name"))?;
    let id = q.id();
    blocking(move || match app.host.agent(&id) {
        Some(agent) => {
            agent.set_model(&model)?;
            ok(ModelAnswer::Updated(ModelSet { status: ModelStatus::Updated, model }))
        }
        None => ok(ModelAnswer::NoSession(Done::NO_SESSION)),
    })
    .await
}

/// The agent and its session: whether it runs, is busy, its runtime and model, the last message.
#[utoipa::path(
    get,
    path = "/agent/status",
    tag = "agent",
    params(SessionQuery),
    responses((status = 200, body = AgentState), (status = 404, description = "No such session and no agent", body = ErrorBody))
)]
pub(crate) async fn status(State(app): State<Shared>, Query(q): Query<SessionQuery>) -> Answer {
    let id = q.id();
    blocking(move || {
        let agent = app.host.agent(&id);
        let session = match app.host.store().session(&id) {
            Ok(session) => Some(session),
            Err(sna_history::Error::NotFound(_)) if agent.is_some() => None,
            Err(e) => return Err(e.into()),
        };
        let info = session.as_ref().map(|s| s.info()).transpose()?;
        let last = match &session {
            Some(s) => {
                let len = s.len()?;
                s.blocks_range(len.saturating_sub(50), len)?.into_iter().rev().find(|b| b.kind == sna_history::Kind::Text && b.actor != sna_history::Actor::System)
            }
            None => None,
        };
        let s = agent.as_ref().map(|a| a.status());
        let alive = s.as_ref().is_some_and(|s| s.alive);
        let agent_status = match &agent {
            Some(a) if alive && busy(&app, a) => Activity::Busy,
            Some(_) if alive => Activity::Idle,
            _ => Activity::Disconnected,
        };
        let provider = s.as_ref().map(|s| s.runtime.as_str());
        let model = s.as_ref().and_then(|s| s.model.clone());
        ok(AgentState {
            alive,
            agent_status,
            event_count: agent.as_ref().map(Agent::event_count).unwrap_or(0),
            message_count: info.as_ref().map(|i| i.block_count).unwrap_or(0),
            last_message: last.map(|b| LastMessage { seq: b.seq, actor: b.actor, content: b.content }),
            config: AgentConfig { provider, model: model.clone(), cwd: info.and_then(|i| i.cwd) },
            provider,
            model,
            pid: s.as_ref().and_then(|s| s.pid),
            spawns: s.as_ref().map(|s| s.spawns).unwrap_or(0),
            native_id: s.as_ref().and_then(|s| s.native_id.clone()),
            cursor: s.as_ref().map(|s| s.cursor),
            session_id: id,
        })
    })
    .await
}
