//! `/agent/sessions`: the stored sessions, listed, made, read, renamed and deleted.

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::Json;

use super::answer::{blocking, ok, Answer};
use super::requests::{self, NewSessionBody, SessionUpdate};
use super::responses::{Deleted, DeletedStatus, ErrorBody, Session, Sessions};
use super::{ApiError, Shared};
use crate::ui::session_json;

/// Every stored session, with its agent when one was started.
#[utoipa::path(get, path = "/agent/sessions", tag = "sessions", responses((status = 200, body = Sessions)))]
pub(crate) async fn list(State(app): State<Shared>) -> Answer {
    blocking(move || {
        let infos = app.host.store().sessions()?;
        let sessions = infos.iter().map(|i| session_json(i, app.host.agent(&i.id).as_ref())).collect();
        ok(Sessions { sessions })
    })
    .await
}

/// One session.
#[utoipa::path(
    get,
    path = "/agent/sessions/{id}",
    tag = "sessions",
    params(("id" = String, Path, description = "The session")),
    responses((status = 200, body = Session), (status = 404, description = "No such session", body = ErrorBody))
)]
pub(crate) async fn get(State(app): State<Shared>, Path(id): Path<String>) -> Answer {
    blocking(move || {
        let info = app.host.store().session(&id)?.info()?;
        ok(session_json(&info, app.host.agent(&id).as_ref()))
    })
    .await
}

/// Makes a session.
#[utoipa::path(
    post,
    path = "/agent/sessions",
    tag = "sessions",
    request_body(content = Option<NewSessionBody>, description = "An empty body is `{}`"),
    responses(
        (status = 201, description = "The session", body = Session),
        (status = 409, description = "The id is taken", body = ErrorBody),
    )
)]
pub(crate) async fn create(State(app): State<Shared>, body: Body) -> Answer {
    let fields: NewSessionBody = requests::read(&app, body).await?;
    let mut new = sna_history::NewSession::new();
    if let Some(id) = fields.id {
        new = new.id(id);
    }
    if let Some(title) = fields.label.or(fields.title) {
        new = new.title(title);
    }
    if let Some(cwd) = fields.cwd {
        new = new.cwd(cwd);
    }
    blocking(move || {
        let session = app.host.store().create_session(new)?;
        let info = session.info()?;
        Ok((StatusCode::CREATED, Json(session_json(&info, None))).into_response())
    })
    .await
}

/// Renames a session or changes its working directory.
#[utoipa::path(
    patch,
    path = "/agent/sessions/{id}",
    tag = "sessions",
    params(("id" = String, Path, description = "The session")),
    request_body(content = Option<SessionUpdate>, description = "An empty body is `{}`"),
    responses(
        (status = 200, description = "The session", body = Session),
        (status = 404, description = "No such session", body = ErrorBody),
    )
)]
pub(crate) async fn update(State(app): State<Shared>, Path(id): Path<String>, body: Body) -> Answer {
    let fields: SessionUpdate = requests::read(&app, body).await?;
    let title = fields.label.or(fields.title);
    blocking(move || {
        let info = app.host.store().update_session(&id, title.as_deref(), fields.cwd.as_deref())?;
        ok(session_json(&info, app.host.agent(&id).as_ref()))
    })
    .await
}

/// Deletes a session and its blocks.
#[utoipa::path(
    delete,
    path = "/agent/sessions/{id}",
    tag = "sessions",
    params(("id" = String, Path, description = "The session")),
    responses(
        (status = 200, body = Deleted),
        (status = 404, description = "No such session", body = ErrorBody),
        (status = 409, description = "Its agent runs: kill it first", body = ErrorBody),
    )
)]
pub(crate) async fn delete(State(app): State<Shared>, Path(id): Path<String>) -> Answer {
    blocking(move || {
        if let Some(agent) = app.host.agent(&id) {
            if agent.status().alive {
                return Err(ApiError::new(StatusCode::CONFLICT, "CONFLICT", format!("the session {id:?} is running: kill it first")));
            }
        }
        app.host.store().delete_session(&id)?;
        ok(Deleted { status: DeletedStatus::Deleted, id })
    })
    .await
}
