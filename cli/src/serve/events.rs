//! `GET /agent/events`: the agent's events as server-sent events, with cursors, so that a client
//! that reconnects gets every event once.

use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::sync::Mutex;
use std::time::Duration;

use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::IntoResponse;
use sna_history::host::{Agent, AgentEvent};
use tokio::sync::watch;

use super::answer::{blocking, Answer};
use super::requests::EventsQuery;
use super::responses::{ErrorBody, EventBody};
use super::{ApiError, Shared};

/// An event as SNA's clients read it: `{type, cursor, timestamp, data, delta?, message?}`.
pub(crate) fn event_body(event: &AgentEvent) -> EventBody {
    let delta = event.data.get("text").filter(|_| event.kind.ends_with("_delta")).cloned();
    let message = match event.data.get("block").and_then(|b| b.get("content")) {
        Some(content) => Some(content.clone()),
        None => event.data.get("message").cloned(),
    };
    EventBody { kind: event.kind.clone(), cursor: event.cursor, timestamp: event.timestamp, data: event.data.clone(), delta, message }
}

/// The subscribers' wake-ups, by session: one waiter per agent on the blocking pool, however many
/// subscribers its session has. The waiter waits for the agent's events and sends the last cursor
/// on a watch; each subscriber waits on the watch (not a thread) and then takes its events without
/// waiting. The waiter ends when no subscriber is left.
#[derive(Default)]
pub(crate) struct Feeds(Mutex<HashMap<String, watch::Receiver<u64>>>);

impl Feeds {
    /// The session's wake-ups, the waiter started when there is none.
    fn get(app: &Shared, session: &str, agent: &Agent) -> watch::Receiver<u64> {
        let mut feeds = app.feeds.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(feed) = feeds.get(session).filter(|feed| feed.has_changed().is_ok()) {
            return feed.clone();
        }
        let (tx, rx) = watch::channel(0);
        feeds.insert(session.to_string(), rx.clone());
        let (app, session, agent) = (app.clone(), session.to_string(), agent.clone());
        tokio::task::spawn_blocking(move || {
            let mut seen = agent.status().cursor;
            loop {
                if let Some(last) = agent.wait_events(seen, Duration::from_secs(5)).last() {
                    seen = last.cursor;
                    tx.send_replace(seen);
                }
                // Only the map's receiver left: subscribers take theirs under the same lock.
                if tx.receiver_count() <= 1 {
                    let mut feeds = app.feeds.0.lock().unwrap_or_else(|p| p.into_inner());
                    if tx.receiver_count() <= 1 {
                        feeds.remove(&session);
                        return;
                    }
                }
            }
        });
        rx
    }
}

struct Subscription {
    app: Shared,
    session: String,
    cursor: u64,
    queue: VecDeque<AgentEvent>,
    agent: Option<Agent>,
    feed: Option<watch::Receiver<u64>>,
}

/// Every event after `since` (or `Last-Event-ID`; without either, from now on), each with `id:` =
/// its cursor, and keepalive comments while nothing happens. A session without an agent yet can
/// be subscribed to: its events start when one starts.
#[utoipa::path(
    get,
    path = "/agent/events",
    tag = "agent",
    params(EventsQuery, ("Last-Event-ID" = Option<String>, Header, description = "The cursor of the last event seen")),
    responses(
        (status = 200, description = "Server-sent events: `id:` the cursor, `data:` an `EventBody`", content_type = "text/event-stream", body = String),
        (status = 400, description = "`since` is not a number", body = ErrorBody),
        (status = 404, description = "No such session and no agent", body = ErrorBody),
    )
)]
pub(crate) async fn events(State(app): State<Shared>, Query(q): Query<EventsQuery>, headers: HeaderMap) -> Answer {
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
    let subscription = Subscription { app, session, cursor: since, queue: VecDeque::new(), agent, feed: None };
    let stream = futures_util::stream::unfold(subscription, next_event);
    let mut response = Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15))).into_response();
    response.headers_mut().insert("x-accel-buffering", HeaderValue::from_static("no"));
    Ok(response)
}

async fn next_event(mut sub: Subscription) -> Option<(Result<Event, Infallible>, Subscription)> {
    loop {
        if let Some(event) = sub.queue.pop_front() {
            sub.cursor = event.cursor;
            let data = serde_json::to_string(&event_body(&event)).unwrap_or_default();
            let sse = Event::default().id(event.cursor.to_string()).data(data);
            return Some((Ok(sse), sub));
        }
        if sub.agent.is_none() {
            sub.agent = sub.app.host.agent(&sub.session);
        }
        let Some(agent) = sub.agent.clone() else {
            tokio::time::sleep(Duration::from_millis(200)).await;
            continue;
        };
        let mut feed = match sub.feed.take() {
            Some(feed) => feed,
            None => Feeds::get(&sub.app, &sub.session, &agent),
        };
        // Marked seen before looking, so that an event published after the look wakes the wait.
        feed.borrow_and_update();
        sub.queue.extend(agent.events(sub.cursor));
        if sub.queue.is_empty() && feed.changed().await.is_err() {
            // The waiter ended (no subscriber was left for a moment): the next turn starts one.
            continue;
        }
        sub.feed = Some(feed);
    }
}
