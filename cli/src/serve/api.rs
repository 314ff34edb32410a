//! The routes: SNA's agent API (`/agent/...`, every route with `?session=<id>`, default
//! `default`), the history routes (`/sessions/{id}/...`) and the UI's pages.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::Engine as _;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use sna_history::host::{Agent, AgentEvent, Image, ResumeOptions, StartOptions};
use sna_history::{Options, Runtime};

use super::{auth, pages, render, ApiError, Shared};
use crate::ui::session_json;

type Answer = Result<Response, ApiError>;

pub(crate) fn router(app: Shared) -> Router {
    Router::new()
        .route("/", get(pages::index))
        .route("/s/{id}", get(pages::index))
        .route("/login", get(pages::login_page).post(auth::login))
        .route("/assets/{name}", get(pages::asset))
        .route("/info", get(info))
        .route("/agent/sessions", get(list_sessions).post(create_session))
        .route("/agent/sessions/{id}", get(get_session).patch(update_session).delete(delete_session))
        .route("/agent/start", post(start))
        .route("/agent/send", post(send))
        .route("/agent/resume", post(resume))
        .route("/agent/restart", post(restart))
        .route("/agent/interrupt", post(interrupt))
        .route("/agent/kill", post(kill))
        .route("/agent/set-model", post(set_model))
        .route("/agent/compact", post(compact))
        .route("/agent/status", get(status))
        .route("/agent/events", get(events))
        .route("/sessions/{id}/blocks", get(blocks))
        .route("/sessions/{id}/native/{runtime}", get(native))
        .route("/sessions/{id}/embeds/{embed_id}", get(embed))
        .route("/sessions/{id}/switches", get(switches))
        .route("/sessions/{id}/compactions", get(compactions))
        .route("/sessions/{id}/usage", get(usage))
        .route("/ui/markdown", post(render::markdown))
        .fallback(|| async { ApiError::new(StatusCode::NOT_FOUND, "NOT_FOUND", "no such route") })
        .method_not_allowed_fallback(|| async { ApiError::new(StatusCode::METHOD_NOT_ALLOWED, "METHOD_NOT_ALLOWED", "this route does not take that method") })
        .layer(axum::middleware::from_fn_with_state(app.clone(), auth::guard))
        .with_state(app)
}

/// Runs blocking work (the host, the store) on the blocking pool; a panic there is a 500.
async fn blocking<T: Send + 'static>(work: impl FnOnce() -> Result<T, ApiError> + Send + 'static) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(work).await.map_err(|e| {
        eprintln!("sna serve: a request failed: {e}");
        ApiError::internal()
    })?
}

fn ok(value: Value) -> Answer {
    Ok(Json(value).into_response())
}

#[derive(Deserialize)]
struct SessionQuery {
    session: Option<String>,
}

impl SessionQuery {
    fn id(&self) -> String {
        self.session.clone().unwrap_or_else(|| "default".into())
    }
}

/// A JSON body's fields, read with errors that name the field.
struct Fields(Map<String, Value>);

impl Fields {
    /// Reads the body (up to the server's limit: 413 beyond it) as a JSON object; an empty body is `{}`.
    async fn read(app: &Shared, body: Body, allowed: &[&str]) -> Result<Fields, ApiError> {
        let bytes = axum::body::to_bytes(body, app.max_body).await.map_err(|_| {
            ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "TOO_LARGE", format!("the body is larger than {} bytes", app.max_body))
        })?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(Fields(Map::new()));
        }
        let value: Value = serde_json::from_slice(&bytes).map_err(|e| ApiError::bad_field("body", format!("not JSON: {e}")))?;
        let Value::Object(map) = value else { return Err(ApiError::bad_field("body", "expected a JSON object")) };
        if let Some(unknown) = map.keys().find(|k| !allowed.contains(&k.as_str())) {
            let hint = if unknown == "meta" { " (sna serve keeps no metadata)" } else { "" };
            return Err(ApiError::bad_field(unknown, format!("unknown field{hint}; this route takes {}", allowed.join(", "))));
        }
        Ok(Fields(map))
    }

    fn str(&self, name: &str) -> Result<Option<String>, ApiError> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(ApiError::bad_field(name, "expected a string")),
        }
    }

    fn bool(&self, name: &str) -> Result<bool, ApiError> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(ApiError::bad_field(name, "expected true or false")),
        }
    }

    fn strings(&self, name: &str) -> Result<Option<Vec<String>>, ApiError> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, v)| v.as_str().map(str::to_string).ok_or_else(|| ApiError::bad_field(&format!("{name}[{i}]"), "expected a string")))
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(_) => Err(ApiError::bad_field(name, "expected a list of strings")),
        }
    }

    /// A whole number above 0 (a count of tokens).
    fn count(&self, name: &str) -> Result<Option<u64>, ApiError> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) => n.as_u64().filter(|n| *n > 0).map(Some).ok_or_else(|| ApiError::bad_field(name, "expected a whole number above 0")),
            Some(_) => Err(ApiError::bad_field(name, "expected a whole number above 0")),
        }
    }

    fn runtime(&self, name: &str) -> Result<Option<Runtime>, ApiError> {
        self.str(name)?.map(|r| r.parse::<Runtime>().map_err(|e| ApiError::bad_field(name, e))).transpose()
    }

    /// `images: [{base64, mimeType}]` (`data`/`mime` accepted too).
    fn images(&self) -> Result<Vec<Image>, ApiError> {
        let Some(value) = self.0.get("images").filter(|v| !v.is_null()) else { return Ok(Vec::new()) };
        let Value::Array(items) = value else { return Err(ApiError::bad_field("images", "expected a list of {base64, mimeType}")) };
        items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let field = |key: &str, alt: &str| item.get(key).or_else(|| item.get(alt)).and_then(Value::as_str);
                let data = field("base64", "data").ok_or_else(|| ApiError::bad_field(&format!("images[{i}].base64"), "expected base64 text"))?;
                let mime = field("mimeType", "mime").ok_or_else(|| ApiError::bad_field(&format!("images[{i}].mimeType"), "expected a mime type such as image/png"))?;
                let data = data.split_once(";base64,").map(|(_, d)| d).unwrap_or(data);
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(data.trim())
                    .map_err(|e| ApiError::bad_field(&format!("images[{i}].base64"), format!("not base64: {e}")))?;
                let image = Image { mime: mime.to_string(), data: bytes };
                match image.check() {
                    Ok(()) => Ok(image),
                    Err(sna_history::Error::InvalidInput { message, location }) => {
                        let key = if location.field.as_deref() == Some("data") { "base64" } else { "mimeType" };
                        Err(ApiError::bad_field(&format!("images[{i}].{key}"), message))
                    }
                    Err(e) => Err(ApiError::bad_field(&format!("images[{i}]"), e)),
                }
            })
            .collect()
    }
}

// ---- sessions ------------------------------------------------------------------------------

async fn info(State(app): State<Shared>) -> Answer {
    let runtimes: Vec<Value> = Runtime::ALL
        .iter()
        .map(|&r| json!({"id": r.as_str(), "name": r.display_name(), "available": app.host.installed(r)}))
        .collect();
    ok(json!({"version": env!("CARGO_PKG_VERSION"), "auth": app.token.is_some(), "runtimes": runtimes}))
}

async fn list_sessions(State(app): State<Shared>) -> Answer {
    blocking(move || {
        let infos = app.host.store().sessions()?;
        let sessions: Vec<Value> = infos.iter().map(|i| session_json(i, app.host.agent(&i.id).as_ref())).collect();
        ok(json!({"sessions": sessions}))
    })
    .await
}

async fn get_session(State(app): State<Shared>, Path(id): Path<String>) -> Answer {
    blocking(move || {
        let info = app.host.store().session(&id)?.info()?;
        ok(session_json(&info, app.host.agent(&id).as_ref()))
    })
    .await
}

async fn create_session(State(app): State<Shared>, body: Body) -> Answer {
    let fields = Fields::read(&app, body, &["id", "label", "title", "cwd"]).await?;
    let mut new = sna_history::NewSession::new();
    if let Some(id) = fields.str("id")? {
        new = new.id(id);
    }
    if let Some(title) = fields.str("label")?.or(fields.str("title")?) {
        new = new.title(title);
    }
    if let Some(cwd) = fields.str("cwd")? {
        new = new.cwd(cwd);
    }
    blocking(move || {
        let session = app.host.store().create_session(new)?;
        let info = session.info()?;
        Ok((StatusCode::CREATED, Json(session_json(&info, None))).into_response())
    })
    .await
}

async fn update_session(State(app): State<Shared>, Path(id): Path<String>, body: Body) -> Answer {
    let fields = Fields::read(&app, body, &["label", "title", "cwd"]).await?;
    let title = fields.str("label")?.or(fields.str("title")?);
    let cwd = fields.str("cwd")?;
    blocking(move || {
        let info = app.host.store().update_session(&id, title.as_deref(), cwd.as_deref())?;
        ok(session_json(&info, app.host.agent(&id).as_ref()))
    })
    .await
}

async fn delete_session(State(app): State<Shared>, Path(id): Path<String>) -> Answer {
    blocking(move || {
        if let Some(agent) = app.host.agent(&id) {
            if agent.status().alive {
                return Err(ApiError::new(StatusCode::CONFLICT, "CONFLICT", format!("the session {id:?} is running: kill it first")));
            }
        }
        app.host.store().delete_session(&id)?;
        ok(json!({"status": "deleted", "id": id}))
    })
    .await
}

// ---- the agent ------------------------------------------------------------------------------

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

fn started_json(agent: &Agent, status: &str) -> Value {
    let s = agent.status();
    json!({"status": status, "provider": s.runtime.as_str(), "sessionId": s.session_id, "model": s.model, "pid": s.pid, "nativeId": s.native_id})
}

const START_FIELDS: &[&str] = &["provider", "model", "prompt", "cwd", "permissionMode", "configDir", "extraArgs", "force", "contextWindow"];
const RESUME_FIELDS: &[&str] = &["provider", "model", "prompt", "permissionMode", "configDir", "extraArgs", "contextWindow"];

async fn start(State(app): State<Shared>, Query(q): Query<SessionQuery>, body: Body) -> Answer {
    let fields = Fields::read(&app, body, START_FIELDS).await?;
    let mut options = StartOptions::new(fields.runtime("provider")?.unwrap_or(Runtime::ClaudeCode));
    options.model = fields.str("model")?;
    options.cwd = fields.str("cwd")?.map(Into::into);
    options.permission_mode = fields.str("permissionMode")?;
    options.home = fields.str("configDir")?.map(Into::into);
    options.args = fields.strings("extraArgs")?.unwrap_or_default();
    options.context_window = fields.count("contextWindow")?;
    let force = fields.bool("force")?;
    let prompt = fields.str("prompt")?;
    let id = q.id();
    blocking(move || {
        if let Some(agent) = app.host.agent(&id) {
            if agent.status().alive {
                if !force {
                    if let Some(prompt) = prompt {
                        send_in_background(&app, agent.clone(), prompt, Vec::new());
                    }
                    return ok(started_json(&agent, "already_running"));
                }
                agent.kill()?;
            }
        }
        let agent = app.host.start(&id, options)?;
        if let Some(prompt) = prompt {
            send_in_background(&app, agent.clone(), prompt, Vec::new());
        }
        // `via` and `replay` of the start just made (its event is the agent's last start event).
        ok(resumed_json(&agent, "started", start_event(&agent, 0).as_ref()))
    })
    .await
}

#[derive(Deserialize)]
struct SendQuery {
    session: Option<String>,
    wait: Option<String>,
}

async fn send(State(app): State<Shared>, Query(q): Query<SendQuery>, body: Body) -> Answer {
    let fields = Fields::read(&app, body, &["message", "images"]).await?;
    let message = fields.str("message")?.unwrap_or_default();
    let images = fields.images()?;
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
        return ok(json!({"status": "sent"}));
    }
    blocking(move || {
        let turn = agent.send(&message, &images)?;
        ok(json!({
            "status": if turn.interrupted { "interrupted" } else { "completed" },
            "text": turn.text,
            "blocks": turn.blocks,
            "usage": turn.usage,
            "resumedVia": turn.resumed_via,
            "replay": turn.replay,
        }))
    })
    .await
}

fn resume_options(fields: &Fields) -> Result<ResumeOptions, ApiError> {
    Ok(ResumeOptions {
        runtime: fields.runtime("provider")?,
        model: fields.str("model")?,
        permission_mode: fields.str("permissionMode")?,
        args: fields.strings("extraArgs")?,
        home: fields.str("configDir")?.map(Into::into),
        ask_permissions: None,
        context_window: fields.count("contextWindow")?,
    })
}

fn resumed_json(agent: &Agent, status: &str, via: Option<&AgentEvent>) -> Value {
    let mut answer = started_json(agent, status);
    if let Some(event) = via {
        answer["via"] = event.data.get("via").cloned().unwrap_or(Value::Null);
        answer["replay"] = event.data.get("replay").cloned().unwrap_or(Value::Null);
    }
    answer
}

/// The last start event (`started`, `resumed`, `switched`) at or after `since`.
fn start_event(agent: &Agent, since: u64) -> Option<AgentEvent> {
    agent.events(since).into_iter().rev().find(|e| matches!(e.kind.as_str(), "started" | "resumed" | "switched"))
}

async fn resume(State(app): State<Shared>, Query(q): Query<SessionQuery>, body: Body) -> Answer {
    let fields = Fields::read(&app, body, RESUME_FIELDS).await?;
    let options = resume_options(&fields)?;
    let prompt = fields.str("prompt")?;
    let id = q.id();
    blocking(move || {
        let since = app.host.agent(&id).map(|a| a.status().cursor).unwrap_or(0);
        let agent = app.host.resume(&id, options)?;
        if let Some(prompt) = prompt {
            send_in_background(&app, agent.clone(), prompt, Vec::new());
        }
        ok(resumed_json(&agent, "resumed", start_event(&agent, since).as_ref()))
    })
    .await
}

/// Kill, then start again: the runtime's own resume when the runtime is unchanged and its thread
/// holds the session, a replay otherwise (a new runtime or model is a switch).
async fn restart(State(app): State<Shared>, Query(q): Query<SessionQuery>, body: Body) -> Answer {
    let fields = Fields::read(&app, body, RESUME_FIELDS).await?;
    let mut options = resume_options(&fields)?;
    let prompt = fields.str("prompt")?;
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
                return ok(resumed_json(agent, "restarted", start_event(agent, since).as_ref()));
            }
        }
        let agent = app.host.resume(&id, options)?;
        if let Some(prompt) = prompt {
            send_in_background(&app, agent.clone(), prompt, Vec::new());
        }
        ok(resumed_json(&agent, "restarted", start_event(&agent, since).as_ref()))
    })
    .await
}

/// Runs `act` on the session's running agent: `{status: done}`, or `no_session` when none runs.
async fn on_running(app: Shared, id: String, done: &'static str, act: fn(&Agent) -> sna_history::Result<()>) -> Answer {
    blocking(move || match app.host.agent(&id).filter(|a| a.status().alive) {
        Some(agent) => {
            act(&agent)?;
            ok(json!({"status": done}))
        }
        None => ok(json!({"status": "no_session"})),
    })
    .await
}

async fn interrupt(State(app): State<Shared>, Query(q): Query<SessionQuery>) -> Answer {
    on_running(app, q.id(), "interrupted", Agent::interrupt).await
}

async fn kill(State(app): State<Shared>, Query(q): Query<SessionQuery>) -> Answer {
    on_running(app, q.id(), "killed", Agent::kill).await
}

/// Asks the session's runtime to compact its conversation with its own mechanism (`instructions`
/// for the summary where it takes them) and waits for it: `{status: compacted, compaction}`, the
/// compaction as `/sessions/{id}/compactions` lists it; `no_session` when no agent runs.
async fn compact(State(app): State<Shared>, Query(q): Query<SessionQuery>, body: Body) -> Answer {
    let fields = Fields::read(&app, body, &["instructions"]).await?;
    let instructions = fields.str("instructions")?.filter(|i| !i.trim().is_empty());
    let id = q.id();
    blocking(move || match app.host.agent(&id) {
        Some(agent) => {
            agent.compact(instructions.as_deref())?;
            let compaction = agent.session().compactions()?.pop();
            ok(json!({"status": "compacted", "compaction": compaction}))
        }
        None => ok(json!({"status": "no_session"})),
    })
    .await
}

async fn set_model(State(app): State<Shared>, Query(q): Query<SessionQuery>, body: Body) -> Answer {
    let fields = Fields::read(&app, body, &["model"]).await?;
    let model = fields.str("model")?.filter(|m| !m.is_empty()).ok_or_else(|| ApiError::bad_field("model", "expected the model's name"))?;
    let id = q.id();
    blocking(move || match app.host.agent(&id) {
        Some(agent) => {
            agent.set_model(&model)?;
            ok(json!({"status": "updated", "model": model}))
        }
        None => ok(json!({"status": "no_session"})),
    })
    .await
}

async fn status(State(app): State<Shared>, Query(q): Query<SessionQuery>) -> Answer {
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
            Some(a) if alive && busy(&app, a) => "busy",
            Some(_) if alive => "idle",
            _ => "disconnected",
        };
        ok(json!({
            "alive": alive,
            "agentStatus": agent_status,
            "sessionId": id,
            "eventCount": agent.as_ref().map(Agent::event_count).unwrap_or(0),
            "messageCount": info.as_ref().map(|i| i.block_count).unwrap_or(0),
            "lastMessage": last.map(|b| json!({"seq": b.seq, "actor": b.actor, "content": b.content})),
            "config": {
                "provider": s.as_ref().map(|s| s.runtime.as_str()),
                "model": s.as_ref().and_then(|s| s.model.clone()),
                "cwd": info.as_ref().and_then(|i| i.cwd.clone()),
            },
            "provider": s.as_ref().map(|s| s.runtime.as_str()),
            "model": s.as_ref().and_then(|s| s.model.clone()),
            "pid": s.as_ref().and_then(|s| s.pid),
            "spawns": s.as_ref().map(|s| s.spawns).unwrap_or(0),
            "nativeId": s.as_ref().and_then(|s| s.native_id.clone()),
            "cursor": s.as_ref().map(|s| s.cursor),
        }))
    })
    .await
}

// ---- events ---------------------------------------------------------------------------------

#[derive(Deserialize)]
struct EventsQuery {
    session: Option<String>,
    since: Option<String>,
}

/// An event as SNA's clients read it: `{type, cursor, timestamp, data, message?, delta?}`.
fn event_json(event: &AgentEvent) -> Value {
    let mut out = json!({"type": event.kind, "cursor": event.cursor, "timestamp": event.timestamp, "data": event.data});
    if let Some(text) = event.data.get("text").filter(|_| event.kind.ends_with("_delta")) {
        out["delta"] = text.clone();
    }
    if let Some(content) = event.data.get("block").and_then(|b| b.get("content")) {
        out["message"] = content.clone();
    } else if let Some(message) = event.data.get("message") {
        out["message"] = message.clone();
    }
    out
}

struct Subscription {
    app: Shared,
    session: String,
    cursor: u64,
    queue: VecDeque<AgentEvent>,
    agent: Option<Agent>,
}

/// `GET /agent/events`: every event after `since` (or `Last-Event-ID`; without either, from now
/// on), each with `id:` = its cursor, and keepalive comments while nothing happens.
async fn events(State(app): State<Shared>, Query(q): Query<EventsQuery>, headers: HeaderMap) -> Result<Response, ApiError> {
    let session = q.session.unwrap_or_else(|| "default".into());
    let given = q.since.or_else(|| headers.get("last-event-id").and_then(|v| v.to_str().ok()).map(str::to_string));
    let since = given.map(|s| s.trim().parse::<u64>().map_err(|_| ApiError::bad_field("since", "expected an event cursor (a number)"))).transpose()?;
    let (agent, since) = {
        let app = app.clone();
        let session = session.clone();
        blocking(move || {
            let agent = app.host.agent(&session);
            if agent.is_none() {
                app.host.store().session(&session)?;
            }
            let now = agent.as_ref().map(|a| a.status().cursor).unwrap_or(0);
            Ok((agent, since.unwrap_or(now)))
        })
        .await?
    };
    let subscription = Subscription { app, session, cursor: since, queue: VecDeque::new(), agent };
    let stream = futures_util::stream::unfold(subscription, next_event);
    let mut response = Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15))).into_response();
    response.headers_mut().insert("x-accel-buffering", HeaderValue::from_static("no"));
    Ok(response)
}

async fn next_event(mut sub: Subscription) -> Option<(Result<Event, Infallible>, Subscription)> {
    loop {
        if let Some(event) = sub.queue.pop_front() {
            sub.cursor = event.cursor;
            let sse = Event::default().id(event.cursor.to_string()).data(event_json(&event).to_string());
            return Some((Ok(sse), sub));
        }
        if sub.agent.is_none() {
            sub.agent = sub.app.host.agent(&sub.session);
        }
        match sub.agent.clone() {
            Some(agent) => {
                let since = sub.cursor;
                let found = tokio::task::spawn_blocking(move || agent.wait_events(since, Duration::from_secs(5))).await.unwrap_or_default();
                sub.queue.extend(found);
            }
            None => tokio::time::sleep(Duration::from_millis(200)).await,
        }
    }
}

// ---- history --------------------------------------------------------------------------------

#[derive(Deserialize)]
struct BlocksQuery {
    since_seq: Option<String>,
}

async fn blocks(State(app): State<Shared>, Path(id): Path<String>, Query(q): Query<BlocksQuery>) -> Answer {
    let since = q.since_seq.map(|s| s.parse::<u64>().map_err(|_| ApiError::bad_field("since_seq", "expected a block seq (a number)"))).transpose()?;
    blocking(move || {
        let session = app.host.store().session(&id)?;
        let blocks = match since {
            Some(seq) => session.blocks_range(seq + 1, u64::MAX)?,
            None => session.blocks()?,
        };
        ok(json!({"sessionId": id, "blocks": blocks}))
    })
    .await
}

#[derive(Deserialize)]
struct NativeQuery {
    format: Option<String>,
    target_model: Option<String>,
    model_provider: Option<String>,
    redact: Option<String>,
}

async fn native(State(app): State<Shared>, Path((id, runtime)): Path<(String, String)>, Query(q): Query<NativeQuery>) -> Answer {
    let runtime = runtime.parse::<Runtime>().map_err(|e| ApiError::new(StatusCode::NOT_FOUND, "NOT_FOUND", e.to_string()))?;
    let options = Options {
        format: q.format,
        target_model: q.target_model,
        model_provider: q.model_provider,
        redact: q.redact.is_some_and(|r| !matches!(r.as_str(), "0" | "false")),
        ..Options::default()
    };
    blocking(move || {
        let session = app.host.store().session(&id)?;
        let format = options.format_for(runtime)?;
        let text = session.to_native_text(runtime, &options)?;
        let mime = match format.encoding() {
            sna_history::Encoding::Jsonl => "application/x-ndjson; charset=utf-8",
            sna_history::Encoding::Json => "application/json; charset=utf-8",
            _ => "text/plain; charset=utf-8",
        };
        Ok(([(header::CONTENT_TYPE, mime)], text).into_response())
    })
    .await
}

async fn embed(State(app): State<Shared>, Path((id, embed_id)): Path<(String, String)>) -> Answer {
    blocking(move || {
        let session = app.host.store().session(&id)?;
        let bytes = session.embed(&embed_id)?;
        let mime = session.embed_mime(&embed_id)?.unwrap_or_else(|| "application/octet-stream".into());
        let mime = HeaderValue::from_str(&mime).unwrap_or(HeaderValue::from_static("application/octet-stream"));
        let mut response = bytes.into_response();
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, mime);
        headers.insert("x-content-type-options", HeaderValue::from_static("nosniff"));
        // An embed is data, never a page: an SVG or HTML embed opened directly runs nothing.
        headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static("sandbox; default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'"));
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("private, max-age=31536000, immutable"));
        Ok(response)
    })
    .await
}

/// The session's tokens and cost, response by response (`Session::usage`, priced as `sna usage`).
async fn usage(State(app): State<Shared>, Path(id): Path<String>) -> Answer {
    blocking(move || {
        let session = app.host.store().session(&id)?;
        ok(serde_json::to_value(session.usage(None)?).unwrap_or(Value::Null))
    })
    .await
}

async fn switches(State(app): State<Shared>, Path(id): Path<String>) -> Answer {
    blocking(move || {
        let session = app.host.store().session(&id)?;
        ok(json!({"sessionId": id, "switches": session.switches()?}))
    })
    .await
}

/// The session's compactions, oldest first (the web UI marks them).
async fn compactions(State(app): State<Shared>, Path(id): Path<String>) -> Answer {
    blocking(move || {
        let session = app.host.store().session(&id)?;
        ok(json!({"sessionId": id, "compactions": session.compactions()?}))
    })
    .await
}
