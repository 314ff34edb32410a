//! The web UI over HTTP: the app shell, its scripts and style, and the login page (`crate::ui`, all
//! inside the binary; no network resources).

use axum::extract::Path;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

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

/// `/` and `/s/{id}`: the app shell (the script routes by path).
pub(crate) async fn index() -> Response {
    page(ui::INDEX, "text/html; charset=utf-8")
}

/// `GET /login`.
pub(crate) async fn login_page() -> Response {
    page(ui::LOGIN, "text/html; charset=utf-8")
}

/// `/assets/{name}`.
pub(crate) async fn asset(Path(name): Path<String>) -> Response {
    match ui::asset(&name) {
        Some((body, content_type)) => page(body, content_type),
        None => ApiError::new(StatusCode::NOT_FOUND, "NOT_FOUND", format!("no asset {name:?}")).into_response(),
    }
}
