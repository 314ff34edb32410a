//! `POST /ui/markdown`: the web UI's Markdown, rendered to HTML by the server (`crate::markdown`,
//! the renderer of `sna view` too). The page sends `{"texts": [...]}` (the texts of blocks,
//! compaction summaries, an answer while it streams in) and gets `{"html": [...]}`, one HTML string
//! for each text, in their order.

use axum::body::Body;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;

use super::{ApiError, Shared};
use crate::markdown;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Texts {
    texts: Vec<String>,
}

pub(crate) async fn markdown(State(app): State<Shared>, body: Body) -> Result<Response, ApiError> {
    let bytes = axum::body::to_bytes(body, app.max_body)
        .await
        .map_err(|_| ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "TOO_LARGE", format!("the body is larger than {} bytes", app.max_body)))?;
    let Texts { texts } = serde_json::from_slice(&bytes).map_err(|e| ApiError::bad_field("body", e))?;
    let html = tokio::task::spawn_blocking(move || texts.iter().map(|text| markdown::to_html(text)).collect::<Vec<_>>()).await.map_err(|e| {
        eprintln!("sna serve: rendering Markdown failed: {e}");
        ApiError::internal()
    })?;
    Ok(Json(serde_json::json!({ "html": html })).into_response())
}
