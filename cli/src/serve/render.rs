//! `POST /ui/markdown`: the web UI's Markdown, rendered to HTML by the server (`crate::markdown`,
//! the renderer of `sna view` too). The page sends the texts of blocks, compaction summaries and an
//! answer while it streams in, and gets one HTML string for each text, in their order.

use axum::body::Body;
use axum::extract::State;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::answer::{ok, Answer};
use super::requests::{self, JsonBody};
use super::responses::ErrorBody;
use super::{ApiError, Shared};
use crate::markdown;

/// `POST /ui/markdown`: the texts to render.
#[derive(Deserialize, ToSchema)]
pub(crate) struct MarkdownTexts {
    /// Markdown texts.
    pub texts: Vec<String>,
}

impl JsonBody for MarkdownTexts {}

/// The HTML of each text, sanitized: only the tags the renderer writes are kept.
#[derive(Serialize, ToSchema)]
pub(crate) struct MarkdownHtml {
    pub html: Vec<String>,
}

/// Renders Markdown texts to HTML.
#[utoipa::path(
    post,
    path = "/ui/markdown",
    tag = "pages",
    request_body = MarkdownTexts,
    responses((status = 200, description = "One HTML string for each text, in their order", body = MarkdownHtml), (status = 500, description = "Rendering failed", body = ErrorBody))
)]
pub(crate) async fn markdown(State(app): State<Shared>, body: Body) -> Answer {
    let MarkdownTexts { texts } = requests::read(&app, body).await?;
    let html = tokio::task::spawn_blocking(move || texts.iter().map(|text| markdown::to_html(text)).collect::<Vec<_>>()).await.map_err(|e| {
        eprintln!("sna serve: rendering Markdown failed: {e}");
        ApiError::internal()
    })?;
    ok(MarkdownHtml { html })
}
