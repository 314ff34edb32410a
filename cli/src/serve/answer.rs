//! What every handler answers through: a JSON answer or an [`ApiError`], and the blocking pool the
//! host's and the store's calls run on.

use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;

use super::ApiError;

/// A handler's answer.
pub(crate) type Answer = Result<Response, ApiError>;

/// Runs blocking work (the host, the store) on the blocking pool; a panic there is a 500.
pub(crate) async fn blocking<T: Send + 'static>(work: impl FnOnce() -> Result<T, ApiError> + Send + 'static) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(work).await.map_err(|e| {
        eprintln!("sna serve: a request failed: {e}");
        ApiError::internal()
    })?
}

/// A 200 answer with `value` as JSON.
pub(crate) fn ok(value: impl Serialize) -> Answer {
    Ok(Json(value).into_response())
}
