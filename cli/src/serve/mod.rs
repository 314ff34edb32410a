//! `sna serve`: the host (core's `host` module) over HTTP — the agent routes of SNA's API
//! (`/agent/...`, server-sent events with cursors), read-only history routes (`/sessions/...`) and
//! a web UI whose assets are inside the binary, with the route that renders its Markdown
//! (`/ui/markdown`), and the API's OpenAPI document (`/openapi.json`).
//!
//! The server only converts: every decision (how a session is started, resumed, replayed or
//! switched; what an event is) is the host's. Calls into the host and the store block, so they run
//! on tokio's blocking pool; the event streams wait there too (`Agent::wait_events`).

mod agent;
mod answer;
mod api;
mod auth;
mod events;
mod history;
mod openapi;
mod pages;
mod render;
mod requests;
mod responses;
mod sessions;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use sna_history::host::{Host, HostOptions};
use sna_history::{Runtime, Store};

/// What `sna serve` was asked for.
pub struct Config {
    /// The history database.
    pub db: PathBuf,
    /// The address to listen on.
    pub host: IpAddr,
    /// The port (0: any free one).
    pub port: u16,
    /// The token every request must carry, when set.
    pub token: Option<String>,
    /// The executables of the runtimes.
    pub bins: BTreeMap<Runtime, PathBuf>,
    /// The `HOME` of the runtime processes.
    pub home: Option<PathBuf>,
    /// The largest request body accepted, in bytes.
    pub max_body: usize,
}

/// The server's state, shared by every request.
pub(crate) struct App {
    pub host: Host,
    pub token: Option<String>,
    /// The values of the session cookies handed out by the login.
    pub cookies: Mutex<HashSet<String>>,
    /// Messages accepted by `/agent/send` whose turn has not ended, by session: the agent is busy
    /// from the moment the message is accepted.
    pub pending: Mutex<HashMap<String, usize>>,
    pub max_body: usize,
    /// The event streams' wake-ups, one waiter per agent (`events.rs`).
    pub feeds: events::Feeds,
    /// Whether the server listens on loopback only (then requests must name a loopback host).
    pub loopback: bool,
}

pub(crate) type Shared = Arc<App>;

/// An error answer: `{status: "error", code, message}`.
#[derive(Debug)]
pub(crate) struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError { status, code, message: message.into() }
    }

    pub fn bad_field(field: &str, message: impl std::fmt::Display) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, "INVALID_INPUT", format!("{field}: {message}"))
    }

    pub fn internal() -> Self {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "INTERNAL", "internal error (the server's log says more)")
    }
}

impl From<sna_history::Error> for ApiError {
    fn from(error: sna_history::Error) -> Self {
        use sna_history::Code;
        let status = match error.code() {
            Code::InvalidInput | Code::Unsupported | Code::Lossy => StatusCode::BAD_REQUEST,
            Code::NotFound => StatusCode::NOT_FOUND,
            Code::Conflict => StatusCode::CONFLICT,
            Code::Timeout => StatusCode::GATEWAY_TIMEOUT,
            Code::Runtime => StatusCode::BAD_GATEWAY,
            _ => {
                // Storage, I/O and internal errors name paths and SQL: logged, not answered.
                eprintln!("sna serve: {error}");
                return ApiError::internal();
            }
        };
        ApiError::new(status, error.code().as_str(), error.to_string())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = responses::ErrorBody { status: responses::ErrorStatus::Error, code: self.code, message: self.message };
        (self.status, axum::Json(body)).into_response()
    }
}

/// Runs the server until SIGINT or SIGTERM; then ends every runtime process it started.
pub fn run(config: Config) -> Result<(), String> {
    let loopback = config.host.is_loopback();
    if !loopback && config.token.is_none() {
        return Err(format!("refusing to listen on {} without a token: pass --token or set SNA_TOKEN (or listen on 127.0.0.1)", config.host));
    }
    if config.token.as_deref().is_some_and(str::is_empty) {
        return Err("the token is empty".into());
    }
    let store = Store::open(&config.db).map_err(|e| e.to_string())?;
    // A PostgreSQL URL is shown without its password.
    let shown_db = store.url().map_or_else(|| config.db.display().to_string(), str::to_string);
    let host = Host::new(store, HostOptions { bins: config.bins, env: BTreeMap::new(), home: config.home });
    let app = Arc::new(App {
        host: host.clone(),
        token: config.token,
        cookies: Mutex::new(HashSet::new()),
        pending: Mutex::new(HashMap::new()),
        feeds: Default::default(),
        max_body: config.max_body,
        loopback,
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(1024)
        .build()
        .map_err(|e| format!("cannot start the server's runtime: {e}"))?;
    let result = runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(SocketAddr::new(config.host, config.port))
            .await
            .map_err(|e| format!("cannot listen on {}:{}: {e}", config.host, config.port))?;
        let address = listener.local_addr().map_err(|e| e.to_string())?;
        // The one line on stdout: scripts read the address from it (with --port 0 too).
        println!("sna serve: listening on http://{address}/");
        eprintln!("sna serve: history in {}", shown_db);
        let router = api::router(app);
        tokio::select! {
            served = accept(listener, router) => served,
            _ = shutdown() => Ok(()),
        }
    });
    host.close();
    // Event streams still wait on the blocking pool; they end with the process.
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    result
}

/// hyper's own limits, above the server's ([`api::MAX_HEADERS`], [`api::MAX_HEAD`]): a head
/// within these is read and refused by the router with the JSON error shape; past them hyper
/// answers 431 (or 400 for what is not HTTP) with an empty body and closes the connection.
const PARSER_MAX_HEADERS: usize = 1_000;
const PARSER_MAX_BUFFER: usize = 2 * 1024 * 1024;
/// A client that has not sent a whole request head within this time is disconnected.
const HEAD_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// Serves each accepted connection on a task of its own, with HTTP/1 limits and a timeout for
/// reading the request head set (axum's `serve` takes hyper's defaults).
async fn accept(listener: tokio::net::TcpListener, router: axum::Router) -> Result<(), String> {
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(HEAD_TIMEOUT)
        .max_headers(PARSER_MAX_HEADERS)
        .max_buf_size(PARSER_MAX_BUFFER);
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            // Out of file descriptors, or a connection reset before it was accepted: the next
            // accept may succeed, after a pause so that the loop does not spin.
            Err(e) => {
                eprintln!("sna serve: cannot accept a connection: {e}");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let service = hyper_util::service::TowerToHyperService::new(router.clone());
        let connection = http.serve_connection(hyper_util::rt::TokioIo::new(stream), service);
        tokio::spawn(async move {
            // A client that goes away or sends what is not HTTP ends its own connection only.
            let _ = connection.await;
        });
    }
}

async fn shutdown() {
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(signal) => signal,
        Err(_) => return std::future::pending().await,
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}
