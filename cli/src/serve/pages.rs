//! The web UI over HTTP: the app shell, its scripts and style, and the login page (`crate::ui`, all
//! inside the binary; no network resources).

use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use super::answer::blocking;
use super::responses::ErrorBody;
use super::{ApiError, Shared};
use crate::{markdown, ui};

/// Pages may load only what this server serves; nothing inline but styles.
const CSP: &str = "default-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'";

fn page(body: impl IntoResponse, content_type: &'static str) -> Response {
    let mut response = ([(header::CONTENT_TYPE, content_type)], body).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    headers.insert("x-content-type-options", HeaderValue::from_static("nosniff"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// The web UI: the list of sessions (the app shell; its script routes by path). With a token and
/// without the cookie, a redirect to the login; `?token=…` sets the cookie.
#[utoipa::path(
    get,
    path = "/",
    tag = "pages",
    responses((status = 200, description = "The app shell", content_type = "text/html", body = String), (status = 303, description = "To the login, or the cookie set"))
)]
pub(crate) async fn index() -> Response {
    page(ui::INDEX, "text/html; charset=utf-8")
}

/// The web UI on one session (the same app shell as `/`). For an id the store does not hold, a 404:
/// a page that says there is no such session for a browser (an `Accept` naming `text/html`), the
/// error's JSON for anything else.
#[utoipa::path(
    get,
    path = "/s/{id}",
    tag = "pages",
    params(("id" = String, Path, description = "The session")),
    responses(
        (status = 200, description = "The app shell", content_type = "text/html", body = String),
        (status = 303, description = "To the login, or the cookie set"),
        (status = 404, description = "No such session: a page that says so, or the error's JSON when HTML is not accepted", content((ErrorBody = "application/json"), (String = "text/html"))),
    )
)]
pub(crate) async fn session_page(State(app): State<Shared>, Path(id): Path<String>, headers: HeaderMap) -> Response {
    let lookup = id.clone();
    let missing = blocking(move || match app.host.store().session(&lookup) {
        Err(e) if e.code() == sna_history::Code::NotFound => Ok(Some(ApiError::from(e))),
        // Found, or another failure: the shell, whose own calls say what failed.
        _ => Ok(None),
    })
    .await;
    let html = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()).is_some_and(|accept| accept.contains("text/html"));
    match missing {
        Ok(Some(_)) if html => {
            let mut response = page(ui::MISSING.replace("{{id}}", &markdown::escape(&id)), "text/html; charset=utf-8");
            *response.status_mut() = StatusCode::NOT_FOUND;
            response
        }
        Ok(Some(error)) => error.into_response(),
        _ => index().await,
    }
}

/// The login page of a server with a token.
#[utoipa::path(get, path = "/login", tag = "pages", responses((status = 200, description = "The login page", content_type = "text/html", body = String)))]
pub(crate) async fn login_page() -> Response {
    page(ui::LOGIN, "text/html; charset=utf-8")
}

/// A file of the web UI: `style.css`, `app.js`, `timeline.js`, `login.js`, …
#[utoipa::path(
    get,
    path = "/assets/{name}",
    tag = "pages",
    params(("name" = String, Path, description = "The file's name")),
    responses(
        (status = 200, description = "The file", content((String = "text/css"), (String = "text/javascript"))),
        (status = 404, description = "No such file", body = ErrorBody),
    )
)]
pub(crate) async fn asset(Path(name): Path<String>) -> Response {
    match ui::asset(&name) {
        Some((body, content_type)) => page(body, content_type),
        None => ApiError::new(StatusCode::NOT_FOUND, "NOT_FOUND", format!("no asset {name:?}")).into_response(),
    }
}
