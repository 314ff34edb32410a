//! The web UI over HTTP: the app shell, its scripts and style, and the login page (`crate::ui`, all
//! inside the binary; no network resources).

use axum::extract::Path;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use super::responses::ErrorBody;
use super::ApiError;
use crate::ui;

/// Pages may load only what this server serves; nothing inline but styles.
const CSP: &str = "default-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'";

fn page(body: &'static str, content_type: &'static str) -> Response {
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

/// The web UI on one session (the same app shell as `/`).
#[utoipa::path(
    get,
    path = "/s/{id}",
    tag = "pages",
    params(("id" = String, Path, description = "The session")),
    responses((status = 200, description = "The app shell", content_type = "text/html", body = String), (status = 303, description = "To the login, or the cookie set"))
)]
pub(crate) async fn session_page() -> Response {
    index().await
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
