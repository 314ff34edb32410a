//! Who may talk to the server: with a token, a request carries `Authorization: Bearer <token>` or
//! the session cookie the login hands out; without one, the server listens on loopback only and
//! requests must name a loopback host (a web page elsewhere cannot reach it by rebinding a DNS
//! name). Mutating requests whose `Origin` is another site are refused either way.

use std::io::Read as _;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use sha2::{Digest, Sha256};

use super::{ApiError, Shared};

/// The name of the session cookie.
const COOKIE: &str = "sna_session";

/// Equal in time that does not depend on where the two differ (both are hashed first, so the
/// length does not show either).
pub(crate) fn same_secret(given: &str, expected: &str) -> bool {
    let a = Sha256::digest(given.as_bytes());
    let b = Sha256::digest(expected.as_bytes());
    a.iter().zip(b.iter()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn cookie_value(headers: &HeaderMap) -> Option<String> {
    headers.get_all(header::COOKIE).iter().filter_map(|v| v.to_str().ok()).flat_map(|v| v.split(';')).find_map(|pair| {
        let (name, value) = pair.trim().split_once('=')?;
        (name == COOKIE).then(|| value.to_string())
    })
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers.get(header::AUTHORIZATION)?.to_str().ok()?.strip_prefix("Bearer ").map(str::trim)
}

/// A fresh random cookie value.
fn new_cookie() -> Result<String, ApiError> {
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes)).map_err(|e| {
        eprintln!("sna serve: cannot read /dev/urandom: {e}");
        ApiError::internal()
    })?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// A response that sets a new session cookie and sends the browser to `to`.
pub(crate) fn login_response(app: &Shared, to: &str) -> Response {
    let value = match new_cookie() {
        Ok(value) => value,
        Err(e) => return e.into_response(),
    };
    if let Ok(mut cookies) = app.cookies.lock() {
        cookies.insert(value.clone());
    }
    let mut response = Redirect::to(to).into_response();
    if let Ok(cookie) = HeaderValue::from_str(&format!("{COOKIE}={value}; HttpOnly; SameSite=Strict; Path=/")) {
        response.headers_mut().insert(header::SET_COOKIE, cookie);
    }
    response
}

fn authenticated(app: &Shared, headers: &HeaderMap) -> bool {
    let Some(token) = &app.token else { return true };
    if let Some(given) = bearer(headers) {
        return same_secret(given, token);
    }
    match cookie_value(headers) {
        Some(value) => app.cookies.lock().map(|c| c.iter().any(|known| same_secret(&value, known))).unwrap_or(false),
        None => false,
    }
}

/// The host part of a `Host` header or an origin's authority (without the port).
fn host_name(authority: &str) -> &str {
    if let Some(rest) = authority.strip_prefix('[') {
        // Without its `]`, not an address at all (and so not a loopback name).
        return rest.split_once(']').map_or(authority, |(address, _)| address);
    }
    authority.rsplit_once(':').map(|(h, _)| h).unwrap_or(authority)
}

fn is_loopback_name(name: &str) -> bool {
    name.eq_ignore_ascii_case("localhost") || name.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// A page (rather than an API call) a browser may be sent to the login from.
fn is_page(path: &str) -> bool {
    path == "/" || path.starts_with("/s/")
}

/// The middleware in front of every route.
pub(crate) async fn guard(State(app): State<Shared>, request: Request, next: Next) -> Response {
    let headers = request.headers();
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
    if app.loopback && app.token.is_none() && !is_loopback_name(host_name(host)) {
        return ApiError::new(StatusCode::FORBIDDEN, "FORBIDDEN", format!("the host {host:?} is not a loopback name")).into_response();
    }
    let mutating = !matches!(*request.method(), Method::GET | Method::HEAD | Method::OPTIONS);
    if mutating {
        if let Some(origin) = headers.get(header::ORIGIN) {
            let origin = origin.to_str().unwrap_or("");
            let same = origin.split_once("://").is_some_and(|(scheme, authority)| scheme == "http" && authority.eq_ignore_ascii_case(host));
            if !same {
                return ApiError::new(StatusCode::FORBIDDEN, "FORBIDDEN", format!("cross-origin request from {origin:?} refused")).into_response();
            }
        }
    }
    let path = request.uri().path().to_string();
    // The login page and what it loads are open (they hold nothing).
    if matches!(path.as_str(), "/login" | "/assets/login.js" | "/assets/style.css") {
        return next.run(request).await;
    }
    if authenticated(&app, headers) {
        return next.run(request).await;
    }
    // `/?token=…` (or any page with it) once: the cookie, then the same page without the token.
    if let (Some(token), Some(query)) = (&app.token, request.uri().query()) {
        let given = token_field(query.as_bytes());
        if request.method() == Method::GET && is_page(&path) && given.is_some_and(|g| same_secret(&g, token)) {
            return login_response(&app, &path);
        }
    }
    if request.method() == Method::GET && is_page(&path) {
        return Redirect::to("/login").into_response();
    }
    ApiError::new(StatusCode::UNAUTHORIZED, "UNAUTHORIZED", "this server needs a token: send Authorization: Bearer <token>").into_response()
}

/// The `token` field of a query string or an urlencoded form.
fn token_field(encoded: &[u8]) -> Option<String> {
    serde_urlencoded::from_bytes::<Vec<(String, String)>>(encoded).ok()?.into_iter().find_map(|(k, v)| (k == "token").then_some(v))
}

/// `POST /login` with the form field `token`: the session cookie and a redirect to `/`, or back to
/// the login page when the token is wrong.
#[utoipa::path(
    post,
    path = "/login",
    tag = "pages",
    request_body(content = String, content_type = "application/x-www-form-urlencoded", description = "The form field `token`"),
    responses(
        (status = 303, description = "To `/` with the cookie set, or to `/login?failed=1`"),
        (status = 413, description = "The form is too large", body = super::responses::ErrorBody),
    )
)]
pub(crate) async fn login(State(app): State<Shared>, body: Body) -> Response {
    let Some(token) = app.token.clone() else { return Redirect::to("/").into_response() };
    let bytes = match axum::body::to_bytes(body, 64 * 1024).await {
        Ok(bytes) => bytes,
        Err(_) => return ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "TOO_LARGE", "the login form is too large").into_response(),
    };
    match token_field(&bytes) {
        Some(given) if same_secret(&given, &token) => login_response(&app, "/"),
        _ => Redirect::to("/login?failed=1").into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_is_read_from_queries_and_forms() {
        assert_eq!(token_field(b"a=1&token=a%2Bb+c%25").as_deref(), Some("a+b c%"));
        assert_eq!(token_field("token=%e2%9c%93".as_bytes()).as_deref(), Some("✓"));
        assert_eq!(token_field(b"tokens=x"), None);
    }

    #[test]
    fn secrets_and_hosts() {
        assert!(same_secret("token", "token"));
        assert!(!same_secret("token", "tokeN") && !same_secret("", "token") && !same_secret("token-and-more", "token"));
        assert_eq!(host_name("127.0.0.1:7777"), "127.0.0.1");
        assert_eq!(host_name("[::1]:7777"), "::1");
        assert_eq!(host_name("localhost"), "localhost");
        assert_eq!(host_name("[::1"), "[::1");
        assert!(is_loopback_name("localhost") && is_loopback_name("::1") && is_loopback_name("127.0.0.2"));
        assert!(!is_loopback_name("127.0.0.1.evil.example") && !is_loopback_name("example.com"));
    }
}
