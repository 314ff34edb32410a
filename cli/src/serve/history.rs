//! The history routes (`/sessions/{id}/...`): what the store holds of a session, read-only.

use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::IntoResponse;
use sna_history::{Options, Runtime};

use super::answer::{blocking, ok, Answer};
use super::requests::{BlocksQuery, NativeQuery};
use super::responses::{Blocks, Compactions, ErrorBody, Switches};
use super::{ApiError, Shared};

/// The session's blocks, all or those after `since_seq`.
#[utoipa::path(
    get,
    path = "/sessions/{id}/blocks",
    tag = "history",
    params(("id" = String, Path, description = "The session"), BlocksQuery),
    responses(
        (status = 200, body = Blocks),
        (status = 400, description = "`since_seq` is not a number", body = ErrorBody),
        (status = 404, description = "No such session", body = ErrorBody),
    )
)]
pub(crate) async fn blocks(State(app): State<Shared>, Path(id): Path<String>, Query(q): Query<BlocksQuery>) -> Answer {
    let since = q.since_seq.map(|s| s.parse::<u64>().map_err(|_| ApiError::bad_field("since_seq", "expected a block seq (a number)"))).transpose()?;
    blocking(move || {
        let session = app.host.store().session(&id)?;
        let blocks = match since {
            Some(seq) => session.blocks_range(seq + 1, u64::MAX)?,
            None => session.blocks()?,
        };
        ok(Blocks { session_id: id, blocks })
    })
    .await
}

/// The session in a runtime's own shape, as `sna export` writes it.
#[utoipa::path(
    get,
    path = "/sessions/{id}/native/{runtime}",
    tag = "history",
    params(("id" = String, Path, description = "The session"), ("runtime" = String, Path, description = "The runtime, such as `codex`"), NativeQuery),
    responses(
        (status = 200, description = "The native file: JSONL, JSON or text", content(
            (String = "application/x-ndjson"), (String = "application/json"), (String = "text/plain")
        )),
        (status = 400, description = "A format the runtime does not have, or a session it cannot take", body = ErrorBody),
        (status = 404, description = "No such session or runtime", body = ErrorBody),
    )
)]
pub(crate) async fn native(State(app): State<Shared>, Path((id, runtime)): Path<(String, String)>, Query(q): Query<NativeQuery>) -> Answer {
    let runtime = runtime.parse::<Runtime>().map_err(|e| ApiError::new(StatusCode::NOT_FOUND, "NOT_FOUND", e.to_string()))?;
    let options = Options {
        format: q.format,
        target_model: q.target_model,
        model_provider: q.model_provider,
        redact: q.redact.is_some_and(|r| !matches!(r.as_str(), "0" | "false")),
        ..Options::default()
    };
    blocking(move || {
        let session = app.host.store().session(&id)?;
        let format = options.format_for(runtime)?;
        let text = session.to_native_text(runtime, &options)?;
        let mime = match format.encoding() {
            sna_history::Encoding::Jsonl => "application/x-ndjson; charset=utf-8",
            sna_history::Encoding::Json => "application/json; charset=utf-8",
            _ => "text/plain; charset=utf-8",
        };
        Ok(([(header::CONTENT_TYPE, mime)], text).into_response())
    })
    .await
}

/// An embed's bytes (an image of a block), with its mime type; sandboxed, never run as a page.
#[utoipa::path(
    get,
    path = "/sessions/{id}/embeds/{embed_id}",
    tag = "history",
    params(("id" = String, Path, description = "The session"), ("embed_id" = String, Path, description = "The embed's id")),
    responses(
        (status = 200, description = "The bytes, with their mime type", content_type = "application/octet-stream", body = Vec<u8>),
        (status = 404, description = "No such session or embed", body = ErrorBody),
    )
)]
pub(crate) async fn embed(State(app): State<Shared>, Path((id, embed_id)): Path<(String, String)>) -> Answer {
    blocking(move || {
        let session = app.host.store().session(&id)?;
        let bytes = session.embed(&embed_id)?;
        let mime = session.embed_mime(&embed_id)?.unwrap_or_else(|| "application/octet-stream".into());
        let mime = HeaderValue::from_str(&mime).unwrap_or(HeaderValue::from_static("application/octet-stream"));
        let mut response = bytes.into_response();
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, mime);
        headers.insert("x-content-type-options", HeaderValue::from_static("nosniff"));
        // An embed is data, never a page: an SVG or HTML embed opened directly runs nothing.
        headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static("sandbox; default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'"));
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("private, max-age=31536000, immutable"));
        Ok(response)
    })
    .await
}

/// The session's tokens and cost, response by response (`Session::usage`, priced as `sna usage`).
#[utoipa::path(
    get,
    path = "/sessions/{id}/usage",
    tag = "history",
    params(("id" = String, Path, description = "The session")),
    responses(
        (status = 200, description = "`{responses, totals, prices}` (see docs/usage.md)", body = Object),
        (status = 404, description = "No such session", body = ErrorBody),
    )
)]
pub(crate) async fn usage(State(app): State<Shared>, Path(id): Path<String>) -> Answer {
    blocking(move || {
        let session = app.host.store().session(&id)?;
        ok(session.usage(None)?)
    })
    .await
}

/// Where the session's runtime or model changed.
#[utoipa::path(
    get,
    path = "/sessions/{id}/switches",
    tag = "history",
    params(("id" = String, Path, description = "The session")),
    responses((status = 200, body = Switches), (status = 404, description = "No such session", body = ErrorBody))
)]
pub(crate) async fn switches(State(app): State<Shared>, Path(id): Path<String>) -> Answer {
    blocking(move || {
        let session = app.host.store().session(&id)?;
        let switches = session.switches()?;
        ok(Switches { session_id: id, switches })
    })
    .await
}

/// The session's compactions, oldest first (the web UI marks them).
#[utoipa::path(
    get,
    path = "/sessions/{id}/compactions",
    tag = "history",
    params(("id" = String, Path, description = "The session")),
    responses((status = 200, body = Compactions), (status = 404, description = "No such session", body = ErrorBody))
)]
pub(crate) async fn compactions(State(app): State<Shared>, Path(id): Path<String>) -> Answer {
    blocking(move || {
        let session = app.host.store().session(&id)?;
        let compactions = session.compactions()?;
        ok(Compactions { session_id: id, compactions })
    })
    .await
}
