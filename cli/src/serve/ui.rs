//! The web UI: an app shell, its script and style, and the login page, all inside the binary (no
//! network resources). `timeline.js` and `style.css` are also what `sna view` inlines.

use axum::extract::Path;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use super::ApiError;

const INDEX: &str = include_str!("ui/index.html");
const LOGIN: &str = include_str!("ui/login.html");
const STYLE: &str = include_str!("ui/style.css");
const TIMELINE: &str = include_str!("ui/timeline.js");
const APP: &str = include_str!("ui/app.js");
const LOGIN_SCRIPT: &str = include_str!("ui/login.js");

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
    page(INDEX, "text/html; charset=utf-8")
}

/// `GET /login`.
pub(crate) async fn login_page() -> Response {
    page(LOGIN, "text/html; charset=utf-8")
}

/// `/assets/{name}`.
pub(crate) async fn asset(Path(name): Path<String>) -> Response {
    match name.as_str() {
        "style.css" => page(STYLE, "text/css; charset=utf-8"),
        "timeline.js" => page(TIMELINE, "text/javascript; charset=utf-8"),
        "app.js" => page(APP, "text/javascript; charset=utf-8"),
        "login.js" => page(LOGIN_SCRIPT, "text/javascript; charset=utf-8"),
        _ => ApiError::new(StatusCode::NOT_FOUND, "NOT_FOUND", format!("no asset {name:?}")).into_response(),
    }
}
