//! The routes: SNA's agent API (`/agent/...`, every route with `?session=<id>`, default
//! `default`), the history routes (`/sessions/{id}/...`), the UI's pages and the OpenAPI document.
//!
//! Each handler carries its OpenAPI operation (`#[utoipa::path]`), and [`routes()`] registers every
//! one through `utoipa_axum::routes!`, which routes the handler and documents it from the same
//! attribute: the router and `/openapi.json` list the same paths and methods.

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Router;
use sna_history::Runtime;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::answer::{ok, Answer};
use super::responses::{Info, RuntimeInfo};
use super::{agent, auth, events, history, openapi, pages, render, sessions, ApiError, Shared};

/// Every route with its operation, before the state, the fallbacks and the guard.
pub(crate) fn routes() -> OpenApiRouter<Shared> {
    OpenApiRouter::with_openapi(openapi::base())
        .routes(routes!(pages::index))
        .routes(routes!(pages::session_page))
        .routes(routes!(pages::login_page, auth::login))
        .routes(routes!(pages::asset))
        .routes(routes!(render::markdown))
        .routes(routes!(info))
        .routes(routes!(openapi::document))
        .routes(routes!(sessions::list, sessions::create))
        .routes(routes!(sessions::get, sessions::update, sessions::delete))
        .routes(routes!(agent::start))
        .routes(routes!(agent::send))
        .routes(routes!(agent::resume))
        .routes(routes!(agent::restart))
        .routes(routes!(agent::interrupt))
        .routes(routes!(agent::kill))
        .routes(routes!(agent::set_model))
        .routes(routes!(agent::compact))
        .routes(routes!(agent::status))
        .routes(routes!(events::events))
        .routes(routes!(history::blocks))
        .routes(routes!(history::native))
        .routes(routes!(history::embed))
        .routes(routes!(history::switches))
        .routes(routes!(history::compactions))
        .routes(routes!(history::usage))
}

pub(crate) fn router(app: Shared) -> Router {
    let (router, document) = routes().split_for_parts();
    router
        .layer(axum::Extension(openapi::Published::of(document)))
        .fallback(|| async { ApiError::new(StatusCode::NOT_FOUND, "NOT_FOUND", "no such route") })
        .method_not_allowed_fallback(|| async { ApiError::new(StatusCode::METHOD_NOT_ALLOWED, "METHOD_NOT_ALLOWED", "this route does not take that method") })
        .layer(axum::middleware::map_response(json_rejection))
        .layer(axum::middleware::from_fn_with_state(app.clone(), auth::guard))
        .layer(axum::middleware::from_fn(head_limits))
        .with_state(app)
}

/// The most header fields a request may have.
pub(crate) const MAX_HEADERS: usize = 100;
/// The most bytes a request's target and header fields may take together.
pub(crate) const MAX_HEAD: usize = 256 * 1024;

/// A request with more header fields than [`MAX_HEADERS`] or a head larger than [`MAX_HEAD`] is
/// refused (431) before anything else reads it, with the JSON error shape. (Past the parser's own
/// limits, in `serve/mod.rs`, hyper refuses it with an empty body.)
async fn head_limits(request: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let headers = request.headers();
    let target = request.uri().path_and_query().map_or(0, |p| p.as_str().len());
    let size: usize = target + headers.iter().map(|(name, value)| name.as_str().len() + value.len() + 4).sum::<usize>();
    if headers.len() > MAX_HEADERS || size > MAX_HEAD {
        let message = format!("the request has {} header fields and a head of {size} bytes; at most {MAX_HEADERS} fields and {MAX_HEAD} bytes are read", headers.len());
        return ApiError::new(StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE, "TOO_LARGE", message).into_response();
    }
    next.run(request).await
}

/// axum's own refusals of a request it cannot extract (a path segment or a query that is not
/// UTF-8 once decoded, a query it cannot read) are plain text: they become the JSON error shape
/// every other refusal has, with axum's words as the message.
async fn json_rejection(response: Response) -> Response {
    let plain = response.headers().get(header::CONTENT_TYPE).and_then(|t| t.to_str().ok()).is_some_and(|t| t.starts_with("text/plain"));
    let status = response.status();
    if !status.is_client_error() || !plain {
        return response;
    }
    let said = axum::body::to_bytes(response.into_body(), 64 * 1024).await.unwrap_or_default();
    let code = match status {
        StatusCode::NOT_FOUND => "NOT_FOUND",
        StatusCode::PAYLOAD_TOO_LARGE => "TOO_LARGE",
        _ => "INVALID_INPUT",
    };
    ApiError::new(status, code, String::from_utf8_lossy(&said).trim().to_string()).into_response()
}

/// The server's version, whether it needs a token, and which runtimes' executables were found.
#[utoipa::path(get, path = "/info", tag = "server", responses((status = 200, body = Info)))]
pub(crate) async fn info(axum::extract::State(app): axum::extract::State<Shared>) -> Answer {
    let runtimes = Runtime::ALL.iter().map(|&r| RuntimeInfo { id: r.as_str(), name: r.display_name(), available: app.host.installed(r) }).collect();
    ok(Info { version: env!("CARGO_PKG_VERSION"), auth: app.token.is_some(), runtimes })
}
