//! The router of `sna serve` over an in-memory store, one request at a time
//! (`tower::ServiceExt::oneshot`): every route with its answers and its error statuses, the guard,
//! and the OpenAPI document against the router. The runtimes' executables do not exist here, so
//! the agent routes are tested on what they answer without one; the real-CLI tests in
//! tests/conformance drive them with runtimes.
//!
//! Every status a test sees is checked against `/openapi.json` when its server is dropped: the
//! document must list it for that route and method.

mod abuse;
mod agent;
mod history;
mod openapi;
mod render;
mod server;
mod sessions;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};

use axum::body::{Body, Bytes};
use axum::http::{header, HeaderMap, Method, Request, StatusCode};
use serde_json::Value;
use sna_history::host::{Host, HostOptions};
use sna_history::{Runtime, Store};
use tower::ServiceExt;

use super::{api, openapi as document, App, Shared};

/// A router over an in-memory store, and what it answered.
pub(super) struct Server {
    pub router: axum::Router,
    pub app: Shared,
    seen: Mutex<Vec<(Method, String, StatusCode)>>,
    pub home: tempfile::TempDir,
}

/// An answer: its status, headers and body.
pub(super) struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Answer {
    /// The body as JSON (`Value::String` of the text when it is not JSON).
    pub fn json(&self) -> Value {
        let text = String::from_utf8_lossy(&self.body).into_owned();
        serde_json::from_str(&text).unwrap_or(Value::String(text))
    }

    pub fn header(&self, name: header::HeaderName) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

impl Server {
    pub fn new(token: Option<&str>) -> Server {
        let home = tempfile::tempdir().unwrap();
        // Executables that do not exist: no test here starts a real CLI.
        let bins = Runtime::ALL.iter().map(|&r| (r, home.path().join("missing").join(r.as_str()))).collect();
        let store = Store::open_in_memory().unwrap();
        // Claude Code's declarations of a sandbox emptied, so that its check at start is the same
        // whatever the environment of the tests holds.
        let env = BTreeMap::from([("IS_SANDBOX".to_string(), String::new()), ("CLAUDE_CODE_BUBBLEWRAP".to_string(), String::new())]);
        let host = Host::new(store, HostOptions { bins, env, home: Some(home.path().to_path_buf()) });
        let app = Arc::new(App {
            host,
            token: token.map(str::to_string),
            cookies: Mutex::new(HashSet::new()),
            pending: Mutex::new(HashMap::new()),
            feeds: Default::default(),
            max_body: 1 << 20,
            loopback: true,
        });
        Server { router: api::router(app.clone()), app, seen: Mutex::new(Vec::new()), home }
    }

    /// A request to a loopback host, as a browser on this machine sends it.
    pub fn request(method: Method, path: &str) -> axum::http::request::Builder {
        Request::builder().method(method).uri(path).header(header::HOST, "127.0.0.1:7777")
    }

    pub async fn send(&self, request: Request<Body>) -> Answer {
        let (method, path) = (request.method().clone(), request.uri().path().to_string());
        let response = self.router.clone().oneshot(request).await.unwrap();
        let (status, headers) = (response.status(), response.headers().clone());
        let body = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
        self.seen.lock().unwrap().push((method, path, status));
        Answer { status, headers, body }
    }

    /// One request with an optional JSON body and token.
    pub async fn answer(&self, method: Method, path: &str, body: Option<&str>, token: Option<&str>) -> Answer {
        let mut request = Server::request(method, path);
        if body.is_some() {
            request = request.header(header::CONTENT_TYPE, "application/json");
        }
        if let Some(token) = token {
            request = request.header(header::AUTHORIZATION, format!("Bearer {token}"));
        }
        self.send(request.body(body.map_or_else(Body::empty, |b| Body::from(b.to_string()))).unwrap()).await
    }

    /// A new session with the given id.
    pub fn session(&self, id: &str) -> sna_history::Session {
        self.app.host.store().create_session(sna_history::NewSession::new().id(id)).unwrap()
    }
}

/// One request; the status and the body (JSON when it is JSON, else a string).
pub(super) async fn call(server: &Server, method: Method, path: &str, body: Option<&str>, token: Option<&str>) -> (StatusCode, Value) {
    let answer = server.answer(method, path, body, token).await;
    (answer.status, answer.json())
}

/// A 400 `INVALID_INPUT` with this message.
pub(super) async fn refused(server: &Server, method: Method, path: &str, body: &str, message: &str) {
    let (status, answer) = call(server, method, path, Some(body), None).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{path} {body}: {answer}");
    assert_eq!((answer["status"].as_str(), answer["code"].as_str()), (Some("error"), Some("INVALID_INPUT")), "{path} {body}");
    assert_eq!(answer["message"].as_str(), Some(message), "{path} {body}");
}

/// The keys of a JSON object, in order.
pub(super) fn keys(value: &Value) -> Vec<&str> {
    value.as_object().map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default()
}

/// The documented path (`/sessions/{id}/blocks`) a request's path falls under.
pub(super) fn template_of<'a>(templates: impl IntoIterator<Item = &'a String>, path: &str) -> Option<&'a String> {
    let parts: Vec<&str> = path.split('/').collect();
    templates.into_iter().find(|template| {
        let pattern: Vec<&str> = template.split('/').collect();
        pattern.len() == parts.len() && pattern.iter().zip(&parts).all(|(p, s)| p == s || (p.starts_with('{') && !s.is_empty()))
    })
}

impl Drop for Server {
    /// Each status seen is listed in the document for its route and method (a 404 of no route and
    /// a 405 of a method no route takes are the router's own).
    fn drop(&mut self) {
        if std::thread::panicking() {
            return;
        }
        let doc = document::complete(api::routes().split_for_parts().1);
        for (method, path, status) in self.seen.lock().unwrap().iter() {
            let Some(template) = template_of(doc.paths.paths.keys(), path) else { continue };
            let item = &doc.paths.paths[template];
            let operation = match *method {
                Method::GET => &item.get,
                Method::POST => &item.post,
                Method::PUT => &item.put,
                Method::PATCH => &item.patch,
                Method::DELETE => &item.delete,
                _ => &None,
            };
            let Some(operation) = operation else { continue };
            assert!(
                operation.responses.responses.contains_key(status.as_str()),
                "{method} {path} answered {status}, which /openapi.json does not list for {method} {template}"
            );
        }
    }
}
